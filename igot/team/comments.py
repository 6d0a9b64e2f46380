"""Comments on a highlight: a thread per highlight, oldest first, each with its author's name.

A comment and its "commented" item in the feed are one change (both or neither). Only its author
or an admin deletes a comment; anyone who may read may comment (roles.COMMENT).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from igot.errors import IgotError
from igot.team import activity, roles
from igot.team.db import TeamDB
from igot.team.people import Person

MAX_TEXT = 2000

Clock = Callable[[], float]


@dataclass(frozen=True)
class Comment:
    id: int
    stem: str
    highlight_id: str
    person_id: int
    name: str
    email: str
    text: str
    created: str  # ISO 8601, UTC


def add(db: TeamDB, person: Person, stem: str, highlight_id: str, text: str, now: Clock = time.time) -> Comment:
    """Comment on the highlight `highlight_id` of the interview `stem` (1 to 2000 characters)."""
    text = (text or "").strip()
    if not text or len(text) > MAX_TEXT:
        raise IgotError(f"A comment of {len(text)} characters cannot be added.", f"Write 1 to {MAX_TEXT} characters.")
    if not stem or not highlight_id:
        raise IgotError("A comment needs the interview and the highlight it is about.", "Comment from a highlight's thread.")
    at = now()
    with db.write() as conn:
        cursor = conn.execute("INSERT INTO comments(stem, highlight_id, person_id, text, created) VALUES (?, ?, ?, ?, ?)",
                              (stem, highlight_id, person.id, text, at))
        activity.record(db, person, activity.COMMENTED, stem, thing=highlight_id, text=text, now=lambda: at)
        comment_id = cursor.lastrowid
    return Comment(comment_id, stem, highlight_id, person.id, person.name, person.email, text, activity.iso(at))


def thread(db: TeamDB, stem: str, highlight_id: str) -> list[Comment]:
    """The comments on one highlight, oldest first."""
    with db.read() as conn:
        rows = conn.execute(SELECT + " WHERE c.stem = ? AND c.highlight_id = ? ORDER BY c.id", (stem, highlight_id)).fetchall()
    return [_comment(r) for r in rows]


def threads(db: TeamDB, stem: str) -> dict[str, list[Comment]]:
    """Every thread of the interview `stem`, by highlight id, each oldest first."""
    with db.read() as conn:
        rows = conn.execute(SELECT + " WHERE c.stem = ? ORDER BY c.id", (stem,)).fetchall()
    found: dict[str, list[Comment]] = {}
    for r in rows:
        found.setdefault(r["highlight_id"], []).append(_comment(r))
    return found


def remove(db: TeamDB, comment_id: int, by: Person) -> None:
    """Delete a comment: by its author or an admin (roles.NotAllowed otherwise)."""
    with db.write() as conn:
        row = conn.execute("SELECT * FROM comments WHERE id = ?", (comment_id,)).fetchone()
        if row is None:
            raise IgotError(f"No comment {comment_id}.", "It may have been deleted already: reload the page.")
        role = conn.execute("SELECT role FROM people WHERE id = ? AND removed IS NULL", (by.id,)).fetchone()
        if row["person_id"] != by.id and (role is None or role["role"] != roles.ADMIN):
            raise roles.NotAllowed("Only a comment's author or an admin can delete it.", "Ask them to delete it.")
        conn.execute("DELETE FROM comments WHERE id = ?", (comment_id,))
        activity.record(db, by, activity.DELETED_COMMENT, row["stem"], thing=row["highlight_id"], text=row["text"])


SELECT = ("SELECT c.id, c.stem, c.highlight_id, c.person_id, c.text, c.created, p.name, p.email "
          "FROM comments c JOIN people p ON p.id = c.person_id")


def _comment(row) -> Comment:
    return Comment(row["id"], row["stem"], row["highlight_id"], row["person_id"], row["name"], row["email"], row["text"],
                   activity.iso(row["created"]))
