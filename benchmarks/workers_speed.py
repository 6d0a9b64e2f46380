"""A team's queue made by workers (`igot worker`): how long the jobs take, and what a second worker adds.

Two modes, each with a real team server (igot.workspace.team_server.start_team, serving HTTP on
127.0.0.1, as `igot serve --team` does) and real `igot worker` processes, the recordings added as
the page adds them (announced, then their bytes) and each job's time read from the team's database
(polled every 0.1 s: running to ended):

    python -m benchmarks.workers_speed cpu [--recording FILE] [--copies 4]
    python -m benchmarks.workers_speed gpu --audio WAV --tokenizer WHISPER_TOK [--minutes 10] [--copies 2]

cpu: N copies of one recording under different names (default: the 41 s radio call of
tests/data), small models (bundled tiny.en, speakers detected; no word timing, punctuation,
summary or meaning index), made by the server's own worker, by one `igot worker --device cpu`,
and by two. On one computer the two workers share its cores: the row says what two processes on
these cores do, not what a second computer adds (that is the one-worker row's speed again,
beside it).

gpu: the same job made by the server's own (embedded) worker and by one `igot worker --device
cuda` beside it, same options (the server's: every model pinned to the random-weight models of
production shapes benchmarks/gpu_pipeline.py builds: Whisper large-v3 through transformers,
wav2vec2 large, XLM-R punctuation, Sortformer, Gemma 3 1B's shape for the summary,
multilingual-e5-small's for the meaning index), `--copies` jobs each: the first with the models'
loading, the next with them loaded (a worker keeps them; the server's own keeps them while jobs
wait). HF_HUB_OFFLINE=1. --audio: a 16 kHz mono 16-bit WAV, tiled to --minutes. Where no ffmpeg
is installed (the GPU machine), small stand-ins for ffprobe/ffmpeg that read only such a WAV
are put first on PATH for both sides (the real ones take well under a second for it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import replace
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]

from igot.pipeline import RunOptions  # noqa: E402
from igot.team import jobs  # noqa: E402
from igot.team.db import team_db  # noqa: E402
from igot.workspace import team_server  # noqa: E402

SMALL = RunOptions(model="bundled:tiny.en", language="en", word_timing="engine", punctuate=False, summary=False, meaning=False,
                   voices=False)
RADIO = ROOT / "tests" / "data" / "recordings" / "pyaudioanalysis" / "diarizationExample.flac"


def start(folder: Path, options: RunOptions, embedded: bool) -> team_server.RunningTeam:
    sock = team_server.bind(0, "127.0.0.1")
    port = sock.getsockname()[1]
    return team_server.start_team(folder, team_server.Address("127.0.0.1", port, f"http://127.0.0.1:{port}"), sock=sock,
                                  run_options=options, embedded_worker=embedded,
                                  log=lambda line: print(f"  server: {line}", flush=True))


def start_worker(url: str, token: str, device: str, log: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
           "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "igot", "worker", "--server", url, "--token", token, "--device", device],
                            stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, cwd=ROOT)


def stop(processes: list[subprocess.Popen]) -> None:
    for p in processes:
        if p.poll() is None:
            p.terminate()
    for p in processes:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()


def measure(folder: Path, options: RunOptions, recordings: dict[str, bytes], workers: int, device: str,
            timeout: float) -> dict:
    """The recordings added to a new team server's queue and made by its own worker (`workers` 0)
    or by that many `igot worker` processes: wall time, each job's time, who made it."""
    folder.mkdir(parents=True)
    running = start(folder, options, embedded=workers == 0)
    db = team_db(folder)
    processes: list[subprocess.Popen] = []
    logs = [folder.parent / f"{folder.name}-w{n}.log" for n in range(workers)]
    try:
        for n, log in enumerate(logs):
            processes.append(start_worker(running.url, jobs.add_worker(db, f"w{n + 1}"), device, log))
        # Each worker asking for jobs before any comes: its start (imports) is not in the times.
        deadline = time.monotonic() + 120
        while sum(w.seen is not None for w in jobs.workers(db)) < workers:
            if time.monotonic() > deadline or any(p.poll() is not None for p in processes):
                raise SystemExit("a worker did not start:\n" + "\n".join(p.read_text() for p in logs if p.exists()))
            time.sleep(0.1)
        began: dict[int, float] = {}
        ended: dict[int, float] = {}
        started = time.perf_counter()
        made = running.queue.add({"files": [{"name": name, "size": len(data)} for name, data in recordings.items()]})
        for job, data in zip(made, recordings.values()):
            running.queue.receive(job["id"], 0, data, True)
        while True:
            now = time.perf_counter()
            listed = jobs.listing(db)
            for j in listed:
                if j.state == "running":
                    began.setdefault(j.id, now)
                if j.state in jobs.ENDED:
                    began.setdefault(j.id, now)
                    ended.setdefault(j.id, now)
            if len(listed) == len(recordings) and len(ended) == len(recordings):
                break
            if now - started > timeout:
                raise SystemExit(f"not done within {timeout:.0f} s: {listed}\n" +
                                 "\n".join(p.read_text() for p in logs if p.exists()))
            time.sleep(0.1)
        wall = max(ended.values()) - started
        listed = sorted(jobs.listing(db), key=lambda j: j.id)
        failed = [j for j in listed if j.state != "done"]
        if failed:
            raise SystemExit(f"jobs not made: {failed}\n" + "\n".join(p.read_text() for p in logs if p.exists()))
        return dict(wall=wall, each=[ended[j.id] - began[j.id] for j in listed],
                    by=[j.worker_name or "server" for j in listed] if workers else ["server"] * len(listed))
    finally:
        stop(processes)
        running.stop()


