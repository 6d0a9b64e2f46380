"""The team of a served library as its people meet it: invites, passwords, sign-in slowing,
sessions, roles, comments and the activity feed (igot.team)."""

from __future__ import annotations

import threading
import time

import pytest
from argon2 import PasswordHasher

from igot.errors import IgotError
from igot.team import activity, comments, people, roles, sessions, throttle
from igot.team.cli import add_people_parser, run_people
from igot.team.db import TeamDB, remember_address, team_db

PASSWORD = "correct horse battery"


class Clock:
    """A clock the test moves by hand: waiting is counted, never slept."""

    def __init__(self, at: float = 1_700_000_000.0):
        self.at = at

    def __call__(self) -> float:
        return self.at


@pytest.fixture(autouse=True)
def quick_hashes(monkeypatch):
    """argon2 with a small cost: the same checks, a hundred times faster."""
    monkeypatch.setattr(people, "HASHER", PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1))


@pytest.fixture
def db(tmp_path):
    opened = TeamDB(tmp_path)
    yield opened
    opened.close()


def member(db, email="ana@example.org", role="admin", name="Ana", password=PASSWORD):
    return people.accept(db, people.invite(db, email, role), name, password)


def test_an_invite_works_once_and_expires(db):
    clock = Clock()
    token = people.invite(db, "Ana@Example.org ", "researcher", now=clock)
    assert people.invited(db, token, now=clock) == ("ana@example.org", "researcher")
    ana = people.accept(db, token, "Ana", PASSWORD, now=clock)
    assert (ana.email, ana.role) == ("ana@example.org", "researcher")
    with pytest.raises(IgotError, match="Ask an admin for a new invite"):
        people.accept(db, token, "Eve", PASSWORD, now=clock)
    with pytest.raises(IgotError, match="already on the team"):
        people.invite(db, "ana@example.org", "admin")

    late = people.invite(db, "bruno@example.org", "viewer", days=7, now=clock)
    clock.at += 7 * 86400 + 1
    with pytest.raises(IgotError) as expired:
        people.invited(db, late, now=clock)
    with pytest.raises(IgotError) as unknown:
        people.invited(db, "made-up-token", now=clock)
    assert str(expired.value) == str(unknown.value)  # used, expired, unknown: one answer
    assert people.by_email(db, "bruno@example.org") is None


def test_inviting_again_replaces_the_first_link(db):
    first = people.invite(db, "bruno@example.org", "viewer")
    second = people.invite(db, "bruno@example.org", "researcher")
    with pytest.raises(IgotError, match="new invite"):
        people.invited(db, first)
    assert people.accept(db, second, "Bruno", PASSWORD).role == "researcher"


def test_the_password_is_kept_only_as_an_argon2_hash(db):
    member(db, password="my secret words 42")
    db.close()
    stored = b"".join(p.read_bytes() for p in db.path.parent.glob("team.sqlite3*"))
    assert b"my secret words 42" not in stored
    assert b"$argon2id$" in stored
    with pytest.raises(IgotError, match="at least 10"):
        people.accept(db, people.invite(db, "bruno@example.org", "viewer"), "Bruno", "short")


def test_a_wrong_password_and_an_unknown_email_give_the_same_answer(db):
    member(db)
    with pytest.raises(IgotError) as wrong:
        people.check_password(db, "ana@example.org", "not the password", "10.0.0.1")
    with pytest.raises(IgotError) as unknown:
        people.check_password(db, "nobody@example.org", "not the password", "10.0.0.2")
    assert type(wrong.value) is type(unknown.value)
    assert str(wrong.value) == str(unknown.value)
    assert people.check_password(db, "ANA@example.org", PASSWORD, "10.0.0.1").name == "Ana"


