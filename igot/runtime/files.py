"""Files written whole or not at all: the text goes to a temp file beside the target, onto the
disk (fsync), and a rename puts it in place, so a crash or a full disk leaves the old file or
the new one, never half of one. Every file iGot writes for the user goes through here.

A library's own folder (OUT/.igot) is iGot's alone: nothing is written, and no folder emptied,
through a symbolic link there, since a link planted in it (a shared or synced folder) would lead
iGot's writes and clean-ups anywhere on the computer (issue 49)."""

from __future__ import annotations

import os
import shutil
import stat
import uuid
from pathlib import Path
from typing import Optional

from igot.errors import IgotError

STATE = ".igot"  # a library's own folder, beside its interviews


def first_link(path: Path, inside: Path) -> Optional[Path]:
    """The first part of `path` below the folder `inside` (`path` itself included) that is a
    symbolic link; None when none is (the parts not there yet are none)."""
    part = Path(inside)
    for name in Path(path).relative_to(inside).parts:
        part = part / name
        try:
            if stat.S_ISLNK(os.lstat(part).st_mode):
                return part
        except FileNotFoundError:
            return None
    return None


def link_refused(link: Path) -> IgotError:
    try:
        target = os.readlink(link)
    except OSError:
        target = "another place"
    return IgotError(f"{link.name} in {link.parent} is a link to {target}: iGot keeps its own files there and "
                     "follows no link out of the library's folder.",
                     f"Remove the link ({link}), then do it again: iGot makes the folder anew.")


def check_no_link(path: Path, inside: Path) -> None:
    """IgotError naming the link when a part of `path` below `inside` is one."""
    link = first_link(path, inside)
    if link is not None:
        raise link_refused(link)


def remove_tree(path: Path, inside: Path) -> bool:
    """Remove the folder `path` with everything in it, when it is a real folder inside `inside`
    reached through no link (rmtree itself never follows a link inside it). A link, a file or a
    path elsewhere is left alone. Whether it was removed."""
    path = Path(path)
    try:
        if path == Path(inside) or ".." in path.relative_to(inside).parts or first_link(path, inside) is not None:
            return False
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            return False
    except (OSError, ValueError):  # not there, or not inside
        return False
    shutil.rmtree(path, ignore_errors=True)
    return True


def _check_state(folder: Path) -> None:
    """A file to be written under a library's .igot: never through a link there."""
    parts = folder.parts
    if STATE in parts:
        at = len(parts) - 1 - parts[::-1].index(STATE)
        check_no_link(folder, Path(*parts[:at]))


def write_temp(path: Path, text: str, mode: int = 0o666) -> Path:
    """`text` in a new temp file beside `path`, on disk, for a rename to put in place. `mode`:
    the file's permissions (before the umask); 0o600 for a file only its owner may read."""
    path = Path(path)
    _check_state(path.parent)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def write_atomic(path: Path, text: str, mode: int = 0o666) -> None:
    """Write `text` to `path` whole or not at all."""
    tmp = write_temp(path, text, mode)
    try:
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
