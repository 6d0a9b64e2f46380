"""Words to speakers, phrases, speaker numbering and names, on constructed transcripts."""

from __future__ import annotations

import pytest

from igot.errors import IgotError
from igot.speakers.phrases import add_links, assign_speakers, name_speakers, parse_names
from igot.transcript import Phrase, Source, SpeakerTurn, Transcript, Word


def whisper_output(*segments):
    """Phrases as Whisper gives them: text segments that ignore who is speaking."""
    phrases = []
    for seg in segments:
        words = [Word(text, start, end) for text, start, end in seg]
        phrases.append(Phrase("", words[0].start, words[-1].end, " ".join(w.text for w in words), words=words))
    return Transcript(Source("Onboarding", "https://www.youtube.com/watch?v=abc123DEF45", kind="youtube"), "en", 20.0, phrases=phrases)


def test_segment_spoken_by_two_people_is_split():
    t = whisper_output([("How", 0.0, 0.3), ("was", 0.3, 0.5), ("it?", 0.5, 0.8), ("Great,", 1.2, 1.6), ("thanks.", 1.6, 2.0)])
    turns = [SpeakerTurn("7", 0.0, 0.9), SpeakerTurn("3", 1.0, 2.1)]
    out = assign_speakers(t, turns)
    assert [(p.speaker, p.text) for p in out.phrases] == [("S1", "How was it?"), ("S2", "Great, thanks.")]
    assert [(s.id, s.name) for s in out.speakers] == [("S1", "Speaker 1"), ("S2", "Speaker 2")]
    assert out.phrases[1].start == 1.2 and out.phrases[1].end == 2.0
    assert all(w.speaker == p.speaker for p in out.phrases for w in p.words)


def test_speakers_numbered_by_first_appearance_and_words_kept():
    t = whisper_output([("Hi.", 0, 1)], [("Hello.", 2, 3)], [("Ready?", 4, 5)], [("Yes.", 6, 7)])
    turns = [SpeakerTurn("9", 0, 1.5), SpeakerTurn("2", 1.5, 3.5), SpeakerTurn("9", 3.5, 5.5), SpeakerTurn("5", 5.5, 8)]
    out = assign_speakers(t, turns)
    assert [p.speaker for p in out.phrases] == ["S1", "S2", "S1", "S3"]
    assert [w.text for w in out.words] == ["Hi.", "Hello.", "Ready?", "Yes."]


def test_word_in_a_gap_goes_to_nearest_speaker():
    t = whisper_output([("Hi.", 0.0, 0.4)], [("Yes.", 5.0, 5.3)])
    out = assign_speakers(t, [SpeakerTurn("1", 0.0, 0.5), SpeakerTurn("2", 5.6, 7.0)])
    assert [p.speaker for p in out.phrases] == ["S1", "S2"]


def test_word_across_a_turn_change_goes_to_the_larger_overlap():
    t = whisper_output([("So.", 0.2, 0.5), ("Interesting.", 1.0, 2.0)])
    out = assign_speakers(t, [SpeakerTurn("1", 0.0, 1.3), SpeakerTurn("2", 1.3, 3.0)])
    assert [(p.speaker, p.text) for p in out.phrases] == [("S1", "So."), ("S2", "Interesting.")]


def words_at(text: str, start: float, step: float = 0.4):
    return [(w, round(start + i * step, 2), round(start + i * step + 0.3, 2)) for i, w in enumerate(text.split())]


def test_backchannel_inside_a_sentence_keeps_its_speaker_after_the_sentence():
    """B says "yeah" while A is mid-sentence; Whisper puts it inside A's sentence. A's sentence
    stays whole and B's "yeah" follows it as B's own phrase, though it started earlier."""
    t = whisper_output(words_at("The onboarding took me yeah about ten minutes to finish.", 0.0), words_at("Okay.", 5.0))
    # words 0-3 and 5-9 are A's; "yeah" (1.6-1.9 s) is B's, inside A's long turn as a diarizer
    # that finds overlap gives it
    turns = [SpeakerTurn("A", 0.0, 4.2), SpeakerTurn("B", 1.58, 1.92), SpeakerTurn("B", 4.9, 5.5)]
    out = assign_speakers(t, turns)
    assert [(p.speaker, p.text) for p in out.phrases] == [("S1", "The onboarding took me about ten minutes to finish."),
                                                         ("S2", "yeah"), ("S2", "Okay.")]
    assert out.phrases[1].start < out.phrases[0].end
    assert sorted(w.text for w in out.words) == sorted(w.text for w in t.words)
    again = assign_speakers(out, turns)  # from a saved transcript: the same phrases
    assert [(p.speaker, p.text) for p in again.phrases] == [(p.speaker, p.text) for p in out.phrases]


