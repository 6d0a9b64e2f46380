"""Questions put to every interview: search (words and meaning together), Ask (the phrases that
answer, then the LLM's answer, checked) and Themes (the highlights grouped by meaning)."""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from igot.team import activity
from igot.team.roles import READ, WRITE
from igot.workspace import views
from igot.workspace.access import need
from igot.workspace.interviews import WorkspaceError
from igot.workspace.routes.common import Context, body

MAX_QUESTION = 1000  # characters: a question, not a document


def question(q: str) -> str:
    if not q.strip():
        raise WorkspaceError("No question was asked.", "Type a question, such as: what did people say about pricing?")
    if len(q) > MAX_QUESTION:
        raise WorkspaceError(f"The question is {len(q)} characters long.", f"Ask in at most {MAX_QUESTION} characters.")
    return q


def router(ctx: Context) -> APIRouter:
    lib, models, boards = ctx.lib, ctx.models, ctx.boards
    r = APIRouter()

    @r.get("/api/search", dependencies=[need(READ)])
    async def search(q: str = "", interview: str = "", speaker: str = "", language: str = "", tag: str = "") -> Response:
        def find() -> dict:
            interviews = lib.listing()[0]
            found = models.search(interviews, q, language, views.narrowed(interviews, interview, speaker, tag))
            return views.search_view(interviews, q, found.hits, found.meaning, found.line)

        return JSONResponse(await run_in_threadpool(find))

    def asked(q: str, interview: str, speaker: str, tag: str):
        interviews = lib.listing()[0]
        return interviews, models.ask_phrases(interviews, question(q), views.narrowed(interviews, interview, speaker, tag))

    @r.get("/api/ask", dependencies=[need(READ)])
    async def ask_phrases(q: str = "", interview: str = "", speaker: str = "", tag: str = "") -> Response:
        def find() -> dict:
            interviews, found = asked(q, interview, speaker, tag)
            writes, why = models.llm_state()
            return {"question": q, "phrases": views.hits_view(interviews, found.hits), "meaning": found.meaning,
                    "line": found.line, "llm": writes and bool(found.hits), "llm_line": why, **views.colours()}

        return JSONResponse(await run_in_threadpool(find))

    @r.get("/api/ask/answer", dependencies=[need(READ)])
    async def ask_answer(q: str = "", interview: str = "", speaker: str = "", tag: str = "") -> Response:
        def write() -> dict:
            interviews, found = asked(q, interview, speaker, tag)
            return views.answer_view(interviews, *models.answer(interviews, q, found.hits))

        return JSONResponse(await run_in_threadpool(write))

    # --- themes -------------------------------------------------------------------------
    def quote_vectors(interviews):
        return lambda texts: models.quote_vectors(interviews, texts)

    @r.get("/api/themes", dependencies=[need(READ)])
    async def themes(tag: str = "") -> Response:
        def draw() -> dict:
            interviews = lib.listing()[0]
            return asdict(boards.board(interviews, tag, quote_vectors(interviews), models.model_name(interviews)))

        return JSONResponse(await run_in_threadpool(draw))

    @r.post("/api/themes/move", dependencies=[need(WRITE)])
    async def move_highlight(request: Request) -> Response:
        given = await body(request)
        tag = given.get("tag", "")
        if not isinstance(tag, str):
            raise WorkspaceError("The board's tag must be text.", "Move it from the Themes board.")

        def move() -> dict:
            with lib.locked():  # the highlights it is checked against are those in the files now
                interviews = lib.listing()[0]
                return asdict(boards.move(interviews, tag, given.get("version"), given.get("highlight"), given.get("to"),
                                          quote_vectors(interviews), models.model_name(interviews)))

        answer = await run_in_threadpool(move)
        ctx.did(request, activity.CHANGED_THEMES, "", f"highlight {given.get('highlight')}", text=str(given.get("to") or "")[:100])
        return JSONResponse(answer)

    return r
