"""The team's people: invited by an admin, joining with a password or an OpenID Connect identity,
signing in, changing role, removed.

Nobody joins uninvited: an invite is a one-time link whose token only the admin's terminal ever
sees (the database keeps its sha256), valid for a few days. Passwords are kept only as argon2
hashes. Signing in says the same thing, and takes as long, for an unknown email as for a wrong
password, so the page does not tell a stranger who is on the team. The last admin can be neither
removed nor demoted: a team with no admin could never invite anyone again.
"""

from __future__ import annotations

import hashlib
import secrets
import time
import unicodedata
from dataclasses import dataclass
from typing import Callable, Optional

try:
    from argon2 import PasswordHasher
    from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
except ImportError:  # the team extra is not installed: said when a password is first needed (hasher())
    PasswordHasher = None  # type: ignore[assignment,misc]
    InvalidHashError = VerificationError = VerifyMismatchError = ValueError  # type: ignore[assignment,misc]

from igot.errors import IgotError, install_hint
from igot.team import roles, throttle
from igot.team.db import TeamDB

MIN_PASSWORD = 10
MAX_PASSWORD = 1024  # hashing a megabyte on each try would be a way to slow the server down
MAX_NAME = 100
INVITE_DAYS = 7

# argon2id with the library's recommended cost (RFC 9106's second choice); tests may swap in a
# cheaper one, and a hash made with other settings is remade at the next sign-in.
HASHER = PasswordHasher() if PasswordHasher is not None else None

Clock = Callable[[], float]

NOT_INVITED = ("This invite link is not valid: it was used already, it expired, or it was never made.",
               "Ask an admin for a new invite.")
WRONG = ("Wrong email or password.", "Check both and try again, or ask an admin for a new invite.")


@dataclass(frozen=True)
class Person:
    id: int
    email: str
    name: str
    role: str


def token_hash(token: str) -> str:
    """What the database keeps of a one-time token: its sha256, so a copy of the database lets
    nobody use a link or a session."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def clean_email(email: str) -> str:
    """The email as kept: trimmed, lower case; an IgotError when it cannot be one."""
    email = (email or "").strip().lower()
    local, at, domain = email.rpartition("@")
    if not at or not local or "." not in domain or len(email) > 254 or any(c.isspace() or not c.isprintable() for c in email):
        raise IgotError(f"'{email}' is not an email address.", "Give one like ana@example.org.")
    return email


def clean_name(name: str, email: str) -> str:
    """A name to show: printable, at most MAX_NAME characters; the email's first part when empty."""
    name = "".join(c for c in unicodedata.normalize("NFC", name or "") if c.isprintable()).strip()
    name = " ".join(name.split())[:MAX_NAME]
    return name or email.split("@")[0]


def check_new_password(password: str) -> None:
    if len(password or "") < MIN_PASSWORD:
        raise IgotError(f"The password has {len(password or '')} characters; it needs at least {MIN_PASSWORD}.",
                        "Choose a longer one: a few words in a row are easy to remember and hard to guess.")
    if len(password) > MAX_PASSWORD:
        raise IgotError(f"The password has {len(password)} characters; at most {MAX_PASSWORD} are taken.",
                        "Choose a shorter one.")


def invite(db: TeamDB, email: str, role: str, by: Optional[Person] = None, days: float = INVITE_DAYS,
           now: Clock = time.time) -> str:
    """A one-time invite token for `email` as `role`, valid `days` days; an invite not yet
    accepted for the same email is replaced. Someone already on the team is refused."""
    email, role = clean_email(email), roles.check_role(role)
    token = secrets.token_urlsafe(32)
    with db.write() as conn:
        if _row_by_email(conn, email, active=True) is not None:
            raise IgotError(f"{email} is already on the team.",
                            f"Change their role instead: igot people role {email} {role}")
        conn.execute("DELETE FROM invites WHERE email = ? AND used IS NULL", (email,))
        conn.execute("INSERT INTO invites(token_hash, email, role, expires, used, by) VALUES (?, ?, ?, ?, NULL, ?)",
                     (token_hash(token), email, role, now() + days * 86400, by.id if by else None))
    return token


def invited(db: TeamDB, token: str, now: Clock = time.time) -> tuple[str, str]:
    """(email, role) of a valid invite; one IgotError for an expired, used or unknown one."""
    with db.read() as conn:
        row = _invite_row(conn, token, now())
    return row["email"], row["role"]


def accept(db: TeamDB, token: str, name: str, password: str, now: Clock = time.time) -> Person:
    """Join the team through an invite, with a password (the invite is used up)."""
    check_new_password(password)
    invited(db, token, now)  # said before the slow hash
    hashed = hasher().hash(password)
    with db.write() as conn:
        row = _invite_row(conn, token, now())  # again: two tabs may accept at once
        return _join(conn, row, name, hashed, None, now())