def test_backchannel_with_a_full_stop_does_not_end_the_sentence_around_it():
    """Whisper writes B's interjection "Yeah." with a full stop, inside A's sentence."""
    t = whisper_output(words_at("The onboarding took me Yeah. about ten minutes to finish.", 0.0))
    turns = [SpeakerTurn("A", 0.0, 4.2), SpeakerTurn("B", 1.6, 1.9)]
    out = assign_speakers(t, turns)
    assert [(p.speaker, p.text) for p in out.phrases] == [("S1", "The onboarding took me about ten minutes to finish."),
                                                         ("S2", "Yeah.")]


def test_short_answer_between_two_questions_stays_in_its_place():
    """A short answer is not a back-channel: its sentence is not A's."""
    t = whisper_output(words_at("Did you like it?", 0.0), [("Yes.", 1.7, 2.0)], words_at("Great, tell me more.", 2.3))
    turns = [SpeakerTurn("A", 0.0, 1.5), SpeakerTurn("B", 1.68, 2.02), SpeakerTurn("A", 2.3, 3.9)]
    out = assign_speakers(t, turns)
    assert [(p.speaker, p.text) for p in out.phrases] == [("S1", "Did you like it?"), ("S2", "Yes."),
                                                         ("S1", "Great, tell me more.")]


def test_backchannel_goes_after_its_part_when_the_sentence_changes_speaker():
    """A's part of an unpunctuated sentence is interrupted by B's "right", then B takes over."""
    t = whisper_output(words_at("so what did right you think of it I found the sign up page confusing", 0.0))
    turns = [SpeakerTurn("A", 0.0, 3.1), SpeakerTurn("B", 1.18, 1.52), SpeakerTurn("B", 3.15, 9.0)]
    out = assign_speakers(t, turns)
    assert [(p.speaker, p.text) for p in out.phrases] == [("S1", "so what did you think of it"), ("S2", "right"),
                                                         ("S2", "I found the sign up page confusing")]


def test_short_run_at_a_sentence_edge_stays_when_not_a_slip():
    """B's "yeah" between two sentences of A (Whisper put it before the second): the turns say
    B, and nothing says the diarizer slipped (A speaks on both sides), so it stays B's."""
    t = whisper_output(words_at("It took ten minutes to finish. yeah", 0.0), words_at("Then I paid.", 3.0))
    turns = [SpeakerTurn("A", 0.0, 2.25), SpeakerTurn("B", 2.35, 2.75), SpeakerTurn("A", 2.9, 5.0)]
    out = assign_speakers(t, turns)
    assert [(p.speaker, p.text) for p in out.phrases] == [("S1", "It took ten minutes to finish."), ("S2", "yeah"),
                                                         ("S1", "Then I paid.")]


def test_word_inside_a_short_turn_nested_in_a_long_one_is_the_short_turns():
    """Overlapping turns cover a word alike: the one whose edges lie at the word wins."""
    t = whisper_output(words_at("I paid with a card and mm it was quick", 0.0))
    turns = [SpeakerTurn("A", 0.0, 4.5), SpeakerTurn("B", 2.38, 2.72)]  # "mm" is 2.4-2.7 s
    out = assign_speakers(t, turns)
    assert [(p.speaker, p.text) for p in out.phrases] == [("S1", "I paid with a card and it was quick"), ("S2", "mm")]


def test_words_where_two_turns_overlap_go_to_the_turn_they_touch():
    """B starts answering before A has finished: both turns cover "Yes," and "card." whole;
    A's last word ends A's turn, B's first word starts B's, and each goes to its own."""
    t = whisper_output([("and", 0.0, 0.3), ("then", 0.4, 0.7), ("I", 0.8, 1.1), ("paid", 1.2, 1.5), ("with", 1.6, 1.9),
                        ("my", 2.0, 2.3), ("Yes,", 2.2, 2.4), ("card.", 2.45, 2.75), ("it", 2.8, 3.0), ("worked.", 3.1, 3.5)])
    out = assign_speakers(t, [SpeakerTurn("A", 0.0, 2.75), SpeakerTurn("B", 2.2, 3.6)])
    assert [(p.speaker, p.text) for p in out.phrases] == [("S1", "and then I paid with my card."), ("S2", "Yes,"),
                                                         ("S2", "it worked.")]


