"""A link for people outside the team, in Chromium over HTTPS: a researcher shares a highlight from
the interview page and a tag's reel from the tag page; a fresh browser with no account opens the
highlight's link (the quote, the clip plays and seeks by Range) and gets nothing else from the
server; Revoke on the Shared page makes the link gone at once; the admin switches every link off
and on again."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from igot.outputs import highlights, store
from igot.team import people
from igot.team.db import team_db
from igot.transcript import Source, Transcript
from igot.workspace import team_server
from tests.test_highlights import interview
from tests.test_share_server import video
from tests.test_team_browser import PASSWORD, signed_in
from tests.test_team_server import certificate
from tests.test_workspace_browser import wait_for

pytestmark = pytest.mark.slow  # Chromium
ARTIFACTS = Path("test-artifacts")


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    """joana (a video, two highlights tagged pricing) served to a team over HTTPS on 127.0.0.1."""
    root = tmp_path_factory.mktemp("share")
    folder = root / "library"
    folder.mkdir()
    t = interview()
    t = replace(t, source=Source("Interview with a team lead", None, str(video(folder / "joana.mp4")), "file"),
                phrases=[replace(p, link=None) for p in t.phrases])
    t = highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 8.9, ["pricing"]))
    t = highlights.with_highlight(t, highlights.new_highlight(t, 9.0, 12.9, ["pricing"]))
    store.save(t, folder, "joana", drive=False)
    db = team_db(folder)
    for email, role, name in (("ana@example.com", "researcher", "Ana"), ("ada@example.com", "admin", "Ada")):
        people.accept(db, people.invite(db, email, role), name, PASSWORD)
    cert, key = certificate(root)
    sock = team_server.bind(0, "127.0.0.1")
    where = team_server.address("127.0.0.1", sock.getsockname()[1], cert, key)
    running = team_server.start_team(folder, where, sock=sock)
    yield running, folder
    running.stop()


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    from igot_dev.browser import Browser

    b = Browser(tmp_path_factory.mktemp("chromium"))
    yield b
    b.close()


def make_link(page, opener: str, hide_names: bool = False) -> str:
    page.locator(opener).first.click()
    page.wait_for_selector(".share-form")
    if hide_names:
        page.check(".share-form input[name=hide_names]")
    with page.expect_response(lambda r: r.url.endswith("/api/shares") and r.request.method == "POST") as made:
        page.click(".share-form button[type=submit]")
    assert made.value.status == 201
    page.wait_for_selector(".share-link")
    assert "only time" in page.inner_text(".share-made")
    return page.input_value(".share-link")


def test_a_shared_highlight_opens_without_an_account_and_is_gone_once_revoked(team, chromium):
    running, folder = team
    ana = signed_in(chromium, running.url, "ana@example.com")
    ana.wait_for_selector(".hl-item .share-open")
    link = make_link(ana, ".hl-item .share-open", hide_names=True)
    assert link.startswith(running.url + "s/")
    ana.screenshot(path=str(ARTIFACTS / "share-dialog.png"))
    ana.click(".share-made .cancel")
    ana.goto(f"{running.url}#/tag/pricing")
    reel = make_link(ana, ".share-open")
    ana.click(".share-made .cancel")

    # A stranger's browser: no cookie, no account; the link opened as from a chat.
    stranger = chromium.new_context(ignore_https_errors=True)
    page = stranger.new_page()
    ranges = []
    page.on("response", lambda r: "/clip" in r.url and ranges.append((r.status, r.request.headers.get("range"))))
    answer = page.goto(link)
    assert answer.status == 200
    assert page.inner_text("blockquote") == "“Honestly the price is too high for a small team.”"
    assert "Participant" in page.inner_text(".who") and "Joana" not in page.content()
    # The clip plays, then seeks: the browser asks the server for the part it needs (Range).
    wait_for(page, "document.querySelector('video').readyState >= 1", 15)
    duration = page.evaluate("document.querySelector('video').duration")
    assert 4.9 <= duration <= 6.5
    page.evaluate("() => { const v = document.querySelector('video'); v.muted = true; return v.play(); }")
    wait_for(page, "document.querySelector('video').currentTime > 0.3", 15)
    page.evaluate("() => { const v = document.querySelector('video'); v.pause(); v.currentTime = 4.0; }")
    wait_for(page, "!document.querySelector('video').seeking && Math.abs(document.querySelector('video').currentTime - 4.0) < 0.3", 15)
    assert any(status == 206 and rng for status, rng in ranges), ranges
    page.screenshot(path=str(ARTIFACTS / "share-public.png"), full_page=True)
    # Nothing else answers this browser: the library, the interview, its recording, another clip, the API.
    other = [h.id for h in Transcript.load(folder / "joana.json").highlights][1]
    for path in ("api/library", "api/interviews/joana", "media/joana", f"api/interviews/joana/highlights/{other}/clip",
                 "api/tag/reel?name=pricing", "api/shares", "api/me", "files/joana.md"):
        assert stranger.request.get(running.url + path).status == 401, path
    assert stranger.request.get(running.url, max_redirects=0).status == 303  # the workspace: to the sign-in page

    # Revoke on the Shared page: the next load of the link is gone.
    ana.goto(f"{running.url}#/shared")
    ana.wait_for_selector(".shared-item")
    assert ana.locator(".shared-item").count() == 2 and link.split("/s/")[1] not in ana.content()
    first = ana.locator(".shared-item", has_text="Honestly the price")
    assert "1" in first.locator(".shared-opened").inner_text()
    ana.screenshot(path=str(ARTIFACTS / "share-shared-page.png"), full_page=True)
    first.locator(".revoke").click()
    ana.wait_for_selector(".shared-item.state-revoked")
    gone = page.goto(link)
    assert gone.status == 404 and "This link was revoked or has expired" in page.inner_text("h1")

    # The admin switches every link off: the reel's link is gone at once; on again, it opens.
    assert page.goto(reel).status == 200 and "pricing: 2 highlights" in page.inner_text("h1")
    ada = signed_in(chromium, running.url, "ada@example.com")
    ada.goto(f"{running.url}#/shared")
    ada.wait_for_selector(".shared-settings")
    with ada.expect_response(lambda r: r.url.endswith("/api/shares/settings") and r.request.method == "PUT"):
        ada.uncheck(".shared-settings input[name=public]")
    assert page.goto(reel).status == 404
    ada.wait_for_selector(".shared-settings input[name=public]:not(:checked)")
    with ada.expect_response(lambda r: r.url.endswith("/api/shares/settings") and r.request.method == "PUT"):
        ada.check(".shared-settings input[name=public]")
    assert page.goto(reel).status == 200
    for context in (stranger, ana.context, ada.context):
        context.close()