def test_twenty_wrong_passwords_take_the_guesser_ever_longer(db):
    member(db)
    clock = Clock()
    checked = refused = 0
    waits = []
    while checked < 20:
        try:
            people.check_password(db, "ana@example.org", f"guess number {checked}", "10.0.0.9", now=clock)
        except throttle.SlowDown as slow:
            refused += 1
            assert slow.status == 429 and "wait" in str(slow) and "ask an admin" in str(slow)
            # the right password is not even checked while the account waits
            with pytest.raises(throttle.SlowDown):
                people.check_password(db, "ana@example.org", PASSWORD, "10.0.0.10", now=clock)
            waits.append(slow.seconds)
            clock.at += slow.seconds
        except IgotError:
            checked += 1
            clock.at += 0.1
    assert refused == 15  # every guess after the 5th waited first
    assert waits == sorted(waits) and waits[0] == 1 and waits[-1] == 15 * 60  # doubling, capped
    assert clock.at - 1_700_000_000.0 > 60 * 60  # twenty guesses took over an hour
    key = throttle.email_key("ana@example.org")
    assert throttle.wait_left(db, key, now=clock) > 14 * 60  # and the next waits too, even the right one
    clock.at += throttle.wait_left(db, key, now=clock)
    assert people.check_password(db, "ana@example.org", PASSWORD, "10.0.0.11", now=clock).email == "ana@example.org"
    assert throttle.wait_left(db, throttle.email_key("ana@example.org"), now=clock) == 0  # a success clears it


def test_an_address_guessing_many_emails_is_slowed_too(db):
    clock = Clock()
    # An office shares one address: many people's typos pass; a spray over many e-mails does not.
    for i in range(throttle.FREE_ADDRESS):
        with pytest.raises(IgotError, match="Wrong email or password"):
            people.check_password(db, f"who{i}@example.org", "guess guess", "10.9.9.9", now=clock)
    with pytest.raises(throttle.SlowDown, match="from this address"):
        people.check_password(db, "who-next@example.org", "guess guess", "10.9.9.9", now=clock)
    assert throttle.wait_left(db, throttle.address_key("10.9.9.9"), now=clock) == 1


def test_a_hash_made_with_weaker_settings_is_remade_at_sign_in(db, monkeypatch):
    ana = member(db)
    monkeypatch.setattr(people, "HASHER", PasswordHasher(time_cost=2, memory_cost=2048, parallelism=1))
    people.check_password(db, ana.email, PASSWORD, "10.0.0.1")
    with db.read() as conn:
        stored = conn.execute("SELECT password_hash FROM people WHERE id = ?", (ana.id,)).fetchone()[0]
    assert "t=2" in stored and "m=2048" in stored
    assert people.check_password(db, ana.email, PASSWORD, "10.0.0.1") == ana


def test_a_session_opens_with_its_cookie_and_a_removed_person_is_signed_out_at_once(db):
    member(db)
    bruno = member(db, "bruno@example.org", "researcher", "Bruno")
    cookie, session = sessions.start(db, bruno)
    found = sessions.find(db, cookie)
    assert found.person == bruno and sessions.csrf_ok(found, session.csrf)
    assert not sessions.csrf_ok(found, "forged") and not sessions.csrf_ok(found, None)
    assert sessions.find(db, "made-up") is None and sessions.find(db, "") is None
    with db.read() as conn:
        assert conn.execute("SELECT COUNT(*) FROM sessions WHERE token_hash = ?", (cookie,)).fetchone()[0] == 0
    people.remove(db, "bruno@example.org")
    assert sessions.find(db, cookie) is None
    assert [p.email for p in people.people(db)] == ["ana@example.org"]


def test_a_session_expires_and_sign_out_everywhere_ends_them_all(db):
    ana = member(db)
    clock = Clock()
    old, _ = sessions.start(db, ana, days=1, now=clock)
    clock.at += 86400 + 1
    assert sessions.find(db, old, now=clock) is None
    one, _ = sessions.start(db, ana, now=clock)
    two, _ = sessions.start(db, ana, now=clock)
    sessions.end(db, one)
    assert sessions.find(db, one, now=clock) is None and sessions.find(db, two, now=clock) is not None
    assert sessions.end_all(db, ana.id) == 1
    assert sessions.find(db, two, now=clock) is None


