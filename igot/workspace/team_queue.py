"""A team's queue (issue 51): the jobs live in the team's database (igot.team.jobs), so they outlive
the server, and workers anywhere take them (`igot worker`, igot.workspace.routes.workers).

What the page adds goes as in one person's workspace (igot.workspace.queue checks every file, link
and path) with one difference: a job is a row of the database. A link or a path is a row at once;
an uploaded file comes in chunks into .igot/uploads as before, and once whole it is placed in
LIB/recordings and its row then waits (only the upload still coming lives in memory: a server
stopped mid-upload loses it, as the page's upload is cut anyway).

The server runs jobs itself too, in a thread taking them through the same `take` as worker None,
with the workspace's model pool: unless started with `--no-embedded-worker`, and only while no
outside worker has asked for a job in the last EXTERNAL_WINDOW seconds (a team with a GPU box
should not have the server's CPU crawl through the same queue). Its jobs renew their lease like any
worker's; at the next start, a job the server ran when it stopped waits again (jobs.resume).

A job's finished stages travel with it: a worker sends each stage's kept file (its work folder's,
igot.pipeline.cache) as it finishes, the server keeps them in LIB/.igot/jobs/ID/ (only the names
STAGE_FILES, through no link), and the worker that takes the job next (its first killed) puts them
in its own work folder, so its run reuses them. They are removed once the job ends.
"""

from __future__ import annotations

import json
import os
import stat
import threading
import time
import uuid
from dataclasses import fields, replace
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from igot.errors import IgotError
from igot.pipeline import Models, RunOptions, run, work_dir_for
from igot.pipeline.models import RUN_ONLY
from igot.runtime import changes
from igot.runtime.files import STATE, first_link, remove_tree
from igot.team import jobs
from igot.team.db import TeamDB
from igot.workspace.queue import KEEP_WARM, SHOWN, STOPS_AT, Cancelled, Gone, Job, Queue, forget_left_jobs, one_line, \
    remove_upload, take_back
from igot.outputs.store import Library

EXTERNAL_WINDOW = 30.0  # seconds: an outside worker asked this recently, the server's own does not take jobs
IDLE_POLL = 2.0  # seconds between two looks at the queue when it is empty
# Options that belong to the computer that runs the job, not to the job: never sent to a worker.
# A link's local addresses are the worker's own rule (as `igot run`'s), never the server's.
LOCAL_OPTIONS = {"cookies", "client_secrets", "drive_folder", "drive", "progress", "device", "force", "allow_local_links"}


# A run's kept stages a worker may send and another take up (igot.pipeline.stages), each a JSON file
# (what the server's door lets a worker send): the source and its audio are not among them (the next
# worker has the recording, and converts it in seconds), nor the speakers' voice windows (binary,
# made again from the audio).
STAGE_FILES = ("transcription.json", "alignment.json", "punctuation.json", "diarization.json", "summary.json",
               "embeddings.json")
JOBS_FOLDER = "jobs"  # LIB/.igot/jobs/ID: a job's stages sent by its workers
MAX_STAGE = 256 * 2**20  # bytes of one stage's file (an hour's transcription with its words: ~5 MB)


def stages_folder(folder: Path, job_id: int) -> Path:
    return Path(folder) / STATE / JOBS_FOLDER / str(int(job_id))


def stage_name(name: str) -> str:
    if name not in STAGE_FILES:
        raise IgotError(f"{name[:60]!r} is not a stage's file.", "Check that the worker runs the same iGot as the server.")
    return name


def keep_stage(folder: Path, job_id: int, name: str, data: bytes) -> Path:
    """A stage's file a worker sent for its job (JSON), written whole (a temp file renamed) in the
    job's folder, reached through no link."""
    stage_name(name)
    try:
        json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise IgotError(f"The stage {name} sent is not JSON.", "Check that the worker runs the same iGot as the server.") from None
    where = changes.own_folder(stages_folder(folder, job_id), Path(folder))
    path = where / name
    tmp = where / f".{name}.{uuid.uuid4().hex[:8]}.tmp"
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)  # a link in its place is replaced, never followed
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def kept_stages(folder: Path, job_id: int) -> dict[str, Path]:
    """The stages kept for the job: real files reached through no link, by name."""
    where = stages_folder(folder, job_id)
    if first_link(where, Path(folder)) is not None:
        return {}
    found = {}
    for name in STAGE_FILES:
        try:
            if stat.S_ISREG(os.lstat(where / name).st_mode):
                found[name] = where / name
        except OSError:
            pass
    return found


