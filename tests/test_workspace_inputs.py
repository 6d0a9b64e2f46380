"""What the workspace takes in and gives out, checked against misuse (issue 38): clips made two at a
time, never leaving a temp folder, titled as typed; tags only as a list; control characters removed
from what a user types and shown escaped in what a terminal prints."""

from __future__ import annotations

import csv
import io
import json
import shutil
import struct
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from igot.cli import main
from igot.errors import IgotError
from igot.outputs import highlights, store
from igot.outputs.highlights import HighlightError
from igot.speakers.phrases import name_speakers
from igot.transcript import Source, Transcript
from igot.workspace import clips, server
from igot.workspace.guard import Door
from igot.outputs.store import Library
from tests.test_highlights import interview
from tests.test_workspace import tone

PORT = 8765
HOME = f"http://127.0.0.1:{PORT}"
# Every character that drawtext's own syntax or its %{...} expansion reads as more than a letter.
TITLE = "20% off: 'Ana' said \"no\", \\o/"
CONTROLS = "\x1b\x07\x00\u202e"  # ESC, BEL, NUL and the right-to-left override




def undecodable(path: Path, seconds: float = 20.0, rate: int = 16000) -> Path:
    """A WAV that looks right to ffprobe (sound, the interview's length) in a format no decoder reads:
    the workspace takes it for the recording, and ffmpeg fails on it."""
    data = bytes(int(seconds * rate) * 2)
    fmt = struct.pack("<HHIIHH", 0x9999, 1, rate, rate * 2, 2, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(data)) + data
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    return path


@pytest.fixture
def folder(tmp_path) -> Path:
    """A library of one interview with its recording beside it (sound only: the clip's picture is
    the plain background with the title on it), titled TITLE, with one highlight of its first second."""
    out = tmp_path / "library"
    out.mkdir()
    t = replace(interview(), source=Source(TITLE, None, str(tone(out / "bruno.wav")), "file"))
    t = highlights.with_highlight(t, highlights.new_highlight(t, 0.0, 1.0, ["pricing"]))
    store.save(t, out, "bruno", drive=False)
    return out


@pytest.fixture
def client(folder) -> TestClient:
    door = Door(PORT)
    return TestClient(server.create_app(Library(folder), door), base_url=HOME, headers={"X-iGot-Token": door.token})


@pytest.fixture
def temp(tmp_path, monkeypatch) -> Path:
    """The temp folder Python (and ffmpeg) use, empty, for this test alone."""
    where = tmp_path / "tmp"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    monkeypatch.setenv("TMPDIR", str(where))
    return where


@pytest.fixture
def ffmpeg_runs(tmp_path, monkeypatch) -> Path:
    """The real ffmpeg behind a wrapper first on PATH that writes each run's start and end to a log
    (appends of one short line: their order in the file is the order they happened) and keeps its
    stderr; returns the log's folder."""
    real = shutil.which("ffmpeg")
    assert real, "these tests run the real ffmpeg"
    where = tmp_path / "ffmpeg-runs"
    (where / "bin").mkdir(parents=True)
    wrapper = where / "bin" / "ffmpeg"
    wrapper.write_text(f"""#!/bin/sh
echo "start $$" >> "{where}/log"
"{real}" "$@" 2> "{where}/$$.err"
rc=$?
echo "end $$" >> "{where}/log"
cat "{where}/$$.err" >&2
exit $rc
""", encoding="utf-8")
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrapper.parent}:{Path(real).parent}")
    return where


def most_at_once(runs: Path) -> tuple[int, int]:
    """(ffmpeg runs started, the most running at one time), from the wrapper's log."""
    running = most = started = 0
    for line in (runs / "log").read_text().splitlines():
        running += 1 if line.startswith("start") else -1
        started += line.startswith("start")
        most = max(most, running)
    return started, most


def clip_url(folder: Path) -> str:
    h = Transcript.load(folder / "bruno.json").highlights[0]
    return f"/api/interviews/bruno/highlights/{h.id}/clip"


