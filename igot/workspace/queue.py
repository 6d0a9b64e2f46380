"""Adding interviews from the workspace (issue 41, point 1): the recordings the page sends (files,
or links) wait in one queue and are made one after another by a worker thread, with the models
loaded once for the queue (as `igot run a b c` does, igot.cli.run_queue), into the workspace's one
model pool (issue 41, point 2): kept while the queue has work (a GPU short of room frees them in
order, igot.pipeline.models), the run's own let go of once it is empty, the LLM and the embedder
kept for search and Ask.

What each job shows comes from the run's typed events, never from its lines: each stage's name as
it begins (igot.pipeline.run's `stage`), and the time left from each stage's pace
(igot.runtime.pace), measured on this computer as the stages finish; inside a stage, from the
run's progress hook (how much of the recording is transcribed, how many phrases timed...), else
its time so far against the time it should take.

Cancel: a waiting job is dropped; a running one stops at its stage's next step, raised from the
progress hook (or from the log, between stages). The run writes the interview in one save at its
end (igot.outputs.store), so a job that fails or is cancelled leaves no interview files; the
stages it finished stay in the library's work folder (.igot), as an interrupted `igot run` leaves
them, so adding the same link again picks up where it stopped.

An uploaded file comes in chunks into .igot/uploads/JOB/ (its name made safe, its size limited);
when its job starts it moves to the library's recordings/ folder, under a name no other recording
or work folder has, so the interview plays it in the workspace as `igot run` interviews play the
file they were made from. A job that fails or is cancelled takes its recording and work folder
away with it (a later upload of the same name must not reuse their stages). While a job lives, its
process holds a lock on a file in its upload folder (.igot/uploads/JOB/.job) that names the
recording it placed; the OS frees it when the process ends, even by kill -9, so the next `igot
serve` takes back what a killed job left (its upload, its recording, its work folder) and the same
file added again gets its own name, not a "-2". Nothing is removed through a link (issue 49).

A recording already on this computer is added by its path (issue 41, point 5: in Colab, a file in
the mounted Google Drive), only when the workspace was started with folders to add them from, and
only a recording file inside one of them by its real path (no symbolic link leading out): the page
can name any path, so the server must not read anything else. Such a job runs from the file where
it is, as `igot run FILE` does: it is never moved, copied or removed, whatever becomes of the job.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import stat
import threading
import time
import unicodedata
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from igot.errors import IgotError
from igot.links import is_url
from igot.media.source import videos_of
from igot.media.recording import RECORDING_SUFFIXES
from igot.outputs.store import Library
from igot.pipeline import Models, RunOptions, check_options, run, work_dir_for
from igot.pipeline.models import RUN_ONLY
from igot.pipeline.plan import planned_stages, run_device
from igot.runtime import changes, pace
from igot.runtime.files import first_link, remove_tree
from igot.speakers.phrases import parse_names
from igot.workspace.interviews import WorkspaceError

MAX_UPLOAD = 4 * 2**30  # bytes of one recording: an hour of video is well under it
MAX_CHUNK = 16 * 2**20  # bytes of one upload request (the page sends 8 MiB): a proxy may cut longer ones
MAX_JOBS = 100  # recordings added at once
MAX_LINK = 2000  # characters of one link
MAX_PATH = 4096  # characters of one path (Linux's own limit)
MAX_NAME = 200  # characters of an interview's name, and of the speakers' names
KEPT_FINISHED = 50  # finished jobs still listed, newest first
# Seconds the run's own models (Whisper, the speaker models) stay loaded once the queue is empty: a
# researcher adds the next call minutes after the last, and loading them again is what a short
# recording waits for most after the summary (benchmarks/README.md, "Short recordings in the
# workspace"). Past it their memory goes back until the next recording comes.
KEEP_WARM = 15 * 60
UPLOAD_IDLE = 15 * 60  # seconds: an upload that stopped this long ago (its page closed) is dropped
UPLOADS = Path(".igot") / "uploads"
CLAIM = ".job"  # in a job's upload folder: locked while its process lives, it names the recording placed
LEFT_UPLOAD = 24 * 3600  # seconds: an upload folder with no claim (an earlier iGot's) is removed a day on
RECORDINGS = "recordings"  # where uploaded recordings stay, beside their interviews

ACTIVE = ("uploading", "waiting", "running")


class Cancelled(Exception):
    """The user cancelled the running job: raised from the run's progress hook or its log."""