def forget_stages(folder: Path, job_id: int) -> None:
    remove_tree(stages_folder(folder, job_id), Path(folder))


def forget_left_stages(folder: Path, db: TeamDB) -> None:
    """The stages kept for jobs that ended (or are gone) removed: those whose end no route saw (a
    job failed or cancelled when another worker asked, one taken off the list)."""
    where = Path(folder) / STATE / JOBS_FOLDER
    try:
        if first_link(where, Path(folder)) is not None:
            return
        with os.scandir(where) as entries:
            names = [e.name for e in entries]
    except OSError:
        return
    active = jobs.active_ids(db)
    for name in names:
        if not (name.isdigit() and int(name) in active):
            remove_tree(where / name, Path(folder))


def place_stages(folder: Path, job_id: int, work: Path) -> list[str]:
    """The job's kept stages copied into a run's work folder in the library `folder` (the server's
    own run), where it has none of its own, through no link: the names placed."""
    placed = []
    for name, path in kept_stages(folder, job_id).items():
        if (work / name).exists():
            continue
        try:
            changes.own_folder(work, Path(folder))
            tmp = work / f".{name}.{uuid.uuid4().hex[:8]}.tmp"
            tmp.write_bytes(path.read_bytes())
            os.replace(tmp, work / name)
            placed.append(name)
        except (OSError, IgotError):  # the run makes it again
            pass
    return placed


def options_dict(options: RunOptions) -> dict:
    """A job's run options as plain values (JSON), without those of the computer that runs it."""
    return {f.name: jobs.plain(getattr(options, f.name)) for f in fields(RunOptions) if f.name not in LOCAL_OPTIONS}


def options_from(given: Any, base: RunOptions) -> RunOptions:
    """`base` (the computer's own: its device, no Drive) with a job's options as sent (only the
    fields RunOptions has, and not the computer's own)."""
    if not isinstance(given, dict):
        raise IgotError("The job came without its options.", "Check that the worker runs the same iGot as the server.")
    known = {f.name for f in fields(RunOptions)} - LOCAL_OPTIONS
    chosen = {k: v for k, v in given.items() if k in known}
    if given.get("align") is False and "word_timing" not in given:  # a job queued before word_timing: --no-align
        chosen["word_timing"] = "engine"
    return replace(base, **chosen)


class Reporter:
    """A running job's progress, told to whoever leases it (the database for the server's own
    worker, the server for an outside one): the stage from the run's typed events, the counts from its
    progress hook, sent at most once a second when they change and every `every` seconds anyway
    (a long stage that says nothing must not lose its lease). `send(stage, done, total)` returns
    False when the job must stop (cancelled, or its lease lost): the run then stops at its next
    step or line (Cancelled), before its save begins."""

    def __init__(self, send: Callable[[str, float, float], bool], every: float, log: Callable[[str], None] = lambda m: None):
        self.send, self.every, self.log = send, every, log
        self.stage, self.done, self.total = "starting", 0.0, 0.0
        self.go_on = True
        self.halt = threading.Event()  # set by the caller: stop (the server or worker stops)
        self.owner = threading.current_thread()
        self.changed = True
        self.sent_at = 0.0
        self.ended = threading.Event()
        self.beat = threading.Thread(target=self.beating, daemon=True, name="igot-lease")

    def __enter__(self) -> "Reporter":
        self.beat.start()
        return self

    def __exit__(self, *exc) -> None:
        self.ended.set()
        self.beat.join(timeout=30)

    def stopping(self) -> bool:
        return not self.go_on or self.halt.is_set()

    def began(self, stage: str) -> None:
        """The run's typed event: stage `stage` begins (RunContext.begins; the speaker detection
        beside on a GPU tells its own, not the stage shown)."""
        if threading.current_thread() is self.owner and stage in SHOWN:
            self.stage, self.done, self.total, self.changed = SHOWN[stage], 0.0, 0.0, True

    def heard(self, line: str) -> None:
        """The run's log, passed on; Cancelled at a line said before the save when told to stop."""
        if self.stopping() and line.split(":", 1)[0] in STOPS_AT:
            raise Cancelled()
        self.log(line)

    def step(self, what: str, done: float, total: float) -> None:
        """The run's progress hook."""
        if threading.current_thread() is not self.owner:
            return
        if self.stopping() and self.stage != "saving":
            raise Cancelled()
        self.done, self.total, self.changed = float(done), float(total), True

    def beating(self) -> None:
        while not self.ended.is_set():
            wait = self.sent_at + (1.0 if self.changed else self.every) - time.monotonic()
            if wait > 0:
                self.ended.wait(min(wait, 0.2))
                continue
            self.changed, self.sent_at = False, time.monotonic()
            try:
                if not self.send(self.stage, self.done, self.total):
                    self.go_on = False
            except Exception as err:  # noqa: BLE001  the next beat tries again; the lease may run out meanwhile
                self.log(f"Progress not sent ({type(err).__name__}: {err}); trying again.")


