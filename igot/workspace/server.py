"""`igot serve`: the research workspace, a local web app over a library folder.

FastAPI (Starlette) served by uvicorn, on 127.0.0.1 only. Each handler is a thin door onto
plain functions (igot.outputs.store, igot.workspace.views, tags; igot.outputs.highlights): it
checks nothing itself but the shape of the request. Every request passes the Door first (Host,
Origin, Sec-Fetch-Site, and the token of the page this server wrote). Plain HTTP only: Colab's
port proxy carries no WebSockets.

The library's files are written by anyone who can put a file in the folder: what /files/ serves
(iGot's own exports of the interviews listed) is sandboxed, so no script in it runs as the
workspace; /media/ serves only an interview's own recording.
"""

from __future__ import annotations

import gc
import socket
import threading
import time
import webbrowser
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Optional, Sequence
from urllib.parse import quote

import orjson

from igot.asr import glossary
from igot.errors import IgotError, install_hint
from igot.media import audio
from igot.outputs import corrections, highlights, review, store
from igot.search import ask
from igot.summary.summarize import DEFAULT_PROMPT
from igot.speakers import voices
from igot.workspace import clips
from igot.workspace import review as review_page
from igot.workspace import tags as tags_module
from igot.workspace import views
from igot.outputs.export import FORMATS, SUMMARY_NOTE
from igot.outputs.store import Library, NotFound
from igot.pipeline import RunOptions
from igot.workspace.guard import Door, inside
from igot.workspace.interviews import WorkspaceError, recording
from igot.workspace.models import Models
from igot.workspace.queue import MAX_CHUNK, MAX_UPLOAD, Queue
from igot.workspace.themes import Themes

try:
    import uvicorn
    from fastapi import FastAPI, Request
    from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response
    from starlette.background import BackgroundTask
    from starlette.concurrency import run_in_threadpool
except ImportError as err:  # pragma: no cover - said to the user
    raise IgotError(f"The workspace needs FastAPI and uvicorn ({err.name} is missing).",
                    f"Run: {install_hint('workspace')}") from None

DEFAULT_PORT = 8765
MAX_QUESTION = 1000  # characters: a question, not a document
MAX_BODY = 64 * 1024  # bytes in one change: a highlight with its tags and note is well under 10 kB
TOKEN_HEADER = "x-igot-token"  # what the page's script sends; links (a download, the player) carry ?token=
TOKEN_META = '<meta name="igot-token" content="">'  # where index.html receives it
# A request this slow built what later ones keep (the library read, search indexes, an hour's
# view): those objects are moved out of the garbage collector's sight (gc.freeze, O(1)), else a
# full collection walks them all again (0.1-0.25 s on the 200-interview library) inside whichever
# request it falls, a correction's p95 among them (benchmarks/README.md, "correction").
SETTLE_AFTER = 0.15  # seconds
# What /files/ answers with: no script of a file in the folder may run as the workspace (a file
# there may be written by a stranger), not even iGot's own pages, which need none to be read.
FILES_POLICY = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:"
STATIC = "static"  # the page code, shipped as package data beside this module
PAGES = {"index.html", "workspace.css",
         # the page's ES modules: workspace.js, the entry, imports the others (one per view)
         "workspace.js", "state.js", "api.js", "ui.js", "player.js", "playback.js", "pane.js", "highlights.js",
         "selection.js", "question.js", "library.js", "interview.js", "tag.js", "search.js", "ask.js", "themes.js",
         "corrections.js", "phrasefix.js", "speakers.js", "summary.js", "glossary.js", "review.js",
         "add.js"}
# Where the page may load scripts and frames from: itself, and the YouTube and Vimeo players.
PLAYERS = "https://www.youtube.com https://s.ytimg.com https://player.vimeo.com"
FRAMES = "https://www.youtube.com https://www.youtube-nocookie.com https://player.vimeo.com"


