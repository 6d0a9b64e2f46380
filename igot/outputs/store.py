"""The library store: the one owner of a library folder's interviews, and everything made from
each transcript, kept in step.

`Library` reads the folder (every file checked: one a stranger damaged is skipped with why) and
changes it: every check-then-write holds the library's lock across processes
(igot.runtime.changes), and a change touching several files (an interview's exports, a tag
renamed in every interview) is all or nothing, also when the process is killed half way.

A run, naming the speakers (`igot rename`, the notebook's naming cell), the summary, the
notebook's other cells and the workspace all end in `save()`, in two parts:

1. The change, committed all or nothing (one changes.Change): the interview's JSON, its exports
   (HTML, Markdown, SRT, VTT), the library page OUT/index.html and, when the interview has a
   Drive copy or one is asked for, its entry in the Drive outbox (OUT/.igot/outbox/STEM.json).
   The exports and the page stay inside the commit: they are renderings of the very transcript
   the JSON holds, made from it in this process, and a reader (the workspace, a browser on the
   page, a synced folder) must never see the page or an export of another version than the JSON.
2. The writers that follow it (AFTER_COMMIT, in order, each with a name): the library's
   remembered voices (a local file, under the lock), then the Drive copy, once the library's lock
   is let go (changes.after_unlock: also when the caller holds it around the save, then as the
   caller lets it go), so that while Drive answers (up to a minute a request when it is down)
   every other writer of the library (a workspace correction, `igot tags`) goes on. A writer that
   fails never undoes the committed change: it says what failed and how it will be made good
   (Saved.problems).

The Drive copy is sent from the outbox: an entry holds names and flags only (the stem, the Drive
folder to make the Doc in, the Doc's name, when it was queued), never the transcript; the
interview's file as it is when sent is what goes (its Doc, its row in the folder's "iGot
interviews" Sheet, its JSON kept in the folder's .igot, the library's voices there). An entry is
removed once all of it is sent; one that fails stays, and every save that may reach Drive (and
`igot serve`'s start) sends the whole outbox again, oldest first. Once Drive cannot be reached
(no network, or still busy after the client's retries) the entries after it are not tried: each
would wait as long again; they stay for the next try. Entries are read as a stranger's file (a
planted one naming `../x`, or a link, is removed unsent, with a warning).

Where the interview's Doc is lives in its JSON (info["google_doc"], info["drive"]), written as
soon as the Doc is made, so any later change, from any path, updates the same Doc, row and kept
JSON, and a retry never makes a second Doc.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

import orjson

from igot.asr import glossary as glossary_module
from igot.speakers import voices as voices_module
from igot.errors import IgotError
from igot.outputs import conflicts, export, highlights, library, reports, stems
from igot.runtime import changes
from igot.runtime.files import first_link
from igot.text import without_controls
from igot.transcript import Transcript

# What a transcript keeps from the file it replaces: where its Doc is, and when it was made.
DRIVE_KEYS = ("google_doc", "drive")
MAX_ENTRY_BYTES = 16 * 1024  # an outbox entry holds names and flags only: a few hundred bytes
ENTRY_KEYS = {"stem", "folder", "name", "queued"}
AGAIN = "It will be tried again at the next save or start."

log_warning = logging.getLogger(__name__).warning


class DriveBehind(IgotError):
    """The change is saved here, but its Google Doc, Sheet row or kept JSON in Drive could not be
    brought up to date: its outbox entry stays, and is sent again at the next save or start."""


@dataclass
class Saved:
    """What a save made. The Drive copy is sent once the library's lock is let go: a caller that
    holds the lock around the save reads `transcript`, `doc` and `problems` after letting it go."""

    transcript: Transcript  # as written: with its date and, once it is in Drive, where its Doc is
    files: dict[str, Path]  # {format: path}
    library: Path  # OUT/index.html
    doc: Optional[str] = None  # the Google Doc's link, when the interview's Drive copy was brought up to date now
    # What a writer after the commit could not do ({writer's name: what failed, and how it will be
    # made good}); the change itself is saved.
    problems: dict[str, str] = field(default_factory=dict)

    @property
    def drive_problem(self) -> Optional[str]:
        """Why the interview's Drive copy still shows an earlier version (None: it is up to date, or has none)."""
        return self.problems.get(DRIVE)


@dataclass
class Committed:
    """A change of interview `stem` of the library `folder` once it is committed: what the writers
    after the commit are given, and what they make of it."""

    folder: Path
    stem: str
    before: Optional[Transcript]  # the interview as its file was before the change (None: a new one)
    after: Transcript  # as committed (the Drive writer adds where a new Doc is)
    remembered: Optional[voices_module.Voices]  # the library's voices after the change (None: unchanged)
    drive: bool  # whether Drive may be reached now (its outbox sent)
    service: Any
    client_secrets: Optional[Path]
    log: Callable[[str], None]
    doc: Optional[str] = None
    # Writers the caller adds, run under the lock after the store's own (a run's phrase vectors:
    # igot.search makes them, and the store may not import a later stage).
    then: Sequence[tuple[str, Callable[["Committed"], None]]] = ()


def save(t: Transcript, folder: Path | str, stem: Optional[str] = None, *, drive_folder: Optional[str] = None,
         doc_name: Optional[str] = None, drive: bool = True, client_secrets: Optional[Path] = None,
         service: Any = None, log: Callable[[str], None] = lambda message: None,
         remembered: Optional[voices_module.Voices] = None, replaces: Optional[Transcript] = None,
         known: Iterable[library.Interview] = (),
         then: Sequence[tuple[str, Callable[[Committed], None]]] = ()) -> Saved:
    """Write the transcript's files and the library page, then bring its Drive copy up to date.

    `drive_folder`: make the interview's Google Doc there (or update the one it has there).
    Without it, an interview already in Drive has its Doc, Sheet row and kept JSON updated;
    `drive=False` leaves Drive as it is and sends nothing (they then show the earlier version
    until the next save). A Drive copy that cannot be updated now leaves the change saved here,
    says why in Saved.problems, and is sent at the next save (its outbox entry).
    `service`: a Drive client (else one is made with the user's sign-in, `client_secrets`).
    `remembered`: the library's voices after this change, as the naming made them
    (igot.speakers.voices.after_naming), written to OUT/.igot/voices.json and its copy in the Drive
    folder; None leaves the remembered voices as they are. `replaces`: what the interview's JSON
    holds now, when the caller has just read it (the workspace: an hour's JSON takes ~0.1 s to
    read again). `known`: the library's interviews as a server has read them (the library page
    reads only those that changed). `stem`: the interview's stem (the name of its files), when the
    caller knows which interview it changes; None: the one stem_for gives, chosen under the same
    lock as the write, so two runs at once never take one free stem. `then`: more writers after the
    commit, (name, writer) run under the lock after the remembered voices. Saving only writes: it runs
    no model. The Drive copy is sent after the library's lock is let go (before this returns, or,
    when the caller holds the lock, as it lets it go: Saved says so)."""
    with changes.locked(folder):  # no other process changes the folder between reading and writing
        saved, done = _save(t, Path(folder), stem, drive_folder, doc_name, drive, client_secrets, service, log,
                            remembered, replaces, known, then)
        changes.after_unlock(folder, lambda: _followed(saved, done))
    return saved


