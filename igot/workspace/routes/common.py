"""What every route module shares: the workspace's parts (Context), reading a change's body, and
the errors a route raises with their HTTP status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import orjson
from fastapi import Request
from fastapi.responses import JSONResponse, Response

from igot.outputs.store import Library
from igot.workspace import review as review_page
from igot.workspace.access import Team, person
from igot.workspace.interviews import WorkspaceError
from igot.workspace.models import Models
from igot.workspace.queue import MAX_CHUNK, Queue
from igot.workspace.themes import Themes

MAX_BODY = 64 * 1024  # bytes in one change: a highlight with its tags and note is well under 10 kB


@dataclass
class Context:
    """One workspace: its library, models, queue and themes, and its team (None: one person's)."""

    lib: Library
    models: Models
    queue: Queue
    boards: Themes
    left_counts: review_page.LeftCounts
    team: Optional[Team] = None

    def did(self, request: Request, kind: str, stem: str, thing: str = "", time: Optional[float] = None,
            text: str = "") -> None:
        """A change made, kept in the team's activity (who, when, what, where): nothing in one person's workspace."""
        if self.team is None:
            return
        from igot.team import activity

        activity.record(self.team.db, person(request), kind, stem, thing, time, text[:300])


def error(status: int, line: str) -> Response:
    return JSONResponse({"error": line}, status_code=status)


class TooLarge(WorkspaceError):
    status = 413


class Unsupported(WorkspaceError):
    status = 415


class NoRoom(WorkspaceError):
    status = 507  # Insufficient Storage


async def body(request: Request) -> dict:
    """The change's JSON object, read no further than MAX_BODY bytes (a body sent without its
    length is cut off there too); invalid JSON, nesting past orjson's 1,024 levels and text that is
    not Unicode (a lone surrogate) are refused with one line."""
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_BODY:
            raise TooLarge(f"The change is over {MAX_BODY} bytes long.", f"Send at most {MAX_BODY} bytes at a time.")
    try:
        found: Any = orjson.loads(bytes(data) or b"{}")
    except orjson.JSONDecodeError as err:
        raise WorkspaceError(f"The change is not valid JSON ({str(err).split(':')[0]}).", "Send it from the workspace page.") from None
    if not isinstance(found, dict):
        raise WorkspaceError("The change must be a JSON object.", "Send it from the workspace page.")
    return found


async def chunk(request: Request) -> bytes:
    """A piece of a recording the page uploads: raw bytes (no form, so no extra library), at most
    MAX_CHUNK of them, refused before they are read when announced longer."""
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/octet-stream":
        raise Unsupported("Refused: a recording must be sent as its bytes (Content-Type: application/octet-stream).",
                          "Add it from the workspace page.")
    return await capped(request, MAX_CHUNK, "piece of recording")


async def capped(request: Request, limit: int, what: str) -> bytes:
    """The request's body, refused (413) past `limit` bytes: before a byte is read when its length
    says so, else as soon as it grows past it (a body sent without its length too)."""
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > limit:
        raise TooLarge(f"The {what} sent is {int(length)} bytes long.", f"Send at most {limit} bytes at a time.")
    data = bytearray()
    async for piece in request.stream():
        data += piece
        if len(data) > limit:
            raise TooLarge(f"The {what} sent is over {limit} bytes long.", f"Send at most {limit} bytes at a time.")
    return bytes(data)
