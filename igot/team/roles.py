"""Who may do what: three roles, four needs (and sharing, which the team sets).

A viewer reads, plays, searches, asks and comments; a researcher also changes the interviews
(highlights, tags, corrections, speaker names, adding interviews, glossary, themes, the summary
prompt); an admin also manages the team, the workers and deletes. Each web route names the one
need it has, so the rule lives here and nowhere else.
"""

from __future__ import annotations

from igot.errors import IgotError

VIEWER, RESEARCHER, ADMIN = "viewer", "researcher", "admin"
ROLES = (VIEWER, RESEARCHER, ADMIN)

READ = "read"  # read, play, search, ask
COMMENT = "comment"
WRITE = "write"  # highlights, tags, corrections, speaker names, adding interviews, glossary, themes, summary prompt
MANAGE = "manage"  # people, workers, deletes
NEEDS = (READ, COMMENT, WRITE, MANAGE)
# Make a link for people outside the team (igot.team.shares): which roles may is the team's own
# setting in its database (default researchers and admins), so it is checked there, not in ALLOWED.
SHARE = "share"
# What only a worker may ask (igot.team.jobs: a computer let in with `igot workers add`, proving
# itself with its bearer token): no person's role has it, so a session never reaches the worker's
# routes, and a worker's token reaches nothing else.
WORKER = "worker"
PUBLIC = "public"  # what anyone may ask, signed in or not: the sign-in and invite pages and forms, the page code

# What each need lets a person do, in the words a refusal uses.
WHAT = {READ: "read the interviews", COMMENT: "comment on highlights",
        WRITE: "change the interviews (highlights, tags, corrections, speakers' names, the glossary, themes)",
        MANAGE: "manage the team's people and workers", SHARE: "make links for people outside the team"}

ALLOWED = {
    VIEWER: frozenset({READ, COMMENT}),
    RESEARCHER: frozenset({READ, COMMENT, WRITE}),
    ADMIN: frozenset({READ, COMMENT, WRITE, MANAGE}),
}


class NotAllowed(IgotError):
    """A signed-in person asked for what their role does not allow (HTTP 403)."""

    status = 403


def check_role(role: str) -> str:
    """`role` when it is one of the three; an IgotError naming them otherwise."""
    if role not in ROLES:
        raise IgotError(f"'{role}' is not a role.", f"Give one of: {', '.join(ROLES)}.")
    return role


def allows(role: str, need: str) -> bool:
    """Whether `role` may do what `need` names (an unknown role or need allows nothing)."""
    return need in ALLOWED.get(role, frozenset())


def require(role: str, need: str) -> None:
    """NotAllowed, saying which role it takes, unless `role` allows `need`."""
    if not allows(role, need):
        least = next((r for r in ROLES if allows(r, need)), ADMIN)
        raise NotAllowed(f"Refused by the server: a {role} may not {WHAT.get(need, need)}.",
                         f"Ask an admin to make you a{'n' * (least == ADMIN)} {least}.")