def test_turn_edge_right_at_a_word_outweighs_the_full_stop():
    """B's turn starts right where "here." does: B said it, and it stays B's, though the full stop
    makes it the end of C's sentence (the turns decide who said a word, never the punctuation)."""
    t = whisper_output(words_at("It is milder out there than it is over here.", 0.0), words_at("We are freezing now.", 5.0))
    out = assign_speakers(t, [SpeakerTurn("C", 0.0, 3.55), SpeakerTurn("B", 3.59, 7.0)])
    assert [(p.speaker, p.text) for p in out.phrases] == [("S1", "It is milder out there than it is over"),
                                                         ("S2", "here."), ("S2", "We are freezing now.")]


def test_real_change_of_speaker_mid_sentence_starts_a_new_phrase():
    """No punctuation between them, but B speaks several words: that is B's phrase."""
    t = whisper_output(words_at("so what did you think I found the sign up page confusing", 0.0))
    turns = [SpeakerTurn("A", 0.0, 1.95), SpeakerTurn("B", 1.95, 6.0)]
    out = assign_speakers(t, turns)
    assert [(p.speaker, p.text) for p in out.phrases] == [("S1", "so what did you think"),
                                                         ("S2", "I found the sign up page confusing")]


def test_long_unpunctuated_speech_is_cut_at_pauses():
    t = whisper_output(words_at("first part of the talk", 0.0), words_at("second part after a pause", 5.0))
    out = assign_speakers(t, [SpeakerTurn("A", 0.0, 10.0)])
    assert [p.text for p in out.phrases] == ["first part of the talk", "second part after a pause"]


def test_names_by_order_and_by_mapping():
    t = assign_speakers(whisper_output([("Hi.", 0, 1)], [("Hello.", 2, 3)]), [SpeakerTurn("x", 0, 1.5), SpeakerTurn("y", 1.5, 3)])
    assert [s.name for s in name_speakers(t, parse_names("Ana, Bruno")).speakers] == ["Ana", "Bruno"]
    assert [s.name for s in name_speakers(t, parse_names("Speaker 2=Bruno")).speakers] == ["Speaker 1", "Bruno"]
    assert [s.name for s in name_speakers(t, {"1": "Ana", "S2": "Bia"}).speakers] == ["Ana", "Bia"]
    with pytest.raises(IgotError, match="interview has 2"):
        name_speakers(t, ["A", "B", "C"])
    with pytest.raises(IgotError, match="Cannot read the speaker names"):
        parse_names("Speaker 1=, 2=Bruno")


def test_links_point_at_each_phrase_start():
    t = assign_speakers(whisper_output([("Hi.", 83.7, 84.0)], [("Bye.", 3600.2, 3601)]), [SpeakerTurn("1", 0, 4000)])
    links = [p.link for p in add_links(t).phrases]
    assert links == ["https://www.youtube.com/watch?v=abc123DEF45&t=83s", "https://www.youtube.com/watch?v=abc123DEF45&t=3600s"]
    local = Transcript(Source("x", None, path="/tmp/x.wav"), phrases=t.phrases)
    assert [p.link for p in add_links(local).phrases] == [None, None]


def test_long_turn_behind_many_short_overlapping_ones():
    """Sortformer gives overlapping turns: a word deep inside a long turn belongs to it even
    when many short turns of someone else start after that long turn began."""
    t = whisper_output(words_at("and that is why I stopped using the app.", 55.0))
    turns = [SpeakerTurn("A", 0.0, 60.0)] + [SpeakerTurn("B", 5.0 * k - 0.6, 5.0 * k - 0.1) for k in range(1, 11)]
    out = assign_speakers(t, turns)
    assert [p.text for p in out.phrases if p.speaker == out.speakers[0].id] == ["and that is why I stopped using the app."]
    assert out.speakers[0].name == "Speaker 1" and len(out.speakers) == 1


def test_tuned_values_are_options_a_sweep_replaces():
    """Each rule's tuned value comes in SpeakerOptions: a sweep changes one with replace() and
    the rule follows it, the defaults staying what a run uses."""
    from dataclasses import replace

    from igot.speakers.phrases import SpeakerOptions

    # No punctuation (a language the punctuation model lacks): a 1.5 s pause within one speaker's words.
    t = whisper_output([("so", 0.0, 0.3), ("we", 0.3, 0.5), ("started", 0.5, 1.0), ("then", 2.5, 2.8), ("stopped", 2.8, 3.3)])
    turns = [SpeakerTurn("1", 0.0, 3.5)]
    assert len(assign_speakers(t, turns).phrases) == 1
    assert len(assign_speakers(t, turns, SpeakerOptions()).phrases) == 1
    shorter = replace(SpeakerOptions(), sentence_pause=1.0)
    assert [p.text for p in assign_speakers(t, turns, shorter).phrases] == ["so we started", "then stopped"]