def _save(t: Transcript, folder: Path, stem: Optional[str], drive_folder: Optional[str], doc_name: Optional[str],
          drive: bool, client_secrets: Optional[Path], service: Any, log: Callable[[str], None],
          remembered: Optional[voices_module.Voices], replaces: Optional[Transcript],
          known: Iterable[library.Interview],
          then: Sequence[tuple[str, Callable[[Committed], None]]] = ()) -> tuple[Saved, "Committed"]:
    stem = stem or stems.stem_for(folder, t)
    paths = export.export_paths(folder, stem, export.FORMATS)
    before = replaces if replaces is not None else _readable(paths["json"])
    t = _carried_over(t, before, paths["json"])
    outgoing = None
    if drive and (drive_folder or isinstance(t.info.get("drive"), dict)):
        outgoing = _outgoing(folder, stem, drive_folder, doc_name)
        changes.own_folder(outbox_path(folder), folder)  # a link planted there: refused, before any file moves
    # A change of highlights alone writes only the files that show them: the subtitles stay as
    # they are, and so does the library page (rebuilding it reads every interview: ~0.8 s with 200).
    exports, marks_only = exports_of(t, before, paths)

    def texts() -> Iterator[tuple[Path, str]]:
        # Each is made while those before it are written: the largest first (the library page),
        # so that what is left to write when the last is made is small.
        if not marks_only or not (folder / library.INDEX).is_file():
            yield folder / library.INDEX, library.library_page(folder, {paths["json"]: t}, known)
        yield from exports
        if outgoing is not None:
            yield entry_path(folder, stem), outgoing.text()

    changes.Change(folder, texts()).commit()
    done = Committed(folder, stem, before, t, remembered, drive, service, client_secrets, log, then=then)
    problems = after_commit(done, locked=True)
    log(f"Library: every interview in {folder}, searchable: {folder / library.INDEX}")
    return Saved(done.after, paths, folder / library.INDEX, done.doc, problems), done


def _followed(saved: Saved, done: "Committed") -> None:
    """The writers that follow the change without the library's lock (Drive), told in `saved`."""
    saved.problems.update(after_commit(done, locked=False))
    saved.transcript, saved.doc = done.after, done.doc


# --- what follows a change, once it is committed -----------------------------------------------------
def _write_voices(done: Committed) -> None:
    """The library's remembered voices, as the naming made them (OUT/.igot/voices.json)."""
    if done.remembered is None:
        return
    try:
        voices_module.save_voices(done.folder, done.remembered)
    except OSError as err:
        raise IgotError(f"The remembered voices could not be written to {voices_module.voices_path(done.folder)} "
                        f"({err.strerror or err}).", "Name the speakers again once the folder can be written to.") from None


def _send_drive(done: Committed) -> None:
    """Every entry of the library's Drive outbox sent, oldest first (this change's with them):
    DriveBehind when this interview's could not be."""
    if not done.drive:
        return
    sent = send_outbox(done.folder, service=done.service, client_secrets=done.client_secrets, log=done.log,
                       ours=done.stem)
    result = sent.get(done.stem)
    if isinstance(result, IgotError):
        raise result
    if result is not None:
        done.after, done.doc = result


DRIVE = "Google Drive"
# The writers a committed change is followed by, in this order, each with the name it is said by
# and whether it runs under the library's lock (a local file) or once the lock is let go (Drive,
# which may take minutes to answer). Neither undoes the change when it fails: it says what failed
# and how it will be made good.
AFTER_COMMIT: tuple[tuple[str, Callable[[Committed], None], bool], ...] = (
    ("Voices", _write_voices, True),
    (DRIVE, _send_drive, False),
)


def after_commit(done: Committed, locked: bool) -> dict[str, str]:
    """Run the writers of AFTER_COMMIT that run under the lock (`locked`), or those that run
    without it, on the committed change; what each could not do, by its name."""
    problems = {}
    writers = AFTER_COMMIT[:1] + tuple((name, write, True) for name, write in done.then) + AFTER_COMMIT[1:]
    for name, write, under_lock in writers:
        if under_lock != locked:
            continue
        try:
            write(done)
        except IgotError as err:
            problems[name] = str(err)
            if name != DRIVE:  # this interview's Drive problem is said by the caller, with its own words
                done.log(f"{name}: {err}")
    return problems


# --- the Drive outbox: OUT/.igot/outbox/STEM.json, what is still to be sent to each Drive copy -------
@dataclass(frozen=True)
class Outgoing:
    """What to send to interview `stem`'s Drive copy: names and flags, never the transcript (the
    interview's file as it is when sent is what is sent)."""

    stem: str
    folder: Optional[str]  # the Drive folder (link, id or path) to make its Doc in; None: the Doc it has
    name: Optional[str]  # the Doc's name asked for; None: the one it has (else the title)
    queued: str  # when it was first queued (UTC, ISO): the outbox is sent oldest first

    def text(self) -> str:
        return json.dumps({"stem": self.stem, "folder": self.folder, "name": self.name, "queued": self.queued},
                          ensure_ascii=False)


def outbox_path(folder: Path) -> Path:
    return Path(folder) / changes.STATE / changes.OUTBOX


def entry_path(folder: Path, stem: str) -> Path:
    return outbox_path(folder) / f"{stem}.json"


def _outgoing(folder: Path, stem: str, drive_folder: Optional[str], doc_name: Optional[str]) -> Outgoing:
    """This save's entry: the folder and name asked now, else those an entry still waiting asked
    (a Doc asked for while Drive was down is still made in that folder), queued when that was."""
    waiting = None
    path = entry_path(folder, stem)
    if path.exists() or path.is_symlink():
        try:
            waiting = _entry(Library(folder), path)
        except ValueError:
            waiting = None  # replaced by this one
    now = datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
    return Outgoing(stem, drive_folder or (waiting.folder if waiting else None),
                    doc_name or (waiting.name if waiting else None), waiting.queued if waiting else now)


