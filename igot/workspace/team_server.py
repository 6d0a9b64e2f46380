"""`igot serve --team`: one library served to a team on a machine it owns.

Anyone on the network can reach it, so it serves HTTPS itself (`--tls-cert`, `--tls-key`), or, on
an address other than this computer's own, refuses to start on plain HTTP unless told that a
reverse proxy in front of it does HTTPS (`--behind-proxy`, with the address people open:
`--public-url`). On 127.0.0.1 plain HTTP is allowed (a browser keeps Secure cookies there): a
try-out, or a proxy on the same machine.
"""

from __future__ import annotations

import secrets
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional, Sequence
from urllib.parse import urlsplit

import uvicorn

from igot.errors import IgotError
from igot.links import is_loopback
from igot.outputs.store import Library
from igot.pipeline import RunOptions
from igot.team import people
from igot.team.db import remember_address, team_db
from igot.workspace.access import Team
from igot.workspace.guard import Door
from igot.workspace.models import Models
from igot.team import jobs
from igot.workspace.queue import Queue
from igot.workspace.team_queue import TeamQueue
from igot.workspace.server import bind, create_app

DEFAULT_PORT = 8443
PROXY_FIX = ("Give --tls-cert and --tls-key (a certificate for this machine's name), or, when a reverse "
             "proxy in front of iGot does HTTPS, --behind-proxy with --public-url https://NAME (README: a team server).")


@dataclass(frozen=True)
class Address:
    """Where the team's server listens, and what people open."""

    host: str
    port: int
    origin: str  # scheme://host[:port] as the browser's address bar shows it
    tls: Optional[tuple[Path, Path]] = None  # (certificate, key)
    proxy: Optional[str] = None  # the reverse proxy's address, whose X-Forwarded-* are believed


def address(host: str, port: int, tls_cert: Optional[Path] = None, tls_key: Optional[Path] = None,
            behind_proxy: Optional[str] = None, public_url: Optional[str] = None) -> Address:
    """The checked address: HTTPS, or a proxy that does it, or this computer only."""
    if bool(tls_cert) != bool(tls_key):
        raise IgotError("HTTPS needs both the certificate and its key.", "Give --tls-cert CERT.pem and --tls-key KEY.pem.")
    tls = None
    if tls_cert and tls_key:
        for given, what in ((Path(tls_cert), "certificate"), (Path(tls_key), "key")):
            if not given.is_file():
                raise IgotError(f"No TLS {what} file {given}.", PROXY_FIX)
        tls = (Path(tls_cert), Path(tls_key))
    if behind_proxy and tls:
        raise IgotError("Both HTTPS here and a proxy that does HTTPS were asked for.",
                        "Give either --tls-cert/--tls-key or --behind-proxy, not both.")
    if behind_proxy:
        if not public_url or urlsplit(public_url).scheme != "https" or not urlsplit(public_url).netloc:
            raise IgotError("Behind a proxy, iGot needs the HTTPS address people open.",
                            "Give --public-url https://NAME (the proxy's address, as the browser shows it).")
        return Address(host, port, public_url.rstrip("/"), None, behind_proxy)
    shown = f"[{host}]" if ":" in host else host
    if tls:
        name = urlsplit(public_url).netloc if public_url else f"{shown}:{port}"
        return Address(host, port, f"https://{name}", tls)
    if not is_loopback(host):
        raise IgotError(f"A team server on {host} would send passwords and sessions over plain HTTP, readable on the network.",
                        PROXY_FIX)
    return Address(host, port, public_url.rstrip("/") if public_url else f"http://{shown}:{port}")


@dataclass
class RunningTeam:
    """A team server serving in a thread (tests): its address, its team, how to stop it."""

    url: str
    team: Team
    server: Any
    thread: threading.Thread
    queue: TeamQueue

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.queue.close()