# What another site may open by a link (and Colab's output frame shows): the workspace's page, which
# then reads the library from its own origin. Nothing else: a link to /api/ask/answer would make
# the LLM run, a link to a clip would make ffmpeg run.
OPENED_BY_LINK = ("/",)
# What needs no token: the page and its code (they hold nothing of the library).
PAGE_ITSELF = "/"
PAGE_CODE = "/static/"

def _policy(frame_ancestors: Sequence[str]) -> str:
    return ("default-src 'self'; "
            f"script-src 'self' {PLAYERS}; frame-src {FRAMES}; "
            "media-src 'self' blob: https:; img-src 'self' data: https://i.ytimg.com; style-src 'self'; "
            "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
            f"frame-ancestors 'self' {' '.join(frame_ancestors)}".strip())


def page_file(name: str) -> Path:
    return Path(str(resources.files("igot.workspace").joinpath(STATIC, name)))


def create_app(lib: Library, door: Door, frame_ancestors: Sequence[str] = (), models: Optional[Models] = None,
               queue: Optional[Queue] = None) -> FastAPI:
    """The workspace over `lib`, answering only requests that `door` lets in; `models`: those of
    search by meaning, Ask and Themes (loaded when first needed); `queue`: the recordings being
    made into interviews (igot.workspace.queue). Either made here takes the other's model pool:
    one pool serves both."""
    app = FastAPI(title="iGot workspace", docs_url=None, redoc_url=None, openapi_url=None)
    policy = _policy(frame_ancestors)
    models = models or Models(lib.folder, pool=queue.models if queue is not None else None)
    boards = Themes(lib.folder)
    left_counts = review_page.LeftCounts(lib)
    queue = queue or Queue(lib, models=models.pool)

    @app.middleware("http")
    async def guard(request: Request, call_next: Callable) -> Response:
        why = door.refusal(request.headers.get("host"), request.headers.get("origin"), request.headers.get("sec-fetch-site"),
                           request.method in ("GET", "HEAD") and request.headers.get("sec-fetch-mode") == "navigate"
                           and request.url.path in OPENED_BY_LINK)
        path = request.url.path
        if not why and not (request.method in ("GET", "HEAD") and (path == PAGE_ITSELF or path.startswith(PAGE_CODE))) \
                and not door.admits(request.headers.get(TOKEN_HEADER) or request.query_params.get("token")):
            why = "Refused: only the workspace's own page may ask this of it (reload the page, then do it again)."
        if why:
            return PlainTextResponse(why + "\n", status_code=403)
        upload = request.method == "PUT" and path.startswith("/api/queue/") and path.endswith("/file")  # its route checks it
        if request.method in ("POST", "PATCH", "PUT") and not upload:
            if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
                return _error(415, "Refused: a change must be sent as JSON (Content-Type: application/json).")
            length = request.headers.get("content-length", "")
            if length.isdigit() and int(length) > MAX_BODY:
                return _error(413, f"The change is {int(length)} bytes long: send at most {MAX_BODY} bytes at a time.")
        began = time.perf_counter()
        response = await call_next(request)
        if time.perf_counter() - began > SETTLE_AFTER:
            gc.freeze()  # only cycles alive right now stay uncollected: few, and gone with the process
        response.headers["Content-Security-Policy"] = FILES_POLICY if path.startswith("/files/") else policy
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "strict-origin-when-cross-origin"
        response.headers["Cross-Origin-Resource-Policy"] = "same-origin"
        response.headers.setdefault("Cache-Control", "no-store")
        return response

    @app.exception_handler(IgotError)
    async def igot_error(request: Request, err: IgotError) -> Response:
        return _error(getattr(err, "status", 400), str(err))

    # --- pages --------------------------------------------------------------------------
    page = page_file("index.html").read_text(encoding="utf-8").replace(
        TOKEN_META, f'<meta name="igot-token" content="{door.token}">')

    @app.get("/")
    async def home() -> Response:
        return HTMLResponse(page)

    @app.get("/static/{name}")
    async def static(name: str) -> Response:
        if name not in PAGES:
            raise NotFound(f"No page file {name!r}.", "")
        return FileResponse(page_file(name))

    # --- the library --------------------------------------------------------------------
    @app.get("/api/library")
    async def library_data() -> Response:
        return JSONResponse(await run_in_threadpool(lambda: views.library_view(*lib.listing())))

    @app.get("/api/review/left")
    async def review_left() -> Response:
        # asked by the library page after it is drawn: the first count of a large library takes a while
        return JSONResponse(await run_in_threadpool(lambda: left_counts.counts(lib.listing()[0])))

    @app.get("/api/interviews/{stem}")
    async def interview(stem: str) -> Response:
        return JSONResponse(await run_in_threadpool(lambda: views.interview_view(lib.open(stem), lib.folder)))

    @app.get("/media/{stem}")
    async def media(stem: str) -> Response:
        path, kind = await run_in_threadpool(recording, lib, stem)
        return FileResponse(path, media_type=kind, headers={"Cache-Control": "private, max-age=300"})

    @app.get("/files/{name:path}")
    async def files(name: str) -> Response:
        found = await run_in_threadpool(export_file, lib, name)
        if found is None:
            raise NotFound(f"No file {name!r} in this library.", "Open files from the workspace's links.")
        return FileResponse(found, headers={"Content-Disposition": "inline"})

    # --- highlights ---------------------------------------------------------------------
    @app.post("/api/interviews/{stem}/highlights")
    async def add_highlight(stem: str, request: Request) -> Response:
        body = await _body(request)
        made: dict[str, Any] = {}

        def add(t):
            h = highlights.new_highlight(t, body.get("start"), body.get("end"), body.get("tags", []), body.get("note", ""))
            made["id"] = h.id
            return highlights.with_highlight(t, h)

        opened = await run_in_threadpool(lib.change, stem, body.get("version"), add)
        return JSONResponse(_changed(opened, made["id"]), status_code=201)

    @app.patch("/api/interviews/{stem}/highlights/{highlight_id}")
    async def edit_highlight(stem: str, highlight_id: str, request: Request) -> Response:
        body = await _body(request)
        opened = await run_in_threadpool(
            lib.change, stem, body.get("version"),
            lambda t: highlights.edited(t, highlight_id, body.get("tags"), body.get("note")))
        return JSONResponse(_changed(opened, highlight_id))

    @app.delete("/api/interviews/{stem}/highlights/{highlight_id}")
    async def delete_highlight(stem: str, highlight_id: str, version: str = "") -> Response:
        opened = await run_in_threadpool(lib.change, stem, version,
                                         lambda t: highlights.without_highlight(t, highlight_id))
        return JSONResponse(_changed(opened, None))

    # --- corrections: words, who said them, the speakers' names, undo ----------------------------
    @app.post("/api/interviews/{stem}/corrections")
    async def correct(stem: str, request: Request) -> Response:
        body = await _body(request)
        # Who said what, or the names, changed: the voices remembered from this interview follow.
        naming = body.get("kind") in ("names", "speaker", "join", "undo")
        read: dict[str, Any] = {}

        def make(t):
            read["before"] = t
            return corrections.correction(t, body)

        opened = await run_in_threadpool(
            lib.change, stem, body.get("version"), make,
            (lambda t: voices.after_naming(t, lib.folder, stem, replaces=read["before"])) if naming else None)
        # The answer is what changed, which the page patches in; the phrases' meaning vectors follow
        # after it: the corrected phrases alone.
        return JSONResponse(views.correction_view(read["before"], opened),
                            background=BackgroundTask(models.keep_vectors_in_step, opened.path, opened.transcript))

    # --- review: the doubtful parts, each fixed (a correction) or accepted -------------------------
    @app.get("/api/interviews/{stem}/review")
    async def review_list(stem: str) -> Response:
        return JSONResponse(await run_in_threadpool(lambda: review_page.review_view(lib.open(stem), lib.kept_glossary().terms)))

    @app.post("/api/interviews/{stem}/review")
    async def review_accept(stem: str, request: Request) -> Response:
        body = await _body(request)

        def accept() -> dict:
            glossary = lib.kept_glossary().terms
            opened = lib.change(stem, body.get("version"), lambda t: review.accepted(t, body.get("accept"), glossary))
            return review_page.review_view(opened, glossary)

        return JSONResponse(await run_in_threadpool(accept))

    # --- clips (ffmpeg) ---------------------------------------------------------------------
    @app.get("/api/interviews/{stem}/highlights/{highlight_id}/clip")
    async def highlight_clip(stem: str, highlight_id: str) -> Response:
        parts = await run_in_threadpool(clips.highlight_parts, lib, stem, highlight_id)
        return await _clip(parts, f"{stem}-{int(parts[0].start) if parts else 0}s.mp4")

    @app.get("/api/tag/reel")
    async def tag_reel(name: str = "") -> Response:
        parts = await run_in_threadpool(clips.tag_parts, lib, name)
        return await _clip(parts, f"{name or 'untagged'}-reel.mp4", title=f"{name}: {len(parts)} highlights")

    # --- tags ---------------------------------------------------------------------------
    @app.get("/api/tags")
    async def board() -> Response:
        return JSONResponse(await run_in_threadpool(
            lambda: {"tags": [vars(r) for r in tags_module.board(lib.listing()[0])]}))

    @app.get("/api/tag")
    async def tag(name: str = "") -> Response:
        return JSONResponse(await run_in_threadpool(lambda: views.tag_view(lib.listing()[0], name)))

    @app.get("/api/tag/export")
    async def tag_export(name: str = "", format: str = "md") -> Response:
        if format not in ("md", "csv"):
            raise WorkspaceError(f"Unknown export format {format!r}.", "Choose md or csv.")
        found = await run_in_threadpool(lambda: tags_module.quotes(lib.listing()[0], name))
        text = tags_module.quotes_markdown(name, found) if format == "md" else tags_module.quotes_csv(found)
        kind = "text/markdown; charset=utf-8" if format == "md" else "text/csv; charset=utf-8"
        filename = f"{(name or 'untagged')}.{format}"
        return Response(text, media_type=kind, headers={
            "Content-Disposition": f"attachment; filename=\"tag.{format}\"; filename*=UTF-8''{quote(filename)}"})

    @app.post("/api/tags/rename")
    async def rename_tag(request: Request) -> Response:
        body = await _body(request)
        old, new = body.get("old"), body.get("new")
        if not isinstance(old, str) or not isinstance(new, str) or not old.strip():
            raise WorkspaceError("A rename needs the tag's name and its new name.", "Type both.")
        changed = await run_in_threadpool(lib.rename_tag, old, new)
        if not changed:
            raise NotFound(f"No highlight has the tag {old!r}.", "Reload the board: it may have been renamed already.")
        return JSONResponse({"changed": changed})

    # --- search, by words and meaning together ---------------------------------------------
    @app.get("/api/search")
    async def search(q: str = "", interview: str = "", speaker: str = "", language: str = "", tag: str = "") -> Response:
        def find() -> dict:
            interviews = lib.listing()[0]
            found = models.search(interviews, q, language, views.narrowed(interviews, interview, speaker, tag))
            return views.search_view(interviews, q, found.hits, found.meaning, found.line)

        return JSONResponse(await run_in_threadpool(find))

    # --- ask: the phrases that answer a question, then the LLM's answer, checked ----------------
    def asked(q: str, interview: str, speaker: str, tag: str):
        interviews = lib.listing()[0]
        return interviews, models.ask_phrases(interviews, _question(q), views.narrowed(interviews, interview, speaker, tag))

    @app.get("/api/ask")
    async def ask_phrases(q: str = "", interview: str = "", speaker: str = "", tag: str = "") -> Response:
        def find() -> dict:
            interviews, found = asked(q, interview, speaker, tag)
            writes, why = models.llm_state()
            return {"question": q, "phrases": views.hits_view(interviews, found.hits), "meaning": found.meaning,
                    "line": found.line, "llm": writes and bool(found.hits), "llm_line": why, **views.colours()}

        return JSONResponse(await run_in_threadpool(find))

    @app.get("/api/ask/answer")
    async def ask_answer(q: str = "", interview: str = "", speaker: str = "", tag: str = "") -> Response:
        def write() -> dict:
            interviews, found = asked(q, interview, speaker, tag)
            return views.answer_view(interviews, *models.answer(interviews, q, found.hits))

        return JSONResponse(await run_in_threadpool(write))

    # --- themes -------------------------------------------------------------------------
    def quote_vectors(interviews):
        return lambda texts: models.quote_vectors(interviews, texts)

    @app.get("/api/themes")
    async def themes(tag: str = "") -> Response:
        def draw() -> dict:
            interviews = lib.listing()[0]
            return asdict(boards.board(interviews, tag, quote_vectors(interviews), models.model_name(interviews)))

        return JSONResponse(await run_in_threadpool(draw))

    @app.post("/api/themes/move")
    async def move_highlight(request: Request) -> Response:
        body = await _body(request)
        tag = body.get("tag", "")
        if not isinstance(tag, str):
            raise WorkspaceError("The board's tag must be text.", "Move it from the Themes board.")

        def move() -> dict:
            with lib.locked():  # the highlights it is checked against are those in the files now
                interviews = lib.listing()[0]
                return asdict(boards.move(interviews, tag, body.get("version"), body.get("highlight"), body.get("to"),
                                          quote_vectors(interviews), models.model_name(interviews)))

        return JSONResponse(await run_in_threadpool(move))

    # --- glossary: the library's names and words, given to Whisper on the next runs -------------
    def glossary_view(kept) -> dict:  # with how many of its terms Whisper is given (its prompt is short)
        return {**asdict(kept), "given": len(glossary.given_to_whisper(kept.terms))}

    @app.get("/api/glossary")
    async def glossary_data() -> Response:
        return JSONResponse(glossary_view(await run_in_threadpool(lib.kept_glossary)))

    @app.put("/api/glossary")
    async def save_glossary(request: Request) -> Response:
        body = await _body(request)
        return JSONResponse(glossary_view(await run_in_threadpool(lib.set_glossary, body.get("terms"), body.get("version"))))

    # --- summary: the library's prompt, and an interview's summary written again with it --------------
    @app.get("/api/summary-prompt")
    async def summary_prompt() -> Response:
        return JSONResponse({**asdict(await run_in_threadpool(lib.kept_prompt)), "default": DEFAULT_PROMPT})

    @app.put("/api/summary-prompt")
    async def save_summary_prompt(request: Request) -> Response:
        body = await _body(request)
        kept = await run_in_threadpool(lib.set_prompt, body.get("text"), body.get("version"))
        return JSONResponse({**asdict(kept), "default": DEFAULT_PROMPT})

    @app.post("/api/interviews/{stem}/summary")
    async def redo_summary(stem: str, request: Request) -> Response:
        body = await _body(request)

        def redo() -> dict:
            # Minutes on a CPU: every check that can refuse it is made before the model writes.
            with models.writing_summary():
                prompt = lib.prompt_at(body.get("prompt_version"))
                before = lib.opened_at(stem, body.get("version"))
                written = models.summary(before.transcript, prompt)
                opened = lib.keep_summary(stem, before.transcript, written)
            shown = views.summary_view(opened.transcript)
            return {"version": opened.version, "summary": shown, "summary_note": SUMMARY_NOTE if shown else ""}

        return JSONResponse(await run_in_threadpool(redo))

    # --- adding interviews: recordings (files or links) queued, made one after another ---------------
    @app.get("/api/queue")
    async def queue_list() -> Response:
        # with the folders recordings may be added from by their path: the page offers it only then
        return JSONResponse({"jobs": await run_in_threadpool(queue.listing),
                             "recording_folders": [str(f) for f in queue.recording_folders]})

    @app.post("/api/queue")
    async def queue_add(request: Request) -> Response:
        body = await _body(request)
        await run_in_threadpool(room_for_uploads, queue, body)
        return JSONResponse({"jobs": await run_in_threadpool(queue.add, body)}, status_code=201)

    @app.put("/api/queue/{job_id}/file")
    async def queue_file(job_id: str, request: Request, offset: int = 0, last: bool = False) -> Response:
        data = await _chunk(request)
        return JSONResponse(await run_in_threadpool(queue.receive, job_id, offset, data, last))

    @app.post("/api/queue/{job_id}/cancel")
    async def queue_cancel(job_id: str) -> Response:
        return JSONResponse(await run_in_threadpool(queue.cancel, job_id))

    return app


