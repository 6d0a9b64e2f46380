"""The library store as several processes meet it: two `igot serve` and `igot tags rename` on one
folder, a process killed in the middle of a change, a change across every interview that fails
half way. Every acknowledged highlight must be in its file, every file must parse, and a change
across files is all or nothing."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import pytest

from igot.outputs import export, highlights, store
from igot.outputs.store import Library
from igot.runtime import changes
from igot.transcript import Source, Transcript
from tests.test_highlights import interview


def library_of(folder: Path, stems=("joana", "bruno", "carla")) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for stem in stems:
        t = replace(interview(), source=Source(f"Interview {stem}", None, None, "file"))
        store.save(t, folder, stem, drive=False)
    return folder


def files_of(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def tagged(folder: Path, stems=("joana", "bruno", "carla"), tag="pricing") -> None:
    lib = Library(folder)
    for stem in stems:
        lib.change(stem, lib.open(stem).version,
                   lambda t: highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 6.0, [tag])))


# --- a change across every interview ----------------------------------------------------------------
def test_a_tag_renamed_in_every_interview_is_all_or_nothing(tmp_path, monkeypatch):
    folder = library_of(tmp_path / "lib")
    tagged(folder)
    before = files_of(folder)
    real_replace = os.replace
    calls = []

    def failing(src, dst):  # the disk fails at the fourth file put in place
        calls.append(dst)
        if len(calls) == 4:
            raise OSError(28, "No space left on device")
        return real_replace(src, dst)

    monkeypatch.setattr(changes.os, "replace", failing)
    with pytest.raises(store.CannotWrite, match="nothing was changed"):
        Library(folder).rename_tag("pricing", "price")
    monkeypatch.setattr(changes.os, "replace", real_replace)
    assert files_of(folder) == before  # every file as it was: JSON, HTML, Markdown, the library page
    assert not changes.interrupted(folder)
    assert not [p for p in folder.iterdir() if p.name.endswith((".tmp", ".old"))]
    # Done again, it is done everywhere at once.
    assert sorted(Library(folder).rename_tag("pricing", "price")) == ["bruno", "carla", "joana"]
    for stem in ("joana", "bruno", "carla"):
        assert [h.tags for h in Transcript.load(folder / f"{stem}.json").highlights] == [["price"]]
        assert "price" in (folder / f"{stem}.md").read_text()


def test_a_tag_rename_refused_by_one_interview_changes_none(tmp_path):
    """An interview whose files cannot be written (a folder in the way of its page) stops the rename
    before any file changes; the others keep their tag until the rename can be made everywhere.
    (bruno is the last the library lists: the rename used to change the two before it first.)"""
    folder = library_of(tmp_path / "lib")
    tagged(folder)
    (folder / "bruno.md").unlink()
    (folder / "bruno.md").mkdir()
    before = files_of(folder)
    with pytest.raises(Exception, match="bruno.md"):
        Library(folder).rename_tag("pricing", "price")
    assert files_of(folder) == before
    (folder / "bruno.md").rmdir()
    assert len(Library(folder).rename_tag("pricing", "price")) == 3


CRASH = """
import os, sys
from igot.runtime import changes
from igot.outputs.store import Library
real = os.replace
done = []
def crash(src, dst):
    real(src, dst)
    done.append(dst)
    if len(done) == 2:
        os.kill(os.getpid(), 9)  # killed half way: two files in place, the rest not
