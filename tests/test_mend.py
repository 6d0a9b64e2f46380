"""Whisper's own word times mended at the pauses the VAD hears (igot.refine.mend): what a researcher
clicking a phrase would notice, on espeak speech whose word times are exact."""

from __future__ import annotations

from dataclasses import replace

import pytest

from igot.links import link_at
from igot.media.audio import load_audio
from igot.refine.mend import MendOptions, mend, speech
from igot.transcript import Phrase, Source, Transcript, Word
from igot_dev.synth import synth_conversation

URL = "https://www.youtube.com/watch?v=abcdefghijk"


@pytest.fixture(scope="module")
def pause(tmp_path_factory):
    """"Well I think so." then 2 s of silence, then "Then it worked.": the words' exact times."""
    wav = tmp_path_factory.mktemp("mend") / "pause.wav"
    words = synth_conversation([("A", "Well I think so."), ("A", "Then it worked.")], wav, {"A": "en-us"},
                               word_gap=0.0, turn_gap=2.0)
    return wav, words


def transcript(phrases: list[list[tuple[str, float, float]]]) -> Transcript:
    made = [Phrase("", ws[0][1], ws[-1][2], " ".join(w for w, _, _ in ws), words=[Word(w, a, b) for w, a, b in ws])
            for ws in phrases]
    return Transcript(source=Source(title="pause", url=URL, kind="youtube"), language="en", duration=8.0, phrases=made)


def truth_of(words):
    return [(w.text, w.start, w.end) for w in words]


def test_a_word_stretched_over_a_two_second_pause_ends_where_it_is_said(pause):
    wav, words = pause
    said = truth_of(words)
    first, second = said[:4], said[4:]
    # The engine's "so." runs on through the pause, to just before "Then".
    stretched = first[:3] + [(first[3][0], first[3][1], second[0][1] - 0.05)]
    mended = mend(transcript([stretched, second]), speech(load_audio(wav)))
    so = mended.phrases[0].words[-1]
    assert so.text == "so." and abs(so.end - first[3][2]) <= 0.1, (so, first[3])
    assert mended.phrases[0].end == so.end  # the phrase ends with its last word
    assert [w.text for w in mended.words] == [w for w, _, _ in said]  # text and order kept


def test_the_first_word_after_a_long_silence_starts_where_it_is_said_and_so_does_its_link(pause):
    """faster-whisper issue #125: the first word after a silence starts seconds early; the phrase's
    link would open in the silence."""
    wav, words = pause
    said = truth_of(words)
    first, second = said[:4], said[4:]
    early = [(second[0][0], first[3][2] + 0.1, second[0][2])] + second[1:]  # "Then" from just after "so."
    mended = mend(transcript([first, early]), speech(load_audio(wav)))
    phrase = mended.phrases[1]
    assert abs(phrase.words[0].start - second[0][1]) <= 0.1, (phrase.words[0], second[0])
    assert phrase.start == phrase.words[0].start
    assert link_at(URL, "youtube", phrase.start) == link_at(URL, "youtube", second[0][1])  # the second the word starts
    assert link_at(URL, "youtube", phrase.start) != link_at(URL, "youtube", early[0][1])


def test_words_the_vad_cannot_place_are_left_as_the_engine_timed_them(pause):
    wav, words = pause
    said = truth_of(words)
    t = transcript([said])
    assert mend(t, []) == t  # a VAD that hears nothing moves nothing
    quiet = transcript([[("hm", 0.0, 0.3)]])  # in the silence before the first word: no speech to move it to
    assert mend(quiet, speech(load_audio(wav))).words[0] == Word("hm", 0.0, 0.3)
    # Every word keeps start <= end, in order; none grows into its neighbour.
    engine_like = transcript([[(w, round(a - 0.08, 3), round(b + 0.15, 3)) for w, a, b in said]])  # the engine's 3 decimals
    engine_like = replace(engine_like, phrases=[replace(p, words=[replace(w, end=min(w.end, n.start)) for w, n in
                                                                  zip(p.words, p.words[1:] + [Word("", 99, 99)])])
                                                for p in engine_like.phrases])
    out = mend(engine_like, speech(load_audio(wav)), MendOptions())
    assert all(w.start <= w.end for w in out.words)
    assert all(a.end <= b.start for a, b in zip(out.words, out.words[1:]))
