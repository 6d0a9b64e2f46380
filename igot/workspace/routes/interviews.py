"""One interview: its view, its recording, its highlights (and their clips), corrections, review
and summary. Each change names the version of the interview the page read; in a team it is
recorded with who made it (igot.team.activity), after the library's store has committed it."""

from __future__ import annotations

from typing import Any, Optional

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from igot.outputs import corrections, highlights, review, store
from igot.outputs.export import SUMMARY_NOTE
from igot.speakers import voices
from igot.team import activity
from igot.team.roles import READ, WRITE
from igot.workspace import clips, views
from igot.workspace import review as review_page
from igot.workspace.access import by, need
from igot.workspace.interviews import recording
from igot.workspace.routes.clip import send_clip
from igot.workspace.routes.common import Context, body

# What a correction of each kind is called in the team's activity.
CORRECTED = {"words": activity.CORRECTED, "speaker": activity.GAVE_SPEAKER, "split": activity.SPLIT,
             "join": activity.JOINED, "names": activity.NAMED_SPEAKERS, "undo": activity.UNDID}


def changed(opened, highlight_id: Optional[str]) -> dict:
    """The answer to a highlight's change; `merged`: it was made over a teammate's newer change,
    which the page then reads (the interview again) to show both."""
    return {"version": opened.version, "highlights": views.highlights_view(opened.transcript), "id": highlight_id,
            "merged": opened.merged}