def team_app(lib: Library, where: Address, oidc: Any = None, models: Optional[Models] = None,
             queue: Optional[Queue] = None):
    db = team_db(lib.folder)
    remember_address(db, where.origin)
    team = Team(db, where.origin, oidc, behind_proxy=where.proxy is not None)
    if queue is None:  # a team's queue lives in its database
        queue = TeamQueue(lib, db, models=models.pool if models is not None else None)
    app = create_app(lib, Door(where.port), models=models, queue=queue, team=team)
    if oidc is not None:  # the sign-in's state, nonce and PKCE verifier wait in a short-lived signed cookie
        from starlette.middleware.sessions import SessionMiddleware

        from igot.team.oidc import session_middleware_options

        app.add_middleware(SessionMiddleware, **session_middleware_options(
            secrets.token_urlsafe(32), https_only=where.origin.startswith("https:")))
    return app, team


def uvicorn_server(app, where: Address) -> uvicorn.Server:
    tls = {"ssl_certfile": str(where.tls[0]), "ssl_keyfile": str(where.tls[1])} if where.tls else {}
    proxy = {"proxy_headers": True, "forwarded_allow_ips": where.proxy} if where.proxy else {"proxy_headers": False}
    config = uvicorn.Config(app, log_level="warning", access_log=False, ws="none", lifespan="off",
                            server_header=False, **tls, **proxy)
    return uvicorn.Server(config)


def start_team(folder: Path | str, where: Address, oidc: Any = None, sock: Optional[socket.socket] = None,
               run_options: Optional[RunOptions] = None, models: Optional[Models] = None,
               lease_seconds: float = jobs.LEASE_SECONDS, embedded_worker: bool = True,
               log: Callable[[str], None] = lambda m: None) -> RunningTeam:
    """Serve the library to a team from a thread; returns once it answers (tests, benchmarks).
    `lease_seconds`: how long a worker may go unheard before its job goes to another;
    `embedded_worker`: whether the server makes interviews itself too (igot.workspace.team_queue)."""
    lib = Library(folder)
    sock = sock or bind(where.port, where.host)
    models = models or Models(lib.folder, device=(run_options or RunOptions()).device)
    queue = TeamQueue(lib, team_db(lib.folder), run_options, log, models=models.pool, lease_seconds=lease_seconds,
                      embedded=embedded_worker)
    app, team = team_app(lib, where, oidc, models, queue)
    server = uvicorn_server(app, where)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True, name="igot-team")
    thread.start()
    while not server.started and thread.is_alive():
        threading.Event().wait(0.02)
    if not thread.is_alive():
        raise IgotError(f"The team server could not start on {where.origin}.", "Try another port (--port).")
    return RunningTeam(where.origin + "/", team, server, thread, queue)


def serve_team(folder: Path | str, where: Address, oidc: Any = None, log: Callable[[str], None] = print,
               run_options: Optional[RunOptions] = None, recording_folders: Sequence[Path | str] = (),
               models: Optional[Models] = None, embedded_worker: bool = True) -> None:
    """`igot serve --team`: serve until Ctrl+C. `embedded_worker=False` (--no-embedded-worker):
    only workers (igot worker) make the queue's interviews, never this server."""
    folder = Path(folder)
    if not folder.is_dir():
        raise IgotError(f"No library folder {folder}.", "Give the folder iGot wrote the interviews to (--out).")
    lib = Library(folder)
    sock = bind(where.port, where.host)
    models = models or Models(lib.folder)
    queue = TeamQueue(lib, team_db(lib.folder), run_options, log, recording_folders, models.pool,
                      embedded=embedded_worker)
    app, team = team_app(lib, where, oidc, models, queue)
    interviews, _ = lib.listing()
    someone = people.people(team.db)
    log(f"Team workspace: {len(interviews)} interview{'s' * (len(interviews) != 1)} in {lib.folder}, at {where.origin} "
        f"({len(someone)} {'person' if len(someone) == 1 else 'people'}; Ctrl+C stops it)")
    if not someone:
        log(f"No one can sign in yet: igot people add YOUR@EMAIL --role admin --out {folder}")
    if not embedded_worker:
        log(f"Only workers make the queue's interviews: igot workers add NAME --out {folder}")
    try:
        uvicorn_server(app, where).run(sockets=[sock])
    finally:
        queue.close()  # the job this server ran waits for the next start, or a worker