def _question(q: str) -> str:
    if not q.strip():
        raise WorkspaceError("No question was asked.", "Type a question, such as: what did people say about pricing?")
    if len(q) > MAX_QUESTION:
        raise WorkspaceError(f"The question is {len(q)} characters long.", f"Ask in at most {MAX_QUESTION} characters.")
    return q


async def _clip(parts: Sequence[clips.Part], filename: str, title: str = "") -> Response:
    """The clip made in a temp folder of its own, sent, then removed. clips.made_clip removes the
    folder when making the clip fails; here it is removed when the request ends before the file is
    sent (a request cancelled while the thread works would otherwise lose the folder's name)."""
    made: list[Path] = []

    def make() -> Path:
        made.append(clips.made_clip(parts, title))
        return made[0]

    try:
        out = await run_in_threadpool(make)
        return FileResponse(out, media_type="video/mp4", filename=filename,
                            background=BackgroundTask(clips.remove_clip, out))
    except BaseException:
        for out in made:
            clips.remove_clip(out)
        raise


def _error(status: int, line: str) -> Response:
    return JSONResponse({"error": line}, status_code=status)


class TooLarge(WorkspaceError):
    status = 413


async def _body(request: Request) -> dict:
    """The change's JSON object, read no further than MAX_BODY bytes (a body sent without its
    length is cut off there too); invalid JSON, nesting past orjson's 1,024 levels and text that is
    not Unicode (a lone surrogate) are refused with one line."""
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            raise TooLarge(f"The change is over {MAX_BODY} bytes long.", f"Send at most {MAX_BODY} bytes at a time.")
    try:
        body = orjson.loads(bytes(data) or b"{}")
    except orjson.JSONDecodeError as err:
        raise WorkspaceError(f"The change is not valid JSON ({str(err).split(':')[0]}).", "Send it from the workspace page.") from None
    if not isinstance(body, dict):
        raise WorkspaceError("The change must be a JSON object.", "Send it from the workspace page.")
    return body


