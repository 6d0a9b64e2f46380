"""Peak memory and time of a whole `igot run` on CPU as the recording gets longer.

Builds recordings of the given lengths from the dev recordings (spliced end to end), runs the
pipeline on each in a fresh process with the offline models, and prints a table. Peak RAM
should stay nearly flat with length: audio is read piece by piece and each stage works in
bounded chunks.

    python -m benchmarks.long_audio_memory --minutes 10 60 180
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEV = ROOT / "tests" / "data" / "recordings"
PIECES = ["pyaudioanalysis/diarizationExample.flac", "picovoice_falcon/test.flac", "openai_whisper/jfk.flac",
          "pyaudioanalysis/diarizationExample2.flac", "librispeech_misc/2412-153948-0000.flac"]


def build_recording(minutes: float, folder: Path) -> Path:
    """The dev recordings one after the other, repeated to `minutes`, as a 16 kHz mono WAV."""
    loop = folder / "loop.wav"
    if not loop.exists():
        inputs = sum((["-i", str(DEV / p)] for p in PIECES), [])
        streams = "".join(f"[{i}:a]aresample=16000,aformat=channel_layouts=mono[a{i}];" for i in range(len(PIECES)))
        concat = "".join(f"[a{i}]" for i in range(len(PIECES))) + f"concat=n={len(PIECES)}:v=0:a=1"
        subprocess.run(["ffmpeg", "-y", "-loglevel", "error", *inputs, "-filter_complex", streams + concat,
                        "-ac", "1", "-ar", "16000", str(loop)], check=True)
    out = folder / f"interview-{minutes:g}min.wav"
    subprocess.run(["ffmpeg", "-y", "-loglevel", "error", "-stream_loop", "-1", "-i", str(loop), "-t", str(minutes * 60),
                    "-c:a", "pcm_s16le", str(out)], check=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, nargs="+", default=[10, 60, 180])
    parser.add_argument("--model", default="bundled:tiny.en")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="igot-long-"))
    rows = []
    for minutes in args.minutes:
        wav = build_recording(minutes, folder)
        out = folder / f"out-{minutes:g}"
        # one fresh process per length, so each peak is its own (ru_maxrss of the child)
        code = ("import resource, sys; from igot.cli import main; code = main(sys.argv[1:]); "
                "print('PEAK_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); sys.exit(code)")
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code, "run", str(wav), "--model", args.model, "--language", "en",
                               "--no-align", "--no-punctuate", "--out", str(out), "--quiet"],
                              capture_output=True, text=True, env={**os.environ, "HF_HUB_OFFLINE": "1"})
        seconds = time.perf_counter() - t0
        peak = next((int(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("PEAK_KB")), 0)
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
        info = json.loads(next(out.glob("*.json")).read_text())["info"] if done.returncode == 0 else {}
        rows.append((minutes, peak / 1024, seconds, seconds / (minutes * 60), info.get("timings", {})))
    print(f"\n{'audio min':>9}  {'peak RAM MB':>11}  {'seconds':>8}  {'RTF':>5}  stage seconds")
    for minutes, peak, seconds, rtf, timings in rows:
        print(f"{minutes:>9g}  {peak:>11.0f}  {seconds:>8.1f}  {rtf:>5.2f}  {timings}")


if __name__ == "__main__":
    main()
