"""A team's server in Chromium, over HTTPS with a test certificate: two people in two browser
contexts on one interview at once, a viewer, a removed person, another site, nobody signed in,
and twenty wrong passwords."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from igot.outputs import store
from igot.team import people
from igot.team.db import team_db
from igot.transcript import Source, Transcript
from igot.workspace import team_server
from tests.test_highlights import interview
from tests.test_team_server import certificate
from tests.test_workspace import tone
from tests.test_workspace_browser import drag_select, files_of, wait_for

pytestmark = pytest.mark.slow  # Chromium
PASSWORD = "correct horse battery"
TEAM = [("ana@example.com", "researcher", "Ana"), ("bruno@example.com", "researcher", "Bruno"),
        ("vera@example.com", "viewer", "Vera"), ("ada@example.com", "admin", "Ada")]


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    """joana (four phrases, a tone as its recording) served to a team over HTTPS on 127.0.0.1."""
    root = tmp_path_factory.mktemp("team")
    folder = root / "library"
    folder.mkdir()
    t = interview()
    t = replace(t, source=Source("Interview with a team lead", None, str(tone(folder / "joana.wav")), "file"), duration=20.0,
                phrases=[replace(p, link=None) for p in t.phrases])
    store.save(t, folder, "joana", drive=False)
    db = team_db(folder)
    for email, role, name in TEAM:
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


def signed_in(chromium, url: str, email: str, stem: str = "joana"):
    """A person's own browser (a context of their own: their own cookies), signed in through the
    sign-in page, the interview open."""
    context = chromium.new_context(ignore_https_errors=True)
    page = context.new_page()
    page.goto(url)  # not signed in: sent to the sign-in page
    page.wait_for_url("**/signin")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", PASSWORD)
    page.click("#go")
    page.wait_for_selector(".whoami-name")
    page.goto(f"{url}#/interview/{stem}")
    page.wait_for_selector('#transcript .phrase[data-i="3"]')
    return page


def saved(folder: Path) -> Transcript:
    return Transcript.load(folder / "joana.json")


def fetch(page, path: str, method: str = "GET", body=None, token: bool = True) -> int:
    return page.evaluate("""async ([path, method, body, token]) => {
      const headers = {'Content-Type': 'application/json'};
      if (token) headers['X-iGot-Token'] = document.querySelector('meta[name="igot-token"]').content;
      const r = await fetch(path, {method, headers, body: body === null ? undefined : JSON.stringify(body)});
      return r.status; }""", [path, method, body, token])


def test_two_people_change_one_interview_at_once_and_see_each_other(team, chromium):
    running, folder = team
    ana, bruno = signed_in(chromium, running.url, "ana@example.com"), signed_in(chromium, running.url, "bruno@example.com")
    assert ana.inner_text(".whoami-name") == "Ana" and "researcher" in ana.inner_text("#whoami")
    # Ana highlights words of phrase 1; Bruno, whose page has not seen it yet, corrects phrase 3.
    drag_select(ana, '.phrase[data-i="1"] .w[data-w="0"]', '.phrase[data-i="1"] .w[data-w="2"]')
    ana.locator(".popover.offer").click()
    ana.locator(".form-pop .tag-input").fill("pricing")
    ana.keyboard.press("Enter")
    with ana.expect_response(lambda r: r.url.endswith("/highlights") and r.request.method == "POST") as made:
        ana.locator(".form-pop button[type=submit]").click()
    assert made.value.status == 201
    bruno.locator('.phrase[data-i="3"]').hover()
    bruno.locator('.phrase[data-i="3"] .fix-words').click()
    editor = bruno.locator("#transcript .editor textarea")
    editor.fill("And the onboarding took me a whole month.")
    with bruno.expect_response(lambda r: r.url.endswith("/corrections") and r.request.method == "POST") as fixed:
        bruno.keyboard.press("Enter")
    assert fixed.value.status == 200 and fixed.value.json()["merged"] is True
    # Both acknowledged changes are kept, each with who made it.
    t = saved(folder)
    assert [(h.tags, h.by) for h in t.highlights] == [(["pricing"], "Ana")]
    assert t.phrases[3].text == "And the onboarding took me a whole month." and t.edits[-1].by == "Bruno"
    # Each sees the other's change within 5 s, with their name, without a reload.
    began = time.monotonic()
    wait_for(ana, "document.querySelector('#transcript .phrase[data-i=\"3\"]').textContent.includes('whole month')", 5)
    wait_for(bruno, "document.querySelector('.hl-item .hl-maker') && "
                    "document.querySelector('.hl-item .hl-maker').textContent.includes('Ana')", 5)
    assert time.monotonic() - began < 5
    assert "Bruno" in ana.locator('.phrase[data-i="3"] .fixed-mark').get_attribute("title")
    # The activity page says who did what, newest first, each a link to its moment.
    bruno.goto(f"{running.url}#/activity")
    bruno.wait_for_selector(".activity-item")
    items = bruno.locator(".activity-item").all_inner_texts()
    assert "Bruno" in items[0] and "corrected" in items[0] and "Ana" in items[1] and "highlighted" in items[1]
    assert "#/interview/joana?t=" in bruno.locator(".activity-item .activity-link").first.get_attribute("href")
    # A comment on Ana's highlight reaches her page.
    bruno.goto(f"{running.url}#/interview/joana")
    bruno.locator(".comments-toggle").first.click()
    bruno.locator(".comment-text").first.fill("Same as the March interviews")
    bruno.locator(".comment-send").first.click()
    wait_for(ana, "document.querySelector('.comments-toggle') && document.querySelector('.comments-toggle').textContent.includes('1')", 5)
    ana.screenshot(path=str(Path("test-artifacts") / "team-two-people.png"))
    ana.context.close()
    bruno.context.close()


def test_a_viewer_is_refused_by_the_server_and_a_removed_person_stops_at_once(team, chromium):
    running, folder = team
    vera = signed_in(chromium, running.url, "vera@example.com")
    assert "viewer" in vera.inner_text("#whoami")
    before = files_of(folder)
    version = vera.evaluate("igot.interview().version")
    # Not just hidden in the page: the server refuses the viewer's writes.
    assert fetch(vera, "api/interviews/joana/highlights", "POST", {"version": version, "start": 0, "end": 2}) == 403
    assert fetch(vera, "api/interviews/joana/corrections", "POST",
                 {"version": version, "kind": "words", "phrase": 0, "text": "hacked"}) == 403
    assert fetch(vera, "api/tags/rename", "POST", {"old": "pricing", "new": "x"}) == 403
    assert files_of(folder) == before
    # Removed by an admin: her open page stops at once (the next request, the next poll).
    ada = signed_in(chromium, running.url, "ada@example.com")
    assert fetch(ada, "api/people/vera@example.com", "DELETE") == 200
    assert fetch(vera, "api/library") == 401
    vera.wait_for_selector(".signed-out-banner", timeout=5000)
    vera.screenshot(path=str(Path("test-artifacts") / "team-removed.png"))
    vera.context.close()
    ada.context.close()


def test_another_site_and_nobody_signed_in_change_nothing(team, chromium, tmp_path):
    from tests.webserver import serve

    running, folder = team
    ana = signed_in(chromium, running.url, "ana@example.com")
    before = files_of(folder)
    (tmp_path / "evil.html").write_text("<!doctype html><title>evil</title>")
    with serve(tmp_path) as evil:
        page = ana.context.new_page()  # Ana's browser, her cookie, another site's page
        page.goto(f"{evil.rstrip('/')}/evil.html")
        page.evaluate("""async (target) => {
          const body = JSON.stringify({version: 'x', start: 0, end: 3, tags: ['evil']});
          await fetch(target + 'api/interviews/joana/highlights', {method: 'POST', mode: 'no-cors', body,
                                                                 credentials: 'include', headers: {'Content-Type': 'text/plain'}});
          const frame = document.createElement('iframe'); frame.name = 'sink'; document.body.appendChild(frame);
          const form = document.createElement('form');
          form.method = 'POST'; form.action = target + 'api/tags/rename'; form.target = 'sink'; form.enctype = 'text/plain';
          const field = document.createElement('input'); field.name = '{"old":"pricing","new":"evil","x":"'; field.value = '"}';
          form.appendChild(field); document.body.appendChild(form); form.submit();
          await new Promise(r => setTimeout(r, 800));
        }""", running.url)
        page.close()
    # Nobody signed in: a fresh browser reads nothing and changes nothing.
    nobody = chromium.new_context(ignore_https_errors=True).new_page()
    nobody.goto(running.url + "signin")
    assert fetch(nobody, "api/library", token=False) == 401
    assert fetch(nobody, "api/interviews/joana/highlights", "POST", {"version": "x", "start": 0, "end": 2}, token=False) == 401
    assert files_of(folder) == before
    nobody.context.close()
    ana.context.close()


def test_twenty_wrong_passwords_in_the_sign_in_page_are_slowed_down(team, chromium):
    running, _ = team
    page = chromium.new_context(ignore_https_errors=True).new_page()
    page.goto(running.url + "signin")
    answers = page.evaluate("""async () => {
      const out = [];
      for (let i = 0; i < 20; i++) {
        const r = await fetch('/api/session', {method: 'POST', headers: {'Content-Type': 'application/json'},
                                               body: JSON.stringify({email: 'bruno@example.com', password: 'guess ' + i})});
        out.push(r.status);
      }
      return out; }""")
    assert answers[:5] == [401] * 5 and set(answers[5:]) == {429}
    page.fill("input[name=email]", "bruno@example.com")
    page.fill("input[name=password]", PASSWORD)
    page.click("#go")
    wait_for(page, "document.querySelector('.form-error').textContent.includes('wait')", 5)
    assert page.url.endswith("/signin")
    page.context.close()


def test_people_sign_in_with_the_companys_identity_provider_and_others_are_refused(oidc_provider, chromium, tmp_path):
    """A real OpenID provider (oidc-provider, on Node): Ana, invited, opens a teammate's link to a
    moment, signs in with her company account and lands on that moment, working as the researcher
    she was invited as; Eve, of another domain, and Ned, of the company but never invited, are
    refused, each told why on the sign-in page (still on the way to the link)."""
    from igot.team.oidc import Oidc, OidcSettings

    folder = tmp_path / "library"
    folder.mkdir()
    store.save(interview(), folder, "joana", drive=False)
    db = team_db(folder)
    people.invite(db, "ana@example.com", "researcher")
    cert, key = certificate(tmp_path)
    sock = team_server.bind(0, "127.0.0.1")
    where = team_server.address("127.0.0.1", sock.getsockname()[1], cert, key)
    accounts = {"ana": {"email": "ana@example.com", "email_verified": True, "name": "Ana"},
                "eve": {"email": "eve@elsewhere.org", "email_verified": True, "name": "Eve"},
                "ned": {"email": "ned@example.com", "email_verified": True, "name": "Ned"}}
    provider = oidc_provider([f"{where.origin}/signin/oidc/callback"], accounts)
    oidc = Oidc(OidcSettings(provider.issuer, provider.client_id, provider.client_secret, ("example.com",)))
    running = team_server.start_team(folder, where, oidc, sock=sock)
    try:
        link = "#/interview/joana?t=9"  # the provider's round trip loses a #fragment: it goes as ?next=

        def through_provider(login: str):
            page = chromium.new_context(ignore_https_errors=True).new_page()
            page.goto(where.origin + "/" + link)
            page.wait_for_url("**/signin**")
            page.locator("#oidc-link").click()  # "Sign in with your company account"
            page.locator("input[name=login]").fill(login)
            page.locator("input[name=password]").fill("any")
            page.locator("button[type=submit]").click()
            page.wait_for_selector("input[name=prompt][value=consent]", state="attached")
            page.locator("button[type=submit]").click()
            page.wait_for_url(f"{where.origin}/**")
            page.wait_for_load_state("load")
            return page

        ana = through_provider("ana")
        ana.wait_for_selector(".whoami-name")
        assert ana.inner_text(".whoami-name") == "Ana" and "researcher" in ana.inner_text("#whoami")
        assert ana.url == f"{where.origin}/{link}"
        ana.wait_for_selector('#transcript .phrase[data-i="2"]')
        assert people.by_email(db, "ana@example.com").role == "researcher"
        for login, why in (("eve", "@example.com"), ("ned", "not on this team")):
            page = through_provider(login)
            assert page.url.startswith(f"{where.origin}/signin") and page.url.endswith(link)
            wait_for(page, f"document.querySelector('.form-error').textContent.includes({why!r})", 5)
            assert fetch(page, "api/library", token=False) == 401
            page.context.close()
        ana.context.close()
    finally:
        running.stop()