changes.os.replace = crash
Library(sys.argv[1]).rename_tag("pricing", "price")
"""


def test_a_change_killed_half_way_is_finished_by_the_next_reader(tmp_path):
    folder = library_of(tmp_path / "lib")
    tagged(folder)
    done = subprocess.run([sys.executable, "-c", CRASH, str(folder)], capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert changes.interrupted(folder)  # the journal of the change it was making
    # The next process that reads the library finishes the change, then lists it.
    interviews, skipped = Library(folder).listing()
    assert not changes.interrupted(folder) and not skipped
    assert {iv.path.stem: [h.tags for h in iv.transcript.highlights] for iv in interviews} == {
        "joana": [["price"]], "bruno": [["price"]], "carla": [["price"]]}
    for stem in ("joana", "bruno", "carla"):
        assert "pricing" not in (folder / f"{stem}.html").read_text()
    assert not [p for p in folder.iterdir() if p.name.endswith((".tmp", ".old"))]


KILLED_AFTER = """
import os, pathlib, sys
from igot.outputs import corrections
from igot.outputs.store import Library
from igot.runtime import changes
real = pathlib.Path.unlink
def unlink(path, missing_ok=False):
    if path.parent == changes.old_path(pathlib.Path(sys.argv[1]).resolve()):
        os.kill(os.getpid(), 9)  # the change is made: killed before its old files are removed
    return real(path, missing_ok)
pathlib.Path.unlink = unlink
lib = Library(sys.argv[1])
lib.change("joana", lib.open("joana").version, lambda t: corrections.corrected(t, 1, "Honestly the pricing is too high."))
"""


def test_a_change_killed_before_its_old_files_are_removed_is_whole(tmp_path, monkeypatch):
    """The files a change replaces are removed after it is made, by a thread (freeing them is slow
    on ext4): a kill then leaves the change whole, and the old files in .igot/old, where the next
    process to take the lock removes them."""
    folder = library_of(tmp_path / "lib")
    done = subprocess.run([sys.executable, "-c", KILLED_AFTER, str(folder)], capture_output=True, text=True)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert not changes.interrupted(folder)
    t = Transcript.load(folder / "joana.json")
    assert t.phrases[1].text == "Honestly the pricing is too high."
    for fmt in ("html", "md", "srt", "vtt"):  # every export in step with the JSON
        assert (folder / f"joana.{fmt}").read_text(encoding="utf-8") == export.render_exports(t, [fmt])[fmt], fmt
    assert "Honestly the pricing is too high." in (folder / "index.html").read_text(encoding="utf-8")
    assert not [p for p in folder.iterdir() if p.name.endswith((".tmp", ".old"))]
    left = list(changes.old_path(folder).iterdir())
    assert len(left) == 6  # the JSON, 4 exports and the library page it replaced
    with changes.locked(folder):  # within a minute: maybe a live process's, being removed
        pass
    assert len(list(changes.old_path(folder).iterdir())) == 6
    monkeypatch.setattr(changes, "LEFT_OLD", 0.0)
    with changes.locked(folder):
        pass
    assert not list(changes.old_path(folder).iterdir())


# --- processes side by side ---------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    """`igot serve` in a process of its own, and the token its page holds (read as the page reads it)."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.process = subprocess.Popen([sys.executable, "-m", "igot", "serve", "--out", str(folder), "--port", str(self.port),
                                         "--no-browser", "--no-llm"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 60
        while True:
            try:
                page = self.request("GET", "/", token=False)[1]
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"igot serve did not start: {self.process.stdout.read()}")
                time.sleep(0.2)
        self.token = re.search(r'name="igot-token" content="([^"]+)"', page).group(1)

    def request(self, method: str, path: str, body=None, token=True) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Content-Type": "application/json", **({"X-iGot-Token": self.token} if token else {})}
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        answer = conn.getresponse()
        return answer.status, answer.read().decode()

    def stop(self, kill: bool = False) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()  # never left running after the test
                raise


def highlight_ids(folder: Path, stem: str) -> set[str]:
    return {h.id for h in Transcript.load(folder / f"{stem}.json").highlights or []}


def every_json_parses(folder: Path) -> None:
    for path in folder.glob("*.json"):
        Transcript.load(path)
    for path in (folder / ".igot").rglob("*.json"):
        json.loads(path.read_text())


