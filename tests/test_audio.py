import random
import subprocess
import wave
from pathlib import Path

import numpy as np
import pytest

from igot.errors import IgotError
from igot.media.audio import SAMPLE_RATE, convert_to_wav, load_audio, media_duration


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *args], check=True)


@pytest.fixture(scope="module")
def clips(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("clips")
    clips = {name: d / name for name in ("stereo.mp3", "video.mp4", "silent_video.mp4", "corrupt.mp4")}
    # A 440 Hz tone on the left, 660 Hz on the right, at 44.1 kHz: a "real" stereo recording.
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=3:sample_rate=44100",
           "-f", "lavfi", "-i", "sine=frequency=660:duration=3:sample_rate=44100",
           "-filter_complex", "[0:a][1:a]amerge=inputs=2", "-c:a", "libmp3lame", "-b:a", "64k", str(clips["stereo.mp3"]))
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=96x64:rate=10:duration=2.5",
           "-f", "lavfi", "-i", "sine=frequency=300:duration=2.5:sample_rate=48000",
           "-c:v", "mpeg4", "-c:a", "aac", "-shortest", str(clips["video.mp4"]))
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=96x64:rate=10:duration=1", "-c:v", "mpeg4", str(clips["silent_video.mp4"]))
    clips["corrupt.mp4"].write_bytes(random.Random(7).randbytes(50_000))
    return clips


def read_wav(path: Path) -> tuple[int, int, int, float]:
    with wave.open(str(path), "rb") as w:
        return w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes() / w.getframerate()


def test_stereo_mp3_to_16k_mono_wav(clips, tmp_path):
    out = tmp_path / "audio.wav"
    duration = convert_to_wav(clips["stereo.mp3"], out)
    rate, channels, width, wav_duration = read_wav(out)
    assert (rate, channels, width) == (SAMPLE_RATE, 1, 2)
    assert duration == pytest.approx(3.0, abs=0.05)
    assert wav_duration == pytest.approx(duration)
    assert list(tmp_path.iterdir()) == [out]  # no temp file left behind


def test_video_to_wav_keeps_only_audio(clips, tmp_path):
    out = tmp_path / "deeper" / "audio.wav"  # missing folders are made
    duration = convert_to_wav(clips["video.mp4"], out)
    assert duration == pytest.approx(2.5, abs=0.05)
    assert read_wav(out)[:3] == (SAMPLE_RATE, 1, 2)


def test_success_prints_nothing(clips, tmp_path, capfd):
    convert_to_wav(clips["video.mp4"], tmp_path / "a.wav")
    assert capfd.readouterr() == ("", "")


def test_load_audio(clips, tmp_path):
    out = tmp_path / "audio.wav"
    convert_to_wav(clips["stereo.mp3"], out)
    samples = load_audio(out)
    assert samples.dtype == np.float32 and samples.ndim == 1
    assert len(samples) == pytest.approx(3 * SAMPLE_RATE, abs=0.05 * SAMPLE_RATE)
    assert 0.05 < np.abs(samples).max() <= 1.0
    # Any other file goes through ffmpeg and gives the same samples.
    decoded = load_audio(clips["stereo.mp3"])
    assert decoded.dtype == np.float32 and len(decoded) == len(samples)
    assert np.abs(decoded - samples).max() < 1e-3


def test_media_duration(clips, tmp_path):
    assert media_duration(clips["video.mp4"]) == pytest.approx(2.5, abs=0.1)
    assert media_duration(clips["corrupt.mp4"]) is None
    assert media_duration(tmp_path / "missing.mp3") is None


def test_video_without_audio(clips, tmp_path):
    with pytest.raises(IgotError, match="no audio") as error:
        convert_to_wav(clips["silent_video.mp4"], tmp_path / "a.wav")
    assert "silent_video.mp4" in str(error.value)
    with pytest.raises(IgotError, match="no audio"):
        load_audio(clips["silent_video.mp4"])


def test_corrupt_file(clips, tmp_path):
    with pytest.raises(IgotError) as error:
        convert_to_wav(clips["corrupt.mp4"], tmp_path / "a.wav")
    message = str(error.value)
    assert "corrupt.mp4" in message and "damaged" in message and "no audio" not in message
    assert "\n" not in message
    assert list(tmp_path.iterdir()) == []


def test_missing_file(tmp_path):
    with pytest.raises(IgotError, match="nope.mp3: no such file"):
        convert_to_wav(tmp_path / "nope.mp3", tmp_path / "a.wav")
    with pytest.raises(IgotError, match="nope.mp3: no such file"):
        load_audio(tmp_path / "nope.mp3")


def test_failed_conversion_keeps_existing_wav(clips, tmp_path):
    out = tmp_path / "audio.wav"
    convert_to_wav(clips["stereo.mp3"], out)
    before = out.read_bytes()
    with pytest.raises(IgotError):
        convert_to_wav(clips["corrupt.mp4"], out)
    assert out.read_bytes() == before
    assert sorted(tmp_path.iterdir()) == [out]


def test_ffmpeg_not_installed(clips, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty PATH: no ffmpeg to find
    with pytest.raises(IgotError, match="apt-get install ffmpeg") as error:
        convert_to_wav(clips["stereo.mp3"], tmp_path / "a.wav")
    assert "brew install ffmpeg" in str(error.value) and "stereo.mp3" in str(error.value)
