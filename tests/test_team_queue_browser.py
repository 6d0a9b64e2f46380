"""A team's queue in Chromium (issue 51): a researcher adds a recording from the page of a team's
server that makes no interview itself (--no-embedded-worker); it waits, the page saying that no
worker is connected; a real `igot worker` process then takes it over HTTPS, and the page shows the
worker's name and the job's stage, then the job done with a link to its interview. The upload's
row is the same element from its first chunk to its end, though its id changes once its file is
whole ("u1", then its id in the team's database)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import replace

import pytest

from igot.outputs import store
from igot.team import jobs, people
from igot.team.db import team_db
from igot.transcript import Source
from igot.workspace import team_server
from tests.test_add_interviews import FAST
from tests.test_highlights import interview
from tests.test_team_browser import PASSWORD, chromium, signed_in  # noqa: F401 (chromium: a fixture)
from tests.test_team_server import certificate
from tests.test_team_workers import ROOT, stop
from tests.test_workspace import tone
from tests.test_workspace_browser import ARTIFACTS, wait_for

pytestmark = pytest.mark.slow  # Chromium, and a real worker making an interview with tiny.en
WORKER = "Colab T4"


def shot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / name).write_bytes(page.screenshot(full_page=True))


def test_a_recording_added_on_the_page_waits_for_a_worker_then_one_makes_it(devdata, chromium, tmp_path):  # noqa: F811
    root = tmp_path
    folder = root / "library"
    folder.mkdir()
    t = interview()  # joana: the page signs in on an interview, as the team's browser tests do
    store.save(replace(t, source=Source("Interview with a team lead", None, str(tone(folder / "joana.wav")), "file"),
                       duration=20.0, phrases=[replace(p, link=None) for p in t.phrases]), folder, "joana", drive=False)
    db = team_db(folder)
    people.accept(db, people.invite(db, "ana@example.com", "researcher"), "Ana", PASSWORD)
    token = jobs.add_worker(db, WORKER)  # let in, not started yet
    cert, key = certificate(root)
    sock = team_server.bind(0, "127.0.0.1")
    where = team_server.address("127.0.0.1", sock.getsockname()[1], cert, key)
    running = team_server.start_team(folder, where, sock=sock, run_options=FAST, embedded_worker=False)
    log = root / "worker.log"
    worker = None
    try:
        page = signed_in(chromium, running.url, "ana@example.com")
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{running.url}#/")
        page.locator(".adding .add-open").click()
        # No worker yet: the line says so, and what becomes of the recordings; the one let in is listed.
        wait_for(page, "(document.querySelector('.workers-line') || {}).textContent?.startsWith('No worker connected')")
        assert "wait until one connects" in page.locator(".workers-line").text_content()
        away = page.locator(f'.workers .worker.away[data-name="{WORKER}"]')
        assert away.locator(".worker-seen").text_content() == "never connected"

        # The upload's first row, kept: its last chunk held back a moment (the row is drawn as "u1"),
        # and the answer to it too (listings with the job's new id come first).
        page.evaluate("""() => { new MutationObserver((records, observer) => {
            for (const r of records) for (const n of r.addedNodes) if (n.matches && n.matches('li.job') && !window.firstRow) {
              window.firstRow = n; window.firstId = n.dataset.id; observer.disconnect(); } })
          .observe(document.querySelector('.queue'), { childList: true }); }""")

        def held(route):
            time.sleep(2.5)
            answer = route.fetch(headers=route.request.all_headers())
            time.sleep(2.5)
            route.fulfill(response=answer)

        page.route(re.compile(r"/api/queue/[^/]+/file\?.*last=1"), held)
        page.locator(".add-form input[type=file]").set_input_files(str(devdata / "openai_whisper/jfk.flac"))
        page.locator(".add-form select[name=language]").select_option("en")
        page.locator(".add-form input[name=speakers]").fill("1")
        page.locator(".add-form button[type=submit]").click()
        # (waited for in the page: Playwright answers the held request only while the test asks the page)
        wait_for(page, "/^[0-9]+$/.test(document.querySelector('.queue .job.waiting')?.dataset.id)", 30)
        [job] = jobs.listing(db)
        assert page.evaluate("document.querySelector('.queue .job.waiting').dataset.id") == str(job.id)
        assert page.evaluate("window.firstId").startswith("u")  # drawn while its file came
        assert page.evaluate("window.firstRow.isConnected && document.querySelectorAll('.queue .job').length === 1")
        assert page.evaluate("window.firstRow === document.querySelector('.queue .job.waiting')")
        row = page.locator(".queue .job")
        assert row.locator(".job-stage").text_content() == "waiting"
        assert page.locator(".workers-line").text_content().startswith("No worker connected")
        shot(page, "team-queue-waiting.png")

        # A worker comes: it takes the job; the page names it, with its stage and progress.
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
        worker = subprocess.Popen([sys.executable, "-m", "igot", "worker", "--server", running.url, "--token", token,
                                   "--device", "cpu", "--ca-file", str(cert)],
                                  stdout=log.open("w"), stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        try:
            wait_for(page, "document.querySelector('.queue .job.running .job-worker')?.textContent === 'on %s'" % WORKER, 90)
            wait_for(page, "document.querySelector('.workers .worker.connected')?.dataset.name === '%s'" % WORKER)
        except AssertionError:
            raise AssertionError(log.read_text()) from None
        assert page.locator(".workers-line").text_content().startswith("Workers: 1 connected")
        connected = page.locator(".workers .worker.connected")
        assert connected.locator(".worker-device").text_content() == "cpu"
        assert connected.locator(".worker-seen").text_content() == "making jfk.flac"
        stage = page.locator(".queue .job.running .job-stage").text_content()
        assert stage, "a running job shows its stage"
        try:  # a stage of the run itself, past taking the recording in
            wait_for(page, "[...document.querySelectorAll('.queue .job.running .job-stage')].some(s => "
                           "!['starting', 'receiving the recording'].includes(s.textContent))", 60)
            stage = page.locator(".queue .job.running .job-stage").text_content()
        except AssertionError:
            pass  # the run may be quicker than the page's polls: the end is checked below
        else:
            assert stage in ("reading the recording", "converting the audio", "transcribing", "finding the speakers",
                             "saving"), stage
            shot(page, "team-queue-running.png")

        # Done: a link to its interview, which opens.
        try:
            wait_for(page, "document.querySelector('.queue .job.done a.job-name')", 120)
        except AssertionError:
            raise AssertionError(log.read_text()) from None
        [made] = jobs.listing(db)
        assert (made.state, made.worker_name) == ("done", WORKER)
        link = page.locator(".queue .job.done a.job-name")
        assert link.text_content() == "jfk.flac" and link.get_attribute("href") == f"#/interview/{made.stem}"
        assert page.evaluate("window.firstRow.isConnected")  # the same row from its first chunk to its end
        wait_for(page, "document.querySelectorAll('table.list a.title').length === 2")  # the library grew
        wait_for(page, "document.querySelector('.workers .worker.connected .worker-seen')?.textContent.startsWith('seen')", 20)
        shot(page, "team-queue-done.png")
        link.click()
        page.wait_for_selector("#transcript .phrase")
        assert "ask not what your country" in page.locator("#transcript").text_content().lower()
        assert not errors, errors
    finally:
        if worker is not None:
            stop(worker)
        running.stop()