def frame(video: Path, at: float = 0.5) -> bytes:
    """One frame of the picture, grey, one byte a pixel (clips.SIZE)."""
    return subprocess.run(["ffmpeg", "-v", "error", "-ss", str(at), "-i", str(video), "-frames:v", "1",
                           "-f", "rawvideo", "-pix_fmt", "gray", "-"], capture_output=True, check=True).stdout


def probe_title(video: Path) -> str:
    info = json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_format", "-of", "json", str(video)],
                                     capture_output=True, text=True, check=True).stdout)
    return info["format"]["tags"]["title"]


# --- clips ----------------------------------------------------------------------------------------
@pytest.mark.slow
def test_ten_clips_asked_for_at_once_run_two_ffmpeg_at_a_time(client, folder, ffmpeg_runs, temp):
    url = clip_url(folder)
    with ThreadPoolExecutor(10) as pool:
        answers = list(pool.map(lambda _: client.get(url), range(10)))
    assert [a.status_code for a in answers] == [200] * 10
    assert all(a.content[4:8] == b"ftyp" for a in answers)  # each a whole MP4
    started, most = most_at_once(ffmpeg_runs)
    assert started == 10 and most == 2  # clips.JOBS
    assert list(temp.glob("igot-clip-*")) == []


def test_a_failed_clip_leaves_no_temp_folder(client, folder, temp):
    undecodable(folder / "bruno.wav")
    failed = client.get(clip_url(folder))
    assert failed.status_code == 400 and "ffmpeg could not cut the clip from bruno.wav" in failed.json()["error"]
    reel = client.get("/api/tag/reel", params={"name": "pricing"})
    assert reel.status_code == 400
    assert list(temp.glob("igot-clip-*")) == []
    with pytest.raises(IgotError, match="ffmpeg could not cut"):
        clips.made_clip(clips.highlight_parts(Library(folder), "bruno", Transcript.load(folder / "bruno.json").highlights[0].id))
    assert list(temp.glob("igot-clip-*")) == []
    tone(folder / "bruno.wav")
    made = client.get(clip_url(folder))
    assert made.status_code == 200 and list(temp.glob("igot-clip-*")) == []  # removed once sent


def test_a_title_with_percent_quotes_and_colons_is_drawn_and_kept_as_typed(client, folder, ffmpeg_runs, temp, tmp_path):
    answer = client.get(clip_url(folder))
    assert answer.status_code == 200
    video = tmp_path / "clip.mp4"
    video.write_bytes(answer.content)
    assert probe_title(video) == f"Ana · {TITLE} · 0:00"
    errors = "".join(p.read_text() for p in ffmpeg_runs.glob("*.err"))
    assert "drawtext" not in errors and "%" not in errors, errors  # drawtext took the text whole
    # The picture is the plain background: the title is what is white on it, at the bottom only.
    w, h = clips.SIZE
    picture = frame(video)
    assert len(picture) == w * h
    bottom, top = picture[w * (h - 120):w * (h - 40)], picture[:w * (h - 160)]
    assert sum(b > 180 for b in bottom) > 500 and max(top) < 100


# --- tags, notes and names as they come in --------------------------------------------------------
def test_tags_that_are_not_a_list_are_refused(client, folder):
    """A JSON object is iterable too: its keys became tags."""
    for tags, kind in (({"pricing": True}, "an object"), ("pricing", "a string"), (3, "a number")):
        with pytest.raises(HighlightError, match=f"must be a list of words, not {kind}") as err:
            highlights.new_highlight(interview(), 4.0, 8.9, tags)
        assert "Send them as a list" in err.value.fix
    before = (folder / "bruno.json").read_bytes()
    version = client.get("/api/interviews/bruno").json()["version"]
    sent = client.post("/api/interviews/bruno/highlights",
                       json={"version": version, "start": 4.0, "end": 8.9, "tags": {"pricing": True}})
    assert sent.status_code == 400 and "must be a list" in sent.json()["error"]
    assert (folder / "bruno.json").read_bytes() == before


