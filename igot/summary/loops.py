"""A small model stuck in a loop: Gemma 3 270M writes "Hi. Hi. Hi. …", or the same line again and
again with only its time and speaker changing, until its tokens run out (benchmarks/README.md,
"The summary on a CPU": on the dev interviews the base model looped in every answer). Such text is
no summary point, and its tokens are the summary's time on a CPU (~0.1 s each on 2 cores).

Two looks at it: while the model writes, a row whose last tokens repeat one stretch is stopped
(`looping`); and a point whose text is one phrase said again and again is not shown
(`repeats_itself`), nor a point that says what an earlier one said (`same_point`).
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher
from typing import Sequence

# A stretch of at most this many tokens written LOOP_TIMES times in a row, alike at SAME_SHARE of
# its positions (times and speaker numbers change while the words repeat), is a loop. A bullet list
# repeats only its marks ("- ", "[", "]"): far below that share.
LONGEST_LOOP = 64
LOOP_TIMES = 3
SAME_SHARE = 0.8
# Two texts whose words match at this share (difflib's ratio) say the same thing.
ALIKE = 0.85
SENTENCE = re.compile(r"[.!?…;\n]+")
LABEL = re.compile(r"^\s*[\w .'-]{1,40}:\s+")  # "Speaker 2: ", "Ana Conceição: " before what they said


def looping(tokens: Sequence[int]) -> bool:
    """Whether the last tokens written are one stretch repeated LOOP_TIMES times (nearly alike)."""
    for period in range(1, LONGEST_LOOP + 1):
        span = LOOP_TIMES * period
        if span > len(tokens):
            break
        tail = tokens[-span:]
        compared = span - period
        same = sum(tail[i] == tail[i + period] for i in range(compared))
        if same >= SAME_SHARE * compared:
            return True
    return False


def words(text: str) -> list[str]:
    """Lower case, no accents, no punctuation."""
    text = unicodedata.normalize("NFKD", text.casefold())
    return re.findall(r"\w+", "".join(c for c in text if not unicodedata.combining(c)))


def repeats_itself(text: str) -> bool:
    """Whether the text is mostly one phrase said again and again: its words repeat with a period
    (at least LOOP_TIMES times), or one sentence (nearly word for word) is at least LOOP_TIMES of
    its sentences and half of them."""
    said = words(text)
    for period in range(1, len(said) // LOOP_TIMES + 1):  # the whole text, not only its end: "no, no, no" is a quote
        same = sum(said[i] == said[i + period] for i in range(len(said) - period))
        if same >= SAME_SHARE * (len(said) - period):
            return True
    sentences = [w for w in (words(s) for s in SENTENCE.split(text)) if w]
    if len(sentences) < LOOP_TIMES:
        return False
    most = max(sum(alike(s, other) or within(s, other) for other in sentences) for s in sentences)
    return most >= LOOP_TIMES and most >= len(sentences) / 2


def alike(a: list[str], b: list[str]) -> bool:
    return a == b or SequenceMatcher(None, a, b, autojunk=False).ratio() >= ALIKE


def within(a: list[str], b: list[str]) -> bool:
    """Whether the shorter of two sentences of at least LOOP_TIMES words is (nearly) inside the
    longer: "Eu tentei três vezes." and "Eu tentei três vezes, até desistir." repeat one phrase."""
    short, long = sorted((a, b), key=len)
    if len(short) < LOOP_TIMES:
        return False
    matched = sum(block.size for block in SequenceMatcher(None, short, long, autojunk=False).get_matching_blocks())
    return matched >= ALIKE * len(short)


def same_point(text: str, earlier: Sequence[str]) -> bool:
    """Whether `text` says what one of the `earlier` points said, who it is put in the mouth of
    aside ("Speaker 1: I think." then "Speaker 2: I think.")."""
    said = words(LABEL.sub("", text))
    return bool(said) and any(alike(said, words(LABEL.sub("", e))) for e in earlier)
