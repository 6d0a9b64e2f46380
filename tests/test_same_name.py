"""Same name, same person: two speakers given one name become one speaker in the transcript, its
words and turns, and every export; the phrases join as if the speaker detection had never split
that person in two."""

from __future__ import annotations

import json
import re

import pytest

from igot.outputs.export import to_html, to_markdown, to_srt, to_vtt, write_exports
from igot.speakers.phrases import add_links, assign_speakers, name_speakers, parse_names
from igot.transcript import Citation, Phrase, Source, Speaker, SpeakerTurn, SummaryPoint, Transcript
from tests.test_speakers import whisper_output, words_at

# Ana asks, Bruno answers. The speaker detection heard Ana as two voices, "A" and "A2": an "um"
# inside her first question, and the second half of her second one.
SAID = [
    words_at("How was your um first day with the app?", 0.0),  # "um" (1.2-1.5 s) is A2's
    words_at("It was fine, but the camera did not read my card.", 4.0),
    words_at("And what did you do after that?", 9.0),  # "do after that?" (10.6-11.5 s) is A2's
    words_at("My sister helped me yeah in the end.", 12.5),  # "yeah" (14.1-14.4 s): Ana's, as A2
]
SPLIT = [SpeakerTurn("A", 0.0, 3.6), SpeakerTurn("A2", 1.18, 1.52), SpeakerTurn("B", 3.9, 8.6),
         SpeakerTurn("A", 8.9, 10.45), SpeakerTurn("A2", 10.5, 11.6), SpeakerTurn("B", 12.4, 15.6),
         SpeakerTurn("A2", 14.08, 14.42)]
WHOLE = [SpeakerTurn("A" if t.speaker == "A2" else t.speaker, t.start, t.end) for t in SPLIT]


def interview(turns) -> Transcript:
    t = add_links(assign_speakers(whisper_output(*SAID), turns))
    t.summary = [SummaryPoint("Bruno's sister helped", [Citation(12.5, None, next(i for i, p in enumerate(t.phrases)
                                                                               if p.text.startswith("My sister")))]),
                 SummaryPoint("Ana asks what came next", [Citation(10.6, None, next(i for i, p in enumerate(t.phrases)
                                                                                 if "after that" in p.text))])]
    return t


def test_detection_split_ana_in_two():
    """What the user sees before naming: three speakers, Ana's sentences in pieces."""
    t = interview(SPLIT)
    assert [(p.speaker, p.text) for p in t.phrases] == [
        ("S1", "How was your first day with the app?"), ("S2", "um"),
        ("S3", "It was fine, but the camera did not read my card."),
        ("S1", "And what did you"), ("S2", "do after that?"),
        ("S3", "My sister helped me in the end."), ("S2", "yeah")]


