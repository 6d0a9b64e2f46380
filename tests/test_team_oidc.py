"""Sign-in with an identity provider (igot.team.oidc) against a real OpenID Connect provider
(oidc-provider on Node, tests/oidc_provider.py), in Debian's Chromium: the browser goes to the
provider's own login and consent pages and back, as a user's would. A minimal Starlette app
stands in for the team server: the two routes it will have, /signin/oidc and its callback.
The tests that start the provider are slow (conftest's SLOW_FIXTURES: oidc_provider); the others
are not."""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import asdict
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from igot.errors import IgotError
from igot.team.oidc import Identity, Oidc, OidcSettings, SignInRefused, session_middleware_options

CALLBACK = "/signin/oidc/callback"


class App:
    """A Starlette app with SessionMiddleware and the two sign-in routes, served by uvicorn from
    a thread on 127.0.0.1. Its socket is bound first: the provider must know the callback."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.callback = self.url + CALLBACK
        self.logged: list[str] = []

    def serve(self, settings: OidcSettings) -> "App":
        import uvicorn
        from starlette.applications import Starlette
        from starlette.middleware import Middleware
        from starlette.middleware.sessions import SessionMiddleware
        from starlette.responses import JSONResponse
        from starlette.routing import Route

        oidc = Oidc(settings, log=self.logged.append)

        async def signin(request):
            try:
                return await oidc.start(request, self.callback)
            except SignInRefused as refused:
                return JSONResponse({"problem": refused.problem, "fix": refused.fix}, status_code=refused.status)

        async def callback(request):
            try:
                return JSONResponse(asdict(await oidc.finish(request)))
            except SignInRefused as refused:
                return JSONResponse({"problem": refused.problem, "fix": refused.fix}, status_code=refused.status)

        # https_only off: the test serves plain http on 127.0.0.1.
        options = session_middleware_options("test-" + "k" * 40, https_only=False)
        app = Starlette(routes=[Route("/signin/oidc", signin), Route(CALLBACK, callback)],
                        middleware=[Middleware(SessionMiddleware, **options)])
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        while not self.server.started and self.thread.is_alive():
            threading.Event().wait(0.02)
        assert self.thread.is_alive(), "the test app did not start"
        return self

    def stop(self) -> None:
        if hasattr(self, "thread"):
            self.server.should_exit = True
            self.thread.join(10)
        self.sock.close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    from igot_dev.browser import Browser

    b = Browser(tmp_path_factory.mktemp("chromium"))
    yield b
    b.close()


@pytest.fixture
def signin(oidc_provider, browser):
    """start(domains, claims_in_id_token, issuer) -> (app, provider), torn down after the test;
    each test's browser starts without cookies (no session left at the provider)."""
    apps: list[App] = []

    def start(domains=("example.com",), claims_in_id_token=False, issuer=lambda provider: provider.issuer):
        app = App()
        apps.append(app)
        provider = oidc_provider([app.callback], claims_in_id_token=claims_in_id_token)
        app.serve(OidcSettings(issuer(provider), provider.client_id, provider.client_secret, tuple(domains)))
        return app, provider

    browser.context.clear_cookies()
    yield start
    for app in apps:
        app.stop()


def sign_in(browser, app, login: str, password: str = "correct horse"):
    """Through the provider's own pages (login, then consent), as a person would; returns the
    callback's response and the page."""
    page = browser.open(app.url + "/signin/oidc")
    assert page.url.startswith("http://127.0.0.1") and "/interaction/" in page.url, page.url
    # While the browser is at the provider, the sign-in's state waits in iGot's short-lived cookie.
    cookie, = (c for c in browser.context.cookies(app.url) if c["name"] == "igot-signin")
    assert cookie["sameSite"] == "Lax" and cookie["httpOnly"] and 0 < cookie["expires"] - time.time() <= 600
    page.locator("input[name=login]").fill(login)
    page.locator("input[name=password]").fill(password)
    page.locator("button[type=submit]").click()
    page.wait_for_selector("input[name=prompt][value=consent]", state="attached")
    with page.expect_response(lambda r: r.url.startswith(app.callback)) as answered:
        page.locator("button[type=submit]").click()
    # The callback's page loaded before the test goes on: closing a page whose navigation is still
    # committing can hang Playwright 1.65's Page.close for good.
    page.wait_for_load_state("load")
    return answered.value, page


@pytest.mark.parametrize("claims_in_id_token", [False, True], ids=["claims-at-userinfo", "claims-in-id-token"])
def test_ana_signs_in(signin, browser, claims_in_id_token):
    app, provider = signin(claims_in_id_token=claims_in_id_token)
    response, page = sign_in(browser, app, "ana")
    assert response.status == 200, response.text()
    assert Identity(**response.json()) == Identity(email="ana@example.com", name="Ana", subject="ana",
                                                   issuer=provider.issuer)
    # The sign-in cookie is gone once the sign-in is finished (Authlib cleared its state).
    assert "igot-signin" not in [c["name"] for c in browser.context.cookies(app.url)]
    # The same callback again (a replayed code, e.g. from the history): refused, the state is spent.
    again = page.goto(response.url)
    assert again.status == 403 and "not started here" in again.json()["problem"]
    page.close()


def test_eve_is_refused_by_domain(signin, browser):
    app, _ = signin()
    response, page = sign_in(browser, app, "eve")
    assert response.status == 403
    refused = response.json()
    assert "eve@elsewhere.org" in refused["problem"] and "@example.com" in refused["problem"]
    assert "ask an admin" in refused["fix"]
    assert app.logged == ["Sign-in refused: eve@elsewhere.org is not in an allowed domain."]
    page.close()