def view(job: jobs.Job) -> dict:
    """What the page shows of a job of the database (as Job.view shows one in memory), with the
    worker that runs it and its progress inside the stage."""
    running = job.state == "running"
    share = 1.0 if job.state == "done" else min(job.done / job.total, 1.0) if running and job.total > 0 else 0.0
    return {"id": str(job.id), "name": job.name, "state": job.state, "link": job.source if job.kind == "link" else None,
            "stage": job.stage if running else "", "share": round(share, 3), "left": None, "line": job.line,
            "stem": job.stem, "stopping": job.cancel and running,
            "worker": (job.worker_name or "this server") if running else None,
            "done": job.done if running else None, "total": job.total if running else None}


class TeamQueue(Queue):
    """The queue of a team's server: kept in `db` (see the module). `lease_seconds`: how long a
    worker may go unheard before its job goes to another; `embedded`: whether the server runs jobs
    itself."""

    def __init__(self, lib: Library, db: TeamDB, options: Optional[RunOptions] = None,
                 log: Callable[[str], None] = lambda m: None, recording_folders: Sequence[Path | str] = (),
                 models: Optional[Models] = None, lease_seconds: float = jobs.LEASE_SECONDS, embedded: bool = True):
        self.db = db
        self.lease_seconds = lease_seconds
        self.embedded = embedded
        self.external_asked = float("-inf")  # time.monotonic() of an outside worker's last request for a job
        self.halt = threading.Event()
        self.wake = threading.Event()
        self.reporter: Optional[Reporter] = None
        jobs.resume(db)  # before the clean-up: what the last server ran waits again, and keeps its recording
        super().__init__(lib, options, log, recording_folders, models)
        if embedded:
            self.worker = threading.Thread(target=self.work, daemon=True, name="igot-team-worker")
            self.worker.start()

    def forget_left(self) -> None:
        forget_left_jobs(self.lib, keep=frozenset(jobs.needed_sources(self.db)))
        forget_left_stages(self.folder, self.db)

    def sent_options(self, job: jobs.Job) -> dict:
        """The job's options as sent to a worker: with the library's glossary and summary prompt,
        as the server's own run reads them from the library (igot.pipeline.plan), unless the job
        has its own. A glossary or prompt the library's file cannot give is left out, as the
        server's run would leave it."""
        options = dict(job.options)
        if options.get("glossary") is None:
            try:
                terms = self.lib.glossary()
            except IgotError:
                terms = []
            if terms:
                options["glossary"] = list(terms)
        if not options.get("prompt") and options.get("summary", True):
            kept = self.lib.kept_prompt()
            if kept.text:
                options["prompt"] = kept.text
        return options

    def next_id(self) -> str:
        self.numbered += 1
        return f"u{self.numbered}"  # an upload still coming, in memory: never a database job's id

    # --- what the page asks ------------------------------------------------------------------
    def enqueue(self, made: list[Job], added_by: Optional[int]) -> list[dict]:
        views = []
        for job in made:
            if job.upload is not None:
                job.added_by = added_by  # type: ignore[attr-defined]
                self.jobs.append(job)
                views.append(job.view(time.monotonic()))
            else:
                kind, source = ("link", job.link) if job.link is not None else ("path", str(job.path))
                views.append(view(jobs.add(self.db, kind, source, job.name, options_dict(job.options), added_by)))
        self.wake.set()
        return views

    def start_worker(self) -> None:
        """An upload now whole (called with the lock held): placed in LIB/recordings, its row waits."""
        for job in [j for j in self.jobs if j.state == "waiting" and j.upload is not None]:
            try:
                path = self.placed(job)
                row = jobs.add(self.db, "upload", str(path), job.name, options_dict(job.options),
                               getattr(job, "added_by", None))
            except (OSError, IgotError) as err:
                job.state, job.line = "failed", f"{job.name} could not be placed in the library ({err}): add it again."
                remove_upload(job, self.folder)
                continue
            remove_upload(job, self.folder)  # its claim let go: the row now keeps the recording
            self.jobs.remove(job)
            job.id, job.state = str(row.id), "waiting"  # the page hears the job's id in the database
        self.wake.set()

    def listing(self) -> list[dict]:
        in_memory = super().listing()
        return in_memory + [view(j) for j in jobs.listing(self.db)]

    def cancel(self, job_id: str) -> dict:
        if job_id.startswith("u"):
            return super().cancel(job_id)
        if not job_id.isdigit():
            raise Gone(f"No recording {job_id[:40]!r} in the queue.", "Reload the page.")
        return view(jobs.cancel(self.db, int(job_id)))

    def close(self) -> None:
        """The server stops: its own worker stops at its job's next step and the job waits again
        for the next start (or another worker); uploads still coming are dropped."""
        self.halt.set()
        self.wake.set()
        with self.lock:
            for job in self.jobs:
                if job.state in ("uploading", "waiting"):
                    job.state = "cancelled"
                    remove_upload(job, self.folder)
            worker = self.worker
        if worker is not None:
            worker.join(timeout=20)

    # --- the server's own worker ----------------------------------------------------------------
    def work(self) -> None:
        ran = False
        last = time.monotonic()  # when the last job here ended
        while not self.halt.is_set():
            if time.monotonic() - self.external_asked < EXTERNAL_WINDOW:
                job = None
            else:
                try:
                    job = jobs.take(self.db, None, self.lease_seconds)
                except Exception as err:  # noqa: BLE001  the database busy or gone: said, tried again
                    self.log(f"The queue could not be read ({err}); trying again.")
                    job = None
            if job is None:
                # The run's own models kept warm for the next recording a while (queue.KEEP_WARM),
                # then their memory back until one comes.
                if ran and time.monotonic() - last >= KEEP_WARM:
                    self.models.free(RUN_ONLY)
                    ran = False
                self.wake.wait(IDLE_POLL)
                self.wake.clear()
                continue
            ran = True
            self.run_here(job)
            last = time.monotonic()

    def run_here(self, job: jobs.Job) -> None:
        """Make the job's recording into an interview here, into the library itself."""
        def send(stage: str, done: float, total: float) -> bool:
            return jobs.renew(self.db, job.id, None, stage, done, total, self.lease_seconds)

        reporter = Reporter(send, min(self.lease_seconds / 3, 20.0), lambda line: self.log(f"{job.name}: {line}"))
        reporter.halt = self.halt
        state, line, stem = "failed", "", None
        source = job.source
        try:
            with reporter:
                options = options_from(job.options, self.options)
                if job.kind == "path":  # checked again: the file may have changed since it was added
                    source = str(self.recording_path(source))
                place_stages(self.folder, job.id, work_dir_for(source, self.folder))  # what a worker sent before
                result = run(source, self.folder, options, models=self.models, log=reporter.heard, progress=reporter.step,
                             stage=reporter.began)
            json_file = result.files.get("json")
            if json_file is None:
                line = f"No speech found in {job.name}: nothing was written (an interview of the same name was kept as it was)."
            else:
                state, stem = "done", Path(json_file).stem
        except Cancelled:
            if self.halt.is_set():
                jobs.put_back(self.db, job.id, None)
                self.log(f"{job.name}: waits for the next start")
                return
            state = "cancelled"
        except IgotError as err:
            line = one_line(str(err), source, job.name)
        except OSError as err:
            line = (f"{job.name} could not be made: {err.strerror or err} ({err.filename or self.folder}). "
                    "Free some space in the library's folder, or check that it can be written to.")
        except Exception as err:  # noqa: BLE001  a bug, not the user's: said, and the queue goes on
            line = (f"Unexpected error while making {job.name} ({type(err).__name__}: {one_line(str(err), source, job.name)}). "
                    "Nothing was written; please report it.")
        self.ended(job, None, state, line, stem)

    def ended(self, job: jobs.Job, worker: Optional[int], state: str, line: str, stem: Optional[str]) -> jobs.Job:
        """The job's end recorded; an upload no interview was made from taken back (its recording
        and work folder), as one person's queue does."""
        from igot.team import activity, people

        with self.db.write():
            finished = jobs.finish(self.db, job.id, worker, state, line, stem)
            if finished.state == "done" and state == "done" and finished.stem == stem:
                who = people.find(self.db, job.added_by) if job.added_by else None
                activity.record(self.db, who, activity.ADDED_INTERVIEW, stem or "", "", None, job.name)
        if finished.state != "done" and job.kind == "upload":
            take_back(self.lib, Path(job.source))
        if finished.state in jobs.ENDED:
            forget_stages(self.folder, job.id)
        self.log(f"{job.name}: {finished.state}{': ' + finished.line if finished.line else ''}")
        return finished
