"""The library folder as the workspace reads and changes it.

Every interview has a version: a hash of its JSON file as it is on disk. A page sends back the
version it was drawn from with every change; a change made on an older version (another tab,
`igot rename` meanwhile) is refused with "reload", never applied over the newer file. Changes
are made one at a time (a lock) and written through the one save path (igot.outputs.store.save:
JSON, HTML, Markdown, subtitles and the library page, all whole or none).
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from igot.errors import IgotError
from igot.outputs import highlights, library, store
from igot.transcript import Transcript

# What the workspace plays in its own player: a recording the interview names as its source.
VIDEO_SUFFIXES = {".mp4", ".m4v", ".webm", ".mov", ".mkv", ".ogv"}
AUDIO_SUFFIXES = {".mp3", ".m4a", ".aac", ".wav", ".flac", ".ogg", ".oga", ".opus", ".weba"}
RELOAD = "Reload the page to see the change, then do it again."
KEEP_READ = 4  # interviews kept parsed (an hour is ~50 MB as Python objects)


class WorkspaceError(IgotError):
    """A request the workspace cannot do as asked; `status` is its HTTP status."""

    status = 400


class NotFound(WorkspaceError):
    status = 404


class Stale(WorkspaceError):
    status = 409


class CannotWrite(WorkspaceError):
    status = 500


@dataclass
class Opened:
    """An interview as read from its file, with the version a change must name."""

    stem: str
    path: Path
    transcript: Transcript
    version: str


def version_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


class Library:
    """The interviews of one library folder (its JSON files), read and changed safely."""

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder).resolve()
        self._lock = threading.Lock()  # one change at a time: read, check the version, write
        # The last interviews read, by version: an hour's JSON takes ~0.1 s to parse, and the
        # version (a hash of the file) says whether the file is still the one read.
        self._read: OrderedDict[str, Opened] = OrderedDict()
        self._listed: Optional[tuple[tuple, tuple[list[library.Interview], list[library.Skipped]]]] = None

    # --- reading --------------------------------------------------------------------------
    def listing(self) -> tuple[list[library.Interview], list[library.Skipped]]:
        """Every interview (newest first, phrases without their words) and the files skipped, with
        why. Read again only when a JSON file in the folder changed (its time or size): reading
        200 interviews costs ~0.4 s, looking at their files ~2 ms."""
        stamp = self._stamp()
        if self._listed is None or self._listed[0] != stamp:
            # The interviews not changed are kept with what searching them built.
            self._listed = (stamp, library.load_library(self.folder, self._listed[1][0] if self._listed else ()))
        return self._listed[1]

    def _stamp(self) -> tuple:
        found = []
        with os.scandir(self.folder) as entries:
            for entry in entries:
                if entry.name.endswith(".json"):
                    try:
                        st = entry.stat()
                    except OSError:
                        continue
                    found.append((entry.name, st.st_mtime_ns, st.st_size))
        return tuple(sorted(found))

    def path_of(self, stem: str) -> Path:
        """The JSON of interview `stem`: a file directly in the library folder, or NotFound."""
        if not stem or stem.startswith(".") or any(c in stem for c in "/\\\x00:"):
            raise NotFound(f"No interview {stem!r} in this library.", "Open it from the library's list.")
        path = self.folder / f"{stem}.json"
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            raise NotFound(f"No interview {stem!r} in this library.", "Open it from the library's list.") from None
        if real.parent != self.folder or not real.is_file():
            raise NotFound(f"No interview {stem!r} in this library.", "Open it from the library's list.")
        return path

    def open(self, stem: str) -> Opened:
        path = self.path_of(stem)
        try:
            data = path.read_bytes()
        except OSError as err:
            raise NotFound(f"Interview {stem!r} cannot be read ({err.strerror or err}).", "Check the file's permissions.") from None
        kept = self._read.get(stem)
        if kept is not None and kept.version == version_of(data):
            self._read.move_to_end(stem)
            return kept
        try:
            t = Transcript.from_json(data.decode("utf-8"))
        except IgotError as err:
            raise WorkspaceError(f"{path.name} cannot be opened: {err.problem}", err.fix) from None
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise WorkspaceError(f"{path.name} is damaged ({err}).", library.REDO[0].upper() + library.REDO[1:] + ".") from None
        return self._keep(Opened(stem, path, t, version_of(data)))

    def _keep(self, opened: Opened) -> Opened:
        self._read[opened.stem] = opened
        self._read.move_to_end(opened.stem)
        while len(self._read) > KEEP_READ:
            self._read.popitem(last=False)
        return opened

    def media(self, stem: str) -> tuple[Path, str]:
        """The recording an interview names as its source (path, MIME type), when it is on this
        computer and is audio or video; NotFound otherwise."""
        t = self.open(stem).transcript
        found = media_file(t, self.folder)
        if found is None:
            raise NotFound(f"Interview {stem!r} has no recording on this computer.",
                           "Keep the recording where it was transcribed from, or in the library folder.")
        return found, mimetypes.guess_type(found.name)[0] or "application/octet-stream"

    # --- changing -------------------------------------------------------------------------
    def change(self, stem: str, version: object, make: Callable[[Transcript], Transcript]) -> Opened:
        """Apply `make` to interview `stem` when it is still at `version`, and save the result
        through the one save path; Stale when the file changed since that version."""
        if not isinstance(version, str) or not version:
            raise WorkspaceError("The change does not say which version of the interview it was made on.", RELOAD)
        with self._lock:
            now = self.open(stem)
            if version != now.version:
                raise Stale(f"Interview '{now.transcript.source.title}' changed since this page read it "
                            "(in another tab or window?): nothing was changed.", RELOAD)
            try:
                saved = store.save(make(now.transcript), self.folder, stem, drive=False, replaces=now.transcript)
                return self._keep(Opened(stem, now.path, saved.transcript, version_of(now.path.read_bytes())))
            except OSError as err:
                raise CannotWrite(f"Could not write interview '{stem}' ({err.strerror or err}).",
                                  "Check that the disk has room and the folder can be written to; reload, then do it again.") from None

    def rename_tag(self, old: str, new: str) -> list[str]:
        """Tag `old` called `new` in every interview (joined with `new` where both are on one
        highlight); the stems changed. Each interview's files are written whole; a failure half
        way leaves the rest as they were, and running it again finishes the job."""
        changed = []
        with self._lock:
            for iv in self.listing()[0]:
                now = self.open(iv.path.stem)
                renamed = highlights.tags_renamed(now.transcript, old, new)
                if renamed is not None:
                    store.save(renamed, self.folder, iv.path.stem, drive=False, replaces=now.transcript)
                    changed.append(iv.path.stem)
        return changed


def media_file(t: Transcript, folder: Path) -> Optional[Path]:
    """The interview's recording on this computer: its source path (as given, else beside the
    library), when it is an audio or video file."""
    if not t.source.path:
        return None
    given = Path(t.source.path).expanduser()
    for candidate in ([given] if given.is_absolute() else [folder / given, Path.cwd() / given, folder / given.name]):
        try:
            real = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if real.is_file() and real.suffix.lower() in VIDEO_SUFFIXES | AUDIO_SUFFIXES:
            return real
    return None


def is_video(path: Path) -> bool:
    return path.suffix.lower() in VIDEO_SUFFIXES
