"""The team's database: LIB/.igot/team.sqlite3, opened once per library per process.

The server calls it from a thread pool, so each thread gets its own connection (SQLite connections
are cheap and a connection shared between threads serialises every read). The journal is WAL: a
read never waits for a write, and a write never waits for reads. Writes in this process queue on
one lock before `BEGIN IMMEDIATE`, so they wait in line instead of spinning in SQLite's busy
handler; another process (`igot people` beside the server) is waited for by busy_timeout.

Every change goes through `TeamDB.write()` (the one door): one transaction, committed when the
block ends, rolled back on an error. A write inside a write joins it (a comment and its activity
item are one change).

The library folder may hold files planted by anyone who could write there: the database is opened
only when neither .igot nor the database file (nor its -wal, -shm, -journal companions) is a
symbolic link, so a team's passwords are never written to, or read from, a place outside it.
(Checked before each connection opens: a link planted in that instant is not seen, by someone who
could already change the library itself.) A thread's connection stays open until `close()`: the
server's pool keeps its threads, so there are as many connections as threads.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Optional

from igot.errors import IgotError
from igot.runtime.changes import NOFOLLOW, own_folder
from igot.runtime.files import STATE, check_no_link

NAME = "team.sqlite3"
COMPANIONS = ("-wal", "-shm", "-journal")  # the files SQLite keeps beside the database
SCHEMA_VERSION = 3
BUSY_MS = 10_000  # how long a write waits for another process's write
DEFAULT_ADDRESS = "http://127.0.0.1:8443"  # igot serve --team on this computer (igot.workspace.team_server.DEFAULT_PORT)

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS people (
        id INTEGER PRIMARY KEY,
        email TEXT NOT NULL UNIQUE,
        name TEXT NOT NULL,
        role TEXT NOT NULL,
        password_hash TEXT,
        oidc_subject TEXT UNIQUE,
        created REAL NOT NULL,
        removed REAL,
        signed_in REAL)""",  # when their last session started (igot people list)
    """CREATE TABLE IF NOT EXISTS invites (
        token_hash TEXT PRIMARY KEY,
        email TEXT NOT NULL,
        role TEXT NOT NULL,
        expires REAL NOT NULL,
        used REAL,
        by INTEGER REFERENCES people(id))""",
    "CREATE INDEX IF NOT EXISTS invites_email ON invites(email)",
    """CREATE TABLE IF NOT EXISTS sessions (
        token_hash TEXT PRIMARY KEY,
        person_id INTEGER NOT NULL REFERENCES people(id),
        csrf TEXT NOT NULL,
        created REAL NOT NULL,
        seen REAL NOT NULL,
        expires REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS sessions_person ON sessions(person_id)",
    """CREATE TABLE IF NOT EXISTS failures (
        key TEXT PRIMARY KEY,
        count INTEGER NOT NULL,
        last REAL NOT NULL,
        until REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS failures_last ON failures(last)",
    """CREATE TABLE IF NOT EXISTS comments (
        id INTEGER PRIMARY KEY,
        stem TEXT NOT NULL,
        highlight_id TEXT NOT NULL,
        person_id INTEGER NOT NULL REFERENCES people(id),
        text TEXT NOT NULL,
        created REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS comments_thread ON comments(stem, highlight_id, id)",
    """CREATE TABLE IF NOT EXISTS activity (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        person_id INTEGER REFERENCES people(id),
        at REAL NOT NULL,
        stem TEXT NOT NULL,
        kind TEXT NOT NULL,
        thing TEXT NOT NULL,
        time REAL,
        text TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS activity_thing ON activity(stem, thing, id)",
    """CREATE TABLE IF NOT EXISTS settings (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL)""",
]

# Version 2 (issue 51): the queue of recordings to make, and the workers that make them
# (igot.team.jobs). Added to a version 1 database as it is; version 1's tables stay unchanged.
SCHEMA_2 = [
    """CREATE TABLE IF NOT EXISTS workers (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        token_hash TEXT NOT NULL UNIQUE,
        created REAL NOT NULL,
        revoked REAL,
        seen REAL,
        device TEXT)""",
    """CREATE TABLE IF NOT EXISTS jobs (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT NOT NULL CHECK (kind IN ('upload', 'link', 'path')),
        source TEXT NOT NULL,
        name TEXT NOT NULL,
        options TEXT NOT NULL,
        added_by INTEGER REFERENCES people(id),
        added REAL NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('waiting', 'running', 'done', 'failed', 'cancelled')),
        worker INTEGER REFERENCES workers(id),
        lease_until REAL,
        attempts INTEGER NOT NULL DEFAULT 0,
        stage TEXT NOT NULL DEFAULT '',
        done REAL NOT NULL DEFAULT 0,
        total REAL NOT NULL DEFAULT 0,
        line TEXT NOT NULL DEFAULT '',
        stem TEXT,
        cancel INTEGER NOT NULL DEFAULT 0,
        updated REAL NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS jobs_state ON jobs(state, id)",
]
# Version 3 (issue 52): links for people outside the team (igot.team.shares). Only the key's
# sha256 is kept: a copy of the database opens no link.
SCHEMA_3 = [
    """CREATE TABLE IF NOT EXISTS shares (
        id TEXT PRIMARY KEY,
        key_hash TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        stem TEXT NOT NULL DEFAULT '',
        thing TEXT NOT NULL DEFAULT '',
        title TEXT NOT NULL DEFAULT '',
        hide_names INTEGER NOT NULL DEFAULT 0,
        hide_interview INTEGER NOT NULL DEFAULT 0,
        made_by INTEGER REFERENCES people(id),
        made REAL NOT NULL,
        expires REAL,
        revoked REAL,
        opened INTEGER NOT NULL DEFAULT 0,
        last_opened REAL)""",
    "CREATE INDEX IF NOT EXISTS shares_made ON shares(made)",
]
MIGRATIONS = {1: SCHEMA, 2: SCHEMA_2, 3: SCHEMA_3}  # the statements that bring a database to each version


class TeamDB:
    """The team database of the library `folder` (see the module). Prefer `team_db(folder)`: one
    per library per process, so the write lock is shared by every thread."""

    def __init__(self, folder: Path | str):
        self.folder = Path(folder)
        self.path = database_path(self.folder)
        self._local = threading.local()
        self._write_lock = threading.Lock()
        self._all: list[sqlite3.Connection] = []
        self._all_guard = threading.Lock()
        self._create()

    def _connect(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use (autocommit: transactions are ours)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            check_database(self.folder, self.path)
            conn = sqlite3.connect(self.path, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False)
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA synchronous = NORMAL")  # WAL: durable at checkpoints, never corrupt
            self._local.conn = conn
            self._local.depth = 0
            with self._all_guard:
                self._all.append(conn)
        return conn

    def _create(self) -> None:
        conn = self._connect()
        if conn.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() != "wal":
            raise IgotError(f"The team database {self.path} cannot use SQLite's WAL journal here.",
                            "Keep the library on a local disk (not a network share), then start again.")
        with self.write() as w:
            version = w.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise IgotError(f"The team database {self.path} was made by a newer iGot (schema {version}).",
                                "Upgrade iGot (pip install -U igot-interviews), then start again.")
            for step in range(version + 1, SCHEMA_VERSION + 1):
                for statement in MIGRATIONS[step]:
                    w.execute(statement)
                w.execute(f"PRAGMA user_version = {step}")

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One transaction that changes the database: committed when the block ends, rolled back
        when it raises. Inside another write of this thread it joins that one."""
        conn = self._connect()
        if getattr(self._local, "reading", False):
            raise RuntimeError("TeamDB.write() inside read(): open the write first, it reads too")
        if self._local.depth > 0:
            self._local.depth += 1
            try:
                yield conn
            finally:
                self._local.depth -= 1
            return
        with self._write_lock:
            conn.execute("BEGIN IMMEDIATE")
            self._local.depth = 1
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            else:
                try:
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
            finally:
                self._local.depth = 0

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A consistent view for queries (one snapshot across its statements); never waits for a
        write. Inside a write it sees that write's changes."""
        conn = self._connect()
        if self._local.depth > 0:
            yield conn
            return
        conn.execute("BEGIN")
        self._local.reading = True
        try:
            yield conn
        finally:
            self._local.reading = False
            conn.execute("COMMIT")

    def close(self) -> None:
        """Close every thread's connection (tests, and a server that stops)."""
        with self._all_guard:
            conns, self._all = self._all, []
        for conn in conns:
            conn.close()
        self._local = threading.local()


def database_path(folder: Path) -> Path:
    """LIB/.igot/team.sqlite3, with .igot made when missing; an IgotError when .igot is a link
    or the library is no folder (a mistyped --out must not become a new library)."""
    if not Path(folder).is_dir():
        raise IgotError(f"No library folder {folder}.", "Give the folder iGot wrote the interviews to (--out).")
    state = own_folder(Path(folder) / STATE, Path(folder))
    return state / NAME


def check_database(folder: Path, path: Path) -> None:
    """Refuse (IgotError saying to remove it) a database, or a companion file of it, that is a
    link or no plain file; make the database file itself without following a link."""
    check_no_link(path.parent, folder)
    for companion in COMPANIONS:
        check_no_link(path.with_name(path.name + companion), folder)
    check_no_link(path, folder)
    try:
        handle = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o600)
    except OSError as err:
        raise IgotError(f"The team database {path} cannot be opened ({err.strerror}).",
                        "Remove what is in its place, or make the library folder writable, then start again.") from None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise IgotError(f"{path} is not a plain file: iGot keeps the team's database there.",
                            "Move it away, then start again: iGot makes the database anew.")
    finally:
        os.close(handle)


_opened: dict[str, TeamDB] = {}
_opened_guard = threading.Lock()


def team_db(folder: Path | str) -> TeamDB:
    """The one TeamDB of the library `folder` in this process (one write lock for all its threads)."""
    key = str(Path(folder).resolve())
    with _opened_guard:
        db = _opened.get(key)
        if db is None:
            db = _opened[key] = TeamDB(Path(key))
        return db


def setting(db: TeamDB, key: str) -> Optional[str]:
    with db.read() as conn:
        row = conn.execute("SELECT value FROM settings WHERE key = ?", (key,)).fetchone()
    return row["value"] if row else None


def set_setting(db: TeamDB, key: str, value: str) -> None:
    with db.write() as conn:
        conn.execute("INSERT INTO settings(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                     (key, value))


def remember_address(db: TeamDB, url: str) -> None:
    """The address the team server is reached at, so `igot people add` prints links that work."""
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")) or any(c.isspace() for c in url):
        raise IgotError(f"'{url}' is not a web address.", "Give one like https://igot.example.org")
    set_setting(db, "address", url)


def recorded_address(db: TeamDB) -> str:
    """The team server's address as it recorded it; http://127.0.0.1:8443 when none was."""
    return setting(db, "address") or DEFAULT_ADDRESS