# The stage each of the run's lines names (the words before its colon): (the pace's name for it,
# what the page shows). Lines not listed (Voices, Glossary, Warning) change no stage.
STAGES = {
    "Source": ("source", "reading the recording"),
    "Audio": ("audio", "converting the audio"),
    "Transcription": ("transcription", "transcribing"),
    "Word timing": ("alignment", "timing the words"),
    "Punctuation": ("punctuation", "punctuating"),
    "Speakers": ("diarization", "finding the speakers"),
    "Summary": ("summary", "writing the summary"),
    "Meaning index": ("meaning", "indexing for search"),
    "Library": ("saving", "saving"),
}
ORDER = ["starting", "source", "audio", *pace.STAGES, "saving"]  # the stages in the order a run goes through them
SHOWN = {name: shown for name, shown in STAGES.values()}  # a stage's name (RunContext.begins) -> what the page shows
# Lines said only before the run's save begins: the run may stop there (raised from the log). The
# save's own lines (Library, Voices) never stop it, so it is never cut half way.
STOPS_AT = {"Source", "Audio", "Transcription", "Word timing", "Punctuation", "Speakers", "Summary", "Meaning index",
            "Time left"}


@dataclass
class Progress:
    """Where a running job is, from its lines: its stage, the seconds each finished stage took,
    and the recording's length once its audio is read."""

    stages: list[str]
    started: float = field(default_factory=time.monotonic)
    stage: str = "starting"
    shown: str = "starting"
    since: float = field(default_factory=time.monotonic)
    done: dict[str, float] = field(default_factory=dict)
    seconds: Optional[float] = None
    inside: Optional[float] = None  # the share of the stage done, from the run's progress hook

    def told(self, done: float, total: float) -> None:
        """The run's progress hook, inside the stage now running."""
        if total > 0:
            self.inside = min(max(done / total, 0.0), 1.0)

    def began(self, stage: str, now: float) -> None:
        """The run's stage `stage` (RunContext.begins' name) began."""
        if stage not in SHOWN:
            return
        shown = SHOWN[stage]
        if ORDER.index(stage) <= ORDER.index(self.stage):  # the run goes forward only
            return
        if self.stage in pace.CPU_PACE:
            self.done[self.stage] = now - self.since
        if stage in self.stages:  # the stages before it that said nothing had nothing to do
            for earlier in self.stages[:self.stages.index(stage)]:
                self.done.setdefault(earlier, 0.0)
        self.stage, self.shown, self.since, self.inside = stage, shown, now, None

    def estimate(self, now: float) -> tuple[float, Optional[float]]:
        """(the share of the run done, the seconds left), from each stage's pace at this computer's
        speed so far; (share, None) until the recording's length is known."""
        elapsed = now - self.started
        if self.stage == "saving":
            return 0.99, 1.0
        if not self.seconds:
            return min(0.05, elapsed / 600), None
        speed = pace.speed(self.done, self.seconds)
        left = 0.0
        if self.stage in pace.CPU_PACE:
            expected = pace.CPU_PACE[self.stage] * self.seconds * speed
            spent = now - self.since
            if self.inside is not None and self.inside >= 0.05:  # its own pace so far, once it has done a little
                left = spent * (1 - self.inside) / self.inside
            else:
                left = max(expected - spent, 0.1 * expected)  # a stage past its time still has some left
        to_come = [s for s in self.stages if s not in self.done and s != self.stage]
        left += pace.time_left(self.done, to_come, self.seconds)
        return min(elapsed / max(elapsed + left, 1e-9), 0.99), left