def test_finding_a_session_takes_well_under_a_millisecond(db):
    cookie, _ = sessions.start(db, member(db))
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(200):
            assert sessions.find(db, cookie) is not None
        best = min(best, (time.perf_counter() - started) / 200)
    assert best < 0.001


def test_the_last_admin_cannot_be_removed_or_demoted_and_roles_change(db):
    member(db)
    with pytest.raises(IgotError, match="last admin"):
        people.remove(db, "ana@example.org")
    with pytest.raises(IgotError, match="last admin"):
        people.set_role(db, "ana@example.org", "viewer")
    member(db, "bruno@example.org", "viewer", "Bruno")
    assert people.set_role(db, "bruno@example.org", "admin").role == "admin"
    assert people.set_role(db, "ana@example.org", "researcher").role == "researcher"
    assert people.by_email(db, "ana@example.org").role == "researcher"
    with pytest.raises(IgotError, match="viewer, researcher, admin"):
        people.set_role(db, "ana@example.org", "owner")


def test_what_each_role_may_do():
    assert roles.allows("viewer", roles.READ) and roles.allows("viewer", roles.COMMENT)
    assert not roles.allows("viewer", roles.WRITE)
    assert roles.allows("researcher", roles.WRITE) and not roles.allows("researcher", roles.MANAGE)
    assert all(roles.allows("admin", need) for need in roles.NEEDS)
    assert not roles.allows("stranger", roles.READ)
    with pytest.raises(roles.NotAllowed, match="researcher"):
        roles.require("viewer", roles.WRITE)


def test_a_removed_person_comes_back_only_through_a_new_invite(db):
    member(db)
    bruno = member(db, "bruno@example.org", "researcher", "Bruno")
    people.remove(db, "bruno@example.org")
    with pytest.raises(IgotError, match="Wrong email or password"):
        people.check_password(db, "bruno@example.org", PASSWORD, "10.0.0.1")
    back = people.accept(db, people.invite(db, "bruno@example.org", "viewer"), "Bruno B", "another password")
    assert back.id == bruno.id and back.role == "viewer"


def test_an_identity_joins_only_when_invited_unless_a_default_role_is_given(db):
    with pytest.raises(IgotError, match="not on this team"):
        people.join_with_identity(db, "carla@example.org", "Carla", "sub-1")
    people.invite(db, "carla@example.org", "researcher")
    carla = people.join_with_identity(db, "carla@example.org", "Carla", "sub-1")
    assert carla.role == "researcher"
    assert people.join_with_identity(db, "carla@example.org", "Carla", "sub-1") == carla
    with pytest.raises(IgotError, match="another sign-in identity"):
        people.join_with_identity(db, "carla@example.org", "Carla", "sub-2")
    dora = people.join_with_identity(db, "dora@example.org", "Dora", "sub-3", default_role="viewer")
    assert dora.role == "viewer"


def test_a_linked_state_folder_is_refused_and_its_target_untouched(tmp_path):
    library, elsewhere = tmp_path / "lib", tmp_path / "elsewhere"
    library.mkdir()
    elsewhere.mkdir()
    (library / ".igot").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(IgotError, match="Remove the link"):
        TeamDB(library)
    assert list(elsewhere.iterdir()) == []


def test_a_linked_database_file_is_refused(tmp_path):
    (tmp_path / ".igot").mkdir()
    target = tmp_path / "planted.sqlite3"
    (tmp_path / ".igot" / "team.sqlite3").symlink_to(target)
    with pytest.raises(IgotError, match="Remove the link"):
        TeamDB(tmp_path)
    assert not target.exists()


