"""`igot serve --team` as the people of a team and an attacker meet it, without a browser: every
request needs a session, every change the page's token, every route the role it declares; the
cookie's flags; sign-ins slowed; a removed person stopped at once; plain HTTP refused off this
computer; a real HTTPS server with an openssl certificate."""

from __future__ import annotations

import hashlib
import http.client
import json
import ssl
import subprocess
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from igot.errors import IgotError
from igot.outputs import store
from igot.outputs.store import Library
from igot.team import people, roles
from igot.team.db import team_db
from igot.transcript import Transcript
from igot.workspace import access, team_server
from tests.test_highlights import interview

ORIGIN = "https://igot.team.test"
PASSWORD = "correct horse battery"


@pytest.fixture
def folder(tmp_path) -> Path:
    out = tmp_path / "library"
    out.mkdir()
    store.save(interview(), out, "joana", drive=False)
    return out


@pytest.fixture
def app(folder):
    where = team_server.Address("127.0.0.1", 443, ORIGIN)
    made, team = team_server.team_app(Library(folder), where)
    return made


def person(folder: Path, email: str, role: str, name: str) -> None:
    db = team_db(folder)
    people.accept(db, people.invite(db, email, role), name, PASSWORD)


def signed_in(app, folder: Path, email: str, role: str, name: str) -> TestClient:
    person(folder, email, role, name)
    client = TestClient(app, base_url=ORIGIN)
    r = client.post("/api/session", json={"email": email, "password": PASSWORD}, headers={"Origin": ORIGIN})
    assert r.status_code == 200, r.text
    page = client.get("/")
    token = page.text.split('name="igot-token" content="')[1].split('"')[0]
    client.headers["X-iGot-Token"] = token
    return client


def file_hash(folder: Path, stem: str = "joana") -> str:
    return hashlib.sha256((folder / f"{stem}.json").read_bytes()).hexdigest()


def highlight(client, stem="joana", **extra):
    version = client.get(f"/api/interviews/{stem}").json()["version"]
    return client.post(f"/api/interviews/{stem}/highlights", json={"version": version, "start": 0.0, "end": 2.0,
                                                                   "tags": ["pricing"], **extra})


def test_every_route_declares_what_it_needs_and_an_undeclared_one_is_not_built(app, folder):
    routes = access.api_routes(app.routes)
    assert len(routes) > 40 and all(access.declared(r) in (*roles.NEEDS, roles.SHARE, roles.PUBLIC, roles.WORKER) for r in routes)
    # A worker's need is the worker's routes', and theirs only (a worker's token reaches nothing else).
    assert {r.path for r in routes if access.declared(r) == roles.WORKER} == {
        "/api/worker/take", "/api/worker/jobs/{job_id}/recording", "/api/worker/jobs/{job_id}/progress",
        "/api/worker/jobs/{job_id}/result", "/api/worker/jobs/{job_id}/failed", "/api/worker/jobs/{job_id}/stages",
        "/api/worker/jobs/{job_id}/stages/{name}"}
    writes = {(m, r.path): access.declared(r) for r in routes for m in r.methods if m not in ("GET", "HEAD")}
    public = {k for k, need in writes.items() if need == roles.PUBLIC}
    assert public == {("POST", "/api/session"), ("POST", "/api/invites/{token}")}
    # What a link shared outside the team answers, with no session: read only, under /s/ only.
    shared = {r.path for r in routes if r.path.startswith("/s/")}
    assert shared == {"/s/{key}", "/s/{key}/embed", "/s/{key}/clip", "/s/{key}/clip/{n}", "/s/{key}/still.jpg"}
    assert all(access.declared(r) == roles.PUBLIC and r.methods == {"GET", "HEAD"} for r in routes if r.path in shared)

    from fastapi import APIRouter

    from igot.workspace import server
    from igot.workspace.routes import library as library_routes

    real = library_routes.router

    def sneaky(ctx):
        r = real(ctx)
        extra = APIRouter()
        extra.add_api_route("/api/sneaky", lambda: {"x": 1}, methods=["POST"])
        r.include_router(extra)
        return r

    library_routes.router = sneaky
    try:
        with pytest.raises(RuntimeError, match="/api/sneaky"):
            server.create_app(Library(folder), server.Door(443), team=access.Team(team_db(folder), ORIGIN))
    finally:
        library_routes.router = real


