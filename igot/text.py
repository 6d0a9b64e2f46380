"""Rules of written text that every stage shares: how words join, where a sentence ends."""

from __future__ import annotations

from typing import Optional, Sequence

from igot.transcript import Word

# Languages written without spaces between words: Whisper's words join with nothing.
NO_SPACE_LANGUAGES = {"zh", "ja", "th", "lo", "my", "yue", "bo"}


def join_words(words: Sequence[Word], language: Optional[str]) -> str:
    return ("" if language in NO_SPACE_LANGUAGES else " ").join(w.text for w in words).strip()


def ends_sentence(word: str) -> bool:
    return word.rstrip("\"'”’)»").endswith((".", "?", "!", "…", "。", "？", "！"))
