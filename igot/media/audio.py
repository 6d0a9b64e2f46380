"""Audio through ffmpeg: any recording in, 16 kHz mono speech audio out.

Speech models want 16 kHz mono, so every stage works from one WAV file in that form.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import wave
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from igot.errors import IgotError
from igot.media.recording import FORMAT_WHITELIST, probed_seconds
from igot.runtime.progress import Bar, Progress

SAMPLE_RATE = 16000
WAV_BYTES_A_SECOND = SAMPLE_RATE * 2  # what convert_to_wav writes: 16 kHz mono, 16 bits a sample
# Room kept beyond the WAV itself: the run's other files (transcript, models' caches) are small
# next to it, and a disk filled to its last byte fails everything else on the computer too.
SPACE_MARGIN = 256 * 2**20
# The longest recording decoded unless the run says otherwise (RunOptions.max_hours, --max-hours):
# a long day of interviews, and still only ~0.9 GB of WAV. Past it, a tiny file of silence (10 h
# of FLAC is under 7 MB) would become gigabytes of WAV and hours of work before anyone notices.
MAX_HOURS = 8.0
POLL_SECONDS = 0.5  # how often a conversion tells its progress hook, so Cancel stops it this soon
# ffprobe reads headers only, in well under a second; a file still coming from a synced drive may
# keep it waiting, and a run waits that long for it (the workspace's player waits less: recording.py).
PROBE_TIMEOUT = 120.0

_INSTALL_FFMPEG = "Install ffmpeg (apt-get install ffmpeg, or brew install ffmpeg on macOS) and run again."
# What ffmpeg says of a write that found the disk full (ENOSPC, its C-library message).
_DISK_FULL = b"No space left on device"


@dataclass(frozen=True)
class Probed:
    """What ffprobe found in a recording, read with the allowed demuxers only."""

    demuxer: str  # the name ffmpeg is then forced to read it with (-f), e.g. "mov" for an MP4
    seconds: Optional[float]  # its length by its header; None when the header does not say
    audio_tracks: int


def probe(media: Path) -> Probed:
    """Look at `media` before decoding it: a plain file, in a real audio or video container
    (igot.media.recording.DEMUXERS). A playlist, a list of files to join, a picture, subtitles or
    text is refused by name, before ffmpeg reads anything it points to."""
    media = Path(media)
    _check_exists(media)
    try:
        result = _run(["ffprobe", "-v", "error", *_GUARD, "-show_entries",
                       "format=format_name,duration:stream=codec_type,duration", "-of", "json", _file_arg(media)],
                      media, timeout=PROBE_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise IgotError(f"{media} could not be read within {PROBE_TIMEOUT:.0f} s (ffprobe got no answer from it).",
                        "If it is on a synced drive, wait until it is downloaded, then run again.") from None
    if result.returncode != 0:
        refused = re.search(rb"\[(\w+) @ [^\]]*\] Format not on whitelist", result.stderr)
        if refused:
            name = refused.group(1).decode()
            why = " (it names other files, which iGot would then read)" if name in _LISTS else ""
            raise IgotError(f"{media} is not a recording: it is {_what(name)}, which iGot does not read{why}.",
                            "Give the audio or video file itself (mp3, m4a, wav, flac, ogg, mp4, mov, webm, mkv...).")
        raise _unreadable(media, result.stderr, probed=None)
    try:
        found = json.loads(result.stdout)
        demuxer = str(found["format"]["format_name"]).split(",")[0]
    except (ValueError, KeyError, TypeError):
        raise _unreadable(media, b"", probed=None) from None
    streams = [s for s in found.get("streams", []) if isinstance(s, dict)]
    audio = [s for s in streams if s.get("codec_type") == "audio"]
    said = [found["format"].get("duration")] + [s.get("duration") for s in audio]
    lengths = [x for x in map(probed_seconds, said) if x is not None]
    return Probed(demuxer, max(lengths) if lengths else None, len(audio))


def check_length(media: Path, seconds: Optional[float], max_hours: float = MAX_HOURS) -> None:
    """A recording longer than `max_hours` is refused, with its length, the limit and how to raise it."""
    if seconds is not None and seconds > max_hours * 3600:
        raise IgotError(f"{media} is {_hours(seconds)} long, longer than the {_hours(max_hours * 3600)} iGot decodes "
                        "at most.", f"Cut it into shorter parts, or raise the limit: --max-hours "
                        f"{int(seconds / 3600) + 1} (igot run, igot serve; RunOptions.max_hours in Python).")


def check_free_space(folder: Path, need: int, what: str) -> None:
    """Refuse before writing `need` bytes (and SPACE_MARGIN more) into `folder` when its disk has
    less free: said now, not as a broken file half way through. `what`: what would be written."""
    folder = Path(folder)
    while not folder.exists() and folder != folder.parent:  # a folder the run will make: its disk is its parent's
        folder = folder.parent
    free = shutil.disk_usage(folder).free
    if need + SPACE_MARGIN > free:
        raise IgotError(f"Not enough free space on {_disk(folder)} for {what} (in {folder}): need "
                        f"{_size(need + SPACE_MARGIN)}, {_size(free)} free.",
                        "Free some space on that disk (or use a library folder on a larger one), then try again.")


def disk_full(folder: Path, media: Path) -> IgotError:
    """A write that found the disk full: the disk's fault, said so, not the recording's."""
    return IgotError(f"The disk {_disk(Path(folder))} is full: the audio of {Path(media).name} could not be written "
                     f"in {folder} (no space left on device); the recording itself is not at fault.",
                     "Free some space on that disk, then run again.")


def convert_to_wav(media: Path, out_wav: Path, progress: Progress = False, max_hours: float = MAX_HOURS) -> float:
    """Decode the audio of `media` to a 16 kHz mono 16-bit WAV file; return its duration in seconds.

    Writes next to `out_wav` first and renames, so `out_wav` is either the whole result or
    left exactly as it was. `media` is probed first (a real audio/video container, sound in it, at
    most `max_hours` long, room on the disk for its WAV); `progress` is told the seconds decoded
    every POLL_SECONDS, and a hook that raises stops ffmpeg there.
    """
    media, out_wav = Path(media), Path(out_wav)
    found = probe(media)
    if found.audio_tracks == 0:
        raise _no_audio(media)
    check_length(media, found.seconds, max_hours)
    out_wav.parent.mkdir(parents=True, exist_ok=True)
    if found.seconds is not None:
        check_free_space(out_wav.parent, int(found.seconds * WAV_BYTES_A_SECOND), f"the audio of {media.name}")
    part = out_wav.with_name(out_wav.name + ".part")
    limit = max_hours * 3600
    try:
        # -vn/-sn/-dn: keep the audio only, so a video is never decoded frame by frame. -t: a
        # header that lies about the length still gives no more than the limit (and a second, to
        # tell that it went past).
        code, stderr = _watched(
            ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *_input(media, found),
             "-vn", "-sn", "-dn", "-ac", "1", "-ar", str(SAMPLE_RATE), "-c:a", "pcm_s16le",
             "-t", f"{limit + 1:.3f}", "-f", "wav", _file_arg(part)],
            media, found.seconds, progress,
        )
        if code != 0:
            if _DISK_FULL in stderr:
                raise disk_full(out_wav.parent, media)
            raise _unreadable(media, stderr, found)
        try:
            with wave.open(str(part), "rb") as w:
                duration = w.getnframes() / w.getframerate()
        except (wave.Error, EOFError):
            # ffmpeg ended well, yet wrote no whole WAV: its last bytes are written as it closes,
            # and a full disk there is only said, not returned (ffmpeg 5.1 on a short recording).
            if _DISK_FULL in stderr or shutil.disk_usage(out_wav.parent).free < SPACE_MARGIN:
                raise disk_full(out_wav.parent, media) from None
            raise _unreadable(media, stderr, found) from None
        check_length(media, duration, max_hours)
        if duration <= 0:
            raise IgotError(
                f"{media} has an audio track but it holds no sound (0 seconds).",
                "Check that the recording plays with sound; if it does, export it again and retry.",
            )
        os.replace(part, out_wav)
        return duration
    except OSError as err:
        if err.errno == errno.ENOSPC:
            raise disk_full(out_wav.parent, media) from None
        raise
    finally:
        part.unlink(missing_ok=True)


def load_audio(path: Path, max_hours: float = MAX_HOURS) -> np.ndarray:
    """The audio of `path` as float32 samples in [-1, 1], mono, 16 kHz."""
    path = Path(path)
    _check_exists(path)
    try:
        with wave.open(str(path), "rb") as w:
            if (w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getcomptype()) == (SAMPLE_RATE, 1, 2, "NONE"):
                return _to_float(w.readframes(w.getnframes()))
    except (wave.Error, EOFError):
        pass  # not the plain WAV we write: let ffmpeg decode it
    found = probe(path)
    if found.audio_tracks == 0:
        raise _no_audio(path)
    check_length(path, found.seconds, max_hours)
    result = _run(
        ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", *_input(path, found),
         "-vn", "-sn", "-dn", "-ac", "1", "-ar", str(SAMPLE_RATE), "-t", f"{max_hours * 3600:.3f}",
         "-f", "s16le", "-c:a", "pcm_s16le", "pipe:1"],
        path,
    )
    if result.returncode != 0:
        raise _unreadable(path, result.stderr, found)
    return _to_float(result.stdout)


# Long recordings go through the stages in pieces of this length, so memory stays the same
# whether the interview lasts ten minutes or three hours.
PIECE_SECONDS = 600.0


def wav_duration(path: Path) -> float:
    """Length in seconds of a WAV file (the 16 kHz one every stage reads), without reading it."""
    with wave.open(str(path), "rb") as w:
        return w.getnframes() / w.getframerate()


def is_speech_wav(path: Path) -> bool:
    """True for the 16 kHz mono 16-bit WAV that convert_to_wav writes (read piece by piece)."""
    try:
        with wave.open(str(path), "rb") as w:
            return (w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getcomptype()) == (SAMPLE_RATE, 1, 2, "NONE")
    except (OSError, wave.Error, EOFError):
        return False


def read_window(path: Path, start: float, end: float) -> np.ndarray:
    """Samples [start, end) seconds of a 16 kHz mono 16-bit WAV as float32, read from disk."""
    if not is_speech_wav(path):
        raise ValueError(f"{path} is not a 16 kHz mono 16-bit WAV; convert it with convert_to_wav first")
    with wave.open(str(path), "rb") as w:
        first = min(max(0, int(round(start * SAMPLE_RATE))), w.getnframes())
        last = min(max(first, int(round(end * SAMPLE_RATE))), w.getnframes())
        w.setpos(first)
        return _to_float(w.readframes(last - first))


def pieces(path: Path, length: Optional[float] = None, search: float = 30.0) -> list[tuple[float, float]]:
    """Cut a long WAV into pieces of about `length` seconds (PIECE_SECONDS), each cut in the
    quietest 100 ms of the last `search` seconds before it, so that no word is cut in two."""
    length = length or PIECE_SECONDS
    search = min(search, length / 2)
    duration = wav_duration(path)
    bounds = [0.0]
    while duration - bounds[-1] > length + search:
        target = bounds[-1] + length
        quiet = read_window(path, target - search, target)
        frame = SAMPLE_RATE // 10
        energy = np.square(quiet[: len(quiet) // frame * frame].reshape(-1, frame)).mean(axis=1)
        bounds.append(round(target - search + (int(np.argmin(energy)) + 0.5) * 0.1, 3))
    return list(zip(bounds, bounds[1:] + [duration]))


def media_duration(path: Path) -> float | None:
    """Duration in seconds as ffprobe reports it, or None when it cannot tell (or the file is no
    recording iGot reads: see `probe`)."""
    try:
        return probe(Path(path)).seconds
    except IgotError:
        return None


def _to_float(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0


def _file_arg(path: Path) -> str:
    # "file:" stops ffmpeg reading a name like "http:x.mp4" or "concat:a|b" as a protocol.
    return "file:" + str(path)


# Before every input of ffmpeg and ffprobe: read files only (no http:, no pipes), and only with the
# demuxers of real recordings (igot.media.recording.DEMUXERS): a playlist or a concat list naming
# another file is refused by its own demuxer's name, whatever the file is called.
_GUARD = ["-protocol_whitelist", "file", "-format_whitelist", FORMAT_WHITELIST]


def _input(media: Path, found: Probed) -> list[str]:
    """ffmpeg's input arguments for `media`, read with the demuxer ffprobe found (forced, so the file
    cannot be read as anything else between the look and the decode)."""
    return [*_GUARD, "-f", found.demuxer, "-i", _file_arg(media)]


def input_args(media: Path) -> list[str]:
    """The guarded input arguments (`-protocol_whitelist file -format_whitelist … -f DEMUXER -i
    file:PATH`) for any ffmpeg that reads a recording; IgotError when it is none (see `probe`)."""
    return _input(Path(media), probe(media))


def _check_exists(media: Path) -> None:
    if not media.exists():
        raise IgotError(f"{media}: no such file.", "Check the path and run again.")
    if media.is_dir():
        raise IgotError(f"{media} is a folder, not a recording.", "Pass the path of an audio or video file.")
    if not stat.S_ISREG(media.stat().st_mode):  # a pipe or a device (/dev/zero) would be read for ever
        raise IgotError(f"{media} is not a file but a device or a pipe.", "Pass the path of an audio or video file.")


def _run(args: list[str], media: Path, timeout: Optional[float] = None) -> subprocess.CompletedProcess[bytes]:
    """Run ffmpeg/ffprobe with its output captured, so nothing reaches the terminal on success."""
    try:
        return subprocess.run(args, capture_output=True, stdin=subprocess.DEVNULL, timeout=timeout)
    except FileNotFoundError:
        raise IgotError(f"{args[0]} is not installed, so iGot cannot read {media}.", _INSTALL_FFMPEG) from None


def _watched(args: list[str], media: Path, total: Optional[float], progress: Progress) -> tuple[int, bytes]:
    """Run ffmpeg as `_run` does, telling `progress` the seconds it has decoded (from its -progress
    lines) every POLL_SECONDS, whether or not it moved: a hook that raises (the workspace's Cancel)
    kills ffmpeg at once and the exception goes on. Its return code and what it said on stderr."""
    with tempfile.TemporaryFile() as said:  # stderr in a file: a pipe not read could fill and stall ffmpeg
        try:
            proc = subprocess.Popen([args[0], "-progress", "pipe:1", "-nostats", *args[1:]], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=said)
        except FileNotFoundError:
            raise IgotError(f"{args[0]} is not installed, so iGot cannot read {media}.", _INSTALL_FFMPEG) from None
        decoded = [0.0]

        def read() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                key, _, value = line.partition(b"=")
                if key == b"out_time_us" and value.strip().lstrip(b"-").isdigit():
                    decoded[0] = max(int(value) / 1e6, 0.0)

        reader = threading.Thread(target=read, daemon=True, name="ffmpeg-progress")
        reader.start()
        try:
            with Bar(progress, round(total, 1) if total else 0, "Converting", unit="s") as bar:
                while True:
                    try:
                        proc.wait(timeout=POLL_SECONDS)
                        break
                    except subprocess.TimeoutExpired:
                        bar.n = round(min(decoded[0], total) if total else decoded[0], 1)  # tells the hook, moved or not
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            reader.join(timeout=5)
        said.seek(0)
        return proc.returncode, said.read()


def _no_audio(media: Path) -> IgotError:
    return IgotError(
        f"{media} has no audio track, so there is nothing to transcribe.",
        "Check that this is the right file; if the recording has sound when played, export it again with its audio.",
    )


def _unreadable(media: Path, stderr: bytes, probed: Optional[Probed]) -> IgotError:
    """Explain a failed look or decode: a file without sound needs a different fix than a broken one."""
    if probed is not None and probed.audio_tracks == 0:
        return _no_audio(media)
    # ffmpeg's last line says why, e.g. "Invalid data found when processing input".
    lines = stderr.decode("utf-8", "replace").replace(_file_arg(media) + ": ", "").strip().splitlines()
    detail = f" (ffmpeg: {lines[-1].strip()[:200]})" if lines else ""
    return IgotError(
        f"Could not read {media}: it is damaged or not an audio/video file{detail}.",
        "Check that it plays in a media player; if not, download or export it again.",
    )


# What a refused demuxer reads, as a person would name the file.
_KINDS = {"hls": "an HLS playlist", "dash": "a DASH playlist", "webm_dash_manifest": "a DASH manifest",
          "concat": "a list of files to join (ffconcat)", "tty": "text", "lavfi": "a filter graph"}


_LISTS = ("hls", "dash", "webm_dash_manifest", "concat")  # what reads the files (or addresses) written in it


def _what(demuxer: str) -> str:
    if demuxer in _KINDS:
        return _KINDS[demuxer]
    if demuxer.startswith("image") or demuxer.endswith("_pipe"):
        return "a picture"
    if demuxer in ("srt", "ass", "webvtt", "subviewer", "subviewer1", "microdvd", "sami", "stl", "jacosub", "mpl2",
                   "pjs", "realtext", "vplayer", "lrc"):
        return "subtitles"
    return f"a '{demuxer}' file"


def _hours(seconds: float) -> str:
    """A length as a person reads it: 9 h 00 min, 12 min 30 s, 18 s."""
    if seconds >= 3600:
        hours, minutes = divmod(int(round(seconds / 60)), 60)
        return f"{hours} h {minutes:02d} min"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"


def _size(n: float) -> str:
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def _disk(folder: Path) -> str:
    """The disk a folder is on, by where it is mounted (what df shows)."""
    path = Path(os.path.abspath(folder))
    while not os.path.ismount(path) and path != path.parent:
        path = path.parent
    return str(path)