def join_with_identity(db: TeamDB, email: str, name: str, subject: str, default_role: Optional[str] = None,
                       now: Clock = time.time) -> Person:
    """The person an OpenID Connect identity (`subject`, with a verified `email`) is: the one who
    signed in with it before, or the one on the team with that email, or the invited email joining
    now. Someone not invited joins only when `default_role` is given; a removed person does not."""
    email = clean_email(email)
    if default_role is not None:
        roles.check_role(default_role)
    if not subject:
        raise IgotError("The sign-in service gave no subject for this identity.", "Ask an admin to check its settings.")
    at = now()
    with db.write() as conn:
        row = conn.execute("SELECT * FROM people WHERE oidc_subject = ?", (subject,)).fetchone()
        if row is not None and row["removed"] is None:
            return _person(row)
        row = _row_by_email(conn, email, active=True)
        if row is not None:
            if row["oidc_subject"] not in (None, subject):
                raise IgotError(f"{email} is on the team with another sign-in identity.",
                                "Sign in with the account you used before, or ask an admin to remove and invite you again.")
            conn.execute("UPDATE people SET oidc_subject = ? WHERE id = ?", (subject, row["id"]))
            return _person(row)
        invite_row = conn.execute("SELECT * FROM invites WHERE email = ? AND used IS NULL AND expires > ? "
                                  "ORDER BY expires DESC LIMIT 1", (email, at)).fetchone()
        if invite_row is not None:
            return _join(conn, invite_row, name, None, subject, at)
        if default_role is not None and _row_by_email(conn, email, active=False) is None:
            return _insert(conn, email, name, default_role, None, subject, at)
    raise IgotError(f"{email} is not on this team.", "Ask an admin to invite you.")


class WrongPassword(IgotError):
    """An e-mail and password that are not a person's (one answer for both: who exists is not said)."""

    status = 401


def check_password(db: TeamDB, email: str, password: str, where: str, now: Clock = time.time) -> Person:
    """The person whose email and password these are. A wrong password and an unknown email give
    one answer after one argon2 check; too many wrong ones in a row (per email, per address
    `where`) are refused unchecked for a while (throttle.SlowDown)."""
    email = (email or "").strip().lower()
    _dummy_hash()  # made before anything is looked up: the first unknown email takes no longer than a known one
    keys = [throttle.email_key(email)] + ([throttle.address_key(where)] if where else [])
    throttle.attempt(db, keys, now)
    with db.read() as conn:
        row = _row_by_email(conn, email, active=True)
    stored = row["password_hash"] if row is not None and row["password_hash"] else None
    if not _verify(stored, password or ""):
        raise WrongPassword(*WRONG)
    throttle.succeeded(db, keys[0], keys[1:], now)
    if hasher().check_needs_rehash(stored):
        _store_hash(db, row["id"], stored, hasher().hash(password))
    return _person(row)


def people(db: TeamDB) -> list[Person]:
    """Everyone on the team now, by email."""
    with db.read() as conn:
        rows = conn.execute("SELECT * FROM people WHERE removed IS NULL ORDER BY email").fetchall()
    return [_person(r) for r in rows]


def find(db: TeamDB, person_id: int) -> Optional[Person]:
    """The person with this id, when still on the team."""
    with db.read() as conn:
        row = conn.execute("SELECT * FROM people WHERE id = ? AND removed IS NULL", (person_id,)).fetchone()
    return _person(row) if row else None


def by_email(db: TeamDB, email: str) -> Optional[Person]:
    """The person with this email, when on the team."""
    with db.read() as conn:
        row = _row_by_email(conn, (email or "").strip().lower(), active=True)
    return _person(row) if row else None


def remove(db: TeamDB, email: str, now: Clock = time.time) -> Person:
    """Take `email` off the team: signed out everywhere at once, their invites gone. Their
    comments and activity stay, with their name. The last admin is refused."""
    email = clean_email(email)
    with db.write() as conn:
        row = _existing(conn, email)
        if row["role"] == roles.ADMIN and _admins(conn) == 1:
            raise IgotError(f"{email} is the team's last admin.", "Make someone else an admin first: igot people role EMAIL admin")
        conn.execute("UPDATE people SET removed = ? WHERE id = ?", (now(), row["id"]))
        conn.execute("DELETE FROM invites WHERE email = ? AND used IS NULL", (email,))
        _end_sessions(conn, row["id"])
    return _person(row)


def set_role(db: TeamDB, email: str, role: str) -> Person:
    """Give `email` another role (from their next request on). Demoting the last admin is refused."""
    email, role = clean_email(email), roles.check_role(role)
    with db.write() as conn:
        row = _existing(conn, email)
        if row["role"] == roles.ADMIN and role != roles.ADMIN and _admins(conn) == 1:
            raise IgotError(f"{email} is the team's last admin.", "Make someone else an admin first, then change this role.")
        conn.execute("UPDATE people SET role = ? WHERE id = ?", (role, row["id"]))
    return Person(row["id"], row["email"], row["name"], role)


