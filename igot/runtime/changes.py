"""Changes to a library folder that hold across processes and crashes.

Two `igot serve` on one folder, `igot tags rename` beside a server, a notebook cell and a run can
all change the same files. `locked(folder)` is the one lock around every check-then-write: an OS
file lock on OUT/.igot/lock (released by the OS when a process dies, even by kill -9), taken once
per process and thread (re-entrant within a thread). What must follow a change but not hold the
lock while it waits (the Drive copy, igot.outputs.store) is given to `after_unlock`: it runs once
this thread lets the lock go, also when a caller holds it around the change.

`Change` writes several files all or nothing, also when the process is killed half way: every new
text goes to a temp file beside its place (on disk), the old files are kept as hard links (in
OUT/.igot/old), and a journal (OUT/.igot/changing.json) naming them all is written; that journal is
the moment the change is made. Then the temps take their places and the journal goes, and the old
files after it (by a thread: freeing a file's blocks is slow on ext4). An error half way puts every
old file back; a process killed after the journal was written leaves it, and whoever takes the lock
next finishes the change from it (the temps are complete on disk) before doing anything else.

The journal is in the folder, where anyone who can write there may plant one: it is replayed only
when every file it names is of the very form a change writes (a file of the library or of its
.igot, its temp beside it, its old file in .igot/old), reached through no link; any other is
discarded whole, said as a warning, and no file is touched (issue 49). Nothing is written or
emptied through a link in .igot: a library whose .igot (or .igot/old, or the lock) is a link is
refused with an IgotError that says to remove it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import stat
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Optional

from igot.errors import IgotError
from igot.runtime.files import STATE, check_no_link, first_link, write_atomic, write_temp

LOCK = "lock"
JOURNAL = "changing.json"
EMBEDDINGS = "embeddings"  # the phrases' vectors of each interview (igot.search.embed), named by its stem
OUTBOX = "outbox"  # what is still to be sent to each interview's Drive copy (igot.outputs.store), named by its stem
SENDING = "sending"  # held (an OS file lock) by the one sending the outbox (igot.outputs.store.send_outbox)
OLD = "old"  # where a change keeps the files it replaces (hard links) until it is made
LEFT_OLD = 60.0  # seconds after which an old file there was left by a killed process
WAIT = 60.0  # seconds to wait for another process's change (only local writing holds it: Drive is sent after it is let go)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # POSIX: a link is not opened (Windows has none to open here)
# The names a change gives its temps (igot.runtime.files.write_temp) and its old files (Change.commit).
TEMP_NAME = r"\.{name}\.[0-9a-f]{{8}}\.tmp"
OLD_NAME = r"\.{name}\.[0-9a-f]{{8}}\.old"

log = logging.getLogger(__name__)

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
    owner: Optional[int] = None  # the thread holding it (threading.get_ident)
    after: list[Callable[[], None]] = field(default_factory=list)  # to run once it lets go (after_unlock)


_held: dict[str, _Held] = {}
_held_guard = threading.Lock()


class Busy(IgotError):
    """Another process held the library's lock for longer than WAIT."""

    status = 503


_pool: Optional[ThreadPoolExecutor] = None
_pool_guard = threading.Lock()


def _writer() -> ThreadPoolExecutor:
    """The threads that write a change's temp files (made when first needed)."""
    global _pool
    with _pool_guard:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="igot-write")
        return _pool


def _forget_writer() -> None:
    global _pool, _pool_guard
    _pool, _pool_guard = None, threading.Lock()  # a forked child has none of its parent's threads: it makes its own


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_writer)


