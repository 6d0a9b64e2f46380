"""The work folder: each finished stage of an interview is kept there with the key it was made with
(the choices that change it), so a run after an interruption picks up where it stopped, and a
stage is redone when its key changed or with --force."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Optional, TypeVar, Union

from igot.outputs import export
from igot.transcript import Diarization, Transcript

T = TypeVar("T")
Load = Callable[[Path], tuple[Any, T]]  # a kept file -> (the key it was made with, the result)
Save = Callable[[Path, T, Any], None]  # (file, result, key): keep the result with its key


def work_dir_for(source_text: str, out_dir: Path) -> Path:
    """One work folder per interview source, next to the outputs: named by a hash of the source
    (its full path, or its link), so two recordings of one name never share one; the name in front
    is only for a person looking, in ASCII as it always was, so a run after an update of iGot
    finds the stages it kept before."""
    key = source_text if "://" in source_text else str(Path(source_text).expanduser().resolve())
    digest = hashlib.sha1(key.encode()).hexdigest()[:10]
    stem = export.ascii_slug(Path(source_text.split("?")[0].rstrip("/")).stem)[:40]
    return out_dir / ".igot" / f"{stem}-{digest}"


def load_transcript(path: Path) -> tuple[Any, Transcript]:
    kept = Transcript.load(path)
    return kept.info.get("stage_key"), kept


def load_diarization(path: Path) -> tuple[Any, Diarization]:
    kept = Diarization.load(path)
    return kept.info.get("stage_key"), kept


def keep_with_key(path: Path, kept: Union[Transcript, Diarization], key: Any) -> None:
    replace(kept, info={**kept.info, "stage_key": key}).save(path)


def cached(work: Path, name: str, key: Any, make: Callable[[], Optional[T]], *, force: bool = False,
           load: Load = load_transcript, save: Save = keep_with_key, reused: Optional[str] = None,
           log: Callable[[str], None] = lambda m: None) -> Optional[T]:
    """A stage's result: the one kept in the work folder as `name` when it was made with the same
    `key`, else made, kept and returned. `make` may give None (the stage had nothing to do):
    nothing is kept. With `force`, or a kept file that cannot be read back (damaged, of another
    format, its media gone), the stage is made again. `reused` is said when the kept result is
    used. load and save default to a Transcript with the key in its info."""
    path = work / name
    if not force and path.exists():
        try:
            kept_key, kept = load(path)
        except (FileNotFoundError, ValueError, KeyError, TypeError):
            pass
        else:
            if kept_key == key:
                if reused:
                    log(reused)
                return kept
    made = make()
    if made is not None:
        save(path, made, key)
    return made
