"""The interview library: the interviews of an output folder, and their one page.

`load_library(folder)` reads every interview JSON in the folder (through a cache of what search
needs of each); `write_library(folder)` (re)writes `folder/index.html`: one entry per interview,
newest first, and a search box that finds phrases across all of them, in the browser, from file://.
The same search for the terminal and the notebook, and its rules, are igot.search.words.
"""

from __future__ import annotations

import html
import json
import os
from dataclasses import dataclass, field, fields
from functools import cached_property, lru_cache
from datetime import datetime, timezone
from pathlib import Path
from stat import S_ISLNK, S_ISREG
from typing import Collection, Iterable, Mapping, Optional, Sequence

import orjson

from igot.errors import IgotError, install_hint
from igot.links import link_at
from igot.outputs import export
from igot.runtime.files import write_atomic
from igot.text import clean_text, format_clock
from igot.transcript import SCHEMA_VERSION, Transcript, problem

INDEX = "index.html"
PROMPT_FILE = "summary-prompt.txt"  # in the library folder: the prompt its summaries are written with
CACHE = Path(".igot") / "library-cache.json"
CACHE_VERSION = 3  # 2: per file [stamp, search data, why it was skipped]; 3: read by transcript.problem()
SUMMARY_POINTS = 3  # how many summary points each entry shows


# --- the interviews in a folder ---------------------------------------------------------------
@dataclass
class Interview:
    transcript: Transcript
    path: Path  # its JSON file
    date: datetime  # when it was transcribed: info["created"], else the JSON file's time
    stamp: Optional[list[int]] = None  # the file's time (ns) and size when it was read
    # What the word search (igot.search.words) and the library page made of it, made once per
    # interview read and kept with it: a server searching the same library again, or writing its
    # page after one interview changed, reads them (most of a search's time; ~0.4 s of the page's).
    search_cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

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
    def page_uri(self) -> str:
        return self.page.resolve().as_uri()


@dataclass
class Skipped:
    """A JSON in the folder that looks like an interview but cannot be listed."""

    path: Path
    why: str  # what is wrong with it and what to do, in words

    def line(self) -> str:
        return f"Skipped {self.path.name}: {self.why}."


# What to do about a damaged interview JSON: its recording gives it again.
REDO = "run igot run again on its recording (finished steps are reused), or move the file out of the folder"
# Larger than any interview iGot writes (ten hours take ~20 MB): such a file is not read at all.
MAX_BYTES = 256 * 1024 * 1024


def load_library(folder: Path | str, known: Iterable[Interview] = (),
                 leave: Collection[Path] = ()) -> tuple[list[Interview], list[Skipped]]:
    """Every interview JSON directly in `folder`, newest first, its phrases without their words,
    and the interview JSONs that could not be read (old or damaged), each with why. Other JSON
    files (not interviews) are passed over.

    What search needs of each file is kept in OUT/.igot/library-cache.json, by the file's time
    and size: with 200 one-hour interviews, reading every JSON again would cost each run ~10 s.
    `known`: the interviews of an earlier listing (a server's): those whose file is unchanged are
    kept as they are, with what searching them built (~4 s to build again for 200 hours).
    `leave`: files neither read nor listed (a change is about to replace them: reading an hour's
    JSON takes ~0.1 s)."""
    folder = Path(folder)
    try:
        real_folder = folder.resolve(strict=True)
    except (OSError, RuntimeError):
        real_folder = None  # gone while we looked: nothing in it is read
    # By name (the files are all in `folder`): a server lists 200 interviews after every change,
    # and paths cost more to sort and look up than the rest of a listing of known interviews.
    before = {iv.path.name: iv for iv in known}
    left = {path.name for path in leave}
    # Read only when a file is new to `known`: the interviews a server knows are read again from
    # their own files when they change (one file, after a highlight saved), the cache left as it is.
    cache: Optional[dict[str, list]] = None if before else _read_cache(folder / CACHE)
    seen: dict[str, list] = {}
    interviews, skipped = [], []
    for found in _json_files(folder):
        name = found.name
        if name in left:
            if cache is not None and name in cache:
                seen[name] = cache[name]  # as it was: the cache is not written for it
            continue
        try:
            stat = found.stat(follow_symlinks=False)
        except OSError:
            continue  # removed while we looked
        kept = before.get(name)
        path = kept.path if kept is not None else folder / name
        outside = _not_inside(path, stat, real_folder)
        if outside:
            skipped.append(Skipped(path, outside))
            continue
        stamp = [stat.st_mtime_ns, stat.st_size]
        if kept is not None and kept.stamp == stamp:
            interviews.append(kept)
            continue
        if kept is None and cache is None:
            cache = _read_cache(folder / CACHE)
        entry = (cache or {}).get(name)
        data, why = (entry[1], entry[2]) if entry and entry[0] == stamp else _search_data(path, stat.st_size)
        seen[name] = [stamp, data, why]
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