def _temp(path: Path, text: str, mode: int) -> Path:
    """`text` in a temp file beside `path`, on disk (igot.runtime.files.write_temp)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return write_temp(path, text, mode)
    except OSError as err:
        raise IgotError(f"Could not write {path}: {err.strerror or err}.",
                        "Check that you can write to that folder (and that the disk is not full), "
                        "or choose another output folder.") from err


def _remove(paths: Iterable[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def lock_path(folder: Path) -> Path:
    return Path(folder) / STATE / LOCK


def journal_path(folder: Path) -> Path:
    return Path(folder) / STATE / JOURNAL


def old_path(folder: Path) -> Path:
    return Path(folder) / STATE / OLD


def _try_lock(handle: int) -> bool:
    try:
        if fcntl is not None:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:  # pragma: no cover
            msvcrt.locking(handle, msvcrt.LK_NBLCK, 1)
        return True
    except OSError:
        return False


def _os_lock(handle: int, folder: Path) -> None:
    deadline = time.monotonic() + WAIT
    while not _try_lock(handle):
        if time.monotonic() > deadline:
            raise Busy(f"Another iGot has been changing the library {folder} for over {WAIT:.0f} s.",
                       "Wait for it to finish (a run, a rename, a Drive save), then do it again.")
        time.sleep(0.005)


def _os_unlock(handle: int) -> None:
    if fcntl is not None:
        fcntl.flock(handle, fcntl.LOCK_UN)
    else:  # pragma: no cover
        os.lseek(handle, 0, os.SEEK_SET)
        msvcrt.locking(handle, msvcrt.LK_UNLCK, 1)


def claim(path: Path) -> int:
    """A new file `path`, locked by this process from before it appears under its name (so another
    never finds it free while it is made) until let_go(handle) or the process ends, even by kill -9:
    what a job holds while it runs, so that a later process knows whether one still does."""
    made = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.new")
    handle = os.open(made, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        if not _try_lock(handle):  # pragma: no cover - nobody else knows this file yet
            raise OSError(f"{made} is locked")
        os.replace(made, path)  # the lock is the file's, so it comes with it
    except BaseException:
        os.close(handle)
        made.unlink(missing_ok=True)
        raise
    return handle


def unclaimed(path: Path) -> Optional[int]:
    """The file `path` (never opened through a link) locked now by this process when no other
    holds it (its process ended); None while one does. OSError when it is not there."""
    handle = os.open(path, os.O_RDWR | NOFOLLOW)
    if _try_lock(handle):
        return handle
    os.close(handle)
    return None


def let_go(handle: int) -> None:
    try:
        _os_unlock(handle)
    finally:
        os.close(handle)


def own_folder(path: Path, folder: Path) -> Path:
    """The folder `path` of the library `folder` (made when missing), when it is a real folder
    reached through no link; an IgotError saying to remove the link otherwise."""
    check_no_link(path, folder)  # before a folder is made through one
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file in its place: said below
        pass
    if not path.is_dir():
        raise IgotError(f"{path} is not a folder: iGot keeps the library's own files there.",
                        "Move that file away, then do it again.")
    return path


@contextmanager
def locked(folder: Path | str) -> Iterator[None]:
    """Hold the library's lock: no other process or thread changes its files meanwhile. A change
    a killed process left half made is finished first."""
    folder = Path(folder).resolve()
    with _held_guard:
        held = _held.setdefault(str(folder), _Held())
    later: list[Callable[[], None]] = []
    with held.thread_lock:
        if held.depth == 0:
            path = lock_path(folder)
            own_folder(path.parent, folder)
            check_no_link(path, folder)
            handle = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o666)
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
            held.owner = threading.get_ident()
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
            if held.depth == 0:
                later, held.after = held.after, []
                held.owner = None
                _release(held)
    # Let go by this process and this thread: what was to follow runs now, unless the block failed
    # (the change it followed may not be made; what it was to send stays where it waits).
    for run in later:
        run()


def holds(folder: Path | str) -> bool:
    """Whether this thread holds the library's lock."""
    held = _held.get(str(Path(folder).resolve()))
    return held is not None and held.depth > 0 and held.owner == threading.get_ident()


@contextmanager
def sending(folder: Path | str) -> Iterator[None]:
    """Hold the library's sender lock (OUT/.igot/sending): one process and thread at a time sends
    its Drive outbox (two would each send an entry, and the older version could reach Drive last,
    or a Doc be made twice). Waits for the one sending, however long Drive takes to answer it, but
    never under the library's lock (the sender takes it to read and write the files)."""
    folder = Path(folder).resolve()
    if holds(folder):
        raise RuntimeError("The Drive outbox is sent with the library's lock let go (changes.after_unlock).")
    path = folder / STATE / SENDING
    own_folder(path.parent, folder)
    check_no_link(path, folder)
    handle = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o666)  # its own open: threads exclude each other too
    try:
        while not _try_lock(handle):
            time.sleep(0.05)
        try:
            yield
        finally:
            _os_unlock(handle)
    finally:
        os.close(handle)


