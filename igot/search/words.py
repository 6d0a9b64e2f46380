"""Search by words over the library: every phrase of every interview that a query's words are in.

`search(interviews, query)` is the search for the terminal and the notebook (`igot search
--words-only`); `matches()` the same without the hits made, which the search by words and meaning
together (igot.search.meaning) ranks and merges. A word index per interview (WordIndex) means a
search reads only the phrases its rarest term is in.

Matching, the same in Python and in the library page's JavaScript (igot/outputs/pages/library.js):
text is normalised (accents and case dropped, punctuation made spaces), every query word must start
a word of the phrase or of its speaker's name, in any order, and a "quoted phrase" must appear as
whole words in that order.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import accumulate
from typing import Iterable, Optional, Sequence

from igot.outputs.library import Interview, video_link
from igot.text import clean_text, format_clock, shown

# Accents that NFD splits off Latin, Greek and Cyrillic letters: "ç" is "c" + U+0327. Other
# scripts' marks (Devanagari vowel signs, say) are part of their letters and stay.
_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_NOT_WORD = re.compile(r"[\W_]+")
_NOT_WORD_KEEP_LINES = re.compile(r"[^\w\n]+|_+")
_QUOTED = re.compile(r'["“”«»„]([^"“”«»„]*)["“”«»„]?')


def normalize(text: str) -> str:
    """What search compares: 'Integração, já!' -> 'integracao ja'."""
    text = _MARKS.sub("", unicodedata.normalize("NFD", text)).lower()
    return " ".join(_NOT_WORD.sub(" ", text).split())


def _normalize_lines(texts: list[str]) -> list[str]:
    """normalize() of each text, padded with a space each side; done in one go (it is the
    costly part of a search over thousands of phrases)."""
    joined = _MARKS.sub("", unicodedata.normalize("NFD", "\n".join(texts))).lower()
    return [f" {' '.join(line.split())} " for line in _NOT_WORD_KEEP_LINES.sub(" ", joined).split("\n")]


@lru_cache(maxsize=4096)
def _piece(ch: str) -> Optional[str]:
    """What one character becomes in normalize() (" " for one that is not part of a word); None for
    an accent typed on its own (already decomposed), which normalize() drops. Kept: a search marks
    the words of hundreds of phrases, character by character."""
    if not _MARKS.sub("", unicodedata.normalize("NFD", ch)):
        return None
    return normalize(ch) or " "


def _normalize_mapped(text: str) -> tuple[str, list[int]]:
    """normalize(), with the index in `text` of each character of the result (for highlighting)."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        piece = _piece(ch)
        if piece is None:
            continue
        for c in piece:
            if c == " " and (not out or out[-1] == " "):
                continue
            out.append(c)
            where.append(i)
    if out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


# --- what a search reads of an interview, made once per interview read -------------------------
# Kept in the interview's search_cache, so a server searching the same library again reads them
# (they are most of a search's time), and load_library() keeps them with an unchanged interview.
def search_lines(iv: Interview) -> tuple[list[str], list[str]]:
    """Each phrase's clean text, and its normalize()d form padded with spaces."""
    made = iv.search_cache.get("lines")
    if made is None:
        texts = [clean_text(p.text) for p in iv.transcript.phrases]
        made = iv.search_cache["lines"] = (texts, _normalize_lines(texts))
    return made


def search_names(iv: Interview) -> dict[str, tuple[str, str]]:
    """{speaker id of a phrase: (the name a hit shows, its normalize()d form padded with spaces)}."""
    made = iv.search_cache.get("names")
    if made is None:
        t = iv.transcript
        names = {s: clean_text(t.speaker_name(s)) if (t.speakers or s) else "" for s in {p.speaker for p in t.phrases}}
        made = iv.search_cache["names"] = {s: (name, f" {normalize(name)} ") for s, name in names.items()}
    return made


def word_index(iv: Interview) -> "WordIndex":
    made = iv.search_cache.get("index")
    if made is None:
        made = iv.search_cache["index"] = WordIndex(search_lines(iv)[1])
    return made


