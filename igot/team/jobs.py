"""The team's queue of recordings to make into interviews, and the workers that make them (issue 51).

The queue lives in the team's database (LIB/.igot/team.sqlite3), not in the server's memory, so it
outlives the server: a restart picks up where it was. A job is taken by one worker at a time, under
a lease: the worker renews it while it works (each progress report), and a job whose lease ran out
(its worker killed, its computer gone) is taken again by the next worker that asks. Taking is one
`BEGIN IMMEDIATE` transaction (TeamDB.write), so two workers asking at once never get one job.

A worker is a computer the team's admin let in with `igot workers add NAME`: it proves itself with
a token shown once, of which only the SHA-256 is kept (a token is 32 random bytes: a hash lookup is
enough, no slow hash or constant-time comparison is needed). The server's own worker (a thread in
`igot serve --team`) takes jobs through the same `take`, as worker None.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any, Optional

from igot.errors import IgotError
from igot.team.db import TeamDB

KINDS = ("upload", "link", "path")
STATES = ("waiting", "running", "done", "failed", "cancelled")
ENDED = ("done", "failed", "cancelled")
LEASE_SECONDS = 60.0  # a worker not heard from this long has lost its job: another takes it
MAX_ATTEMPTS = 3  # a job whose worker died this many times fails (a recording that kills its worker)
KEPT_FINISHED = 50  # finished jobs still listed, newest first
MAX_WORKER_NAME = 100


class JobGone(IgotError):
    """No such job (HTTP 404)."""

    status = 404


class LeaseLost(IgotError):
    """A worker spoke of a job it does not hold (another took it, or it was never its own): HTTP 409."""

    status = 409


@dataclass(frozen=True)
class Job:
    id: int
    kind: str  # upload (a file in LIB/recordings), link, path (a file on the server's computer)
    source: str  # the recording's path on the server, or the link
    name: str
    options: dict  # igot.pipeline.RunOptions as plain values
    added_by: Optional[int]
    added: float
    state: str
    worker: Optional[int]  # None: the server's own
    worker_name: Optional[str]
    lease_until: Optional[float]
    attempts: int
    stage: str
    done: float
    total: float
    line: str
    stem: Optional[str]
    cancel: bool
    updated: float


@dataclass(frozen=True)
class Worker:
    id: int
    name: str
    created: float
    revoked: Optional[float]
    seen: Optional[float]
    device: Optional[str]
    job: Optional[int] = None  # the job it runs now
    job_name: Optional[str] = None


SELECT = """SELECT jobs.*, workers.name AS worker_name FROM jobs LEFT JOIN workers ON workers.id = jobs.worker"""


def _job(row) -> Job:
    return Job(row["id"], row["kind"], row["source"], row["name"], json.loads(row["options"]), row["added_by"],
               row["added"], row["state"], row["worker"], row["worker_name"], row["lease_until"], row["attempts"],
               row["stage"], row["done"], row["total"], row["line"], row["stem"], bool(row["cancel"]), row["updated"])


def _get(conn, job_id: int) -> Job:
    row = conn.execute(f"{SELECT} WHERE jobs.id = ?", (job_id,)).fetchone()
    if row is None:
        raise JobGone(f"No job {job_id} in the queue.", "Reload the page: it may have been removed.")
    return _job(row)


def get(db: TeamDB, job_id: int) -> Job:
    with db.read() as conn:
        return _get(conn, job_id)


# --- the queue -----------------------------------------------------------------------------------
def add(db: TeamDB, kind: str, source: str, name: str, options: dict, added_by: Optional[int]) -> Job:
    """A job waiting: `options` are the run's, as plain values (JSON)."""
    if kind not in KINDS:
        raise ValueError(f"unknown job kind {kind!r}")
    now = time.time()
    with db.write() as conn:
        cur = conn.execute("INSERT INTO jobs(kind, source, name, options, added_by, added, state, updated) "
                           "VALUES (?, ?, ?, ?, ?, ?, 'waiting', ?)",
                           (kind, source, name, json.dumps(options), added_by, now, now))
        return _get(conn, cur.lastrowid)


def take(db: TeamDB, worker: Optional[int], lease_seconds: float = LEASE_SECONDS) -> Optional[Job]:
    """The oldest waiting job, or a running one whose lease ran out, now leased to `worker` (None:
    the server's own) for `lease_seconds`; None when there is none. One transaction: a job is never
    taken twice. On the way, a job cancelled whose worker vanished ends cancelled, and one whose
    worker died MAX_ATTEMPTS times ends failed."""
    now = time.time()
    with db.write() as conn:
        conn.execute("UPDATE jobs SET state = 'cancelled', updated = ? WHERE state = 'running' AND cancel = 1 "
                     "AND lease_until < ?", (now, now))
        conn.execute("UPDATE jobs SET state = 'failed', updated = ?, line = name || ' stopped ' || attempts || "
                     "' times without a word from its worker (killed, or out of memory?): add it again to try once more.' "
                     "WHERE state = 'running' AND lease_until < ? AND attempts >= ?", (now, now, MAX_ATTEMPTS))
        row = conn.execute("SELECT id FROM jobs WHERE state = 'waiting' OR (state = 'running' AND lease_until < ?) "
                           "ORDER BY id LIMIT 1", (now,)).fetchone()
        if row is None:
            return None
        conn.execute("UPDATE jobs SET state = 'running', worker = ?, lease_until = ?, attempts = attempts + 1, "
                     "stage = 'starting', done = 0, total = 0, updated = ? WHERE id = ?",
                     (worker, now + lease_seconds, now, row["id"]))
        return _get(conn, row["id"])


