"""What the workspace asks of the library beyond the store (igot.outputs.store.Library): its own
request errors, and the recording an interview may play.

An interview names its recording (source.path), and the JSON may be written by anyone who can put
a file in the folder: so only the recording the run read is served, a real audio or video file of
the interview's length (igot.media.recording), never whatever path the file names.
"""

from __future__ import annotations

import mimetypes
from pathlib import Path
from typing import Optional

from igot.errors import IgotError
from igot.media.recording import AUDIO_SUFFIXES, VIDEO_SUFFIXES, is_recording
from igot.outputs.store import Library, NotFound
from igot.transcript import Transcript



class WorkspaceError(IgotError):
    """A request the workspace cannot do as asked; `status` is its HTTP status."""

    status = 400


def recording(lib: Library, stem: str) -> tuple[Path, str]:
    """The recording interview `stem` was made from (path, MIME type), when it is on this computer;
    NotFound otherwise."""
    t = lib.open(stem).transcript
    found = media_file(t, lib.folder)
    if found is None:
        raise NotFound(f"Interview {stem!r} has no recording on this computer.",
                       "Keep the recording where it was transcribed from, or in the library folder.")
    return found, mimetypes.guess_type(found.name)[0] or "application/octet-stream"


def media_file(t: Transcript, folder: Path) -> Optional[Path]:
    """The interview's recording on this computer: its source path (as given, else beside the
    library), when it is an audio or video file of the interview's length, and not the library's
    own state (.igot)."""
    if not t.source.path:
        return None
    given = Path(t.source.path).expanduser()
    for candidate in ([given] if given.is_absolute() else [folder / given, Path.cwd() / given, folder / given.name]):
        try:
            real = candidate.resolve(strict=True)
        except (OSError, RuntimeError, ValueError):
            continue
        if (real.is_file() and real.suffix.lower() in VIDEO_SUFFIXES | AUDIO_SUFFIXES
                and not real.is_relative_to(folder / ".igot")
                and is_recording(real, t.duration)):
            return real
    return None


def is_video(path: Path) -> bool:
    return path.suffix.lower() in VIDEO_SUFFIXES
