"""What every stage of one run reads (RunContext), and what a run gives back (RunResult)."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Optional

from igot.pipeline.models import Models
from igot.pipeline.options import RunOptions
from igot.pipeline.plan import Plan
from igot.runtime import hub, pace
from igot.runtime.progress import Hook, Progress
from igot.transcript import Transcript


@dataclass
class RunResult:
    transcript: Transcript
    files: dict[str, Path]
    seconds: float  # processing time
    audio: Optional[Path] = None  # the 16 kHz WAV the stages read, for listening to speakers
    doc: Optional[str] = None  # the Google Doc's link, when the interview is in Drive
    # Why the interview's Google Doc was not made or updated now (store.Saved.drive_problem): the files are
    # written, and the Doc is sent from the library's Drive outbox at the next save or start.
    drive_problem: Optional[str] = None

    @property
    def real_time_factor(self) -> float:
        return self.seconds / self.transcript.duration if self.transcript.duration else 0.0


@dataclass(frozen=True)
class RunContext:
    """What every stage of one run reads: its options and plan, its models, whether the hub
    answers, where it says what it does, its work folder, and the seconds each stage took."""

    options: RunOptions
    plan: Plan
    models: Models
    hub: hub.Hub  # asked the first time a model may come from the hub
    log: Callable[[str], None]
    work: Path  # the interview's work folder: each finished stage is kept there
    timings: dict[str, float] = field(default_factory=dict)
    recording: dict[str, float] = field(default_factory=dict)  # its "seconds", once the audio is read
    hook: Optional[Hook] = None  # told each stage's progress instead of a terminal bar (the workspace's queue)
    stage: Optional[Callable[[str], None]] = None  # told each stage's name as it begins (igot.runtime.pace's names, "audio", "saving")

    def begins(self, name: str) -> None:
        """Stage `name` begins: told to whoever follows the run by its stages (a queue's job, a
        worker's server), as the pace table, the log and the bars name it; never read back from lines."""
        if self.stage is not None:
            self.stage(name)

    @property
    def progress(self) -> Progress:
        """What each stage reports its progress to: the run's hook, else a bar when options.progress."""
        return self.hook if self.hook is not None else self.options.progress

    @contextlib.contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """The seconds the block takes, kept as the stage's timing when it finishes. On a CPU,
        where a long recording takes tens of minutes, the time left for the whole run follows."""
        self.begins(stage)
        started = time.perf_counter()
        yield
        self.timings[stage] = time.perf_counter() - started
        seconds = self.recording.get("seconds")
        if self.plan.device == "cpu" and seconds:  # the first estimate once the audio is read, at the table's pace
            line = pace.estimate_line(self.timings, [s for s in self.plan.stages if s not in self.timings], seconds)
            if line:
                self.log(line)
