"""What the team did, newest first: the workspace's feed ("Ana tagged a highlight in Interview 3")
and who last changed a thing ("corrected by Bruno, 5 min ago").

An item names its interview (`stem`), the thing in it (a highlight's id, a phrase, "" for the
interview itself), the moment in the recording when there is one, and a short text. Kinds are the
words the page shows, kept here so every route says them alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from time import time as wall_clock
from typing import Callable, Optional

from igot.errors import IgotError
from igot.team.db import TeamDB
from igot.team.people import Person

HIGHLIGHTED = "highlighted"
TAGGED = "tagged"
NOTED = "wrote a note"
DELETED_HIGHLIGHT = "deleted highlight"
CORRECTED = "corrected"
NAMED_SPEAKERS = "named speakers"
COMMENTED = "commented"
DELETED_COMMENT = "deleted comment"
ADDED_INTERVIEW = "added interview"
DELETED_INTERVIEW = "deleted interview"
RENAMED_TAG = "renamed tag"
CHANGED_GLOSSARY = "changed glossary"
CHANGED_THEMES = "changed themes"
CHANGED_SUMMARY_PROMPT = "changed summary prompt"
UNDID = "undid"
GAVE_SPEAKER = "changed who said"
SPLIT = "split a phrase"
JOINED = "joined phrases"
REVIEWED = "reviewed"
SUMMARISED = "wrote the summary again"
SHARED = "shared a public link"  # igot.team.shares: what it shows, never its key
REVOKED_SHARE = "revoked a public link"
MADE_REPORT = "made a report"
CHANGED_REPORT = "changed a report"
DELETED_REPORT = "deleted a report"
SENT_REPORT = "sent a report to Google Drive"
KINDS = (HIGHLIGHTED, TAGGED, NOTED, DELETED_HIGHLIGHT, CORRECTED, NAMED_SPEAKERS, COMMENTED, DELETED_COMMENT,
         ADDED_INTERVIEW, DELETED_INTERVIEW, RENAMED_TAG, CHANGED_GLOSSARY, CHANGED_THEMES, CHANGED_SUMMARY_PROMPT, UNDID,
         GAVE_SPEAKER, SPLIT, JOINED, REVIEWED, SUMMARISED, SHARED, REVOKED_SHARE, MADE_REPORT, CHANGED_REPORT,
         DELETED_REPORT, SENT_REPORT)

MAX_TEXT = 500  # the feed shows a line, not the whole change
MAX_LIMIT = 1000


@dataclass(frozen=True)
class Item:
    id: int
    at: str  # ISO 8601, UTC
    name: str  # "" when no one (the server itself) did it
    email: str
    kind: str
    stem: str
    thing: str
    time: Optional[float]  # seconds into the recording
    text: str


def record(db: TeamDB, person: Optional[Person], kind: str, stem: str, thing: str = "", time: Optional[float] = None,
           text: str = "", now: Callable[[], float] = wall_clock) -> int:
    """Add an item to the feed; its id. Inside a write it is part of that change."""
    if not kind or len(kind) > 40:
        raise IgotError(f"'{kind}' is not an activity kind.", f"Use one of igot.team.activity's: {', '.join(KINDS)}.")
    with db.write() as conn:
        cursor = conn.execute("INSERT INTO activity(person_id, at, stem, kind, thing, time, text) VALUES (?, ?, ?, ?, ?, ?, ?)",
                              (person.id if person else None, now(), stem, kind, thing, time, (text or "")[:MAX_TEXT]))
        return cursor.lastrowid


def since(db: TeamDB, after_id: int = 0, limit: int = 100) -> list[Item]:
    """The items after `after_id` (0: all), newest first, at most `limit` (the newest ones): a page
    polls with the last id it has."""
    limit = max(1, min(int(limit), MAX_LIMIT))
    with db.read() as conn:
        rows = conn.execute(SELECT + " WHERE a.id > ? ORDER BY a.id DESC LIMIT ?", (int(after_id), limit)).fetchall()
    return [item(r) for r in rows]


def last_change(db: TeamDB, stem: str, thing: str) -> Optional[Item]:
    """The latest item about `thing` of the interview `stem`: who last changed it, and when."""
    with db.read() as conn:
        row = conn.execute(SELECT + " WHERE a.stem = ? AND a.thing = ? ORDER BY a.id DESC LIMIT 1", (stem, thing)).fetchone()
    return item(row) if row else None


SELECT = ("SELECT a.id, a.at, a.kind, a.stem, a.thing, a.time, a.text, p.name, p.email "
          "FROM activity a LEFT JOIN people p ON p.id = a.person_id")


def iso(at: float) -> str:
    """A moment as ISO 8601 in UTC, to the second ("2025-03-01T14:05:09Z")."""
    return datetime.fromtimestamp(at, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def item(row) -> Item:
    return Item(row["id"], iso(row["at"]), row["name"] or "", row["email"] or "", row["kind"], row["stem"],
                row["thing"], row["time"], row["text"])