def test_nobody_signed_in_reads_or_changes_nothing(app, folder):
    before = file_hash(folder)
    bare = TestClient(app, base_url=ORIGIN, follow_redirects=False)
    page = bare.get("/", headers={"Sec-Fetch-Mode": "navigate"})
    assert page.status_code == 303 and page.headers["location"] == "/signin"
    for path in ("/api/library", "/api/interviews/joana", "/media/joana", "/files/joana.md", "/api/search?q=x",
                 "/api/activity", "/api/people"):
        r = bare.get(path)
        assert r.status_code == 401 and "sign in" in r.json()["error"].lower(), path
    r = bare.post("/api/interviews/joana/highlights", json={"version": "x", "start": 0, "end": 1}, headers={"Origin": ORIGIN})
    assert r.status_code == 401
    # A made-up cookie is no session.
    bare.cookies.set("__Host-igot-session", "guessed")
    assert bare.get("/api/library").status_code == 401
    assert file_hash(folder) == before
    assert bare.get("/signin").status_code == 200 and bare.get("/static/signin.js").status_code == 200


def test_the_session_cookie_is_out_of_scripts_reach_and_bound_to_the_site(app, folder):
    person(folder, "ana@example.com", "researcher", "Ana")
    client = TestClient(app, base_url=ORIGIN)
    r = client.post("/api/session", json={"email": "Ana@Example.com", "password": PASSWORD}, headers={"Origin": ORIGIN})
    cookie = r.headers["set-cookie"]
    assert cookie.startswith("__Host-igot-session=") and "HttpOnly" in cookie and "Secure" in cookie
    assert "SameSite=lax" in cookie or "SameSite=Lax" in cookie
    assert "Domain" not in cookie and "Path=/" in cookie
    value = cookie.split(";")[0].split("=", 1)[1]
    assert value.encode() not in (folder / ".igot" / "team.sqlite3").read_bytes()  # only its hash is kept


def test_a_change_needs_the_pages_token_and_the_teams_own_origin(app, folder):
    ana = signed_in(app, folder, "ana@example.com", "researcher", "Ana")
    token = ana.headers.pop("X-iGot-Token")
    before = file_hash(folder)
    # A page of another site making the browser post with Ana's cookie: no token, another origin.
    r = highlight(ana)
    assert r.status_code == 403 and "own page" in r.json()["error"]
    for headers in ({"Origin": "https://evil.example", "X-iGot-Token": token},
                    {"Sec-Fetch-Site": "cross-site", "X-iGot-Token": token},
                    {"X-iGot-Token": "not-the-token"}):
        version = ana.get("/api/interviews/joana").json()["version"]
        r = ana.post("/api/interviews/joana/highlights", json={"version": version, "start": 0, "end": 2}, headers=headers)
        assert r.status_code == 403, headers
    # A sign-in form posted from elsewhere (signing the visitor in as someone else) is refused.
    r = TestClient(app, base_url=ORIGIN).post("/api/session", json={"email": "ana@example.com", "password": PASSWORD},
                                              headers={"Origin": "https://evil.example"})
    assert r.status_code == 403
    r = TestClient(app, base_url=ORIGIN).post("/api/session", json={"email": "ana@example.com", "password": PASSWORD})
    assert r.status_code == 403
    # Another Host (a name pointed at this server by someone else) is refused.
    assert TestClient(app, base_url="https://rebound.example").get("/signin").status_code == 403
    assert file_hash(folder) == before
    ana.headers["X-iGot-Token"] = token
    assert highlight(ana).status_code == 201


def test_each_role_is_checked_by_the_server(app, folder):
    vera = signed_in(app, folder, "vera@example.com", "viewer", "Vera")
    rui = signed_in(app, folder, "rui@example.com", "researcher", "Rui")
    before = file_hash(folder)
    # A viewer reads, searches and comments ...
    assert vera.get("/api/library").status_code == 200 and vera.get("/api/search?q=price").status_code == 200
    # ... but every write is refused by the server, whatever the page shows.
    r = highlight(vera)
    assert r.status_code == 403 and "viewer" in r.json()["error"] and "researcher" in r.json()["error"]
    version = vera.get("/api/interviews/joana").json()["version"]
    assert vera.post("/api/interviews/joana/corrections", json={"version": version, "kind": "words", "phrase": 0,
                                                               "text": "hacked"}).status_code == 403
    assert vera.post("/api/tags/rename", json={"old": "a", "new": "b"}).status_code == 403
    assert vera.put("/api/glossary", json={"terms": ["x"], "version": ""}).status_code == 403
    assert vera.post("/api/queue", json={"links": "https://example.com/x"}).status_code == 403
    assert file_hash(folder) == before
    # A researcher changes the interviews but not the team.
    made = highlight(rui)
    assert made.status_code == 201
    hid = made.json()["id"]
    assert vera.post(f"/api/interviews/joana/highlights/{hid}/comments", json={"text": "Seen this twice"}).status_code == 201
    assert rui.get("/api/people").status_code == 403
    assert rui.post("/api/people", json={"email": "x@example.com", "role": "admin"}).status_code == 403
    # Who made it is kept in the interview and the team's activity.
    saved = Transcript.load(folder / "joana.json").highlights
    assert [h.by for h in saved] == ["Rui"]
    feed = vera.get("/api/activity").json()["items"]
    assert [(i["name"], i["kind"]) for i in feed][:2] == [("Vera", "commented"), ("Rui", "highlighted")]


