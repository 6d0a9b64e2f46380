"""Changes to a library folder that hold across processes and crashes.

Two `igot serve` on one folder, `igot tags rename` beside a server, a notebook cell and a run can
all change the same files. `locked(folder)` is the one lock around every check-then-write: an OS
file lock on OUT/.igot/lock (released by the OS when a process dies, even by kill -9), taken once
per process and thread (re-entrant within a thread).

`Change` writes several files all or nothing, also when the process is killed half way: every new
text goes to a temp file beside its place (on disk), the old files are kept as hard links, and a
journal (OUT/.igot/changing.json) naming them all is written; that journal is the moment the change
is made. Then the temps take their places and the journal goes. An error half way puts every old
file back; a process killed after the journal was written leaves it, and whoever takes the lock
next finishes the change from it (the temps are complete on disk) before doing anything else.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping, Optional

from igot.errors import IgotError
from igot.runtime.files import write_atomic, write_temp

STATE = ".igot"  # the library's own state, beside the interviews
LOCK = "lock"
JOURNAL = "changing.json"
WAIT = 60.0  # seconds to wait for another process's change (a Drive save can take this long)

try:  # POSIX (Linux, macOS, Colab)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None
    import msvcrt


@dataclass
class _Held:
    """This process's hold on one folder's lock: one thread at a time, the OS lock taken once."""

    thread_lock: threading.RLock = field(default_factory=threading.RLock)
    depth: int = 0
    handle: Optional[int] = None


_held: dict[str, _Held] = {}
_held_guard = threading.Lock()


class Busy(IgotError):
    """Another process held the library's lock for longer than WAIT."""

    status = 503


def lock_path(folder: Path) -> Path:
    return Path(folder) / STATE / LOCK


def journal_path(folder: Path) -> Path:
    return Path(folder) / STATE / JOURNAL


def _os_lock(handle: int, folder: Path) -> None:
    deadline = time.monotonic() + WAIT
    while True:
        try:
            if fcntl is not None:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            else:  # pragma: no cover
                msvcrt.locking(handle, msvcrt.LK_NBLCK, 1)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise Busy(f"Another iGot has been changing the library {folder} for over {WAIT:.0f} s.",
                           "Wait for it to finish (a run, a rename, a Drive save), then do it again.") from None
            time.sleep(0.005)


def _os_unlock(handle: int) -> None:
    if fcntl is not None:
        fcntl.flock(handle, fcntl.LOCK_UN)
    else:  # pragma: no cover
        os.lseek(handle, 0, os.SEEK_SET)
        msvcrt.locking(handle, msvcrt.LK_UNLCK, 1)


@contextmanager
def locked(folder: Path | str) -> Iterator[None]:
    """Hold the library's lock: no other process or thread changes its files meanwhile. A change
    a killed process left half made is finished first."""
    folder = Path(folder).resolve()
    with _held_guard:
        held = _held.setdefault(str(folder), _Held())
    with held.thread_lock:
        if held.depth == 0:
            path = lock_path(folder)
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                _os_lock(handle, folder)
            except BaseException:
                os.close(handle)
                raise
            held.handle = handle
            try:
                finish_interrupted(folder)
            except BaseException:
                _release(held)
                raise
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
            if held.depth == 0:
                _release(held)


def _release(held: _Held) -> None:
    handle, held.handle = held.handle, None
    if handle is not None:
        try:
            _os_unlock(handle)
        finally:
            os.close(handle)


def interrupted(folder: Path | str) -> bool:
    """A change was left half made (its process was killed): readers take the lock to finish it."""
    return journal_path(Path(folder)).is_file()


