"""The interview library: every transcript in an output folder, one page and one search over all.

`write_library(folder)` (re)writes `folder/index.html`: one entry per interview JSON, newest
first, and a search box that finds phrases across all of them, in the browser, from file://.
`search(interviews, query)` is the same search for the terminal and the notebook.

Matching, the same in Python and in the page's JavaScript: text is normalised (accents and case
dropped, punctuation made spaces), every query word must start a word of the phrase or of its
speaker's name, in any order, and a "quoted phrase" must appear as whole words in that order.
"""

from __future__ import annotations

import html
import json
import math
import re
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import accumulate
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Mapping, Optional, Sequence

from igot.errors import IgotError, install_hint
from igot.links import link_at
from igot.outputs import export
from igot.runtime.files import write_atomic
from igot.text import clean_text, format_clock
from igot.transcript import SCHEMA_VERSION, Transcript

INDEX = "index.html"
CACHE = Path(".igot") / "library-cache.json"
CACHE_VERSION = 2  # 2: per file [stamp, search data, why it was skipped]
SUMMARY_POINTS = 3  # how many summary points each entry shows
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


# --- the interviews in a folder ---------------------------------------------------------------
@dataclass
class Interview:
    transcript: Transcript
    path: Path  # its JSON file
    date: datetime  # when it was transcribed: info["created"], else the JSON file's time
    stamp: Optional[list[int]] = None  # the file's time (ns) and size when it was read

    @property
    def name(self) -> str:
        return clean_text(self.transcript.source.title) or self.path.stem

    @property
    def page(self) -> Path:
        """Its HTML transcript page, written next to the JSON."""
        return self.path.with_suffix(".html")

    def speaker_names(self) -> list[str]:
        return [name for _, name in export.header_facts(self.transcript).speakers]

    @cached_property
    def search_lines(self) -> tuple[list[str], list[str]]:
        """Each phrase's clean text, and its normalize()d form padded with spaces: made once per
        interview read, so a server searching the same library again reads them (they are most of
        a search's time)."""
        texts = [clean_text(p.text) for p in self.transcript.phrases]
        return texts, _normalize_lines(texts)

    @cached_property
    def search_names(self) -> dict[str, tuple[str, str]]:
        """{speaker id of a phrase: (the name a hit shows, its normalize()d form padded with spaces)}."""
        t = self.transcript
        names = {s: clean_text(t.speaker_name(s)) if (t.speakers or s) else "" for s in {p.speaker for p in t.phrases}}
        return {s: (name, f" {normalize(name)} ") for s, name in names.items()}

    @cached_property
    def word_index(self) -> "WordIndex":
        return WordIndex(self.search_lines[1])

    @cached_property
    def page_uri(self) -> str:
        return self.page.resolve().as_uri()


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


@dataclass
class Skipped:
    """A JSON in the folder that looks like an interview but cannot be listed."""

    path: Path
    why: str  # what is wrong with it and what to do, in words

    def line(self) -> str:
        return f"Skipped {self.path.name}: {self.why}."


# What to do about a damaged interview JSON: its recording gives it again.
REDO = "run igot run again on its recording (finished steps are reused), or move the file out of the folder"


