"""Sign-in with the company's identity provider (OpenID Connect), for the team server.

The team server shows nobody a library until they have signed in at the provider the company
already runs (Google Workspace, Microsoft Entra, Okta, Keycloak...): iGot keeps no passwords.
The authorization code flow with PKCE, through Authlib's Starlette client, which fetches the
provider's discovery document and keys and checks the ID token (signature, issuer, audience,
expiry, nonce). This module adds what a company needs on top: the e-mail must be verified and in
one of the allowed domains, and every failure is a SignInRefused a user can read.

The integrator adds Starlette's SessionMiddleware with session_middleware_options(...): the
sign-in's state, nonce and PKCE verifier ride in that signed cookie between start() and finish(),
so any server process can finish a sign-in another began. It holds nothing once the sign-in is
finished; the team server keeps its own session for who is signed in.

Nothing here logs a token, a code or the client secret.
"""

from __future__ import annotations

import importlib
import re
import sys
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urlsplit

from igot.errors import IgotError, install_hint
from igot.links import is_loopback

# The sign-in cookie: only between the redirect to the provider and its answer, so short-lived.
SIGNIN_COOKIE = "igot-signin"
SIGNIN_SECONDS = 10 * 60
SCOPE = "openid email profile"
_DOMAIN = re.compile(r"^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+(?!\d+$)[a-z0-9-]{2,63}$")


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


@dataclass(frozen=True)
class OidcSettings:
    """The client the company's admin registered at its provider for this iGot server.
    `domains`: the e-mail domains allowed in, lower-case, e.g. ("example.com",); none: nobody."""

    issuer: str
    client_id: str
    client_secret: str
    domains: tuple[str, ...]

    def check(self) -> None:
        """Raise IgotError for settings that cannot work, before anyone tries to sign in."""
        parts = urlsplit(self.issuer or "")
        host = parts.hostname or ""
        if parts.scheme not in ("https", "http") or not host or parts.query or parts.fragment:
            raise IgotError(f"The sign-in issuer {self.issuer!r} is not a provider's address.",
                            "Give its issuer URL, e.g. https://accounts.google.com or "
                            "https://login.microsoftonline.com/<tenant>/v2.0 (no ?query or #fragment).")
        if parts.scheme == "http" and not is_loopback(host):
            # Over plain http anyone on the way could read the codes and forge the provider's answers.
            raise IgotError(f"The sign-in issuer {self.issuer} is plain http.",
                            "Use its https:// address (http is only accepted on this computer's loopback address, for tests).")
        if not self.client_id or not self.client_secret:
            raise IgotError("The sign-in client's id or secret is empty.",
                            "Give the client id and secret that the identity provider's admin registered for this server.")
        if isinstance(self.domains, str) or not all(isinstance(d, str) for d in self.domains):
            raise IgotError(f"The allowed e-mail domains must be a list of names, not {self.domains!r}.",
                            'Give them as a list, e.g. ("example.com",).')
        for domain in self.domains:
            if domain != domain.lower() or not _DOMAIN.match(domain):
                raise IgotError(f"{domain!r} is not an e-mail domain in lower case.",
                                "Write each allowed domain like example.com: no @, no spaces, lower case.")

    @property
    def metadata_url(self) -> str:
        return self.issuer.rstrip("/") + "/.well-known/openid-configuration"


@dataclass(frozen=True)
class Identity:
    """Who signed in: `email` verified by the provider and lower-cased (the team server's key for
    a member), `subject` the provider's own stable id for them, under `issuer`."""

    email: str
    name: str
    subject: str
    issuer: str


class SignInRefused(IgotError):
    """A sign-in that did not give an allowed identity; `status` is the HTTP status to answer with
    (403 refused; 502 the provider could not be reached or answered nonsense)."""

    def __init__(self, problem: str, fix: str = "", status: int = 403):
        super().__init__(problem, fix)
        self.status = status