def finish_interrupted(folder: Path) -> None:
    """Finish the change a killed process left in the journal (under the lock)."""
    journal = journal_path(folder)
    try:
        entries = json.loads(journal.read_text(encoding="utf-8"))["files"]
    except FileNotFoundError:
        return
    except (OSError, ValueError, KeyError, TypeError):
        # Written whole or not at all, so unreadable means written by no iGot: leave the files be.
        journal.unlink(missing_ok=True)
        return
    for entry in entries:
        target, temp, backup = (folder / entry[k] if entry.get(k) else None for k in ("path", "temp", "backup"))
        if target is None:
            continue
        if temp is not None and temp.exists():
            os.replace(temp, target)
        elif temp is None and entry.get("remove"):
            target.unlink(missing_ok=True)
        if backup is not None:
            backup.unlink(missing_ok=True)
    journal.unlink(missing_ok=True)


class Change:
    """New texts for files of `folder` (None removes a file), prepared on disk and put in place all
    at once by commit(), or dropped by discard(). Commit under locked(folder). `folder` None: files
    outside any library (an export to a folder of the user's): no journal, so a process killed half
    way may leave some of them new, but an error still puts every old one back."""

    def __init__(self, folder: Optional[Path | str], texts: Mapping[Path, Optional[str]], modes: Mapping[Path, int] = {}) -> None:
        self.folder = Path(folder).resolve() if folder is not None else None
        self.temps: dict[Path, Optional[Path]] = {}
        try:
            for path, text in texts.items():
                path = Path(path)
                if path.is_dir():  # found now, not when the files are half in place
                    raise IgotError(f"Could not write {path}: a folder of that name is in the way.",
                                    "Move or rename that folder, or choose another output folder.")
                if text is None:
                    self.temps[path] = None
                    continue
                try:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    self.temps[path] = write_temp(path, text, modes.get(path, 0o666))
                except OSError as err:
                    raise IgotError(f"Could not write {path}: {err.strerror or err}.",
                                    "Check that you can write to that folder (and that the disk is not full), "
                                    "or choose another output folder.") from err
        except BaseException:
            self.discard()
            raise

    def _relative(self, path: Path) -> str:
        return os.path.relpath(path.resolve() if path.exists() else path.parent.resolve() / path.name, self.folder or ".")

    def commit(self) -> None:
        """Put every file in place; on an error none is (the old ones come back)."""
        backups: dict[Path, Path] = {}
        entries = []
        try:
            for path, temp in self.temps.items():
                backup = None
                if path.exists():
                    backup = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.old")
                    try:
                        os.link(path, backup)
                    except OSError:  # a file system without hard links (some synced folders)
                        shutil.copy2(path, backup)
                    backups[path] = backup
                entries.append({"path": self._relative(path), "temp": self._relative(temp) if temp else None,
                                "backup": self._relative(backup) if backup else None, "remove": temp is None})
            if len(self.temps) > 1 and self.folder is not None:  # one file alone is already whole by its rename
                write_atomic(journal_path(self.folder), json.dumps({"files": entries}))
        except BaseException:
            for backup in backups.values():
                backup.unlink(missing_ok=True)
            self.discard()
            raise
        done: list[Path] = []
        try:
            for path, temp in self.temps.items():
                if temp is None:
                    path.unlink(missing_ok=True)
                else:
                    os.replace(temp, path)
                done.append(path)
        except BaseException:
            for path in done:  # every old file back in its place
                if path in backups:
                    os.replace(backups.pop(path), path)
                else:
                    path.unlink(missing_ok=True)
            self._forget_journal()
            for backup in backups.values():
                backup.unlink(missing_ok=True)
            self.discard()
            raise
        self._forget_journal()
        for backup in backups.values():
            backup.unlink(missing_ok=True)
        self.temps = {}

    def _forget_journal(self) -> None:
        if self.folder is not None:
            journal_path(self.folder).unlink(missing_ok=True)

    def discard(self) -> None:
        for temp in self.temps.values():
            if temp is not None:
                temp.unlink(missing_ok=True)
        self.temps = {}


def write_all(folder: Path | str, texts: Mapping[Path, Optional[str]], modes: Mapping[Path, int] = {}) -> None:
    """Write (or remove, for None) every file of `texts` in `folder`, all or nothing, under the lock."""
    with locked(folder):
        Change(folder, texts, modes).commit()
