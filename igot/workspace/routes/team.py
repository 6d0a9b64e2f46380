"""A team's server only: signing in and out, invites, the person asking, the team's people (for
admins), comments on highlights, and the activity a page polls for what teammates changed.
Every call into people, sessions, roles, comments and activity goes to igot.team."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Callable
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from igot.errors import IgotError
from igot.team import activity, comments, people, roles, sessions
from igot.team.roles import COMMENT, MANAGE, PUBLIC, READ
from igot.workspace import team_door
from igot.workspace.access import person
from igot.workspace.access import need
from igot.workspace.interviews import WorkspaceError
from igot.workspace.routes.common import Context, body

SESSION_DAYS = 14
NEXT = "igot_next"  # in the OpenID sign-in's cookie: where the person goes once signed in


def client(request: Request) -> str:
    """Where the request comes from, for slowing repeated sign-ins (behind a proxy: the address
    the proxy says, which uvicorn takes only from the proxy's own address)."""
    return request.client.host if request.client else "unknown"


def me(session) -> dict:
    p = session.person
    return {"email": p.email, "name": p.name, "role": p.role,
            "can": {need: roles.allows(p.role, need) for need in (READ, COMMENT, roles.WRITE, MANAGE)}}


def text(asked: dict, key: str, what: str) -> str:
    value = asked.get(key)
    if not isinstance(value, str) or not value.strip():
        raise WorkspaceError(f"The {what} is missing.", f"Type the {what}.")
    return value


def router(ctx: Context, page_file: Callable[[str], Path]) -> APIRouter:
    team = ctx.team
    db = team.db
    r = APIRouter()

    def signed_in(person_found, answer: Response) -> Response:
        cookie, _ = sessions.start(db, person_found, days=SESSION_DAYS)
        team_door.set_session(answer, team, cookie, SESSION_DAYS)
        return answer

    # --- pages without a session ---------------------------------------------------------
    @r.get("/signin", dependencies=[need(PUBLIC)])
    async def signin_page() -> Response:
        return FileResponse(page_file("signin.html"))

    @r.get("/invite/{token}", dependencies=[need(PUBLIC)])
    async def invite_page(token: str) -> Response:
        return FileResponse(page_file("signin.html"))

    @r.get("/api/signin", dependencies=[need(PUBLIC)])
    async def how_to_sign_in() -> Response:
        return JSONResponse({"oidc": team.oidc is not None})

    @r.post("/api/session", dependencies=[need(PUBLIC)])
    async def sign_in(request: Request) -> Response:
        asked = await body(request)
        email, password = text(asked, "email", "e-mail address"), text(asked, "password", "password")
        found = await run_in_threadpool(people.check_password, db, email, password, client(request))
        return signed_in(found, JSONResponse({"name": found.name, "role": found.role}))

    @r.get("/api/invites/{token}", dependencies=[need(PUBLIC)])
    async def invite(token: str) -> Response:
        email, role = await run_in_threadpool(people.invited, db, token)
        return JSONResponse({"email": email, "role": role, "oidc": team.oidc is not None})

    @r.post("/api/invites/{token}", dependencies=[need(PUBLIC)])
    async def accept_invite(token: str, request: Request) -> Response:
        asked = await body(request)
        joined = await run_in_threadpool(people.accept, db, token, text(asked, "name", "name"),
                                         text(asked, "password", "password"))
        return signed_in(joined, JSONResponse({"name": joined.name, "role": joined.role}, status_code=201))

    @r.get("/signin/oidc", dependencies=[need(PUBLIC)])
    async def oidc_start(request: Request) -> Response:
        if team.oidc is None:
            raise WorkspaceError("This server signs people in by password only.", "Sign in with your e-mail and password.")
        # Where the person was going (?next=, the #fragment the sign-in page was opened with): kept,
        # checked, in the sign-in's signed cookie beside its state, since the provider's round trip
        # loses a #fragment.
        request.session[NEXT] = team_door.landing(request.query_params.get("next"))
        return await team.oidc.start(request, f"{team.origin}/signin/oidc/callback")

    @r.get("/signin/oidc/callback", dependencies=[need(PUBLIC)])
    async def oidc_back(request: Request) -> Response:
        if team.oidc is None:
            return RedirectResponse("/signin", status_code=303)
        going = team_door.landing(str(request.session.pop(NEXT, "/"))[2:])  # checked again: "/#ROUTE" -> ROUTE
        try:
            identity = await team.oidc.finish(request)
            joined = await run_in_threadpool(people.join_with_identity, db, identity.email, identity.name, identity.subject)
        except IgotError as err:  # refused (another domain, not on the team...): said on the sign-in page, still going there
            return RedirectResponse(f"/signin?{urlencode({'refused': str(err)})}{going[1:]}", status_code=303)
        return signed_in(joined, RedirectResponse(going, status_code=303))

    # --- the person signed in ----------------------------------------------------------------
    @r.get("/api/me", dependencies=[need(READ)])
    async def who_am_i(request: Request) -> Response:
        return JSONResponse(me(request.state.session))

    @r.delete("/api/session", dependencies=[need(READ)])
    async def sign_out(request: Request) -> Response:
        await run_in_threadpool(sessions.end, db, request.cookies.get(sessions.COOKIE, ""))
        answer = JSONResponse({"signed_out": True})
        team_door.clear_session(answer)
        return answer

    @r.post("/api/session/everywhere", dependencies=[need(READ)])
    async def sign_out_everywhere(request: Request) -> Response:
        await run_in_threadpool(sessions.end_all, db, person(request).id)
        answer = JSONResponse({"signed_out": True})
        team_door.clear_session(answer)
        return answer

    # --- the team's people (admins) --------------------------------------------------------------
    @r.get("/api/people", dependencies=[need(MANAGE)])
    async def team_people() -> Response:
        return JSONResponse({"people": [asdict(p) for p in await run_in_threadpool(people.people, db)]})

    @r.post("/api/people", dependencies=[need(MANAGE)])
    async def invite_person(request: Request) -> Response:
        asked = await body(request)
        token = await run_in_threadpool(people.invite, db, text(asked, "email", "e-mail address"),
                                        text(asked, "role", "role"), person(request))
        return JSONResponse({"link": f"{team.origin}/invite/{token}"}, status_code=201)

    @r.patch("/api/people/{email}", dependencies=[need(MANAGE)])
    async def change_role(email: str, request: Request) -> Response:
        asked = await body(request)
        await run_in_threadpool(people.set_role, db, email, text(asked, "role", "role"))
        return JSONResponse({"email": email, "role": asked["role"]})

    @r.delete("/api/people/{email}", dependencies=[need(MANAGE)])
    async def remove_person(email: str) -> Response:
        await run_in_threadpool(people.remove, db, email)
        return JSONResponse({"removed": email})

    # --- comments on highlights -------------------------------------------------------------------
    @r.get("/api/interviews/{stem}/comments", dependencies=[need(READ)])
    async def interview_comments(stem: str) -> Response:
        found = await run_in_threadpool(comments.threads, db, stem)
        return JSONResponse({"threads": {hid: [asdict(c) for c in thread] for hid, thread in found.items()}})

    @r.post("/api/interviews/{stem}/highlights/{highlight_id}/comments", dependencies=[need(COMMENT)])
    async def add_comment(stem: str, highlight_id: str, request: Request) -> Response:
        asked = await body(request)
        ctx.lib.path_of(stem)  # an interview of this library (NotFound otherwise)
        opened = await run_in_threadpool(ctx.lib.open, stem)
        if not any(h.id == highlight_id for h in opened.transcript.highlights or []):
            raise WorkspaceError(f"No highlight {highlight_id!r} in this interview (deleted meanwhile?).", "Reload the page.")
        made = await run_in_threadpool(comments.add, db, person(request), stem, highlight_id, text(asked, "text", "comment"))
        return JSONResponse(asdict(made), status_code=201)

    @r.delete("/api/comments/{comment_id}", dependencies=[need(COMMENT)])
    async def remove_comment(comment_id: int, request: Request) -> Response:
        await run_in_threadpool(comments.remove, db, comment_id, person(request))
        return JSONResponse({"removed": comment_id})

    # --- activity: who did what, newest first; what an open page polls ----------------------------
    @r.get("/api/activity", dependencies=[need(READ)])
    async def recent(after: int = 0, limit: int = 50) -> Response:
        items = await run_in_threadpool(activity.since, db, after, max(1, min(limit, 200)))
        return JSONResponse({"items": [asdict(i) for i in items],
                             "last": max([i.id for i in items], default=after)})

    return r
