"""Issue 49: no file a stranger gives (an upload, a Drive path, a local path) acts beyond itself. A
"recording" is decoded only when it is a real audio or video container: a playlist or a list of
files to join, named .mp3 or .wav, is refused before ffmpeg reads a byte of what it names. A
recording is decoded up to a length limit, only when its disk has room, a full disk is said to be
one, and Cancel stops the conversion and a long silence within seconds. Every file here is made by
the real ffmpeg; no model, no ffmpeg and no code of iGot's is faked."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from igot.asr import transcribe
from igot.errors import IgotError
from igot.media import audio
from igot.media.audio import convert_to_wav, load_audio, media_duration
from igot.outputs.store import Library
from igot.pipeline import RunOptions
from igot.pipeline.flags import add_run_options, run_options_from
from igot.pipeline.options import check_options
from igot.workspace import server
from igot.workspace.guard import Door
from igot.workspace.queue import MAX_JOBS, MAX_UPLOAD, Queue


def ffmpeg(*args: str) -> None:
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *args], check=True)


class Stop(Exception):
    """What the workspace's Cancel raises from the progress hook."""


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """Real recordings of a 3 s tone, made by ffmpeg in the containers people send."""
    d = tmp_path_factory.mktemp("real")
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=3:sample_rate=44100", str(d / "tone.wav"))
    for name, codec in [("tone.flac", []), ("tone.mp3", []), ("tone.ogg", []), ("tone.opus", []), ("tone.m4a", []),
                        ("tone.webm", []), ("tone.aiff", []), ("tone.wma", [])]:
        ffmpeg("-i", str(d / "tone.wav"), *codec, str(d / name))
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=96x64:rate=10:duration=3", "-i", str(d / "tone.wav"),
           "-c:v", "mpeg4", "-c:a", "aac", "-shortest", str(d / "video.mp4"))
    return d


@pytest.fixture(scope="module")
def nine_hours(tmp_path_factory) -> Path:
    """Nine hours of silence as FLAC: a few MB (1 kHz, mono), made in about a second."""
    path = tmp_path_factory.mktemp("long") / "nine-hours.flac"
    ffmpeg("-f", "lavfi", "-i", "anullsrc=r=1000:cl=mono", "-t", str(9 * 3600), "-c:a", "flac", str(path))
    return path


def secret_and_playlists(tmp_path: Path, made: Path) -> tuple[Path, Path, Path]:
    """Someone else's recording (an MP3 in another folder), an HLS playlist named .mp3 that names
    it, and an ffconcat list named .wav that names it. Both would be decoded as that recording."""
    other = tmp_path / "someone-else"
    other.mkdir()
    secret = shutil.copy(made / "tone.mp3", other / "board-meeting.mp3")
    hls = tmp_path / "interview.mp3"
    hls.write_text(f"#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n{secret}\n#EXT-X-ENDLIST\n")
    joined = tmp_path / "interview.wav"
    joined.write_text("ffconcat version 1.0\nfile someone-else/board-meeting.mp3\n")
    return Path(secret), hls, joined


# --- playlists and lists are not recordings ------------------------------------------------------
def test_a_playlist_or_a_concat_list_named_as_a_recording_is_refused_and_what_it_names_never_decoded(tmp_path, made):
    secret, hls, joined = secret_and_playlists(tmp_path, made)
    # What ffmpeg does with them unguarded (even with "file:" and only the file protocol allowed):
    # both decode to the other recording's 3 s. That is what reached the library before.
    for given in (hls, joined):
        pcm = subprocess.run(["ffmpeg", "-v", "error", "-protocol_whitelist", "file", "-i", f"file:{given}",
                              "-ac", "1", "-ar", "16000", "-f", "s16le", "pipe:1"], capture_output=True, cwd=tmp_path).stdout
        assert len(pcm) > 2 * 16000 * 2.5, given  # the test's files are the real attack
    out = tmp_path / "work" / "audio.wav"
    for given, what in ((hls, "an HLS playlist"), (joined, "a list of files to join")):
        with pytest.raises(IgotError) as refused:
            convert_to_wav(given, out)
        line = str(refused.value)
        assert line.startswith(f"{given} is not a recording: it is {what}") and "names other files" in line, line
        assert "Give the audio or video file itself" in line and "\n" not in line
        assert "board-meeting" not in line  # nothing of the other file is said either
        with pytest.raises(IgotError, match="is not a recording"):
            load_audio(given)
        with pytest.raises(IgotError, match="is not a recording"):
            audio.input_args(given)  # what the workspace's clips give ffmpeg
        assert media_duration(given) is None
    assert not (tmp_path / "work").exists() or list((tmp_path / "work").iterdir()) == []