def test_comments_thread_oldest_first_and_only_the_author_or_an_admin_deletes(db):
    ana = member(db)
    bruno = member(db, "bruno@example.org", "viewer", "Bruno")
    first = comments.add(db, bruno, "int1", "h1", "  Is this the pricing complaint?  ")
    second = comments.add(db, ana, "int1", "h1", "Yes, and again at 12:30.")
    comments.add(db, ana, "int1", "h2", "Another highlight")
    assert [(c.name, c.text) for c in comments.thread(db, "int1", "h1")] == [
        ("Bruno", "Is this the pricing complaint?"), ("Ana", "Yes, and again at 12:30.")]
    assert sorted(comments.threads(db, "int1")) == ["h1", "h2"]
    with pytest.raises(roles.NotAllowed):
        comments.remove(db, second.id, by=bruno)
    comments.remove(db, first.id, by=bruno)
    comments.remove(db, second.id, by=ana)
    assert comments.thread(db, "int1", "h1") == []
    with pytest.raises(IgotError, match="1 to 2000"):
        comments.add(db, ana, "int1", "h1", "   ")
    with pytest.raises(IgotError, match="1 to 2000"):
        comments.add(db, ana, "int1", "h1", "x" * 2001)


def test_activity_newest_first_and_since_an_id(db):
    ana = member(db)
    first = activity.record(db, ana, activity.HIGHLIGHTED, "int1", "h1", time=12.5, text="the pricing complaint")
    comments.add(db, ana, "int1", "h1", "Look at this")
    last = activity.record(db, None, activity.ADDED_INTERVIEW, "int2")
    items = activity.since(db)
    assert [i.kind for i in items] == ["added interview", "commented", "highlighted"]
    assert items[-1].name == "Ana" and items[-1].time == 12.5 and items[-1].at.endswith("Z")
    assert [i.id for i in activity.since(db, after_id=first)] == [last, last - 1]
    assert activity.last_change(db, "int1", "h1").kind == activity.COMMENTED
    assert activity.last_change(db, "int1", "nothing") is None


def test_eight_threads_writing_at_once_lose_nothing(db):
    ana = member(db)
    errors = []

    def write(n: int) -> None:
        try:
            for i in range(50):
                activity.record(db, ana, activity.TAGGED, f"int{n}", f"h{i}")
                assert activity.since(db, limit=1)
        except Exception as exc:  # said below
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(activity.since(db, limit=1000)) == 400


def test_one_database_per_library_per_process(tmp_path):
    assert team_db(tmp_path) is team_db(tmp_path / "." / "")
    team_db(tmp_path).close()


def test_igot_people_invites_lists_and_removes(tmp_path, capsys):
    import argparse

    parser = argparse.ArgumentParser(prog="igot")
    add_people_parser(parser.add_subparsers(dest="command"))

    def igot(*argv: str) -> int:
        return run_people(parser.parse_args(list(argv)))

    remember_address(team_db(tmp_path), "https://igot.example.org/")
    assert igot("people", "add", "Ana@example.org", "--role", "admin", "--out", str(tmp_path)) == 0
    link = next(line.strip() for line in capsys.readouterr().out.splitlines() if "/invite/" in line)
    assert link.startswith("https://igot.example.org/invite/")
    db = team_db(tmp_path)
    people.accept(db, link.rsplit("/", 1)[1], "Ana\x1b[31m", PASSWORD)
    assert igot("people", "list", "--out", str(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "ana@example.org" in out and "never" in out and "\x1b" not in out
    assert igot("people", "remove", "ana@example.org", "--out", str(tmp_path)) == 2
    assert "last admin" in capsys.readouterr().err
    assert igot("people", "add", "x@example.org", "--role", "viewer", "--out", str(tmp_path / "missing")) == 2
    assert "No library folder" in capsys.readouterr().err
    assert not (tmp_path / "missing").exists()
    db.close()