def session_middleware_options(secret_key: str, https_only: bool = True) -> dict[str, Any]:
    """Options for `app.add_middleware(SessionMiddleware, **session_middleware_options(key))`.
    https_only: a real server is behind https (tests on http://127.0.0.1 pass False). SameSite=Lax:
    the provider's redirect back is a top-level GET, which Lax lets the cookie ride on."""
    if not secret_key or len(secret_key) < 32:
        raise IgotError("The sign-in cookie's secret key is missing or short.",
                        "Give at least 32 random characters, e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))'.")
    return {"secret_key": secret_key, "session_cookie": SIGNIN_COOKIE, "max_age": SIGNIN_SECONDS,
            "same_site": "lax", "https_only": https_only, "path": "/"}


class Oidc:
    """The relying party: start() sends the browser to the provider, finish() takes its answer
    back and returns the Identity, or raises SignInRefused."""

    def __init__(self, settings: OidcSettings, log: Callable[[str], None] = _stderr):
        settings.check()
        try:
            from authlib.integrations.starlette_client import OAuth

            importlib.import_module("itsdangerous")  # SessionMiddleware's signer: else missed until a first request
        except ImportError as err:
            raise IgotError(f"Sign-in with an identity provider needs Authlib, httpx2 and itsdangerous ({err.name} is missing).",
                            f"Install them: {install_hint('team')}") from err
        self.settings = settings
        self._log = log
        self._client = OAuth().register(
            name="igot", client_id=settings.client_id, client_secret=settings.client_secret,
            server_metadata_url=settings.metadata_url,
            client_kwargs={"scope": SCOPE, "code_challenge_method": "S256", "timeout": 15.0})
        if not settings.domains:
            log("Sign-in: no e-mail domain is allowed, so everyone is refused. Give the team's domain(s), e.g. example.com.")

    async def start(self, request, redirect_uri: str):
        """A redirect (302) to the provider's sign-in page; `redirect_uri` is this server's callback,
        registered at the provider exactly as written. Raises SignInRefused (502) if the provider
        cannot be reached."""
        self._check_session(request)
        async with self._refusals():
            await self._metadata()
            return await self._client.authorize_redirect(request, str(redirect_uri))

    async def finish(self, request) -> Identity:
        """The Identity from the provider's answer at the callback, or SignInRefused."""
        self._check_session(request)
        async with self._refusals():
            issuer = (await self._metadata())["issuer"]
            answered = request.query_params.get("iss")  # RFC 9207: which provider answered (mix-up attacks)
            if answered is not None and answered != issuer:
                raise SignInRefused("The sign-in answer came from another identity provider.", "Start again from iGot's sign-in page.")
            token = await self._client.authorize_access_token(
                request, claims_options={"iss": {"essential": True, "values": [issuer]}})
            claims = token.get("userinfo")
            if not claims:  # Authlib checks an ID token only when there is one
                raise SignInRefused("The identity provider answered without an ID token.",
                                    "Ask an admin to check that the provider's client for iGot is an OpenID Connect client.", 502)
            claims = dict(claims)
            if not claims.get("email") or "email_verified" not in claims:
                # Many providers put the e-mail at the userinfo endpoint only (OpenID Connect 5.4).
                info = dict(await self._client.userinfo(token=token))
                if info.get("sub") != claims.get("sub"):  # OpenID Connect 5.3.2
                    raise SignInRefused("The identity provider's user information is about someone else.",
                                        "Sign in again; if it happens again, tell an admin.", 502)
                claims = {**info, **claims}
        return self._identity(claims, issuer)

    def _identity(self, claims: dict, issuer: str) -> Identity:
        email = str(claims.get("email") or "").strip().lower()
        if not email or "@" not in email:
            raise SignInRefused("The identity provider did not give your e-mail address.",
                                "Ask an admin to let iGot's sign-in see e-mail addresses (scope: email).")
        if claims.get("email_verified") not in (True, "true"):
            raise SignInRefused(f"The identity provider has not verified the e-mail address {email}.",
                                "Verify it at your identity provider, then sign in again.")
        domain = email.rsplit("@", 1)[1]
        allowed = self.settings.domains
        if domain not in allowed:
            self._log(f"Sign-in refused: {email} is not in an allowed domain.")
            if not allowed:
                raise SignInRefused(f"You signed in as {email}, but this iGot server lets nobody in yet.",
                                    "Ask an admin to allow your e-mail domain.")
            names = " or ".join("@" + d for d in allowed)
            raise SignInRefused(f"You signed in as {email}, but this iGot server is only for {names} addresses.",
                                f"Sign in with your {names} account, or ask an admin to let you in.")
        name = str(claims.get("name") or " ".join(str(claims.get(k) or "") for k in ("given_name", "family_name")).strip()
                   or email.split("@")[0])
        return Identity(email=email, name=name, subject=str(claims["sub"]), issuer=issuer)

    async def _metadata(self) -> dict:
        metadata = await self._client.load_server_metadata()
        if metadata.get("issuer") != self.settings.issuer:  # OpenID Connect Discovery 4.3
            raise SignInRefused(f"The identity provider at {self.settings.metadata_url} calls itself "
                                f"{metadata.get('issuer')!r}, not {self.settings.issuer!r}.",
                                "Ask an admin to set the sign-in issuer to the provider's own issuer URL.", 502)
        return metadata

    @staticmethod
    def _check_session(request) -> None:
        if "session" not in request.scope:
            raise IgotError("Sign-in needs Starlette's SessionMiddleware on the app.",
                            "app.add_middleware(SessionMiddleware, **session_middleware_options(secret_key)).")

    def _refusals(self):
        return _Refusals(self._log)


