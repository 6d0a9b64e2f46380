"""Clips: a highlight, or every highlight of a tag as one reel, as an MP4 made with ffmpeg from the
interview's recording on this computer. Each clip opens titled with who said it, in which
interview and when (drawn on the picture, and in the file's title); a recording with no picture
gets a plain background to carry the title. A clip carries no other metadata of the recording
(-map_metadata -1): a clip shared outside the team says only what its title says.

A clip is made in a temp folder of its own (made_clip) that the caller removes once the file is sent
(remove_clip); at most JOBS clips are made at a time, the rest wait their turn. A link shared
outside the team (igot.workspace.public) keeps its clip (kept_clip) and its still (kept_still) in
the library's own folder, made once and again only when what they show changed."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from igot.errors import IgotError
from igot.media import audio
from igot.outputs import highlights
from igot.text import clean_text, format_clock, typed_line
from igot.outputs.store import Library
from igot.runtime.changes import NOFOLLOW, own_folder
from igot.runtime.files import STATE, remove_tree
from igot.workspace.interviews import is_video, media_file
from igot.workspace.tags import quotes as tag_quotes

PAD = 0.4  # seconds of the recording kept before and after the words, so no word is cut
SIZE = (1280, 720)
FPS = 25
BACKGROUND = "0x1d2430"  # behind a recording with no picture
TITLE_SECONDS = 4.0  # how long the title stays on the picture
# ffmpeg takes every core it finds: ten clips asked for at once ran ten ffmpeg, each ten times
# slower, and the computer with them. Two at a time keep the rest of the workspace answering.
JOBS = 2
FOLDER_PREFIX = "igot-clip-"  # a clip's temp folder; only folders so named are ever removed here
STALE_SECONDS = 24 * 3600  # a clip folder this old was left by a server stopped while sending it

_jobs = threading.BoundedSemaphore(JOBS)


@dataclass
class Part:
    """One piece of a clip or reel: where it is and what its title says."""

    media: Path
    start: float
    end: float
    video: bool  # the recording has a picture
    title: str


def title_of(speaker: str, interview: str, start: float) -> str:
    """The title a clip opens with. The names may come from someone else's file: one line, no
    control characters."""
    who = f"{typed_line(speaker)} · " if typed_line(speaker) else ""
    return f"{who}{typed_line(interview)} · {format_clock(start)}"


def _ffmpeg() -> str:
    found = shutil.which("ffmpeg")
    if not found:
        raise IgotError("Clips need ffmpeg, which is not installed.", "Install it (e.g. apt install ffmpeg, brew install ffmpeg).")
    return found


def _encode(part: Part, out: Path, work: Path, titled: bool = True) -> None:
    """One part as an MP4 of the same shape as every other (size, rate, codecs), so parts join.
    `out` is in `work`, where ffmpeg runs."""
    start = max(0.0, part.start - PAD)
    length = part.end + PAD - start
    w, h = SIZE
    typed = typed_line(part.title)
    # The title is read from a file, not written into the filter (where : ' \ , and ; mean
    # something); the file is named relative to `work`, so no folder name reaches the filter either.
    text = f"{out.stem}.txt"
    (work / text).write_text(typed, encoding="utf-8")
    fit = (f"scale={w}:{h}:force_original_aspect_ratio=decrease,pad={w}:{h}:(ow-iw)/2:(oh-ih)/2,fps={FPS},format=yuv420p")
    # Over a picture, the title shows for its first seconds; over the plain background, all along.
    when = f":enable='lt(t,{TITLE_SECONDS})'" if part.video else ""
    # expansion=none: drawtext reads %{...} in the text as a function, so "20% off" drew no title at all.
    title = (f",drawtext=textfile={text}:expansion=none:fontcolor=white:fontsize=34:box=1:boxcolor=black@0.55:"
             f"boxborderw=14:x=(w-text_w)/2:y=h-text_h-48{when}") if titled else ""
    # "file:", the whitelists and the demuxer ffprobe found (igot.media.audio.input_args): a
    # recording's name is never read as another protocol (http:, concat:), nor its text as a playlist.
    media = audio.input_args(Path(part.media).absolute())
    if part.video:
        inputs = ["-ss", f"{start:.3f}", "-t", f"{length:.3f}", *media]
        picture = f"[0:v]{fit}{title}[v]"
        sound = "0:a?"
    else:
        inputs = ["-f", "lavfi", "-i", f"color=c={BACKGROUND}:s={w}x{h}:r={FPS}",
                  "-ss", f"{start:.3f}", "-t", f"{length:.3f}", *media]
        picture = f"[0:v]format=yuv420p{title}[v]"
        sound = "1:a"
    command = [_ffmpeg(), "-v", "error", "-y", *inputs, "-filter_complex", picture, "-map", "[v]", "-map", sound,
               "-t", f"{length:.3f}", "-c:v", "libx264", "-preset", "veryfast", "-crf", "26",
               "-c:a", "aac", "-b:a", "128k", "-ar", "48000", "-ac", "2", "-shortest",
               "-map_metadata", "-1", "-map_chapters", "-1", "-metadata", f"title={typed}", "-movflags", "+faststart",
               out.name]
    done = subprocess.run(command, capture_output=True, text=True, cwd=work)
    if done.returncode != 0:
        if titled and "drawtext" in done.stderr:  # an ffmpeg built without its text filter: the file's title only
            return _encode(part, out, work, titled=False)
        raise IgotError(f"ffmpeg could not cut the clip from {part.media.name}: {done.stderr.strip()[-300:]}",
                        "Check that the recording plays, then try again.")


def made_clip(parts: Sequence[Part], title: str = "") -> Path:
    """The parts, each titled, one after the other, as one MP4 in a new temp folder of its own
    (`title`: the reel's, in the file; else the first part's). The caller sends the file, then
    calls remove_clip; when making it fails, the folder is removed before the error is raised.
    Waits while JOBS clips are being made."""
    if not parts:
        raise IgotError("No highlight to make a clip of has its recording on this computer.",
                        "Clips are cut from local recordings (a file, an upload or a Drive file), not from YouTube or Vimeo.")
    with _jobs:
        _remove_stale()
        work = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
        try:
            return _join(parts, work, title)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise


def remove_clip(clip: Path) -> None:
    """A clip from made_clip removed, with its temp folder (a path in any other folder, or a link
    so named, is left alone)."""
    folder = Path(clip).parent
    if folder.name.startswith(FOLDER_PREFIX) and folder.parent == Path(tempfile.gettempdir()):
        remove_tree(folder, folder.parent)


def _join(parts: Sequence[Part], work: Path, title: str) -> Path:
    pieces = []
    for i, part in enumerate(parts):
        piece = work / f"part{i:04d}.mp4"
        _encode(part, piece, work)
        pieces.append(piece)
    joined = work / "clip.mp4"
    if len(pieces) == 1:
        pieces[0].replace(joined)
        return joined
    listing = work / "parts.txt"
    listing.write_text("".join(f"file '{p.name}'\n" for p in pieces), encoding="utf-8")
    done = subprocess.run([_ffmpeg(), "-v", "error", "-y", "-f", "concat", "-safe", "0", "-i", listing.name,
                           "-c", "copy", "-metadata", f"title={typed_line(title) or typed_line(parts[0].title)}",
                           "-movflags", "+faststart", joined.name], capture_output=True, text=True, cwd=work)
    if done.returncode != 0:
        raise IgotError(f"ffmpeg could not join the clips: {done.stderr.strip()[-300:]}", "Try again with fewer highlights.")
    for piece in pieces:  # the reel alone stays while it is sent
        piece.unlink(missing_ok=True)
    return joined


def _remove_stale() -> None:
    """Clip folders left by a server stopped while sending one (its removal never ran), removed."""
    now = time.time()
    temp = Path(tempfile.gettempdir())
    for folder in temp.glob(f"{FOLDER_PREFIX}*"):
        try:
            # Its own time, not that of a folder a link so named leads to; a link is never followed.
            if now - folder.stat(follow_symlinks=False).st_mtime > STALE_SECONDS:
                remove_tree(folder, temp)
        except OSError:  # another user's, or gone meanwhile
            continue


# --- what to cut, from the library -----------------------------------------------------------------
def highlight_parts(lib: Library, stem: str, highlight_id: str) -> list[Part]:
    """The one part of a highlight's clip."""
    t = lib.open(stem).transcript
    h = highlights.find(t, highlight_id)
    media = media_file(t, lib.folder)
    if media is None:
        return []
    speaker = t.highlight_speaker(h)
    who = t.speaker_name(speaker) if (t.speakers or speaker) else ""
    return [Part(media, h.start, h.end, is_video(media), title_of(who, clean_text(t.source.title) or stem, h.start))]


