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

from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Optional

from igot.speakers import voices as voices_module
from igot.errors import IgotError
from igot.outputs import export, library
from igot.transcript import Transcript

# What a transcript keeps from the file it replaces: where its Doc is, and when it was made.
DRIVE_KEYS = ("google_doc", "drive")


class DriveUnchanged(IgotError):
    """The change could not reach the interview's Google Doc, Sheet or kept JSON: nothing changed."""

    @classmethod
    def of(cls, err: IgotError, asked: bool, doc_restored: bool = True) -> "DriveUnchanged":
        what = "" if asked else "This interview's Google Doc could not be updated: "
        if doc_restored:
            return cls(f"{what}{err.problem} Nothing was changed.", f"{err.fix} Then do it again.".strip())
        return cls(f"{what}{err.problem} Nothing was changed here, but the Doc may already show the change.",
                   f"{err.fix} Then do it again to bring everything in step.".strip())


@dataclass
class Saved:
    transcript: Transcript  # as written: with its date and, once it is in Drive, where its Doc is
    files: dict[str, Path]  # {format: path}
    library: Path  # OUT/index.html
    doc: Optional[str] = None  # the Google Doc's link, when the interview is in Drive


def save(t: Transcript, folder: Path | str, stem: Optional[str] = None, *, drive_folder: Optional[str] = None,
         doc_name: Optional[str] = None, drive: bool = True, client_secrets: Optional[Path] = None,
         service: Any = None, log: Callable[[str], None] = lambda message: None,
         remembered: Optional[voices_module.Voices] = None, replaces: Optional[Transcript] = None) -> Saved:
    """Write the transcript's files and the library page, and bring its Drive copy up to date.

    `drive_folder`: make the interview's Google Doc there (or update the one it has there).
    Without it, an interview already in Drive has its Doc, Sheet row and kept JSON updated;
    `drive=False` leaves Drive as it is (they then show the earlier version until the next save).
    `service`: a Drive client (else one is made with the user's sign-in, `client_secrets`).
    `remembered`: the library's voices after this change, as the naming made them
    (igot.speakers.voices.after_naming), written to OUT/.igot/voices.json and its copy in the Drive
    folder; None leaves the remembered voices as they are. `replaces`: what the interview's JSON
    holds now, when the caller has just read it (the workspace: an hour's JSON takes ~0.1 s to
    read again). Saving only writes: it runs no model."""
    folder = Path(folder)
    stem = stem or export.slugify(t.source.title)
    paths = export.export_paths(folder, stem, export.FORMATS)
    before = replaces if replaces is not None else _readable(paths["json"])
    t = _carried_over(t, before, paths["json"])
    where = None
    if drive and (drive_folder or isinstance(t.info.get("drive"), dict)):
        try:
            from igot.outputs import gdoc  # the Google client is needed only here

            if service is None:
                service = gdoc.drive_service(gdoc.credentials(client_secrets))
            where = gdoc.put_doc(service, t, drive_folder or None, doc_name)
        except IgotError as err:
            raise DriveUnchanged.of(err, asked=bool(drive_folder)) from None
        t = where.recorded(t)
    try:
        # A change of highlights alone writes only the files that show them: the subtitles stay as
        # they are, and so does the library page (rebuilding it reads every interview: ~0.8 s with 200).
        marks_only = before is not None and replace(before, highlights=None) == replace(t, highlights=None)
        formats = [f for f in export.FORMATS if not marks_only or f in export.SHOW_HIGHLIGHTS or not paths[f].is_file()]
        texts = {paths[fmt]: text for fmt, text in export.render_exports(t, formats).items()}
        if not marks_only or not (folder / library.INDEX).is_file():
            texts[folder / library.INDEX] = library.library_page(folder, {paths["json"]: t})
        with export.staged(texts):
            if where is not None:
                gdoc.put_repository(service, t, where, stem)
                remembered = _voices_to_drive(service, where.folder, folder, remembered)
    except BaseException as err:
        if where is None:
            raise
        restored = gdoc.take_back(service, where, before)
        if isinstance(err, IgotError):
            raise DriveUnchanged.of(err, asked=bool(drive_folder), doc_restored=restored) from None
        raise
    if remembered is not None:
        try:
            voices_module.save_voices(folder, remembered)
        except OSError as err:
            log(f"Voices: the remembered voices could not be written to {voices_module.voices_path(folder)} "
                f"({err.strerror or err}); name the speakers again once the folder can be written to.")
    log(f"Library: every interview in {folder}, searchable: {folder / library.INDEX}")
    return Saved(t, paths, folder / library.INDEX, where.doc if where else None)


def _voices_to_drive(service: Any, folder_id: str, folder: Path,
                     remembered: Optional[voices_module.Voices]) -> Optional[voices_module.Voices]:
    """The library's voices kept beside the interview in its Drive folder (.igot/voices.json), so a
    later Colab session recognises them too; returns the voices to write here, when they changed
    (the first time, with those Drive already kept, and the Drive folder noted for forgetting)."""
    from igot.outputs import gdoc

    try:
        voices = remembered if remembered is not None else voices_module.load_voices(folder)
    except IgotError:
        return remembered  # an unreadable file stays here, and is not copied
    if not voices.people and folder_id not in voices.drive:
        return remembered
    kept = gdoc.put_voices(service, folder_id, voices)
    return kept if remembered is not None or kept != voices else None


def _readable(path: Path) -> Optional[Transcript]:
    """The transcript a save replaces, when there is one to read."""
    try:
        return Transcript.load(path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _carried_over(t: Transcript, before: Optional[Transcript], path: Path) -> Transcript:
    """The transcript with what the file it replaces knew and it may not: where its Doc is (a
    rename in a later session starts from a run that never saw the Doc), its date, and its
    highlights (a re-run makes none: None keeps the file's)."""
    earlier = before.info if before is not None else {}
    info = {**{k: earlier[k] for k in DRIVE_KEYS if k in earlier}, **t.info}
    # When it was first made: the library lists interviews newest first, and naming one must not
    # move it to the top.
    if "created" not in info:
        try:
            when = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc) if before is not None else None
        except OSError:
            when = None
        when = when or datetime.now(timezone.utc)
        info["created"] = earlier.get("created") or when.isoformat(timespec="seconds").replace("+00:00", "Z")
    highlights = t.highlights if t.highlights is not None or before is None else before.highlights
    return replace(t, info=info, highlights=highlights)