def held(db: TeamDB, job_id: int, worker: Optional[int]) -> Job:
    """The job, when `worker` holds it now; LeaseLost otherwise (another's job, or one taken back)."""
    with db.read() as conn:
        job = _get(conn, job_id)
    if job.state != "running" or job.worker != worker:
        raise LeaseLost(f"Job {job_id} is not this worker's now ({job.state}).",
                        "Drop it and ask for the next job: another worker has it, or it ended.")
    return job


def held_or_done(db: TeamDB, job_id: int, worker: Optional[int]) -> Job:
    """The job, when `worker` holds it now or made it (its result sent again); LeaseLost otherwise."""
    with db.read() as conn:
        job = _get(conn, job_id)
    if job.state == "done" and job.worker == worker:
        return job
    return held(db, job_id, worker)


def renew(db: TeamDB, job_id: int, worker: Optional[int], stage: str, done: float, total: float,
          lease_seconds: float = LEASE_SECONDS) -> bool:
    """The worker's progress on its job, its lease renewed. False when it should stop: the lease
    was lost (another worker took the job, or the server put it back) or the job was cancelled."""
    now = time.time()
    with db.write() as conn:
        changed = conn.execute("UPDATE jobs SET lease_until = ?, stage = ?, done = ?, total = ?, updated = ? "
                               "WHERE id = ? AND state = 'running' AND worker IS ? AND cancel = 0",
                               (now + lease_seconds, stage[:100], done, total, now, job_id, worker)).rowcount
    return changed == 1


def finish(db: TeamDB, job_id: int, worker: Optional[int], state: str, line: str = "",
           stem: Optional[str] = None) -> Job:
    """The job ended (done, failed, cancelled) as `worker` says. Said twice (a result sent again),
    the first stays. LeaseLost when the job is not the worker's (and has not ended). A job cancelled
    meanwhile that did not end done ends cancelled."""
    if state not in ENDED:
        raise ValueError(f"unknown end {state!r}")
    now = time.time()
    with db.write() as conn:
        job = _get(conn, job_id)
        if job.state in ENDED:
            return job
        if job.state != "running" or job.worker != worker:
            raise LeaseLost(f"Job {job_id} is not this worker's now ({job.state}).",
                            "Drop it and ask for the next job.")
        if job.cancel and state != "done":
            state, line = "cancelled", ""
        conn.execute("UPDATE jobs SET state = ?, line = ?, stem = ?, lease_until = NULL, cancel = 0, updated = ? "
                     "WHERE id = ?", (state, line[:1000], stem, now, job_id))
        return _get(conn, job_id)


def put_back(db: TeamDB, job_id: int, worker: Optional[int]) -> None:
    """The worker stops without finishing (the server stops): its job waits again for the next."""
    with db.write() as conn:
        conn.execute("UPDATE jobs SET state = CASE WHEN cancel = 1 THEN 'cancelled' ELSE 'waiting' END, worker = NULL, "
                     "lease_until = NULL, attempts = MAX(attempts - 1, 0), updated = ? "
                     "WHERE id = ? AND state = 'running' AND worker IS ?", (time.time(), job_id, worker))


def resume(db: TeamDB) -> int:
    """At the server's start: the jobs its own worker ran when it stopped, and those whose lease ran
    out, wait again (a job still leased to a live worker goes on). How many."""
    now = time.time()
    with db.write() as conn:
        return conn.execute("UPDATE jobs SET state = CASE WHEN cancel = 1 THEN 'cancelled' ELSE 'waiting' END, "
                            "worker = NULL, lease_until = NULL, updated = ? "
                            "WHERE state = 'running' AND (worker IS NULL OR lease_until < ?)", (now, now)).rowcount


def cancel(db: TeamDB, job_id: int) -> Job:
    """A waiting job cancelled at once; a running one told to stop (its worker hears it at its next
    progress report); a finished one taken off the list."""
    now = time.time()
    with db.write() as conn:
        job = _get(conn, job_id)
        if job.state == "waiting":
            conn.execute("UPDATE jobs SET state = 'cancelled', updated = ? WHERE id = ?", (now, job_id))
        elif job.state == "running":
            conn.execute("UPDATE jobs SET cancel = 1, updated = ? WHERE id = ?", (now, job_id))
        else:
            conn.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
            return job
        return _get(conn, job_id)