async def _chunk(request: Request) -> bytes:
    """A piece of a recording the page uploads: raw bytes (no form, so no extra library), at most
    MAX_CHUNK of them, refused before they are read when announced longer."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/octet-stream":
        raise Unsupported("Refused: a recording must be sent as its bytes (Content-Type: application/octet-stream).",
                          "Add it from the workspace page.")
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > MAX_CHUNK:
        raise TooLarge(f"The piece of recording is {int(length)} bytes long.", f"Send at most {MAX_CHUNK} bytes at a time.")
    data = bytearray()
    async for piece in request.stream():
        data += piece
        if len(data) > MAX_CHUNK:
            raise TooLarge(f"The piece of recording is over {MAX_CHUNK} bytes long.", f"Send at most {MAX_CHUNK} bytes at a time.")
    return bytes(data)


class Unsupported(WorkspaceError):
    status = 415


class NoRoom(WorkspaceError):
    status = 507  # Insufficient Storage


def room_for_uploads(queue: Queue, body: dict) -> None:
    """The files a batch announces, with the bytes of uploads still coming, must fit on the
    library's disk: refused before a byte is received (each upload alone may be up to 4 GB, and
    a full disk would fail every run and change of the library, not just this upload). Sizes
    that are not numbers, or past MAX_UPLOAD, are left to the queue, which refuses them."""
    files = body.get("files")
    announced = sum(f["size"] for f in files if isinstance(f, dict) and type(f.get("size")) is int
                    and 0 < f["size"] <= MAX_UPLOAD) if isinstance(files, list) else 0
    if not announced:
        return
    with queue.lock:
        coming = sum(max(job.size - job.received, 0) for job in queue.jobs if job.state == "uploading")
    count = len(files)
    what = f"the {count} recording{'s' * (count != 1)} added" + (" and the uploads still coming" if coming else "")
    try:
        audio.check_free_space(queue.folder, announced + coming, what)
    except IgotError as err:
        raise NoRoom(err.problem, err.fix) from None


def export_file(lib: Library, name: str) -> Optional[Path]:
    """The file /files/`name` names, when it is one of iGot's own files in the library: an export
    of an interview the library lists (NAME.html, .md, .json, .srt, .vtt), by its real path."""
    stem, dot, fmt = name.rpartition(".")
    if not dot or fmt not in FORMATS or "/" in name:
        return None
    if not any(iv.path.stem == stem for iv in lib.listing()[0]):
        return None
    return inside(lib.folder, name)


def _changed(opened, highlight_id: Optional[str]) -> dict:
    t = opened.transcript
    return {"version": opened.version,
            "highlights": views.highlights_view(t),
            "id": highlight_id}


# --- running ----------------------------------------------------------------------------------
@dataclass
class Running:
    """A workspace serving in a thread (tests, the notebook): its address, and how to stop it."""

    url: str
    port: int
    server: Any
    thread: threading.Thread
    token: str  # what a request other than the page's own must carry (header X-iGot-Token, or ?token=)
    queue: Optional[Queue] = None  # the recordings being added: stopped with the server

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        if self.queue is not None:
            self.queue.close()


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:`port` (0: any free port); IgotError when it is taken."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # A restart right after Ctrl+C binds the port that the last run's connections still wait on
    # (TIME_WAIT); a server still listening there keeps it (Linux and macOS refuse a second listener).
    if hasattr(socket, "SO_REUSEADDR") and not hasattr(socket, "SO_EXCLUSIVEADDRUSE"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as err:
        sock.close()
        raise IgotError(f"Port {port} on 127.0.0.1 is in use ({err.strerror or err}).",
                        f"Give another one: igot serve --port {port + 1}") from None
    sock.listen(128)
    return sock


def _server(lib: Library, door: Door, frame_ancestors: Sequence[str], models: Optional[Models] = None,
            queue: Optional[Queue] = None) -> Any:
    app = create_app(lib, door, frame_ancestors, models, queue)
    config = uvicorn.Config(app, log_level="warning", access_log=False, ws="none", lifespan="off")
    return uvicorn.Server(config)


def start(folder: Path | str, port: int = 0, origins: Sequence[str] = (), frame_ancestors: Sequence[str] = (),
          sock: Optional[socket.socket] = None, embedding_model: Optional[str] = None, llm_model: Optional[str] = None,
          use_llm: bool = True, answer_tokens: Optional[int] = None, llm: Any = None,
          run_options: Optional[RunOptions] = None, recording_folders: Sequence[Path | str] = (),
          device: Optional[str] = None) -> Running:
    """Serve the library in `folder` from a thread; returns once it answers. `llm`: an LLM already
    loaded, for Ask's answers (else `llm_model` is loaded when first asked); `run_options`: what
    the recordings added from the page are made with (the defaults of `igot run` unless given);
    `recording_folders`: where the page may add recordings from by their path (none unless given);
    `device`: where search's and Ask's models load (None: the runs' device, so a model a run loaded
    is the one they use). One model pool serves the page and the queue."""
    lib = Library(folder)
    sock = sock or bind(port)
    port = sock.getsockname()[1]
    door = Door(port, tuple(origins))
    models = Models(lib.folder, embedding_model, llm_model, use_llm, device or (run_options or RunOptions()).device,
                    answer_tokens or ask.MAX_NEW_TOKENS, llm)
    queue = Queue(lib, run_options, recording_folders=recording_folders, models=models.pool)
    server = _server(lib, door, frame_ancestors, models, queue)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="igot-workspace")
    thread.start()
    while not server.started and thread.is_alive():
        threading.Event().wait(0.02)
    if not thread.is_alive():
        raise IgotError(f"The workspace could not start on port {port}.", "Try another port (--port).")
    return Running(f"http://127.0.0.1:{port}/", port, server, thread, door.token, queue)


def send_waiting(folder: Path, log: Callable[[str], None] = print) -> None:
    """The library's Drive outbox sent at the start (igot.outputs.store.send_outbox), from a thread:
    with the sign-in saved on this computer only, never asking for one (nobody may be at the
    browser); without one, the entries wait for the next save that reaches Drive."""
    try:
        with Library(folder).locked():
            waiting = store.outbox(folder)
        if not waiting:
            return
        try:
            from igot.outputs import gdoc

            creds = gdoc.saved_credentials()
        except IgotError:  # Google's client libraries are not installed
            creds = None
        if creds is None:
            one = len(waiting) == 1
            log(f"Google Drive: {len(waiting)} interview{'s' * (not one)} wait{'s' * one} to be sent to Google Drive, "
                f"at the next igot run or igot rename that reaches it (this computer has no saved Google sign-in).")
            return
        sent = store.send_outbox(folder, credentials=lambda: creds, log=log)
        done = [stem for stem, result in sent.items() if not isinstance(result, IgotError)]
        if done:
            log(f"Google Drive: brought up to date: {', '.join(done)}.")
    except (IgotError, OSError) as err:  # the workspace serves the library all the same
        log(f"Google Drive: the interviews waiting were not sent ({err}).")


def serve(folder: Path | str, port: int = DEFAULT_PORT, open_browser: bool = True,
          log: Callable[[str], None] = print, embedding_model: Optional[str] = None, llm_model: Optional[str] = None,
          use_llm: bool = True, device: str = "auto", run_options: Optional[RunOptions] = None,
          recording_folders: Sequence[Path | str] = ()) -> None:
    """`igot serve`: serve until Ctrl+C. `run_options`: what recordings added from the page are made with;
    `recording_folders`: where the page may add recordings from by their path (none unless given)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise IgotError(f"No library folder {folder}.", "Give the folder iGot wrote the interviews to (--out).")
    lib = Library(folder)
    sock = bind(port)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    interviews, skipped = lib.listing()
    for s in skipped:
        log(f"igot: {s.line()}")
    gc.freeze()  # the library just read is kept for the server's life (SETTLE_AFTER)
    log(f"Workspace: {len(interviews)} interview{'s' * (len(interviews) != 1)} in {lib.folder}, at {url} "
        "(only this computer can open it; Ctrl+C stops it)")
    threading.Thread(target=send_waiting, args=(lib.folder, log), daemon=True, name="igot-drive-outbox").start()
    models = Models(lib.folder, embedding_model, llm_model, use_llm, device)  # its pool is the queue's too
    server = _server(lib, Door(sock.getsockname()[1]), (), models, Queue(lib, run_options, log, recording_folders, models.pool))
    if open_browser:
        threading.Timer(0.5, lambda: webbrowser.open(url)).start()
    server.run(sockets=[sock])