def load_library(folder: Path | str, known: Iterable[Interview] = ()) -> tuple[list[Interview], list[Skipped]]:
    """Every interview JSON directly in `folder`, newest first, its phrases without their words,
    and the interview JSONs that could not be read (old or damaged), each with why. Other JSON
    files (not interviews) are passed over.

    What search needs of each file is kept in OUT/.igot/library-cache.json, by the file's time
    and size: with 200 one-hour interviews, reading every JSON again would cost each run ~10 s.
    `known`: the interviews of an earlier listing (a server's): those whose file is unchanged are
    kept as they are, with what searching them built (~4 s to build again for 200 hours)."""
    folder = Path(folder)
    before = {iv.path: iv for iv in known}
    # Read only when a file is new to `known`: the interviews a server knows are read again from
    # their own files when they change (one file, after a highlight saved), the cache left as it is.
    cache: Optional[dict[str, list]] = None if before else _read_cache(folder / CACHE)
    seen: dict[str, list] = {}
    interviews, skipped = [], []
    for path in sorted(folder.glob("*.json")):
        try:
            stat = path.stat()
        except OSError:
            continue  # removed while we looked
        stamp = [stat.st_mtime_ns, stat.st_size]
        kept = before.get(path)
        if kept is not None and kept.stamp == stamp:
            interviews.append(kept)
            continue
        if kept is None and cache is None:
            cache = _read_cache(folder / CACHE)
        entry = (cache or {}).get(path.name)
        data, why = (entry[1], entry[2]) if entry and entry[0] == stamp else _search_data(path)
        seen[path.name] = [stamp, data, why]
        if data is not None:
            try:
                interviews.append(Interview(Transcript.from_dict(data), path, _date(data, path), stamp))
            except (ValueError, KeyError, TypeError, AttributeError) as err:
                why = f"it is not a transcript this iGot can read ({err}); {REDO}"
        if why:
            skipped.append(Skipped(path, why))
    if cache is not None and not before:  # a full read: the cache made to match the folder
        if seen.keys() != cache.keys() or any(cache[name][0] != entry[0] for name, entry in seen.items()):
            _write_cache(folder / CACHE, seen)
    return sort_newest_first(interviews), skipped


def load_interviews(folder: Path | str) -> list[Interview]:
    """The interviews of load_library(), for searching."""
    return load_library(folder)[0]


def sort_newest_first(interviews: list[Interview]) -> list[Interview]:
    """The library's order, the same on the page and in `igot search`."""
    return sorted(interviews, key=lambda i: (i.date, i.name), reverse=True)


def _search_data(path: Path) -> tuple[Optional[dict], Optional[str]]:
    """(the transcript in `path` without what search never reads (words, turns, links), None),
    (None, None) when the file is not an interview, or (None, what is wrong) when it is one that
    cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        return None, f"it is not text (damaged?); {REDO}"
    except ValueError as err:
        return None, f"it is not valid JSON ({err.msg} at line {err.lineno}: cut short, or edited by hand?); {REDO}"
    except OSError as err:
        return None, f"it cannot be read ({err.strerror or err}); check the file's permissions"
    if not isinstance(data, dict) or not ("source" in data and "phrases" in data):
        return None, None  # some other JSON: not an interview
    version = data.get("schema_version", 0)
    if isinstance(version, int) and version > SCHEMA_VERSION:
        return None, (f"it was written by a newer iGot (transcript schema {version}; this one reads {SCHEMA_VERSION}): "
                      f"update iGot ({install_hint()})")
    why = _problem(data)
    if why:
        return None, f"{why}; {REDO}"
    phrases = [{k: p[k] for k in ("speaker", "start", "end", "text")} for p in data["phrases"]]
    return {**data, "turns": [], "phrases": phrases}, None


def _problem(data: dict) -> Optional[str]:
    """What keeps an interview JSON off the page, in words; None when nothing does. Checked here
    so that one bad file can never break the page or shift another interview's phrases."""
    if not isinstance(data.get("schema_version", 0), int):
        return f"its schema_version is {data['schema_version']!r}, not a number"
    source = data["source"]
    if not isinstance(source, dict) or not isinstance(source.get("title"), str):
        return "its source has no title (an older or hand-made file?)"
    if not isinstance(data["phrases"], list):
        return "its phrases are not a list"
    for i, p in enumerate(data["phrases"]):
        if not isinstance(p, dict):
            return f"phrase {i + 1} is not an object"
        for key, kind in (("speaker", str), ("start", (int, float)), ("end", (int, float)), ("text", str)):
            value = p.get(key)
            if not isinstance(value, kind) or isinstance(value, bool) or (kind is not str and not math.isfinite(value)):
                return f"phrase {i + 1} has no {key}" if key not in p else f"phrase {i + 1} has a {key} of {value!r}"
    for key, fields_ in (("speakers", ("id", "name")), ("summary", ("text",))):
        items = data.get(key, [])
        if not isinstance(items, list) or not all(isinstance(x, dict) and all(isinstance(x.get(f), str) for f in fields_) for x in items):
            return f"its {key} are not in the form iGot writes"
    if not isinstance(data.get("info", {}), dict):
        return "its info is not an object"
    highlights = data.get("highlights")
    if highlights is not None and not (isinstance(highlights, list) and all(
            isinstance(h, dict) and isinstance(h.get("id"), str) and isinstance(h.get("quote"), str)
            and all(isinstance(h.get(k), (int, float)) and not isinstance(h.get(k), bool) and math.isfinite(h[k]) for k in ("start", "end"))
            and isinstance(h.get("tags", []), list) and all(isinstance(x, str) for x in h.get("tags", []))
            and isinstance(h.get("note", ""), str) for h in highlights)):
        return "its highlights are not in the form iGot writes"
    return None


