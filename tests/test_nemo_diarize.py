"""Sortformer diarization (NeMo) end to end, with a tiny random model: the output is noise, the
plumbing is real. The model is saved as a .nemo and restored by load_sortformer, the code that
restores the downloaded model. Skipped where NeMo is not installed."""

from __future__ import annotations

import sys
import wave

import pytest

from igot.errors import IgotError
from igot.speakers.sortformer import (
    MAX_SPEAKERS,
    STREAMING,
    TooManySpeakers,
    at_capacity,
    diarize_nemo,
    handles,
    keep_speakers,
    load_sortformer,
    parse_turns,
)
from igot.transcript import SpeakerTurn
from igot_dev.tiny_models import save_tiny_sortformer


@pytest.fixture(scope="module")
def tiny_nemo(tmp_path_factory):
    return save_tiny_sortformer(tmp_path_factory.mktemp("sortformer") / "tiny-sortformer.nemo")


@pytest.fixture(scope="module")
def sortformer(tiny_nemo):
    return load_sortformer(model=str(tiny_nemo), device="cpu")


@pytest.fixture(scope="module")
def long_wav(devdata, wav16k, tmp_path_factory):
    """The 18.6 s dev recording four times over (74 s): several 27 s streaming chunks, so the
    speaker cache and FIFO are updated between them."""
    with wave.open(str(wav16k(devdata / "picovoice_falcon/test.flac")), "rb") as w:
        params, frames = w.getparams(), w.readframes(w.getnframes())
    path = tmp_path_factory.mktemp("sortformer-audio") / "long.wav"
    with wave.open(str(path), "wb") as w:
        w.setparams(params)
        w.writeframes(frames * 4)
    return path


def wav_seconds(path) -> float:
    with wave.open(str(path), "rb") as w:
        return w.getnframes() / w.getframerate()


def well_formed(turns, seconds) -> bool:
    return (all(0 <= t.start < t.end <= seconds for t in turns)
            and {t.speaker for t in turns} <= {str(k) for k in range(1, MAX_SPEAKERS + 1)}
            and turns == sorted(turns, key=lambda t: (t.start, t.end)))


def test_restored_model_is_streaming(sortformer):
    assert sortformer.streaming_mode and not sortformer.training
    assert all(getattr(sortformer.sortformer_modules, k) == v for k, v in STREAMING.items())


def test_diarizes_a_recording_end_to_end(sortformer, devdata, wav16k):
    wav = wav16k(devdata / "picovoice_falcon/test.flac")
    turns = diarize_nemo(wav, sortformer)
    assert turns and well_formed(turns, wav_seconds(wav))


def test_several_streaming_chunks_and_a_known_count(sortformer, long_wav):
    turns = diarize_nemo(long_wav, sortformer, num_speakers=2)
    assert turns and well_formed(turns, wav_seconds(long_wav))
    assert len({t.speaker for t in turns}) <= 2


def test_more_than_four_speakers_falls_back(sortformer, devdata):
    assert handles(None) and handles(4) and not handles(6)
    with pytest.raises(TooManySpeakers) as caught:
        diarize_nemo(devdata / "picovoice_falcon/test.flac", sortformer, num_speakers=6)
    assert caught.value.num_speakers == 6 and isinstance(caught.value, IgotError)
    with pytest.raises(IgotError):
        diarize_nemo(devdata / "picovoice_falcon/test.flac", sortformer, num_speakers=0)


def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(IgotError, match="could not be loaded"):
        load_sortformer(model=str(tmp_path / "missing.nemo"), device="cpu")


def test_without_nemo_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "nemo.collections.asr.models", None)  # makes the import fail
    with pytest.raises(IgotError, match=r"pip install 'igot-interviews\[nemo\]'"):
        load_sortformer(device="cpu")


def test_parse_turns_clips_sorts_and_numbers_from_one():
    lines = ["3.040 9.120 speaker_1", "0.000 4.000 speaker_0", "9.000 12.080 speaker_0", "11.9 11.95 speaker_3"]
    assert parse_turns(lines, duration=12.0) == [
        SpeakerTurn("1", 0.0, 4.0), SpeakerTurn("2", 3.04, 9.12), SpeakerTurn("1", 9.0, 12.0), SpeakerTurn("4", 11.9, 11.95)]


def test_keep_speakers_and_capacity():
    turns = [SpeakerTurn("1", 0, 5), SpeakerTurn("2", 5, 6), SpeakerTurn("3", 6, 9), SpeakerTurn("4", 9, 9.5)]
    assert [t.speaker for t in keep_speakers(turns, 2)] == ["1", "3"]
    assert at_capacity(turns) and not at_capacity(turns[:3])
    assert keep_speakers(turns, 4) == turns
