"""Everything made from one transcript, kept in step: what every path calls after a change.

A run, naming the speakers (`igot rename`, the notebook's naming cell), the summary and the
notebook's other cells all end in `save()`: the exports (JSON, HTML, Markdown, SRT, VTT), the
library page OUT/index.html and, when the interview is in Google Drive, its Doc, its row in the
folder's "iGot interviews" Sheet and its JSON kept in the folder's .igot. All or nothing: the
files are written beside their places first, Drive is updated, and only then do the files take
their places; when anything fails, no file changes and a Doc made by the change is taken back.

Where the interview's Doc is lives in its JSON (info["google_doc"], info["drive"]), so any later
change, from any path, updates the same Doc, row and kept JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional

from igot import export, library
from igot.errors import IgotError
from igot.transcript import Transcript

# What a transcript keeps from the file it replaces: where its Doc is, and when it was made.
DRIVE_KEYS = ("google_doc", "drive")


class DriveUnchanged(IgotError):
    """The change could not reach the interview's Google Doc, Sheet or kept JSON: nothing changed."""

    @classmethod
    def of(cls, err: IgotError, asked: bool) -> "DriveUnchanged":
        what = "" if asked else "This interview's Google Doc could not be updated: "
        return cls(f"{what}{err.problem} Nothing was changed.", f"{err.fix} Then do it again.".strip())


@dataclass
class Saved:
    transcript: Transcript  # as written: with its date and, once it is in Drive, where its Doc is
    files: dict[str, Path]  # {format: path}
    library: Path  # OUT/index.html
    doc: Optional[str] = None  # the Google Doc's link, when the interview is in Drive


def save(t: Transcript, folder: Path | str, stem: Optional[str] = None, *, drive_folder: Optional[str] = None,
         doc_name: Optional[str] = None, drive: bool = True, client_secrets: Optional[Path] = None,
         service: Any = None, log: Callable[[str], None] = lambda message: None) -> Saved:
    """Write the transcript's files and the library page, and bring its Drive copy up to date.

    `drive_folder`: make the interview's Google Doc there (or update the one it has there).
    Without it, an interview already in Drive has its Doc, Sheet row and kept JSON updated;
    `drive=False` leaves Drive as it is (they then show the earlier version until the next save).
    `service`: a Drive client (else one is made with the user's sign-in, `client_secrets`)."""
    folder = Path(folder)
    stem = stem or export.slugify(t.source.title)
    paths = export.export_paths(folder, stem, export.FORMATS)
    t = _carried_over(t, paths["json"])
    where = None
    if drive and (drive_folder or isinstance(t.info.get("drive"), dict)):
        try:
            from igot import gdoc  # the Google client is needed only here

            if service is None:
                service = gdoc.drive_service(gdoc.credentials(client_secrets))
            where = gdoc.put_doc(service, t, drive_folder or None, doc_name)
        except IgotError as err:
            raise DriveUnchanged.of(err, asked=bool(drive_folder)) from None
        t = where.recorded(t)
    try:
        texts = {paths[fmt]: text for fmt, text in export.render_exports(t).items()}
        texts[folder / library.INDEX] = library.library_page(folder, {paths["json"]: t})
        with export.staged(texts):
            if where is not None:
                gdoc.put_repository(service, t, where, stem)
    except BaseException as err:
        if where is not None and where.made:
            gdoc.delete_file(service, gdoc.doc_id(where.doc))
        if isinstance(err, IgotError) and where is not None:
            raise DriveUnchanged.of(err, asked=bool(drive_folder)) from None
        raise
    log(f"Library: every interview in {folder}, searchable: {folder / library.INDEX}")
    return Saved(t, paths, folder / library.INDEX, where.doc if where else None)


def _carried_over(t: Transcript, earlier: Path) -> Transcript:
    """The transcript with what the file it replaces knew and it may not: where its Doc is (a
    rename in a later session starts from a run that never saw the Doc), and its date."""
    try:
        before = json.loads(earlier.read_text(encoding="utf-8")).get("info") or {}
        when = datetime.fromtimestamp(earlier.stat().st_mtime, timezone.utc)
    except (OSError, ValueError, AttributeError):
        before, when = {}, datetime.now(timezone.utc)
    if not isinstance(before, dict):
        before = {}
    info = {**{k: before[k] for k in DRIVE_KEYS if k in before}, **t.info}
    # When it was first made: the library lists interviews newest first, and naming one must not
    # move it to the top.
    info.setdefault("created", before.get("created") or when.isoformat(timespec="seconds").replace("+00:00", "Z"))
    return replace(t, info=info)
