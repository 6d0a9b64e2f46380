"""Who said what on real conversations: the AMI meeting excerpts and interviews simulated from
real voices (igot_dev/conversations.py). Bounds come from benchmarks/speakers_accuracy.py."""

from __future__ import annotations

import numpy as np
import pytest

from igot.speakers.diarize import diarize
from igot_dev.conversations import (
    DIARIZER_ERRORS,
    coarse_turns,
    find_voices,
    long_interview,
    pairs,
    pooled,
    simulate,
    words_to_speakers,
)
from igot_dev.evaluate import right_speaker_share


@pytest.fixture(scope="session")
def english_voices(tiny_en, tmp_path_factory):
    return find_voices(tiny_en, "en", tmp_path_factory.mktemp("voices"))


@pytest.fixture(scope="session")
def portuguese_voices(whisper_base, tmp_path_factory):
    return find_voices(whisper_base, "pt", tmp_path_factory.mktemp("vozes"))


@pytest.fixture(scope="session")
def phone_interview(english_voices, tmp_path_factory):
    pair = pairs(english_voices, 1, seed=7)[0]
    c = simulate(pair, seed=7, seconds=40, phone=True, noise_snr=30, reuse=False)
    return c, c.save(tmp_path_factory.mktemp("phone") / "interview.wav")


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
    """Two real voices (JFK and a Picovoice speaker, 16.5 s, nothing said twice) through a
    phone line with room noise, overlaps and back-channels, the count left to detection:
    exactly two speakers, and at least 80 % of the words on the right one. The words lost are
    those said while the other person talks (overlap, back-channels), which windows of 1.5 s
    give to one person only. (0.833 on an AMD EPYC without AVX-512, 2026-11-26, where the same
    code at 5426672 gives the same; the 0.85 of earlier machines does not hold across CPUs.)"""
    c, wav = phone_interview
    turns = diarize(wav, diarizer)
    assert len({t.speaker for t in turns}) == 2
    found = words_to_speakers(c.words, turns)
    share = right_speaker_share([w.speaker for w in found], [w.speaker for w in c.words])
    assert share >= 0.80, share


@pytest.mark.parametrize("count", [1, 3])
def test_known_speaker_count_is_respected(phone_interview, diarizer, count):
    """Whatever the voices suggest, the number of speakers the user gives is the number found."""
    _, wav = phone_interview
    assert len({t.speaker for t in diarize(wav, diarizer, num_speakers=count)}) == count


def test_no_recording_is_said_twice_when_asked(english_voices):
    """`reuse=False`: every word of the interview is a different stretch of its person's
    recordings, and the interview ends when one person has nothing left to say."""
    pair = pairs(english_voices, 1, seed=3)[0]
    c = simulate(pair, seed=3, seconds=600, reuse=False)
    said = [(w.speaker, w.text, round(w.end - w.start, 3)) for w in c.words]
    available = sum(len(u.words) for v in pair for u in v.utterances)
    assert len(c.words) <= available and len(c.audio) / 16000 < 120
    reused = simulate(pair, seed=3, seconds=120)
    assert len(set(said)) >= 0.95 * len(said)  # a person may say a short word twice in their own recordings
    assert len({(w.speaker, w.text, round(w.end - w.start, 3)) for w in reused.words}) < 0.8 * len(reused.words)


def test_a_long_interview_is_an_interview(english_voices):
    """A long simulated interview: the interviewer asks, the others answer at greater length,
    each word where its speaker's sound is, every word in its speaker's reference turn."""
    people = english_voices[:3]
    c = long_interview(people, seed=5, minutes=4, phone=True, noise_snr=30)
    assert 235 < len(c.audio) / 16000 < 300
    assert [w.start for w in c.words] == sorted(w.start for w in c.words)
    said = {v.name: sum(w.end - w.start for w in c.words if w.speaker == v.name) for v in people}
    assert set(said) == {w.speaker for w in c.words} and min(said.values()) > 5
    assert said[people[0].name] < max(said[v.name] for v in people[1:])  # the interviewer says least
    assert all(any(t.speaker == w.speaker and t.start <= w.start and w.end <= t.end for t in c.turns) for w in c.words)
    level = lambda a, b: float(np.sqrt(np.mean(c.audio[int(a * 16000):int(b * 16000)] ** 2)))
    spoken = [level(w.start, w.end) for w in c.words if w.end - w.start > 0.2]
    turns = sorted(c.turns, key=lambda t: t.start)
    gaps = [(x.end + 0.05, y.start - 0.05) for x, y in zip(turns, turns[1:]) if y.start - x.end > 0.6
            and all(not (t.start < y.start and t.end > x.end) for t in turns)]
    assert gaps and np.median([level(a, b) for a, b in gaps]) < 0.3 * np.median(spoken)
    again = long_interview(people, seed=5, minutes=4, phone=True, noise_snr=30)
    assert np.array_equal(again.audio, c.audio) and again.words == c.words


@pytest.fixture(scope="module")
def simulated(english_voices, portuguese_voices):
    """Four two-person interviews per language, 40 s each, different pairs of people."""
    return {language: [(seed, simulate(pairs(voices, 1, seed=seed)[0], seed=seed, seconds=40)) for seed in (20, 21, 22, 23)]
            for language, voices in (("en", english_voices), ("pt", portuguese_voices))}


@pytest.mark.parametrize("language", ["en", "pt"])
def test_words_to_speakers_under_real_turn_taking(simulated, language):
    """Given the true turns (which overlap, with back-channels inside the other's turn), words
    go to who said them. Measured over seeds 10-29 (these four among them): 99.8 % (en) and
    99.5 % (pt) of the words pooled, 100 % and 98.8 % on these four, where the previous rule
    (most overlap, back-channels absorbed) got 91.3 % and 93.3 % (92.4 % and 91.1 % here).
    Each back-channel said inside the other person's sentence is its own phrase on its own
    speaker and the sentence around it stays one phrase: 71/73 and 92/92 (before: none). A
    change of speaker with no full stop before it (3+ words of the new person) starts a
    phrase of that person: 241/241 and 193/197 (before: 127 and 110)."""
    counts = pooled(simulated[language], lambda c, seed: c.turns)
    assert counts["right"] / counts["words"] >= 0.97, counts
    assert counts["backchannels"] >= 4 and counts["kept"] >= 0.9 * counts["backchannels"], counts
    assert counts["changes"] >= 4 and counts["changed"] >= 0.85 * counts["changes"], counts


@pytest.mark.parametrize("language", ["en", "pt"])
def test_words_to_speakers_with_a_diarizers_errors(simulated, language):
    """The same interviews with turns as a diarizer gives them (igot_dev/conversations.py
    coarse_turns). Boundaries off by up to 50 ms, a fifth of the back-channels missed:
    measured over seeds 10-29 96.8 % (en) and 96.9 % (pt) of the words right (previous rule
    90.9 % and 92.5 %); 97.2 % and 95.9 % on these four. Boundaries off by 0.1-0.3 s and half
    the back-channels missed: 88.3 % and 91.1 % (previous rule 88.8 % and 91.7 %: there the
    turns set the limit, not the rule); 89.7 % and 89.7 % on these four."""
    fine = pooled(simulated[language], lambda c, seed: coarse_turns(c.turns, seed, **DIARIZER_ERRORS["fine"]))
    assert fine["right"] / fine["words"] >= 0.93, fine
    coarse = pooled(simulated[language], lambda c, seed: coarse_turns(c.turns, seed, **DIARIZER_ERRORS["coarse"]))
    assert coarse["right"] / coarse["words"] >= 0.85, coarse
