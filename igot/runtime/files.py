"""Files written whole or not at all: the text goes to a temp file beside the target, onto the
disk (fsync), and a rename puts it in place, so a crash or a full disk leaves the old file or
the new one, never half of one. Every file iGot writes for the user goes through here."""

from __future__ import annotations

import os
import uuid
from pathlib import Path


def write_temp(path: Path, text: str, mode: int = 0o666) -> Path:
    """`text` in a new temp file beside `path`, on disk, for a rename to put in place. `mode`:
    the file's permissions (before the umask); 0o600 for a file only its owner may read."""
    path = Path(path)
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