def _entry(lib: "Library", path: Path) -> Outgoing:
    """The outbox entry in `path`, read as a stranger's file: a regular file (never through a link,
    nor a pipe), small, of the very shape _outgoing writes, for an interview of the library under
    its own name; ValueError says what is not."""
    try:
        handle = os.open(path, os.O_RDONLY | changes.NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as err:  # a link (ELOOP), or unreadable
        raise ValueError(f"it cannot be read ({err.strerror or err})") from None
    with os.fdopen(handle, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise ValueError("it is not a file")
        data = f.read(MAX_ENTRY_BYTES + 1)
    if len(data) > MAX_ENTRY_BYTES:
        raise ValueError(f"it is over {MAX_ENTRY_BYTES // 1024} kB")
    try:
        given = json.loads(data.decode("utf-8"))
    except ValueError as err:
        raise ValueError(f"it is not JSON ({err})") from None
    if not isinstance(given, dict) or set(given) != ENTRY_KEYS:
        raise ValueError("it is not an entry iGot writes")
    stem = given["stem"]
    if not isinstance(stem, str) or path.name != f"{stem}.json":
        raise ValueError(f"{str(stem)[:200]!r} is not the interview its name says")
    try:
        lib.path_of(stem)
    except LibraryError:
        raise ValueError(f"{stem[:200]!r} is no interview of the library") from None
    for key in ("folder", "name"):
        value = given[key]
        if value is not None and (not isinstance(value, str) or not value or len(value) > 2000
                                  or without_controls(value) != value):
            raise ValueError(f"its {key} is not a name")
    if not isinstance(given["queued"], str) or len(given["queued"]) > 64:
        raise ValueError("it does not say when it was queued")
    return Outgoing(stem, given["folder"], given["name"], given["queued"])


def outbox(folder: Path | str) -> list[Outgoing]:
    """The entries of the library's Drive outbox, oldest first. An entry no iGot wrote (another
    shape, an interview not of the library, a link) is removed, said as a warning: none is sent.
    Call under the library's lock."""
    folder = Path(folder).resolve()
    box = outbox_path(folder)
    link = first_link(box, folder)
    if link is not None:
        log_warning("iGot did not read the Drive outbox %s: %s is a link. Remove it: iGot makes the folder anew.", box, link)
        return []
    try:
        names = sorted(os.listdir(box))
    except OSError:  # none yet
        return []
    lib, found = Library(folder), []
    for name in names:
        if name.startswith("."):  # an entry being written (a change's temp)
            continue
        path = box / name
        try:
            found.append(_entry(lib, path))
        except ValueError as err:
            log_warning("iGot discarded the Drive outbox entry %s: %s. No iGot writes such an entry, so nothing was sent "
                        "for it, and it was removed.", path, err)
            try:
                path.unlink()  # a link is removed, never what it leads to
            except OSError:
                pass  # a folder planted there: left, and never read
    return sorted(found, key=lambda e: (e.queued, e.stem))


def send_outbox(folder: Path | str, service: Any = None, client_secrets: Optional[Path] = None,
                log: Callable[[str], None] = lambda message: None, ours: Optional[str] = None,
                credentials: Optional[Callable[[], Any]] = None) -> dict[str, "tuple[Transcript, str] | IgotError"]:
    """Send every entry of the library's Drive outbox, oldest first: the interview's Doc made or
    updated from its file as it is now, its Sheet row, its kept JSON and the library's voices in the
    Drive folder; a new Doc recorded in the interview's JSON (the next try updates it, never makes a
    second); the entry removed once all is sent, unless the interview changed meanwhile (then that
    version is sent next time). An entry that fails stays, for the next save or start; once Drive
    cannot be reached (gdoc.Unreachable: no network, or busy after the client's retries, about a
    minute a request) the entries after it are not tried now, and stay. The library's lock is held
    only to read and write its files, not while Drive answers (store.save sends once it let it go;
    call it without holding the lock). One sender at a time (changes.sending): a second waits for
    the first, then sends what is left.
    `credentials`: how to sign in (else gdoc.credentials(client_secrets)). By stem: (the transcript
    as recorded, the Doc's link), or the DriveBehind saying why; those of other interviews than
    `ours` are said through `log` too."""
    folder = Path(folder).resolve()
    with changes.sending(folder):  # one sender at a time: the others wait, then send what is left
        return _send_outbox(folder, service, client_secrets, log, ours, credentials)


def _send_outbox(folder: Path, service: Any, client_secrets: Optional[Path], log: Callable[[str], None],
                 ours: Optional[str], credentials: Optional[Callable[[], Any]]) -> dict[str, "tuple[Transcript, str] | IgotError"]:
    sent: dict[str, tuple[Transcript, str] | IgotError] = {}
    with changes.locked(folder):
        entries = outbox(folder)
    if not entries:
        return sent
    try:
        from igot.outputs import gdoc  # the Google client is needed only here

        if service is None:
            service = gdoc.drive_service(credentials() if credentials else gdoc.credentials(client_secrets))
    except IgotError as err:
        for entry in entries:
            sent[entry.stem] = _behind(folder, entry, err)
    else:
        unreachable: Optional[tuple[str, IgotError]] = None
        for entry in entries:
            if unreachable is not None:  # each would wait as long, and fail alike: left for the next try
                stem, err = unreachable
                sent[entry.stem] = _behind(folder, entry, IgotError(
                    f"not tried: Google Drive did not answer for interview '{stem}' just before: {err.problem}", err.fix))
                continue
            try:
                sent[entry.stem] = _send(folder, entry, service, gdoc)
            except gdoc.Unreachable as err:
                sent[entry.stem] = _behind(folder, entry, err)
                unreachable = entry.stem, err
            except IgotError as err:
                sent[entry.stem] = _behind(folder, entry, err)
            except Exception as err:  # noqa: BLE001  an answer Drive should not give: said, and the next entry sent
                sent[entry.stem] = _behind(folder, entry, IgotError(
                    f"Google Drive answered what iGot did not expect ({type(err).__name__}: {err}).",
                    "If it happens again, report it."))
    for stem, result in sent.items():
        if stem != ours and isinstance(result, IgotError):
            log(f"{DRIVE}: interview '{stem}': {result}")
    return sent


def _behind(folder: Path, entry: Outgoing, err: IgotError) -> DriveBehind:
    made = isinstance(_source_info(folder / f"{entry.stem}.json").get("google_doc"), str)
    return DriveBehind(f"Saved here; the Google Doc was not {'updated' if made else 'made'} "
                       f"({err.problem.rstrip('.')}). {AGAIN}", err.fix)


def _source_info(path: Path) -> dict:
    try:
        info = orjson.loads(path.read_bytes()).get("info")
        return info if isinstance(info, dict) else {}
    except (OSError, ValueError, AttributeError):
        return {}


def _send(folder: Path, entry: Outgoing, service: Any, gdoc: Any) -> tuple[Transcript, str]:
    path = folder / f"{entry.stem}.json"
    with changes.locked(folder):
        version, t = _read(path)
    where = gdoc.put_doc(service, t, entry.folder, entry.name)
    with changes.locked(folder):
        # Where the Doc is, in the interview's JSON at once (as its file is now): a later try
        # updates this Doc, never makes a second. Nothing else shows it: the exports and the
        # library page stay as they are.
        now_version, now = _read(path)
        recorded = where.recorded(now)
        if recorded.info != now.info:
            text = recorded.to_json()
            changes.Change(folder, {path: text}).commit()
            if now_version == version:  # the file sent, with where its Doc is
                version = version_of(text.encode("utf-8"))
    gdoc.put_repository(service, where.recorded(t), where, entry.stem)
    kept = _voices_to_drive(service, where.folder, folder)
    with changes.locked(folder):
        if kept is not None:
            try:
                voices_module.save_voices(folder, kept)
            except OSError:
                pass  # the Drive folder is noted again at the next send
        current, now = _read(path)
        if current == version:  # else the interview changed meanwhile: its entry stays, for that version
            entry_path(folder, entry.stem).unlink(missing_ok=True)
    return now, where.doc


def _read(path: Path) -> tuple[str, Transcript]:
    """The interview's file as it is now: its version and its transcript."""
    try:
        data = path.read_bytes()
        return version_of(data), Transcript.from_json(data.decode("utf-8"))
    except IgotError as err:
        raise IgotError(f"{path.name} cannot be sent: {err.problem}", err.fix) from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise IgotError(f"{path.name} cannot be read ({err}).", library.REDO[0].upper() + library.REDO[1:] + ".") from None


def exports_of(t: Transcript, before: Optional[Transcript], paths: dict[str, Path]) -> tuple[Iterator[tuple[Path, str]], bool]:
    """The files a change of `before` into `t` rewrites ((path, text), each made when reached), and
    whether only its highlights changed: then the subtitles stay as they are, and so does the
    library page (rebuilding it reads every interview: ~0.8 s with 200)."""
    marks_only = before is not None and replace(before, highlights=None) == replace(t, highlights=None)
    formats = [f for f in export.FORMATS if not marks_only or f in export.SHOW_HIGHLIGHTS or not paths[f].is_file()]
    return ((paths[fmt], text) for fmt, text in export.rendered(t, formats)), marks_only


def _voices_to_drive(service: Any, folder_id: str, folder: Path) -> Optional[voices_module.Voices]:
    """The library's voices kept beside the interview in its Drive folder (.igot/voices.json), so a
    later Colab session recognises them too; returns the voices to write here, when they changed
    (the first time, with those Drive already kept, and the Drive folder noted for forgetting)."""
    from igot.outputs import gdoc

    try:
        voices = voices_module.load_voices(folder)
    except IgotError:
        return None  # an unreadable file stays here, and is not copied
    if not voices.people and folder_id not in voices.drive:
        return None
    kept = gdoc.put_voices(service, folder_id, voices)
    return kept if kept != voices else None


def _readable(path: Path) -> Optional[Transcript]:
    """The transcript a save replaces, when there is one to read."""
    try:
        return Transcript.load(path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _carried_over(t: Transcript, before: Optional[Transcript], path: Path) -> Transcript:
    """The transcript with what the file it replaces knew and it may not: where its Doc is (a
    rename in a later session starts from a run that never saw the Doc), its date, and its
    highlights (a re-run makes none: None keeps the file's). Nothing of a file that holds another
    recording: its highlights mark moments of other words, its Doc is that recording's."""
    if before is not None and stems.other_recording(before.source, t.source):
        before = None
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


# --- the library folder as the workspace and `igot tags` read and change it -----------------------
RELOAD = "Reload the page to see the change, then do it again."
# Interviews kept parsed: at least KEEP_READ, and more while their phrases add up to at most
# KEEP_PHRASES (an hour is ~1,500 phrases, ~50 MB as Python objects): a team works on many
# interviews at once, and a change made on an older version can be compared (below) only while
# its interview is kept. 12,000 phrases: ~8 hours of interviews, a few hundred MB at most; twenty
# people on ten-minute interviews keep every one they work on (benchmarks/workspace_speed.py, team).
KEEP_READ = 4
KEEP_PHRASES = 12_000
# Recent versions of the interviews kept in memory, across the library: what a change made on an
# older version (a team: another person changed the interview meanwhile) is compared against. Only
# those of the KEEP_READ interviews kept parsed: versions this library writes share all they did not
# change with the one they were made from (phrases, turns), and one read from a file shares the
# phrases it has in common with the one kept, so a version costs what differs (a correction: a list
# of the phrases, ~12 kB on an hour), while every other interview's would cost the hour again.
KEEP_VERSIONS = 256


class LibraryError(IgotError):
    """A change the library cannot make as asked; `status` is its HTTP status in the workspace."""

    status = 400


class NotFound(LibraryError):
    status = 404


class Stale(LibraryError):
    """The interview (or glossary, or prompt) changed since the page read it. For a change refused
    because someone changed the very thing it changes (igot.outputs.conflicts): `thing`, a short key
    ("phrase 12", "highlight ab12cd"), `now`, that thing as it is now (JSON-able, None when gone),
    and `by`, who changed it ("" when the interview cannot say); None, None, "" otherwise."""

    status = 409

    def __init__(self, problem: str, fix: str = "", *, thing: Optional[str] = None, now: Optional[dict] = None,
                 by: str = "") -> None:
        super().__init__(problem, fix)
        self.thing, self.now, self.by = thing, now, by


class CannotWrite(LibraryError):
    status = 500


@dataclass
class Opened:
    """An interview as read from its file, with the version a change must name."""

    stem: str
    path: Path
    transcript: Transcript
    version: str
    # What Library.change answers: True when the change was made over a newer version than the one
    # it named (others' changes meanwhile are in `transcript`: a page that patches in only what its
    # own change did must read the interview again).
    merged: bool = False


def version_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


class Library:
    """The interviews of one library folder (its JSON files), read and changed safely.

    Every interview has a version: a hash of its JSON file as it is on disk. A change names the
    version it was made on; one made on an older version (another tab, another `igot serve`,
    `igot rename` meanwhile) is refused with "reload", never applied over the newer file. The
    check and the write hold the library's lock, which every process honours."""

    def __init__(self, folder: Path | str, keep_phrases: int = KEEP_PHRASES, keep_versions: int = KEEP_VERSIONS) -> None:
        """`keep_phrases`, `keep_versions`: how much is kept in memory (KEEP_PHRASES, KEEP_VERSIONS)."""
        self.folder = Path(folder).resolve()
        self.keep_phrases, self.keep_versions = keep_phrases, keep_versions
        self._kept_lock = threading.Lock()  # guards the interviews kept parsed, shared by a server's threads
        # The last interviews read, by version: an hour's JSON takes ~0.1 s to parse, and the
        # version (a hash of the file) says whether the file is still the one read.
        self._read: OrderedDict[str, Opened] = OrderedDict()
        # (stem, version) -> the interview at that version: the last KEEP_VERSIONS read or written.
        self._versions: OrderedDict[tuple[str, str], Transcript] = OrderedDict()
        self._listed: Optional[tuple[tuple, tuple[list[library.Interview], list[library.Skipped]]]] = None

    def locked(self):
        """The library's lock (igot.runtime.changes.locked): hold it around a check and its write."""
        return changes.locked(self.folder)

    # --- reading --------------------------------------------------------------------------
    def listing(self) -> tuple[list[library.Interview], list[library.Skipped]]:
        """Every interview (newest first, phrases without their words) and the files skipped, with
        why. Read again only when a JSON file in the folder changed (its time or size): reading
        200 interviews costs ~0.4 s, looking at their files ~2 ms."""
        if changes.interrupted(self.folder):
            with self.locked():  # a change a killed process left half made: finished first
                pass
        stamp = self._stamp()
        listed = self._listed
        if listed is None or listed[0] != stamp:
            # The interviews not changed are kept with what searching them built.
            listed = (stamp, library.load_library(self.folder, listed[1][0] if listed else ()))
            self._listed = listed
        return listed[1]

    def _listed_with(self, path: Path, t: Transcript) -> None:
        """The last listing brought up to date with interview `t` this library just wrote to
        `path` (its own change, under the lock): a team changes an interview every few hundred ms,
        and reading each one back for the next search or library page was most of a change's wait
        (benchmarks/workspace_speed.py, team). Files others changed meanwhile still differ from
        their stamps, and are read at the next listing as before."""
        listed = self._listed
        if listed is None:
            return
        try:
            fresh = library.written(t, path)
        except OSError:
            self._listed = None  # read again at the next listing
            return
        stamp = tuple(sorted([e for e in listed[0] if e[0] != path.name] + [(path.name, *fresh.stamp)]))
        interviews = [iv for iv in listed[1][0] if iv.path.name != path.name] + [fresh]
        skipped = [k for k in listed[1][1] if k.path.name != path.name]
        self._listed = (stamp, (library.sort_newest_first(interviews), skipped))

    def _known(self) -> list[library.Interview]:
        """The interviews of the last listing (what the library page need not read again)."""
        listed = self._listed
        return listed[1][0] if listed is not None else []

    def _stamp(self) -> tuple:
        found = []
        with os.scandir(self.folder) as entries:
            for entry in entries:
                if entry.name.endswith(".json"):
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    found.append((entry.name, st.st_mtime_ns, st.st_size))
        return tuple(sorted(found))

    def path_of(self, stem: str) -> Path:
        """The JSON of interview `stem`: a file directly in the library folder (no link), or NotFound."""
        missing = NotFound(f"No interview {stem!r} in this library.", "Open it from the library's list.")
        if not isinstance(stem, str) or not stem or stem.startswith(".") or any(c in stem for c in "/\\\x00:"):
            raise missing
        path = self.folder / f"{stem}.json"
        if path.is_symlink():
            raise missing
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):
            raise missing from None
        if real.parent != self.folder or not real.is_file():
            raise missing
        return path

    def open(self, stem: str) -> Opened:
        """Interview `stem` as its file is now; NotFound, or LibraryError saying what is wrong with the file."""
        path = self.path_of(stem)
        try:
            data = path.read_bytes()
        except OSError as err:
            raise NotFound(f"Interview {stem!r} cannot be read ({err.strerror or err}).", "Check the file's permissions.") from None
        version = version_of(data)
        with self._kept_lock:
            kept = self._read.get(stem)
            if kept is not None and kept.version == version:
                self._read.move_to_end(stem)
                return kept
            known = self._versions.get((stem, version))
        if known is not None:  # a version this library wrote or read, back again (an undo's file, another tab)
            return self._keep(Opened(stem, path, known, version))
        try:
            t = _shared(Transcript.from_json(data.decode("utf-8")), kept.transcript if kept is not None else None)
        except IgotError as err:
            raise LibraryError(f"{path.name} cannot be opened: {err.problem}", err.fix) from None
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            raise LibraryError(f"{path.name} cannot be opened ({err}).", library.REDO[0].upper() + library.REDO[1:] + ".") from None
        return self._keep(Opened(stem, path, t, version))

    def _keep(self, opened: Opened) -> Opened:
        with self._kept_lock:
            self._read[opened.stem] = opened
            self._read.move_to_end(opened.stem)
            dropped = False
            while len(self._read) > KEEP_READ and sum(len(o.transcript.phrases) for o in self._read.values()) > self.keep_phrases:
                self._read.popitem(last=False)
                dropped = True
            if dropped:  # its versions go with it: each would hold the whole interview again
                for key in [key for key in self._versions if key[0] not in self._read]:
                    del self._versions[key]
        self._remember(opened.stem, opened.version, opened.transcript)
        return opened

    def _remember(self, stem: str, version: str, t: Transcript) -> None:
        """Interview `stem` at `version` kept among the recent versions (KEEP_VERSIONS), while
        the interview is among those kept parsed (KEEP_READ)."""
        with self._kept_lock:
            if stem not in self._read:
                return
            self._versions[(stem, version)] = t
            self._versions.move_to_end((stem, version))
            while len(self._versions) > self.keep_versions:
                self._versions.popitem(last=False)

    def version_at(self, stem: str, version: str) -> Optional[Transcript]:
        """Interview `stem` as it was at `version`, when that version is still kept in memory (read
        or written by this library lately); None otherwise."""
        with self._kept_lock:
            return self._versions.get((stem, version))

    def _may_follow(self, stem: str, version: str, now: Opened,
                    touches: Optional[Callable[[Transcript], object]]) -> None:
        """Whether a change made on `version` of interview `stem` may be made on it as it is `now`
        (a newer version): only when the change says what it touches, the version it was made on is
        known, and what it touches is as it was then. Stale otherwise, saying what changed and who
        changed it when the change can say (igot.outputs.conflicts)."""
        base = self.version_at(stem, version) if touches is not None else None
        if base is None:  # as a one-person library always was: nothing to compare with, so never over a newer file
            raise Stale(f"Interview '{now.transcript.source.title}' changed since this page read it "
                        "(in another tab or window?): nothing was changed.", RELOAD)
        if touches(base) == touches(now.transcript):
            return
        said = conflicts.conflict_of(touches, base, now.transcript)
        raise Stale(said.problem, conflicts.FIX, thing=said.thing, now=said.now, by=said.by)

    # --- changing -------------------------------------------------------------------------
    def change(self, stem: str, version: object, make: Callable[[Transcript], Transcript],
               voices: Optional[Callable[[Transcript], Optional[voices_module.Voices]]] = None, *,
               touches: Optional[Callable[[Transcript], object]] = None) -> Opened:
        """Apply `make` to interview `stem` when it is still at `version`, and save the result
        through the one save path; Stale when the file changed since that version. `voices`: the
        library's remembered voices once the change is made (a naming), written with it.

        `touches` (a team: igot.outputs.conflicts.Touches, or any function of a transcript): what the
        change reads of the interview. Given, a change made on an older version that this library
        still keeps in memory (KEEP_VERSIONS) is made on the interview as it is now, keeping what
        others changed meanwhile, when `touches` gives the same in both; when it does not, Stale
        says what changed and who (Stale.thing, .now, .by). Without it, or when that version is no
        longer known (another process wrote it, or it is long gone), any newer file refuses it."""
        if not isinstance(version, str) or not version:
            raise LibraryError("The change does not say which version of the interview it was made on.", RELOAD)
        try:
            with self.locked():
                now = self.open(stem)
                if version != now.version:
                    self._may_follow(stem, version, now, touches)
                made = make(now.transcript)
                remembered = voices(made) if voices is not None and made is not now.transcript else None
                saved = save(made, self.folder, stem, drive=False, replaces=now.transcript, remembered=remembered,
                             known=self._known())
                kept = self._keep(Opened(stem, now.path, saved.transcript, version_of(now.path.read_bytes())))
                self._listed_with(now.path, saved.transcript)
                return replace(kept, merged=True) if version != now.version else kept
        except OSError as err:
            raise CannotWrite(f"Could not write interview '{stem}' ({err.strerror or err}).",
                              "Check that the disk has room and the folder can be written to; reload, then do it again.") from None

    def change_all(self, make: Callable[[Transcript], Optional[Transcript]]) -> list[str]:
        """Apply `make` to every interview of the library (None: that one is left as it is), all or
        nothing: every changed interview's files and the library page are prepared first and put in
        place together; an interview that cannot be opened, or any failure, changes no file. The
        stems changed."""
        try:
            with self.locked():
                interviews, _ = self.listing()
                made: dict[str, tuple[Opened, Transcript]] = {}
                for iv in interviews:
                    now = self.open(iv.path.stem)
                    changed = make(now.transcript)
                    if changed is not None:
                        made[iv.path.stem] = (now, _carried_over(changed, now.transcript, now.path))
                if not made:
                    return []
                texts: dict[Path, str] = {}
                for stem, (now, t) in made.items():
                    texts.update(exports_of(t, now.transcript, export.export_paths(self.folder, stem, export.FORMATS))[0])
                texts[self.folder / library.INDEX] = library.library_page(
                    self.folder, {now.path: t for now, t in made.values()}, interviews)
                changes.Change(self.folder, texts).commit()
                for stem, (now, t) in made.items():  # a page that read the version before may still change what this did not
                    self._remember(stem, version_of(now.path.read_bytes()), t)
                return list(made)
        except OSError as err:
            raise CannotWrite(f"Could not write the library {self.folder} ({err.strerror or err}): nothing was changed.",
                              "Check that the disk has room and the folder can be written to, then do it again.") from None

    def rename_tag(self, old: str, new: str) -> list[str]:
        """Tag `old` called `new` in every interview (joined with `new` where both are on one
        highlight), all or nothing; the stems changed."""
        return self.change_all(lambda t: highlights.tags_renamed(t, old, new))

    # --- the glossary (igot.asr.glossary): OUT/glossary.txt, one term per line ---------------------
    def kept_glossary(self) -> "KeptGlossary":
        """The glossary as its file is now, with its version (a hash of the file; no file: no
        terms). The file may be written by anyone: one iGot cannot read (a link, too large, not
        UTF-8, a control character) has no terms and says why, and a save replaces it."""
        path = self.folder / glossary_module.FILE
        name = f"file {path}"
        if path.is_symlink():
            return KeptGlossary([], version_of(os.fsencode(os.readlink(path))), f"The glossary {name} is a link.")
        try:
            with open(path, "rb") as f:
                data = f.read(glossary_module.MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            return KeptGlossary([], version_of(b""))
        except OSError as err:
            return KeptGlossary([], version_of(b""), f"The glossary {name} cannot be read ({err.strerror or err}).")
        try:
            return KeptGlossary(glossary_module.from_bytes(data, name), version_of(data))
        except IgotError as err:
            return KeptGlossary([], version_of(data), err.problem)

    def glossary(self) -> list[str]:
        """The glossary's terms; LibraryError when its file cannot be read."""
        kept = self.kept_glossary()
        if kept.problem:
            raise LibraryError(kept.problem, GLOSSARY_FIX)
        return kept.terms

    def set_glossary(self, terms: object, version: object) -> "KeptGlossary":
        """The glossary made `terms` (checked: glossary_module.checked), when its file is still at
        `version`; Stale when it changed since. No terms: the file is removed."""
        if not isinstance(version, str) or not version:
            raise LibraryError("The change does not say which version of the glossary it was made on.", RELOAD)
        try:
            checked = glossary_module.checked(terms, "as saved") if isinstance(terms, list) else None
        except IgotError as err:
            raise LibraryError(err.problem, err.fix) from None
        if checked is None:
            raise LibraryError("The glossary must be sent as a list of terms.", RELOAD)
        path = self.folder / glossary_module.FILE
        try:
            with self.locked():
                if version != self.kept_glossary().version:
                    raise Stale("The glossary changed since this page read it (in another tab, or igot run --glossary "
                                "meanwhile?): nothing was changed.", RELOAD)
                changes.Change(self.folder, {path: glossary_module.file_text(checked) if checked else None}).commit()
                return self.kept_glossary()
        except OSError as err:
            raise CannotWrite(f"Could not write the glossary {path} ({err.strerror or err}): nothing was changed.",
                              "Check that the disk has room and the folder can be written to, then do it again.") from None

    def add_to_glossary(self, terms: list[str]) -> list[str]:
        """`terms` added to the glossary, after those it has (a term it has keeps its spelling):
        all of them, as kept."""
        with self.locked():
            kept = self.kept_glossary()
            if kept.problem:
                raise LibraryError(f"{kept.problem} Nothing was added to it.", GLOSSARY_FIX)
            both = glossary_module.merged(kept.terms, terms, f"file {self.folder / glossary_module.FILE} with the terms given")
            return self.set_glossary(both, kept.version).terms if both != kept.terms else kept.terms

    # --- the summary prompt (igot.summary.summarize): OUT/summary-prompt.txt ---------------------
    def kept_prompt(self) -> "KeptPrompt":
        """The library's summary prompt as its file is now, with its version (a hash of the file;
        no file: text "", the default). The file may be written by anyone: one iGot cannot use (a
        link, too large, not UTF-8, a control character, no {transcript}) has no text and says why,
        and a save replaces it."""
        path = self.folder / library.PROMPT_FILE
        name = f"file {path}"
        if path.is_symlink():
            return KeptPrompt("", version_of(os.fsencode(os.readlink(path))), f"The summary prompt {name} is a link.")
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_PROMPT_BYTES + 1)  # no further: the file may be anything
        except FileNotFoundError:
            return KeptPrompt("", version_of(b""))
        except OSError as err:
            return KeptPrompt("", version_of(b""), f"The summary prompt {name} cannot be read ({err.strerror or err}).")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            return KeptPrompt("", version_of(data), f"The summary prompt {name} is not UTF-8 text (byte {err.start}).")
        try:
            return KeptPrompt(checked_prompt(text, name), version_of(data))
        except IgotError as err:
            return KeptPrompt("", version_of(data), err.problem)

    def prompt_at(self, version: object) -> str:
        """The prompt the library's summaries are written with (its own, else iGot's default), when
        its file is still at `version`; Stale when it changed since, LibraryError when it cannot be used."""
        from igot.summary.summarize import DEFAULT_PROMPT  # here: ~80 ms to import, for the prompt alone

        if not isinstance(version, str) or not version:
            raise LibraryError("The request does not say which version of the summary prompt it was made with.", RELOAD)
        kept = self.kept_prompt()
        if version != kept.version:
            raise Stale("The summary prompt changed since this page read it (in another tab?): nothing was changed.", RELOAD)
        if kept.problem:
            raise LibraryError(kept.problem, PROMPT_FIX)
        return kept.text or DEFAULT_PROMPT

    def set_prompt(self, text: object, version: object) -> "KeptPrompt":
        """The library's summary prompt made `text` (checked: checked_prompt), when its file is
        still at `version`; Stale when it changed since. Empty, or the default itself: the file is
        removed, and the default is used."""
        if not isinstance(version, str) or not version:
            raise LibraryError("The change does not say which version of the summary prompt it was made on.", RELOAD)
        if not isinstance(text, str):
            raise LibraryError("The summary prompt must be sent as text.", RELOAD)
        try:
            checked = checked_prompt(text, "as saved")
        except IgotError as err:
            raise LibraryError(err.problem, err.fix) from None
        path = self.folder / library.PROMPT_FILE
        try:
            with self.locked():
                if version != self.kept_prompt().version:
                    raise Stale("The summary prompt changed since this page read it (in another tab?): nothing was changed.",
                                RELOAD)
                changes.Change(self.folder, {path: checked or None}).commit()
                return self.kept_prompt()
        except OSError as err:
            raise CannotWrite(f"Could not write the summary prompt {path} ({err.strerror or err}): nothing was changed.",
                              "Check that the disk has room and the folder can be written to, then do it again.") from None

    # --- reports (igot.outputs.reports): OUT/reports/ID.json, one file each ------------------------
    def reports_folder(self) -> Path:
        return self.folder / reports.FOLDER

    def report_path(self, report_id: object) -> Path:
        """The file of report `report_id` (an id iGot makes: reports.ID); NotFound for any other name."""
        if not isinstance(report_id, str) or not reports.ID.fullmatch(report_id):
            raise NotFound(f"No report {str(report_id)[:40]!r} in this library.", "Open it from the Reports page.")
        return self.reports_folder() / f"{report_id}.json"

    def _kept_report(self, report_id: str) -> "reports.KeptReport":
        """Report `report_id` as its file is now, read as a stranger's file: never through a link
        (the reports folder or the file), nor a pipe; NotFound when there is none, LibraryError
        saying what is wrong with one that cannot be read."""
        path = self.report_path(report_id)
        name = f"{reports.FOLDER}/{path.name}"
        fix = f"Delete or replace the file {path}: iGot writes each report there, and reads it only as it wrote it."
        link = first_link(path, self.folder)
        if link is not None:
            raise LibraryError(f"The report {name} was not read: {link.relative_to(self.folder)} is a link.", fix)
        try:
            handle = os.open(path, os.O_RDONLY | changes.NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            raise NotFound(f"No report {report_id!r} in this library (deleted, maybe in another tab?).",
                           "Open the Reports page.") from None
        except OSError as err:  # a link (ELOOP), or unreadable
            raise LibraryError(f"The report {name} cannot be read ({err.strerror or err}).", fix) from None
        with os.fdopen(handle, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
                raise LibraryError(f"The report {name} is not a file.", fix)
            data = f.read(reports.MAX_FILE_BYTES + 1)
        try:
            return reports.KeptReport(reports.from_bytes(data, report_id), version_of(data))
        except IgotError as err:
            raise LibraryError(f"The report {name} cannot be read: {err.problem}.", fix) from None

    def report_list(self) -> tuple[list["reports.KeptReport"], list[str]]:
        """Every report of the library (the last changed first), and a line for each file of the
        reports folder that is not one (a link, a damaged file, a name iGot does not give)."""
        folder = self.reports_folder()
        link = first_link(folder, self.folder)
        if link is not None:
            return [], [f"The reports folder was not read: {link.relative_to(self.folder)} is a link. "
                        f"Remove the link: iGot makes the folder anew."]
        try:
            names = sorted(os.listdir(folder))
        except OSError:  # none yet
            return [], []
        found, problems = [], []
        for name in names:
            if name.startswith("."):  # a change's temp
                continue
            if not name.endswith(".json") or not reports.ID.fullmatch(name[:-5]):
                problems.append(f"{reports.FOLDER}/{name} is not a report iGot wrote: it was not read.")
                continue
            try:
                found.append(self._kept_report(name[:-5]))
            except LibraryError as err:
                problems.append(err.problem)
        return sorted(found, key=lambda k: (k.report.changed or k.report.made, k.report.id), reverse=True), problems

    def report(self, report_id: object) -> "reports.KeptReport":
        """Report `report_id` as its file is now, with its version; NotFound, or LibraryError saying
        what is wrong with its file."""
        return self._kept_report(self.report_path(report_id).stem)

    def _write_report(self, r: "reports.Report", what: str) -> "reports.KeptReport":
        """`r` written to its file (under the lock), one file put in place whole."""
        path = self.report_path(r.id)
        try:
            changes.own_folder(self.reports_folder(), self.folder)  # a link in its place: refused, nothing written
            text = reports.file_text(r)
            changes.Change(self.folder, {path: text}).commit()
            return reports.KeptReport(r, version_of(text.encode("utf-8")))
        except OSError as err:
            raise CannotWrite(f"Could not {what} the report {path} ({err.strerror or err}): nothing was changed.",
                              "Check that the disk has room and the folder can be written to, then do it again.") from None
        except IgotError as err:
            raise LibraryError(err.problem, err.fix) from None

    def make_report(self, title: object, sources: object, by: str = "") -> "reports.KeptReport":
        """A new report titled `title`, made from `sources` (reports.checked_sources: tags and
        themes), with no findings yet; `by`: who makes it. Its id is new (never its title's)."""
        try:
            r = reports.Report(reports.new_id(), reports.checked_title(title), reports.checked_sources(sources),
                               made_by=conflicts.person(by), changed_by=conflicts.person(by), made=reports.now(),
                               changed=reports.now())
        except IgotError as err:
            raise LibraryError(err.problem, err.fix) from None
        with self.locked():
            return self._write_report(r, "make")

    def change_report(self, report_id: object, version: object, *, title: object = None, findings: object = None,
                      by: str = "") -> "reports.KeptReport":
        """Report `report_id` with its title and/or findings (reports.checked_findings) as given
        (None: as they are), when its file is still at `version`; Stale when it changed since
        (nothing is changed: the page keeps what was typed, reloads, and saves again)."""
        if not isinstance(version, str) or not version:
            raise LibraryError("The change does not say which version of the report it was made on.", RELOAD)
        try:
            new_title = reports.checked_title(title) if title is not None else None
            new_findings = reports.checked_findings(findings) if findings is not None else None
        except IgotError as err:
            raise LibraryError(err.problem, err.fix) from None
        with self.locked():
            kept = self.report(report_id)
            if version != kept.version:
                who = f" by {kept.report.changed_by}" if kept.report.changed_by else ""
                raise Stale(f"The report “{kept.report.title}” was changed{who} since this page read it: nothing was "
                            "changed.", "Your text is kept on the page: reload the report, then save again.")
            return self._write_report(reports.changed(kept.report, title=new_title, findings=new_findings, by=by), "change")

    def delete_report(self, report_id: object, version: object) -> None:
        """Report `report_id` removed, when its file is still at `version` (Stale otherwise). A
        damaged or linked file in its place is removed too (the link, never what it leads to)."""
        path = self.report_path(report_id)
        with self.locked():
            try:
                kept = self.report(report_id)
            except NotFound:
                raise
            except LibraryError:
                kept = None  # a file iGot cannot read: removed, as asked
            if kept is not None and version != kept.version:
                raise Stale(f"The report “{kept.report.title}” was changed since this page read it: it was not deleted.",
                            RELOAD)
            try:
                if path.is_symlink():  # the link itself, never what it leads to (nor a copy of it kept)
                    path.unlink()
                else:
                    changes.Change(self.folder, {path: None}).commit()
            except OSError as err:
                raise CannotWrite(f"Could not delete the report {path} ({err.strerror or err}).",
                                  "Check that the folder can be written to, then do it again.") from None

    def keep_report_doc(self, report_id: object, folder_id: str, doc: str) -> "reports.KeptReport":
        """Where report `report_id`'s Google Doc is, kept in its file as it is now (a later send
        updates that Doc, never makes a second); its title and findings are left as they are."""
        with self.locked():
            kept = self.report(report_id)
            return self._write_report(replace(kept.report, google_doc={"folder": folder_id, "doc": doc}), "change")

    # --- an interview's summary written again (the workspace: igot.workspace.models) ---------------
    def opened_at(self, stem: str, version: object, *,
                  touches: Optional[Callable[[Transcript], object]] = None) -> Opened:
        """Interview `stem` as its file is now, when that is still `version`; Stale otherwise. A
        long job made from it (a summary written again) is refused before it starts, not after.
        `touches`: as in `change`: a newer version is returned when what it touches is as it was
        at `version` (a summary: _summary_reads)."""
        if not isinstance(version, str) or not version:
            raise LibraryError("The change does not say which version of the interview it was made on.", RELOAD)
        now = self.open(stem)
        if version != now.version:
            self._may_follow(stem, version, now, touches)
        return now

    def keep_summary(self, stem: str, read: Transcript, written: Transcript) -> Opened:
        """The summary of `written`, made from `read`, saved into interview `stem` through the one
        save, so that every export shows it. A change made meanwhile to what the summary does not
        read (a highlight) is kept; one to what it reads (the phrases, the speakers' names, the
        title, the language) refuses it, since its points cite phrases by their place."""
        def make(t: Transcript) -> Transcript:
            if _summary_reads(t) != _summary_reads(read):
                raise Stale(f"Interview '{t.source.title}' was corrected while its summary was written: "
                            "the new summary was not kept.", "Reload the page, then redo the summary.")
            how = {"summary": written.info["summary"]} if "summary" in written.info else {}  # model, chunks, seconds
            return replace(t, summary=written.summary, info={**t.info, **how})

        with self.locked():  # no change between the version read and the one named
            return self.change(stem, self.open(stem).version, make)

    # --- a change made from the interview as it is now (`igot rename`, the notebook's cells) -----
    def change_now(self, stem: str, make: Callable[[Transcript], Transcript],
                   voices: Optional[Callable[[Transcript], Optional[voices_module.Voices]]] = None, *,
                   drive: bool = True, drive_folder: Optional[str] = None, doc_name: Optional[str] = None,
                   client_secrets: Optional[Path] = None, service: Any = None,
                   log: Callable[[str], None] = lambda message: None) -> Saved:
        """Apply `make` to interview `stem` as its file is now, and save the result with its Drive
        copy (save's `drive`, `drive_folder`, `doc_name`...): the change `igot rename` and the
        notebook's naming, summary and publish cells make. They hold no page's version: the file is
        read under the library's lock and written before the lock is let go, so a correction made
        meanwhile in the workspace is in what `make` is given, and kept; a page that read the file
        before is refused (Stale) when it names its older version."""
        try:
            with self.locked():
                now = self.open(stem)
                made = make(now.transcript)
                remembered = voices(made) if voices is not None and made is not now.transcript else None
                saved = save(made, self.folder, stem, drive_folder=drive_folder, doc_name=doc_name, drive=drive,
                             client_secrets=client_secrets, service=service, log=log, remembered=remembered,
                             replaces=now.transcript, known=self._known())
                self._keep(Opened(stem, now.path, saved.transcript, version_of(now.path.read_bytes())))
                self._listed_with(now.path, saved.transcript)
                return saved
        except OSError as err:
            raise CannotWrite(f"Could not write interview '{stem}' ({err.strerror or err}).",
                              "Check that the disk has room and the folder can be written to, then do it again.") from None


GLOSSARY_FIX = (f"Save the glossary again in the workspace's Glossary page, or correct or delete the file "
                f"{glossary_module.FILE} in the library folder (one term per line, UTF-8 text).")


@dataclass
class KeptGlossary:
    """The library's glossary as its file is now, and the version a change must name."""

    terms: list[str]
    version: str
    problem: Optional[str] = None  # why the file cannot be read (then no terms)


# A prompt, not a document: the transcript must fit beside it in the model's context (16 kB is
# ~4,000 tokens, half of the 8,192 a summary call reads; the default prompt is under 1 kB).
MAX_PROMPT_BYTES = 16 * 1024
PROMPT_FIX = (f"Save the prompt again from an interview's Redo the summary in the workspace, or correct or delete "
              f"the file {library.PROMPT_FILE} in the library folder (UTF-8 text with {{transcript}} in it).")


def checked_prompt(text: str, what: str) -> str:
    """A summary prompt as kept: "" (the default) when it is empty or the default itself; else at
    most MAX_PROMPT_BYTES, no control character but line breaks and tabs, with {transcript} in it.
    IgotError naming `what` otherwise."""
    from igot.summary.summarize import DEFAULT_PROMPT, check_prompt  # here: ~80 ms to import, for the prompt alone

    text = text.replace("\r\n", "\n")
    size = len(text.encode("utf-8", "replace"))
    if size > MAX_PROMPT_BYTES:
        raise IgotError(f"The summary prompt ({what}) is {size} bytes long, over {MAX_PROMPT_BYTES // 1024} kB.",
                        "Shorten it: the transcript must fit beside it in the language model's context.")
    bad = next((i for i, c in enumerate(text) if without_controls(c, keep="\n\t") != c or "\ud800" <= c <= "\udfff"), None)
    if bad is not None:  # a lone surrogate too: no file can hold it
        raise IgotError(f"The summary prompt ({what}) holds a control character (U+{ord(text[bad]):04X}, "
                        f"character {bad + 1}).", "Remove it: a prompt is plain text, with line breaks and tabs.")
    if not text.strip() or text.strip() == DEFAULT_PROMPT.strip():
        return ""
    try:
        check_prompt(text)
    except IgotError as err:  # said with where the prompt is
        raise IgotError(f"The summary prompt ({what}): {err.problem[len('The prompt '):]}", err.fix) from None
    return text


def _shared(t: Transcript, kept: Optional[Transcript]) -> Transcript:
    """`t` (just read from a file) with the phrases and turns it has in common with `kept` (a
    version of the same interview kept in memory) taken from it: the recent versions kept
    (KEEP_VERSIONS) then cost what differs, not the hour again."""
    if kept is None:
        return t
    same = {(p.start, p.end, p.text): p for p in kept.phrases}
    phrases = [q if (q := same.get((p.start, p.end, p.text))) is not None and q == p else p for p in t.phrases]
    turns = kept.turns if kept.turns == t.turns else t.turns
    return replace(t, phrases=phrases, turns=turns)


def _summary_reads(t: Transcript) -> tuple:
    """What a summary is written from (igot.summary.summarize fills its prompt with these)."""
    return t.phrases, t.speakers, t.source.title, t.language


# What writing the summary again touches (Library.opened_at's `touches`): what it is written from.
# A highlight added meanwhile does not stop it; a correction does, since its points cite phrases by place.
SUMMARY_TOUCHES = conflicts.Touches(_summary_reads, lambda base, now: conflicts.Conflict(
    "summary", None, "", "The interview was corrected since your page read it, and the summary is written from its "
                         f"phrases. {conflicts.NOT_MADE}"))


@dataclass
class KeptPrompt:
    """The library's summary prompt as its file is now, and the version a change must name."""

    text: str  # "": none kept, iGot's default is used
    version: str
    problem: Optional[str] = None  # why the file cannot be used (then no text)
