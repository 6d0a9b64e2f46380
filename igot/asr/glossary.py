"""The library's glossary: names, products and jargon ("Pix", "Nubank", "Ana") as the researcher
spells them. Whisper is given them on later runs (faster-whisper's `hotwords`; the prompt of the
other engines), so it writes them that way; a transcript's word that sounds close to one but is
spelled otherwise is a review item offering it (`near_misses`).

Here: the terms read from what a person typed or a file holds (checked, one line each), the text
given to Whisper, and which words of a phrase are close to a term. The file itself (OUT/glossary.txt)
is kept by the library store (igot.outputs.store.Library)."""

from __future__ import annotations

import functools
import re
import string
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

from igot.errors import IgotError
from igot.text import edit_distance, shown, typed_line, without_controls

FILE = "glossary.txt"  # in the library folder: one term per line, for a person to edit too
MAX_TERMS = 200  # a library's names and words, not a dictionary
MAX_TERM_CHARS = 60  # a name or a few words
MAX_FILE_BYTES = 64 * 1024  # 200 terms of 60 characters, in any script, with room to spare
# Whisper's prompt holds at most 223 tokens, shared with the text decoded before (faster-whisper
# and openai-whisper cut what is over); ~300 characters of terms are ~100 tokens, and a long list
# in the prompt makes Whisper more likely to write the list itself into a silence. The terms past
# it are still checked in Review.
HOTWORDS_CHARS = 300
SEPARATORS = re.compile(r"[\n,，、]")  # a term per line, or several on one line with commas

Terms = Union[str, Iterable[str]]


@dataclass(frozen=True)
class Closeness:
    """When a transcript's words are close enough to a glossary term to offer it in Review."""

    # Letters (and digits) a term or the words must have: "Ok" or "Ai" would be close to too much.
    min_letters: int = 3
    # Spelled otherwise but sounding the same after `sound()` ("picks", "pics" -> "Pix"; "Itau" ->
    # "Itaú"; "Nu bank" -> "Nubank"): offered at any length from min_letters. Shorter words are
    # offered only then: one letter off "Pix" is "six" or "fix", off "Inter" "Intel" or "in them".
    # Not sounding the same, from fuzzy_min_letters letters: offered when they start with the same
    # sound (a name misheard keeps its first sound far more often than not, and real words close
    # to a name are many), at least `similar` of the longer one's sound is kept (1 - edits /
    # length, Levenshtein) and at most max_edits edits: "new bank" -> "Nubank" (1 edit in 7).
    fuzzy_min_letters: int = 6
    similar: float = 0.8
    max_edits: int = 2
    max_words: int = 3  # a term may be heard as up to three words ("new bank", "I food")

    def reach(self, length: int) -> int:
        """The most edits a sound of `length` letters can be from one it is close to (that one
        may be longer: d <= (1 - similar) * (length + d))."""
        return min(self.max_edits, int(length * (1 - self.similar) / self.similar + 1e-9))


CLOSENESS = Closeness()


# --- the terms -------------------------------------------------------------------------------------
def checked(terms: Terms, what: str) -> list[str]:
    """The glossary `terms` as kept: a list, or text with one term per line or commas between
    them (a list's items are split there too: the file keeps each term on a line of its own); each
    term on one line with single spaces, the empty ones dropped, each once (the first spelling of
    those equal but for case). IgotError, naming `what` (where they came from, e.g. "--glossary"),
    for a term with a control character, one too long, or too many terms."""
    listed = [terms] if isinstance(terms, str) else list(terms)
    if not all(isinstance(t, str) for t in listed):
        raise IgotError(f"The glossary ({what}) must be a list of words.", "Give each term as text.")
    pieces = [piece for text in listed for piece in SEPARATORS.split(text)]  # a term never holds a separator
    kept: dict[str, str] = {}
    for piece in pieces:
        if without_controls(piece, keep=string.whitespace) != piece:
            raise IgotError(f"A term of the glossary ({what}) holds a control character: {shown(piece.strip()[:MAX_TERM_CHARS])!r}.",
                            "Type the term again without it.")
        term = typed_line(piece)
        if len(term) > MAX_TERM_CHARS:
            raise IgotError(f"The glossary term '{term[:40]}…' ({what}) is {len(term)} characters long.",
                            f"Keep each term to a name or a few words (at most {MAX_TERM_CHARS} characters), "
                            "with commas or new lines between terms.")
        if "<|" in term:  # Whisper's tokenizers read "<|endoftext|>" and the like in a prompt as commands
            raise IgotError(f"The glossary term {term[:MAX_TERM_CHARS]!r} ({what}) holds '<|', which Whisper reads as a command.",
                            "Type the term without it.")
        if term:
            kept.setdefault(term.casefold(), term)
    if len(kept) > MAX_TERMS:
        raise IgotError(f"The glossary ({what}) has {len(kept)} terms, more than the {MAX_TERMS} iGot keeps.",
                        "Keep the names and words Whisper gets wrong most often.")
    return list(kept.values())