class WordIndex:
    """Which phrases of an interview hold a word beginning with some letters: a search reads only
    the phrases its rarest term is in, not every phrase (200 hours hold ~300,000)."""

    def __init__(self, hays: Sequence[str]) -> None:
        where: dict[str, list[int]] = {}
        for i, hay in enumerate(hays):
            for word in set(hay.split()):
                where.setdefault(word, []).append(i)
        self.words = sorted(where)
        self.phrases = [tuple(where[w]) for w in self.words]  # tuples of numbers: the garbage collector leaves them
        self.sizes = list(accumulate((len(found) for found in self.phrases), initial=0))

    def _range(self, start: str) -> tuple[int, int]:
        # Every word beginning with `start` sorts between it and it followed by the last character.
        return bisect_left(self.words, start), bisect_left(self.words, start + "\U0010ffff")

    def count(self, start: str) -> int:
        """How many phrases hold a word beginning with `start`, at most (one read, no set made)."""
        lo, hi = self._range(start)
        return self.sizes[hi] - self.sizes[lo]

    def having(self, start: str) -> set[int]:
        """The phrases that hold a word beginning with `start`."""
        lo, hi = self._range(start)
        return {i for found in self.phrases[lo:hi] for i in found}


# --- search -----------------------------------------------------------------------------------
@dataclass
class Query:
    words: list[str] = field(default_factory=list)  # normalised; each must start a word
    phrases: list[str] = field(default_factory=list)  # normalised "quoted phrases": whole words, in order

    @property
    def empty(self) -> bool:
        return not self.words and not self.phrases

    @cached_property
    def needles(self) -> list[tuple[str, bool]]:
        """What is looked for in a phrase's normalised text padded with spaces: each term with the
        space before it, and whether it must end a word (a quoted phrase)."""
        return [(f" {w}", False) for w in self.words] + [(f" {ph}", True) for ph in self.phrases]


def parse_query(text: str) -> Query:
    phrases = [normalize(m) for m in _QUOTED.findall(text)]
    rest = _QUOTED.sub(" ", text)
    return Query(words=list(dict.fromkeys(normalize(rest).split())), phrases=[p for p in phrases if p])


@dataclass
class Hit:
    """A phrase a search found, by words or by meaning (igot.search.meaning makes those)."""

    interview: str  # its name
    speaker: str  # the speaker's name ("" when the transcript has no speakers)
    start: float  # seconds
    text: str  # the phrase
    phrase: int  # index into the transcript's phrases; the page's anchor is #p-<phrase>
    video: Optional[str]  # the video at that second
    page: str  # the transcript page at that phrase (file URI)
    marks: list[tuple[int, int]]  # character spans of `text` that matched, for highlighting
    doc: Optional[str] = None  # the interview's Google Doc, when iGot made one
    how: str = "words"  # found by "words", by "meaning" (igot.search.meaning), or "both"
    score: float = 0.0  # its rank score where the hits were ranked (0: in the library's order)

    @property
    def link(self) -> str:
        return self.video or self.page


def search(interviews: Iterable[Interview], query: str | Query, speaker: str = "", interview: str = "",
           language: str = "") -> list[Hit]:
    """Phrases of every interview that match `query`, interview by interview (newest first), in
    order of time. `speaker` and `interview` keep only names that contain them (any case, accents);
    `language` only interviews in that language."""
    q = parse_query(query) if isinstance(query, str) else query
    return [word_hit(iv, i, q) for iv, i in matches(interviews, q, speaker, interview, language)]