@dataclass
class Job:
    """One recording to make into an interview: a link, or a file coming from the page."""

    id: str
    name: str  # what the page shows: the file's name, the link, or the name given
    options: RunOptions
    link: Optional[str] = None
    path: Optional[Path] = None  # a recording on this computer, by its real path: played where it is, never removed
    upload: Optional[Path] = None  # the file's bytes while they come and wait (.igot/uploads/ID/NAME)
    claim: Optional[int] = None  # the job's lock on .igot/uploads/ID/.job (changes.claim) while its upload folder lives
    size: int = 0  # bytes the page said the file has
    received: int = 0
    state: str = "waiting"  # uploading, waiting, running, done, failed, cancelled
    line: str = ""  # why it failed, or what it left as it was
    stem: Optional[str] = None  # the interview made
    stopping: bool = False  # cancelled while running: stops at its stage's next step (the progress hook) or line
    touched: float = field(default_factory=time.monotonic)
    progress: Optional[Progress] = None

    def view(self, now: float) -> dict[str, Any]:
        share, left = (self.progress.estimate(now) if self.progress else (0.0, None))
        if self.state == "uploading":
            share = self.received / self.size if self.size else 0.0
        elif self.state == "done":
            share = 1.0
        return {"id": self.id, "name": self.name, "state": self.state, "link": self.link,
                "stage": self.progress.shown if self.progress and self.state == "running" else "",
                "share": round(share, 3), "left": round(left) if left is not None and self.state == "running" else None,
                "line": self.line, "stem": self.stem, "stopping": self.stopping}


