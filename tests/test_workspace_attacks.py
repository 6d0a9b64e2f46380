"""The workspace as an attacker meets it (issue 38): files a stranger drops into the library folder,
pages on other ports of 127.0.0.1 and on other sites, requests that are too big, too deep or not
Unicode. Chromium (Playwright) where a browser is what the attacker uses; plain HTTP elsewhere."""

from __future__ import annotations

import hashlib
import http.client
import json
import socket
import time
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from igot.outputs import store
from igot.outputs.store import Library
from igot.transcript import Source
from igot.workspace import server
from igot.workspace.guard import Door
from tests.test_highlights import interview
from tests.test_workspace import tone

PORT = 8765


def files_of(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def folder(tmp_path) -> Path:
    """Three good interviews (one with its recording beside it, one tagged), and what a stranger
    dropped in: evil.json (a valid interview) with evil.html and evil.js beside it; leak.json, a
    link to an interview outside the folder; steal.json, whose recording is a secret file; bad.json
    with a wrong field."""
    out = tmp_path / "library"
    out.mkdir()
    store.save(interview(), out, "joana", drive=False)
    store.save(replace(interview(), source=Source("Interview with Bruno", None, str(tone(out / "bruno.wav")), "file")),
               out, "bruno", drive=False)
    store.save(replace(interview(), source=Source("Entrevista com Carla", None, None, "file")), out, "carla", drive=False)
    store.save(replace(interview(), source=Source("Evil", None, None, "file")), out, "evil", drive=False)
    (out / "evil.html").write_text('<!doctype html><title>evil</title><p id="x">evil</p><script src="evil.js"></script>'
                                   '<script>document.title = "evil ran inline"</script>')
    (out / "evil.js").write_text("document.title = 'evil ran'; fetch('/api/library').then(r => document.title = 'evil read ' + r.status);")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    store.save(replace(interview(), source=Source("Leaked secrets", None, None, "file")), outside, "private", drive=False)
    (out / "leak.json").symlink_to(outside / "private.json")
    secret = tmp_path / "secret.wav"
    secret.write_text("PRIVATE KEY not yours")
    (out / "steal.json").write_text(replace(interview(), source=Source("Steal", None, str(secret), "file")).to_json())
    bad = json.loads(interview().to_json())
    bad["language"] = 5
    (out / "bad.json").write_text(json.dumps(bad))
    return out


@pytest.fixture
def door() -> Door:
    return Door(PORT)


@pytest.fixture
def client(folder, door) -> TestClient:
    return TestClient(server.create_app(Library(folder), door), base_url=f"http://127.0.0.1:{PORT}",
                      headers={"X-iGot-Token": door.token})


# --- files from the folder ------------------------------------------------------------------------
def test_a_file_in_the_folder_is_served_sandboxed_and_only_igots_own_files_are(client):
    page = client.get("/files/evil.html")
    assert page.status_code == 200
    policy = page.headers["content-security-policy"]
    assert policy.startswith("sandbox") and "script-src" not in policy  # no script of it runs, in no origin of ours
    assert client.get("/files/evil.js").status_code == 404  # not an export of an interview
    assert client.get("/files/bruno.wav").status_code == 404
    assert client.get("/files/leak.html").status_code == 404


def test_one_bad_file_is_skipped_with_why_and_the_rest_works(client):
    listed = client.get("/api/library")
    assert listed.status_code == 200
    data = listed.json()
    assert {iv["stem"] for iv in data["interviews"]} == {"joana", "bruno", "carla", "evil", "steal"}
    skipped = {s["file"]: s["why"] for s in data["skipped"]}
    assert "language" in skipped["bad.json"] and "outside" in skipped["leak.json"]
    assert client.get("/api/interviews/joana").status_code == 200


def test_nothing_outside_the_folder_is_read_or_served(client):
    found = client.get("/api/search", params={"q": "price"}).json()
    assert found["count"] and {h["stem"] for h in found["hits"]} <= {"joana", "bruno", "carla", "evil", "steal"}
    assert client.get("/api/interviews/leak").status_code == 404
    stolen = client.get("/media/steal")
    assert stolen.status_code == 404 and b"PRIVATE" not in stolen.content
    played = client.get("/media/bruno")
    assert played.status_code == 200 and played.headers["content-type"].startswith("audio/")


# --- requests that are not the workspace page's own ------------------------------------------------------
def test_every_read_and_every_work_needs_the_pages_token(folder, door):
    bare = TestClient(server.create_app(Library(folder), door), base_url=f"http://127.0.0.1:{PORT}")
    before = files_of(folder)
    same_site = {"Sec-Fetch-Site": "same-site"}  # another port of 127.0.0.1: an <img>, with no Origin
    for path in ("/api/library", "/api/interviews/joana", "/api/tag/reel?name=pricing", "/api/search?q=price",
                 "/api/ask/answer?q=price", "/media/bruno", "/files/joana.html", "/api/tag/export?name=pricing",
                 "/api/themes", "/api/ask?q=price"):
        for token in ("", "?token=wrong"):
            r = bare.get(path + (("&" if "?" in path else "?") + token[1:] if token else ""), headers=same_site)
            assert r.status_code == 403 and r.text.startswith("Refused: only the workspace's own page"), path
    r = bare.post("/api/tags/rename", json={"old": "pricing", "new": "x"})
    assert r.status_code == 403
    assert bare.get("/").status_code == 200 and door.token in bare.get("/").text  # the page itself, with its token
    assert bare.get(f"/api/library?token={door.token}").status_code == 200  # a link the page made
    assert files_of(folder) == before


# --- what a change may be ------------------------------------------------------------------------------
def refused_at_once(running, request: str, kind: str, length: int, first: str) -> bool:
    """Whether `request` ("METHOD /path"), announcing `length` bytes of `kind` and sending only
    `first`, is answered 413 within 5 s: refused before the rest is waited for or read."""
    conn = socket.create_connection(("127.0.0.1", running.port), timeout=10)
    conn.sendall((f"{request} HTTP/1.1\r\nHost: 127.0.0.1:{running.port}\r\nX-iGot-Token: {running.token}\r\n"
                  f"Content-Type: {kind}\r\nContent-Length: {length}\r\n\r\n{first}").encode())
    began = time.monotonic()
    answer = conn.recv(4096).decode()
    conn.close()
    return answer.startswith("HTTP/1.1 413") and time.monotonic() - began < 5


def test_a_change_is_limited_before_it_is_read(client, folder):
    before = files_of(folder)
    version = client.get("/api/interviews/joana").json()["version"]
    # 100 MB announced: refused at once, before a byte of it is read.
    running = server.start(folder)
    try:
        assert refused_at_once(running, "POST /api/interviews/joana/highlights", "application/json", 100_000_000, "{")
    finally:
        running.stop()
    deep = "[" * 20000 + "]" * 20000
    for body, expect in [(deep, "not valid JSON"), ('{"version": "%s", "start": 4, "end": 6, "note": "\\ud800"}' % version, "not valid JSON")]:
        r = client.post("/api/interviews/joana/highlights", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code == 400 and expect in r.json()["error"] and "\n" not in r.json()["error"]
    r = client.post("/api/interviews/joana/highlights", json={"version": version, "start": 4, "end": 6, "tags": {"evil": 1}})
    assert r.status_code == 400 and "list" in r.json()["error"]
    assert files_of(folder) == before
    r = client.post("/api/interviews/joana/highlights", content=json.dumps({"version": version, "start": 4, "end": 6,
                    "tags": ["ok\x1b]0;pwned\x07"], "note": "a\x00b\u202ec\x07"}), headers={"Content-Type": "APPLICATION/JSON; charset=UTF-8"})
    assert r.status_code == 201, r.text
    saved = next(h for h in r.json()["highlights"] if h["id"] == r.json()["id"])
    assert saved["tags"] == ["ok]0;pwned"] and saved["note"] == "abc"


def test_a_restart_right_after_a_stop_binds_its_port_while_a_tab_holds_a_connection(folder):
    running = server.start(folder)
    port = running.port
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", "/")
    conn.getresponse().read()  # the tab's connection, kept alive
    running.stop()
    again = server.start(folder, port=port)
    try:
        assert again.port == port
    finally:
        again.stop()
        conn.close()


# --- in the browser ------------------------------------------------------------------------------------
@pytest.fixture
def browser(tmp_path):
    from igot_dev.browser import Browser

    b = Browser(tmp_path / "chromium")
    yield b
    b.close()


@pytest.mark.slow  # Chromium
def test_in_the_browser_a_strangers_page_in_the_folder_runs_no_script(browser, folder):
    running = server.start(folder)
    before = files_of(folder)
    try:
        page = browser.open(f"{running.url}#/interview/evil")
        page.locator(".files a", has_text="HTML").wait_for()
        with page.context.expect_page() as opened:
            page.locator(".files a", has_text="HTML").click()
        evil = opened.value
        evil.wait_for_load_state()
        time.sleep(1.0)
        assert evil.locator("#x").text_content() == "evil"  # the page is shown, as text
        assert evil.title() == "evil"  # neither its script file nor its inline script ran
        assert files_of(folder) == before
    finally:
        running.stop()


@pytest.mark.slow  # Chromium
def test_in_the_browser_a_page_on_another_port_starts_no_work_and_a_link_runs_no_question(browser, folder, tmp_path):
    from tests.webserver import serve

    running = server.start(folder)
    try:
        target = running.url
        (tmp_path / "site").mkdir()
        (tmp_path / "site" / "img.html").write_text(f'<!doctype html><img src="{target}api/tag/reel?name=pricing">'
                                                     f'<video src="{target}media/bruno"></video>')
        (tmp_path / "site" / "go.html").write_text(
            f'<!doctype html><script>location = "{target}#/ask?q=" + encodeURIComponent("what did they say about price")</script>')
        with serve(tmp_path / "site") as site:
            page = browser.context.new_page()
            answers = []
            page.on("response", lambda r: answers.append((r.url, r.status)) if r.url.startswith(target) else None)
            page.goto(f"{site}/img.html")
            page.wait_for_load_state("networkidle")
            assert answers and all(status == 403 for _, status in answers), answers  # no ffmpeg, no recording
            asked = []
            page.on("request", lambda r: asked.append(r.url) if "/api/ask" in r.url or "/api/search" in r.url else None)
            page.goto(f"{site}/go.html")
            page.locator(".ask-form textarea").wait_for()
            time.sleep(1.0)
            assert page.locator(".ask-form textarea").input_value() == "what did they say about price"
            assert asked == []  # the question waits for the user
            assert "Press" in page.locator("#ask-result").text_content()
            with page.expect_response(lambda r: "/api/ask?" in r.url) as found:
                page.locator(".ask-form button[type=submit]").click()  # the user asks
            assert found.value.status == 200
            # A link to a search, from elsewhere: shown, not run, until the user clicks.
            asked.clear()
            page.goto(f"{site}/img.html")
            page.goto(f"{target}#/search?q=price")
            page.locator(".status .run").wait_for()
            assert asked == []
            with page.expect_response(lambda r: "/api/search?" in r.url) as found:
                page.locator(".status .run").click()
            assert found.value.status == 200 and found.value.json()["count"] >= 1
            page.screenshot(path=str(tmp_path / "search.png"))
            page.close()
    finally:
        running.stop()