@pytest.mark.slow  # three Python processes with FastAPI: ~10 s
def test_two_servers_and_a_rename_on_one_folder_lose_no_acknowledged_highlight(tmp_path):
    folder = library_of(tmp_path / "lib")
    tagged(folder, ("bruno",), "cost")
    a, b = Served(folder), Served(folder)
    try:
        acknowledged, both = [], 0
        renames = subprocess.Popen([sys.executable, "-c", (
            "import sys\nfrom igot.cli import main\n"
            "for i in range(12):\n"
            "    main(['tags', 'rename', 'cost' if i % 2 == 0 else 'price', 'price' if i % 2 == 0 else 'cost', '--out', sys.argv[1]])\n"),
            str(folder)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for round_ in range(10):
            version = json.loads(a.request("GET", "/api/interviews/joana")[1])["version"]
            answers: dict[str, tuple[int, str]] = {}

            def save(name, server, start):
                answers[name] = server.request("POST", "/api/interviews/joana/highlights",
                                               {"version": version, "start": start, "end": start + 1.5, "tags": [name]})

            threads = [threading.Thread(target=save, args=(n, s, st)) for n, s, st in (("a", a, 4.0), ("b", b, 9.0))]
            [t.start() for t in threads]
            [t.join() for t in threads]
            made = [json.loads(body)["id"] for status, body in answers.values() if status == 201]
            assert all(status in (201, 409) for status, _ in answers.values()), answers
            both += len(made) == 2
            acknowledged += made
        renames.wait(timeout=120)
        # Two new highlights touch nothing of each other's: a server that knows the version the page
        # read keeps both (a merged change); one that does not refuses, never overwrites.
        assert len(acknowledged) >= 10 and both <= 10
        assert set(acknowledged) <= highlight_ids(folder, "joana")
        every_json_parses(folder)
    finally:
        a.stop()
        b.stop()


@pytest.mark.slow  # a server process killed in a burst of saves: ~8 s
def test_a_server_killed_in_a_burst_of_saves_leaves_every_acknowledged_highlight(tmp_path):
    folder = library_of(tmp_path / "lib")
    a = Served(folder)
    acknowledged: list[str] = []
    stop = threading.Event()

    def burst(start: float) -> None:
        while not stop.is_set():
            try:
                status, body = a.request("GET", "/api/interviews/joana")
                version = json.loads(body)["version"]
                status, body = a.request("POST", "/api/interviews/joana/highlights",
                                         {"version": version, "start": start, "end": start + 1.0, "tags": ["burst"]})
            except (OSError, http.client.HTTPException, ValueError):
                return  # the server is gone
            if status == 201:
                acknowledged.append(json.loads(body)["id"])

    threads = [threading.Thread(target=burst, args=(s,)) for s in (4.0, 9.0, 14.0)]
    try:
        [t.start() for t in threads]
        time.sleep(3.0)
    finally:
        a.stop(kill=True)
        stop.set()
        [t.join(timeout=30) for t in threads]
    assert acknowledged
    interviews, skipped = Library(folder).listing()  # finishes a change the kill cut short
    assert not skipped and len(interviews) == 3
    assert set(acknowledged) <= highlight_ids(folder, "joana")
    every_json_parses(folder)
    # The exports are in step with the JSON: the change that was cut short was finished whole.
    assert (folder / "joana.html").read_text(encoding="utf-8") == export.to_html(Transcript.load(folder / "joana.json"))


def test_a_writer_after_the_commit_sees_it_made_and_its_failure_loses_nothing(tmp_path):
    """What follows a save (a run's phrase vectors) is a writer the store calls once the interview
    is committed: it finds the interview's files written, and when it fails the interview stays
    saved and the failure is said, by the writer's name."""
    from igot.errors import IgotError

    seen, said = [], []

    def vectors(done: store.Committed) -> None:
        seen.append(json.loads((done.folder / f"{done.stem}.json").read_text(encoding="utf-8"))["source"]["title"])
        raise IgotError("The phrases' vectors could not be kept (No space left on device).", "Free some space.")

    saved = store.save(interview(), tmp_path, then=[("Meaning index", vectors)], log=said.append)
    assert seen == [interview().source.title]  # committed before the writer ran
    assert Transcript.load(saved.files["json"]).phrases == interview().phrases
    assert "No space left" in saved.problems["Meaning index"] and any(line.startswith("Meaning index: ") for line in said)