def test_unverified_email_is_refused(signin, browser):
    app, _ = signin()
    response, page = sign_in(browser, app, "ned")
    assert response.status == 403 and "not verified" in response.json()["problem"]
    page.close()


def test_nobody_allowed(signin, browser):
    app, _ = signin(domains=())
    assert app.logged == ["Sign-in: no e-mail domain is allowed, so everyone is refused. "
                          "Give the team's domain(s), e.g. example.com."]
    response, page = sign_in(browser, app, "ana")
    assert response.status == 403 and "lets nobody in" in response.json()["problem"]
    page.close()


def test_forged_state_is_refused(signin, browser):
    """A callback whose state this browser's sign-in never made (CSRF: someone else's code pushed
    into this browser) is refused before any code is exchanged."""
    app, _ = signin()
    page = browser.open(app.url + "/signin/oidc")  # a real sign-in begun: the session holds a state
    assert "/interaction/" in page.url
    forged = page.goto(f"{app.callback}?code=stolen-code&state=forged-state")
    assert forged.status == 403
    assert "not started here" in forged.json()["problem"]
    page.close()


def test_someone_elses_code_is_refused(signin, browser):
    """Ana's real code and state, replayed from another browser (no sign-in cookie): refused."""
    app, _ = signin()
    response, page = sign_in(browser, app, "ana")
    page.close()
    browser.context.clear_cookies()
    other = browser.context.new_page()
    answered = other.goto(response.url)
    assert answered.status == 403 and "not started here" in answered.json()["problem"]
    other.close()


def test_replayed_code_is_refused_by_the_provider(signin, browser):
    """Ana's spent code, sent again with the fresh state of another sign-in: the state passes, the
    provider refuses the code (invalid_grant), and that is a refusal the user can read."""
    app, _ = signin()
    response, page = sign_in(browser, app, "ana")
    used = parse_qs(urlsplit(response.url).query)["code"][0]
    page.close()
    # A new sign-in begun by a plain HTTP client, which stops at the redirect: its state is unspent.
    with httpx.Client(base_url=app.url) as client:
        begun = client.get("/signin/oidc")
        assert begun.status_code == 302 and "igot-signin" in client.cookies
        state = parse_qs(urlsplit(begun.headers["location"]).query)["state"][0]
        replayed = client.get(CALLBACK, params={"code": used, "state": state})
    assert replayed.status_code == 403, replayed.text
    assert replayed.json()["problem"] == "The identity provider refused the sign-in (invalid_grant)."
    assert app.logged == ["Sign-in refused: OAuthError (invalid_grant)"]


def test_cancelled_at_provider(signin, browser):
    app, _ = signin()
    page = browser.open(app.url + "/signin/oidc")
    with page.expect_response(lambda r: r.url.startswith(app.callback)) as answered:
        page.locator("a", has_text="Cancel").click()
    page.wait_for_load_state("load")  # before close (see sign_in)
    assert answered.value.status == 403 and "cancelled" in answered.value.json()["problem"]
    page.close()


def test_answer_from_another_provider_is_refused(signin):
    """A callback naming another issuer (RFC 9207's iss: a mix-up attack) is refused."""
    app, _ = signin()
    with httpx.Client(base_url=app.url) as client:
        state = parse_qs(urlsplit(client.get("/signin/oidc").headers["location"]).query)["state"][0]
        answered = client.get(CALLBACK, params={"code": "x", "state": state, "iss": "https://idp.elsewhere.org"})
    assert answered.status_code == 403 and "another identity provider" in answered.json()["problem"]


def test_issuer_not_the_providers_own(signin):
    """The discovery document's issuer must be the configured one, character for character."""
    app, provider = signin(issuer=lambda provider: provider.issuer + "/")
    answered = httpx.get(app.url + "/signin/oidc")
    assert answered.status_code == 502
    assert answered.json()["problem"] == (f"The identity provider at {provider.issuer}/.well-known/openid-configuration "
                                          f"calls itself {provider.issuer!r}, not {provider.issuer + '/'!r}.")


def test_provider_unreachable():
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        issuer = f"http://127.0.0.1:{closed.getsockname()[1]}"  # bound, never listening: refused
        app = App().serve(OidcSettings(issuer, "id", "secret", ("example.com",)))
        try:
            answered = httpx.get(app.url + "/signin/oidc")
        finally:
            app.stop()
    assert answered.status_code == 502 and "could not be reached" in answered.json()["problem"]
    assert app.logged == ["Sign-in refused: ConnectError"]


@pytest.mark.parametrize("settings, wrong", [
    (OidcSettings("http://idp.example.com", "id", "secret", ("example.com",)), "plain http"),
    (OidcSettings("https://idp.example.com", "id", "", ("example.com",)), "id or secret is empty"),
    (OidcSettings("https://idp.example.com", "id", "secret", "example.com"), "must be a list"),
    (OidcSettings("https://idp.example.com", "id", "secret", ("Example.com",)), "lower case"),
    (OidcSettings("https://idp.example.com", "id", "secret", ("@example.com",)), "lower case"),
    (OidcSettings("idp.example.com", "id", "secret", ("example.com",)), "not a provider's address"),
])
def test_bad_settings(settings, wrong):
    with pytest.raises(IgotError, match=wrong) as raised:
        settings.check()
    assert raised.value.fix


def test_good_settings():
    OidcSettings("https://login.microsoftonline.com/tenant/v2.0", "id", "secret", ("example.com", "sub.example.co.uk")).check()
    OidcSettings("http://127.0.0.1:8080", "id", "secret", ()).check()
    OidcSettings("http://localhost:8080", "id", "secret", ()).check()
