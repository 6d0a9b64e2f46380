"""Words to speakers, phrases, speaker numbering and names, on constructed transcripts."""

from __future__ import annotations

import pytest

from igot.errors import IgotError
from igot.speakers import add_links, assign_speakers, name_speakers, parse_names
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
    t = whisper_output([("a", 0, 1)], [("b", 2, 3)], [("c", 4, 5)], [("d", 6, 7)])
    turns = [SpeakerTurn("9", 0, 1.5), SpeakerTurn("2", 1.5, 3.5), SpeakerTurn("9", 3.5, 5.5), SpeakerTurn("5", 5.5, 8)]
    out = assign_speakers(t, turns)
    assert [p.speaker for p in out.phrases] == ["S1", "S2", "S1", "S3"]
    assert [w.text for w in out.words] == ["a", "b", "c", "d"]


def test_word_in_a_gap_goes_to_nearest_speaker():
    t = whisper_output([("hi", 0.0, 0.4)], [("yes", 5.0, 5.3)])
    out = assign_speakers(t, [SpeakerTurn("1", 0.0, 0.5), SpeakerTurn("2", 5.6, 7.0)])
    assert [p.speaker for p in out.phrases] == ["S1", "S2"]


def test_word_across_a_turn_change_goes_to_the_larger_overlap():
    t = whisper_output([("so", 0.2, 0.5), ("interesting", 1.0, 2.0)])
    out = assign_speakers(t, [SpeakerTurn("1", 0.0, 1.3), SpeakerTurn("2", 1.3, 3.0)])
    assert [(p.speaker, p.text) for p in out.phrases] == [("S1", "so"), ("S2", "interesting")]


def test_names_by_order_and_by_mapping():
    t = assign_speakers(whisper_output([("a", 0, 1)], [("b", 2, 3)]), [SpeakerTurn("x", 0, 1.5), SpeakerTurn("y", 1.5, 3)])
    assert [s.name for s in name_speakers(t, parse_names("Ana, Bruno")).speakers] == ["Ana", "Bruno"]
    assert [s.name for s in name_speakers(t, parse_names("Speaker 2=Bruno")).speakers] == ["Speaker 1", "Bruno"]
    assert [s.name for s in name_speakers(t, {"1": "Ana", "S2": "Bia"}).speakers] == ["Ana", "Bia"]
    with pytest.raises(IgotError, match="interview has 2"):
        name_speakers(t, ["A", "B", "C"])
    with pytest.raises(IgotError, match="Cannot read the speaker names"):
        parse_names("Speaker 1=, 2=Bruno")


def test_links_point_at_each_phrase_start():
    t = assign_speakers(whisper_output([("a", 83.7, 84.0)], [("b", 3600.2, 3601)]), [SpeakerTurn("1", 0, 4000)])
    links = [p.link for p in add_links(t).phrases]
    assert links == ["https://www.youtube.com/watch?v=abc123DEF45&t=83s", "https://www.youtube.com/watch?v=abc123DEF45&t=3600s"]
    local = Transcript(Source("x", None, path="/tmp/x.wav"), phrases=t.phrases)
    assert [p.link for p in add_links(local).phrases] == [None, None]