def _json_files(folder: Path) -> list[os.DirEntry]:
    """The JSON files in `folder`, in order (as folder.glob("*.json") finds them)."""
    try:
        with os.scandir(folder) as entries:
            found = [e for e in entries if os.path.normcase(e.name).endswith(".json")]
    except OSError:  # no folder (gone while we looked)
        return []
    return sorted(found, key=lambda e: os.path.normcase(e.name))


def load_interviews(folder: Path | str) -> list[Interview]:
    """The interviews of load_library(), for searching."""
    return load_library(folder)[0]


def sort_newest_first(interviews: list[Interview]) -> list[Interview]:
    """The library's order, the same on the page and in `igot search`."""
    return sorted(interviews, key=lambda i: (i.date, i.name), reverse=True)


def _not_inside(path: Path, stat: os.stat_result, folder: Optional[Path]) -> Optional[str]:
    """Why `path` (found in the library folder, `stat` its lstat) is not read, or None: a library
    folder may be shared, so only a plain file that is itself in the folder is read; a link could
    show and search any file on the computer."""
    if S_ISLNK(stat.st_mode):
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            return "it is a link to a file that is not there; remove the link"
        if folder is None or real.parent != folder:
            return "it is a link to a file outside the library folder; move the file itself into the folder"
        return "it is a link to another file of the folder, not a file itself; remove the link"
    if not S_ISREG(stat.st_mode):
        return "it is not a file (a folder or a device?); rename it or move it out of the folder"
    if stat.st_size > MAX_BYTES:
        return f"it is {stat.st_size // 1024**2} MB, larger than any interview; move it out of the folder"
    return None


def _search_data(path: Path, size: int) -> tuple[Optional[dict], Optional[str]]:
    """(the transcript in `path` without what search never reads (words, turns, links), None),
    (None, None) when the file is not an interview, or (None, what is wrong) when it is one that
    cannot be read."""
    try:
        raw = _read_plain_file(path)
        if raw is None:
            return None, "it was replaced by a link or a device while it was read; move the file itself into the folder"
        if len(raw) > MAX_BYTES:
            return None, f"it is larger than any interview ({size // 1024**2} MB or more); move it out of the folder"
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        return None, f"it is not text (damaged?); {REDO}"
    except ValueError as err:
        where = f" at line {err.lineno}" if isinstance(err, json.JSONDecodeError) else ""
        return None, f"it is not valid JSON ({getattr(err, 'msg', err)}{where}: cut short, or edited by hand?); {REDO}"
    except RecursionError:
        return None, f"it is not an interview: its JSON is nested thousands deep; {REDO}"
    except OSError as err:
        return None, f"it cannot be read ({err.strerror or err}); check the file's permissions"
    if not isinstance(data, dict) or not ("source" in data and "phrases" in data):
        return None, None  # some other JSON: not an interview
    version = data.get("schema_version", 0)
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        return None, (f"it was written by a newer iGot (transcript schema {version}; this one reads {SCHEMA_VERSION}): "
                      f"update iGot ({install_hint()})")
    # The whole file is checked, words too, before they are left out: a file listed here opens in
    # the workspace, by the same rules (Transcript.from_dict).
    why = problem(data)
    if why:
        return None, f"{why}; {REDO}"
    phrases = [{k: p[k] for k in ("speaker", "start", "end", "text")} for p in data["phrases"]]
    # Only what a Transcript reads is kept (and cached): a field a stranger added is never written back.
    kept = {k: data[k] for k in _FIELDS if k in data}
    return {**kept, "turns": [], "phrases": phrases}, None


