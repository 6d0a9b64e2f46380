"""Links for people outside the team: a highlight, a tag's reel or a report opened by anyone who
has the link, with no account (igot.workspace.public draws what they see).

A link is its key: `secrets.token_urlsafe(32)`, 256 random bits. Guessing one is hopeless: a
guesser making a billion tries a second for a thousand years hits one of a million live links
(2^85 tries) with a chance of about 2^-171. The database keeps only the key's sha256 (a copy of it opens no
link); the key is shown once, to the person who made it, and never again: not in the Shared
page, the activity, a log or an export. A key asked for is hashed, found by its hash, and the hash
found compared again in constant time (hmac.compare_digest): how long the answer takes says
nothing of how close a guess came. Each link also has a short public id (`id`), which is what the
Shared page lists and revokes by: it opens nothing.

Who may make one is a team setting (default: researchers and admins; admins always), and an admin
can switch every link of the library off at once: then each answers as gone, and none can be made.
A link revoked, expired or switched off answers exactly like one never made.
"""

from __future__ import annotations

import hmac
import json
import re
import secrets
import time
from dataclasses import dataclass
from typing import Callable, Optional

from igot.errors import IgotError
from igot.team import activity, roles
from igot.team.db import TeamDB, set_setting, setting
from igot.team.people import Person, token_hash

HIGHLIGHT, REEL, REPORT = "highlight", "reel", "report"
KINDS = (HIGHLIGHT, REEL, REPORT)
KEY_BYTES = 32  # secrets.token_urlsafe(32): 43 characters, 256 random bits
KEY_SHAPE = re.compile(r"[A-Za-z0-9_-]{20,100}")  # anything else is no key of ours: not even hashed
ID_BYTES = 6  # the public row id: 8 characters, unique among a library's links, opens nothing
MAX_DAYS = 366
MAX_TITLE = 200
ROLES_SETTING = "share_roles"  # who may make links, besides admins (JSON list)
PUBLIC_SETTING = "public_links"  # "on" / "off"
DEFAULT_ROLES = (roles.RESEARCHER, roles.ADMIN)

Clock = Callable[[], float]


class ShareNotFound(IgotError):
    status = 404


class LinksOff(IgotError):
    status = 403


@dataclass(frozen=True)
class Share:
    """A link as the Shared page lists it (never its key)."""

    id: str
    kind: str
    stem: str  # the interview (a highlight's); "" otherwise
    thing: str  # the highlight's id, the tag, the report's id
    title: str  # what it shows, in a line, as it was when made
    hide_names: bool
    hide_interview: bool
    by: str  # who made it (name, else e-mail; "" when they were removed)
    by_email: str
    made: str  # ISO 8601, UTC
    expires: Optional[str]
    revoked: Optional[str]
    opened: int
    last_opened: Optional[str]
    state: str  # "open", "expired" or "revoked"


@dataclass(frozen=True)
class Settings:
    public: bool  # links answer at all
    roles: tuple[str, ...]  # who may make one (admins always may)


def settings(db: TeamDB) -> Settings:
    kept = setting(db, ROLES_SETTING)
    try:
        allowed = tuple(r for r in json.loads(kept) if r in roles.ROLES) if kept else DEFAULT_ROLES
    except (ValueError, TypeError):
        allowed = DEFAULT_ROLES
    return Settings(setting(db, PUBLIC_SETTING) != "off", tuple(sorted(set(allowed) | {roles.ADMIN}, key=roles.ROLES.index)))


def change_settings(db: TeamDB, public: Optional[bool] = None, allowed: Optional[object] = None) -> Settings:
    """An admin's change: links on or off, and which roles may make them (admins always may)."""
    with db.write():
        if public is not None:
            set_setting(db, PUBLIC_SETTING, "on" if public else "off")
        if allowed is not None:
            if not isinstance(allowed, (list, tuple)) or not all(isinstance(r, str) for r in allowed):
                raise IgotError("The roles that may share must be a list of roles.", f"Give some of: {', '.join(roles.ROLES)}.")
            checked = sorted({roles.check_role(r) for r in allowed} | {roles.ADMIN}, key=roles.ROLES.index)
            set_setting(db, ROLES_SETTING, json.dumps(checked))
    return settings(db)


def may_share(db: TeamDB, role: str) -> bool:
    """Whether a person of `role` may make a link for people outside the team."""
    return role in roles.ROLES and role in settings(db).roles


def refuse_unless_may_share(db: TeamDB, role: str) -> None:
    if not may_share(db, role):
        raise roles.NotAllowed(f"Refused by the server: a {role} may not make links for people outside the team.",
                               "Ask an admin to let your role share (the Shared page's settings).")


