"""The transcription stage of benchmarks/cpu_hour.py alone, one way after another: the same audio
(--minutes of the Portuguese dev recordings tiled) and the same random-weight Whisper small that
cpu_hour builds into --work (run cpu_hour once first, or this builds them), transcribed by
`igot.asr.transcribe` on the CPU

- sequentially (faster-whisper's own `transcribe`, one 30 s window after the other),
- batched at each --batch size (BatchedInferencePipeline and iGot's repair of dropped chunk ends),
- sequentially with CTranslate2 on --threads threads (faster-whisper's cpu_threads).

    python -m benchmarks.cpu_transcription --minutes 10 --batch 4,8 [--threads 2] [--whisper base]

--whisper base times the real bundled Whisper base instead (no max_length set: it writes what it
hears), where the batched pipeline's chunks end where real words end, as in a user's run.

Random weights write a fixed number of tokens a window (cpu_hour's docstring says how): with
cpu_hour's max_length, 2 x (N + 3) for N = --words x --tokens-per-word, a window writes at most
max_length / 2 tokens, batched or not (a batched window's prompt is 4 tokens, a sequential one's ~N:
neither is what limits it). The run prints the tokens a window of each way, which must match, so
that each way writes the same text's worth of tokens. Prints per way the seconds (model already
loaded), real-time factor, windows decoded (a batch counts its windows), tokens written, words
kept and the seconds of speech left untranscribed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks.cpu_hour import TOKENS_PER_WORD, CountedWhisper, model_paths, speech  # noqa: E402
from igot.asr.transcribe import load_whisper, transcribe, untranscribed_seconds  # noqa: E402
from igot.runtime.bundled import whisper_model_dir  # noqa: E402
from igot_dev.tables import table  # noqa: E402


class CountedWindows(CountedWhisper):
    """cpu_hour's count, with each window of a batch counted (it counts generate calls), and the
    windows decoded text only (the batched pipeline's; prompt with <|notimestamps|>) apart from
    those decoded one by one (the sequential way's, and the repair's)."""

    def __init__(self, model, text_only: int):
        super().__init__(model)
        self.text_only, self.batched = text_only, 0

    def generate(self, features, prompts, *args, **kwargs):
        results = self.model.generate(features, prompts, *args, **kwargs)
        self.windows += len(results)
        self.batched += sum(self.text_only in prompt for prompt in prompts)
        self.fallbacks += kwargs.get("sampling_temperature", 0) > 0
        self.tokens += sum(len(r.sequences_ids[0]) for r in results)
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--words", type=int, default=70, help="words Whisper writes per 30 s window, about")
    parser.add_argument("--batch", default="4,8", help="batch sizes to time beside the sequential way")
    parser.add_argument("--threads", type=int, help="also the sequential way with CTranslate2 on this many threads")
    parser.add_argument("--whisper", choices=["small", "base"], default="small",
                        help="small: cpu_hour's random-weight Whisper small; base: the real bundled Whisper base")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "igot-cpu-hour")
    args = parser.parse_args()
    cpu_hour = argparse.Namespace(language="pt", whisper="small", tokens_per_word=TOKENS_PER_WORD["pt"],
                                  align_model="none", summary="off", work=args.work)
    folder = model_paths(cpu_hour)["whisper"]
    if not folder.exists():
        subprocess.run([sys.executable, "-m", "benchmarks.cpu_hour", "--minutes", str(args.minutes), "--summary", "off",
                        "--align-model", "none", "--work", str(args.work), "--build-only"], check=True)
    wav = speech("pt", args.minutes, args.work)
    tokens = round(args.words * TOKENS_PER_WORD["pt"])
    ways = [("sequential", 1, None)] + [(f"batched {b}", int(b), None) for b in args.batch.split(",") if b]
    ways += [(f"sequential, {args.threads} threads", 1, args.threads)] if args.threads else []
    rows = []
    for name, batch, threads in ways:
        model = load_whisper(str(folder) if args.whisper == "small" else "bundled:base", "faster-whisper", "cpu")
        if threads:
            import faster_whisper

            path = str(folder) if args.whisper == "small" else str(whisper_model_dir("base"))
            model = replace(model, model=faster_whisper.WhisperModel(path, device="cpu",
                                                                      compute_type=model.precision, cpu_threads=threads))
        if args.whisper == "small":
            model.model.max_length = 2 * (tokens + 3)  # cpu_hour's
        text_only = model.model.hf_tokenizer.token_to_id("<|notimestamps|>")
        counted = model.model.model = CountedWindows(model.model.model, text_only)
        started = time.perf_counter()
        t = transcribe(wav, replace(model, batch_size=batch), language="pt", progress=False)
        seconds = time.perf_counter() - started
        rows.append({"way": name, "seconds": f"{seconds:.1f}", "RTF": f"{seconds / t.duration:.3f}",
                     "windows decoded": counted.windows, "of them batched": counted.batched, "again hotter": counted.fallbacks, "tokens": counted.tokens,
                     "tokens a window": f"{counted.tokens / max(counted.windows, 1):.0f}", "words": len(t.words),
                     "untranscribed s": f"{untranscribed_seconds(t):.1f}"})
        print(rows[-1], flush=True)
    shape = "random-weight Whisper small" if args.whisper == "small" else "the bundled Whisper base (real weights)"
    table(rows, f"{args.minutes:g} min of pt speech, {shape} (int8), transcription alone "
                f"(model loaded before the clock starts)")


if __name__ == "__main__":
    main()
