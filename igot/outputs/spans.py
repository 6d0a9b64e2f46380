"""Where each word of a phrase's text sits and when it is said: what cuts a long phrase into
subtitle cues and what finds the words a highlight covers."""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from igot.transcript import Phrase, Word


class Span(NamedTuple):
    """A piece of phrase text (character offsets) and when it is said."""

    c0: int
    c1: int
    start: float
    end: float


def word_spans(text: str, words: list[Word]) -> Optional[list[Span]]:
    """Where each word sits in the phrase text; None when the words don't spell it (edited text)."""
    spans, pos = [], 0
    for w in words:
        token = "".join(w.text.split())
        if not token:
            continue
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if not text.startswith(token, pos):
            return None
        spans.append(Span(pos, pos + len(token), w.start, w.end))
        pos += len(token)
    return spans if spans and not text[pos:].strip() else None


def even_spans(text: str, start: float, end: float) -> list[Span]:
    """No usable word times: assume an even speaking rate. Characters for scripts without spaces."""
    per_char = (end - start) / max(len(text), 1)
    pattern = r"\S+" if " " in text else r"\S"
    return [Span(m.start(), m.end(), start + m.start() * per_char, start + m.end() * per_char)
            for m in re.finditer(pattern, text)]


def phrase_spans(p: Phrase, text: str) -> list[Span]:
    """The words of `text` (the phrase's clean text) with their times: the aligned words when they
    spell it, else an even rate over the phrase."""
    return word_spans(text, p.words) or even_spans(text, p.start, max(p.end, p.start))
