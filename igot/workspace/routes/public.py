"""A link shared with people outside the team, opened with no account (a team's server only):
/s/KEY (the page), /s/KEY/clip[/N] (the MP4, seekable: Range requests answered), /s/KEY/still.jpg
(a frame, for chat tools' previews), /s/KEY/embed (a player another site may frame). The team's
door lets only GET and HEAD under /s/ through without a session, and looks none up: nothing here
reaches anything but what the key opens (igot.workspace.public draws it).

Every answer of a link that opens nothing (an unknown key, revoked, expired, switched off, what it
showed deleted) is the same 404 page, so a guesser learns nothing."""

from __future__ import annotations

from typing import Optional

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response
from starlette.concurrency import run_in_threadpool

from igot.errors import IgotError
from igot.team import shares
from igot.team.roles import PUBLIC
from igot.workspace import clips, public
from igot.workspace.access import need
from igot.workspace.routes.common import Context

PREFIX = "/s/"
BOTH = ["GET", "HEAD"]  # chat tools often ask HEAD first


def gone() -> Response:
    return HTMLResponse(public.gone(), status_code=404, headers=public.headers())


def router(ctx: Context) -> APIRouter:
    lib, db = ctx.lib, ctx.team.db
    origin = ctx.team.origin
    r = APIRouter()

    def opened(key: str, count: bool) -> Optional[tuple[shares.Share, public.Shown]]:
        found = shares.find(db, key)
        if found is None:
            return None
        try:
            what = public.shown(lib, public.target_of(found))
        except IgotError:
            return None
        if count:
            shares.count_open(db, found.id)
        return found, what

    async def page(key: str, request: Request, draw) -> Response:
        got = await run_in_threadpool(opened, key, request.method == "GET")
        if got is None:
            return gone()
        _, what = got
        embed = draw is public.embed
        return HTMLResponse(draw(what, f"{origin}{PREFIX}{key}"), headers=public.headers(embed=embed))

    async def kept_file(made, media_type: str) -> Response:
        """The file `made` returns (made in a thread: ffmpeg may run), or the link's gone page."""
        try:
            path = await run_in_threadpool(made)
        except IgotError:
            path = None
        if path is None:
            return gone()
        return FileResponse(path, media_type=media_type, headers=public.headers(media=True))

    async def clip(key: str, n: Optional[int]) -> Response:
        def made():
            got = opened(key, False)
            if got is None:
                return None
            found, what = got
            index = what.video if n is None else n
            if index is None:
                return None
            return clips.kept_clip(lib.folder, f"{found.id}-clip{index}", public.clip_parts(what, index))
        return await kept_file(made, "video/mp4")

    @r.api_route(PREFIX + "{key}", methods=BOTH, dependencies=[need(PUBLIC)])
    async def shared_page(key: str, request: Request) -> Response:
        return await page(key, request, public.page)

    @r.api_route(PREFIX + "{key}/embed", methods=BOTH, dependencies=[need(PUBLIC)])
    async def shared_player(key: str, request: Request) -> Response:
        return await page(key, request, public.embed)

    @r.api_route(PREFIX + "{key}/clip", methods=BOTH, dependencies=[need(PUBLIC)])
    async def shared_clip(key: str) -> Response:
        return await clip(key, None)

    @r.api_route(PREFIX + "{key}/clip/{n}", methods=BOTH, dependencies=[need(PUBLIC)])
    async def shared_clip_n(key: str, n: int) -> Response:
        return await clip(key, n)

    @r.api_route(PREFIX + "{key}/still.jpg", methods=BOTH, dependencies=[need(PUBLIC)])
    async def shared_still(key: str) -> Response:
        def made():
            got = opened(key, False)
            if got is None or got[1].still is None:
                return None
            return clips.kept_still(lib.folder, f"{got[0].id}-still", got[1].still)
        return await kept_file(made, "image/jpeg")

    return r
