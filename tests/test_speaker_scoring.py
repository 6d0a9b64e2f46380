"""The speaker scorer (DER, JER, right-speaker words) against cases worked out by hand."""

from __future__ import annotations

import pytest

from igot.transcript import SpeakerTurn as T
from igot_dev.evaluate import diarization_errors, right_speaker_share, speaker_jers


def test_perfect_answer_scores_zero_whatever_the_names():
    truth = [T("A", 0, 10), T("B", 10, 20)]
    assert diarization_errors(truth, [T("2", 0, 10), T("1", 10, 20)]).der == 0.0
    assert speaker_jers(truth, [T("2", 0, 10), T("1", 10, 20)]) == [0.0, 0.0]


def test_late_change_of_speaker_is_confusion_and_the_collar_forgives_its_first_quarter_second():
    truth = [T("A", 0, 10), T("B", 10, 20)]
    found = [T("x", 0, 12), T("y", 12, 20)]
    # 2 s of B given to A's voice, out of 20 s of speech.
    errors = diarization_errors(truth, found)
    assert errors.confusion == pytest.approx(2.0) and errors.missed == errors.false_alarm == 0
    assert errors.der == pytest.approx(0.1)
    # Collar 0.25 s around 0, 10 and 20: 1 s of speech not scored, 0.25 s of the error with it.
    assert diarization_errors(truth, found, collar=0.25).der == pytest.approx(1.75 / 19.0)


def test_overlap_missed_false_alarm_and_uem():
    truth = [T("A", 0, 4), T("B", 2, 6)]  # two people at once from 2 to 4 s: 8 s of speech
    found = [T("x", 0, 6), T("y", 7, 8)]
    errors = diarization_errors(truth, found)
    # x maps to A (or B): 4 s right; 2 s of the overlap missed; 2 s of the other given to x;
    # 1 s said by nobody.
    assert (errors.missed, errors.confusion, errors.false_alarm) == pytest.approx((2.0, 2.0, 1.0))
    assert errors.der == pytest.approx(5 / 8)
    # Only 0-6 s scored: the false alarm is outside.
    assert diarization_errors(truth, found, uem=[(0, 6)]).der == pytest.approx(4 / 8)
    pooled = errors + diarization_errors(truth, truth)
    assert pooled.der == pytest.approx(5 / 16)


def test_jaccard_error_per_true_speaker():
    truth = [T("A", 0, 10), T("B", 10, 20)]
    # x covers half of A; nobody is found for B.
    assert speaker_jers(truth, [T("x", 0, 5)]) == pytest.approx([0.5, 1.0])
    # One voice for both: it maps to one of them (JER 0.5), the other is left unmapped.
    assert sorted(speaker_jers(truth, [T("x", 0, 20)])) == pytest.approx([0.5, 1.0])


def test_splitting_or_merging_people_costs_words():
    assert right_speaker_share(["1", "1", "2", "2"], ["A", "A", "B", "B"]) == 1.0
    assert right_speaker_share(["1", "1", "2", "2"], ["A", "A", "A", "A"]) == 0.5  # one person split in two
    assert right_speaker_share(["1", "1", "1", "1"], ["A", "A", "A", "B"]) == 0.75  # two merged


def test_a_back_channel_inside_an_answer_is_told_from_the_words_one_voice_says():
    from igot.transcript import Word as W
    from igot_dev.evaluate import overlapped_words, right_speaker_words

    # "in led the water": "led" is the interviewer's "yeah" said over the answer's "in" and "the"
    said = [W("meditating", 15.89, 16.44), W("in", 16.44, 16.74), W("led", 16.58, 16.78), W("the", 16.74, 16.82),
            W("water", 16.82, 17.06), W("yes", 17.2, 17.4)]
    assert overlapped_words(said) == [False, True, True, True, False, False]
    assert overlapped_words(said, by=0.1) == [False, True, True, False, False, False]  # "the" shares 0.04 s
    # the best mapping (1 -> A) is the same for every word: the back-channel is the one wrong
    assert right_speaker_words(["1", "1", "1", "1", "1", "2"], ["A", "A", "B", "A", "A", "B"]) == \
        [True, True, False, True, True, True]


def test_transcript_words_are_scored_against_the_words_said_at_that_moment():
    from igot.transcript import Word as W
    from igot_dev.evaluate import align_words

    said = [W("Hello", 0.0, 0.4), W("there.", 0.4, 0.8), W("Yeah", 0.6, 0.9), W("so", 1.0, 1.2), W("the", 1.2, 1.3), W("plan", 1.3, 1.7)]
    # The transcript drops the "yeah" said over "there", mishears "plan" as "plant" and, 4 s
    # later, has a "plan" of its own: a word is only paired with one said at about that moment.
    heard = [W("hello", 0.0, 0.4), W("there", 0.4, 0.8), W("so", 1.0, 1.2), W("the", 1.2, 1.3), W("plant", 1.3, 1.7), W("plan", 5.0, 5.3)]
    assert align_words(said, heard) == [(0, 0), (1, 1), (3, 2), (4, 3), (5, 4)]
    assert align_words(said, heard[5:]) == []


def test_a_transcript_word_gets_the_speaker_of_the_word_said_there():
    from igot.transcript import Word as W
    from igot_dev.evaluate import heard_speakers

    # The answer's "there" and the interviewer's "yeah" over it; the transcript holds the answer's
    # words only, and a word of its own where no one spoke.
    said = [W("Hello", 0.0, 0.4), W("there.", 0.4, 0.8), W("Yeah", 0.6, 0.9), W("so", 1.0, 1.2), W("the", 1.2, 1.3)]
    speakers = ["A", "A", "B", "A", "A"]
    heard = [W("hello", 0.0, 0.4), W("there", 0.4, 0.8), W("so", 1.0, 1.2), W("the", 1.2, 1.3), W("you", 8.0, 8.2)]
    assert heard_speakers(said, speakers, heard) == ["A", "A", "A", "A", None]
    # heard as "yeah" instead: that word is the interviewer's
    assert heard_speakers(said, speakers, [W("hello", 0.0, 0.4), W("yeah", 0.6, 0.9), W("so", 1.0, 1.2)]) == ["A", "B", "A"]
