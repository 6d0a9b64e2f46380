"""A team's server's door: anyone on the network can reach it, so every request is checked here
before any route runs.

- Host must be the team's own address (a host name pointed at the server by someone else, DNS
  rebinding, is refused) and Origin, when sent, the team's own page.
- A page of another site may only open the workspace by a link (a GET navigation); anything
  else it makes the browser send (a form post, an <img>, a fetch) is refused by Sec-Fetch-Site.
- A link shared with people outside the team (/s/KEY...) is read by anyone, from anywhere, with
  no session: only what its key opens is reachable there (igot.workspace.routes.public).
- Everything else but the sign-in pages and the page code needs a session: a cookie scripts cannot
  read (HttpOnly), sent only over HTTPS (Secure) and not with requests other sites start
  (SameSite=Lax), whose value only the database's hash of it knows (igot.team.sessions).
- A change (POST, PUT, PATCH, DELETE) must also carry the session's own token, which the server
  wrote into the page: a page of another site can make the browser send the cookie, never read
  the token. The sign-in and invite forms, which have no session yet, must come from the team's
  own page (Origin), so no site can sign a visitor in as someone else.
Which role may do what is the routes' declared need (igot.workspace.access), checked after this.
"""

from __future__ import annotations

import hmac
import re
from typing import Optional

from fastapi import Request
from fastapi.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response

from igot.team import jobs, sessions
from igot.workspace.access import Team

TOKEN_HEADER = "x-igot-token"  # what the page's script sends with every change
# What needs no session: the sign-in and invite pages, the forms they post, and the page code.
SIGN_IN_PAGES = ("/signin", "/signin/oidc", "/signin/oidc/callback")
INVITE_PAGE = "/invite/"
SIGN_IN_POSTS = ("/api/session",)
INVITE_POST = "/api/invites/"
PAGE_CODE = "/static/"
# What another site may open by a link: the workspace itself (then the sign-in page, if needed),
# an invite, and the identity provider's return to the sign-in.
OPENED_BY_LINK = ("/", "/signin", "/signin/oidc/callback")
# A worker's routes (igot.workspace.routes.workers): only with a worker's bearer token, which is
# accepted nowhere else. A worker is no browser: no cookie, no page token, no Origin.
WORKER_ROUTES = "/api/worker/"
# Where a person goes once signed in: a route of the workspace's page, as its #fragment (the page is
# one, at "/"), e.g. "/interview/joana?t=5": a "/" (not "//"), then URL characters only, at most
# 2,000 of them. The page's own check is static/links.js landing(); the two say the same.
LANDING = re.compile(r"/(?!/)[A-Za-z0-9\-._~!$&'()*+,;=:@/?%]{0,1999}")


def landing(route: Optional[str]) -> str:
    """The address to send a person to once signed in, from the workspace route they were opening
    (`next`, the #fragment the provider's round trip would lose): "/#" + that route when it is one,
    else "/". Only ever this server's own page: never another site (an absolute URL, //host), a
    script (javascript:) or a header (a line break)."""
    return f"/#{route}" if isinstance(route, str) and LANDING.fullmatch(route) else "/"
# A link shared with people outside the team (igot.workspace.routes.public): read (GET, HEAD) by
# anyone, from anywhere (a chat tool's preview, another site's frame), with no session looked up;
# what it answers is only what its key opens.
SHARED_LINKS = "/s/"


def bearer(request: Request) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def is_public(method: str, path: str) -> bool:
    if method in ("GET", "HEAD"):
        return path in SIGN_IN_PAGES or path == "/api/signin" or path.startswith(INVITE_PAGE) \
            or path.startswith(INVITE_POST) or path.startswith(PAGE_CODE)
    return method == "POST" and (path in SIGN_IN_POSTS or path.startswith(INVITE_POST))


def refusal(team: Team, request: Request) -> Optional[Response]:
    """The answer refusing `request`, or None to let it through; the session found (or None) is put
    on request.state.session either way."""
    request.state.session = None
    request.state.worker = None
    method, path = request.method, request.url.path
    host, origin = request.headers.get("host", ""), request.headers.get("origin")
    if host.lower() not in team.hosts():
        return PlainTextResponse(f"Refused: this iGot server answers only at {team.origin}.\n", status_code=403)
    if path.startswith(WORKER_ROUTES):
        worker = jobs.find_worker(team.db, bearer(request))
        if worker is None or origin is not None or request.cookies.get(sessions.COOKIE):
            return JSONResponse({"error": "Refused: this worker's token is not (or no longer) valid. "
                                 "Ask the team's admin for a new one (igot workers add NAME)."}, status_code=401)
        request.state.worker = worker
        return None
    if origin is not None and origin.rstrip("/").lower() not in team.origins():
        return PlainTextResponse(f"Refused: a page from {origin!r} may not use this iGot server.\n", status_code=403)
    if path.startswith(SHARED_LINKS):
        if method not in ("GET", "HEAD"):
            return PlainTextResponse("Refused: a shared link is only read.\n", status_code=405)
        return None
    navigation = method in ("GET", "HEAD") and request.headers.get("sec-fetch-mode") == "navigate" \
        and (path in OPENED_BY_LINK or path.startswith(INVITE_PAGE))
    if request.headers.get("sec-fetch-site") == "cross-site" and not navigation:
        return PlainTextResponse("Refused: a page of another site may not use this iGot server.\n", status_code=403)
    cookie = request.cookies.get(sessions.COOKIE)
    session = sessions.find(team.db, cookie) if cookie else None
    request.state.session = session
    if is_public(method, path):
        if method == "POST" and (origin is None or origin.rstrip("/").lower() not in team.origins()):
            return JSONResponse({"error": "Refused: sign in from the team's own sign-in page."}, status_code=403)
        return None
    if session is None:
        if method == "GET" and path == "/":
            return RedirectResponse("/signin", status_code=303)
        return JSONResponse({"error": "You are not signed in (or your session ended): sign in again.",
                             "signin": "/signin"}, status_code=401)
    if method not in ("GET", "HEAD", "OPTIONS"):
        given = request.headers.get(TOKEN_HEADER, "")
        if not given or not hmac.compare_digest(given.encode(), session.csrf.encode()):
            return JSONResponse({"error": "Refused: a change must come from the workspace's own page (reload it)."},
                                status_code=403)
    return None


def set_session(response: Response, team: Team, cookie_value: str, days: int) -> None:
    """The session's cookie: HttpOnly (no script reads it), Secure (HTTPS only: a browser also
    keeps it on http://127.0.0.1), SameSite=Lax (not sent with another site's forms or fetches),
    __Host- (this host only, path /, no Domain a subdomain could set)."""
    response.set_cookie(sessions.COOKIE, cookie_value, max_age=days * 86400, path="/", secure=True, httponly=True,
                        samesite="lax")


def clear_session(response: Response) -> None:
    response.delete_cookie(sessions.COOKIE, path="/", secure=True, httponly=True, samesite="lax")
