"""Audio through ffmpeg: any recording in, 16 kHz mono speech audio out.

Speech models want 16 kHz mono, so every stage works from one WAV file in that form.
"""

from __future__ import annotations

import os
import subprocess
import wave
from pathlib import Path
from typing import Optional

import numpy as np

from igot.errors import IgotError

SAMPLE_RATE = 16000

_INSTALL_FFMPEG = "Install ffmpeg (apt-get install ffmpeg, or brew install ffmpeg on macOS) and run again."


def convert_to_wav(media: Path, out_wav: Path) -> float:
    """Decode the audio of `media` to a 16 kHz mono 16-bit WAV file; return its duration in seconds.

    Writes next to `out_wav` first and renames, so `out_wav` is either the whole result or
    left exactly as it was.
    """
    media, out_wav = Path(media), Path(out_wav)
    _check_exists(media)
    out_wav.parent.mkdir(parents=True, exist_ok=True)
    part = out_wav.with_name(out_wav.name + ".part")
    try:
        # -vn/-sn/-dn: keep the audio only, so a video is never decoded frame by frame.
        result = _run(
            ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", "-i", _file_arg(media),
             "-vn", "-sn", "-dn", "-ac", "1", "-ar", str(SAMPLE_RATE), "-c:a", "pcm_s16le",
             "-f", "wav", _file_arg(part)],
            media,
        )
        if result.returncode != 0:
            raise _unreadable(media, result.stderr)
        with wave.open(str(part), "rb") as w:
            duration = w.getnframes() / w.getframerate()
        if duration <= 0:
            raise IgotError(
                f"{media} has an audio track but it holds no sound (0 seconds).",
                "Check that the recording plays with sound; if it does, export it again and retry.",
            )
        os.replace(part, out_wav)
        return duration
    finally:
        part.unlink(missing_ok=True)


def load_audio(path: Path) -> np.ndarray:
    """The audio of `path` as float32 samples in [-1, 1], mono, 16 kHz."""
    path = Path(path)
    _check_exists(path)
    try:
        with wave.open(str(path), "rb") as w:
            if (w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getcomptype()) == (SAMPLE_RATE, 1, 2, "NONE"):
                return _to_float(w.readframes(w.getnframes()))
    except (wave.Error, EOFError):
        pass  # not the plain WAV we write: let ffmpeg decode it
    result = _run(
        ["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-i", _file_arg(path),
         "-vn", "-sn", "-dn", "-ac", "1", "-ar", str(SAMPLE_RATE), "-f", "s16le", "-c:a", "pcm_s16le", "pipe:1"],
        path,
    )
    if result.returncode != 0:
        raise _unreadable(path, result.stderr)
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
    """Duration in seconds as ffprobe reports it, or None when it cannot tell."""
    try:
        result = subprocess.run(
            ["ffprobe", "-v", "error", "-show_entries", "format=duration",
             "-of", "default=noprint_wrappers=1:nokey=1", _file_arg(Path(path))],
            capture_output=True, text=True,
        )
    except FileNotFoundError:
        return None
    try:
        return float(result.stdout.strip()) if result.returncode == 0 else None
    except ValueError:  # "N/A" for streams without a known length
        return None


def _to_float(pcm: bytes) -> np.ndarray:
    return np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0


def _file_arg(path: Path) -> str:
    # "file:" stops ffmpeg reading a name like "http:x.mp4" or "concat:a|b" as a protocol.
    return "file:" + str(path)


def _check_exists(media: Path) -> None:
    if not media.exists():
        raise IgotError(f"{media}: no such file.", "Check the path and run again.")
    if media.is_dir():
        raise IgotError(f"{media} is a folder, not a recording.", "Pass the path of an audio or video file.")


def _run(args: list[str], media: Path) -> subprocess.CompletedProcess[bytes]:
    """Run ffmpeg/ffprobe with its output captured, so nothing reaches the terminal on success."""
    try:
        return subprocess.run(args, capture_output=True)
    except FileNotFoundError:
        raise IgotError(f"{args[0]} is not installed, so iGot cannot read {media}.", _INSTALL_FFMPEG) from None


def _audio_streams(media: Path) -> int | None:
    """How many audio tracks ffprobe finds, or None when it cannot read the file at all."""
    result = _run(
        ["ffprobe", "-v", "error", "-select_streams", "a", "-show_entries", "stream=index",
         "-of", "csv=p=0", _file_arg(media)],
        media,
    )
    if result.returncode != 0:
        return None
    return len(result.stdout.split())


def _unreadable(media: Path, stderr: bytes) -> IgotError:
    """Explain a failed decode: a file without sound needs a different fix than a broken one."""
    if _audio_streams(media) == 0:
        return IgotError(
            f"{media} has no audio track, so there is nothing to transcribe.",
            "Check that this is the right file; if the recording has sound when played, export it again with its audio.",
        )
    # ffmpeg's last line says why, e.g. "Invalid data found when processing input".
    lines = stderr.decode("utf-8", "replace").replace(_file_arg(media) + ": ", "").strip().splitlines()
    detail = f" (ffmpeg: {lines[-1].strip()[:200]})" if lines else ""
    return IgotError(
        f"Could not read {media}: it is damaged or not an audio/video file{detail}.",
        "Check that it plays in a media player; if not, download or export it again.",
    )
