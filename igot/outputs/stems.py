"""An interview's stem: the name of its files in the library folder (STEM.json, STEM.html …).

A new interview takes a stem nothing in the folder holds, so it never replaces another interview,
a file of the user's or one of iGot's own; running the same recording again finds the stem it has.
The store (igot.outputs.store) chooses it under the library's lock, with the save that writes it.
"""

from __future__ import annotations

import os
import re
import stat
import unicodedata
from pathlib import Path
from typing import Optional

import orjson

from igot.asr import glossary as glossary_module
from igot.outputs import export, library
from igot.runtime import changes
from igot.transcript import Source, Transcript


def stem_for(folder: Path | str, t: Transcript) -> str:
    """The stem `t` is saved under in the library `folder`: the one its recording already has
    there under this title (running the same file or link again updates its interview), else a
    new one that nothing in the folder holds: the title's slug (export.slugify), "-2", "-3" … after
    it when taken. Taken: any file named STEM or STEM.anything (an interview's exports, the user's
    own plan.docx), the phrases' vectors kept for STEM, and the names of iGot's own files
    (index.html is the library page). So a new interview never replaces another, nor a file of
    the user's. Call it under changes.locked(folder), with the save that writes the stem: two
    runs at once must not both find one stem free."""
    folder = Path(folder)
    base = export.slugify(t.source.title)
    for stem in _namesakes(folder, base, export.ascii_slug(t.source.title)):
        earlier = _source_in(folder / f"{stem}.json")
        if earlier is not None and same_recording(earlier, t.source) and export.slugify(earlier.title) == base:
            return stem
    held = _held(folder)
    stem, n = base, 1
    while _folded(stem) in held:
        n += 1
        stem = f"{base}-{n}"
    return stem


def same_recording(a: Source, b: Source) -> bool:
    """Whether two sources are one recording: the same file (its full path), or the same video
    link for one downloaded. A source with neither (a transcript made by hand) is no known one."""
    return _recording(a) is not None and _recording(a) == _recording(b)


def _recording(s: Source) -> Optional[tuple[str, str]]:
    # The path first: a file given a video link (--video-url) is still that file.
    return ("file", s.path) if s.path else ("link", s.url) if s.url else None


def other_recording(a: Source, b: Source) -> bool:
    """Known to be two recordings (a source made by hand is not known to be another)."""
    return None not in (_recording(a), _recording(b)) and not same_recording(a, b)


def _folded(name: str) -> str:
    """A name as a file system may compare it: macOS keeps names decomposed (NFD), macOS and
    Windows ignore case."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", name).casefold())


def _held(folder: Path) -> set[str]:
    """Every stem something in `folder` holds (folded): each entry's name and each part of it
    before a dot ("plan.tar.gz" holds "plan" and "plan.tar"), the stems with vectors kept, and
    iGot's own files' stems."""
    held = {_folded(Path(name).stem) for name in (library.INDEX, glossary_module.FILE, library.PROMPT_FILE)}
    for where, only_json in ((folder, False), (folder / changes.STATE / changes.EMBEDDINGS, True)):
        try:
            names = os.listdir(where)
        except OSError:  # no such folder yet
            continue
        for name in names:
            name = _folded(name)
            if only_json:
                if name.endswith(".json"):
                    held.add(name[:-len(".json")])
                continue
            held.add(name)
            held.update(name[:i] for i, c in enumerate(name) if c == ".")
    return held


def _namesakes(folder: Path, base: str, legacy: str) -> list[str]:
    """The stems of the interviews in `folder` a transcript whose title gives `base` may have been
    saved under, in this order: `base`; `legacy`, what iGot named it before stems kept the letters
    of every script (a Russian title was "interview"); `base`-2, `base`-3 …"""
    folded, old = _folded(base), _folded(legacy)
    numbered = re.compile(re.escape(folded) + r"-([0-9]+)")
    found: list[tuple[int, str]] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    for name in names:
        if not name.endswith(".json"):
            continue
        stem = name[:-len(".json")]
        key = _folded(stem)
        match = numbered.fullmatch(key)
        if key in (folded, old) or match:
            found.append((0 if key == folded else 1 if key == old else 1 + int(match.group(1)), stem))
    return [stem for _, stem in sorted(found)]


def _source_in(path: Path) -> Optional[Source]:
    """The source an interview's JSON names, or None when it has none: read without making its
    phrases (an hour's transcript takes ~0.1 s to make, its JSON ~10 ms to parse). Never through
    a link, nor from a pipe (reading one would wait for ever): the library lists neither."""
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return None
        given = orjson.loads(path.read_bytes())["source"]
        return Source(str(given["title"]), given.get("url"), given.get("path"), given.get("kind", "file"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
