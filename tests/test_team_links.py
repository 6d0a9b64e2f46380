"""Links inside the team: a teammate who is not signed in opens a copied link (an interview at a
moment, a highlight, a theme), signs in, and lands on exactly that; "Copy link" copies the right
address; where a person is sent after signing in is only ever the team's own page, by password
(static/links.js landing()) and through the company's identity provider (team_door.landing, its
`next` kept through the provider's round trip)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient

from igot.outputs.store import Library
from igot.team.oidc import Oidc, OidcSettings
from igot.workspace import team_door, team_server
from tests.test_team_browser import PASSWORD, chromium, signed_in, team  # noqa: F401 (fixtures: one team server, Chromium)
from tests.test_team_server import ORIGIN, folder  # noqa: F401 (a fixture: a library of one interview)
from tests.test_workspace_browser import wait_for

EVIL = ["https://evil.example/x", "//evil.example/x", "///evil.example", "/\\evil.example", "javascript:alert(1)",
        "/interview/x\r\nSet-Cookie: a=b", "/interview/x#y", "interview/joana", "", "/" + "a" * 2000]


@pytest.mark.parametrize("route", ["/interview/joana?t=9", "/interview/joana?h=h-1a2b", "/tag/pricing%20plans",
                                   "/themes?tag=pricing&theme=t-0a1b2c3d4e", "/search?q=too+high&speaker=Joana",
                                   "/ask?q=What%20about%20price%3F", "/"])
def test_a_workspace_route_is_where_a_person_lands_once_signed_in(route):
    assert team_door.landing(route) == f"/#{route}"


@pytest.mark.parametrize("route", [*EVIL, None, 5])
def test_anything_else_lands_on_the_library_never_another_site(route):
    assert team_door.landing(route) == "/"


def test_the_company_sign_in_keeps_where_the_person_was_going_and_only_ever_this_servers_page(folder):  # noqa: F811
    """Through /signin/oidc?next=..., kept in the sign-in's signed cookie, given back by the
    callback: here the provider cannot be reached, so the callback sends the person back to the
    sign-in page, saying why, still on the way to where they were going."""
    oidc = Oidc(OidcSettings("http://127.0.0.1:9", "igot", "s" * 20, ("example.com",)), log=lambda line: None)
    app, _ = team_server.team_app(Library(folder), team_server.Address("127.0.0.1", 443, ORIGIN), oidc)
    for given, going in [("/interview/joana?t=9", "/interview/joana?t=9"), *((bad, "") for bad in EVIL)]:
        client = TestClient(app, base_url=ORIGIN, follow_redirects=False)
        assert client.get("/signin/oidc", params={"next": given}).status_code == 502  # the provider is not there
        back = client.get("/signin/oidc/callback", params={"code": "c", "state": "s"})
        where = urlsplit(back.headers["location"])
        assert back.status_code == 303 and (where.scheme, where.netloc, where.path) == ("", "", "/signin")
        assert "could not be reached" in parse_qs(where.query)["refused"][0] and where.fragment == going, given


def grant_clipboard(page, url: str) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=url.rstrip("/"))


def copied(page, selector: str) -> str:
    """Click a "Copy link" and read what it put on the clipboard."""
    page.evaluate("navigator.clipboard.writeText('')")
    page.locator(selector).click()
    wait_for(page, "navigator.clipboard.readText().then((t) => t !== '')", 5)
    return page.evaluate("navigator.clipboard.readText()")


def through_signin(chromium, link: str, email: str):  # noqa: F811
    """A teammate's own browser, not signed in, opening `link`: the sign-in page, then the link."""
    page = chromium.new_context(ignore_https_errors=True).new_page()
    page.goto(link)
    page.wait_for_url(lambda u: urlsplit(u).path == "/signin")
    assert page.evaluate("location.hash") == "#" + link.split("#", 1)[1]  # the 303 to /signin kept it
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", PASSWORD)
    page.click("#go")
    page.wait_for_selector(".whoami-name")
    return page


