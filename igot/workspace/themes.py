"""The Themes board: the library's highlights (or one tag's) grouped by meaning into themes
(igot.search.themes), and the moves the researcher makes between them, kept.

The board is worked out from the highlights each time. Once a highlight is moved, the board as
it then stands is kept in OUT/.igot/themes.json (one board per tag, "" for every highlight),
written whole or not at all, and drawn from there: a highlight made since joins themes of its
own, one deleted leaves. Every highlight is in exactly one theme.

Like an interview, a board has a version: a hash of the kept file, the highlights it is drawn
from and the model that grouped them. A move names the version it was made on; a move on an
older one (another tab, a highlight saved meanwhile) is refused with "reload", never applied.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np

from igot.outputs import highlights
from igot.outputs.library import Interview
from igot.runtime import changes
from igot.runtime.files import write_atomic
from igot.search import themes as grouping
from igot.text import clean_text
from igot.outputs.store import RELOAD, NotFound, Stale
from igot.workspace.interviews import WorkspaceError

THEMES_FILE = Path(".igot") / "themes.json"
STORE_VERSION = 1
NEW_THEME = "new"  # where a move may send a highlight: a theme of its own
BY_TAG_LINE = "Themes are grouped by tag here: grouping by meaning needs the library's meaning index and its model. {why}"


@dataclass
class Card:
    """A highlight on the board."""

    key: str  # "<interview stem>/<highlight id>": unique in the library
    stem: str
    id: str
    interview: str
    speaker: str
    colour: int
    start: float
    end: float
    quote: str
    tags: list[str]


@dataclass
class Column:
    id: str
    name: str
    cards: list[Card] = field(default_factory=list)
    interviews: int = 0
    people: int = 0
    tag: Optional[str] = None  # the tag it stands for, on a board grouped by tag


@dataclass
class Board:
    tag: str
    version: str
    themes: list[Column]
    by_meaning: bool
    line: str  # what grouping by meaning needs, or that the kept file was unreadable ("" when neither)


def cards(interviews: Sequence[Interview], tag: str = "") -> list[Card]:
    """Every highlight of the library (or with `tag`, any case), interview by interview, in order of time."""
    found = []
    for iv in interviews:
        t = iv.transcript
        ids = t.speaker_ids()
        for h in sorted(t.highlights or [], key=lambda h: (h.start, h.end)):
            if tag and not highlights.has_tag(h, tag):
                continue
            speaker = t.highlight_speaker(h)
            found.append(Card(f"{iv.path.stem}/{h.id}", iv.path.stem, h.id, iv.name,
                              clean_text(t.speaker_name(speaker)) if (t.speakers or speaker) else "",
                              ids.index(speaker) if speaker in ids else 0, h.start, h.end, clean_text(h.quote), list(h.tags)))
    return found


def theme_id(keys: Sequence[str]) -> str:
    """A worked-out theme's id: the same highlights give the same id, so a move names it."""
    return "t-" + hashlib.sha1("\n".join(sorted(keys)).encode()).hexdigest()[:10]


def scope(tag: str) -> str:
    return highlights.tag_key(tag) if tag else ""


