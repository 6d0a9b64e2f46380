"""Who may ask what of the workspace: one check, in one place.

Every route declares what it needs (`need(READ)`, `need(WRITE)`...: igot.team.roles), and
`create_app` refuses to build an app with a route that declares nothing, so no route can be
added that nobody checks. In one person's workspace (`igot serve`) the Door (igot.workspace.guard)
already let the request in and every need is met. In a team's (`igot serve --team`) the request
must come with a session (a cookie scripts cannot read, bound to the site: igot.team.sessions),
a change must also carry the session's own token (written into the page, never in a cookie: a
page of another site can make the browser send the cookie but cannot read the token), and the
person's role must allow what the route needs: checked here, by the server, on every request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional
from urllib.parse import urlsplit

from igot.errors import IgotError
from igot.team import roles

try:
    from fastapi import Depends, Request
except ImportError:  # pragma: no cover - the server says what to install
    Depends = Request = None  # type: ignore


class SignInNeeded(IgotError):
    """A request that needs a session came without one (or with one that ended)."""

    status = 401


@dataclass
class Team:
    """A team's server: its database (people, sessions, comments, activity), the address people
    open it at, and the identity provider they may sign in with."""

    db: object  # igot.team.db.TeamDB
    origin: str  # "https://igot.example.com[:port]": what the browser's address bar shows
    oidc: object = None  # igot.team.oidc.Oidc, or None: passwords only
    behind_proxy: bool = False  # the proxy in front does HTTPS and gives the client's address
    extra_origins: tuple[str, ...] = field(default=())

    def host(self) -> str:
        return urlsplit(self.origin).netloc.lower()

    def origins(self) -> set[str]:
        return {self.origin.rstrip("/").lower(), *(o.rstrip("/").lower() for o in self.extra_origins)}

    def hosts(self) -> set[str]:
        return {urlsplit(o).netloc for o in self.origins()}


@dataclass(frozen=True)
class Need:
    """What a route needs of the person asking (one of igot.team.roles' needs)."""

    need: str

    def __call__(self, request: Request) -> None:
        if self.need == roles.WORKER:  # a worker's token, checked by the team's door; never a person
            if getattr(request.state, "worker", None) is None:
                raise roles.NotAllowed("Refused by the server: only a worker (igot worker, with its token) may ask this.",
                                       "Open the workspace's page instead.")
            return
        if self.need == roles.PUBLIC or getattr(request.app.state, "team", None) is None:
            return  # anyone may ask it; or one person's workspace, where the Door let the request in
        session = getattr(request.state, "session", None)
        if session is None:
            raise SignInNeeded("You are not signed in (or your session ended).", "Sign in again.")
        if self.need == roles.SHARE:  # who may is the team's setting, kept in its database
            from igot.team import shares

            shares.refuse_unless_may_share(request.app.state.team.db, session.person.role)
            return
        roles.require(session.person.role, self.need)


def need(what: str):
    """The dependency a route declares: `@router.post(..., dependencies=[need(WRITE)])`."""
    if what not in (*roles.NEEDS, roles.SHARE, roles.PUBLIC, roles.WORKER):
        raise ValueError(f"unknown need {what!r}")
    return Depends(Need(what))


def api_routes(routes) -> list:
    """Every route of an app or router, those of the routers it includes too (FastAPI keeps an
    included router as one entry that holds the router)."""
    found = []
    for route in routes:
        inner = getattr(route, "original_router", None)
        if inner is not None:
            found += api_routes(inner.routes)
        elif hasattr(route, "dependencies") and hasattr(route, "methods"):
            found.append(route)
    return found


def declared(route) -> Optional[str]:
    """What a route declared it needs, or None."""
    for dep in getattr(route, "dependencies", ()):
        if isinstance(dep.dependency, Need):
            return dep.dependency.need
    return None


def person(request: Request):
    """The person asking (igot.team.people.Person), or None in one person's workspace."""
    session = getattr(request.state, "session", None)
    return session.person if session is not None else None


def by(request: Request) -> str:
    """The name a change is recorded under: the person's, or "" for one person's workspace."""
    who = person(request)
    return (who.name or who.email) if who is not None else ""
