"""A word the word timer puts out of place (faster-whisper's own times, on some CPUs' kernels) keeps
its place among the words as they were decoded: in the phrases, in every export, in a quote."""

from __future__ import annotations

import html
import re

from igot.outputs import export, store
from igot.speakers.phrases import assign_speakers
from igot.transcript import Phrase, Source, SpeakerTurn, Transcript, Word, in_said_order, phrases_in_said_order

# As decoded, with the times a word timer gave: "that's" timed before "i", "room" after "reinforce".
DECODED = [
    [("and", 1.0, 1.2), ("i", 1.3, 1.4), ("think", 1.5, 1.8), ("that's", 0.4, 0.6), ("probably", 1.9, 2.4), ("good.", 2.5, 2.8)],
    [("of", 3.0, 3.1), ("the", 3.2, 3.3), ("room", 6.5, 6.8), ("who", 3.5, 3.7), ("reinforce", 3.8, 4.3), ("themselves.", 4.4, 5.0)],
]
SAID = ["and i think that's probably good.", "of the room who reinforce themselves."]


def decoded() -> Transcript:
    phrases = []
    for words in DECODED:
        ws = [Word(text, start, end, probability=0.9) for text, start, end in words]
        phrases.append(Phrase("", ws[0].start, ws[-1].end, " ".join(w.text for w in ws), words=ws))
    return Transcript(Source("Out of order", None, None, "file"), language="en", duration=8.0, phrases=phrases)


def test_a_word_timed_out_of_place_keeps_its_place_and_gets_a_time_between_its_neighbours():
    words = in_said_order([w for p in decoded().phrases for w in p.words])
    assert [w.text for w in words] == " ".join(SAID).split()
    starts = [w.start for w in words]
    assert starts == sorted(starts) and all(w.start <= w.end for w in words)
    kept = {(w.text, w.start, w.end) for p in DECODED for w in [Word(*x) for x in p]}
    moved = [w.text for w in words if (w.text, w.start, w.end) not in kept]
    assert moved == ["that's", "room"]  # only the two words out of place get new times
    by_text = {w.text: w for w in words}
    assert by_text["think"].end <= by_text["that's"].start <= by_text["that's"].end <= by_text["probably"].start
    assert by_text["the"].start <= by_text["room"].start <= by_text["room"].end <= by_text["who"].start


def test_every_export_keeps_the_decoded_order_after_the_speakers_are_found(tmp_path):
    t = assign_speakers(decoded(), [SpeakerTurn("A", 0.0, 2.9), SpeakerTurn("B", 2.9, 8.0)])
    assert [p.text for p in t.phrases] == SAID
    assert [[w.text for w in p.words] for p in t.phrases] == [s.split() for s in SAID]
    saved = store.save(t, tmp_path, "out-of-order", drive=False)
    for fmt in ("html", "md", "srt", "vtt"):
        text = html.unescape(re.sub(r"<[^>]+>", " ", saved.files[fmt].read_text(encoding="utf-8")))
        text = " ".join(text.split())
        for sentence in SAID:
            assert sentence in text, (fmt, sentence)
    again = Transcript.load(saved.files["json"])
    assert [w.text for w in again.words] == " ".join(SAID).split()
    assert export.to_srt(again).count("-->") == 2


def test_phrases_follow_their_words_new_times():
    phrases = phrases_in_said_order(decoded().phrases)
    assert [p.text for p in phrases] == [p.text for p in decoded().phrases]
    assert all(p.start == p.words[0].start and p.end == p.words[-1].end for p in phrases)
    assert phrases[0].end <= phrases[1].start