def tag_parts(lib: Library, tag: str) -> list[Part]:
    """The parts of a tag's reel: its quotes whose recording is on this computer, in the tag page's order."""
    parts = []
    media: dict[str, object] = {}
    for q in tag_quotes(lib.listing()[0], tag):
        if q.stem not in media:
            media[q.stem] = media_file(lib.open(q.stem).transcript, lib.folder)
        found = media[q.stem]
        if isinstance(found, Path):
            parts.append(Part(found, q.start, q.end, is_video(found), title_of(q.speaker, q.interview, q.start)))
    return parts


# --- kept clips: a shared link's, made once -----------------------------------------------------------
KEPT = "share-clips"  # LIB/.igot/share-clips: each link's clip and still, named by the link's public id (never its key)
STILL_WIDTH = 1200  # what chat tools show best (1200 x 630 and the like)
_making: dict[str, threading.Lock] = {}
_making_guard = threading.Lock()


def kept_folder(folder: Path) -> Path:
    """LIB/.igot/share-clips, made when missing, reached through no link."""
    return own_folder(Path(folder) / STATE / KEPT, Path(folder))


def fingerprint(parts: Sequence[Part], extra: str = "") -> str:
    """What a clip shows (each recording as it is now, the times, the titles): a kept file made
    from another is made again."""
    seen = []
    for p in parts:
        st = os.stat(p.media)
        seen.append([str(p.media), st.st_size, st.st_mtime_ns, round(p.start, 3), round(p.end, 3), p.video, p.title])
    return hashlib.sha256(json.dumps([seen, extra]).encode()).hexdigest()[:20]