class Queue:
    """The library's recordings to make, one at a time, by a worker thread started when one waits.
    `options`: what every run is asked (the workspace's start decides them: tests run the small
    bundled models); the page adds each batch's language, speakers and names. `recording_folders`:
    where recordings already on this computer may be added from by their path (none: only files
    sent from the page, and links). `models`: the pool the runs load into, the workspace's (None:
    one of its own); kept while the queue has work and `keep_warm` seconds after (KEEP_WARM)."""

    def __init__(self, lib: Library, options: Optional[RunOptions] = None, log: Callable[[str], None] = lambda m: None,
                 recording_folders: Sequence[Path | str] = (), models: Optional[Models] = None,
                 keep_warm: float = KEEP_WARM):
        self.lib = lib
        self.folder = lib.folder
        self.recording_folders = [Path(os.path.abspath(Path(f).expanduser())) for f in recording_folders]
        for given in self.recording_folders:
            if not given.is_dir():
                raise WorkspaceError(f"No folder {given} to add recordings from.",
                                     "Give a folder that exists (in Colab: mount Google Drive first).")
        # As given: what the page shows, and where a path is checked before the disk is read. By their
        # real paths: where its file must really be (My Drive itself may be a link).
        self.real_folders = [f.resolve() for f in self.recording_folders]
        self.options = replace(options or RunOptions(), progress=False)  # no progress bars in the server's terminal
        self.log = log
        self.jobs: list[Job] = []
        self.lock = threading.Lock()
        self.worker: Optional[threading.Thread] = None
        self.models = models or Models(keep=True)  # kept: while jobs wait, a model once loaded is not loaded again
        self.keep_warm = keep_warm
        self.wake = threading.Event()  # a job waits, or the server stops: the worker keeping the models warm goes on
        self.closed = False
        self.numbered = 0
        self.forget_left()

    def forget_left(self) -> None:
        """What the jobs of a stopped server left, taken back (forget_left_jobs)."""
        forget_left_jobs(self.lib)

    # --- what the page asks ------------------------------------------------------------------
    def add(self, body: dict, added_by: Optional[int] = None) -> list[dict]:
        """The jobs for one batch: {"files": [{"name", "size"}...], "links": "one a line", "paths":
        "one a line", "name", "language", "speakers", "names"}. Files then come with `receive`;
        links and paths wait at once. Everything is checked before any job is made: a wrong option
        or path adds nothing. `added_by`: the person's id, in a team's queue."""
        files, links, paths = body.get("files") or [], body.get("links") or "", body.get("paths") or ""
        if not isinstance(files, list) or not isinstance(links, str) or not isinstance(paths, str):
            raise WorkspaceError("The recordings must be a list of files, and text with one link (or path) a line.",
                                 "Add them from the workspace page.")
        links = [line.strip() for line in links.splitlines() if line.strip()]
        paths = [line.strip() for line in paths.splitlines() if line.strip()]
        if len(files) + len(links) + len(paths) > MAX_JOBS:
            raise WorkspaceError(f"{len(files) + len(links) + len(paths)} recordings were given at once.",
                                 f"Add at most {MAX_JOBS} at a time.")
        for link in links:
            if len(link) > MAX_LINK or not is_url(link):
                raise WorkspaceError(f"{link[:80]!r} is not a link.", "Paste links starting with http:// or https://, one a line.")
        videos = [video for link in links for video in videos_of(link, self.options.allow_local_links)]  # a playlist: each of its videos
        count = len(files) + len(videos) + len(paths)
        if not count:
            raise WorkspaceError("No recording was given.", "Choose or drop recordings, or paste links (one a line).")
        if count > MAX_JOBS:
            raise WorkspaceError(f"{count} recordings were given at once ({len(videos)} videos from the links).",
                                 f"Add at most {MAX_JOBS} at a time.")
        options = self.batch_options(body, count)
        named = [(upload_name(f), f.get("size")) if isinstance(f, dict) else (None, None) for f in files]
        found = [(Path(given).name, self.recording_path(given)) for given in paths]
        for name, size in named:
            if name is None or not isinstance(size, int) or isinstance(size, bool) or size < 0:
                raise WorkspaceError("A file was sent without its name and size.", "Add it from the workspace page.")
            if size > MAX_UPLOAD:
                raise WorkspaceError(f"{name} is {size / 2**30:.1f} GB.", f"Add recordings of at most {MAX_UPLOAD // 2**30} GB "
                                     "(or run it with igot run, which reads any size).")
        made = []
        with self.lock:
            self.forget_finished()
            for name, size in named:
                job = Job(self.next_id(), options.name or name, options, size=size, state="uploading")
                job.upload = self.folder / UPLOADS / f"{job.id}-{secrets.token_hex(4)}" / name
                made.append(job)
            made += [Job(self.next_id(), options.name or title or link, options, link=link) for link, title in videos]
            made += [Job(self.next_id(), options.name or name, options, path=path) for name, path in found]
            try:
                if any(job.upload is not None for job in made):
                    changes.own_folder(self.folder / UPLOADS, self.folder)  # never a link out of the library
                for job in made:
                    if job.upload is not None:
                        job.upload.parent.mkdir()
                        job.claim = changes.claim(job.upload.parent / CLAIM)
                        job.upload.touch()
            except IgotError as err:
                for job in made:
                    remove_upload(job, self.folder)
                raise WorkspaceError(err.problem, err.fix) from None
            except OSError as err:
                for job in made:
                    remove_upload(job, self.folder)
                raise WorkspaceError(f"The recordings cannot be received in {self.folder / UPLOADS} ({err.strerror or err}).",
                                     "Check that the library's folder can be written to and has room.") from None
            return self.enqueue(made, added_by)

    def enqueue(self, made: list[Job], added_by: Optional[int]) -> list[dict]:
        """The batch's jobs in the queue, their views (called with the lock held)."""
        self.jobs += made
        self.start_worker()
        now = time.monotonic()
        return [job.view(now) for job in made]

    def batch_options(self, body: dict, count: int) -> RunOptions:
        """The run's options with the batch's name, language, speakers and names, checked."""
        def text(key: str) -> str:
            value = body.get(key)
            if value is None:
                return ""
            if not isinstance(value, str) or len(value) > MAX_NAME:
                raise WorkspaceError(f"The {key} must be text of at most {MAX_NAME} characters.", "Type it again.")
            return value.strip()

        name, language, names = text("name"), text("language"), text("names")
        speakers = body.get("speakers")
        if speakers in ("", None):
            speakers = None
        elif isinstance(speakers, str) and speakers.strip().isdigit():
            speakers = int(speakers)
        if speakers is not None and (not isinstance(speakers, int) or isinstance(speakers, bool)):
            raise WorkspaceError(f"The number of speakers must be a whole number, not {speakers!r}.",
                                 "Type how many people speak, or leave it empty to detect it.")
        if name and count > 1:
            raise WorkspaceError(f"A name describes one interview, and {count} recordings were given.",
                                 "Add those recordings one at a time with it, or leave the name empty "
                                 "(each is named by its file or title).")
        options = replace(self.options, name=name or None, language=None if language in ("", "auto") else language,
                          speakers=speakers, names=parse_names(names) if names else None)
        check_options(options)
        return options

    def recording_path(self, given: str) -> Path:
        """The real path of a recording on this computer the page named: a regular file with a
        recording's suffix, inside one of the recording folders by its path as given and by its
        real path. Refused with one line otherwise, before anything outside them is looked at."""
        shown = given[:300]
        if not self.recording_folders:
            raise WorkspaceError(f"{shown!r}: this workspace adds no recordings by their path.",
                                 "Choose the file (it is sent from the page) or paste its link; or open the workspace "
                                 "with a folder to add recordings from (in Colab: step 2, with Google Drive mounted).")
        folders = " or ".join(str(f) for f in self.recording_folders)
        if len(given) > MAX_PATH or "\x00" in given or not os.path.isabs(given):
            raise WorkspaceError(f"{shown!r} is not the whole path of a file.",
                                 f"Give it from the start, e.g. {self.recording_folders[0] / 'interviews' / 'ana.mp4'}.")
        path = Path(os.path.normpath(given))
        if not any(path.is_relative_to(f) for f in self.recording_folders + self.real_folders):
            raise WorkspaceError(f"{shown} is not in {folders}.",
                                 "Add recordings from there only; choose any other file to send it from the page.")
        try:
            real = path.resolve(strict=True)
            regular = stat.S_ISREG(real.stat().st_mode)
        except (OSError, RuntimeError, ValueError):
            raise WorkspaceError(f"No file {shown}.", "Check its spelling and capitals (in Colab, the Files panel's ⋮ "
                                 "menu has Copy path).") from None
        if not any(real.is_relative_to(f) for f in self.real_folders):  # a link leading out
            raise WorkspaceError(f"{shown} leads out of {folders} (a link to {real}).",
                                 "Add the recording itself from there, or choose it to send it from the page.")
        if not regular:
            raise WorkspaceError(f"{shown} is not a file.", "Give the path of an audio or video file, one a line.")
        if real.suffix.lower() not in RECORDING_SUFFIXES:
            raise WorkspaceError(f"{shown} is not a recording iGot reads.",
                                 f"Give audio or video files ({', '.join(sorted(RECORDING_SUFFIXES))}).")
        return real

    def receive(self, job_id: str, offset: int, data: bytes, last: bool) -> dict:
        """A chunk of an uploaded file, at `offset`; `last`: the file is whole, its job waits."""
        with self.lock:
            job = self.job(job_id)
            if job.state == "cancelled":
                raise Gone(f"{job.name} was cancelled.", "Add it again if you want it.")
            if job.state != "uploading" or job.upload is None:
                raise WorkspaceError(f"{job.name} is not waiting for its file ({job.state}).", "Add it again if you want it.")
            if offset != job.received:
                raise WorkspaceError(f"{job.name}: a chunk came for byte {offset}, and {job.received} had come.",
                                     "Add the recording again.")
            if job.received + len(data) > job.size:
                raise WorkspaceError(f"{job.name} is longer than the {job.size} bytes announced.", "Add the recording again.")
            try:
                with os.fdopen(os.open(job.upload, os.O_WRONLY | os.O_APPEND | changes.NOFOLLOW), "ab") as out:
                    out.write(data)
            except OSError as err:
                job.state, job.line = "failed", f"{job.name} could not be received ({err.strerror or err}): add it again."
                remove_upload(job, self.folder)
                raise WorkspaceError(f"{job.name} could not be received ({err.strerror or err}).",
                                     "Free some space in the library's folder, then add it again.") from None
            job.received += len(data)
            job.touched = time.monotonic()
            if last:
                if job.received != job.size:
                    raise WorkspaceError(f"{job.name}: {job.received} of its {job.size} bytes came.", "Add the recording again.")
                job.state = "waiting"
                self.start_worker()
            return job.view(time.monotonic())

    def listing(self) -> list[dict]:
        """Every job, in the order added (finished ones too, the last KEPT_FINISHED)."""
        with self.lock:
            now = time.monotonic()
            for job in self.jobs:
                if job.state == "uploading" and now - job.touched > UPLOAD_IDLE:
                    job.state, job.line = "failed", f"The upload of {job.name} stopped: add it again."
                    remove_upload(job, self.folder)
            return [job.view(now) for job in self.jobs]

    def cancel(self, job_id: str) -> dict:
        """Cancel a job: one waiting (or uploading) is dropped at once; one running stops at its
        next stage, leaving no interview. A finished job is taken off the list."""
        with self.lock:
            job = self.job(job_id)
            if job.state in ("uploading", "waiting"):
                job.state = "cancelled"
                remove_upload(job, self.folder)
            elif job.state == "running":
                job.stopping = True
            else:
                self.jobs.remove(job)
            return job.view(time.monotonic())

    def close(self) -> None:
        """The server stops: nothing more starts, the running job stops at its next stage, and the
        run's own models are let go of."""
        with self.lock:
            self.closed = True
            self.wake.set()
            for job in self.jobs:
                if job.state in ("uploading", "waiting"):
                    job.state = "cancelled"
                    remove_upload(job, self.folder)
                elif job.state == "running":
                    job.stopping = True
            worker = self.worker
        if worker is not None:
            worker.join(timeout=10)

    def job(self, job_id: str) -> Job:
        found = next((j for j in self.jobs if j.id == job_id), None)
        if found is None:
            raise Gone(f"No recording {job_id!r} in the queue.", "Reload the page: it may have finished or been removed.")
        return found

    def next_id(self) -> str:
        self.numbered += 1
        return str(self.numbered)

    def forget_finished(self) -> None:
        finished = [j for j in self.jobs if j.state not in ACTIVE]
        for job in finished[:-KEPT_FINISHED] if len(finished) > KEPT_FINISHED else []:
            self.jobs.remove(job)

    # --- the worker --------------------------------------------------------------------------
    def start_worker(self) -> None:
        """A worker when a job waits and none runs; the one keeping the models warm woken (called
        with the lock held)."""
        if not any(j.state == "waiting" for j in self.jobs):
            return
        if self.worker is None:
            self.worker = threading.Thread(target=self.work, daemon=True, name="igot-adding")
            self.worker.start()
        self.wake.set()

    def work(self) -> None:
        while True:
            with self.lock:
                job = None if self.closed else next((j for j in self.jobs if j.state == "waiting"), None)
                if job is None:
                    self.wake.clear()
                else:
                    job.state, job.progress = "running", Progress(list(planned_stages(job.options, run_device(job.options))))
            if job is not None:
                self.make(job, self.models)
                continue
            if not self.closed:
                self.wake.wait(self.keep_warm)  # the models kept for the next recording
            with self.lock:
                if not self.closed and any(j.state == "waiting" for j in self.jobs):
                    continue
                # None came: the run's own models' memory back until the next recording comes; the
                # LLM and the embedder stay, which search, Ask and the summary done again use.
                self.models.free(RUN_ONLY)
                self.worker = None
                return

    def make(self, job: Job, models: Models) -> None:
        """Run the job's recording into an interview, and say how it went on the job."""
        source = job.link or (str(job.path) if job.path is not None else "")
        worker = threading.current_thread()

        def began(stage: str) -> None:
            if threading.current_thread() is not worker:  # the speaker detection beside (a GPU) is not the stage shown
                return
            job.progress.began(stage, time.monotonic())
            if job.progress.seconds is None and stage not in ("source", "audio"):
                job.progress.seconds = recording_seconds(source, self.folder)

        def said(line: str) -> None:
            if job.stopping and line.split(":", 1)[0] in STOPS_AT:  # stopped between two lines before the save
                raise Cancelled()
            self.log(f"{job.name}: {line}")

        def step(what: str, done: float, total: float) -> None:
            if threading.current_thread() is not worker:  # the speaker detection beside (a GPU) is not the stage shown
                return
            if job.stopping and job.progress.stage != "saving":
                raise Cancelled()
            job.progress.told(done, total)

        try:
            if job.stopping:
                raise Cancelled()
            if job.path is not None:  # checked again: the file may have changed since it was added
                source = str(self.recording_path(source))
            source = source or str(self.placed(job))
            result = run(source, self.folder, job.options, models=models, log=said, progress=step, stage=began)
        except Cancelled:
            self.finish(job, "cancelled", "", source)
        except IgotError as err:
            self.finish(job, "failed", one_line(str(err), source, job.name), source)
        except OSError as err:  # the library's folder: full, or not writable
            self.finish(job, "failed", f"{job.name} could not be made: {err.strerror or err} ({err.filename or self.folder}). "
                                       "Free some space in the library's folder, or check that it can be written to.", source)
        except Exception as err:  # noqa: BLE001  a bug, not the user's: said, and the queue goes on
            self.finish(job, "failed", f"Unexpected error while making {job.name} ({type(err).__name__}: "
                                       f"{one_line(str(err), source, job.name)}). Nothing was written; please report it.", source)
        else:
            json_file = result.files.get("json")
            if json_file is None:
                self.finish(job, "failed", f"No speech found in {job.name}: nothing was written "
                                           "(an interview of the same name was kept as it was).", source)
            else:
                job.stem = Path(json_file).stem
                self.finish(job, "done", "", source)

    def placed(self, job: Job) -> Path:
        """The uploaded file, moved into the library's recordings under a name no other has. Its
        upload folder stays until the job ends, its claim naming the recording (forget_left_jobs)."""
        assert job.upload is not None and job.claim is not None
        folder = self.folder / RECORDINGS
        folder.mkdir(exist_ok=True)
        stem, suffix = job.upload.stem, job.upload.suffix
        for n in range(1, 10_000):
            path = folder / (f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}")
            if not path.exists() and not work_dir_for(str(path.resolve()), self.folder).exists():
                break
        os.write(job.claim, path.name.encode("utf-8"))  # before it is there: a kill after leaves it named
        shutil.move(str(job.upload), path)
        return path.resolve()

    def finish(self, job: Job, state: str, line: str, source: str) -> None:
        if state != "done" and job.link is None and job.path is None and source:  # before the page hears it ended
            self.take_back(Path(source))
        remove_upload(job, self.folder)
        with self.lock:
            job.state, job.line = state, line
            job.stopping = False
        self.log(f"{job.name}: {state}{': ' + line if line else ''}")

    def take_back(self, recording: Path) -> None:
        """An uploaded recording no interview was made from, and its work folder, removed. One
        an interview names (a failure after the save) stays."""
        take_back(self.lib, recording)