_FIELDS = tuple(f.name for f in fields(Transcript))
# Not following a link and not waiting on a pipe, where the system has the flags (Windows has not).
_PLAIN_OPEN = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def _read_plain_file(path: Path) -> Optional[bytes]:
    """The bytes of `path` (MAX_BYTES and one more at most), or None when it is no longer a plain
    file: it may have been swapped for a link since it was looked at."""
    fd = os.open(path, _PLAIN_OPEN)
    with os.fdopen(fd, "rb") as f:
        if not S_ISREG(os.fstat(fd).st_mode):
            return None
        return f.read(MAX_BYTES + 1)


def _read_cache(path: Path) -> dict[str, list]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        files = data["files"] if data.get("version") == CACHE_VERSION and isinstance(data.get("files"), dict) else {}
        # The cache is in the folder too: an entry of another shape is read again from its file.
        return {name: entry for name, entry in files.items() if isinstance(entry, list) and len(entry) == 3
                and isinstance(entry[1], (dict, type(None))) and isinstance(entry[2], (str, type(None)))}
    except (OSError, ValueError, KeyError, AttributeError):
        return {}


def _write_cache(path: Path, files: dict[str, list]) -> None:
    """Best effort: a folder we cannot write to is still searched, only more slowly."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({"version": CACHE_VERSION, "files": files}, ensure_ascii=False,
                                              separators=(",", ":")))
    except (OSError, ValueError):
        pass


def written(t: Transcript, path: Path) -> Interview:
    """The Interview a listing holds for `t`, just written to `path` by this process (a server's own
    change: the listing is brought up to date without reading the file back)."""
    stat = path.stat(follow_symlinks=False)
    return Interview(t, path, _date({"info": t.info}, path), [stat.st_mtime_ns, stat.st_size])


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
    return {"interviews": [_entry_data(iv, folder) for iv in interviews]}


def _entry_data(iv: Interview, folder: Path, ids: Optional[list[str]] = None,
                facts: Optional[export.Facts] = None) -> dict:
    """`ids`, `facts`: the interview's speaker_ids() and export.header_facts(), when already made
    (each reads every phrase)."""
    t = iv.transcript
    ids = t.speaker_ids() if ids is None else ids
    facts = facts or export.header_facts(t, ids)
    points = export.summary_items(t, None)[:SUMMARY_POINTS]
    return {
        "name": iv.name,
        "date": iv.date.date().isoformat(),
        "duration": format_clock(t.length()) if t.length() else "",
        "language": t.language or "",
        "speakers": [clean_text(t.speaker_name(s)) if (t.speakers or s) else "" for s in ids],
        "spoken": [name for _, name in facts.speakers],
        "summary": [clean_text(p if isinstance(p, str) else p.text) for p in points],
        "page": _relative(iv.page, folder),
        "video": video_link(t, 0) if (t.source.url or t.source.path) else None,
        "link": _link_parts(t),
        "t": [int(max(0.0, p.start)) for p in t.phrases],
        "s": [ids.index(p.speaker) for p in t.phrases],
        "x": "\n".join([_clean_phrase(p.text) for p in t.phrases]),
    }


# A phrase's clean text, kept: the page written after a change joins every phrase of the changed
# interview (an hour: ~1.7 ms, ~0.3 ms kept).
_clean_phrase = lru_cache(maxsize=export.PHRASES_KEPT)(clean_text)


def _relative(path: Path, folder: Path) -> str:
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_uri()


def _script_json(data: dict) -> str:
    """JSON safe inside <script>: no '</script>' or '<!--' can end or confuse the element."""
    try:
        text = orjson.dumps(data).decode("utf-8")  # json.dumps's text (compact, UTF-8), ~10x sooner
    except orjson.JSONEncodeError:  # what orjson refuses (a lone surrogate) is json's to write, or refuse
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def library_html(interviews: list[Interview], folder: Path, skipped: Sequence[Skipped] = ()) -> str:
    """The library page: the interviews, newest first, and a search over all their phrases; a
    line for each interview file that could not be read."""
    parts = [_page_parts(iv, folder) for iv in interviews]
    listing = "\n".join(entry for entry, _ in parts) or '<li class="empty">No interviews yet: run <code>igot run</code> and they appear here.</li>'
    if skipped:
        listing += "\n" + "\n".join(f'<li class="skipped">{html.escape(s.line())}</li>' for s in skipped)
    count = f"{len(interviews)} interview{'s' * (len(interviews) != 1)}"
    phrases = sum(len(iv.transcript.phrases) for iv in interviews)
    data = '{"interviews":[' + ",".join(chunk for _, chunk in parts) + "]}"  # what _script_json(page_data()) gives
    return PAGE.format(count=count, phrases=f"{phrases:,}", listing=listing, data=data, script=SCRIPT, css=LIBRARY_CSS)


def _page_parts(iv: Interview, folder: Path) -> tuple[str, str]:
    """An interview's entry in the page's list and its data for the page's search (script-safe
    JSON): made once per interview read, so writing the page after one interview changed draws
    that one alone."""
    key = ("library page", str(folder))
    kept = iv.search_cache.get(key)
    if kept is None:
        e = html.escape
        t = iv.transcript
        ids = t.speaker_ids()
        facts = export.header_facts(t, ids)
        meta = [e(iv.date.date().isoformat())]
        meta += export.facts_line(facts, e, lambda url: f'<a href="{e(url)}" target="_blank" rel="noopener">Open the video</a>',
                                  lambda _, name: e(name))
        points = export.summary_items(t, None)[:SUMMARY_POINTS]
        summary = "".join(f"<li>{e(clean_text(p if isinstance(p, str) else p.text))}</li>" for p in points)
        entry = (f'<li class="interview"><a class="title" href="{e(_relative(iv.page, folder))}">{e(iv.name)}</a>'
                 f'<p class="meta">{" · ".join(meta)}</p>' + (f'<ul class="points">{summary}</ul>' if summary else "") + "</li>")
        kept = iv.search_cache[key] = (entry, _script_json(_entry_data(iv, folder, ids, facts)))
    return kept


def library_page(folder: Path | str, changed: Optional[Mapping[Path, Transcript]] = None,
                 known: Iterable[Interview] = ()) -> str:
    """The page of `folder` as it is once each transcript in `changed` is written to its path
    (what igot.outputs.store.save writes together with those transcripts' files). `known`: the
    interviews a server has read already (those unchanged are not read again: 200 take ~1.5 s)."""
    folder, changed = Path(folder), changed or {}
    interviews, skipped = load_library(folder, known, changed.keys()) if folder.is_dir() else ([], [])
    interviews += [Interview(t, path, _date({"info": t.info}, path)) for path, t in changed.items()]
    return library_html(sort_newest_first(interviews), folder, skipped)


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


# The page's style, its HTML around the data, and its search (igot/outputs/pages/).
LIBRARY_CSS = export.page_code("library.css")
PAGE = export.page_code("library.html")
SCRIPT = export.page_code("library.js")
