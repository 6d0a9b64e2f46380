"""The library's settings the team shares: the glossary (names and words given to Whisper on the
next runs) and the summary prompt."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from igot.asr import glossary
from igot.summary.summarize import DEFAULT_PROMPT
from igot.team import activity
from igot.team.roles import READ, WRITE
from igot.workspace.access import need
from igot.workspace.routes.common import Context, body


def router(ctx: Context) -> APIRouter:
    lib = ctx.lib
    r = APIRouter()

    def glossary_view(kept) -> dict:  # with how many of its terms Whisper is given (its prompt is short)
        return {**asdict(kept), "given": len(glossary.given_to_whisper(kept.terms))}

    @r.get("/api/glossary", dependencies=[need(READ)])
    async def glossary_data() -> Response:
        return JSONResponse(glossary_view(await run_in_threadpool(lib.kept_glossary)))

    @r.put("/api/glossary", dependencies=[need(WRITE)])
    async def save_glossary(request: Request) -> Response:
        asked = await body(request)
        kept = await run_in_threadpool(lib.set_glossary, asked.get("terms"), asked.get("version"))
        ctx.did(request, activity.CHANGED_GLOSSARY, "", "glossary", text=f"{len(kept.terms)} terms")
        return JSONResponse(glossary_view(kept))

    @r.get("/api/summary-prompt", dependencies=[need(READ)])
    async def summary_prompt() -> Response:
        return JSONResponse({**asdict(await run_in_threadpool(lib.kept_prompt)), "default": DEFAULT_PROMPT})

    @r.put("/api/summary-prompt", dependencies=[need(WRITE)])
    async def save_summary_prompt(request: Request) -> Response:
        asked = await body(request)
        kept = await run_in_threadpool(lib.set_prompt, asked.get("text"), asked.get("version"))
        ctx.did(request, activity.CHANGED_SUMMARY_PROMPT, "", "summary prompt")
        return JSONResponse({**asdict(kept), "default": DEFAULT_PROMPT})

    return r