def test_giving_two_speakers_one_name_merges_them_everywhere(tmp_path):
    split = interview(SPLIT)
    named = name_speakers(split, parse_names("Ana, ana , Bruno"))  # the same name, whatever the case and spaces

    # As if the speaker detection had heard one Ana: the same phrases, words and speakers.
    whole = name_speakers(interview(WHOLE), ["Ana", "Bruno"])
    assert [(s.id, s.name) for s in named.speakers] == [("S1", "Ana"), ("S2", "Bruno")]
    assert [(p.speaker, p.text, p.start, p.end, p.link) for p in named.phrases] == \
        [(p.speaker, p.text, p.start, p.end, p.link) for p in whole.phrases] == [
        ("S1", "How was your um first day with the app?", 0.0, 3.5, "https://www.youtube.com/watch?v=abc123DEF45&t=0s"),
        ("S2", "It was fine, but the camera did not read my card.", 4.0, 8.3, "https://www.youtube.com/watch?v=abc123DEF45&t=4s"),
        ("S1", "And what did you do after that?", 9.0, 11.7, "https://www.youtube.com/watch?v=abc123DEF45&t=9s"),
        ("S2", "My sister helped me in the end.", 12.5, 15.6, "https://www.youtube.com/watch?v=abc123DEF45&t=12s"),
        ("S1", "yeah", 14.1, 14.4, "https://www.youtube.com/watch?v=abc123DEF45&t=14s")]  # Ana's "yeah", after Bruno's sentence
    assert [[(w.text, w.speaker) for w in p.words] for p in named.phrases] == \
        [[(w.text, w.speaker) for w in p.words] for p in whole.phrases]
    # The turns: the detection's two labels for Ana are one, its turns that touch joined.
    assert {t.speaker for t in named.turns} == {"A", "B"}
    assert [(t.speaker, t.start, t.end) for t in named.turns if t.speaker == "A"] == [("A", 0.0, 3.6), ("A", 8.9, 10.45),
                                                                                     ("A", 10.5, 11.6), ("A", 14.08, 14.42)]
    # The summary still cites the phrases it cited.
    assert [named.phrases[c.phrase].text for point in named.summary for c in point.citations] == [
        "My sister helped me in the end.", "And what did you do after that?"]

    # Every export: two speakers, no trace of a third, Ana's question one phrase and one cue.
    files = write_exports(named, tmp_path, "interview")
    saved = json.loads(files["json"].read_text())
    assert [s["name"] for s in saved["speakers"]] == ["Ana", "Bruno"]
    assert {p["speaker"] for p in saved["phrases"]} | {w["speaker"] for p in saved["phrases"] for w in p["words"]} == {"S1", "S2"}
    html, md, srt, vtt = (files[k].read_text() for k in ("html", "md", "srt", "vtt"))
    for text in (html, md, srt, vtt, files["json"].read_text()):
        assert not re.search(r"Speaker \d|\bS3\b|\bA2\b", text)
    assert "Speakers: " in html and re.search(r'Speakers: <span class="who s0">Ana</span>, <span class="who s1">Bruno</span>', html)
    assert html.count('class="phrase"') == 5 and ">And what did you do after that?</a>" in html
    assert html.count('<div class="turn') == 5  # Ana, Bruno, Ana, Bruno, Ana ("yeah")
    assert "**Ana** (0:09): [And what did you do after that?]" in md
    assert "Ana: And what did you do after that?" in srt and "<v Ana>Ana: And what did you do after that?" in vtt
    assert srt.count("\n\n") == 4  # five cues
    # Word for word what a transcript that never split Ana gives.
    assert (html, md, srt, vtt) == (to_html(whole), to_markdown(whole), to_srt(whole), to_vtt(whole))


def test_one_name_given_by_number_merges_too():
    split = interview(SPLIT)
    named = name_speakers(split, parse_names("Speaker 1=Ana, Speaker 3=Bruno, Speaker 2=Ana"))
    assert [(s.id, s.name) for s in named.speakers] == [("S1", "Ana"), ("S2", "Bruno")]
    assert len(named.phrases) == 5
    # Naming again (a second run of the naming cell) changes nothing more.
    again = name_speakers(named, ["Ana", "Bruno"])
    assert again.to_dict() == named.to_dict()


def test_different_names_only_rename():
    split = interview(SPLIT)
    named = name_speakers(split, ["Ana", "Ana's echo", "Bruno"])
    assert [(p.speaker, p.text) for p in named.phrases] == [(p.speaker, p.text) for p in split.phrases]
    assert named.turns == split.turns and [s.name for s in named.speakers] == ["Ana", "Ana's echo", "Bruno"]


def test_phrases_without_words_join_where_a_sentence_was_cut():
    """A transcript with no word times (written by hand): phrases join when one sentence was cut
    between the two names, never across a full stop."""
    t = Transcript(Source("Hand-made"), "pt", 20.0, [Speaker("S1", "Speaker 1"), Speaker("S2", "Speaker 2"), Speaker("S3", "Speaker 3")], [
        Phrase("S1", 0.0, 2.0, "Como foi"), Phrase("S3", 2.1, 3.0, "o primeiro dia?"),
        Phrase("S2", 3.5, 6.0, "Foi bom."), Phrase("S3", 6.5, 7.0, "E depois?"), Phrase("S1", 7.2, 8.0, "Conte mais."),
    ])
    named = name_speakers(t, ["Ana", "Bruno", "Ana"])
    assert [(p.speaker, p.text, p.start, p.end) for p in named.phrases] == [
        ("S1", "Como foi o primeiro dia?", 0.0, 3.0), ("S2", "Foi bom.", 3.5, 6.0),
        ("S1", "E depois?", 6.5, 7.0), ("S1", "Conte mais.", 7.2, 8.0)]
    assert [(s.id, s.name) for s in named.speakers] == [("S1", "Ana"), ("S2", "Bruno")]


def test_too_many_names_still_says_so():
    from igot.errors import IgotError

    with pytest.raises(IgotError, match="Names were given for 4 speakers, but the interview has 3"):
        name_speakers(interview(SPLIT), ["Ana", "Ana", "Bruno", "Carla"])