def _read_cache(path: Path) -> dict[str, list]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"] if data.get("version") == CACHE_VERSION and isinstance(data.get("files"), dict) else {}
        return {name: entry for name, entry in files.items() if isinstance(entry, list) and len(entry) == 3}
    except (OSError, ValueError, KeyError, AttributeError):
        return {}


def _write_cache(path: Path, files: dict[str, list]) -> None:
    """Best effort: a folder we cannot write to is still searched, only more slowly."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({"version": CACHE_VERSION, "files": files}, ensure_ascii=False,
                                              separators=(",", ":")))
    except OSError:
        pass


def _date(data: dict, path: Path) -> datetime:
    created = (data.get("info") or {}).get("created")
    if isinstance(created, str):
        try:
            when = datetime.fromisoformat(created.strip().replace("Z", "+00:00"))
            return when if when.tzinfo else when.replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    try:
        return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
    except OSError:
        return datetime.now(timezone.utc)  # not written yet


def video_link(t: Transcript, seconds: float) -> Optional[str]:
    """The video at `seconds`: the web video when there is one, else the local media file."""
    if t.source.url:
        return export.safe_link(link_at(t.source.url, t.source.kind, seconds))
    if t.source.path:
        try:
            return f"{Path(t.source.path).resolve().as_uri()}#t={max(0, int(seconds))}"
        except ValueError:
            return None
    return None


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
        names, hays = iv.search_names, iv.search_lines[1]
        for i in _phrases_to_read(iv, q):
            name, hay = names[t.phrases[i].speaker][1], hays[i]
            if want_speaker and want_speaker not in name:
                continue
            if all(f" {w}" in hay or f" {w}" in name for w in q.words) and all(f" {ph} " in hay for ph in q.phrases):
                found.append((iv, i))
    return found


def word_hit(iv: Interview, i: int, q: Query) -> Hit:
    """Phrase i of an interview as a hit of `q`, its matching words marked."""
    t, text = iv.transcript, iv.search_lines[0][i]
    p = t.phrases[i]
    return Hit(iv.name, iv.search_names[p.speaker][0], p.start, text, i, video_link(t, p.start),
               f"{iv.page_uri}#p-{i}", _marks(text, q), t.info.get("google_doc"))


def word_share(iv: Interview, i: int, q: Query) -> float:
    """How much of phrase i the query's words and phrases make: the share of its letters (as
    normalised) they cover."""
    hay = iv.search_lines[1][i]
    if len(q.needles) == 1 and not q.needles[0][1]:  # one word (most searches): its places never overlap
        covered = hay.count(q.needles[0][0]) * (len(q.needles[0][0]) - 1)
    else:
        covered = sum(b - a for a, b in _merged(_found(hay, q)))
    return covered / max(1, len(hay) - 2)


def _phrases_to_read(iv: Interview, q: Query) -> list[int]:
    """The phrases of `iv` that may match `q`, in order: those holding the term found in the fewest
    (a query word may also be met in the speaker's name: then every phrase of that speaker)."""
    index = iv.word_index
    best: Optional[tuple[int, str, list[str]]] = None
    for term, in_names in [(w, True) for w in q.words] + [(w, False) for ph in q.phrases for w in ph.split()]:
        named = [s for s, (_, name) in iv.search_names.items() if f" {term}" in name] if in_names else []
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


# --- the page ---------------------------------------------------------------------------------
def _link_parts(t: Transcript) -> Optional[list[str]]:
    """The video link around its seconds, [before, after]: the page makes each hit's link from
    these and the phrase's start, rather than storing 300,000 links."""
    probe = 987654321
    link = video_link(t, probe)
    if not link or str(probe) not in link:
        return None
    before, _, after = link.partition(str(probe))
    return [before, after]


def page_data(interviews: list[Interview], folder: Path) -> dict:
    """What the page searches and shows: per interview its facts and, per phrase, start second,
    speaker and text (the texts joined by newlines: no quotes and commas per phrase). Every phrase
    is exactly one line (clean_text leaves no newline), so the page's k-th line is its k-th phrase."""
    out = []
    for iv in interviews:
        t = iv.transcript
        ids = t.speaker_ids()
        points = export.summary_items(t, None)[:SUMMARY_POINTS]
        out.append({
            "name": iv.name,
            "date": iv.date.date().isoformat(),
            "duration": format_clock(t.length()) if t.length() else "",
            "language": t.language or "",
            "speakers": [clean_text(t.speaker_name(s)) if (t.speakers or s) else "" for s in ids],
            "spoken": iv.speaker_names(),
            "summary": [clean_text(p if isinstance(p, str) else p.text) for p in points],
            "page": _relative(iv.page, folder),
            "video": video_link(t, 0) if (t.source.url or t.source.path) else None,
            "link": _link_parts(t),
            "t": [int(max(0.0, p.start)) for p in t.phrases],
            "s": [ids.index(p.speaker) for p in t.phrases],
            "x": "\n".join(clean_text(p.text) for p in t.phrases),
        })
    return {"interviews": out}


def _relative(path: Path, folder: Path) -> str:
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_uri()


def _script_json(data: dict) -> str:
    """JSON safe inside <script>: no '</script>' or '<!--' can end or confuse the element."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c").replace(
        "\u2028", "\\u2028").replace("\u2029", "\\u2029")


def library_html(interviews: list[Interview], folder: Path, skipped: Sequence[Skipped] = ()) -> str:
    """The library page: the interviews, newest first, and a search over all their phrases; a
    line for each interview file that could not be read."""
    e = html.escape
    entries = []
    for iv in interviews:
        t = iv.transcript
        facts = export.header_facts(t)
        meta = [e(iv.date.date().isoformat())]
        meta += export.facts_line(facts, e, lambda url: f'<a href="{e(url)}" target="_blank" rel="noopener">Open the video</a>',
                                  lambda _, name: e(name))
        points = export.summary_items(t, None)[:SUMMARY_POINTS]
        summary = "".join(f"<li>{e(clean_text(p if isinstance(p, str) else p.text))}</li>" for p in points)
        entries.append(
            f'<li class="interview"><a class="title" href="{e(_relative(iv.page, folder))}">{e(iv.name)}</a>'
            f'<p class="meta">{" · ".join(meta)}</p>' + (f'<ul class="points">{summary}</ul>' if summary else "") + "</li>"
        )
    listing = "\n".join(entries) or '<li class="empty">No interviews yet: run <code>igot run</code> and they appear here.</li>'
    if skipped:
        listing += "\n" + "\n".join(f'<li class="skipped">{e(s.line())}</li>' for s in skipped)
    count = f"{len(interviews)} interview{'s' * (len(interviews) != 1)}"
    phrases = sum(len(iv.transcript.phrases) for iv in interviews)
    return PAGE.format(count=count, phrases=f"{phrases:,}", listing=listing,
                       data=_script_json(page_data(interviews, folder)), script=SCRIPT, css=LIBRARY_CSS)


def library_page(folder: Path | str, changed: Optional[Mapping[Path, Transcript]] = None) -> str:
    """The page of `folder` as it is once each transcript in `changed` is written to its path
    (what igot.outputs.store.save writes together with those transcripts' files)."""
    folder, changed = Path(folder), changed or {}
    interviews, skipped = load_library(folder) if folder.is_dir() else ([], [])
    interviews = [iv for iv in interviews if iv.path not in changed]
    interviews += [Interview(t, path, _date({"info": t.info}, path)) for path, t in changed.items()]
    return library_html(sort_newest_first(interviews), folder, [s for s in skipped if s.path not in changed])


def write_library(folder: Path | str, interviews: Optional[list[Interview]] = None,
                  skipped: Sequence[Skipped] = ()) -> Path:
    """(Re)write folder/index.html from every interview JSON in `folder` (or the `interviews`
    already loaded from it, and the files `skipped` then); returns its path."""
    folder = Path(folder)
    if not folder.is_dir():
        raise IgotError(f"No output folder {folder}.", "Give the folder iGot wrote the interviews to (--out).")
    if interviews is None:
        interviews, skipped = load_library(folder)
    path = folder / INDEX
    try:
        write_atomic(path, library_html(interviews, folder, skipped))
    except OSError as err:
        raise IgotError(f"Could not write {path}: {err.strerror or err}.", "Check that you can write to that folder.") from err
    return path


LIBRARY_CSS = """
:root { color-scheme: light; --ink: #1d2430; --muted: #5b6472; --line: #e2e5ea; }
* { box-sizing: border-box; }
body { margin: 0; background: #f5f6f8; color: var(--ink);
  font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 58rem; margin: 2rem auto; padding: 2rem 2.5rem; background: #fff;
  border: 1px solid var(--line); border-radius: 12px; }
h1 { font-size: 1.6rem; margin: 0 0 .3rem; }
h2 { font-size: .78rem; letter-spacing: .08em; text-transform: uppercase; color: var(--muted);
  margin: 2rem 0 .8rem; padding-bottom: .4rem; border-bottom: 1px solid var(--line); }
.meta { margin: 0; color: var(--muted); font-size: .88rem; }
.meta a { color: inherit; }
.search { display: flex; flex-wrap: wrap; gap: .5rem; margin-top: 1.2rem; }
.search input { flex: 1 1 16rem; font: inherit; padding: .55rem .8rem; border: 1px solid #b8bfca; border-radius: 8px; }
.search select { font: inherit; font-size: .9rem; padding: .4rem; border: 1px solid #b8bfca; border-radius: 8px; max-width: 12rem; }
.help { color: var(--muted); font-size: .82rem; margin: .4rem 0 0; }
#status { color: var(--muted); font-size: .9rem; margin: 1rem 0 .4rem; }
ol.hits { list-style: none; padding: 0; margin: 0; }
.hit { padding: .55rem 0; border-bottom: 1px solid var(--line); }
.hit .where { font-size: .85rem; color: var(--muted); }
.hit .where b { color: var(--ink); }
.hit .time { font-variant-numeric: tabular-nums; }
.hit .text { margin: .15rem 0 0; }
.hit a { color: #1f5fa8; }
mark { background: #fff1bf; color: inherit; border-radius: 2px; }
ul.interviews { list-style: none; padding: 0; margin: 0; }
.interview { padding: .8rem 0; border-bottom: 1px solid var(--line); }
.interview .title { font-weight: 600; font-size: 1.05rem; color: var(--ink); }
.points { margin: .3rem 0 0; padding-left: 1.2rem; font-size: .92rem; }
button.more { margin-top: .8rem; font: inherit; padding: .35rem .9rem; border-radius: 8px; border: 1px solid #b8bfca; background: #fff; }
.empty { color: var(--muted); font-style: italic; }
.skipped { color: #b23a1e; font-size: .88rem; padding: .5rem 0; }
@media (max-width: 640px) { main { margin: 0; padding: 1.2rem; border: 0; border-radius: 0; } }
"""

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>iGot interviews</title>
<style>{css}</style>
</head>
<body>
<main>
<header>
<h1>iGot interviews</h1>
<p class="meta">{count} · {phrases} phrases</p>
<form class="search" role="search" onsubmit="return false">
<input id="q" type="search" placeholder="Search every interview: words in any order, or &quot;an exact phrase&quot;" autocomplete="off" autofocus aria-label="Search">
<select id="interview" aria-label="Interview"><option value="">All interviews</option></select>
<select id="speaker" aria-label="Speaker"><option value="">All speakers</option></select>
<select id="language" aria-label="Language"><option value="">All languages</option></select>
</form>
<p class="help">Case and accents don't matter: integracao finds integração. A speaker's name finds what they said.</p>
</header>
<section id="results" hidden>
<p id="status" role="status"></p>
<ol class="hits" id="hits"></ol>
<button class="more" id="more" type="button" hidden>Show more</button>
</section>
<section>
<h2>Interviews</h2>
<ul class="interviews">
{listing}
</ul>
</section>
</main>
<script id="library-data" type="application/json">{data}</script>
<script>{script}</script>
</body>
</html>
"""

# The search. Same rules as igot.outputs.library.search: every text normalised once at load into one
# string, one line per phrase; a query word is found with indexOf(" word") (a word start), which
# V8 runs over tens of megabytes in milliseconds, and the phrase it lands in is found by binary
# search over where each line starts. The search state lives in the address (#q=…&speaker=…).
SCRIPT = r"""
(() => {
'use strict';
const LIB = JSON.parse(document.getElementById('library-data').textContent).interviews;
const PAGE_SIZE = 100;
const MARKS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;
const PUNCTUATION = /[^\p{L}\p{N}\n ]+/gu;  // only runs that are not already single spaces: far fewer replacements
const norm = s => s.normalize('NFD').replace(MARKS, '').toLowerCase().replace(PUNCTUATION, ' ').replace(/\s+/g, ' ').trim();

// One structure that search reads and hits are shown from: phrase k of the whole library is
// texts[k], phrase local[k] of interview owner[k], and line k of the haystack. An interview with
// no phrases adds nothing to any of them, so it can shift no other interview's hits.
const t0 = performance.now();
const texts = [], ownerOf = [], localOf = [];
LIB.forEach((iv, i) => {
  const lines = iv.t.length ? iv.x.split('\n') : [];
  if (lines.length !== iv.t.length || iv.s.length !== iv.t.length) {  // never written so; left out rather than misread
    console.error(`iGot library: the data of "${iv.name}" is inconsistent; it is not searched.`);
    iv.t = iv.s = [];
    return;
  }
  for (let j = 0; j < lines.length; j++) { texts.push(lines[j]); ownerOf.push(i); localOf.push(j); }
  iv.speakerKeys = iv.speakers.map(n => ' ' + norm(n) + ' ');
  iv.nameKey = norm(iv.name);
});
const total = texts.length;
const owner = Int32Array.from(ownerOf), local = Int32Array.from(localOf);
// The haystack, " words of phrase one \n words of phrase two \n…": built with a few whole-string
// operations (per-phrase strings cost seconds at 300,000 phrases); none adds or drops a newline.
const all = texts.join('\n').normalize('NFD').replace(MARKS, '').toLowerCase()
  .replace(PUNCTUATION, ' ').replace(/  +/g, ' ').replace(/ ?\n ?/g, '\n').replace(/^ | $/g, '');
const hay = ' ' + all.replaceAll('\n', ' \n ') + ' ';
const starts = new Int32Array(total + 1);  // where line k starts in hay
let newlines = 0;
for (let at = hay.indexOf('\n'); at >= 0; at = hay.indexOf('\n', at + 1)) if (++newlines < total) starts[newlines] = at + 1;
if (total && newlines !== total - 1) throw new Error(`iGot library: ${newlines + 1} lines for ${total} phrases`);
starts[total] = hay.length + 1;
window.igotIndexMs = performance.now() - t0;

function parseQuery(text) {
  const phrases = [];
  const rest = text.replace(/["“”«»„]([^"“”«»„]*)["“”«»„]?/g, (_, p) => { const n = norm(p); if (n) phrases.push(n); return ' '; });
  const words = [...new Set(norm(rest).split(' ').filter(Boolean))];
  return {words, phrases};
}

function phraseAt(offset) {  // the last phrase starting at or before offset
  let lo = 0, hi = total - 1;
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (starts[mid] <= offset) lo = mid; else hi = mid - 1; }
  return lo;
}

function search(text, filter) {
  const q = parseQuery(text);
  if (!q.words.length && !q.phrases.length) return [];
  const fi = filter.interview ? norm(filter.interview) : '';
  const fs = filter.speaker ? norm(filter.speaker) : '';
  const fl = filter.language || '';
  // Per interview, which speakers' names a query word starts a word of.
  const bySpeaker = q.words.map(w => LIB.map(iv => iv.t.length ? iv.speakerKeys.map(n => n.includes(' ' + w)) : []));
  const needles = q.words.map(w => ' ' + w).concat(q.phrases.map(p => ' ' + p + ' '));
  const ok = k => {
    const i = owner[k], iv = LIB[i];
    if (fi && !iv.nameKey.includes(fi)) return false;
    if (fl && iv.language !== fl) return false;
    const s = iv.s[local[k]];
    if (fs && !iv.speakerKeys[s].includes(fs)) return false;
    const line = hay.slice(starts[k], starts[k + 1] - 1);
    for (let n = 0; n < needles.length; n++) {
      if (!line.includes(needles[n]) && !(n < q.words.length && bySpeaker[n][i][s])) return false;
    }
    return true;
  };
  // Drive the scan with the longest needle that only text can match; with none (a speaker's
  // name alone), look at every phrase.
  let drive = -1;
  needles.forEach((n, i) => {
    const nameToo = i < q.words.length && bySpeaker[i].some(a => a.some(Boolean));
    if (!nameToo && (drive < 0 || n.length > needles[drive].length)) drive = i;
  });
  const found = [];
  if (drive < 0) {
    for (let k = 0; k < total; k++) if (ok(k)) found.push(k);
    return found;
  }
  const needle = needles[drive];
  let at = hay.indexOf(needle);
  while (at >= 0) {
    const k = phraseAt(at);
    if (ok(k)) found.push(k);
    at = hay.indexOf(needle, starts[k + 1]);
  }
  return found;
}

// Highlight: normalise the phrase character by character, remembering where each came from.
function marks(text, q) {
  let out = '', where = [];
  for (let i = 0; i < text.length;) {
    const ch = String.fromCodePoint(text.codePointAt(i));
    const piece = ch.normalize('NFD').replace(MARKS, '') ? (norm(ch) || ' ') : '';  // a lone accent: dropped
    for (const c of piece) {
      if (c === ' ' && (!out || out.endsWith(' '))) continue;
      out += c; where.push(i);
    }
    i += ch.length;
  }
  if (out.endsWith(' ')) { out = out.slice(0, -1); where.pop(); }
  const h = ' ' + out + ' ', spans = [];
  const add = (needle, whole) => {
    for (let at = h.indexOf(' ' + needle); at >= 0; at = h.indexOf(' ' + needle, at + 1)) {
      const end = at + 1 + needle.length;
      if (whole && h[end] !== ' ') continue;
      const last = where[end - 2];
      spans.push([where[at], last + String.fromCodePoint(text.codePointAt(last)).length]);
    }
  };
  q.words.forEach(w => add(w, false));
  q.phrases.forEach(p => add(p, true));
  spans.sort((a, b) => a[0] - b[0]);
  const merged = [];
  for (const s of spans) {
    if (merged.length && s[0] <= merged[merged.length - 1][1]) merged[merged.length - 1][1] = Math.max(s[1], merged[merged.length - 1][1]);
    else merged.push(s);
  }
  return merged;
}

const esc = s => s.replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
const clock = s => {
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = s % 60;
  return (h ? h + ':' + String(m).padStart(2, '0') : String(m)) + ':' + String(sec).padStart(2, '0');
};
const $ = id => document.getElementById(id);

function hitHtml(k, q) {
  const iv = LIB[owner[k]], j = local[k], text = texts[k], sec = iv.t[j];
  let shown = '', last = 0;
  for (const [a, b] of marks(text, q)) { shown += esc(text.slice(last, a)) + '<mark>' + esc(text.slice(a, b)) + '</mark>'; last = b; }
  shown += esc(text.slice(last));
  const who = iv.speakers[iv.s[j]];
  const video = iv.link ? `<a class="video" href="${esc(iv.link[0] + sec + iv.link[1])}" target="_blank" rel="noopener">video at ${clock(sec)}</a>` : '';
  return `<li class="hit"><div class="where"><b>${esc(iv.name)}</b> · <span class="time">${clock(sec)}</span>` +
    (who ? ` · <span class="who">${esc(who)}</span>` : '') + `</div><p class="text">${shown}</p>` +
    `<div class="where">${video}${video ? ' · ' : ''}<a class="page" href="${esc(iv.page + '#p-' + j)}">in the transcript</a></div></li>`;
}

let current = [], shownCount = 0, currentQuery = null;
function showMore() {
  const next = current.slice(shownCount, shownCount + PAGE_SIZE);
  $('hits').insertAdjacentHTML('beforeend', next.map(k => hitHtml(k, currentQuery)).join(''));
  shownCount += next.length;
  $('more').hidden = shownCount >= current.length;
}

// The search in the address, index.html#q=pix+"não+confiava"&speaker=Ana: a search can be
// bookmarked and sent, and the back button goes back to the search before.
const FIELDS = ['q', 'interview', 'speaker', 'language'];
const state = () => ({q: $('q').value, interview: $('interview').value, speaker: $('speaker').value, language: $('language').value});
function fromAddress() {
  const p = new URLSearchParams(location.hash.replace(/^#/, ''));
  return Object.fromEntries(FIELDS.map(f => [f, p.get(f) || '']));
}
function address(s) {
  const p = new URLSearchParams();
  for (const f of FIELDS) if (s[f]) p.set(f, s[f]);
  const h = p.toString();
  return location.href.split('#')[0] + (h ? '#' + h : '');
}
let typedAt = -Infinity;
function remember(typing) {
  const url = address(state());
  if (url === location.href) return;
  // One history entry per search typed, not one per letter: a pause of 1.5 s starts the next.
  const now = performance.now(), same = typing && now - typedAt < 1500;
  if (typing) typedAt = now;
  history[same ? 'replaceState' : 'pushState'](null, '', url);
}
function choose(id, value) {  // a name from a sent link may not be in this library's list: add it
  const select = $(id);
  if (value && ![...select.options].some(o => o.value === value)) options(id, [[value, value]]);
  select.value = value;
}
function show(s) {
  $('q').value = s.q;
  for (const f of FIELDS.slice(1)) choose(f, s[f]);
  return run('address');
}

function run(how) {
  const text = $('q').value;
  const filter = {interview: $('interview').value, speaker: $('speaker').value, language: $('language').value};
  if (how !== 'address') remember(how === 'typing');
  const t = performance.now();
  current = search(text, filter);
  const ms = performance.now() - t;
  currentQuery = parseQuery(text);
  $('hits').innerHTML = '';
  shownCount = 0;
  const any = currentQuery.words.length || currentQuery.phrases.length;
  $('results').hidden = !any;
  if (!any) return {count: 0, ms};
  showMore();
  const n = current.length, ivs = new Set(current.map(k => owner[k])).size;
  $('status').textContent = n ? `${n} phrase${n === 1 ? '' : 's'} in ${ivs} interview${ivs === 1 ? '' : 's'}` : 'No phrase matches.';
  window.igotLast = {count: n, ms};
  return window.igotLast;
}

// Filters, from the data.
function options(id, values) {
  for (const [v, label] of values) $(id).insertAdjacentHTML('beforeend', `<option value="${esc(String(v))}">${esc(label)}</option>`);
}
options('interview', [...new Set(LIB.map(iv => iv.name))].map(n => [n, n]));
options('speaker', [...new Set(LIB.flatMap(iv => iv.spoken))].sort((a, b) => a.localeCompare(b)).map(n => [n, n]));
options('language', [...new Set(LIB.map(iv => iv.language).filter(Boolean))].sort().map(l => [l, l]));

let timer = 0;
$('q').addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(() => run('typing'), 120); });
for (const id of FIELDS.slice(1)) $(id).addEventListener('change', () => run('filter'));
$('more').addEventListener('click', showMore);
// Back, forward, or an address typed or followed: show the search it holds.
const follow = () => { const s = fromAddress(); if (FIELDS.some(f => s[f] !== state()[f])) show(s); };
window.addEventListener('popstate', follow);
window.addEventListener('hashchange', follow);
window.igotSearch = (text, filter) => search(text, Object.assign({interview: '', speaker: '', language: ''}, filter || {})).length;
window.igotRun = run;
if (FIELDS.some(f => fromAddress()[f])) show(fromAddress());
else if ($('q').value) run('address');  // the browser kept a query typed before the address held it
})();
"""


def hit_line(h: Hit, bold: bool = False) -> str:
    """One hit on one line: interview, time, speaker, the phrase (matches in bold on a terminal), link."""
    text, last = "", 0
    for a, b in h.marks:
        part = h.text[a:b]
        text += h.text[last:a] + (f"\033[1m{part}\033[0m" if bold else part)
        last = b
    text += h.text[last:]
    who = f"{h.speaker}: " if h.speaker else ""
    meaning = " (by meaning)" if h.how == "meaning" else ""
    return f"{h.interview} · {format_clock(h.start)} · {who}{text}{meaning} · {h.link}"