def listing(db: TeamDB, kept_finished: int = KEPT_FINISHED) -> list[Job]:
    """Every job waiting or running, and the last `kept_finished` that ended, in the order added."""
    with db.read() as conn:
        active = conn.execute(f"{SELECT} WHERE jobs.state IN ('waiting', 'running')").fetchall()
        ended = conn.execute(f"{SELECT} WHERE jobs.state NOT IN ('waiting', 'running') ORDER BY jobs.id DESC LIMIT ?",
                             (kept_finished,)).fetchall()
    return sorted((_job(r) for r in [*active, *ended]), key=lambda j: j.id)


def needed_sources(db: TeamDB) -> set[str]:
    """The recordings (paths) that waiting and running jobs still need: not to be cleaned up."""
    with db.read() as conn:
        return {r["source"] for r in conn.execute("SELECT source FROM jobs WHERE state IN ('waiting', 'running') "
                                                  "AND kind = 'upload'")}


def active_ids(db: TeamDB) -> set[int]:
    """The jobs waiting or running: those whose stages a worker sent are still kept."""
    with db.read() as conn:
        return {r["id"] for r in conn.execute("SELECT id FROM jobs WHERE state IN ('waiting', 'running')")}


# --- the workers ---------------------------------------------------------------------------------
def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _worker(row) -> Worker:
    keys = row.keys()
    return Worker(row["id"], row["name"], row["created"], row["revoked"], row["seen"], row["device"],
                  row["job"] if "job" in keys else None, row["job_name"] if "job_name" in keys else None)


def check_worker_name(name: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > MAX_WORKER_NAME or not all(c.isprintable() for c in name):
        raise IgotError(f"{name[:40]!r} is not a worker's name.",
                        f"Give a name of at most {MAX_WORKER_NAME} printable characters, e.g. gpu-box-1.")
    return name


def add_worker(db: TeamDB, name: str) -> str:
    """A worker let in: its token (shown once; only its SHA-256 is kept)."""
    name = check_worker_name(name)
    token = secrets.token_urlsafe(32)
    while token.startswith("-"):  # `igot worker --token -x…` would read it as an option
        token = secrets.token_urlsafe(32)
    with db.write() as conn:
        if conn.execute("SELECT 1 FROM workers WHERE name = ?", (name,)).fetchone():
            raise IgotError(f"A worker named {name!r} was already added.",
                            f"Choose another name, or revoke it first (igot workers revoke {name}) and add it again "
                            "under a new name.")
        conn.execute("INSERT INTO workers(name, token_hash, created) VALUES (?, ?, ?)", (name, _hash(token), time.time()))
    return token


def revoke_worker(db: TeamDB, name: str) -> Worker:
    """The worker's token refused from now on (its next request); the job it ran goes to another once
    its lease runs out."""
    with db.write() as conn:
        row = conn.execute("SELECT * FROM workers WHERE name = ?", (name.strip(),)).fetchone()
        if row is None:
            raise IgotError(f"No worker named {name!r}.", "See the workers' names with igot workers list.")
        if row["revoked"] is None:
            conn.execute("UPDATE workers SET revoked = ? WHERE id = ?", (time.time(), row["id"]))
        return _worker(conn.execute("SELECT * FROM workers WHERE id = ?", (row["id"],)).fetchone())


def workers(db: TeamDB, revoked: bool = False) -> list[Worker]:
    """The workers (not those revoked, unless asked), by name, each with the job it runs now."""
    with db.read() as conn:
        rows = conn.execute("SELECT workers.*, jobs.id AS job, jobs.name AS job_name FROM workers "
                            "LEFT JOIN jobs ON jobs.worker = workers.id AND jobs.state = 'running' "
                            + ("" if revoked else "WHERE workers.revoked IS NULL ") + "ORDER BY workers.name").fetchall()
    return [_worker(r) for r in rows]


def find_worker(db: TeamDB, token: str) -> Optional[Worker]:
    """The worker this token belongs to; None for an unknown or revoked one."""
    if not token or len(token) > 200:
        return None
    with db.read() as conn:
        row = conn.execute("SELECT * FROM workers WHERE token_hash = ? AND revoked IS NULL", (_hash(token),)).fetchone()
    return _worker(row) if row is not None else None


def seen(db: TeamDB, worker: int, device: Optional[str] = None) -> None:
    """The worker asked for a job now (from `device`, when it says)."""
    with db.write() as conn:
        conn.execute("UPDATE workers SET seen = ?, device = COALESCE(?, device) WHERE id = ?",
                     (time.time(), device[:100] if isinstance(device, str) else None, worker))


def plain(value: Any) -> Any:
    """A value as JSON holds it (a Path as its text, a tuple as a list)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return str(value)