def test_an_admin_manages_people_and_a_removed_person_stops_at_once(app, folder):
    ada = signed_in(app, folder, "ada@example.com", "admin", "Ada")
    rui = signed_in(app, folder, "rui@example.com", "researcher", "Rui")
    invite = ada.post("/api/people", json={"email": "new@example.com", "role": "viewer"})
    assert invite.status_code == 201 and invite.json()["link"].startswith(f"{ORIGIN}/invite/")
    assert ada.patch("/api/people/rui@example.com", json={"role": "viewer"}).status_code == 200
    assert highlight(rui).status_code == 403  # the new role holds on the next request
    assert ada.delete("/api/people/rui@example.com").status_code == 200
    assert rui.get("/api/library").status_code == 401
    r = TestClient(app, base_url=ORIGIN).post("/api/session", json={"email": "rui@example.com", "password": PASSWORD},
                                              headers={"Origin": ORIGIN})
    assert r.status_code == 401


def test_an_invite_signs_a_person_in_once(app, folder):
    db = team_db(folder)
    token = people.invite(db, "nia@example.com", "researcher")
    nia = TestClient(app, base_url=ORIGIN)
    assert nia.get(f"/api/invites/{token}").json()["email"] == "nia@example.com"
    r = nia.post(f"/api/invites/{token}", json={"name": "Nia", "password": PASSWORD}, headers={"Origin": ORIGIN})
    assert r.status_code == 201 and nia.get("/api/me").json() == {
        "email": "nia@example.com", "name": "Nia", "role": "researcher",
        "can": {"read": True, "comment": True, "write": True, "manage": False}}
    again = TestClient(app, base_url=ORIGIN).post(f"/api/invites/{token}", json={"name": "Eve", "password": PASSWORD},
                                                  headers={"Origin": ORIGIN})
    assert again.status_code >= 400 and "admin" in again.json()["error"]


def test_twenty_wrong_passwords_are_slowed_down(app, folder):
    person(folder, "ana@example.com", "researcher", "Ana")
    person(folder, "vera@example.com", "viewer", "Vera")
    # An unknown e-mail is answered as a wrong password is: nobody learns who has an account.
    other = TestClient(app, base_url=ORIGIN, client=("192.0.2.7", 50000)).post("/api/session", json={"email": "who@example.com", "password": "x"},
                                                  headers={"Origin": ORIGIN})
    known = TestClient(app, base_url=ORIGIN, client=("192.0.2.8", 50000)).post("/api/session", json={"email": "vera@example.com", "password": "x"},
                                                  headers={"Origin": ORIGIN})
    assert other.status_code == known.status_code == 401 and other.json() == known.json()
    attacker = TestClient(app, base_url=ORIGIN)
    answers = [attacker.post("/api/session", json={"email": "ana@example.com", "password": f"guess {i}"},
                             headers={"Origin": ORIGIN}).status_code for i in range(20)]
    assert answers[:5] == [401] * 5 and set(answers[5:]) == {429}
    # Even the right password waits now, and the answer says how long.
    r = attacker.post("/api/session", json={"email": "ana@example.com", "password": PASSWORD}, headers={"Origin": ORIGIN})
    assert r.status_code == 429 and "wait" in r.json()["error"]


def test_sign_out_everywhere_ends_every_session(app, folder):
    one = signed_in(app, folder, "ana@example.com", "researcher", "Ana")
    two = TestClient(app, base_url=ORIGIN)
    two.post("/api/session", json={"email": "ana@example.com", "password": PASSWORD}, headers={"Origin": ORIGIN})
    assert two.get("/api/library").status_code == 200
    assert one.post("/api/session/everywhere", json={}).status_code == 200
    assert one.get("/api/library").status_code == 401 and two.get("/api/library").status_code == 401


def test_plain_http_off_this_computer_is_refused_and_a_proxy_needs_its_https_address(tmp_path):
    with pytest.raises(IgotError, match="plain HTTP"):
        team_server.address("0.0.0.0", 8443)
    with pytest.raises(IgotError, match="public-url"):
        team_server.address("0.0.0.0", 8443, behind_proxy="127.0.0.1")
    where = team_server.address("0.0.0.0", 8443, behind_proxy="127.0.0.1", public_url="https://igot.example.com")
    assert where.origin == "https://igot.example.com" and where.proxy == "127.0.0.1"
    assert team_server.address("127.0.0.1", 8443).origin == "http://127.0.0.1:8443"
    with pytest.raises(IgotError, match="both"):
        team_server.address("0.0.0.0", 8443, tls_cert=tmp_path / "c.pem")


