"""The Review list in the workspace: an interview's doubtful parts (igot.outputs.review) as the
page lists them, and how many are left in each interview of the library page."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Sequence

from igot.outputs import review
from igot.outputs.library import Interview
from igot.outputs.store import Library, LibraryError, Opened
from igot.runtime.files import write_atomic
from igot.text import format_clock

COUNTS = Path(".igot") / "review-left.json"  # in the library folder: what the counts were, by file


def review_view(opened: Opened, glossary: Sequence[str]) -> dict:
    """What the interview's Review panel draws: its items in the order said, with the version a
    change must name, and how many doubtful words are listed and why (`words`)."""
    found = review.items(opened.transcript, glossary)
    return {"version": opened.version, "left": len(found), "words": review.doubtful_words(found),
            "items": [{**item, "clock": format_clock(item["start"])} for item in review.as_dicts(found)]}


class LeftCounts:
    """How many items are left in each interview, for the library page. Counting reads the whole
    interview (its words): ~0.1-0.3 s an hour, so each count is kept, here and in COUNTS, by the
    file's time and size, the glossary's version and the doubtful words' threshold, and made
    again only when one changed."""

    def __init__(self, lib: Library) -> None:
        self.lib = lib
        self.path = lib.folder / COUNTS
        self.lock = threading.Lock()
        self.kept: dict[str, list] = self._read()

    def _read(self) -> dict[str, list]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        ok = isinstance(data, dict) and all(isinstance(v, list) and len(v) == 2 and isinstance(v[1], int) for v in data.values())
        return data if ok else {}  # anyone may write in the folder: a file not as written is counted anew

    def counts(self, interviews: Sequence[Interview]) -> dict[str, int]:
        glossary = self.lib.kept_glossary()
        out: dict[str, int] = {}
        with self.lock:
            changed = False
            for iv in interviews:
                stem = iv.path.stem
                # the rule is in the key: counts an older rule made are counted anew
                key = f"{iv.stamp}|{glossary.version}|{review.ReviewOptions().below}"
                entry = self.kept.get(stem)
                if entry is None or entry[0] != key:
                    try:
                        left = review.left(self.lib.open(stem).transcript, glossary.terms)
                    except LibraryError:
                        continue  # changed or damaged since it was listed: the next listing says so
                    self.kept[stem], changed = [key, left], True
                out[stem] = self.kept[stem][1]
            if changed:
                try:
                    write_atomic(self.path, json.dumps(self.kept))
                except OSError:
                    pass  # a read-only library is counted again next time
        return out
