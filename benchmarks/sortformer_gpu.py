"""Speed and memory of Sortformer diarization at production size, with no model download.

Builds the published architecture of nvidia/diar_streaming_sortformer_4spk-v2 (NeMo's
examples/speaker_tasks/diarization/conf/neural_diarizer/streaming_sortformer_diarizer_4spk-v2.yaml:
a 17-layer FastConformer of width 512 and an 18-layer Transformer of width 192, about 117M
parameters) with random weights, saves it as a .nemo, restores it through
igot.speakers.sortformer.load_sortformer as the downloaded model would be, and diarizes noise of each
given length in streaming mode. The weights are random, so the turns are meaningless, but every
80 ms frame goes through the model and the speaker cache as in a real run.

    python -m benchmarks.sortformer_gpu                      # 10 and 60 minutes, GPU if there is one
    python -m benchmarks.sortformer_gpu --minutes 1          # smoke test on a CPU
    python -m benchmarks.sortformer_gpu --bf16               # also time bfloat16 autocast

Needs NeMo (pip install 'igot[nemo]') and igot from this checkout (no install).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import tempfile
import time
import wave
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]

from igot.media.audio import SAMPLE_RATE  # noqa: E402
from igot.speakers.sortformer import diarize_nemo, load_sortformer  # noqa: E402
from igot_dev.tiny_models import sortformer_config  # noqa: E402


def published_config() -> dict:
    return sortformer_config(tiny=False)


def build_model(path: Path) -> int:
    """Save a randomly initialised production-size Sortformer to `path`; return its parameter count."""
    from nemo.collections.asr.models import SortformerEncLabelModel
    from omegaconf import OmegaConf

    torch.manual_seed(0)
    model = SortformerEncLabelModel(cfg=OmegaConf.create(published_config()))
    model.save_to(str(path))
    return sum(p.numel() for p in model.parameters())


def write_noise(path: Path, seconds: float, rng: np.random.Generator) -> None:
    """16 kHz mono 16-bit noise, written a minute at a time so an hour needs little memory."""
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(SAMPLE_RATE)
        left = int(seconds * SAMPLE_RATE)
        while left > 0:
            n = min(left, 60 * SAMPLE_RATE)
            w.writeframes((rng.standard_normal(n) * 3000).clip(-32768, 32767).astype("<i2").tobytes())
            left -= n


def timed_run(model, wav: Path, cuda: bool, bf16: bool) -> tuple[float, float, float, int]:
    """Seconds, peak allocated and reserved GPU GiB, number of turns."""
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    autocast = torch.autocast("cuda", dtype=torch.bfloat16) if bf16 else contextlib.nullcontext()
    t0 = time.perf_counter()
    with autocast:
        turns = diarize_nemo(wav, model)  # returns on the CPU, so the GPU work is done
    elapsed = time.perf_counter() - t0
    gib = 2**30
    peak = torch.cuda.max_memory_allocated() / gib if cuda else float("nan")
    reserved = torch.cuda.max_memory_reserved() / gib if cuda else float("nan")
    return elapsed, peak, reserved, len(turns)


def print_table(rows: list[dict]) -> None:
    widths = {k: max(len(k), *(len(str(r[k])) for r in rows)) for k in rows[0]}
    print("  ".join(k.ljust(w) for k, w in widths.items()))
    for r in rows:
        print("  ".join(str(r[k]).ljust(w) for k, w in widths.items()))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, nargs="+", default=[10.0, 60.0], help="lengths of audio to diarize")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--bf16", action="store_true", help="also time each length under bfloat16 autocast")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    tmp = tempfile.TemporaryDirectory(prefix="igot-sortformer-bench-")
    folder = Path(tmp.name)

    t0 = time.perf_counter()
    params = build_model(folder / "sortformer.nemo")
    built = time.perf_counter() - t0
    size = os.path.getsize(folder / "sortformer.nemo") / 2**20
    t0 = time.perf_counter()
    model = load_sortformer(model=str(folder / "sortformer.nemo"), device=args.device)
    loaded = time.perf_counter() - t0
    device = next(model.parameters()).device
    cuda = device.type == "cuda"
    print(f"model: {params / 1e6:.1f}M parameters, .nemo {size:.0f} MiB, built and saved in {built:.1f} s, "
          f"restored in {loaded:.1f} s on {device} ({next(model.parameters()).dtype})")
    write_noise(folder / "warm.wav", 30, rng)
    timed_run(model, folder / "warm.wav", cuda, bf16=False)  # CUDA context and kernels, so the table shows the steady state

    rows = []
    for minutes in args.minutes:
        wav = folder / f"noise-{minutes:g}min.wav"
        write_noise(wav, minutes * 60, rng)
        for bf16 in (False, True) if args.bf16 and cuda else (False,):
            seconds, peak, reserved, turns = timed_run(model, wav, cuda, bf16)
            rows.append({
                "audio min": f"{minutes:g}", "precision": "bf16 autocast" if bf16 else "float32",
                "seconds": f"{seconds:.1f}", "s per audio hour": f"{seconds * 60 / minutes:.1f}",
                "peak GPU GiB": f"{peak:.2f}", "reserved GiB": f"{reserved:.2f}", "turns": turns,
                "device": torch.cuda.get_device_name() if cuda else "cpu",
            })
        wav.unlink()
    print_table(rows)
    tmp.cleanup()


if __name__ == "__main__":
    main()
