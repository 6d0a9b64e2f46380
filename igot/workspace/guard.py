"""The workspace's door: which requests it answers, and which files it may hand out.

A server on 127.0.0.1 is still reachable from every page open in the same browser: a page can
send it requests (its Origin is then that page's), and a host name it controls can be pointed at
127.0.0.1 (DNS rebinding: the Host header then names that site). So every request must name
this server in its Host, and in its Origin when it has one; a browser's Sec-Fetch-Site says
"cross-site" for a request another site's page made, even where no Origin is sent (a <video>
or <img> tag): only opening the workspace's page (a GET navigation to it) is let in from another site.

That is not enough: a page on another port of 127.0.0.1 is the same site, and an <img> or <video>
sends no Origin. So everything but the page itself (reading the library, starting work) must also
carry this server's token, made anew at each start and written into the page it serves: another
page can open the workspace, but never read the token out of it.

Files: only those inside the library folder, by their real path (no "..", no absolute path, no
symbolic link leading out).
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Optional
from urllib.parse import urlsplit

LOCAL_HOSTS = ("127.0.0.1", "localhost")
DEFAULT_PORT = 8765  # one person's workspace (a team's: igot.workspace.team_server.DEFAULT_PORT)


@dataclass(frozen=True)
class Door:
    """Who may knock: this server's own addresses, and any other origin it is shown through
    (Colab's port proxy, e.g. https://8000-m-s-xyz.prod.colab.dev)."""

    port: int
    origins: tuple[str, ...] = field(default=())  # extra "scheme://host[:port]" the page is served from
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))  # in the page; asked of every other request

    def hosts(self) -> set[str]:
        own = {f"{h}:{self.port}" for h in LOCAL_HOSTS}
        return own | {urlsplit(o).netloc.lower() for o in self.origins}

    def allowed_origins(self) -> set[str]:
        own = {f"http://{h}:{self.port}" for h in LOCAL_HOSTS}
        return own | {o.rstrip("/").lower() for o in self.origins}

    def refusal(self, host: Optional[str], origin: Optional[str], fetch_site: Optional[str] = None,
                navigation: bool = False) -> Optional[str]:
        """Why a request with these headers is refused (one line), or None to answer it.
        `navigation`: a GET that opens a page (Sec-Fetch-Mode: navigate): following a link from
        another site, or Colab's output frame showing the workspace, may open it; the page then
        reads the library itself, from its own origin."""
        if not host or host.lower() not in self.hosts():
            return f"Refused: this iGot workspace answers only to http://127.0.0.1:{self.port}, not to Host {host!r}."
        if origin is not None and origin.lower() not in self.allowed_origins():
            return f"Refused: a page from {origin!r} may not use this iGot workspace."
        if fetch_site == "cross-site" and not navigation:
            return "Refused: a page of another site may not use this iGot workspace."
        return None

    def admits(self, token: Optional[str]) -> bool:
        """The request carries this server's token: the workspace's own page made it."""
        return bool(token) and hmac.compare_digest(token.encode(), self.token.encode())


def inside(folder: Path, relative: str) -> Optional[Path]:
    """`relative` (a URL path, already decoded) as a file inside `folder`, or None when it would
    lead out: "..", an absolute path, a drive letter, a backslash, a hidden name (.igot holds
    the library's own state), or a symbolic link to somewhere else."""
    if not relative or "\\" in relative or "\x00" in relative or ":" in relative:
        return None
    parts = PurePosixPath(relative).parts
    if relative.startswith("/") or any(p in ("..", ".") or p.startswith(".") for p in parts):
        return None
    root = folder.resolve()
    try:
        real = root.joinpath(*parts).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not real.is_file() or not real.is_relative_to(root):
        return None
    return real