class Themes:
    """The boards of one library folder: drawn, and a highlight moved, one move at a time."""

    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / THEMES_FILE

    def _read(self) -> tuple[bytes, dict, str]:
        """(the file's bytes, its boards, a line when it could not be read)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return b"", {}, ""
        except OSError as err:
            return b"", {}, f"The kept themes ({THEMES_FILE}) cannot be read ({err.strerror or err}): drawn afresh."
        try:
            kept = json.loads(data)
            if kept.get("version") != STORE_VERSION or not isinstance(kept.get("boards"), dict):
                raise ValueError("not a themes file of this iGot")
            return data, kept["boards"], ""
        except (ValueError, AttributeError) as err:
            return data, {}, f"The kept themes ({THEMES_FILE}) are damaged ({err}): drawn afresh; a move writes them again."

    def board(self, interviews: Sequence[Interview], tag: str,
              vectors: Callable[[list[str]], tuple[Optional[np.ndarray], str]], model: str = "") -> Board:
        """The board of `tag` ("" for every highlight). `vectors(texts)`: the quotes' unit vectors,
        or (None, why) when there is no model, and the board is grouped by tag instead."""
        data, boards, damaged = self._read()
        return self._draw(interviews, tag, vectors, model, data, boards, damaged)

    def _draw(self, interviews, tag, vectors, model, data, boards, damaged) -> Board:
        found = cards(interviews, tag)
        by_key = {c.key: c for c in found}
        kept = boards.get(scope(tag), {}).get("themes", []) if isinstance(boards.get(scope(tag)), dict) else []
        groups: list[Group] = []
        placed: set[str] = set()
        for theme in kept if isinstance(kept, list) else []:
            if not isinstance(theme, dict) or not isinstance(theme.get("id"), str) or not isinstance(theme.get("highlights"), list):
                continue
            members = [by_key[k] for k in theme["highlights"] if isinstance(k, str) and k in by_key and k not in placed]
            if members:
                groups.append(Group(theme["id"], members, theme.get("tag") if isinstance(theme.get("tag"), str) else None))
                placed.update(c.key for c in members)
        rest = [c for c in found if c.key not in placed]
        found_vectors, why = vectors([c.quote for c in rest]) if rest else (None, "")
        if rest and found_vectors is not None:
            quotes = [grouping.Quote(c.quote, c.interview, c.speaker, c) for c in rest]
            groups += [Group(theme_id([q.ref.key for q in t.quotes]), [q.ref for q in t.quotes])
                       for t in grouping.group_themes(quotes, found_vectors)]
        else:
            groups += by_first_tag(rest)
        columns = named(groups)
        digest = hashlib.sha256(data + "\n".join([model, tag, *sorted(by_key)]).encode()).hexdigest()[:16]
        line = damaged or (BY_TAG_LINE.format(why=why) if rest and found_vectors is None and why else "")
        return Board(tag, digest, columns, all(col.tag is None for col in columns), line)

    def move(self, interviews: Sequence[Interview], tag: str, version: object, key: object, to: object,
             vectors: Callable[[list[str]], tuple[Optional[np.ndarray], str]], model: str = "") -> Board:
        """Highlight `key` moved to theme `to` (or NEW_THEME) on the board of `tag`, made on
        `version`; the board kept whole. Stale when the board changed since; nothing written
        when the move names no highlight or theme of the board."""
        if not isinstance(version, str) or not version:
            raise WorkspaceError("The move does not say which version of the themes it was made on.", RELOAD)
        if not isinstance(key, str) or not isinstance(to, str):
            raise WorkspaceError("A move needs the highlight and the theme it goes to.", "Move it from the Themes board.")
        with changes.locked(self.folder):  # every process's moves, one at a time
            data, boards, damaged = self._read()
            now = self._draw(interviews, tag, vectors, model, data, boards, damaged)
            if version != now.version:
                raise Stale("The themes changed since this page drew them (a highlight saved, or a move in another tab?): "
                            "nothing was moved.", RELOAD)
            source = next((col for col in now.themes if any(c.key == key for c in col.cards)), None)
            if source is None:
                raise NotFound(f"No highlight {key!r} on this board.", RELOAD)
            if to != NEW_THEME and all(col.id != to for col in now.themes):
                raise NotFound(f"No theme {to!r} on this board.", RELOAD)
            arranged = [{"id": col.id, "highlights": [c.key for c in col.cards if c.key != key],
                         **({"tag": col.tag} if col.tag is not None else {})} for col in now.themes]
            if to == NEW_THEME:
                arranged.append({"id": "t-" + uuid.uuid4().hex[:10], "highlights": [key]})
            else:
                next(t for t in arranged if t["id"] == to)["highlights"].append(key)
            boards = dict(boards)
            boards[scope(tag)] = {"themes": [t for t in arranged if t["highlights"]]}
            text = json.dumps({"version": STORE_VERSION, "boards": boards}, ensure_ascii=False, indent=1)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, text)
            return self._draw(interviews, tag, vectors, model, text.encode(), boards, "")


@dataclass
class Group:
    """A theme before it is named: its id, its highlights, and the tag it stands for when the
    board is grouped by tag (then that is its name)."""

    id: str
    cards: list[Card]
    tag: Optional[str] = None


def by_first_tag(found: Sequence[Card]) -> list[Group]:
    """Without a model: one theme per first tag (untagged last), each highlight once."""
    groups: dict[str, list[Card]] = {}
    for c in found:
        groups.setdefault(highlights.tag_key(c.tags[0]) if c.tags else "", []).append(c)
    return [Group(theme_id([c.key for c in groups[k]]), groups[k], groups[k][0].tags[0] if k else highlights.UNTAGGED)
            for k in sorted(groups, key=lambda k: (k == "", k))]


def named(groups: Sequence[Group]) -> list[Column]:
    """Each theme named by its tag, else by its most telling words (igot.search.themes), counted
    (interviews, people), biggest first."""
    words = grouping.telling_words([[c.quote for c in g.cards] for g in groups])
    columns = []
    for g, name in zip(groups, words):
        counted = grouping.Theme("", [grouping.Quote(c.quote, c.interview, c.speaker) for c in g.cards])
        columns.append(Column(g.id, g.tag or " · ".join(name) or g.cards[0].quote[:40], list(g.cards),
                              counted.interviews, counted.people, g.tag))
    return sorted(columns, key=lambda col: (-len(col.cards), -col.interviews, col.name))