# --- on this computer: one worker, two -------------------------------------------------------------
def cpu(args: argparse.Namespace) -> None:
    from igot.media.audio import probe

    data = args.recording.read_bytes()
    seconds = probe(args.recording).seconds or 0.0
    recordings = {f"call-{n + 1}{args.recording.suffix}": data for n in range(args.copies)}
    print(f"{args.copies} copies of {args.recording.name} ({seconds:.0f} s), {os.cpu_count()} cores; "
          f"options: {args.model}, speakers detected, no word timing, punctuation, summary or meaning index", flush=True)
    options = replace(SMALL, model=args.model)
    rows = []
    with tempfile.TemporaryDirectory(prefix="igot-workers-") as tmp:
        for label, workers in (("the server's own worker", 0), ("1 worker (igot worker --device cpu)", 1),
                               ("2 workers, same 2 cores", 2)):
            if workers not in args.workers:
                continue
            print(f"\n{label}:", flush=True)
            got = measure(Path(tmp) / f"lib{workers}", options, recordings, workers, "cpu", args.timeout)
            rows.append((label, got))
            print(f"  wall {got['wall']:.1f} s, jobs {', '.join(f'{s:.1f}' for s in got['each'])} s by {got['by']}", flush=True)
    audio = seconds * args.copies
    print(f"\n| made by | wall time for {args.copies} x {seconds:.0f} s | per job (mean, min-max) | audio s per wall s |")
    print("|---|---|---|---|")
    for label, got in rows:
        each = got["each"]
        print(f"| {label} | {got['wall']:.1f} s | {statistics.mean(each):.1f} s ({min(each):.1f}-{max(each):.1f}) | "
              f"{audio / got['wall']:.2f} |")


# --- on a GPU machine: the server's own worker against one worker beside it --------------------------
FFPROBE = '''\
import json, sys, wave
path = sys.argv[-1].removeprefix("file:")
try:
    with wave.open(path, "rb") as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2)
        seconds = w.getnframes() / 16000
except Exception:
    sys.stderr.write(path + ": Invalid data found when processing input (stand-in ffprobe: 16 kHz mono WAV only)\\n")
    sys.exit(1)
print(json.dumps({"format": {"format_name": "wav", "duration": f"{seconds:.6f}"},
                  "streams": [{"codec_type": "audio", "duration": f"{seconds:.6f}"}]}))
'''
FFMPEG = '''\
import shutil, sys, wave
args = sys.argv[1:]
source = args[args.index("-i") + 1].removeprefix("file:")
out = args[-1]
with wave.open(source, "rb") as w:
    frames = w.readframes(w.getnframes())
if out == "pipe:1":
    sys.stdout.buffer.write(frames)
else:
    shutil.copyfile(source, out.removeprefix("file:"))
    if "-progress" in args:
        print(f"out_time_us={len(frames) // 2 * 1000000 // 16000}\\nprogress=end", flush=True)
'''