@pytest.mark.slow  # Chromium
def test_a_teammate_opens_a_copied_link_signs_in_and_lands_on_exactly_that(team, chromium):  # noqa: F811
    running, folder = team
    url = running.url
    ana = signed_in(chromium, url, "ana@example.com")
    grant_clipboard(ana, url)
    version = ana.evaluate("igot.interview().version")
    made = ana.evaluate("""async (version) => {
      const r = await fetch('api/interviews/joana/highlights', {method: 'POST', body: JSON.stringify(
        {version, start: 9.5, end: 10.95, tags: ['onboarding'], note: ''}), headers: {'Content-Type': 'application/json',
        'X-iGot-Token': document.querySelector('meta[name="igot-token"]').content}});
      return r.json(); }""", version)
    hid = next(h["id"] for h in made["highlights"] if h["tags"] == ["onboarding"])
    ana.reload()
    ana.wait_for_selector(".hl-item")
    wait_for(ana, "igot.ready()")
    # The moment playing: phrase 2 (9.0 s), clicked.
    ana.locator('.phrase[data-i="2"]').click()
    moment = copied(ana, ".moment-link .copy-link")
    assert moment == f"{url}#/interview/joana?t=9"
    assert copied(ana, f'.hl-item[data-id="{hid}"] .copy-link') == f"{url}#/interview/joana?h={hid}"
    ana.goto(f"{url}#/tag/onboarding")
    ana.wait_for_selector(".quote")
    assert copied(ana, ".tools .copy-link") == f"{url}#/tag/onboarding"
    assert copied(ana, ".quote .copy-link") == f"{url}#/interview/joana?h={hid}"
    ana.goto(f"{url}#/themes")
    ana.wait_for_selector(".theme")
    theme = ana.locator(".theme").first.get_attribute("data-theme")
    theme_link = copied(ana, ".theme .copy-link")
    assert theme_link == f"{url}#/themes?theme={theme}"
    ana.goto(f"{url}#/search?q=too%20high")
    ana.wait_for_selector("h1 .copy-link")
    assert copied(ana, "h1 .copy-link") == f"{url}#/search?q=too+high"
    ana.goto(f"{url}#/ask?q=What%20about%20price%3F&speaker=Joana")
    ana.wait_for_selector("h1 .copy-link")
    assert copied(ana, "h1 .copy-link") == f"{url}#/ask?q=What+about+price%3F&speaker=Joana"
    ana.context.close()

    # Vera, a viewer, not signed in: the link to the moment, the sign-in page, then that moment.
    vera = through_signin(chromium, moment, "vera@example.com")
    wait_for(vera, "location.hash === '#/interview/joana?t=9' && igot.ready() && igot.now() === 2")
    assert vera.url == moment
    assert abs(vera.evaluate("igot.player().time()") - 9.0) < 0.05
    assert vera.locator(".phrase.now").get_attribute("data-i") == "2"
    # A link to a highlight: played from its start, its words and its item in the list marked.
    vera.goto(f"{url}#/interview/joana?h={hid}")
    wait_for(vera, "igot.ready() && igot.now() === 2 && document.querySelector('.hl-item.linked') !== null")
    assert abs(vera.evaluate("igot.player().time()") - 9.5) < 0.05 and vera.evaluate("igot.now()") == 2
    assert vera.locator(".w.hl.linked").all_inner_texts() == ["the", "onboarding", "took"]
    assert vera.locator(".hl-item.linked").get_attribute("data-id") == hid
    shot = Path("test-artifacts") / "team-link-opened.png"
    shot.parent.mkdir(exist_ok=True)
    vera.screenshot(path=str(shot))
    # A theme: its column marked.
    vera.goto(theme_link)
    wait_for(vera, "document.querySelector('.theme.linked') !== null")
    assert vera.locator(".theme.linked").get_attribute("data-theme") == theme
    vera.context.close()

    # Bruno, not signed in, opens a link to the highlight straight away.
    bruno = through_signin(chromium, f"{url}#/interview/joana?h={hid}", "bruno@example.com")
    wait_for(bruno, "igot.ready() && igot.now() === 2 && document.querySelector('.hl-item.linked') !== null")
    assert bruno.evaluate("location.hash") == f"#/interview/joana?h={hid}"
    assert abs(bruno.evaluate("igot.player().time()") - 9.5) < 0.05
    # The page's check (links.js) says what the server's says: only this server's page.
    routes = ["/interview/joana?t=9", "/tag/pricing%20plans", *(r for r in [*EVIL] if "\r" not in r)]
    landed = bruno.evaluate("""async (routes) => {
      const { landing } = await import('/static/links.js');
      return routes.map((r) => landing('#' + r)); }""", routes)
    assert landed == [team_door.landing(r) for r in routes]
    bruno.context.close()
    # Signing in from a crafted link to another site lands on the team's own library.
    for bad in ("https://evil.example/x", "//evil.example/x", "javascript:alert(1)"):
        page = chromium.new_context(ignore_https_errors=True).new_page()
        page.goto(f"{url}signin#{bad}")
        page.fill("input[name=email]", "ada@example.com")
        page.fill("input[name=password]", PASSWORD)
        page.click("#go")
        page.wait_for_selector(".whoami-name")
        assert page.url == url and page.evaluate("location.hash") == ""
        page.context.close()