def test_a_picture_or_subtitles_named_as_a_recording_are_refused_by_what_they_are(tmp_path):
    picture, subtitles = tmp_path / "photo.mp3", tmp_path / "captions.m4a"
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=32x32:duration=0.1", "-frames:v", "1", "-f", "image2", str(picture))
    subtitles.write_text("1\n00:00:01,000 --> 00:00:02,000\nhello\n")
    for given, what in ((picture, "a picture"), (subtitles, "subtitles")):
        with pytest.raises(IgotError, match=f"is not a recording: it is {what}, which iGot does not read"):
            convert_to_wav(given, tmp_path / "a.wav")
    assert not (tmp_path / "a.wav").exists()


def test_an_upload_that_is_a_playlist_fails_in_the_workspace_and_no_interview_holds_the_other_recording(tmp_path, made):
    secret, hls, _ = secret_and_playlists(tmp_path, made)
    library = tmp_path / "library"
    library.mkdir()
    fast = RunOptions(model="bundled:tiny.en", word_timing="engine", punctuate=False, summary=False, meaning=False, voices=False)
    queue = Queue(Library(library), fast, log=lambda line: None)
    try:
        data = hls.read_bytes()  # 130-odd bytes named .mp3
        job = queue.add({"files": [{"name": "interview.mp3", "size": len(data)}]})[0]
        queue.receive(job["id"], 0, data, True)
        deadline = time.monotonic() + 60
        while (done := next(j for j in queue.listing() if j["id"] == job["id"]))["state"] in ("waiting", "running"):
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        queue.close()
    assert done["state"] == "failed" and done["line"].startswith("interview.mp3 is not a recording: it is an HLS playlist"), done
    assert not list(library.glob("*.json"))  # no interview made of the other recording


def test_real_recordings_in_every_common_container_are_read(made, tmp_path):
    for name in ("tone.wav", "tone.flac", "tone.mp3", "tone.ogg", "tone.opus", "tone.m4a", "tone.webm", "tone.aiff",
                 "tone.wma", "video.mp4"):
        out = tmp_path / f"{name}.wav"
        assert convert_to_wav(made / name, out) == pytest.approx(3.0, abs=0.1), name
        assert len(load_audio(made / name)) == pytest.approx(3 * 16000, abs=1600), name
        assert media_duration(made / name) == pytest.approx(3.0, abs=0.1), name


# --- the length limit -----------------------------------------------------------------------------
def test_nine_hours_of_silence_are_refused_by_the_limit_before_anything_is_decoded(nine_hours, tmp_path):
    assert nine_hours.stat().st_size < 5_000_000  # a small file: its length is what makes it big
    out = tmp_path / "audio.wav"
    with pytest.raises(IgotError) as refused:
        convert_to_wav(nine_hours, out)
    line = str(refused.value)
    assert f"{nine_hours} is 9 h 00 min long, longer than the 8 h 00 min iGot decodes at most" in line, line
    assert "--max-hours 10" in line  # how to raise it
    assert list(tmp_path.iterdir()) == []  # nothing written, not even a part
    with pytest.raises(IgotError, match="9 h 00 min long"):
        load_audio(nine_hours)


def test_a_small_limit_refuses_a_thirty_second_recording_and_the_run_takes_the_limit_from_its_flag(tmp_path):
    half_minute = tmp_path / "half-minute.mp3"
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=300:duration=30", str(half_minute))
    with pytest.raises(IgotError, match=r"is 30 s long, longer than the 18 s iGot decodes at most"):
        convert_to_wav(half_minute, tmp_path / "a.wav", max_hours=0.005)
    assert convert_to_wav(half_minute, tmp_path / "a.wav", max_hours=0.01) == pytest.approx(30, abs=0.1)
    p = argparse.ArgumentParser()
    add_run_options(p)
    args = p.parse_args(["--max-hours", "12"])
    args.device, args.out = "cpu", tmp_path
    assert run_options_from(args).max_hours == 12 and RunOptions().max_hours == 8
    for wrong in (0, -1, float("nan")):
        with pytest.raises(IgotError, match="--max-hours must be a number of hours above 0"):
            check_options(RunOptions(max_hours=wrong))


# --- free space -----------------------------------------------------------------------------------
def test_free_space_is_checked_with_the_disks_own_numbers(tmp_path):
    free = shutil.disk_usage(tmp_path).free
    audio.check_free_space(tmp_path, 1_000_000, "a small recording")  # fits
    with pytest.raises(IgotError) as refused:
        audio.check_free_space(tmp_path / "not-made-yet", free, "the audio of long.flac")  # more than the disk has free
    line = str(refused.value)
    assert line.startswith("Not enough free space on ") and "for the audio of long.flac" in line, line
    assert "GB free" in line or "MB free" in line or "TB free" in line
    assert "Free some space on that disk" in line