def stand_in_ffmpeg(folder: Path) -> None:
    """ffprobe and ffmpeg that read a 16 kHz mono WAV only, first on PATH (see the module)."""
    folder.mkdir()
    for name, code in (("ffprobe", FFPROBE), ("ffmpeg", FFMPEG)):
        (folder / name).write_text(f"#!{sys.executable}\n" + code)
        (folder / name).chmod(0o755)
    os.environ["PATH"] = f"{folder}{os.pathsep}{os.environ['PATH']}"


def gpu(args: argparse.Namespace) -> None:
    import torch

    from benchmarks.gpu_pipeline import build_models, tile

    assert torch.cuda.is_available() or args.tiny, "this mode is for a GPU"
    device = "cuda" if torch.cuda.is_available() else "cpu"
    print(f"{torch.cuda.get_device_name() if device == 'cuda' else 'CPU'}, torch {torch.__version__}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="igot-workers-gpu-"))
    try:
        if shutil.which("ffprobe") is None:
            stand_in_ffmpeg(work / "bin")
            print("no ffmpeg here: the 16 kHz WAV stand-ins are used (both sides)", flush=True)
        wav = work / "interview.wav"
        tile(args.audio, wav, args.minutes * 60)
        models = build_models(work / "models", args.tokenizer, args.tokens, args.tiny, args.whisper)
        options = RunOptions(language="en", engine="transformers", diarizer="nemo", device=device, **models)
        data = wav.read_bytes()
        recordings = {f"interview-{n + 1}.wav": data for n in range(args.copies)}
        rows = []
        for label, workers in (("the server's own worker (embedded)", 0), (f"igot worker --device {device}", 1)):
            print(f"\n{label}:", flush=True)
            got = measure(work / f"lib{workers}", options, recordings, workers, device, args.timeout)
            rows.append((label, got))
            print(f"  wall {got['wall']:.1f} s, jobs {', '.join(f'{s:.1f}' for s in got['each'])} s", flush=True)
            for log in sorted(work.glob(f"lib{workers}-w*.log")):
                print(textwrap.indent(log.read_text()[-3000:], "  worker: "), flush=True)
            if device == "cuda":
                torch.cuda.empty_cache()
        print(f"\n| made by | first job ({args.minutes:g} min, models loaded) | next job{'s' if args.copies > 2 else ''} "
              f"(models kept) | wall for {args.copies} |")
        print("|---|---|---|---|")
        for label, got in rows:
            rest = got["each"][1:]
            print(f"| {label} | {got['each'][0]:.1f} s | {statistics.mean(rest):.1f} s | {got['wall']:.1f} s |"
                  if rest else f"| {label} | {got['each'][0]:.1f} s | - | {got['wall']:.1f} s |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    modes = parser.add_subparsers(dest="mode", required=True)
    c = modes.add_parser("cpu", help="N recordings: the server's own worker, one worker, two")
    c.add_argument("--recording", type=Path, default=RADIO)
    c.add_argument("--copies", type=int, default=4)
    c.add_argument("--model", default="bundled:tiny.en")
    c.add_argument("--workers", type=lambda s: [int(x) for x in s.split(",")], default=[0, 1, 2],
                   help="which rows: 0 (the server's own), 1, 2")
    c.add_argument("--timeout", type=float, default=900)
    g = modes.add_parser("gpu", help="one job: the server's own worker against an igot worker on the GPU")
    g.add_argument("--audio", type=Path, required=True, help="16 kHz mono 16-bit WAV, tiled to --minutes")
    g.add_argument("--tokenizer", type=Path, required=True, help="a folder holding Whisper's multilingual tokenizer.json")
    g.add_argument("--minutes", type=float, default=10)
    g.add_argument("--copies", type=int, default=2)
    g.add_argument("--tokens", type=int, default=90, help="Whisper tokens per 30 s window")
    g.add_argument("--whisper", default="large-v3", choices=["large-v3", "large-v3-turbo"])
    g.add_argument("--tiny", action="store_true", help="tiny models: a smoke test of the script")
    g.add_argument("--timeout", type=float, default=400)
    args = parser.parse_args()
    cpu(args) if args.mode == "cpu" else gpu(args)


if __name__ == "__main__":
    main()