def from_bytes(data: bytes, what: str) -> list[str]:
    """The terms of a glossary file's bytes (UTF-8 text). Read as written by a stranger: too large,
    not UTF-8, or any term `checked` refuses is an IgotError naming `what`."""
    if len(data) > MAX_FILE_BYTES:
        raise IgotError(f"The glossary {what} is over {MAX_FILE_BYTES // 1024} kB, too large for a list of names and words.",
                        f"Keep at most {MAX_TERMS} terms in it, one per line.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise IgotError(f"The glossary {what} is not UTF-8 text (byte {err.start}).",
                        "Save it as UTF-8 text, one term per line.") from None
    return checked(text, what)


def read_file(path: Path) -> list[str]:
    """The terms of the glossary file at `path` (one term, or terms with commas, per line)."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)  # no further: the file may be anything
    except OSError as err:
        raise IgotError(f"The glossary file {path} cannot be read ({err.strerror or err}).",
                        "Check the path, or give the words themselves: --glossary \"Pix, Nubank\".") from None
    return from_bytes(data, f"file {path}")


def merged(kept: Sequence[str], added: Sequence[str], what: str) -> list[str]:
    """`kept` with the terms of `added` it lacks after them (a term already kept keeps its spelling)."""
    return checked([*kept, *added], what)


def file_text(terms: Sequence[str]) -> str:
    """The glossary file's text: one term per line."""
    return "".join(f"{t}\n" for t in terms)


# --- given to Whisper ------------------------------------------------------------------------------
def given_to_whisper(terms: Sequence[str]) -> list[str]:
    """The terms Whisper is given: the glossary's first ones, as many as fit in HOTWORDS_CHARS."""
    given, length = [], 0
    for term in terms:
        length += len(term) + 2 * bool(given)  # ", " between them
        if length > HOTWORDS_CHARS:
            break
        given.append(term)
    return given


def hotwords(terms: Sequence[str]) -> Optional[str]:
    """The text Whisper is given for the glossary ("Pix, Nubank"): faster-whisper's `hotwords`, the
    prompt of openai-whisper and transformers; None without terms."""
    return ", ".join(given_to_whisper(terms)) or None


# --- words close to a term -------------------------------------------------------------------------
EDGES = string.punctuation + "“”‘’«»¿¡…。，！？：；、—–"
HYPHEN_SPACE = re.compile(r"\s*-\s*")
POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
# Spellings of one sound folded together, in this order: a loose key, not phonetics (English and
# Portuguese spellings first), applied to both sides alike.
SOUNDS = [(re.compile(a), b) for a, b in (
    ("ph", "f"), ("ck", "k"), ("qu", "k"), ("q", "k"), ("c(?=[eiy])", "s"), ("c", "k"), ("x", "ks"), ("z", "s"),
    ("w", "u"), ("y", "i"), ("h", ""), (r"(.)\1+", r"\1"),
)]


def core(word: str) -> str:
    """A transcript word as compared: without the punctuation around it ("Nubank," is "Nubank")."""
    return word.strip().strip(EDGES)


def written(words: Sequence[str]) -> str:
    """Transcript words as one text, without the punctuation around it. Whisper's word timing
    splits a hyphenated word before its hyphen ("fellow", "-Americans"): joined again here."""
    return core(HYPHEN_SPACE.sub("-", " ".join(w.strip() for w in words)))


def letters(text: str) -> str:
    """Its letters and digits, lower case, without accents ("ç" is "s", as it sounds)."""
    folded = unicodedata.normalize("NFKD", text.casefold().replace("ç", "s"))
    return "".join(ch for ch in folded if ch.isalnum())


@functools.lru_cache(maxsize=65536)  # a transcript says the same words again and again
def sound(text: str) -> str:
    """A loose key for how `text` sounds: "picks", "pics" and "Pix" are all "piks". Word
    breaks and punctuation are not heard: "Nu bank" sounds as "Nubank"."""
    key = letters(text)
    for pattern, by in SOUNDS:
        key = pattern.sub(by, key)
    return key


