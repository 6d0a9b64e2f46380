"""A clip (a highlight, a tag's reel) made by ffmpeg in a temp folder of its own, sent, then removed."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from fastapi.responses import FileResponse, Response
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool

from igot.workspace import clips


async def send_clip(parts: Sequence[clips.Part], filename: str, title: str = "") -> Response:
    """clips.made_clip removes the folder when making the clip fails; here it is removed when the
    request ends before the file is sent (a request cancelled while the thread works would
    otherwise lose the folder's name)."""
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