class Gone(WorkspaceError):
    status = 404


def upload_name(given: dict) -> Optional[str]:
    """A file's name from the page, made safe: never a path (only its last part), only letters,
    digits, spaces and - _ ( ) kept, no leading dot; its suffix one of a recording's."""
    name = given.get("name")
    if not isinstance(name, str):
        return None
    base = unicodedata.normalize("NFC", re.split(r"[\\/]", name)[-1])
    stem, dot, suffix = base.rpartition(".")
    if not dot:
        stem, suffix = base, ""
    suffix = "." + suffix.lower() if suffix else ""
    if suffix not in RECORDING_SUFFIXES:
        raise WorkspaceError(f"{base[:100]!r} is not a recording iGot reads.",
                             f"Choose audio or video files ({', '.join(sorted(RECORDING_SUFFIXES))}).")
    stem = re.sub(r"[^\w\-() ]+", "_", stem).strip(" ._-")[:100] or "recording"
    return stem + suffix


def recording_seconds(source: str, folder: Path) -> Optional[float]:
    """The recording's length, from the audio the run converted (None while it is not there)."""
    from igot.media import audio

    wav = work_dir_for(source, folder) / "audio.wav"
    try:
        return audio.wav_duration(wav) if wav.is_file() else None
    except (OSError, ValueError, EOFError):
        return None