def _http_errors() -> tuple[type[Exception], ...]:
    """The HTTP client's errors: Authlib's uses httpx2 where it is installed, else httpx."""
    found = []
    for name in ("httpx2", "httpx"):
        try:
            found.append(__import__(name).HTTPError)
        except ImportError:
            pass
    return tuple(found)


class _Refusals:
    """Turns what can go wrong between the browser, the provider and Authlib into SignInRefused,
    logging the kind of failure and the provider's error code, never its tokens."""

    def __init__(self, log: Callable[[str], None]):
        self._log = log

    async def __aenter__(self):
        return self

    async def __aexit__(self, kind, err, tb):
        if err is None or isinstance(err, IgotError):
            return False
        from authlib.common.errors import AuthlibBaseError
        from authlib.integrations.base_client import MismatchingStateError
        from joserfc.errors import JoseError

        if isinstance(err, MismatchingStateError):
            refused = SignInRefused("This sign-in was not started here, or took too long.",
                                    f"Start again from iGot's sign-in page, in this browser, and finish within {SIGNIN_SECONDS // 60} minutes.")
        elif isinstance(err, AuthlibBaseError) and err.error == "access_denied":
            refused = SignInRefused("The sign-in was cancelled at the identity provider.",
                                    "Start again from iGot's sign-in page and accept.")
        elif isinstance(err, AuthlibBaseError):
            refused = SignInRefused(f"The identity provider refused the sign-in ({err.error or 'no reason given'}).",
                                    "Start again from iGot's sign-in page; if it keeps failing, tell an admin.")
        elif isinstance(err, JoseError):
            refused = SignInRefused("The identity provider's answer did not check out (its ID token was not valid).",
                                    "Start again from iGot's sign-in page; if it keeps failing, tell an admin "
                                    "(the server's clock, or the provider's settings).")
        elif isinstance(err, (*_http_errors(), ValueError)):
            refused = SignInRefused("The identity provider could not be reached or gave an answer iGot cannot read.",
                                    "Try again in a minute; if it keeps failing, tell an admin.", 502)
        else:
            return False
        self._log(f"Sign-in refused: {type(err).__name__}"
                  + (f" ({err.error})" if isinstance(err, AuthlibBaseError) and err.error else ""))
        raise refused from None