def set_password(db: TeamDB, email: str, password: str) -> Person:
    """A new password for `email`: their sessions end (whoever had the old one is signed out) and
    the wait for wrong passwords is lifted."""
    email = clean_email(email)
    check_new_password(password)
    hashed = hasher().hash(password)
    with db.write() as conn:
        row = _existing(conn, email)
        conn.execute("UPDATE people SET password_hash = ? WHERE id = ?", (hashed, row["id"]))
        _end_sessions(conn, row["id"])
        conn.execute("DELETE FROM failures WHERE key = ?", (throttle.email_key(email),))
    return _person(row)


def hasher():
    """The password hasher (argon2-cffi's), or an IgotError saying how to install it."""
    if HASHER is None:
        raise IgotError("A team's passwords need argon2-cffi, which is not installed.", f"Run: {install_hint('team')}")
    return HASHER


def _verify(stored: Optional[str], password: str) -> bool:
    """Whether `password` is the one `stored` hashes; with no hash, a dummy one is checked so the
    answer takes as long."""
    try:
        return hasher().verify(stored or _dummy_hash(), password) and stored is not None
    except (VerificationError, VerifyMismatchError, InvalidHashError):
        return False


_dummies: dict[tuple, str] = {}


def _dummy_hash() -> str:
    """A hash made with HASHER's settings, of a password nobody has (made once per settings)."""
    key = (hasher().time_cost, HASHER.memory_cost, HASHER.parallelism, HASHER.hash_len)
    if key not in _dummies:
        _dummies[key] = hasher().hash(secrets.token_urlsafe(16))
    return _dummies[key]


def _store_hash(db: TeamDB, person_id: int, old: str, new: str) -> None:
    with db.write() as conn:  # unless the password was changed meanwhile
        conn.execute("UPDATE people SET password_hash = ? WHERE id = ? AND password_hash = ?", (new, person_id, old))


def _invite_row(conn, token: str, at: float):
    row = conn.execute("SELECT * FROM invites WHERE token_hash = ?", (token_hash(token or ""),)).fetchone()
    if row is None or row["used"] is not None or row["expires"] <= at:
        raise IgotError(*NOT_INVITED)
    return row


def _join(conn, invite_row, name: str, hashed: Optional[str], subject: Optional[str], at: float) -> Person:
    """The invited person on the team (anew, or back after being removed); the invite used."""
    email = invite_row["email"]
    conn.execute("UPDATE invites SET used = ? WHERE token_hash = ?", (at, invite_row["token_hash"]))
    if _row_by_email(conn, email, active=True) is not None:
        raise IgotError(f"{email} is already on the team.", "Sign in instead.")
    old = _row_by_email(conn, email, active=False)
    if old is None:
        return _insert(conn, email, name, invite_row["role"], hashed, subject, at)
    conn.execute("UPDATE people SET name = ?, role = ?, password_hash = ?, oidc_subject = ?, removed = NULL WHERE id = ?",
                 (clean_name(name, email), invite_row["role"], hashed, subject, old["id"]))
    return Person(old["id"], email, clean_name(name, email), invite_row["role"])


def _insert(conn, email: str, name: str, role: str, hashed: Optional[str], subject: Optional[str], at: float) -> Person:
    name = clean_name(name, email)
    cursor = conn.execute("INSERT INTO people(email, name, role, password_hash, oidc_subject, created) VALUES (?, ?, ?, ?, ?, ?)",
                          (email, name, role, hashed, subject, at))
    return Person(cursor.lastrowid, email, name, role)


def _row_by_email(conn, email: str, active: bool):
    """The row with `email`: only one on the team when `active`, any (removed too) otherwise."""
    extra = " AND removed IS NULL" if active else ""
    return conn.execute("SELECT * FROM people WHERE email = ?" + extra, (email,)).fetchone()


def _existing(conn, email: str):
    row = _row_by_email(conn, email, active=True)
    if row is None:
        raise IgotError(f"{email} is not on the team.", "See who is with: igot people list")
    return row


def _end_sessions(conn, person_id: int) -> None:
    """Sign `person_id` out everywhere (as sessions.end_all, which imports this module)."""
    conn.execute("DELETE FROM sessions WHERE person_id = ?", (person_id,))


def _admins(conn) -> int:
    return conn.execute("SELECT COUNT(*) FROM people WHERE role = ? AND removed IS NULL", (roles.ADMIN,)).fetchone()[0]


def _person(row) -> Person:
    return Person(row["id"], row["email"], row["name"], row["role"])