def after_unlock(folder: Path | str, run: Callable[[], None]) -> None:
    """`run` once this thread has let the library's lock go (its outermost `locked`), when the
    block holding it ends without an error; now when this thread does not hold it. For what follows
    a change and may wait long (Drive): other processes and threads change the library meanwhile."""
    if holds(folder):
        _held[str(Path(folder).resolve())].after.append(run)
    else:
        run()


def _release(held: _Held) -> None:
    handle, held.handle = held.handle, None
    if handle is not None:
        let_go(handle)


def interrupted(folder: Path | str) -> bool:
    """A change was left half made (its process was killed): readers take the lock to finish it."""
    return journal_path(Path(folder)).is_file()


def finish_interrupted(folder: Path) -> None:
    """Finish the change a killed process left in the journal (under the lock); remove the old
    files a killed process left."""
    try:
        _finish_journal(folder)
    finally:
        _remove_left_old(folder)


def _finish_journal(folder: Path) -> None:
    journal = journal_path(folder)
    try:
        handle = os.open(journal, os.O_RDONLY | NOFOLLOW | getattr(os, "O_NONBLOCK", 0))  # a pipe planted there: no wait
    except FileNotFoundError:
        return
    except OSError as err:  # a link (ELOOP), or unreadable
        _discard(journal, f"it cannot be read ({err.strerror or err})")
        return
    try:
        with os.fdopen(handle, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise ValueError("it is not a file")
            entries = _entries(folder, json.loads(f.read().decode("utf-8")))
    except (OSError, ValueError) as err:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        # A journal is written whole or not at all, of one form, naming only files in the folder:
        # any other was written by no iGot, and replaying it could move or remove any file.
        _discard(journal, str(err))
        return
    for target, temp, backup, remove in entries:
        if temp is not None and temp.exists():
            os.replace(temp, target)
        elif remove:
            target.unlink(missing_ok=True)
        if backup is not None:
            backup.unlink(missing_ok=True)
    journal.unlink(missing_ok=True)


def _discard(journal: Path, why: str) -> None:
    log.warning("iGot did not finish the change in %s: %s. No iGot writes such a journal, so no file it names "
                "was touched, and it was removed.", journal, why)
    journal.unlink(missing_ok=True)  # inside .igot, a real folder (locked() checked): a link there is removed, not followed


def _entries(folder: Path, journal: object) -> list[tuple[Path, Optional[Path], Optional[Path], bool]]:
    """The journal's files as (path, temp, old file, removed), each checked to be of the very form
    Change.commit writes; ValueError says what is not."""
    if not isinstance(journal, dict) or set(journal) != {"files"} or not isinstance(journal["files"], list):
        raise ValueError("it is not a list of files")
    entries = []
    for entry in journal["files"]:
        if not isinstance(entry, dict) or set(entry) != {"path", "temp", "backup", "remove"} \
                or entry["remove"] is not (entry["temp"] is None):
            raise ValueError(f"{str(entry)[:200]} is not a file a change writes")
        path = library_file(entry["path"])
        temp = _named(entry["temp"], path.parent, TEMP_NAME, path.name)
        backup = _named(entry["backup"], Path(STATE, OLD), OLD_NAME, path.name)
        for given in (path, temp, backup):
            if given is not None:
                link = first_link(folder / given, folder)
                if link is not None:
                    raise ValueError(f"{str(given)!r} leads through a link ({link.relative_to(folder)})")
                try:
                    regular = stat.S_ISREG(os.lstat(folder / given).st_mode)
                except FileNotFoundError:
                    continue
                if not regular:
                    raise ValueError(f"{str(given)!r} is not a file")
        entries.append((folder / path, temp and folder / temp, backup and folder / backup, entry["remove"]))
    return entries


def library_file(given: object) -> Path:
    """A file a change may write: one of the library's own (OUT/NAME), of its .igot (not the
    lock, the journal or the old files' folder), or an entry of its Drive outbox
    (OUT/.igot/outbox/NAME); relative, no `..`."""
    path = Path(given) if isinstance(given, str) else None
    parts = path.parts if path is not None and not path.anchor else ()  # an anchor: / or C:
    in_library = len(parts) == 1 and parts[0] != STATE
    in_state = len(parts) == 2 and parts[0] == STATE and parts[1] not in (LOCK, JOURNAL, OLD, OUTBOX, SENDING)
    in_outbox = len(parts) == 3 and parts[:2] == (STATE, OUTBOX)
    if not (in_library or in_state or in_outbox) or any(p in (".", "..") for p in parts):
        raise ValueError(f"{str(given)[:200]!r} is not a file of the library")
    return path


def _named(given: object, where: Path, pattern: str, name: str) -> Optional[Path]:
    """A change's temp or old file of `name`: None, or a file in `where` named as `pattern` says."""
    if given is None:
        return None
    path = Path(given) if isinstance(given, str) else None
    if path is None or path.parent != where or not re.fullmatch(pattern.format(name=re.escape(name)), path.name):
        raise ValueError(f"{str(given)[:200]!r} is not a temp or old file a change of {name!r} makes")
    return path


def _remove_left_old(folder: Path) -> None:
    """The old files a killed process left (under the lock, no change is being made: each is a
    change's, made or given up; those of the last minute may be being removed after their change).
    A link in .igot's place is never emptied: only a real folder's own files are removed."""
    old = old_path(folder)
    try:
        if first_link(old, folder) is not None or not stat.S_ISDIR(os.lstat(old).st_mode):
            return
        with os.scandir(old) as entries:
            now = time.time()
            for entry in entries:
                try:
                    if now - entry.stat(follow_symlinks=False).st_ctime > LEFT_OLD:  # a link is a change of status
                        os.unlink(entry.path)  # a link, if any, is removed, never what it leads to
                except OSError:
                    continue
    except OSError:  # none yet
        return


class Change:
    """New texts for files of `folder` (None removes a file), prepared on disk and put in place all
    at once by commit(), or dropped by discard(). Commit under locked(folder). `folder` None: files
    outside any library (an export to a folder of the user's): no journal, so a process killed half
    way may leave some of them new, but an error still puts every old one back."""

    def __init__(self, folder: Optional[Path | str], texts: Mapping[Path, Optional[str]] | Iterable[tuple[Path, Optional[str]]],
                 modes: Mapping[Path, int] = {}) -> None:
        """`texts`: {path: text}, or (path, text) pairs, each path once, made one by one."""
        self.folder = Path(folder).resolve() if folder is not None else None
        self.temps: dict[Path, Optional[Path]] = {}
        order: list[Path] = []
        jobs: dict[Path, Future] = {}
        try:
            # Each file is written while the next text is made, several at once: each waits for the
            # disk (fsync: ~4 ms a file on ext4, most of a workspace save's writing), and their
            # waits overlap one another and the making of the texts.
            for path, text in (texts.items() if isinstance(texts, Mapping) else texts):
                path = Path(path)
                if path.is_dir():  # found now, not when the files are half in place
                    raise IgotError(f"Could not write {path}: a folder of that name is in the way.",
                                    "Move or rename that folder, or choose another output folder.")
                order.append(path)
                if text is not None:
                    jobs[path] = _writer().submit(_temp, path, text, modes.get(path, 0o666))
            written = {path: job.result() for path, job in jobs.items()}
        except BaseException:
            wait(jobs.values())  # every temp written is removed, also one still being written when this failed
            for job in jobs.values():
                if not job.cancelled() and job.exception() is None:
                    job.result().unlink(missing_ok=True)
            raise
        self.temps = {path: written.get(path) for path in order}

    def _relative(self, path: Path) -> str:
        # The file itself, not what a link there leads to: the change replaces the link (os.replace).
        return os.path.relpath(path.parent.resolve() / path.name, self.folder or ".")

    def commit(self) -> None:
        """Put every file in place; on an error none is (the old ones come back)."""
        backups: dict[Path, Path] = {}
        entries = []
        try:
            for path, temp in self.temps.items():
                backup = None
                if path.exists():
                    # In the library's own folder (.igot/old), where nobody looking at the folder sees
                    # them while they are removed after the change is made.
                    name = f".{path.name}.{uuid.uuid4().hex[:8]}.old"
                    if self.folder is not None:
                        backup = own_folder(old_path(self.folder), self.folder) / name  # never through a link
                    else:
                        backup = path.with_name(name)
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
        self.temps = {}
        if self.folder is None:
            _remove(backups.values())
            return
        # The change is made: the old files go after its answer, not before (ext4 frees a file's
        # blocks at its last unlink, ~14 ms for a workspace correction's six files here).
        try:
            _writer().submit(_remove, list(backups.values()))
        except RuntimeError:  # the interpreter is shutting down: no thread takes new work
            _remove(backups.values())

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
