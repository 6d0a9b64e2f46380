"""A real OpenID Connect provider for the sign-in tests: oidc-provider (Node) in a process of its
own, on 127.0.0.1 (tests/oidc/provider.mjs). No mock: iGot's relying party (igot.team.oidc, through
Authlib) talks to a certified provider over HTTP, and a real browser signs in on its pages.

The client's redirect URIs must be registered before the provider starts, and the app under test
learns its port only once it binds: so the fixture (conftest's `oidc_provider`) is a factory that
the test calls with its redirect URIs, once its app's socket is bound.

Node 20+ and `npm ci --prefix tests/oidc` (scripts/setup.sh does both) are needed: without them
the tests fail, saying so; they never skip.
"""

from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

import pytest

HERE = Path(__file__).resolve().parent / "oidc"
SCRIPT = HERE / "provider.mjs"

# Who can sign in at the test provider (the login name is the key; any password).
ACCOUNTS = {
    "ana": {"email": "ana@example.com", "email_verified": True, "name": "Ana"},
    "eve": {"email": "eve@elsewhere.org", "email_verified": True, "name": "Eve"},
    "ned": {"email": "ned@example.com", "email_verified": False, "name": "Ned"},
}


@dataclass
class OidcProvider:
    issuer: str
    client_id: str
    client_secret: str
    redirect_uris: tuple[str, ...]
    accounts: dict
    process: subprocess.Popen = field(repr=False)
    log: Path = field(repr=False)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            pipe.close()
        self.log.unlink(missing_ok=True)


def node() -> str:
    """Node's path, or the test fails saying what to install."""
    found = shutil.which("node")
    if not found:
        pytest.fail("The sign-in tests run a real OpenID provider on Node: install Node 20 and npm, "
                    "then run scripts/setup.sh (it runs npm ci --prefix tests/oidc).", pytrace=False)
    version = subprocess.run([found, "--version"], capture_output=True, text=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0] or 0) < 20:
        pytest.fail(f"The sign-in tests' OpenID provider needs Node 20 or newer; {found} is {version}: "
                    "install Node 20 and npm, then run scripts/setup.sh.", pytrace=False)
    if not (HERE / "node_modules" / "oidc-provider").is_dir():
        pytest.fail("The test OpenID provider's packages are not installed: run `npm ci --prefix tests/oidc` "
                    "(scripts/setup.sh does it; it needs Node 20 and npm).", pytrace=False)
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(redirect_uris: Sequence[str], accounts: Optional[dict] = None, claims_in_id_token: bool = False,
          timeout: float = 20.0) -> OidcProvider:
    """Start a provider whose one client may redirect to `redirect_uris`; returns once it answers.
    `claims_in_id_token`: the e-mail and name in the ID token too (else at userinfo only)."""
    binary = node()
    accounts = ACCOUNTS if accounts is None else accounts
    client_id, client_secret = "igot-test", secrets.token_urlsafe(24)
    env = {**os.environ, "IGOT_OIDC_CLIENT": json.dumps({"client_id": client_id, "client_secret": client_secret,
                                                         "redirect_uris": list(redirect_uris)}),
           "IGOT_OIDC_ACCOUNTS": json.dumps(accounts), "IGOT_OIDC_CLAIMS_IN_ID_TOKEN": "1" if claims_in_id_token else "0",
           "NODE_ENV": "development"}
    for attempt in range(3):  # another process may take the free port before node listens on it
        port = free_port()
        log = Path(tempfile.mkstemp(prefix="oidc-provider-", suffix=".log")[1])
        with log.open("w") as err:
            process = subprocess.Popen([binary, str(SCRIPT), str(port)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                       env=env, text=True)
        started = OidcProvider(f"http://127.0.0.1:{port}", client_id, client_secret, tuple(redirect_uris), accounts,
                               process, log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None:
            ready, _, _ = select.select([process.stdout], [], [], 0.1)
            if ready and process.stdout.readline().strip() == "READY":
                return started
        started.stop()
        said = log.read_text()
        if "cannot listen" not in said or attempt == 2:
            pytest.fail(f"The test OpenID provider did not start within {timeout:.0f} s:\n{said}", pytrace=False)
    raise AssertionError("unreachable")
