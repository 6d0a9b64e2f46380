"""A team's queue in its database, and workers anywhere taking its jobs (issue 51): each job taken
once even by workers asking at once; a worker killed mid-job loses its job to another when its lease
runs out, leaving one interview; a server started again picks up its queue; a worker's token opens
the worker's routes only, for its own job only, and a revoked one is refused at its next request;
a person's session never opens a worker's route. The pipeline tests run real `igot worker`
processes against a real team server with the small bundled models."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from igot.media.audio import load_audio
from igot.outputs.store import Library
from igot.refine import mend
from igot.team import jobs, people
from igot.team.db import SCHEMA, SCHEMA_VERSION, TeamDB, team_db
from igot.transcript import Transcript
from igot.workspace import team_server
from igot.workspace.queue import RECORDINGS
from igot.workspace.team_queue import TeamQueue, options_dict, options_from, place_stages, stages_folder
from tests.test_add_interviews import FAST
from tests.test_highlights import interview
from tests.test_team_server import PASSWORD

ROOT = Path(__file__).resolve().parents[1]
ORIGIN = "https://igot.team.test"


@pytest.fixture
def folder(tmp_path) -> Path:
    out = tmp_path / "library"
    out.mkdir()
    return out


# --- the queue in the database ------------------------------------------------------------------
def test_workers_asking_at_once_never_get_one_job_twice(folder):
    db = team_db(folder)
    for i in range(30):
        jobs.add(db, "link", f"https://example.com/{i}.mp3", f"job {i}", {}, None)
    taken: list[int] = []
    guard = threading.Lock()

    def worker(n: int) -> None:
        while (job := jobs.take(db, n, 60)) is not None:
            with guard:
                taken.append(job.id)

    found = [jobs.find_worker(db, jobs.add_worker(db, f"w{n}")).id for n in range(6)]
    threads = [threading.Thread(target=worker, args=(n,)) for n in found]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == sorted(set(taken)) and len(taken) == 30


def test_a_lease_run_out_goes_to_the_next_and_the_first_holder_is_refused(folder):
    db = team_db(folder)
    a, b = (jobs.find_worker(db, jobs.add_worker(db, n)).id for n in ("a", "b"))
    job = jobs.add(db, "link", "https://example.com/x.mp3", "x", {}, None)
    assert jobs.take(db, a, 0.2).id == job.id
    assert jobs.take(db, b, 60) is None  # leased to a
    time.sleep(0.3)
    again = jobs.take(db, b, 60)
    assert again.id == job.id and again.attempts == 2 and again.worker == b
    assert not jobs.renew(db, job.id, a, "transcribing", 1, 2)
    with pytest.raises(jobs.LeaseLost):
        jobs.finish(db, job.id, a, "done", "", "x")
    first = jobs.finish(db, job.id, b, "done", "", "x")
    assert jobs.finish(db, job.id, b, "failed", "late", None) == first  # said twice: the first stays
    # Cancelled while running: the worker hears it at its next report.
    other = jobs.add(db, "link", "https://example.com/y.mp3", "y", {}, None)
    jobs.take(db, a, 60)
    jobs.cancel(db, other.id)
    assert not jobs.renew(db, other.id, a, "transcribing", 1, 2)
    assert jobs.finish(db, other.id, a, "failed", "stopped").state == "cancelled"


def test_a_version_1_database_gains_the_queue_and_keeps_its_people(folder):
    (folder / ".igot").mkdir()
    conn = sqlite3.connect(folder / ".igot" / "team.sqlite3")
    for statement in SCHEMA:
        conn.execute(statement)
    conn.execute("INSERT INTO people(email, name, role, created) VALUES ('ana@example.com', 'Ana', 'admin', 0)")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    db = TeamDB(folder)
    with db.read() as c:
        assert c.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION  # every later version too
        assert [r["email"] for r in c.execute("SELECT email FROM people")] == ["ana@example.com"]
    assert jobs.add(db, "upload", "/x.flac", "x", {}, 1).state == "waiting"
    db.close()


def test_a_jobs_options_travel_as_plain_values_without_the_computers_own():
    sent = options_dict(replace(FAST, names=["Ana", "Joana"], cookies=Path("/secret/cookies.txt"), device="cuda",
                                allow_local_links=True))
    assert "cookies" not in sent and "device" not in sent and "allow_local_links" not in sent
    made = options_from(sent, FAST.__class__(device="cpu", drive=False, progress=False))
    assert (made.model, made.word_timing, made.names, made.device, made.cookies, made.allow_local_links) == \
        ("bundled:tiny.en", "engine", ["Ana", "Joana"], "cpu", None, False)


def test_igot_workers_add_list_revoke(folder, capsys):
    from igot.cli import main

    assert main(["workers", "add", "gpu-box", "--out", str(folder)]) == 0
    said = capsys.readouterr().out
    token = said.split("\n")[1].strip()
    assert f"igot worker --server http://127.0.0.1:8443 --token {token}" in said
    db = team_db(folder)
    assert jobs.find_worker(db, token).name == "gpu-box"
    with db.read() as conn:  # only its hash is kept
        assert token not in str([tuple(r) for r in conn.execute("SELECT * FROM workers")])
    assert main(["workers", "add", "gpu-box", "--out", str(folder)]) == 2
    assert main(["workers", "list", "--out", str(folder)]) == 0 and "gpu-box" in capsys.readouterr().out
    assert main(["workers", "revoke", "gpu-box", "--out", str(folder)]) == 0
    assert jobs.find_worker(db, token) is None


# --- the worker's routes: its token, its own job only ---------------------------------------------
@pytest.fixture
def team(folder):
    lib = Library(folder)
    db = team_db(folder)
    queue = TeamQueue(lib, db, FAST, embedded=False)
    app, _ = team_server.team_app(lib, team_server.Address("127.0.0.1", 443, ORIGIN), queue=queue)
    yield app, db, queue
    queue.close()


def upload(folder: Path, db, name: str, data: bytes) -> jobs.Job:
    """A job as the page leaves it once its upload is whole: the recording in LIB/recordings."""
    (folder / RECORDINGS).mkdir(exist_ok=True)
    path = folder / RECORDINGS / name
    path.write_bytes(data)
    return jobs.add(db, "upload", str(path.resolve()), name, options_dict(FAST), None)


def as_worker(app, token: str) -> TestClient:
    return TestClient(app, base_url=ORIGIN, headers={"Authorization": f"Bearer {token}"})


def test_a_worker_token_opens_its_own_jobs_routes_only_and_a_session_none(team, folder):
    app, db, queue = team
    one, two = upload(folder, db, "one.flac", b"first recording"), upload(folder, db, "two.flac", b"second recording")
    a, b = as_worker(app, jobs.add_worker(db, "a")), as_worker(app, jobs.add_worker(db, "b"))
    given = a.post("/api/worker/take", json={"device": "cpu"}).json()
    assert given["job"]["id"] == one.id and given["job"]["file"] == "one.flac" and given["job"]["options"]["model"] == "bundled:tiny.en"
    assert b.post("/api/worker/take", json={"device": "cuda"}).json()["job"]["id"] == two.id
    assert a.get(f"/api/worker/jobs/{one.id}/recording").content == b"first recording"
    # Another worker's job: its recording, its progress, its result, its failure: refused.
    for answer in (a.get(f"/api/worker/jobs/{two.id}/recording"),
                   a.post(f"/api/worker/jobs/{two.id}/progress", json={"stage": "x", "done": 1, "total": 2}),
                   a.put(f"/api/worker/jobs/{two.id}/result", content=interview().to_json(),
                         headers={"Content-Type": "application/json"}),
                   a.post(f"/api/worker/jobs/{two.id}/failed", json={"line": "no"})):
        assert answer.status_code == 409, answer.text
    assert jobs.get(db, two.id).state == "running" and not list(folder.glob("*.json"))
    # Nothing but the worker's routes: the library, the people, the queue.
    for path in ("/api/library", "/api/people", "/api/queue", "/"):
        assert a.get(path, follow_redirects=False).status_code in (401, 303), path
    assert a.post("/api/queue", json={"links": "https://example.com/a.mp3"}).status_code == 401
    # A bearer token with a page's Origin (a browser's script): refused.
    assert a.post("/api/worker/take", json={}, headers={"Origin": ORIGIN}).status_code == 401
    # A person's session, admin and all, never reaches a worker's route.
    people.accept(db, people.invite(db, "ana@example.com", "admin"), "Ana", PASSWORD)
    ana = TestClient(app, base_url=ORIGIN)
    assert ana.post("/api/session", json={"email": "ana@example.com", "password": PASSWORD},
                    headers={"Origin": ORIGIN}).status_code == 200
    token = ana.get("/").text.split('name="igot-token" content="')[1].split('"')[0]
    ana.headers["X-iGot-Token"] = token
    assert ana.post("/api/worker/take", json={}).status_code == 401
    assert ana.get(f"/api/worker/jobs/{one.id}/recording").status_code == 401
    listed = ana.get("/api/queue").json()["jobs"]
    assert [(j["state"], j["worker"]) for j in listed] == [("running", "a"), ("running", "b")]
    assert {w["name"]: w["device"] for w in ana.get("/api/workers").json()["workers"]} == {"a": "cpu", "b": "cuda"}
    # The result: a stranger's file, checked; saved once, its source the recording on the server.
    bad = a.put(f"/api/worker/jobs/{one.id}/result", content=b'{"source": 3}', headers={"Content-Type": "application/json"})
    assert bad.status_code == 400 and "not an interview" in bad.json()["error"]
    stem = a.put(f"/api/worker/jobs/{one.id}/result", content=interview().to_json(),
                 headers={"Content-Type": "application/json"}).json()["stem"]
    saved = Transcript.from_json((folder / f"{stem}.json").read_text(encoding="utf-8"))
    assert saved.source.path == str((folder / RECORDINGS / "one.flac").resolve()) and saved.source.url is None
    before = hashlib.sha256((folder / f"{stem}.json").read_bytes()).hexdigest()
    again = a.put(f"/api/worker/jobs/{one.id}/result", content=interview().to_json(), headers={"Content-Type": "application/json"})
    assert again.json()["stem"] == stem and hashlib.sha256((folder / f"{stem}.json").read_bytes()).hexdigest() == before
    # Another recording of the same title: its own stem, the first untouched.
    other = b.put(f"/api/worker/jobs/{two.id}/result", content=interview().to_json(),
                  headers={"Content-Type": "application/json"}).json()["stem"]
    assert other != stem and hashlib.sha256((folder / f"{stem}.json").read_bytes()).hexdigest() == before
    # Revoked: refused at its very next request.
    jobs.revoke_worker(db, "b")
    assert b.post("/api/worker/take", json={}).status_code == 401


def test_a_job_sent_to_a_worker_carries_the_librarys_glossary_and_summary_prompt(team, folder):
    app, db, queue = team
    (folder / "glossary.txt").write_text("Joana\nOnboardly\n", encoding="utf-8")
    prompt = "Summarise for the product team, in three bullets:\n{transcript}"
    (folder / "summary-prompt.txt").write_text(prompt, encoding="utf-8")
    upload(folder, db, "one.flac", b"first")
    jobs.add(db, "link", "https://example.com/two.mp3", "two", options_dict(replace(FAST, summary=True)), None)
    own = jobs.add(db, "link", "https://example.com/three.mp3", "three",
                   options_dict(replace(FAST, summary=True, glossary=["Ana"], prompt="Only this: {transcript}")), None)
    a = as_worker(app, jobs.add_worker(db, "a"))
    first, second, third = (a.post("/api/worker/take", json={}).json()["job"]["options"] for _ in range(3))
    # As the server's own run reads them from the library (the prompt only for a run that summarises).
    assert first["glossary"] == ["Joana", "Onboardly"] and not first.get("prompt")
    assert second["glossary"] == ["Joana", "Onboardly"] and second["prompt"] == prompt
    assert (third["glossary"], third["prompt"]) == (["Ana"], "Only this: {transcript}")  # the job's own kept
    made = options_from(second, FAST.__class__(device="cpu", drive=False, progress=False))
    assert (list(made.glossary), made.prompt) == (["Joana", "Onboardly"], prompt)
    assert jobs.get(db, own.id).options["glossary"] == ["Ana"]  # the job itself unchanged


def test_a_stage_sent_is_kept_for_the_job_only_by_its_worker_and_removed_when_it_ends(team, folder):
    app, db, queue = team
    one = upload(folder, db, "one.flac", b"first")
    a, b = as_worker(app, jobs.add_worker(db, "a")), as_worker(app, jobs.add_worker(db, "b"))
    assert a.post("/api/worker/take", json={}).json()["job"]["stages"] == []
    stage = interview().to_json().encode()
    put = lambda client, name, data=stage: client.put(f"/api/worker/jobs/{one.id}/stages/{name}", content=data,  # noqa: E731
                                                      headers={"Content-Type": "application/json"})
    assert put(a, "transcription.json").status_code == 200
    assert put(b, "transcription.json").status_code == 409  # not its job
    for name in ("audio.wav", "..%2Fteam.sqlite3", "source.json"):
        assert put(a, name).status_code in (400, 404), name
    assert put(a, "diarization.json", b"not json").status_code == 400
    assert (stages_folder(folder, one.id) / "transcription.json").read_bytes() == stage
    assert a.get(f"/api/worker/jobs/{one.id}/stages").json() == {"stages": ["transcription.json"]}
    assert a.get(f"/api/worker/jobs/{one.id}/stages/transcription.json").content == stage
    assert b.get(f"/api/worker/jobs/{one.id}/stages/transcription.json").status_code == 409
    # A link planted in the job's folder's place: nothing written through it, nothing read.
    elsewhere = folder.parent / "elsewhere"
    elsewhere.mkdir()
    (stages_folder(folder, one.id) / "transcription.json").unlink()
    stages_folder(folder, one.id).rmdir()
    stages_folder(folder, one.id).symlink_to(elsewhere)
    assert put(a, "transcription.json").status_code == 400 and not any(elsewhere.iterdir())
    assert a.get(f"/api/worker/jobs/{one.id}/stages").json() == {"stages": []}
    stages_folder(folder, one.id).unlink()
    assert put(a, "transcription.json").status_code == 200
    # The server's own run, taking the job up, finds them in its work folder (its own kept first).
    work = folder / ".igot" / "one-0123456789"
    assert place_stages(folder, one.id, work) == ["transcription.json"] and (work / "transcription.json").read_bytes() == stage
    assert place_stages(folder, one.id, work) == []
    # The job ends: its stages go.
    assert a.post(f"/api/worker/jobs/{one.id}/failed", json={"line": "no"}).status_code == 200
    assert not stages_folder(folder, one.id).exists() and elsewhere.is_dir()


@pytest.mark.slow  # all-MiniLM-L6-v2, a real sentence-transformers model
def test_the_server_makes_the_phrase_vectors_of_a_workers_interview_and_search_by_meaning_finds_it(folder):
    from igot.search import embed
    from igot.workspace.models import Models
    from tests.test_search_meaning import minilm_path
    from tests.test_team_server import signed_in

    lib, db = Library(folder), team_db(folder)
    models = Models(folder, minilm_path())
    queue = TeamQueue(lib, db, FAST, embedded=False, models=models.pool)
    app, _ = team_server.team_app(lib, team_server.Address("127.0.0.1", 443, ORIGIN), models=models, queue=queue)
    try:
        (folder / RECORDINGS).mkdir()
        (folder / RECORDINGS / "one.flac").write_bytes(b"first")
        job = jobs.add(db, "upload", str((folder / RECORDINGS / "one.flac").resolve()), "one.flac",
                       options_dict(replace(FAST, meaning=True, embedding_model=minilm_path())), None)
        w = as_worker(app, jobs.add_worker(db, "w"))
        assert w.post("/api/worker/take", json={}).json()["job"]["id"] == job.id
        # The worker made no vectors (its model is a folder on the server): the server makes them.
        stem = w.put(f"/api/worker/jobs/{job.id}/result", content=interview().to_json(),
                     headers={"Content-Type": "application/json"}).json()["stem"]
        kept = embed.load_embeddings(folder / f"{stem}.json")
        assert kept is not None and kept.matches(Transcript.load(folder / f"{stem}.json"), minilm_path())
        ana = signed_in(app, folder, "ana@example.com", "researcher", "Ana")
        found = ana.get("/api/search", params={"q": "expensive"}).json()  # no word of it in the interview
        # found by meaning: a phrase about the price (what one would pay, the price too high) first
        assert found["meaning"] and found["hits"][0]["stem"] == stem and found["hits"][0]["phrase"] in (0, 1), found
    finally:
        queue.close()


# --- real workers, a real server, real runs --------------------------------------------------------
def start(folder: Path, port: int, lease: float = 4.0) -> team_server.RunningTeam:
    sock = team_server.bind(port, "127.0.0.1")
    where = team_server.Address("127.0.0.1", sock.getsockname()[1], f"http://127.0.0.1:{sock.getsockname()[1]}")
    return team_server.start_team(folder, where, sock=sock, run_options=FAST, lease_seconds=lease, embedded_worker=False)


def worker(url: str, token: str, log: Path) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "igot", "worker", "--server", url, "--token", token, "--device", "cpu"],
                            stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, cwd=ROOT)


def queue_uploads(running: team_server.RunningTeam, recordings: dict[str, bytes]) -> None:
    """Uploads as the page sends them: announced, then their bytes."""
    made = running.queue.add({"files": [{"name": name, "size": len(data)} for name, data in recordings.items()]})
    for job, data in zip(made, recordings.values()):
        running.queue.receive(job["id"], 0, data, True)


def wait_for(check, timeout: float, what: str, logs: list[Path] = (), every: float = 0.2):
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            said = "\n".join(p.read_text() for p in logs if p.exists())
            raise AssertionError(f"{what}: not within {timeout} s\n{said}")
        time.sleep(every)


def stop(*processes: subprocess.Popen) -> None:
    for p in processes:
        if p.poll() is None:
            p.terminate()
    for p in processes:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()


def interviews(folder: Path) -> list[Transcript]:
    return [Transcript.from_json(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


@pytest.mark.slow  # real worker processes making interviews with tiny.en
def test_two_workers_make_three_recordings_each_once(devdata, folder, tmp_path):
    data = (devdata / "openai_whisper/jfk.flac").read_bytes()
    running = start(folder, 0)
    db = team_db(folder)
    logs = [tmp_path / "w1.log", tmp_path / "w2.log"]
    workers = [worker(running.url, jobs.add_worker(db, f"w{n}"), log) for n, log in enumerate(logs, 1)]
    try:
        queue_uploads(running, {"ana.flac": data, "bruno.flac": data, "carla.flac": data})
        ended = wait_for(lambda: (found := jobs.listing(db)) and all(j.state in jobs.ENDED for j in found) and found,
                         110, "three jobs made", logs)
        assert [(j.state, j.attempts) for j in ended] == [("done", 1)] * 3, ended
        made = interviews(folder)
        assert len(made) == 3 and len({j.stem for j in ended}) == 3
        assert sorted(t.source.path for t in made) == sorted(str((folder / RECORDINGS / n).resolve())
                                                             for n in ("ana.flac", "bruno.flac", "carla.flac"))
        assert all("ask not what your country" in " ".join(p.text for p in t.phrases).lower() for t in made)
    finally:
        stop(*workers)
        running.stop()


@pytest.mark.slow
def test_a_worker_killed_mid_job_loses_it_to_the_other_which_picks_up_its_stages(devdata, folder, tmp_path, wav16k):
    data = (devdata / "openai_whisper/jfk.flac").read_bytes()
    running = start(folder, 0, lease=3.0)
    db = team_db(folder)
    logs = {name: tmp_path / f"{name}.log" for name in ("w1", "w2")}
    first = worker(running.url, jobs.add_worker(db, "w1"), logs["w1"])
    second = None
    try:
        queue_uploads(running, {"ana.flac": data})
        [job] = jobs.listing(db)
        kept = stages_folder(folder, job.id) / "transcription.json"
        # The first worker sent its transcription as it finished it: killed at once.
        wait_for(kept.is_file, 60, "the transcription sent by the first worker", list(logs.values()), every=0.02)
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        sent = kept.read_bytes()
        assert jobs.get(db, job.id).state == "running" and jobs.get(db, job.id).worker_name == "w1"
        second = worker(running.url, jobs.add_worker(db, "w2"), logs["w2"])
        [ended] = wait_for(lambda: (found := jobs.listing(db)) and found[0].state in jobs.ENDED and found,
                           90, "the job made by the second worker", list(logs.values()))
        assert (ended.state, ended.attempts, ended.worker_name) == ("done", 2, "w2"), ended
        [made] = interviews(folder)
        assert made.source.path == str((folder / RECORDINGS / "ana.flac").resolve())
        # The second run took the first's transcription up and did not transcribe again.
        said = logs["w2"].read_text()
        assert "Picking up where the job stopped: transcription" in said, said
        assert "Transcription: reusing the finished transcription" in said and "Transcription: Whisper" not in said, said
        words = lambda t: [(w.text, w.start) for p in t.phrases for w in p.words]  # noqa: E731
        # the interview made from what was sent (its word times mended at the pauses, as a laptop's are)
        mended = mend.mend(Transcript.from_json(sent.decode()), mend.speech(load_audio(wav16k(devdata / "openai_whisper/jfk.flac"))))
        assert words(made) == words(mended)
        assert not stages_folder(folder, job.id).exists()  # the job ended: its stages removed
        assert not (folder / ".igot" / "changes").exists() or not any((folder / ".igot" / "changes").iterdir())
    finally:
        stop(first, *([second] if second else []))
        running.stop()


def researcher(running: team_server.RunningTeam, folder: Path) -> httpx.Client:
    """A researcher signed in to the running server, as the page is."""
    db = team_db(folder)
    people.accept(db, people.invite(db, "rita@example.com", "researcher"), "Rita", PASSWORD)
    origin = running.url.rstrip("/")
    client = httpx.Client(base_url=origin, headers={"Origin": origin}, timeout=30)
    signed = client.post("/api/session", json={"email": "rita@example.com", "password": PASSWORD})
    assert signed.status_code == 200, signed.text
    # The session's cookie is a Secure one (__Host-), which httpx keeps for HTTPS only: sent as the browser would here.
    client.headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in signed.cookies.items())
    client.headers["X-iGot-Token"] = client.get("/").text.split('name="igot-token" content="')[1].split('"')[0]
    return client


@pytest.mark.slow
def test_the_pages_cancel_stops_an_outside_worker_mid_job_and_takes_the_upload_back(devdata, folder, tmp_path):
    data = (devdata / "openai_whisper/jfk.flac").read_bytes()
    running = start(folder, 0)
    db = team_db(folder)
    log = tmp_path / "w1.log"
    one = worker(running.url, jobs.add_worker(db, "w1"), log)
    try:
        rita = researcher(running, folder)
        queue_uploads(running, {"ana.flac": data})
        job = wait_for(lambda: next((j for j in jobs.listing(db) if j.state == "running"
                                     and j.stage not in ("", "starting", "receiving the recording")), None),
                       60, "the job running on the worker", [log])
        answer = rita.post(f"/api/queue/{job.id}/cancel", json={})
        assert answer.status_code == 200 and answer.json()["stopping"], answer.text
        [ended] = wait_for(lambda: (found := jobs.listing(db)) and found[0].state in jobs.ENDED and found,
                           60, "the job cancelled", [log])
        assert (ended.state, ended.worker_name) == ("cancelled", "w1"), ended
        wait_for(lambda: "stopped (cancelled" in log.read_text(), 20, "the worker saying it stopped", [log])
        assert "done, saved" not in log.read_text() and not list(folder.glob("*.json"))
        assert not (folder / RECORDINGS / "ana.flac").exists() and not stages_folder(folder, job.id).exists()
        assert one.poll() is None  # it goes on, waiting for the next job
        assert [j["state"] for j in rita.get("/api/queue").json()["jobs"]] == ["cancelled"]
    finally:
        stop(one)
        running.stop()


@pytest.mark.slow
def test_the_server_started_again_mid_queue_resumes_it(devdata, folder, tmp_path):
    data = (devdata / "openai_whisper/jfk.flac").read_bytes()
    running = start(folder, 0)
    port = int(running.url.rstrip("/").rsplit(":", 1)[1])
    db = team_db(folder)
    log = tmp_path / "w1.log"
    queue_uploads(running, {"ana.flac": data, "bruno.flac": data})
    running.stop()  # before any worker came: the queue is in the database only
    running = start(folder, port)
    one = worker(running.url, jobs.add_worker(db, "w1"), log)
    try:
        wait_for(lambda: any(j.state == "done" for j in jobs.listing(db)), 60, "the first job made", [log])
        running.stop()  # mid-queue: the worker waits for it
        wait_for(lambda: "cannot be reached" in log.read_text(), 30, "the worker saying the server is away", [log])
        running = start(folder, port)
        ended = wait_for(lambda: (found := jobs.listing(db)) and all(j.state == "done" for j in found) and found,
                         90, "the queue resumed", [log])
        assert len(ended) == 2 and len(interviews(folder)) == 2
    finally:
        stop(one)
        running.stop()


def test_the_servers_own_worker_steps_aside_for_outside_workers_and_takes_back_a_failed_upload(folder):
    running = start_embedded(folder)
    db = team_db(folder)
    try:
        running.queue.external_asked = time.monotonic()  # an outside worker asked a moment ago
        queue_uploads(running, {"broken.mp3": b"this is not a recording"})
        time.sleep(3)  # the server's own worker looks every IDLE_POLL seconds: it leaves the job alone
        [job] = jobs.listing(db)
        assert job.state == "waiting" and (folder / RECORDINGS / "broken.mp3").is_file()
        running.queue.external_asked = float("-inf")  # no outside worker for EXTERNAL_WINDOW seconds
        running.queue.wake.set()
        [job] = wait_for(lambda: (found := jobs.listing(db)) and found[0].state in jobs.ENDED and found, 30, "the job tried")
        assert job.state == "failed" and "broken.mp3" in job.line and job.worker is None, job
        assert not (folder / RECORDINGS / "broken.mp3").exists() and not list(folder.glob("*.json"))
    finally:
        running.stop()


def start_embedded(folder: Path) -> team_server.RunningTeam:
    sock = team_server.bind(0, "127.0.0.1")
    port = sock.getsockname()[1]
    return team_server.start_team(folder, team_server.Address("127.0.0.1", port, f"http://127.0.0.1:{port}"), sock=sock,
                                  run_options=FAST)


def test_a_worker_with_a_revoked_token_stops_and_says_so(folder, tmp_path):
    running = start(folder, 0)
    db = team_db(folder)
    token = jobs.add_worker(db, "old-box")
    jobs.revoke_worker(db, "old-box")
    log = tmp_path / "old-box.log"
    try:
        process = worker(running.url, token, log)
        assert process.wait(timeout=60) == 3
        assert "refused this worker" in log.read_text() and "igot workers add" in log.read_text()
    finally:
        running.stop()


def test_a_worker_checks_the_servers_certificate(folder, tmp_path):
    from tests.test_team_server import certificate

    cert, key = certificate(tmp_path)
    sock = team_server.bind(0, "127.0.0.1")
    where = team_server.address("127.0.0.1", sock.getsockname()[1], cert, key)
    running = team_server.start_team(folder, where, sock=sock, run_options=FAST, embedded_worker=False)
    db = team_db(folder)
    token = jobs.add_worker(db, "box")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "igot", "worker", "--server", where.origin, "--token", token, "--once"]
    try:
        trusted = subprocess.run(command + ["--ca-file", str(cert)], capture_output=True, text=True, env=env, timeout=60)
        assert trusted.returncode == 0 and "No job waits" in trusted.stdout, trusted.stdout + trusted.stderr
        assert jobs.workers(db)[0].seen is not None
        untrusted = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
        assert untrusted.returncode == 2 and "certificate is not trusted" in untrusted.stderr, untrusted.stderr
    finally:
        running.stop()


class TeamProcess:
    """`igot serve --team` in a process of its own (making interviews itself, with the small
    models), as a team's machine runs it: killed with SIGKILL, started again."""

    def __init__(self, folder: Path, port: int, log: Path) -> None:
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "igot", "serve", "--team", "--out", str(folder), "--port", str(port), "--no-browser",
             "--no-llm", "--model", "bundled:tiny.en", "--no-align", "--no-punctuate", "--no-summary", "--no-meaning",
             "--no-voices", "--device", "cpu"], stdout=log.open("a"), stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        wait_for(lambda: self.answers(), 60, "igot serve --team started", [log])

    def answers(self) -> bool:
        try:
            return httpx.get(self.url + "/signin", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False


@pytest.mark.slow  # a real server process killed mid-job and started again
def test_a_server_killed_mid_job_and_started_again_finishes_its_queue_once(devdata, folder, tmp_path):
    from tests.oidc_provider import free_port

    db = team_db(folder)
    people.accept(db, people.invite(db, "ana@example.com", "researcher"), "Ana", PASSWORD)
    port, log = free_port(), tmp_path / "server.log"
    server = TeamProcess(folder, port, log)
    try:
        ana = httpx.Client(base_url=server.url, headers={"Origin": server.url}, timeout=30)
        assert ana.post("/api/session", json={"email": "ana@example.com", "password": PASSWORD}).status_code == 200
        ana.cookies.set("__Host-igot-session", ana.cookies.get("__Host-igot-session"), domain="127.0.0.1")
        token = ana.get("/").text.split('name="igot-token" content="')[1].split('"')[0]
        ana.headers["X-iGot-Token"] = token
        data = (devdata / "openai_whisper/jfk.flac").read_bytes()
        made = ana.post("/api/queue", json={"files": [{"name": n, "size": len(data)} for n in ("ana.flac", "bruno.flac")]})
        assert made.status_code == 201, made.text
        for job in made.json()["jobs"]:
            sent = ana.put(f"/api/queue/{job['id']}/file", params={"offset": 0, "last": True}, content=data,
                           headers={"Content-Type": "application/octet-stream"})
            assert sent.status_code == 200, sent.text
        # The server's own worker is transcribing the first: the server is killed there.
        wait_for(lambda: any(j.state == "running" and j.stage for j in jobs.listing(db)), 90, "a job running", [log])
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=10)
        assert len(interviews(folder)) <= 1
        server = TeamProcess(folder, port, log)
        ended = wait_for(lambda: (found := jobs.listing(db)) and all(j.state == "done" for j in found) and found,
                         120, "the queue finished after the restart", [log])
        assert len(ended) == 2 and len(interviews(folder)) == 2  # each recording one interview, every JSON whole
        assert sorted(j.stem for j in ended) == sorted(p.stem for p in folder.glob("*.json"))
    finally:
        stop(server.process)
