"""A team's links for people outside it (igot.team.shares): make one (the key answered once,
never again), the Shared page's list (never a key), revoke one (its maker or an admin), and the
admin's settings (who may make links; every link on or off). The links themselves are answered by
igot.workspace.routes.public."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from igot.team import roles, shares
from igot.team.roles import MANAGE, READ, SHARE
from igot.workspace import clips, public
from igot.workspace.access import need, person
from igot.workspace.interviews import WorkspaceError
from igot.workspace.routes.common import Context, body
from igot.workspace.routes.public import PREFIX

EXPIRY_DAYS = (1, 7, 30)  # what the Share dialog offers, besides never


def flag(asked: dict, key: str) -> bool:
    value = asked.get(key, False)
    if not isinstance(value, bool):
        raise WorkspaceError(f"'{key}' must be true or false.", "Send it from the Share dialog.")
    return value


def target(asked: dict) -> public.Target:
    kind = asked.get("kind")
    if kind not in public.KINDS:
        raise WorkspaceError(f"A link cannot share a {kind!r}.", f"Share one of: {', '.join(public.KINDS)}.")
    word = {shares.HIGHLIGHT: "highlight", shares.REEL: "tag", shares.REPORT: "report"}[kind]
    thing = asked.get(word)
    stem = asked.get("stem", "") if kind == shares.HIGHLIGHT else ""
    if not isinstance(thing, str) or not isinstance(stem, str) or (kind == shares.HIGHLIGHT and not stem):
        raise WorkspaceError(f"Which {word} to share is missing.", "Send it from the Share dialog.")
    return public.Target(kind, stem, thing, flag(asked, "hide_names"), flag(asked, "hide_interview"))


def listed(share: shares.Share, request: Request) -> dict:
    me = person(request)
    return {**asdict(share), "may_revoke": share.by_email == me.email or me.role == roles.ADMIN}


def router(ctx: Context) -> APIRouter:
    lib, db, origin = ctx.lib, ctx.team.db, ctx.team.origin
    r = APIRouter()

    @r.post("/api/shares", dependencies=[need(SHARE)])
    async def make(request: Request) -> Response:
        asked = await body(request)
        what = target(asked)
        days = asked.get("days")
        if days is not None and days not in EXPIRY_DAYS:
            raise WorkspaceError(f"A link cannot expire in {days!r} days.", f"Choose {', '.join(map(str, EXPIRY_DAYS))} or never.")
        if what.kind == shares.HIGHLIGHT:
            lib.path_of(what.stem)  # an interview of this library (NotFound otherwise)
        shown = await run_in_threadpool(public.shown, lib, what)  # Gone (404) when it is not there
        line = shown.description if what.kind == shares.HIGHLIGHT else shown.title
        key, made = await run_in_threadpool(shares.make, db, person(request), what.kind, what.stem, what.thing, line,
                                            what.hide_names, what.hide_interview, days)
        # The one answer that holds the key: the page shows it once, with Copy.
        return JSONResponse({"link": f"{origin}{PREFIX}{key}", "share": listed(made, request)}, status_code=201)

    @r.get("/api/shares", dependencies=[need(READ)])
    async def every(request: Request) -> Response:
        found = await run_in_threadpool(shares.listing, db)
        kept = await run_in_threadpool(shares.settings, db)
        return JSONResponse({"shares": [listed(s, request) for s in found], "settings": asdict(kept),
                             "may_share": person(request).role in kept.roles})

    @r.delete("/api/shares/{share_id}", dependencies=[need(READ)])
    async def revoke(share_id: str, request: Request) -> Response:
        done = await run_in_threadpool(shares.revoke, db, share_id, person(request))
        await run_in_threadpool(clips.forget_kept, lib.folder, done.id)
        return JSONResponse({"share": listed(done, request)})

    @r.get("/api/shares/settings", dependencies=[need(READ)])
    async def settings(request: Request) -> Response:
        kept = await run_in_threadpool(shares.settings, db)
        return JSONResponse({**asdict(kept), "may_share": person(request).role in kept.roles})

    @r.put("/api/shares/settings", dependencies=[need(MANAGE)])
    async def change(request: Request) -> Response:
        asked = await body(request)
        public_on = asked.get("public")
        if public_on is not None and not isinstance(public_on, bool):
            raise WorkspaceError("'public' must be true or false.", "Send it from the Shared page.")
        kept = await run_in_threadpool(shares.change_settings, db, public_on, asked.get("roles"))
        return JSONResponse({**asdict(kept), "may_share": person(request).role in kept.roles})

    return r
