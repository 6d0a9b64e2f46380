"""`igot run` with no model hub, as a user on a train runs it: how long it takes, and how much
of that the skipped default hub models cost (word timing, punctuation, summary). CPU s is the
work itself (user + system time of the run, start-up included): on a busy machine wall time
waits for other jobs, CPU time does not.

Two ways of being offline: the hub cannot be reached (HF_ENDPOINT at a closed local port, so the
result does not depend on this machine's network), and HF_HUB_OFFLINE=1. Each run starts with an
empty model cache and reads a 30 s dev recording with the bundled Whisper tiny.en.

    python -m benchmarks.offline_run [--recording tests/data/recordings/ami_meetings/trn00.flac]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from igot_dev.tables import table  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def run_offline(recording: Path, how: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_TOKEN")}
        env.update(HF_HUB_CACHE=f"{tmp}/cache", HF_HOME=f"{tmp}/hf-home", PYTHONPATH=str(ROOT))
        env.update(HF_ENDPOINT=closed_port()) if how == "hub unreachable" else env.update(HF_HUB_OFFLINE="1")
        started, cpu = time.perf_counter(), _children_cpu()
        done = subprocess.run([sys.executable, "-m", "igot", "run", str(recording), "--model", "bundled:tiny.en",
                               "--language", "en", "--out", f"{tmp}/out", "--quiet"], env=env, capture_output=True, text=True)
        wall, cpu = time.perf_counter() - started, _children_cpu() - cpu
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        saved = json.loads((Path(tmp) / "out" / f"{recording.stem}.json").read_text())
    timings = saved["info"]["timings"]
    skipped = timings["alignment"] + timings["punctuation"] + timings["summary"]
    return {"offline": how, "audio s": round(saved["duration"], 1), "wall s (start-up incl.)": round(wall, 1),
            "CPU s": round(cpu, 1),
            "processing s": round(saved["duration"] * saved["info"]["real_time_factor"], 1),
            "real-time factor": saved["info"]["real_time_factor"], "skipped stages s": round(skipped, 2),
            "skip lines": sum(line.split(":")[0] in ("Word timing", "Punctuation", "Summary") and ": skipped" in line
                              for line in done.stderr.splitlines()),
            "retry lines": done.stderr.count("Retry")}


def _children_cpu() -> float:
    """CPU seconds of finished child processes: on a busy machine, the work a run needs, whatever the wait."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--recording", type=Path, default=ROOT / "tests/data/recordings/ami_meetings/trn00.flac")
    args = parser.parse_args()
    rows = [run_offline(args.recording, how) for how in ("hub unreachable", "HF_HUB_OFFLINE=1")]
    table(rows)


if __name__ == "__main__":
    main()
