"""Slowing down whoever guesses passwords.

Wrong passwords are counted per key: the email tried and the client address it came from. After
FREE failures in a row (FREE_ADDRESS for an address) a key must wait 2**(n - FREE) seconds (at most MAX_WAIT) before its next
attempt is even checked, so twenty guesses take minutes and a thousand take days, while a person
who mistypes a few times never notices. A success clears the email's count; the address keeps its
own (an attacker who also has an account cannot clear it by signing in). A count left alone for
FORGET seconds starts again, so an old mistake does not make a later one wait.

Each attempt is counted before its password is checked (`attempt`), in the same transaction that
looks at the wait, and taken back when it succeeds: guesses sent all at once cannot slip past the
count while the password hashes are being computed.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from igot.errors import IgotError
from igot.team.db import TeamDB

FREE = 5  # failures in a row for one account before waiting starts
# ... and from one address: an office behind one router (NAT) is one address for everyone, and each
# sign-in is counted while its password is checked, so twenty people signing in at nine must fit.
FREE_ADDRESS = 30
MAX_WAIT = 15 * 60.0  # seconds
FORGET = 24 * 3600.0  # a count not added to for this long starts again

Clock = Callable[[], float]


class SlowDown(IgotError):
    """An attempt refused unchecked: its key must wait `seconds` more (HTTP 429)."""

    status = 429

    def __init__(self, seconds: float, for_address: bool = False):
        self.seconds = max(1, math.ceil(seconds))
        if for_address:
            problem = f"Too many wrong passwords from this address: wait {self.seconds} s."
        else:
            problem = f"Too many wrong passwords for this account: wait {self.seconds} s,"
        super().__init__(problem, "or ask an admin to reset it." if not for_address else "Then try again.")


@dataclass(frozen=True)
class Count:
    count: int
    last: float
    until: float


def email_key(email: str) -> str:
    return "email:" + email.strip().lower()


def address_key(where: str) -> str:
    return "where:" + where.strip()


def wait_for(count: int, free: int = FREE) -> float:
    """Seconds a key must wait after `count` failures in a row (`free` of them wait nothing)."""
    return 0.0 if count < free else min(2.0 ** (count - free), MAX_WAIT)


def wait_left(db: TeamDB, key: str, now: Clock = time.time) -> float:
    """Seconds before `key`'s next attempt is checked (0: now)."""
    with db.read() as conn:
        return _left(conn, key, now())


def attempt(db: TeamDB, keys: Iterable[str], now: Clock = time.time) -> None:
    """Count an attempt for every key, as if it failed; SlowDown (counting nothing) when one of
    them must still wait. Call `succeeded` when the password was right."""
    at = now()
    keys = list(keys)
    with db.write() as conn:
        conn.execute("DELETE FROM failures WHERE last < ?", (at - FORGET,))  # guesses at many emails leave no heap
        for key in keys:
            left = _left(conn, key, at)
            if left > 0:
                raise SlowDown(left, for_address=key.startswith("where:"))
        for key in keys:
            count = _count(conn, key, at)
            _store(conn, key, (count.count if count else 0) + 1, at)


def succeeded(db: TeamDB, clear: str, undo: Iterable[str] = (), now: Clock = time.time) -> None:
    """The attempt was right: `clear`'s count goes; each of `undo` loses the attempt `attempt`
    counted for it (its earlier failures stay)."""
    at = now()
    with db.write() as conn:
        conn.execute("DELETE FROM failures WHERE key = ?", (clear,))
        for key in undo:
            count = _count(conn, key, at)
            if count is None or count.count <= 1:
                conn.execute("DELETE FROM failures WHERE key = ?", (key,))
            else:
                _store(conn, key, count.count - 1, count.last)


def clear(db: TeamDB, key: str) -> None:
    """Forget `key`'s failures (an admin reset the password)."""
    with db.write() as conn:
        conn.execute("DELETE FROM failures WHERE key = ?", (key,))


def _count(conn, key: str, at: float) -> Optional[Count]:
    row = conn.execute("SELECT count, last, until FROM failures WHERE key = ?", (key,)).fetchone()
    if row is None or at - row["last"] > FORGET:
        return None
    return Count(row["count"], row["last"], row["until"])


def _left(conn, key: str, at: float) -> float:
    count = _count(conn, key, at)
    if count is None or count.until <= count.last:  # no wait earned (sign-ins at once may store a `last` after `at`)
        return 0.0
    return max(0.0, count.until - at)


def _store(conn, key: str, count: int, last: float) -> None:
    conn.execute("INSERT INTO failures(key, count, last, until) VALUES (?, ?, ?, ?) "
                 "ON CONFLICT(key) DO UPDATE SET count = excluded.count, last = excluded.last, until = excluded.until",
                 (key, count, last, last + wait_for(count, FREE_ADDRESS if key.startswith("where:") else FREE)))