@dataclass(frozen=True)
class Matcher:
    """A glossary ready to compare words with (built once per glossary: `matcher`)."""

    exact: dict[str, str]  # the term's text, case folded -> the term
    sounds: dict[str, str]  # its sound -> the first term with it
    by_start: dict[str, tuple[str, ...]]  # the sounds long enough to compare loosely, by their first letter
    longest: int  # letters of the longest sound: words much longer are no term
    closeness: Closeness

    def offer(self, words: Sequence[str]) -> Optional[tuple[float, str]]:
        """(how close, the term) for transcript words heard as one term; how close is 3 when they
        are the term itself (not a miss), 2 when they sound the same, else their similarity; None
        when not close to any."""
        c = self.closeness
        said = written(words)
        plain = POSSESSIVE.sub("", said)  # "Nubank's" is the term "Nubank"; "McDonald's" the term itself
        for text in (said, plain):
            if text.casefold() in self.exact:
                return 3.0, self.exact[text.casefold()]
        spelled = letters(plain)
        # "x" is the only letter whose sound is longer ("ks"): a longer text sounds like no term
        if not c.min_letters <= len(spelled) <= 2 * self.longest + c.max_edits:
            return None
        key = sound(spelled)
        if key in self.sounds:
            return 2.0, self.sounds[key]
        if len(key) < c.fuzzy_min_letters:
            return None
        best: Optional[tuple[float, str]] = None
        for other in self.by_start.get(key[0], ()):
            if abs(len(other) - len(key)) > c.reach(min(len(key), len(other))):
                continue
            apart = edit_distance(key, other)
            score = 1 - apart / max(len(key), len(other))
            if score >= c.similar and apart <= c.max_edits and (best is None or score > best[0]):
                best = (score, self.sounds[other])
        return best


def matcher(terms: Sequence[str], closeness: Closeness = CLOSENESS) -> Matcher:
    return _matcher(tuple(terms), closeness)


@functools.lru_cache(maxsize=8)  # Review asks phrase by phrase with the same glossary
def _matcher(terms: tuple[str, ...], closeness: Closeness) -> Matcher:
    exact: dict[str, str] = {}
    sounds: dict[str, str] = {}
    by_start: dict[str, list[str]] = {}
    for term in terms:
        exact.setdefault(" ".join(term.split()).casefold(), term)
        key = sound(term)
        if len(letters(term)) < closeness.min_letters or key in sounds:
            continue
        sounds[key] = term
        if len(key) >= closeness.fuzzy_min_letters:
            by_start.setdefault(key[0], []).append(key)
    return Matcher(exact, sounds, {k: tuple(v) for k, v in by_start.items()}, max(map(len, sounds), default=0), closeness)


def near_misses(words: Sequence[str], terms: Sequence[str], closeness: Closeness = CLOSENESS) -> list[tuple[int, int, str]]:
    """The words of a phrase that are close to a glossary term but not it: (first word, last word
    (inclusive), the term), in order. Up to `closeness.max_words` words together are heard as one
    term ("new bank" -> "Nubank"); the closest offers win where they overlap, and words that are a
    term (whatever their case) are offered nothing."""
    if not terms or not words:
        return []
    m = matcher(terms, closeness)
    cores = [core(w) for w in words]
    found = []  # (how close, first, last, term)
    for first in range(len(words)):
        if not cores[first]:
            continue
        for last in range(first, min(first + closeness.max_words, len(words))):
            if not cores[last]:
                continue
            offered = m.offer(words[first:last + 1])
            if offered is not None:
                found.append((offered[0], first, last, offered[1]))
    taken: set[int] = set()
    misses = []
    for score, first, last, term in sorted(found, key=lambda f: (-f[0], f[2] - f[1], f[1])):
        if taken.isdisjoint(range(first, last + 1)):
            taken.update(range(first, last + 1))
            if score < 3:
                misses.append((first, last, term))
    return sorted(misses)


def near_miss(word: str, terms: Sequence[str], closeness: Closeness = CLOSENESS) -> Optional[str]:
    """The glossary term `word` (or a few words, "new bank") is close to but not, or None."""
    words = word.split()
    if not any(core(w) for w in words) or len(words) > closeness.max_words or not terms:
        return None
    offered = matcher(terms, closeness).offer(words)
    return offered[1] if offered is not None and offered[0] < 3 else None
