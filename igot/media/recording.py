"""Is this file an interview's recording? What the workspace asks before it plays an interview's
`source.path`: an interview JSON may come from anyone (a shared folder), and its path may name any
file on the computer, so only an audio or video file as long as the interview is ever sent.

A run stores the recording's length as `Transcript.duration`: the seconds of the 16 kHz WAV that
ffmpeg decoded from its audio (igot.media.audio.convert_to_wav), which ffprobe tells again from the
file's header within a fraction of a second.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from functools import lru_cache
from pathlib import Path
from stat import S_ISREG
from typing import Optional

# Recordings by their names: what the workspace plays in its own player (video or audio), and what
# `igot run` takes from a folder (those, and other formats ffmpeg reads that a browser does not play).
VIDEO_SUFFIXES = frozenset({".mp4", ".m4v", ".webm", ".mov", ".mkv", ".ogv"})
AUDIO_SUFFIXES = frozenset({".mp3", ".m4a", ".aac", ".wav", ".flac", ".ogg", ".oga", ".opus", ".weba"})
RECORDING_SUFFIXES = VIDEO_SUFFIXES | AUDIO_SUFFIXES | {".avi", ".wma", ".amr", ".3gp"}


PROBE_TIMEOUT = 15.0  # seconds for ffprobe: it reads headers only, but a synced Drive file may come slowly
# How far the file's length may be from the transcript's: ffprobe reads a header, the run decoded
# the audio; a video's own length may pass its sound's, and an MP3's is estimated from its bit rate.
LENGTH_SLACK_SECONDS = 2.0
LENGTH_SLACK_SHARE = 0.02

# The first bytes of the containers a recording comes in: (offset, bytes). Anything else (a text,
# a key, a database) is refused before ffprobe is asked.
_MAGIC = [
    (0, b"RIFF"), (0, b"RF64"), (0, b"BW64"),  # WAV (and its >4 GB forms), AVI
    (0, b"fLaC"), (0, b"OggS"),  # FLAC; Ogg: Vorbis, Opus, Theora
    (0, b"ID3"),  # MP3 (or AAC) with its tag first
    (0, b"\x1a\x45\xdf\xa3"),  # Matroska, WebM
    (4, b"ftyp"), (4, b"moov"), (4, b"mdat"), (4, b"wide"), (4, b"free"),  # MP4, M4A, MOV, 3GP (old MOVs lack ftyp)
    (0, b"FORM"),  # AIFF
    (0, b"\x30\x26\xb2\x75\x8e\x66\xcf\x11"),  # ASF: WMA, WMV
    (0, b"\x00\x00\x01\xba"), (0, b"\x00\x00\x01\xb3"),  # MPEG program stream, MPEG video
    (0, b"#!AMR"), (0, b"caff"), (0, b"FLV"), (0, b".snd"), (0, b"wvpk"), (0, b"MAC "), (0, b"ADIF"),
]
_HEAD = 512  # enough for two packets of a transport stream

# The ffmpeg demuxers a recording may be read with (its -format_whitelist, and the one forced with
# -f once ffprobe named it): the containers of _MAGIC, nothing else. Left out on purpose: every
# demuxer that opens other files or addresses by what the file says (hls, dash, concat, the
# webm_dash_manifest, image sequences), that reads a picture, subtitles or text as a "recording"
# (image2, *_pipe, srt, tty...), or that makes sound up (lavfi). A playlist named .mp3 is then
# never read as a playlist, by ffprobe or by ffmpeg, so no other recording can reach the library
# through it. "mov" and "matroska" are ffmpeg's names of MP4/M4A/3GP/MOV and MKV/WebM; "mpeg" is a
# program stream (.mpg, .vob), "mpegts" a camera's .mts; "w64" Sony's Wave64; "ape" Monkey's Audio;
# "au" Sun's .snd. (mov reads the files its references name only with enable_drefs, off by default.)
DEMUXERS = ("wav", "w64", "flac", "mp3", "aac", "ogg", "matroska", "webm", "mov", "mp4", "m4a", "3gp", "3g2",
            "aiff", "asf", "avi", "amr", "caf", "flv", "au", "wv", "ape", "mpeg", "mpegts")
FORMAT_WHITELIST = ",".join(DEMUXERS)


def is_recording(path: Path, seconds: float) -> bool:
    """True only when `path` is a plain file that begins as an audio or video container does,
    ffprobe finds sound in it, and (when `seconds` > 0) its length is within 2 s or 2 % of
    `seconds`: the interview's duration. ffprobe missing, failing or slower than PROBE_TIMEOUT:
    False. Its answer is kept by the file's path, size and time, so asking again (every request
    of a player) costs one stat."""
    try:
        stat = os.stat(path)
    except (OSError, ValueError):  # ValueError: a NUL in the path
        return False
    if not S_ISREG(stat.st_mode):  # a folder, a pipe (reading it would wait), a device
        return False
    try:
        lengths = _lengths(os.fspath(path), stat.st_size, stat.st_mtime_ns)
    except _NoAnswer:
        return False
    if lengths is None:
        return False
    if not (isinstance(seconds, (int, float)) and math.isfinite(seconds) and seconds > 0):
        return True  # length unknown (an old transcript): the container and its sound are all there is to check
    slack = max(LENGTH_SLACK_SECONDS, LENGTH_SLACK_SHARE * seconds)
    return any(abs(length - seconds) <= slack for length in lengths)


def media_container(head: bytes) -> bool:
    """Whether `head`, a file's first bytes, begins as an audio or video container does."""
    if any(head[at:at + len(magic)] == magic for at, magic in _MAGIC):
        return True
    if len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0:  # MPEG audio frame sync: MP3, AAC (ADTS)
        return True
    # An MPEG transport stream (.ts, .mts): packets of 188 bytes, each starting with 0x47 ("G").
    return len(head) > 188 and head[0] == head[188] == 0x47


