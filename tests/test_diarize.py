"""Who spoke when, on real multi-speaker recordings and a synthesised two-voice interview."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from igot.asr.transcribe import transcribe
from igot.speakers.diarize import diarize, windows_to_turns
from igot.speakers.phrases import assign_speakers
from igot.transcript import SpeakerTurn, Word
from igot_dev.evaluate import attribution_accuracy, read_rttm
from igot_dev.synth import speaker_turns

RECORDINGS = [
    ("pyaudioanalysis/diarizationExample", 4),  # radio phone-in, 42 s
    ("pyaudioanalysis/diarizationExample2", 6),  # six spliced voices, 22 s
    ("picovoice_falcon/test", 3),  # three speakers in turn, 18.6 s
]


def frame_accuracy(turns, truth, step=0.1) -> float:
    """Share of the true speech time given to the right speaker (one-to-one mapping)."""
    frames = []
    t = 0.0
    end = max(x.end for x in truth)
    while t < end:
        frames.append(Word("", t, t + step, speaker=next((x.speaker for x in turns if x.start <= t + step / 2 < x.end), None)))
        t += step
    return attribution_accuracy(frames, truth)


@pytest.mark.parametrize("name,count", RECORDINGS)
def test_known_speaker_count(devdata, wav16k, diarizer, name, count):
    """Told how many people speak, the diarizer finds exactly that many, in the right places."""
    turns = diarize(wav16k(devdata / f"{name}.flac"), diarizer, num_speakers=count)
    assert len({t.speaker for t in turns}) == count
    truth = read_rttm(devdata / f"{name}.DERIVED.rttm")
    assert frame_accuracy(turns, truth) > 0.75
    assert all(a.start <= b.start and t.start < t.end for a, b in zip(turns, turns[1:]) for t in (a,))


SENKO_TURNS = json.loads((Path(__file__).parent / "data" / "senko" / "turns.json").read_text(encoding="utf-8"))["turns"]


@pytest.mark.parametrize("name", sorted(SENKO_TURNS))
def test_turns_are_senkos_own(devdata, wav16k, diarizer, name):
    """With the count left to detection, iGot's turns are what senko's own `diarize()` gives with
    its own defaults (stored by tests/data/senko/make_turns.py on a CPU where senko's C++ feature
    library runs): the same turns, the same people, though iGot computes the features itself and
    reads the recording in pieces."""
    turns = diarize(wav16k(devdata / name), diarizer)
    expected = SENKO_TURNS[name]
    assert [(t.start, t.end) for t in turns] == [(a, b) for _, a, b in expected]
    same = {}
    assert all(same.setdefault(t.speaker, who) == who for t, (who, _, _) in zip(turns, expected))
    assert len(set(same.values())) == len(same)


def test_two_voice_interview_words_to_right_speaker(conversation, tiny_en, diarizer):
    """An interviewer and a user (two espeak-ng voices, exact word times): at least 95 % of the
    transcribed words are attributed to the person who said them."""
    wav, spoken = conversation
    truth_turns = [SpeakerTurn(t.speaker, t.start, t.end) for t in speaker_turns(spoken)]
    t = transcribe(wav, tiny_en, language="en", progress=False)
    t = assign_speakers(t, diarize(wav, diarizer))
    assert len(t.speakers) == 2
    assert attribution_accuracy(t.words, truth_turns) >= 0.95
    assert len(t.words) >= 0.9 * len(spoken)


def test_windows_to_turns_splits_overlaps_in_the_middle():
    turns = windows_to_turns([(0.0, 1.5), (0.75, 2.25), (1.5, 3.0), (2.25, 3.75)], [0, 0, 1, 1])
    assert [(t.speaker, t.start, t.end) for t in turns] == [("1", 0.0, 1.875), ("2", 1.875, 3.75)]


def test_silence_has_no_turns(tmp_path, diarizer):
    import wave

    wav = tmp_path / "silence.wav"
    with wave.open(str(wav), "wb") as f:
        f.setnchannels(1), f.setsampwidth(2), f.setframerate(16000)
        f.writeframes(np.zeros(16000 * 3, dtype=np.int16).tobytes())
    assert diarize(wav, diarizer) == []


def test_many_windows_are_clustered_through_small_groups(conversation, diarizer):
    """Past `most` windows the known-count clustering goes through k-means groups (bounded
    memory on long recordings) and still separates the two voices."""
    from igot.media.audio import wav_duration
    from igot.speakers.diarize import cluster_speakers, voice_windows

    wav, spoken = conversation
    windows, vectors = voice_windows(diarizer, wav, 0.0, wav_duration(wav))
    assert len(windows) > 40
    labels = cluster_speakers(vectors, 2, most=40)  # 10 groups of windows, then 2 voices
    truth = [SpeakerTurn(t.speaker, t.start, t.end) for t in speaker_turns(spoken)]
    assert frame_accuracy(windows_to_turns(windows, labels), truth) > 0.9