def make(db: TeamDB, person: Person, kind: str, stem: str, thing: str, title: str, hide_names: bool = False,
         hide_interview: bool = False, days: Optional[float] = None, now: Clock = time.time) -> tuple[str, Share]:
    """A new link: (its key, shown once and kept nowhere, the link as listed). The caller checked
    that what it points at exists."""
    if kind not in KINDS:
        raise IgotError(f"'{kind}' is not something a link can share.", f"Share one of: {', '.join(KINDS)}.")
    if days is not None and (not isinstance(days, (int, float)) or isinstance(days, bool) or not 0 < days <= MAX_DAYS):
        raise IgotError(f"A link cannot expire in {days!r} days.", f"Give a number of days from 1 to {MAX_DAYS}, or none.")
    refuse_unless_may_share(db, person.role)
    if not settings(db).public:
        raise LinksOff("Public links are switched off for this library.", "Ask an admin to switch them on (the Shared page).")
    key = secrets.token_urlsafe(KEY_BYTES)
    at = now()
    line = " ".join(str(title).split())[:MAX_TITLE]
    with db.write() as conn:
        share_id = secrets.token_urlsafe(ID_BYTES)
        while conn.execute("SELECT 1 FROM shares WHERE id = ?", (share_id,)).fetchone():
            share_id = secrets.token_urlsafe(ID_BYTES)
        conn.execute("INSERT INTO shares(id, key_hash, kind, stem, thing, title, hide_names, hide_interview, made_by, made, "
                     "expires) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (share_id, token_hash(key), kind, stem, thing, line, int(bool(hide_names)), int(bool(hide_interview)),
                      person.id, at, at + days * 86400 if days else None))
        activity.record(db, person, activity.SHARED, stem, f"share {share_id}", text=f"{kind}: {line}", now=lambda: at)
    return key, one(db, share_id, now)


def find(db: TeamDB, key: object, now: Clock = time.time) -> Optional[Share]:
    """The live link this key opens; None when it is no key, unknown, revoked, expired, or links
    are switched off (one answer for all, so a guesser learns nothing)."""
    if not isinstance(key, str) or not KEY_SHAPE.fullmatch(key):
        return None
    hashed = token_hash(key)
    with db.read() as conn:
        row = conn.execute(SELECT + " WHERE s.key_hash = ?", (hashed,)).fetchone()
    if row is None or not hmac.compare_digest(row["key_hash"].encode(), hashed.encode()):
        return None
    found = share(row, now())
    if found.state != "open" or not settings(db).public:
        return None
    return found


def count_open(db: TeamDB, share_id: str, now: Clock = time.time) -> None:
    """The link was opened once more (its page, not each piece of its clip)."""
    with db.write() as conn:
        conn.execute("UPDATE shares SET opened = opened + 1, last_opened = ? WHERE id = ?", (now(), share_id))


def listing(db: TeamDB, now: Clock = time.time) -> list[Share]:
    """Every link of the library, newest first (the Shared page)."""
    at = now()
    with db.read() as conn:
        rows = conn.execute(SELECT + " ORDER BY s.made DESC, s.rowid DESC").fetchall()
    return [share(r, at) for r in rows]


def one(db: TeamDB, share_id: str, now: Clock = time.time) -> Share:
    with db.read() as conn:
        row = conn.execute(SELECT + " WHERE s.id = ?", (str(share_id),)).fetchone()
    if row is None:
        raise ShareNotFound(f"No shared link {share_id!r}.", "Reload the Shared page: it may have been removed.")
    return share(row, now())


def revoke(db: TeamDB, share_id: str, person: Person, now: Clock = time.time) -> Share:
    """The link stops answering at once; only the one who made it, or an admin, may."""
    at = now()
    with db.write() as conn:
        row = conn.execute("SELECT made_by, revoked, kind, stem, title FROM shares WHERE id = ?", (str(share_id),)).fetchone()
        if row is None:
            raise ShareNotFound(f"No shared link {share_id!r}.", "Reload the Shared page.")
        if row["made_by"] != person.id and person.role != roles.ADMIN:
            raise roles.NotAllowed("Refused by the server: only the one who made a link, or an admin, may revoke it.",
                                   "Ask them, or an admin.")
        if row["revoked"] is None:
            conn.execute("UPDATE shares SET revoked = ? WHERE id = ?", (at, str(share_id)))
            activity.record(db, person, activity.REVOKED_SHARE, row["stem"], f"share {share_id}",
                            text=f"{row['kind']}: {row['title']}", now=lambda: at)
    return one(db, share_id, now)


SELECT = ("SELECT s.*, p.name AS by_name, p.email AS by_email FROM shares s LEFT JOIN people p "
          "ON p.id = s.made_by AND p.removed IS NULL")


def share(row, at: float) -> Share:
    state = "revoked" if row["revoked"] is not None else "expired" if row["expires"] is not None and row["expires"] <= at \
        else "open"
    when = lambda v: activity.iso(v) if v is not None else None  # noqa: E731
    return Share(row["id"], row["kind"], row["stem"], row["thing"], row["title"], bool(row["hide_names"]),
                 bool(row["hide_interview"]), row["by_name"] or row["by_email"] or "", row["by_email"] or "",
                 activity.iso(row["made"]), when(row["expires"]), when(row["revoked"]), row["opened"],
                 when(row["last_opened"]), state)
