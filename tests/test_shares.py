"""Links for people outside the team (igot.team.shares), in the team's database alone: only the
key's hash kept, found by its hash and compared in constant time, expiry, revoking (its maker or an
admin), the library-wide switch, who may make one, and how often it was opened."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from igot.errors import IgotError
from igot.team import activity, people, roles, shares
from igot.team.db import TeamDB

PASSWORD = "correct horse battery"


@pytest.fixture
def db(tmp_path) -> TeamDB:
    made = TeamDB(tmp_path)
    yield made
    made.close()


def member(db: TeamDB, email: str, role: str) -> people.Person:
    return people.accept(db, people.invite(db, email, role), email.split("@")[0].title(), PASSWORD)


def database_bytes(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((folder / ".igot").glob("team.sqlite3*")))


def test_only_the_keys_hash_is_kept_and_only_the_key_opens_the_link(db, tmp_path):
    rui = member(db, "rui@example.com", roles.RESEARCHER)
    key, made = shares.make(db, rui, shares.HIGHLIGHT, "joana", "h1", "the price is too high", hide_names=True)
    assert len(key) >= 43 and made.state == "open" and made.hide_names and not made.hide_interview
    with db.read() as conn:
        (kept,) = conn.execute("SELECT key_hash FROM shares").fetchone()
    assert kept == hashlib.sha256(key.encode()).hexdigest()
    assert key.encode() not in database_bytes(tmp_path)  # a copy of the database opens nothing
    assert shares.find(db, key).id == made.id
    for wrong in (key[:-1] + ("A" if key[-1] != "A" else "B"), key.upper(), made.id, kept, "", None, "x" * 500, key + "/.."):
        assert shares.find(db, wrong) is None, wrong
    # Two links never share a key or an id.
    key2, made2 = shares.make(db, rui, shares.REEL, "", "pricing", "pricing: 3 highlights")
    assert key2 != key and made2.id != made.id and shares.find(db, key2).kind == shares.REEL


def test_the_hash_found_is_compared_in_constant_time(db, monkeypatch):
    rui = member(db, "rui@example.com", roles.RESEARCHER)
    key, _ = shares.make(db, rui, shares.HIGHLIGHT, "joana", "h1", "q")
    compared = []
    real = shares.hmac.compare_digest

    def spy(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(shares.hmac, "compare_digest", spy)
    assert shares.find(db, key) is not None
    assert compared == [(hashlib.sha256(key.encode()).hexdigest().encode(),) * 2]


def test_a_link_ends_when_it_expires(db):
    rui = member(db, "rui@example.com", roles.RESEARCHER)
    at = 1_800_000_000.0
    key, made = shares.make(db, rui, shares.HIGHLIGHT, "joana", "h1", "q", days=7, now=lambda: at)
    assert made.expires == activity.iso(at + 7 * 86400)
    assert shares.find(db, key, now=lambda: at + 7 * 86400 - 1) is not None
    assert shares.find(db, key, now=lambda: at + 7 * 86400) is None
    assert shares.listing(db, now=lambda: at + 8 * 86400)[0].state == "expired"
    never_key, _ = shares.make(db, rui, shares.HIGHLIGHT, "joana", "h1", "q", now=lambda: at)
    assert shares.find(db, never_key, now=lambda: at + 3650 * 86400) is not None
    for days in (0, -1, 400, "7", True):
        with pytest.raises(IgotError, match="expire"):
            shares.make(db, rui, shares.HIGHLIGHT, "joana", "h1", "q", days=days)


def test_revoked_by_its_maker_or_an_admin_only_and_the_activity_never_holds_the_key(db):
    rui, bruno = member(db, "rui@example.com", roles.RESEARCHER), member(db, "bruno@example.com", roles.RESEARCHER)
    ada = member(db, "ada@example.com", roles.ADMIN)
    key, made = shares.make(db, rui, shares.HIGHLIGHT, "joana", "h1", "the price is too high")
    key2, made2 = shares.make(db, rui, shares.REEL, "", "pricing", "pricing")
    with pytest.raises(roles.NotAllowed, match="only the one who made"):
        shares.revoke(db, made.id, bruno)
    assert shares.find(db, key) is not None
    assert shares.revoke(db, made.id, rui).state == "revoked" and shares.find(db, key) is None
    assert shares.revoke(db, made2.id, ada).state == "revoked" and shares.find(db, key2) is None
    with pytest.raises(shares.ShareNotFound):
        shares.revoke(db, "nosuchid", ada)
    feed = activity.since(db)
    assert [(i.name, i.kind) for i in feed] == [("Ada", activity.REVOKED_SHARE), ("Rui", activity.REVOKED_SHARE),
                                                ("Rui", activity.SHARED), ("Rui", activity.SHARED)]
    assert all(key not in repr(i) and key2 not in repr(i) for i in feed)
    assert all(key not in repr(s) for s in shares.listing(db))


def test_switched_off_every_link_is_gone_at_once_and_none_can_be_made(db):
    rui = member(db, "rui@example.com", roles.RESEARCHER)
    key, _ = shares.make(db, rui, shares.HIGHLIGHT, "joana", "h1", "q")
    assert shares.change_settings(db, public=False).public is False
    assert shares.find(db, key) is None
    with pytest.raises(shares.LinksOff, match="switched off"):
        shares.make(db, rui, shares.HIGHLIGHT, "joana", "h1", "q")
    shares.change_settings(db, public=True)
    assert shares.find(db, key) is not None  # switched on again: the links not revoked open again


def test_who_may_make_a_link_is_the_teams_setting(db):
    vera, rui = member(db, "vera@example.com", roles.VIEWER), member(db, "rui@example.com", roles.RESEARCHER)
    ada = member(db, "ada@example.com", roles.ADMIN)
    assert shares.settings(db).roles == (roles.RESEARCHER, roles.ADMIN)
    with pytest.raises(roles.NotAllowed, match="a viewer may not make links"):
        shares.make(db, vera, shares.HIGHLIGHT, "joana", "h1", "q")
    assert shares.change_settings(db, allowed=["viewer"]).roles == (roles.VIEWER, roles.ADMIN)  # admins always may
    assert shares.make(db, vera, shares.HIGHLIGHT, "joana", "h1", "q")[1].by == "Vera"
    with pytest.raises(roles.NotAllowed, match="a researcher may not"):
        shares.make(db, rui, shares.HIGHLIGHT, "joana", "h1", "q")
    assert shares.make(db, ada, shares.REEL, "", "pricing", "pricing")[1].by == "Ada"
    for wrong in (["owner"], "viewer", [1]):
        with pytest.raises(IgotError):
            shares.change_settings(db, allowed=wrong)


def test_each_opening_is_counted(db):
    rui = member(db, "rui@example.com", roles.RESEARCHER)
    key, made = shares.make(db, rui, shares.HIGHLIGHT, "joana", "h1", "q")
    assert (made.opened, made.last_opened) == (0, None)
    shares.count_open(db, made.id, now=lambda: 1_800_000_000.0)
    shares.count_open(db, made.id, now=lambda: 1_800_000_060.0)
    seen = shares.listing(db)[0]
    assert (seen.opened, seen.last_opened) == (2, activity.iso(1_800_000_060.0))
