"""`igot serve`: the research workspace, a web app over a library folder.

FastAPI (Starlette) served by uvicorn. One person's (`igot serve`): on 127.0.0.1 only, every
request passes the Door first (Host, Origin, Sec-Fetch-Site, and the token of the page this server
wrote). A team's (`igot serve --team`): on the address given, over HTTPS (or behind a proxy that
does it), every request passes the team's door (igot.workspace.team_door: a session, the page's
token on every change) and the route's declared need is checked against the person's role
(igot.workspace.access). The routes live by resource in igot.workspace.routes: thin doors onto
plain functions (igot.outputs.store, igot.workspace.views, igot.team). Plain HTTP requests, no
WebSockets: Colab's port proxy and many company proxies carry none; a page polls for news.

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
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from igot.errors import IgotError, install_hint
from igot.outputs import store
from igot.outputs.store import Library, NotFound
from igot.pipeline import RunOptions
from igot.search import ask
from igot.team.roles import PUBLIC, READ
from igot.workspace import review as review_page
from igot.workspace import team_door
from igot.workspace.access import Team, api_routes, declared, need
from igot.workspace.guard import DEFAULT_PORT, Door
from igot.workspace.models import Models
from igot.workspace.queue import Queue
from igot.workspace.team_queue import TeamQueue
from igot.workspace.routes import glossary as glossary_routes
from igot.workspace.routes import interviews as interview_routes
from igot.workspace.routes import library as library_routes
from igot.workspace.routes import public as public_routes
from igot.workspace.routes import queue as queue_routes
from igot.workspace.routes import workers as worker_routes
from igot.workspace.routes import questions as question_routes
from igot.workspace.routes import shares as share_routes
from igot.workspace.routes import reports as report_routes
from igot.workspace.routes import team as team_routes
from igot.workspace.routes.common import MAX_BODY, Context, error
from igot.workspace.themes import Themes

try:
    import uvicorn
    from fastapi import FastAPI, Request
    from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse, Response
    from starlette.concurrency import run_in_threadpool
except ImportError as err:  # pragma: no cover - said to the user
    raise IgotError(f"The workspace needs FastAPI and uvicorn ({err.name} is missing).",
                    f"Run: {install_hint('workspace')}") from None

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
         "add.js", "signin.html", "signin.js", "team.js", "activity.js", "comments.js",
         "links.js", "report.js", "share.js", "shared.js", "share.css"}
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
               queue: Optional[Queue] = None, team: Optional[Team] = None) -> FastAPI:
    """The workspace over `lib`, answering only requests that `door` lets in; `models`: those of
    search by meaning, Ask and Themes (loaded when first needed); `queue`: the recordings being
    made into interviews (igot.workspace.queue). Either made here takes the other's model pool:
    one pool serves both. `team`: a team's server (igot.workspace.access.Team), where people sign
    in and their role is checked on every request; None: one person's workspace on 127.0.0.1."""
    app = FastAPI(title="iGot workspace", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.team = team
    policy = _policy(frame_ancestors)
    models = models or Models(lib.folder, pool=queue.models if queue is not None else None)
    queue = queue or Queue(lib, models=models.pool)
    ctx = Context(lib, models, queue, Themes(lib.folder), review_page.LeftCounts(lib), team)

    @app.middleware("http")
    async def guard(request: Request, call_next: Callable) -> Response:
        path = request.url.path
        if team is None:
            refused = one_person_refusal(door, request)
        else:
            refused = await run_in_threadpool(team_door.refusal, team, request)
        if refused is not None:
            return refused
        upload = request.method == "PUT" and path.startswith("/api/queue/") and path.endswith("/file")  # its route checks it
        # a worker's interview (up to 64 MB): JSON, its length checked by its route
        result = team is not None and request.method == "PUT" and path.startswith("/api/worker/") and path.endswith("/result")
        if request.method in ("POST", "PATCH", "PUT") and not upload:
            if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
                return error(415, "Refused: a change must be sent as JSON (Content-Type: application/json).")
            length = request.headers.get("content-length", "")
            if length.isdigit() and int(length) > MAX_BODY and not result:
                return error(413, f"The change is {int(length)} bytes long: send at most {MAX_BODY} bytes at a time.")
        began = time.perf_counter()
        response = await call_next(request)
        if time.perf_counter() - began > SETTLE_AFTER:
            gc.freeze()  # only cycles alive right now stay uncollected: few, and gone with the process
        if team is None or not path.startswith(public_routes.PREFIX):  # a shared link's answers carry their own
            response.headers["Content-Security-Policy"] = FILES_POLICY if path.startswith("/files/") else policy
            response.headers["Cross-Origin-Resource-Policy"] = "same-origin"
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer" if team is not None else "strict-origin-when-cross-origin"
        response.headers.setdefault("Cache-Control", "no-store")
        if team is not None and team.origin.startswith("https:"):
            response.headers["Strict-Transport-Security"] = "max-age=31536000"  # never again over plain HTTP
        return response

    @app.exception_handler(IgotError)
    async def igot_error(request: Request, err: IgotError) -> Response:
        if isinstance(err, store.Stale) and err.thing is not None:  # a teammate changed this very thing: who, and what is there now
            return JSONResponse({"error": str(err), "thing": err.thing, "now": err.now, "by": err.by}, status_code=409)
        return error(getattr(err, "status", 400), str(err))

    # --- pages --------------------------------------------------------------------------
    page = page_file("index.html").read_text(encoding="utf-8")

    @app.get("/", dependencies=[need(READ)])
    async def home(request: Request) -> Response:
        token = door.token if team is None else request.state.session.csrf
        return HTMLResponse(page.replace(TOKEN_META, f'<meta name="igot-token" content="{token}">'))

    @app.get("/static/{name}", dependencies=[need(PUBLIC)])
    async def static(name: str) -> Response:
        if name not in PAGES:
            raise NotFound(f"No page file {name!r}.", "")
        return FileResponse(page_file(name))

    for module in (library_routes, interview_routes, question_routes, glossary_routes, queue_routes, report_routes):
        app.include_router(module.router(ctx))
    if team is not None:
        app.include_router(team_routes.router(ctx, page_file))
        app.include_router(share_routes.router(ctx))  # links for people outside the team
        app.include_router(public_routes.router(ctx))  # and those links, opened with no account
        if isinstance(queue, TeamQueue):  # the team's queue in its database: workers take its jobs
            app.include_router(worker_routes.router(ctx))
    undeclared = [f"{sorted(r.methods)} {r.path}" for r in api_routes(app.routes) if declared(r) is None]
    if undeclared:  # every route says what it needs, or the app is not built
        raise RuntimeError(f"routes without a need (igot.workspace.access.need): {undeclared}")
    return app


def one_person_refusal(door: Door, request: Request) -> Optional[Response]:
    """One person's workspace: the request refused by the Door (Host, Origin, Sec-Fetch-Site) or for
    lack of the page's token, or None to answer it."""
    path = request.url.path
    why = door.refusal(request.headers.get("host"), request.headers.get("origin"), request.headers.get("sec-fetch-site"),
                       request.method in ("GET", "HEAD") and request.headers.get("sec-fetch-mode") == "navigate"
                       and path in OPENED_BY_LINK)
    if not why and not (request.method in ("GET", "HEAD") and (path == PAGE_ITSELF or path.startswith(PAGE_CODE))) \
            and not door.admits(request.headers.get(TOKEN_HEADER) or request.query_params.get("token")):
        why = "Refused: only the workspace's own page may ask this of it (reload the page, then do it again)."
    return PlainTextResponse(why + "\n", status_code=403) if why else None


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


def bind(port: int, host: str = "127.0.0.1") -> socket.socket:
    """A listening socket on `host`:`port` (0: any free port); IgotError when it is taken."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    # A restart right after Ctrl+C binds the port that the last run's connections still wait on
    # (TIME_WAIT); a server still listening there keeps it (Linux and macOS refuse a second listener).
    if hasattr(socket, "SO_REUSEADDR") and not hasattr(socket, "SO_EXCLUSIVEADDRUSE"):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as err:
        sock.close()
        raise IgotError(f"Port {port} on {host} cannot be listened on ({err.strerror or err}).",
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