class _NoAnswer(Exception):
    """ffprobe did not answer (missing, or too slow): not kept, so the next call asks again."""


@lru_cache(maxsize=512)
def _lengths(path: str, size: int, mtime_ns: int) -> Optional[tuple[float, ...]]:
    """The lengths ffprobe gives the file (its container's and each audio track's), or None when it
    is not a recording with sound. `size` and `mtime_ns` are the key: a changed file is asked again."""
    try:
        with open(path, "rb") as f:
            head = f.read(_HEAD)
    except OSError:
        return None
    if not media_container(head):
        return None
    try:
        result = subprocess.run(
            # "file:" and the whitelists: a name like "http:x" or a playlist is never followed elsewhere.
            ["ffprobe", "-v", "error", "-protocol_whitelist", "file", "-format_whitelist", FORMAT_WHITELIST, "-show_entries",
             "format=duration:stream=codec_type,duration", "-of", "json", "file:" + path],
            capture_output=True, stdin=subprocess.DEVNULL, timeout=PROBE_TIMEOUT,
        )
    except (OSError, subprocess.TimeoutExpired):  # not installed, or stuck on this file
        raise _NoAnswer() from None
    if result.returncode != 0:
        return None
    try:
        found = json.loads(result.stdout)
    except ValueError:
        return None
    streams = [s for s in found.get("streams", []) if isinstance(s, dict) and s.get("codec_type") == "audio"]
    if not streams:
        return None  # no sound: nothing a run could have transcribed
    said = [found.get("format", {}).get("duration")] + [s.get("duration") for s in streams]
    lengths = [probed_seconds(x) for x in said]
    return tuple(x for x in lengths if x is not None)


def probed_seconds(text: object) -> Optional[float]:
    """A length ffprobe printed, in seconds; None when it is not one ("N/A", negative, not finite)."""
    try:
        value = float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError):  # "N/A": a stream without a known length
        return None
    return value if math.isfinite(value) and value >= 0 else None