def one_line(text: str, source: str, name: str) -> str:
    """The error's first line, naming the recording as the user knows it rather than by the
    server's path."""
    line = text.splitlines()[0] if text else name
    return line.replace(source, name) if source else line


def remove_upload(job: Job, folder: Path) -> None:
    """The job's upload folder removed (a real folder of the library's only), then its claim let go."""
    if job.upload is not None:
        remove_tree(job.upload.parent, folder)
        job.upload = None
    if job.claim is not None:
        changes.let_go(job.claim)
        job.claim = None


def take_back(lib: Library, recording: Path) -> None:
    """An uploaded recording in `lib`'s recordings that no interview was made from, and its work
    folder, removed. One an interview names (a failure after the save) stays; so does anything
    reached through a link."""
    folder = lib.folder
    if not recording.is_relative_to(folder / RECORDINGS) or first_link(recording, folder) is not None:
        return
    if any(iv.transcript.source.path == str(recording) for iv in lib.listing()[0]):
        return
    remove_tree(work_dir_for(str(recording), folder), folder)
    recording.unlink(missing_ok=True)


def forget_left_jobs(lib: Library, older_than: float = LEFT_UPLOAD, keep: frozenset[str] = frozenset()) -> None:
    """What the jobs of a stopped server left, taken back as the job itself would have (at `igot
    serve`'s start): each upload folder whose claim no process holds any more (killed, even by kill
    -9), with the recording it names and that recording's work folder (unless an interview was made
    from it). An upload folder with no claim (an earlier iGot's) goes `older_than` seconds on. Only
    real folders of the library: `.igot` or `.igot/uploads` as a link is never emptied. `keep`: the
    recordings (real paths) a team's waiting jobs still need, left where they are."""
    folder = lib.folder
    uploads = folder / UPLOADS
    try:
        if first_link(uploads, folder) is not None or not stat.S_ISDIR(os.lstat(uploads).st_mode):
            return
        with os.scandir(uploads) as entries:
            left = [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:  # none yet
        return
    now = time.time()
    for upload in left:
        try:
            handle = changes.unclaimed(upload / CLAIM)
        except FileNotFoundError:
            try:
                if now - upload.stat(follow_symlinks=False).st_mtime > older_than:
                    remove_tree(upload, folder)
            except OSError:
                pass
            continue
        except OSError:  # a link in the claim's place, or unreadable: left as it is
            continue
        if handle is None:  # its job runs, in another igot serve
            continue
        try:
            name = os.read(handle, 4 * MAX_NAME).decode("utf-8", "replace")
            if name and name == Path(name).name and name not in (".", "..") \
                    and str(folder / RECORDINGS / name) not in keep:  # a plain name in recordings/
                take_back(lib, folder / RECORDINGS / name)
            remove_tree(upload, folder)
        except (OSError, IgotError):  # the listing take_back reads: the recording stays
            pass
        finally:
            changes.let_go(handle)