def test_control_characters_and_bidi_marks_are_removed_from_a_highlights_tags_and_note():
    h = highlights.new_highlight(interview(), 4.0, 8.9, ["a\x00b", "\x1b]0;pwned\x07x", "\u202eevil\u2066", "tab\tbed"],
                                 f"first{CONTROLS} line\r\nsecond\tline\x1b[2J")
    assert h.tags == ["ab", "]0;pwnedx", "evil", "tab bed"]
    assert h.note == "first line\nsecond\tline[2J"
    changed = highlights.edited(highlights.with_highlight(interview(), h), h.id, tags=["x\x07y"], note="\x1bnew\u200f")
    assert (changed.highlights[0].tags, changed.highlights[0].note) == (["xy"], "new")


def test_control_characters_are_removed_from_speaker_names():
    t = name_speakers(interview(), [f"A{CONTROLS}na", "Jo\tana\u2069"])
    assert [s.name for s in t.speakers] == ["Ana", "Jo ana"]
    t = name_speakers(interview(), {"Speaker 2": "\x1b]0;x\x07Bruno"})
    assert [s.name for s in t.speakers] == ["Ana", "]0;xBruno"]


# --- what igot tags prints ---------------------------------------------------------------------------
def strangers_library(tmp_path: Path) -> Path:
    """A library whose one interview was written by someone else: control characters in its title,
    a speaker's name, a tag and a note (JSON allows any character, as \\u001b)."""
    out = tmp_path / "strangers"
    out.mkdir()
    t = interview()
    t = highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 8.9, ["pricing"]))
    data = json.loads(t.to_json())
    data["source"]["title"] = "Interview\x1b]0;owned\x07 with Joana"
    data["speakers"][1]["name"] = "Jo\x1b[2Jana\u202e"
    data["highlights"][0]["tags"] = ["\x1b]0;pwned\x07x", "pricing"]
    data["highlights"][0]["note"] = "too\x07 expensive\x1b[31m\nsecond line\x00"
    (out / "joana.json").write_text(json.dumps(data), encoding="utf-8")
    return out


def run_igot(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_igot_tags_prints_no_control_character_from_a_strangers_file(tmp_path):
    library = strangers_library(tmp_path)
    printed = []
    for args in (["tags"], ["tags", "export", "pricing"], ["tags", "export", "pricing", "--csv"],
                 ["tags", "rename", "]0;pwnedx", "owned\x1b[2J"], ["tags"]):
        code, out, err = run_igot(*args, "--out", str(library))
        assert not any(ch in out + err for ch in "\x1b\x07\x00\u202e"), out + err
        assert code == 0, err
        printed.append(out + err)
    board, markdown, csv_out, renamed, after = printed
    assert "]0;pwnedx" in board and "pricing" in board
    # Markdown escapes the backslash of each escape again: \\x1b reads as \x1b on the page.
    assert "Interview\\\\x1b" in markdown and "Jo\\\\x1b" in markdown and "too\\\\x07 expensive" in markdown
    rows = list(csv.reader(io.StringIO(csv_out)))
    assert len(rows) == 2 and rows[1][1] == "Interview\\x1b]0;owned\\x07 with Joana"
    assert rows[1][8] == "too\\x07 expensive\\x1b[31m\nsecond line\\x00"
    assert "is now 'owned[2J'" in renamed and "owned[2J" in after


def test_igot_search_and_voices_print_what_a_strangers_file_holds_escaped(tmp_path):
    """A phrase, an interview name or a speaker with ESC or BEL in a hand-written JSON (a shared
    folder) reaches the terminal escaped through igot search."""
    folder = tmp_path / "library"
    folder.mkdir()
    data = json.loads(interview().to_json())
    data["source"]["title"] = "Evil\x1b]0;pwned\x07 title"
    data["phrases"][1]["text"] = "Honestly the price \x1b[2J is too high\x07 for a small team."
    data["speakers"][1]["name"] = "Jo\x1b[31mana"
    (folder / "evil.json").write_text(json.dumps(data), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert main(["search", "price", "--out", str(folder), "--words-only"]) == 0
    printed = out.getvalue()
    assert "price" in printed and "\\x1b" in printed
    assert "\x1b" not in printed and "\x07" not in printed
