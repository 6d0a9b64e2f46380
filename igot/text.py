"""Rules of written text that every stage shares: how words join, where a sentence ends, how a
moment and a line of text are written."""

from __future__ import annotations

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


def format_clock(seconds: float) -> str:
    """Time for reading: '1:23', or '1:02:03' past an hour."""
    s = int(max(0.0, seconds))  # floor, like the second a video link lands on
    h, rem = divmod(s, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"
