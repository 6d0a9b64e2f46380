"""Speed and GPU memory of Whisper large-v3 and large-v3-turbo per hour of audio, with no weights.

Builds randomly initialised models of the shapes of openai/whisper-large-v3 (d_model 1280, 32
encoder and 32 decoder layers, 20 heads, 128 mel bins, 51866 tokens) and openai/whisper-large-v3-turbo
(the same with 4 decoder layers), saves each with save_pretrained and loads the folder through
igot's `load_whisper(folder, engine="transformers")` as a downloaded model is loaded, then
transcribes an hour of noise through `igot.asr.transcribe.transcribe` (30 s windows in batches, fp16,
SDPA, word times by cross-attention DTW). Random weights decide nothing, so every window decodes
exactly --tokens tokens (min = max new tokens; 90 per 30 s window is about 3 a second, fast
speech): neither an early stop nor a runaway loop flatters or hurts the timing.

For one side-by-side number, openai-whisper runs a random large-v3 saved in its own checkpoint
format, with igot's options (word timestamps, fp16) and the same --tokens a window, all of them
text (the end and other special tokens suppressed; temperature 0, so no fallback re-decoding; no
window skipped as silence; no timestamp tokens, so that every window moves on by 30 s as a real
model's mostly does, where random timestamps would make it re-decode most of each window). It
decodes one window after another, so it is timed on --openai-minutes of the noise; its row's
audio hours are the windows it decoded (30 s each), and its time per hour is per window × 120.

    python -m benchmarks.whisper_gpu --tokenizer DIR            # the GPU run (DIR holds tokenizer.json)
    python -m benchmarks.whisper_gpu --tiny --minutes 2         # smoke test on a CPU

The tokenizer is Whisper's multilingual tokenizer.json (by default the one of the bundled Whisper
base, igot[offline]); large-v3's <|yue|> token is added to it. Needs torch, transformers, numpy,
and openai-whisper for its row (it is skipped if missing); igot comes from this checkout.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
import wave
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]

from igot.asr.transcribe import load_whisper, transcribe  # noqa: E402
from igot.asr.whisper_transformers import quiet_cuts  # noqa: E402
from igot.media.audio import SAMPLE_RATE, load_audio  # noqa: E402
from igot.runtime.devices import pick_device  # noqa: E402
from igot_dev.tiny_models import TINY, save_random_whisper, whisper_tokenizer  # noqa: E402

LARGE_V3 = dict(d_model=1280, encoder_layers=32, decoder_layers=32, heads=20, ffn=5120, mel_bins=128,
                # openai/whisper-large-v3's generation_config.json
                alignment_heads=[[7, 0], [10, 17], [12, 18], [13, 12], [16, 1], [17, 14], [19, 11], [21, 4],
                                 [24, 1], [25, 6]])
TURBO = dict(LARGE_V3, decoder_layers=4, alignment_heads=[[2, 4], [2, 11], [3, 3], [3, 6], [3, 11], [3, 14]])
SHAPES = {"large-v3": LARGE_V3, "large-v3-turbo": TURBO}


def write_noise(path: Path, seconds: float) -> Path:
    rng = np.random.default_rng(0)
    audio = np.clip(rng.normal(0, 0.1, int(seconds * SAMPLE_RATE)), -1, 1)
    with wave.open(str(path), "wb") as f:
        f.setnchannels(1), f.setsampwidth(2), f.setframerate(SAMPLE_RATE)
        f.writeframes((audio * 32767).astype(np.int16).tobytes())
    return path


def peak_gib(device: str) -> float | None:
    return torch.cuda.max_memory_allocated() / 2**30 if device == "cuda" else None


def timed(run, device: str) -> tuple[float, float | None]:
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    run()
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - start, peak_gib(device)


def transformers_rows(name: str, shape: dict, tokenizer, wav: Path, warm: Path, args, device: str, work: Path):
    dtype = torch.float16 if device == "cuda" else torch.float32
    start = time.perf_counter()
    folder = save_random_whisper(work / name, tokenizer, **shape, device=device, dtype=dtype,
                                 max_new_tokens=args.tokens, min_new_tokens=args.tokens)
    if device == "cuda":
        torch.cuda.empty_cache()
    model = load_whisper(str(folder), engine="transformers", device=device)
    print(f"{name}: built, saved and loaded in {time.perf_counter() - start:.0f} s "
          f"({sum(p.numel() for p in model.model.parameters()) / 1e6:.0f}M parameters)", flush=True)
    rows = []
    windows = len(quiet_cuts(load_audio(wav)))  # the engine's windows, without VAD
    for batch in args.batch:
        model.batch_size = batch
        transcribe(warm, model, language="en", vad=False, progress=False)  # kernels, cuBLAS handles
        result = {}
        seconds, peak = timed(lambda: result.update(t=transcribe(wav, model, language="en", vad=False, progress=False)),
                              device)
        words = len(result["t"].words)
        rows.append(dict(engine="transformers", model=name, batch=batch, hours=args.minutes / 60, windows=windows,
                         seconds=seconds, peak_gib=peak, words=words, note=""))
        print(f"  batch {batch}: {seconds:.1f} s, {words} words", flush=True)
    del model
    shutil.rmtree(folder)
    if device == "cuda":
        torch.cuda.empty_cache()
    return rows


def openai_row(shape: dict, wav: Path, args, device: str, work: Path) -> dict:
    import whisper
    from whisper.model import ModelDimensions, Whisper

    dims = ModelDimensions(
        n_mels=shape["mel_bins"], n_audio_ctx=1500, n_audio_state=shape["d_model"], n_audio_head=shape["heads"],
        n_audio_layer=shape["encoder_layers"], n_vocab=51866, n_text_ctx=448, n_text_state=shape["d_model"],
        n_text_head=shape["heads"], n_text_layer=shape["decoder_layers"],
    )
    start = time.perf_counter()
    torch.manual_seed(0)
    with torch.device(device):
        model = Whisper(dims)
    # openai-whisper leaves the decoder's positional embedding uninitialised (a checkpoint fills it).
    torch.nn.init.normal_(model.decoder.positional_embedding, std=0.02)
    path = work / "openai-large-v3.pt"
    torch.save({"dims": asdict(dims), "model_state_dict": {k: v.half() for k, v in model.state_dict().items()}}, path)
    del model
    if device == "cuda":
        torch.cuda.empty_cache()
    wm = load_whisper(str(path), engine="openai-whisper", device=device)
    print(f"openai-whisper large-v3: built, saved and loaded in {time.perf_counter() - start:.0f} s", flush=True)
    audio = load_audio(wav)[:int(args.openai_minutes * 60 * SAMPLE_RATE)]
    eot = whisper.tokenizer.get_tokenizer(True, num_languages=100).eot
    # Only text tokens: no end of text, and none of the special tokens a random model likes to repeat.
    options = dict(language="en", word_timestamps=True, fp16=device == "cuda", verbose=None, temperature=0.0,
                   sample_len=args.tokens, suppress_tokens=[-1, *range(eot, dims.n_vocab)], without_timestamps=True,
                   no_speech_threshold=None)  # a random model's "no speech" guess would skip windows
    wm.model.transcribe(audio[:30 * SAMPLE_RATE], **options)  # warm-up
    # With word timestamps openai-whisper starts its next window where the last word ended: random
    # words end anywhere, so it decodes more windows than a real model would. Count them and report
    # the time per window, times the 120 windows of an hour.
    windows = []
    decode = wm.model.decode
    wm.model.decode = lambda mel, options: windows.append(1) or decode(mel, options)
    result = {}
    seconds, peak = timed(lambda: result.update(r=wm.model.transcribe(audio, **options)), device)
    words = sum(len(s.get("words", [])) for s in result["r"]["segments"])
    print(f"  {args.openai_minutes:g} min: {seconds:.1f} s, {len(windows)} windows, {words} words", flush=True)
    del wm
    path.unlink()
    return dict(engine="openai-whisper", model="large-v3", batch=1, hours=len(windows) * 30 / 3600, windows=len(windows),
                seconds=seconds, peak_gib=peak, words=words,
                note=f"{len(windows)} windows decoded for {args.openai_minutes:g} min of audio; per hour: per window x 120")


def table(rows: list[dict]) -> str:
    lines = ["| engine | model | batch | audio hours | windows | seconds | s per audio hour | RTF | peak GPU GiB | note |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        per_hour = r["seconds"] / r["hours"]
        peak = "-" if r["peak_gib"] is None else f"{r['peak_gib']:.1f}"
        lines.append(f"| {r['engine']} | {r['model']} | {r['batch']} | {r['hours']:.3g} | {r['windows']} | {r['seconds']:.1f} | "
                     f"{per_hour:.1f} | {per_hour / 3600:.4f} | {peak} | {r['note']} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=60, help="audio length for the transformers engine")
    parser.add_argument("--models", default="large-v3,large-v3-turbo")
    parser.add_argument("--batch", default="16,32", type=lambda s: [int(b) for b in s.split(",")])
    parser.add_argument("--tokens", type=int, default=90, help="tokens decoded per 30 s window")
    parser.add_argument("--openai-minutes", type=float, default=3, help="audio for openai-whisper; 0 skips it")
    parser.add_argument("--tokenizer", help="folder with Whisper's multilingual tokenizer.json (default: bundled base)")
    parser.add_argument("--tiny", action="store_true", help="tiny model dimensions, for a smoke test on a CPU")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    device = pick_device(args.device)
    if args.tokenizer is None:
        from igot.runtime.bundled import whisper_model_dir

        args.tokenizer = whisper_model_dir("base")
    import transformers

    gpu = torch.cuda.get_device_name() if device == "cuda" else "CPU"
    print(f"{gpu}, torch {torch.__version__}, transformers {transformers.__version__}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="whisper-gpu-"))
    try:
        wav = write_noise(work / "noise.wav", args.minutes * 60)
        warm = write_noise(work / "warm.wav", 30)
        tokenizer = whisper_tokenizer(Path(args.tokenizer), work / "tokenizer", vocab_size=51866)
        rows = []
        for name in args.models.split(","):
            shape = dict(TINY, mel_bins=128) if args.tiny else SHAPES[name]
            rows += transformers_rows(name, shape, tokenizer, wav, warm, args, device, work)
        if args.openai_minutes:
            try:
                rows.append(openai_row(dict(TINY, mel_bins=128) if args.tiny else LARGE_V3, wav, args, device, work))
            except ImportError:
                print("openai-whisper is not installed: its row is skipped", flush=True)
            except Exception as exc:  # keep the transformers rows
                print(f"openai-whisper failed: {exc!r}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(table(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