def matches(interviews: Iterable[Interview], q: Query, speaker: str = "", interview: str = "",
            language: str = "") -> list[tuple[Interview, int]]:
    """search() as (interview, phrase index), nothing made of them: a word said often is in
    thousands of phrases, and a page shows a few hundred."""
    if q.empty:
        return []
    want_speaker, want_interview = normalize(speaker), normalize(interview)
    found = []
    for iv in interviews:
        t = iv.transcript
        if want_interview and want_interview not in normalize(iv.name):
            continue
        if language and (t.language or "") != language:
            continue
        names, hays = search_names(iv), search_lines(iv)[1]
        for i in _phrases_to_read(iv, q):
            name, hay = names[t.phrases[i].speaker][1], hays[i]
            if want_speaker and want_speaker not in name:
                continue
            if all(needle + " " in hay if whole else needle in hay or needle in name for needle, whole in q.needles):
                found.append((iv, i))
    return found


def word_hit(iv: Interview, i: int, q: Query) -> Hit:
    """Phrase i of an interview as a hit of `q`, its matching words marked."""
    t, text = iv.transcript, search_lines(iv)[0][i]
    p = t.phrases[i]
    return Hit(iv.name, search_names(iv)[p.speaker][0], p.start, text, i, video_link(t, p.start),
               f"{iv.page_uri}#p-{i}", _marks(text, q), t.info.get("google_doc"))


def word_share(iv: Interview, i: int, q: Query) -> float:
    """How much of phrase i the query's words and phrases make: the share of its letters (as
    normalised) they cover."""
    hay = search_lines(iv)[1][i]
    if len(q.needles) == 1 and not q.needles[0][1]:  # one word (most searches): its places never overlap
        covered = hay.count(q.needles[0][0]) * (len(q.needles[0][0]) - 1)
    else:
        covered = sum(b - a for a, b in _merged(_found(hay, q)))
    return covered / max(1, len(hay) - 2)


def _phrases_to_read(iv: Interview, q: Query) -> list[int]:
    """The phrases of `iv` that may match `q`, in order: those holding the term found in the fewest
    (a query word may also be met in the speaker's name: then every phrase of that speaker)."""
    index, names = word_index(iv), search_names(iv)
    best: Optional[tuple[int, str, list[str]]] = None
    for term, in_names in [(w, True) for w in q.words] + [(w, False) for ph in q.phrases for w in ph.split()]:
        named = [s for s, (_, name) in names.items() if f" {term}" in name] if in_names else []
        size = len(iv.transcript.phrases) if named else index.count(term)  # a name in the query: rare
        if best is None or size < best[0]:
            best = (size, term, named)
    if best is None:
        return []
    _, term, named = best
    found = index.having(term)
    if named:
        found.update(i for i, p in enumerate(iv.transcript.phrases) if p.speaker in named)
    return sorted(found)


def _found(hay: str, q: Query) -> list[tuple[int, int]]:
    """Where the query's words and phrases are in `hay` (normalised, padded with spaces)."""
    spans = []
    for needle, whole in q.needles:
        at = hay.find(needle)
        while at >= 0:
            end = at + len(needle)
            if not whole or hay[end] == " ":
                spans.append((at + 1, end))
            at = hay.find(needle, at + 1)
    return spans


def _merged(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def _marks(text: str, q: Query) -> list[tuple[int, int]]:
    """Where the query's words and phrases are in `text`, as merged character spans."""
    norm, where = _normalize_mapped(text)
    # hay[k] is norm[k - 1]; a span ends past its last matched character's source.
    return _merged((where[a - 1], where[b - 2] + 1) for a, b in _found(f" {norm} ", q))


def hit_line(h: Hit, bold: bool = False) -> str:
    """One hit on one line: interview, time, speaker, the phrase (matches in bold on a terminal), link."""
    # What the files hold is printed escaped (shown): a control character in a stranger's file
    # must not act on the terminal; the bold marks are the only ones written.
    text, last = "", 0
    for a, b in h.marks:
        part = shown(h.text[a:b])
        text += shown(h.text[last:a]) + (f"\033[1m{part}\033[0m" if bold else part)
        last = b
    text += shown(h.text[last:])
    who = f"{shown(h.speaker)}: " if h.speaker else ""
    meaning = " (by meaning)" if h.how == "meaning" else ""
    return f"{shown(h.interview)} · {format_clock(h.start)} · {who}{text}{meaning} · {shown(str(h.link))}"
