"""`igot people`: invite, list, remove and change the role of the people of a served library,
from the terminal of the machine that holds it (the first admin is invited this way).

    igot people add ana@example.org --role admin --out LIB   prints a one-time invite link
    igot people list --out LIB
    igot people remove ana@example.org --out LIB
    igot people role ana@example.org researcher --out LIB
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import datetime
from pathlib import Path

from igot.errors import IgotError
from igot.team import jobs, people, roles
from igot.team.db import TeamDB, recorded_address, team_db

OUT_DIR = Path("igot-output")  # igot's default library folder (igot.pipeline.OUT_DIR, a later layer)


def add_people_parser(subparsers, out_dir: Path = OUT_DIR) -> None:
    """The `people` command and its actions; `out_dir`: the CLI's default library folder."""
    p = subparsers.add_parser("people", help="the people of a library served to a team (igot serve --team): invite, list, remove, role")
    actions = p.add_subparsers(dest="action", required=True)
    a = actions.add_parser("add", help="invite someone: prints a one-time link to join with")
    a.add_argument("email", help="their email address (they sign in with it)")
    a.add_argument("--role", required=True, choices=roles.ROLES,
                   help="viewer: reads and comments; researcher: also highlights, tags, corrects, adds interviews; admin: also manages people")
    a.add_argument("--url", help="the team server's address for the link (default: the one it recorded, else http://127.0.0.1:8443)")
    a.add_argument("--days", type=float, default=people.INVITE_DAYS, help=f"days the link stays valid (default: {people.INVITE_DAYS})")
    s = actions.add_parser("list", help="everyone on the team: email, name, role, last sign-in")
    r = actions.add_parser("remove", help="take someone off the team: signed out at once")
    r.add_argument("email")
    o = actions.add_parser("role", help="give someone another role")
    o.add_argument("email")
    o.add_argument("role", choices=roles.ROLES)
    for q in (a, s, r, o):  # on each action: a default on `people` too would overwrite the one given
        q.add_argument("--out", type=Path, default=out_dir, help=f"library folder (default: {out_dir})")


def run_people(args: argparse.Namespace) -> int:
    """`igot people ACTION`: 0 when done, 2 on an error (said on one line)."""
    try:
        db = team_db(args.out)
        if args.action == "add":
            return add(db, args)
        if args.action == "list":
            return list_people(db)
        if args.action == "remove":
            gone = people.remove(db, args.email)
            print(f"Removed {printable(gone.email)}: signed out everywhere; their comments stay.")
            return 0
        changed = people.set_role(db, args.email, args.role)
        print(f"{printable(changed.email)} is now a {changed.role}.")
        return 0
    except IgotError as exc:
        print("igot: " + printable(str(exc)), file=sys.stderr)
        return 2


def add(db: TeamDB, args: argparse.Namespace) -> int:
    token = people.invite(db, args.email, args.role, days=args.days)
    url = (args.url or recorded_address(db)).rstrip("/")
    expires = time.time() + args.days * 86400
    print(f"Invite for {printable(args.email.strip().lower())} as {args.role}: send them this link (it works once):")
    print(f"  {url}/invite/{token}")
    print(f"It expires {datetime.fromtimestamp(expires).strftime('%Y-%m-%d %H:%M')} (in {args.days:g} days).")
    return 0


def list_people(db: TeamDB) -> int:
    rows = [("EMAIL", "NAME", "ROLE", "SIGNED IN LAST")]
    with db.read() as conn:
        found = conn.execute("SELECT email, name, role, signed_in FROM people WHERE removed IS NULL ORDER BY email").fetchall()
    for r in found:
        last = datetime.fromtimestamp(r["signed_in"]).strftime("%Y-%m-%d %H:%M") if r["signed_in"] else "never"
        rows.append((printable(r["email"]), printable(r["name"]), r["role"], last))
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[3])
    if not found:
        print("No one yet: invite the first admin with igot people add EMAIL --role admin", file=sys.stderr)
    return 0


def printable(text: str) -> str:
    """`text` with no character that would steer the terminal (a name is typed by its owner)."""
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def add_workers_parser(subparsers, out_dir: Path = OUT_DIR) -> None:
    """The `workers` command: the computers let in to make a served library's queued interviews."""
    p = subparsers.add_parser("workers", help="the computers that make a team's queued interviews (igot worker): add, list, revoke")
    actions = p.add_subparsers(dest="action", required=True)
    a = actions.add_parser("add", help="let a computer in: prints its token once, and how to start it")
    a.add_argument("name", help="a name for it, such as gpu-box-1")
    a.add_argument("--url", help="the team server's address (default: the one it recorded)")
    s = actions.add_parser("list", help="every worker: name, device, last seen, the job it runs")
    r = actions.add_parser("revoke", help="refuse a worker's token from its next request")
    r.add_argument("name")
    for q in (a, s, r):
        q.add_argument("--out", type=Path, default=out_dir, help=f"library folder (default: {out_dir})")


def run_workers(args: argparse.Namespace) -> int:
    """`igot workers ACTION`: 0 when done, 2 on an error (said on one line)."""
    try:
        db = team_db(args.out)
        if args.action == "add":
            token = jobs.add_worker(db, args.name)
            url = (args.url or recorded_address(db)).rstrip("/")
            print(f"Worker {printable(args.name.strip())} added. Its token (shown this once; keep it secret):")
            print(f"  {token}")
            print("Start it on the computer that will make the interviews:")
            print(f"  igot worker --server {url} --token {token}")
            return 0
        if args.action == "list":
            rows = [("NAME", "DEVICE", "SEEN LAST", "JOB")]
            for w in jobs.workers(db):
                seen = datetime.fromtimestamp(w.seen).strftime("%Y-%m-%d %H:%M") if w.seen else "never"
                rows.append((printable(w.name), w.device or "", seen, printable(w.job_name or "")))
            widths = [max(len(row[i]) for row in rows) for i in range(3)]
            for row in rows:
                print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[3])
            if len(rows) == 1:
                print("No worker yet: add one with igot workers add NAME", file=sys.stderr)
            return 0
        gone = jobs.revoke_worker(db, args.name)
        print(f"Worker {printable(gone.name)} revoked: its next request is refused; its job goes to another worker.")
        return 0
    except IgotError as exc:
        print("igot: " + printable(str(exc)), file=sys.stderr)
        return 2