def router(ctx: Context) -> APIRouter:
    lib, models = ctx.lib, ctx.models
    r = APIRouter()

    @r.get("/api/interviews/{stem}", dependencies=[need(READ)])
    async def interview(stem: str) -> Response:
        return JSONResponse(await run_in_threadpool(lambda: views.interview_view(lib.open(stem), lib.folder)))

    @r.get("/media/{stem}", dependencies=[need(READ)])
    async def media(stem: str) -> Response:
        path, kind = await run_in_threadpool(recording, lib, stem)
        return FileResponse(path, media_type=kind, headers={"Cache-Control": "private, max-age=300"})

    # --- highlights ---------------------------------------------------------------------
    @r.post("/api/interviews/{stem}/highlights", dependencies=[need(WRITE)])
    async def add_highlight(stem: str, request: Request) -> Response:
        asked = await body(request)
        made: dict[str, Any] = {}

        def add(t):
            h = highlights.new_highlight(t, asked.get("start"), asked.get("end"), asked.get("tags", []),
                                         asked.get("note", ""), by=by(request))
            made["h"] = h
            return highlights.with_highlight(t, h)

        opened = await run_in_threadpool(lib.change, stem, asked.get("version"), add,
                                         touches=highlights.TOUCHES_NEW)
        h = made["h"]
        ctx.did(request, activity.HIGHLIGHTED, stem, f"highlight {h.id}", h.start,
                h.quote + (f" [{', '.join(h.tags)}]" if h.tags else ""))
        return JSONResponse(changed(opened, h.id), status_code=201)

    @r.patch("/api/interviews/{stem}/highlights/{highlight_id}", dependencies=[need(WRITE)])
    async def edit_highlight(stem: str, highlight_id: str, request: Request) -> Response:
        asked = await body(request)
        opened = await run_in_threadpool(
            lib.change, stem, asked.get("version"),
            lambda t: highlights.edited(t, highlight_id, asked.get("tags"), asked.get("note")),
            touches=highlights.touches_highlight(highlight_id))
        h = next((h for h in opened.transcript.highlights or [] if h.id == highlight_id), None)
        ctx.did(request, activity.TAGGED, stem, f"highlight {highlight_id}", h.start if h else None,
                ", ".join(h.tags) if h else "")
        return JSONResponse(changed(opened, highlight_id))

    @r.delete("/api/interviews/{stem}/highlights/{highlight_id}", dependencies=[need(WRITE)])
    async def delete_highlight(stem: str, highlight_id: str, request: Request, version: str = "") -> Response:
        gone: dict[str, Any] = {}

        def remove(t):
            gone["h"] = next((h for h in t.highlights or [] if h.id == highlight_id), None)
            return highlights.without_highlight(t, highlight_id)

        opened = await run_in_threadpool(lib.change, stem, version, remove, touches=highlights.touches_highlight(highlight_id))
        h = gone.get("h")
        ctx.did(request, activity.DELETED_HIGHLIGHT, stem, f"highlight {highlight_id}", h.start if h else None,
                h.quote if h else "")
        return JSONResponse(changed(opened, None))

    @r.get("/api/interviews/{stem}/highlights/{highlight_id}/clip", dependencies=[need(READ)])
    async def highlight_clip(stem: str, highlight_id: str) -> Response:
        parts = await run_in_threadpool(clips.highlight_parts, lib, stem, highlight_id)
        return await send_clip(parts, f"{stem}-{int(parts[0].start) if parts else 0}s.mp4")

    # --- corrections: words, who said them, the speakers' names, undo ----------------------------
    @r.post("/api/interviews/{stem}/corrections", dependencies=[need(WRITE)])
    async def correct(stem: str, request: Request) -> Response:
        asked = await body(request)
        # Who said what, or the names, changed: the voices remembered from this interview follow.
        naming = asked.get("kind") in ("names", "speaker", "join", "undo")
        read: dict[str, Any] = {}

        def make(t):
            read["before"] = t
            return corrections.correction(t, asked, by=by(request))

        opened = await run_in_threadpool(
            lib.change, stem, asked.get("version"), make,
            (lambda t: voices.after_naming(t, lib.folder, stem, replaces=read["before"])) if naming else None,
            touches=corrections.touches(asked))
        if ctx.team is not None:
            where = asked.get("phrase")
            p = read["before"].phrases[where] if isinstance(where, int) and 0 <= where < len(read["before"].phrases) else None
            now = opened.transcript.phrases[where] if p is not None and where < len(opened.transcript.phrases) else None
            ctx.did(request, CORRECTED.get(asked.get("kind"), activity.CORRECTED), stem,
                    f"phrase {where}" if p is not None else "speakers", p.start if p is not None else None,
                    now.text if now is not None else "")
        # The answer is what changed, which the page patches in; the phrases' meaning vectors follow
        # after it: the corrected phrases alone.
        return JSONResponse(views.correction_view(read["before"], opened),
                            background=BackgroundTask(models.keep_vectors_in_step, opened.path, opened.transcript))

    # --- review: the doubtful parts, each fixed (a correction) or accepted -------------------------
    @r.get("/api/interviews/{stem}/review", dependencies=[need(READ)])
    async def review_list(stem: str) -> Response:
        return JSONResponse(await run_in_threadpool(lambda: review_page.review_view(lib.open(stem), lib.kept_glossary().terms)))

    @r.post("/api/interviews/{stem}/review", dependencies=[need(WRITE)])
    async def review_accept(stem: str, request: Request) -> Response:
        asked = await body(request)

        def accept() -> dict:
            glossary = lib.kept_glossary().terms
            opened = lib.change(stem, asked.get("version"), lambda t: review.accepted(t, asked.get("accept"), glossary),
                                touches=review.touches(asked.get("accept"), glossary))
            return review_page.review_view(opened, glossary)

        shown = await run_in_threadpool(accept)
        ctx.did(request, activity.REVIEWED, stem, "review")
        return JSONResponse(shown)

    # --- summary: written again with the library's prompt ------------------------------------
    @r.post("/api/interviews/{stem}/summary", dependencies=[need(WRITE)])
    async def redo_summary(stem: str, request: Request) -> Response:
        asked = await body(request)

        def redo() -> dict:
            # Minutes on a CPU: every check that can refuse it is made before the model writes.
            with models.writing_summary():
                prompt = lib.prompt_at(asked.get("prompt_version"))
                before = lib.opened_at(stem, asked.get("version"), touches=store.SUMMARY_TOUCHES)
                written = models.summary(before.transcript, prompt)
                opened = lib.keep_summary(stem, before.transcript, written)
            shown = views.summary_view(opened.transcript)
            return {"version": opened.version, "summary": shown, "summary_note": SUMMARY_NOTE if shown else ""}

        answer = await run_in_threadpool(redo)
        ctx.did(request, activity.SUMMARISED, stem, "summary")
        return JSONResponse(answer)

    return r