def test_the_workspace_refuses_uploads_the_librarys_disk_cannot_hold_before_a_byte_comes(tmp_path):
    library = tmp_path / "library"
    library.mkdir()
    door = Door(8765)
    queue = Queue(Library(library), RunOptions(), log=lambda line: None)
    client = TestClient(server.create_app(Library(library), door, queue=queue), base_url="http://127.0.0.1:8765",
                        headers={"X-iGot-Token": door.token})
    try:
        small = client.post("/api/queue", json={"files": [{"name": "a.m4a", "size": 1000}]})
        assert small.status_code == 201
        # Batches of the largest uploads, as many as it takes to pass the disk's free space: the
        # uploads announced before (still coming) count too.
        batches = shutil.disk_usage(library).free // (MAX_JOBS * MAX_UPLOAD) + 1
        files = [{"name": f"r{i}.mp4", "size": MAX_UPLOAD} for i in range(MAX_JOBS)]
        answers = [client.post("/api/queue", json={"files": files}) for _ in range(batches)]
        refused = answers[-1]
        assert refused.status_code == 507, refused.text
        line = refused.json()["error"]
        assert line.startswith("Not enough free space on ") and "need " in line and " free." in line, line
        assert all(a.status_code == 201 for a in answers[:-1])
        assert len(queue.listing()) == 1 + MAX_JOBS * (batches - 1)  # the refused batch added nothing
    finally:
        queue.close()


def test_a_full_disk_during_the_conversion_is_said_to_be_the_disk_not_the_recording(tmp_path):
    ten_minutes = tmp_path / "ten-minutes.flac"
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=200:sample_rate=8000", "-t", "600", str(ten_minutes))
    # The WAV's part, where ffmpeg writes, is a disk with no room left: /dev/full answers every
    # write with ENOSPC, as a full disk does.
    out = tmp_path / "work" / "audio.wav"
    out.parent.mkdir()
    os.symlink("/dev/full", out.with_name("audio.wav.part"))
    with pytest.raises(IgotError) as refused:
        convert_to_wav(ten_minutes, out)
    line = str(refused.value)
    assert " is full: the audio of ten-minutes.flac could not be written" in line and "no space left" in line, line
    assert "damaged" not in line and "Free some space on that disk" in line
    assert list(out.parent.iterdir()) == []


# --- Cancel ---------------------------------------------------------------------------------------
def test_cancel_stops_a_long_conversion_at_once_and_leaves_no_audio(nine_hours, tmp_path):
    told: list[tuple[float, float]] = []

    def cancel(what: str, done: float, total: float) -> None:  # the workspace's Cancel, pressed at once
        told.append((done, total))
        raise Stop()

    out = tmp_path / "audio.wav"
    began = time.monotonic()
    with pytest.raises(Stop):
        convert_to_wav(nine_hours, out, progress=cancel, max_hours=10)
    assert time.monotonic() - began < 10  # the 9 h (1 GB of WAV) were not written out first
    [(done, total)] = told
    assert total == pytest.approx(9 * 3600) and done < total  # stopped before the end
    assert list(tmp_path.iterdir()) == []  # no WAV and no part left

    # Not cancelled, the same hook hears the conversion go forward in the recording's seconds.
    heard: list[float] = []
    short = tmp_path / "short.flac"
    ffmpeg("-f", "lavfi", "-i", "anullsrc=r=1000:cl=mono", "-t", "3600", "-c:a", "flac", str(short))
    convert_to_wav(short, out, progress=lambda what, done, total: heard.append(done))
    assert heard == sorted(heard)


def test_cancel_is_heard_within_seconds_while_whisper_goes_through_silence(tiny_en, tmp_path):
    silence = tmp_path / "silence.wav"
    ffmpeg("-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "1200", "-c:a", "pcm_s16le", str(silence))
    heard: list[tuple[float, float, float]] = []
    began = time.monotonic()

    def watch(what: str, done: float, total: float) -> None:
        heard.append((time.monotonic() - began, done, total))

    t = transcribe.transcribe(silence, tiny_en, language="en", progress=watch)
    assert t.phrases == []
    # Told from the start and at least once a piece (of about 10 minutes), in the recording's seconds.
    times = [at for at, _, _ in heard]
    assert len(heard) >= 3 and heard[-1][1:] == (1200.0, 1200.0), heard
    assert [done for _, done, _ in heard] == sorted(done for _, done, _ in heard)
    assert max(b - a for a, b in zip([0.0] + times, times + [time.monotonic() - began])) < 15, heard

    def cancel(what: str, done: float, total: float) -> None:
        if done > 0:  # pressed once the run is under way
            raise Stop()

    with pytest.raises(Stop):
        transcribe.transcribe(silence, tiny_en, language="en", progress=cancel)
