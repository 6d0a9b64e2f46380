"""Rules of written text that every stage shares: how words join, where a sentence ends, how a
moment and a line of text are written, and which characters typed text and a terminal never get."""

from __future__ import annotations

import re
import string
import unicodedata
from typing import Optional, Sequence

from igot.transcript import Word

# Languages written without spaces between words: Whisper's words join with nothing.
NO_SPACE_LANGUAGES = {"zh", "ja", "th", "lo", "my", "yue", "bo"}


def join_words(words: Sequence[Word], language: Optional[str]) -> str:
    return ("" if language in NO_SPACE_LANGUAGES else " ").join(w.text for w in words).strip()


def ends_sentence(word: str) -> bool:
    return word.rstrip("\"'”’)»").endswith((".", "?", "!", "…", "。", "？", "！"))


def clean_text(text: str) -> str:
    """One line of text: a stray newline would end a subtitle cue or a Markdown paragraph."""
    return " ".join(text.split())


# Marks that reorder or hide text on screen (the bidi embeddings, overrides and isolates, and the
# left-to-right, right-to-left and Arabic letter marks): a name, tag or note has no use for them,
# and they can make one read as another ("Trojan Source").
BIDI_MARKS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _unwanted(ch: str) -> bool:
    return ch in BIDI_MARKS or unicodedata.category(ch) == "Cc"


def without_controls(text: str, keep: str = "") -> str:
    """Text a user typed, as iGot keeps it: without control characters (ESC, BEL, NUL, ... which
    can retitle or clear a terminal that shows them) and bidi marks, except those in `keep`
    (a note keeps "\\n\\t")."""
    return "".join(ch for ch in text if ch in keep or not _unwanted(ch))


def typed_line(text: str) -> str:
    """A one-line name or tag as kept: no control characters or bidi marks, single spaces (a tab or
    newline in it is a space)."""
    return clean_text(without_controls(text, keep=string.whitespace))


# A terminal's escape sequences: CSI (ESC [ 31 m: colours, clearing the screen, moving the cursor),
# OSC (ESC ] 0 ; title BEL: the window's title, links) and the short ones (ESC c: reset, ESC ( B).
_ESCAPE_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]?|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]*[0-~]?)")


def foreign_line(text: str) -> str:
    """One line of text from someone else (a web page's title, a downloaded file's name) as iGot
    keeps it: each terminal escape sequence taken out whole (ESC [31m leaves no "[31m" behind),
    then as typed_line."""
    return typed_line(_ESCAPE_SEQUENCE.sub("", text))


def shown(text: str, keep: str = "") -> str:
    """`text` safe to print to a terminal: each control character and bidi mark written as an
    escape (ESC as the four characters \\x1b), except those in `keep` ("\\n" for many lines). Files
    written by someone else may hold any character, whatever iGot cleans on the way in."""
    if not any(_unwanted(ch) for ch in text):
        return text
    return "".join(ch if ch in keep or not _unwanted(ch) else
                   (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}") for ch in text)


def format_clock(seconds: float) -> str:
    """Time for reading: '1:23', or '1:02:03' past an hour."""
    s = int(max(0.0, seconds))  # floor, like the second a video link lands on
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def edit_distance(a: Sequence, b: Sequence) -> int:
    """Levenshtein distance: the insertions, deletions and substitutions that turn `a` into `b`
    (letters of two texts, or words of two transcripts)."""
    before = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        now = [i]
        for j, y in enumerate(b, 1):
            now.append(min(before[j] + 1, now[j - 1] + 1, before[j - 1] + (x != y)))
        before = now
    return before[-1]