def certificate(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


def test_a_real_https_server_signs_in_over_tls_only(folder, tmp_path):
    cert, key = certificate(tmp_path)
    sock = team_server.bind(0, "127.0.0.1")
    port = sock.getsockname()[1]
    where = team_server.address("127.0.0.1", port, cert, key)
    assert where.origin == f"https://127.0.0.1:{port}"
    person(folder, "ana@example.com", "researcher", "Ana")
    running = team_server.start_team(folder, where, sock=sock)
    try:
        trusted = ssl.create_default_context(cafile=str(cert))
        conn = http.client.HTTPSConnection("127.0.0.1", port, context=trusted, timeout=10)
        body = json.dumps({"email": "ana@example.com", "password": PASSWORD})
        conn.request("POST", "/api/session", body, {"Content-Type": "application/json", "Origin": where.origin,
                                                    "Host": f"127.0.0.1:{port}"})
        answer = conn.getresponse()
        answer.read()
        assert answer.status == 200 and "Secure" in answer.getheader("set-cookie")
        assert "max-age" in (answer.getheader("strict-transport-security") or "")
        # Plain HTTP to the same port is not answered: nothing is served unencrypted.
        plain = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            plain.request("GET", "/signin")
            status = plain.getresponse().status
        except (http.client.HTTPException, OSError):
            status = None
        assert status is None
    finally:
        running.stop()


def test_a_team_signing_in_at_once_from_one_office_address_is_not_slowed(folder):
    """Twenty people behind one router sign in at nine: every one gets in (each sign-in is counted
    while its password is checked; none may be refused for the others')."""
    import threading

    from benchmarks.workspace_speed import Person

    db = team_db(folder)
    for i in range(20):
        people.accept(db, people.invite(db, f"p{i}@example.com", "researcher"), f"P{i}", PASSWORD)
    sock = team_server.bind(0)
    where = team_server.address("127.0.0.1", sock.getsockname()[1])
    running = team_server.start_team(folder, where, sock=sock)
    got: list[str] = []

    def sign_in(i: int) -> None:
        try:
            Person(where.port, f"p{i}@example.com", PASSWORD)
            got.append("in")
        except AssertionError as err:
            got.append(f"refused {err}")

    try:
        threads = [threading.Thread(target=sign_in, args=(i,)) for i in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        running.stop()
    assert got == ["in"] * 20


def test_behind_a_proxy_the_address_it_forwards_is_the_one_slowed_and_no_one_else_is_believed(folder):
    """`--behind-proxy 127.0.0.1 --public-url https://igot.example.com`, as the README's Caddy or
    nginx configuration runs it: the proxy's X-Forwarded-For names the client, so thirty wrong
    passwords from one client's address slow that client, not the whole office behind the proxy;
    a client that is not the proxy cannot pass for another address."""
    sock = team_server.bind(0)
    port = sock.getsockname()[1]
    where = team_server.address("127.0.0.1", port, behind_proxy="127.0.0.1", public_url="https://igot.example.com")
    person(folder, "ana@example.com", "researcher", "Ana")
    running = team_server.start_team(folder, where, sock=sock)

    def sign_in(client: str, password: str, email: str, source: str = "127.0.0.1") -> int:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=(source, 0))
        conn.request("POST", "/api/session", json.dumps({"email": email, "password": password}),
                     {"Content-Type": "application/json", "Host": "igot.example.com", "Origin": "https://igot.example.com",
                      "X-Forwarded-For": client, "X-Forwarded-Proto": "https"})
        answer = conn.getresponse()
        answer.read()
        return answer.status

    try:
        guesses = [sign_in("203.0.113.5", "wrong guess", f"who{i}@example.com") for i in range(31)]
        assert guesses[:30] == [401] * 30 and guesses[30] == 429
        assert sign_in("203.0.113.9", PASSWORD, "ana@example.com") == 200  # a colleague behind the same proxy
        # Someone reaching iGot not through the proxy (another address) names a new client each time:
        # not believed, counted as who they are.
        spoofed = [sign_in(f"198.51.100.{i}", "wrong guess", f"x{i}@example.com", source="127.0.0.2") for i in range(31)]
        assert spoofed[:30] == [401] * 30 and spoofed[30] == 429
        # Asked by its plain address (not the public one): refused.
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/signin")
        assert conn.getresponse().status == 403
    finally:
        running.stop()