def _one_at_a_time(name: str) -> threading.Lock:
    with _making_guard:
        return _making.setdefault(name, threading.Lock())


def _kept(folder: Path, name: str) -> Path | None:
    """The kept file `name`, when it is a plain file there (a link or anything else is not ours)."""
    path = kept_folder(folder) / name
    try:
        return path if stat.S_ISREG(os.lstat(path).st_mode) else None
    except OSError:
        return None


def _keep(made: Path, folder: Path, name: str, owner: str) -> Path:
    """`made` copied into the kept folder as `name` whole or not at all (a temp file beside it, on
    disk, renamed into place; never through a link), and the files kept before for `owner` removed."""
    where = kept_folder(folder)
    temp = where / f".{name}.{os.urandom(4).hex()}.tmp"
    handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o600)
    try:
        with os.fdopen(handle, "wb") as out, open(made, "rb") as source:
            shutil.copyfileobj(source, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, where / name)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    forget_kept(folder, owner, keep=name)
    return where / name


def forget_kept(folder: Path, owner: str, keep: str = "") -> None:
    """The files kept for `owner` ("ID-clip0"; a link's public id alone: all of its files) removed, but `keep`."""
    where = Path(folder) / STATE / KEPT
    if not where.is_dir() or where.is_symlink():
        return
    for path in where.glob(f"{owner}-*"):
        if path.name != keep and not path.is_symlink() and path.is_file():
            path.unlink(missing_ok=True)


def kept_clip(folder: Path, owner: str, parts: Sequence[Part], title: str = "") -> Path:
    """The clip of `parts`, made once and kept in LIB/.igot/share-clips as `owner`-... (a link's public
    id and which of its clips: "ID-clip0") until what it shows changes."""
    if not parts:
        raise IgotError("No highlight to make a clip of has its recording on this computer.",
                        "Clips are cut from local recordings (a file, an upload or a Drive file), not from YouTube or Vimeo.")
    name = f"{owner}-{fingerprint(parts, title)}.mp4"
    with _one_at_a_time(name):
        found = _kept(folder, name)
        if found is not None:
            return found
        made = made_clip(parts, title)
        try:
            return _keep(made, folder, name, owner)
        finally:
            remove_clip(made)


def kept_still(folder: Path, owner: str, part: Part) -> Path:
    """A frame of a video recording at the middle of `part`, as a JPEG STILL_WIDTH wide, kept like a clip."""
    if not part.video:
        raise IgotError("A recording with no picture has no still.", "")
    name = f"{owner}-{fingerprint([part], 'still')}.jpg"
    with _one_at_a_time(name):
        found = _kept(folder, name)
        if found is not None:
            return found
        with _jobs:
            work = Path(tempfile.mkdtemp(prefix=FOLDER_PREFIX))
            try:
                at = max(0.0, (part.start + part.end) / 2)
                done = subprocess.run([_ffmpeg(), "-v", "error", "-y", "-ss", f"{at:.3f}", *audio.input_args(Path(part.media).absolute()),
                                       "-frames:v", "1", "-vf", f"scale={STILL_WIDTH}:-2", "-map_metadata", "-1", "-q:v", "4",
                                       "still.jpg"], capture_output=True, text=True, cwd=work)
                if done.returncode != 0 or not (work / "still.jpg").is_file():
                    raise IgotError(f"ffmpeg could not take a still from {part.media.name}: {done.stderr.strip()[-300:]}",
                                    "Check that the recording plays.")
                return _keep(work / "still.jpg", folder, name, owner)
            finally:
                shutil.rmtree(work, ignore_errors=True)
