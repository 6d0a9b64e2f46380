"""Signed-in sessions: a random cookie per browser, of which the database keeps only the sha256
(a copy of the database signs nobody in), and a CSRF token per session that every change must
send back.

`find` runs on every request: one indexed SELECT joining the person (so a removed person, or one
whose role changed, is seen at the next request), and a write to `seen` at most once a minute.
"""

from __future__ import annotations

import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Callable, Optional

from igot.team.db import TeamDB
from igot.team.people import Person, token_hash

COOKIE = "__Host-igot-session"  # __Host-: sent only over HTTPS, to this host, for every path
DAYS = 14
SEEN_EVERY = 60.0  # seconds between writes of a session's `seen`
MAX_COOKIE = 200  # a longer cookie is none of ours: not even hashed

Clock = Callable[[], float]


@dataclass
class Session:
    person: Person
    csrf: str
    token_hash: str


def start(db: TeamDB, person: Person, days: float = DAYS, now: Clock = time.time) -> tuple[str, Session]:
    """A new session for `person`: (the cookie's value, the session). Sessions that ended long ago
    are cleared out meanwhile."""
    cookie = secrets.token_urlsafe(32)
    session = Session(person, secrets.token_urlsafe(32), token_hash(cookie))
    at = now()
    with db.write() as conn:
        conn.execute("DELETE FROM sessions WHERE expires < ?", (at,))
        conn.execute("INSERT INTO sessions(token_hash, person_id, csrf, created, seen, expires) VALUES (?, ?, ?, ?, ?, ?)",
                     (session.token_hash, person.id, session.csrf, at, at, at + days * 86400))
        conn.execute("UPDATE people SET signed_in = ? WHERE id = ?", (at, person.id))
    return cookie, session


def find(db: TeamDB, cookie_value: Optional[str], now: Clock = time.time) -> Optional[Session]:
    """The session this cookie opens; None when it is unknown, expired or its person was removed."""
    if not cookie_value or len(cookie_value) > MAX_COOKIE:
        return None
    hashed = token_hash(cookie_value)
    at = now()
    with db.read() as conn:
        row = conn.execute(
            "SELECT s.csrf, s.seen, p.id, p.email, p.name, p.role FROM sessions s JOIN people p ON p.id = s.person_id "
            "WHERE s.token_hash = ? AND s.expires > ? AND p.removed IS NULL", (hashed, at)).fetchone()
    if row is None:
        return None
    if at - row["seen"] >= SEEN_EVERY:
        with db.write() as conn:
            conn.execute("UPDATE sessions SET seen = ? WHERE token_hash = ?", (at, hashed))
    return Session(Person(row["id"], row["email"], row["name"], row["role"]), row["csrf"], hashed)


def end(db: TeamDB, cookie_value: Optional[str]) -> None:
    """Sign this browser out (nothing when the cookie opens no session)."""
    if cookie_value and len(cookie_value) <= MAX_COOKIE:
        with db.write() as conn:
            conn.execute("DELETE FROM sessions WHERE token_hash = ?", (token_hash(cookie_value),))


def end_all(db: TeamDB, person_id: int) -> int:
    """Sign `person_id` out everywhere; how many sessions ended."""
    with db.write() as conn:
        return conn.execute("DELETE FROM sessions WHERE person_id = ?", (person_id,)).rowcount


def csrf_ok(session: Session, given: Optional[str]) -> bool:
    """Whether `given` is this session's CSRF token (compared in constant time)."""
    if not isinstance(given, str) or not given:
        return False
    return hmac.compare_digest(session.csrf.encode(), given.encode("utf-8", "surrogatepass"))
