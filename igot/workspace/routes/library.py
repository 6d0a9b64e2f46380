"""The library: its list of interviews, what is left to review, the exports it serves, and the
tags board (a tag's quotes, its export and reel, a rename across every interview)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from igot.outputs.export import FORMATS
from igot.outputs.store import Library, NotFound
from igot.team import activity
from igot.team.roles import READ, WRITE
from igot.workspace import clips, views
from igot.workspace import tags as tags_module
from igot.workspace.access import need
from igot.workspace.guard import inside
from igot.workspace.interviews import WorkspaceError
from igot.workspace.routes.clip import send_clip
from igot.workspace.routes.common import Context, body


def export_file(lib: Library, name: str) -> Optional[Path]:
    """The file /files/`name` names, when it is one of iGot's own files in the library: an export
    of an interview the library lists (NAME.html, .md, .json, .srt, .vtt), by its real path."""
    stem, dot, fmt = name.rpartition(".")
    if not dot or fmt not in FORMATS or "/" in name:
        return None
    if not any(iv.path.stem == stem for iv in lib.listing()[0]):
        return None
    return inside(lib.folder, name)


def router(ctx: Context) -> APIRouter:
    lib = ctx.lib
    r = APIRouter()

    @r.get("/api/library", dependencies=[need(READ)])
    async def library_data() -> Response:
        return JSONResponse(await run_in_threadpool(lambda: views.library_view(*lib.listing())))

    @r.get("/api/review/left", dependencies=[need(READ)])
    async def review_left() -> Response:
        # asked by the library page after it is drawn: the first count of a large library takes a while
        return JSONResponse(await run_in_threadpool(lambda: ctx.left_counts.counts(lib.listing()[0])))

    @r.get("/files/{name:path}", dependencies=[need(READ)])
    async def files(name: str) -> Response:
        found = await run_in_threadpool(export_file, lib, name)
        if found is None:
            raise NotFound(f"No file {name!r} in this library.", "Open files from the workspace's links.")
        return FileResponse(found, headers={"Content-Disposition": "inline"})

    # --- tags ---------------------------------------------------------------------------
    @r.get("/api/tags", dependencies=[need(READ)])
    async def board() -> Response:
        return JSONResponse(await run_in_threadpool(
            lambda: {"tags": [vars(row) for row in tags_module.board(lib.listing()[0])]}))

    @r.get("/api/tag", dependencies=[need(READ)])
    async def tag(name: str = "") -> Response:
        return JSONResponse(await run_in_threadpool(lambda: views.tag_view(lib.listing()[0], name)))

    @r.get("/api/tag/export", dependencies=[need(READ)])
    async def tag_export(name: str = "", format: str = "md") -> Response:
        if format not in ("md", "csv"):
            raise WorkspaceError(f"Unknown export format {format!r}.", "Choose md or csv.")
        found = await run_in_threadpool(lambda: tags_module.quotes(lib.listing()[0], name))
        text = tags_module.quotes_markdown(name, found) if format == "md" else tags_module.quotes_csv(found)
        kind = "text/markdown; charset=utf-8" if format == "md" else "text/csv; charset=utf-8"
        filename = f"{(name or 'untagged')}.{format}"
        return Response(text, media_type=kind, headers={
            "Content-Disposition": f"attachment; filename=\"tag.{format}\"; filename*=UTF-8''{quote(filename)}"})

    @r.get("/api/tag/reel", dependencies=[need(READ)])
    async def tag_reel(name: str = "") -> Response:
        parts = await run_in_threadpool(clips.tag_parts, lib, name)
        return await send_clip(parts, f"{name or 'untagged'}-reel.mp4", title=f"{name}: {len(parts)} highlights")

    @r.post("/api/tags/rename", dependencies=[need(WRITE)])
    async def rename_tag(request: Request) -> Response:
        asked = await body(request)
        old, new = asked.get("old"), asked.get("new")
        if not isinstance(old, str) or not isinstance(new, str) or not old.strip():
            raise WorkspaceError("A rename needs the tag's name and its new name.", "Type both.")
        changed = await run_in_threadpool(lib.rename_tag, old, new)
        if not changed:
            raise NotFound(f"No highlight has the tag {old!r}.", "Reload the board: it may have been renamed already.")
        for stem in changed:
            ctx.did(request, activity.RENAMED_TAG, stem, f"tag {old}", text=f"{old} → {new}")
        return JSONResponse({"changed": changed})

    return r
