"""The workspace's server (`igot serve`) as an attacker and a user meet it, without a browser:
the door (Host, Origin), the folder's edge, every write checked, a stale version refused, the
board, tag rename and search; and `igot tags` in a terminal."""

from __future__ import annotations

import hashlib
import http.client
import io
import json
import math
import os
import struct
import wave
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from igot.cli import main
from igot.outputs import highlights, library, store
from igot.search.words import search
from igot.transcript import Source, Transcript
from igot.workspace import clips, server, tags, views
from igot.workspace.guard import Door, inside
from igot.outputs.store import Library
from tests.test_highlights import interview

PORT = 8765
HOME = f"http://127.0.0.1:{PORT}"


def tone(path: Path, seconds: float = 20.0, rate: int = 8000) -> Path:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"".join(struct.pack("<h", int(3000 * math.sin(i / 8))) for i in range(int(seconds * rate))))
    return path


@pytest.fixture
def folder(tmp_path) -> Path:
    """A library of three interviews: one linked to YouTube, one with its recording in the folder,
    one Portuguese with its recording outside; plus a damaged file and one from a newer iGot."""
    out = tmp_path / "library"
    out.mkdir()
    store.save(interview(), out, "joana", drive=False)
    local = replace(interview(), source=Source("Interview with Bruno", None, str(tone(out / "bruno.wav")), "file"))
    store.save(local, out, "bruno", drive=False)
    outside = tone(tmp_path / "carla.wav")
    pt = replace(interview(), language="pt", source=Source("Entrevista com Carla", None, str(outside), "file"))
    store.save(pt, out, "carla", drive=False)
    (out / "broken.json").write_text('{"source": {"title": "x"}, "phrases": [', encoding="utf-8")
    newer = json.loads(interview().to_json())
    newer["schema_version"] = 99
    (out / "future.json").write_text(json.dumps(newer), encoding="utf-8")
    (tmp_path / "secret.txt").write_text("not yours")
    return out


@pytest.fixture
def client(folder) -> TestClient:
    door = Door(PORT)
    return TestClient(server.create_app(Library(folder), door), base_url=HOME, headers={"X-iGot-Token": door.token})


def snapshot(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def add(client, stem="joana", version=None, **body):
    version = version or client.get(f"/api/interviews/{stem}").json()["version"]
    return client.post(f"/api/interviews/{stem}/highlights", json={"version": version, **body})


# --- the door -----------------------------------------------------------------------------------
@pytest.mark.parametrize("headers", [
    {"Host": "evil.example:8765"},  # DNS rebinding: a site's name pointed at 127.0.0.1
    {"Host": "127.0.0.1:9999"},
    {"Origin": "https://evil.example"},
    {"Origin": "http://127.0.0.1:9999"},
    {"Origin": "null"},
    {"Sec-Fetch-Site": "cross-site"},
])
def test_a_foreign_host_or_origin_is_refused_and_changes_nothing(client, folder, headers):
    before = snapshot(folder)
    version = client.get("/api/interviews/joana").json()["version"]
    for method, path, body in [("GET", "/api/library", None), ("GET", "/api/interviews/joana", None),
                               ("GET", "/media/bruno", None),
                               ("POST", "/api/interviews/joana/highlights", {"version": version, "start": 0, "end": 3, "tags": ["x"]}),
                               ("POST", "/api/tags/rename", {"old": "pricing", "new": "x"}),
                               ("GET", "/api/ask?q=price", None), ("GET", "/api/themes", None),
                               ("POST", "/api/themes/move", {"version": "x", "tag": "", "highlight": "joana/x", "to": "new"})]:
        r = client.request(method, path, json=body, headers=headers)
        assert r.status_code == 403, (method, path)
        assert r.text.startswith("Refused:") and r.text.count("\n") == 1
    assert snapshot(folder) == before


def test_another_site_may_open_the_page_by_a_link_and_nothing_else(client, folder):
    """A link followed from another site (or Colab's frame) opens the workspace; a link to what
    runs work (an answer by the LLM, a clip by ffmpeg, a tag's export) does not."""
    before = snapshot(folder)
    link = {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"}
    assert client.get("/", headers=link).status_code == 200
    for path in ("/api/ask/answer?q=price", "/api/tag/reel?name=pricing", "/api/tag/export?name=pricing&format=csv",
                 "/api/library", "/media/bruno", "/files/joana.html"):
        r = client.get(path, headers=link)
        assert r.status_code == 403 and r.text.startswith("Refused:"), path
    assert snapshot(folder) == before


def test_its_own_addresses_are_answered(client):
    for host in ("127.0.0.1:8765", "localhost:8765"):
        assert client.get("/api/library", headers={"Host": host, "Origin": f"http://{host}"}).status_code == 200
    colab = Door(PORT, ("https://8765-m-s-abc.prod.colab.dev",))
    assert colab.refusal("8765-m-s-abc.prod.colab.dev", "https://8765-m-s-abc.prod.colab.dev") is None
    assert colab.refusal("evil.example", None)


def test_nothing_outside_the_library_folder_is_served(folder, tmp_path):
    (folder / "out").symlink_to(tmp_path / "secret.txt")
    assert inside(folder, "joana.html") == (folder / "joana.html").resolve()
    for bad in ["../secret.txt", "a/../../secret.txt", "/etc/passwd", str(tmp_path / "secret.txt"), "out", ".igot/library-cache.json",
                "..\\secret.txt", "C:/Windows/win.ini", "", "missing.html", "."]:
        assert inside(folder, bad) is None, bad
    # Over the wire, with the path sent as written (no client tidying "../" away).
    running = server.start(folder)
    try:
        for path in ["/files/../secret.txt", "/files/%2e%2e/secret.txt", "/files/..%2fsecret.txt", "/files/%2Fetc%2Fpasswd",
                     "/files/out", "/static/..%2f..%2fcli.py", "/media/..%2fsecret"]:
            conn = http.client.HTTPConnection("127.0.0.1", running.port, timeout=5)
            conn.putrequest("GET", path, skip_host=True)
            conn.putheader("Host", f"127.0.0.1:{running.port}")
            conn.endheaders()
            answer = conn.getresponse()
            body = answer.read()
            assert answer.status in (403, 404) and b"not yours" not in body and b"root:" not in body, path
        conn = http.client.HTTPConnection("127.0.0.1", running.port, timeout=5)
        conn.request("GET", "/files/joana.html", headers={"X-iGot-Token": running.token})
        assert conn.getresponse().status == 200
    finally:
        running.stop()


def test_pages_carry_a_content_security_policy(client):
    r = client.get("/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    policy = r.headers["content-security-policy"]
    assert "script-src 'self' https://www.youtube.com" in policy and "frame-ancestors 'self'" in policy
    assert client.get("/static/workspace.js").status_code == 200
    assert client.get("/static/secret.js").status_code == 404


# --- reading ------------------------------------------------------------------------------------
def test_the_library_lists_interviews_and_says_why_files_were_skipped(client):
    data = client.get("/api/library").json()
    assert sorted(iv["stem"] for iv in data["interviews"]) == ["bruno", "carla", "joana"]
    why = {s["file"]: s["why"] for s in data["skipped"]}
    assert "not valid JSON" in why["broken.json"] and "newer iGot" in why["future.json"]
    assert client.get("/api/interviews/future").status_code == 400
    assert "newer" in client.get("/api/interviews/future").json()["error"]
    assert client.get("/api/interviews/nobody").status_code == 404


def test_an_interview_page_has_its_player_and_every_word_placed(client):
    joana = client.get("/api/interviews/joana").json()
    assert joana["player"] == {"kind": "youtube", "id": "abc123XYZ_0", "url": "https://www.youtube.com/watch?v=abc123XYZ_0"}
    p = joana["phrases"][2]
    assert [p["text"][c0:c1] for c0, c1, _, _ in p["words"]][:3] == ["And", "the", "onboarding"]
    assert [s["name"] for s in joana["speakers"]] == ["Ana", "Joana"] and joana["palette"][0].startswith("#")
    assert client.get("/api/interviews/bruno").json()["player"] == {"kind": "audio", "src": "media/bruno"}
    assert client.get("/api/interviews/carla").json()["player"]["kind"] == "audio"  # its recording, outside the folder


def test_local_recordings_are_served_in_ranges_so_seeking_works(client, folder):
    whole = (folder / "bruno.wav").read_bytes()
    r = client.get("/media/bruno", headers={"Range": "bytes=1000-1999"})
    assert r.status_code == 206 and r.content == whole[1000:2000]
    assert r.headers["content-range"] == f"bytes 1000-1999/{len(whole)}" and r.headers["content-type"] == "audio/x-wav"
    assert client.get("/media/joana").status_code == 404  # a YouTube interview: nothing local


# --- writing ------------------------------------------------------------------------------------
def test_a_highlight_is_saved_through_every_export(client, folder):
    r = add(client, start=4.0, end=8.9, tags=["pricing"], note="too expensive")
    assert r.status_code == 201
    made = r.json()
    assert made["version"] != client.get("/api/library").json() and made["highlights"][0]["quote"].startswith("Honestly")
    saved = Transcript.load(folder / "joana.json")
    assert [h.tags for h in saved.highlights] == [["pricing"]]
    assert '<mark class="hl" title="pricing">' in (folder / "joana.html").read_text()
    assert "### pricing (1)" in (folder / "joana.md").read_text()
    assert client.get("/api/interviews/joana").json()["version"] == made["version"]
    hid = made["id"]
    edited = client.patch(f"/api/interviews/joana/highlights/{hid}", json={"version": made["version"], "tags": ["price", "pricing"]})
    assert edited.status_code == 200 and edited.json()["highlights"][0]["tags"] == ["price", "pricing"]
    gone = client.delete(f"/api/interviews/joana/highlights/{hid}", params={"version": edited.json()["version"]})
    assert gone.status_code == 200 and Transcript.load(folder / "joana.json").highlights == []


@pytest.mark.parametrize("body,status,words", [
    ({"start": 5, "end": 200, "tags": ["x"]}, 400, "not a stretch of this recording"),
    ({"start": "soon", "end": 3, "tags": ["x"]}, 400, "not numbers"),
    ({"start": 0, "end": 3, "tags": ["x" * 61]}, 400, "Keep a tag to 60"),
    ({"start": 0, "end": 3, "tags": [], "note": "n" * 2001}, 400, "Keep a note to 2000"),
    ({"start": 0, "end": 3, "tags": [{"a": 1}]}, 400, "A tag must be text"),
])
def test_a_bad_write_gets_one_clear_line_and_changes_nothing(client, folder, body, status, words):
    before = snapshot(folder)
    r = add(client, **body)
    assert r.status_code == status and words in r.json()["error"] and "\n" not in r.json()["error"]
    assert snapshot(folder) == before


def test_malformed_requests_change_nothing(client, folder):
    before = snapshot(folder)
    version = client.get("/api/interviews/joana").json()["version"]
    assert client.post("/api/interviews/joana/highlights", content=b"[1, 2]", headers={"Content-Type": "application/json"}).status_code == 400
    assert client.post("/api/interviews/joana/highlights", content=b"{nope", headers={"Content-Type": "application/json"}).status_code == 400
    # A form post (what a foreign page could send without asking) is not JSON: refused.
    r = client.post("/api/interviews/joana/highlights", content=f"version={version}&start=0&end=3",
                    headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 415
    assert client.post("/api/interviews/joana/highlights", json={"start": 0, "end": 3}).status_code == 400  # no version
    assert client.post("/api/interviews/..%2Fsecret/highlights", json={"version": version, "start": 0, "end": 3}).status_code == 404
    big = {"version": version, "start": 0, "end": 3, "note": "x" * (server.MAX_BODY + 1)}
    assert client.post("/api/interviews/joana/highlights", json=big).status_code == 413  # too large
    assert client.patch("/api/interviews/joana/highlights/nope", json={"version": version, "note": "x"}).status_code == 400
    assert snapshot(folder) == before


def test_a_write_on_a_stale_version_keeps_both_or_is_refused_and_loses_nothing(client, folder):
    """Two tabs open the same interview; the first saves a highlight; the second, still on the old
    version, saves another: both are kept (neither touched the other's). A change to the first's
    highlight from the old version, which never saw it, is refused and changes nothing."""
    old = client.get("/api/interviews/joana").json()["version"]
    first = add(client, version=old, start=4.0, end=8.9, tags=["pricing"])
    assert first.status_code == 201
    second = add(client, version=old, start=9.0, end=13.0, tags=["onboarding"])
    assert second.status_code == 201 and second.json()["merged"] is True
    assert [h.tags for h in Transcript.load(folder / "joana.json").highlights] == [["pricing"], ["onboarding"]]
    before = snapshot(folder)
    gone = client.delete(f"/api/interviews/joana/highlights/{first.json()['id']}", params={"version": old})
    assert gone.status_code == 409 and gone.json()["now"]["tags"] == ["pricing"]
    assert snapshot(folder) == before


@pytest.mark.parametrize("fail_at", [1, 2, 3])
def test_a_crash_in_the_middle_of_a_write_leaves_the_json_whole(client, folder, monkeypatch, fail_at):
    """The disk fills up as the files of a save take their places (a highlight writes the JSON,
    the HTML and the Markdown), at the first, second or third: every file stays as it was."""
    before, html_before = (folder / "joana.json").read_text(), (folder / "joana.html").read_text()
    real_replace, calls = os.replace, []

    def filling_up(src, dst):
        if ".igot" not in Path(dst).parts:  # the search cache is best effort
            calls.append(dst)
            if len(calls) == fail_at:
                raise OSError(28, "No space left on device")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", filling_up)
    r = add(client, start=4.0, end=8.9, tags=["pricing"])
    monkeypatch.undo()
    assert r.status_code == 500 and "No space left on device" in r.json()["error"]
    assert (folder / "joana.json").read_text() == before  # all or nothing: the files already in place went back
    assert (folder / "joana.html").read_text() == html_before
    assert not [p for p in folder.iterdir() if p.name.endswith((".tmp", ".old"))]


# --- tags and search ------------------------------------------------------------------------------
def test_the_board_counts_highlights_interviews_and_people_and_a_rename_reaches_every_interview(client, folder):
    add(client, start=4.0, end=8.9, tags=["pricing"])
    add(client, "bruno", start=4.0, end=8.9, tags=["Pricing", "team"])
    add(client, "carla", start=9.5, end=10.95, tags=["onboarding"])
    board = {r["tag"].casefold(): r for r in client.get("/api/tags").json()["tags"]}  # "pricing" and "Pricing": one tag
    assert board["pricing"]["tag"] in ("pricing", "Pricing")
    assert {k: board["pricing"][k] for k in ("highlights", "interviews", "people")} == {
        "highlights": 2, "interviews": 2, "people": 1}  # Joana, named in both
    assert board["onboarding"]["highlights"] == 1
    quotes = client.get("/api/tag", params={"name": "PRICING"}).json()["quotes"]
    assert {q["stem"] for q in quotes} == {"joana", "bruno"} and all(q["speaker"] == "Joana" for q in quotes)
    csv_text = client.get("/api/tag/export", params={"name": "pricing", "format": "csv"}).text
    assert csv_text.splitlines()[0] == ",".join(tags.CSV_COLUMNS) and csv_text.count("Honestly the price") == 2
    md = client.get("/api/tag/export", params={"name": "pricing", "format": "md"}).text
    assert md.startswith("# pricing") and "## Interview with Bruno" in md
    r = client.post("/api/tags/rename", json={"old": "pricing", "new": "cost"})
    assert sorted(r.json()["changed"]) == ["bruno", "joana"]
    for stem in ("joana", "bruno"):
        assert "cost" in Transcript.load(folder / f"{stem}.json").highlights[0].tags
        assert "### cost (1)" in (folder / f"{stem}.md").read_text()
    assert client.post("/api/tags/rename", json={"old": "pricing", "new": "cost"}).status_code == 404
    # A merge: onboarding into cost.
    client.post("/api/tags/rename", json={"old": "onboarding", "new": "Cost"})
    # One tag, whichever spelling the newest interview has ("cost" or "Cost"): tags are one whatever the case.
    assert {r["tag"].casefold(): r["highlights"] for r in client.get("/api/tags").json()["tags"]}["cost"] == 3


def test_the_csv_never_starts_a_cell_with_a_formula():
    q = tags.Quote("t", "=HYPERLINK(\"x\")", "s", "2026-01-01", "-Ana", 0, 0, 1, "+1 quote", "@note", "h", None)
    row = tags.quotes_csv([q]).splitlines()[1]
    assert "'=HYPERLINK" in row and "'-Ana" in row and "'+1 quote" in row and "'@note" in row


def test_search_gives_the_library_search_hits_filtered(client, folder):
    add(client, start=4.0, end=8.9, tags=["pricing"])
    interviews = library.load_interviews(folder)
    for q in ("the", "week", '"small team"'):
        got = client.get("/api/search", params={"q": q}).json()
        want = search(interviews, q)
        assert got["count"] == len(want) and [h["text"] for h in got["hits"]] == [h.text for h in want]
    assert {h["stem"] for h in client.get("/api/search", params={"q": "the", "interview": "carla"}).json()["hits"]} == {"carla"}
    assert {h["stem"] for h in client.get("/api/search", params={"q": "the", "language": "pt"}).json()["hits"]} == {"carla"}
    by_ana = client.get("/api/search", params={"q": "week", "speaker": "Ana"}).json()["hits"]
    assert len(by_ana) == 3 and {h["speaker"] for h in by_ana} == {"Ana"}  # not Joana, whose name holds "ana"
    tagged = client.get("/api/search", params={"q": "the", "tag": "pricing"}).json()["hits"]
    assert [(h["stem"], h["phrase"]) for h in tagged] == [("joana", 1)]


def test_search_without_a_meaning_index_finds_words_and_says_in_one_line_what_meaning_needs(client):
    got = client.get("/api/search", params={"q": "week"}).json()
    assert got["count"] == 6 and not got["meaning"] and {h["how"] for h in got["hits"]} == {"words"}
    assert "searched by words only" in got["line"] and "igot index" in got["line"] and "\n" not in got["line"]


# --- ask ------------------------------------------------------------------------------------------
def test_ask_without_a_model_gives_the_phrases_alone_and_says_why(client):
    found = client.get("/api/ask", params={"q": "price", "interview": "joana"}).json()
    assert [(h["stem"], h["phrase"], h["text"]) for h in found["phrases"]] == [
        ("joana", 1, "Honestly the price is too high for a small team.")]
    assert "igot index" in found["line"]
    # The LLM is looked for when first asked: not on this computer (no hub here), one line says so.
    answer = client.get("/api/ask/answer", params={"q": "price", "interview": "joana"}).json()
    assert answer["points"] == [] and answer["line"].startswith("No written answer, the phrases alone")
    assert [h["text"] for h in answer["phrases"]] == [h["text"] for h in found["phrases"]]
    again = client.get("/api/ask", params={"q": "price"}).json()
    assert again["llm"] is False and again["llm_line"] == answer["line"]
    for q in ("", " ", "x" * 1001):
        r = client.get("/api/ask", params={"q": q})
        assert r.status_code == 400 and r.json()["error"].count("\n") == 0


def test_ask_narrowed_by_a_tag_keeps_to_its_highlights(client):
    add(client, start=9.5, end=10.95, tags=["onboarding"])
    found = client.get("/api/ask", params={"q": "week", "tag": "Onboarding"}).json()["phrases"]
    assert [(h["stem"], h["phrase"]) for h in found] == [("joana", 2)]
    assert client.get("/api/ask", params={"q": "week", "tag": "nothing"}).json()["phrases"] == []


# --- themes ---------------------------------------------------------------------------------------
def board_keys(board: dict) -> list[str]:
    return [c["key"] for t in board["themes"] for c in t["cards"]]


def all_highlights(folder: Path) -> list[str]:
    return sorted(f"{stem}/{h.id}" for stem in ("joana", "bruno", "carla") for h in Transcript.load(folder / f"{stem}.json").highlights or [])


def test_themes_without_a_model_are_grouped_by_tag_and_a_move_is_checked_kept_and_versioned(client, folder):
    add(client, "joana", start=4.0, end=8.9, tags=["pricing"])
    add(client, "bruno", start=4.0, end=8.9, tags=["pricing"])
    add(client, "carla", start=9.5, end=10.95, tags=["onboarding"])
    board = client.get("/api/themes").json()
    assert not board["by_meaning"] and "igot index" in board["line"]
    assert sorted(board_keys(board)) == all_highlights(folder) and len(set(board_keys(board))) == 3
    assert [(t["name"], len(t["cards"]), t["interviews"], t["people"]) for t in board["themes"]] == [
        ("pricing", 2, 2, 1), ("onboarding", 1, 1, 1)]  # Joana said both pricing quotes
    pricing, onboarding = board["themes"]
    moved = pricing["cards"][0]["key"]
    kept = folder / ".igot" / "themes.json"

    def move(version=board["version"], highlight=moved, to=onboarding["id"], **extra):
        return client.post("/api/themes/move", json={"version": version, "tag": "", "highlight": highlight, "to": to, **extra})

    before = snapshot(folder)
    for r, status, words in [(move(highlight="joana/nothing"), 404, "No highlight"), (move(to="t-nothing"), 404, "No theme"),
                             (move(version=""), 400, "which version"), (move(to=3), 400, "A move needs"),
                             (move(tag=["x"]), 400, "must be text"),
                             (client.post("/api/themes/move", content=b"{", headers={"Content-Type": "application/json"}), 400, "not valid JSON"),
                             (client.post("/api/themes/move", content=b"{}", headers={"Content-Type": "text/plain"}), 415, "as JSON")]:
        assert r.status_code == status and words in r.json()["error"] and "\n" not in r.json()["error"], r.text
    assert snapshot(folder) == before and not kept.exists()

    done = move()
    assert done.status_code == 200
    after = done.json()
    assert next(t for t in after["themes"] if t["id"] == onboarding["id"])["cards"][-1]["key"] == moved
    assert sorted(board_keys(after)) == all_highlights(folder) and len(set(board_keys(after))) == 3
    assert client.get("/api/themes").json() == after  # kept: drawn from the file
    written = kept.read_bytes()
    assert json.loads(written)["boards"][""]["themes"]
    # A move made on the board before: refused, nothing written.
    stale = move(to="new")
    assert stale.status_code == 409 and "reload" in stale.json()["error"].lower()
    assert kept.read_bytes() == written
    # A highlight saved meanwhile changes the board too: its version goes stale, the new highlight is on it once.
    add(client, "carla", start=0.0, end=3.0, tags=["pricing"])
    fresh = client.get("/api/themes").json()
    assert fresh["version"] != after["version"] and sorted(board_keys(fresh)) == all_highlights(folder)
    assert move(version=after["version"], to="new").status_code == 409
    # To a theme of its own; a theme emptied by a move leaves the board.
    alone = move(version=fresh["version"], highlight=board_keys(fresh)[0], to="new").json()
    assert len(alone["themes"][-1]["cards"]) == 1 and sorted(board_keys(alone)) == all_highlights(folder)
    # One tag's board is its own.
    tagged = client.get("/api/themes", params={"tag": "PRICING"}).json()
    assert sorted(board_keys(tagged)) == sorted(f"{c['stem']}/{c['id']}" for t in fresh["themes"] for c in t["cards"] if "pricing" in c["tags"])
    # A damaged file: the board is drawn afresh and says so.
    kept.write_text("{not json", encoding="utf-8")
    damaged = client.get("/api/themes").json()
    assert "damaged" in damaged["line"] and sorted(board_keys(damaged)) == all_highlights(folder)


def test_igot_tags_lists_and_renames_in_a_terminal(client, folder):
    add(client, start=4.0, end=8.9, tags=["pricing"])
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert main(["tags", "--out", str(folder)]) == 0
    assert "pricing" in out.getvalue() and "Skipped broken.json" in err.getvalue()
    with redirect_stdout(out), redirect_stderr(err):
        assert main(["tags", "rename", "pricing", "cost", "--out", str(folder)]) == 0
        assert main(["tags", "rename", "nothing", "cost", "--out", str(folder)]) == 2
    assert "'pricing' is now 'cost' in 1 interview." in out.getvalue()
    md, csv_out = io.StringIO(), io.StringIO()
    with redirect_stdout(md):
        assert main(["tags", "export", "COST", "--out", str(folder)]) == 0
    with redirect_stdout(csv_out):
        assert main(["tags", "export", "cost", "--csv", "--out", str(folder)]) == 0
    assert md.getvalue().startswith("# COST") and "“Honestly the price is too high for a small team.” — Joana" in md.getvalue()
    assert csv_out.getvalue().splitlines()[0] == ",".join(tags.CSV_COLUMNS)
    assert "No highlight" in err.getvalue()
    assert Transcript.load(folder / "joana.json").highlights[0].tags == ["cost"]


def test_igot_serve_says_what_to_do_when_the_port_is_taken(folder):
    running = server.start(folder)
    try:
        err = io.StringIO()
        with redirect_stderr(err):
            assert main(["serve", "--out", str(folder), "--port", str(running.port), "--no-browser"]) == 2
        assert f"Port {running.port}" in err.getvalue() and "--port" in err.getvalue()
    finally:
        running.stop()


# --- clips ----------------------------------------------------------------------------------------
def probe(path: Path) -> dict:
    import subprocess

    return json.loads(subprocess.run(["ffprobe", "-v", "error", "-show_format", "-show_streams", "-of", "json", str(path)],
                                     capture_output=True, text=True, check=True).stdout)


def test_a_highlight_and_a_tags_reel_as_titled_mp4s(client, folder, tmp_path):
    a = add(client, "bruno", start=4.0, end=8.9, tags=["pricing"]).json()
    add(client, "carla", start=9.5, end=10.95, tags=["pricing"])
    add(client, "joana", start=0.0, end=3.0, tags=["pricing"])  # YouTube: no local recording, left out of the reel
    r = client.get(f"/api/interviews/bruno/highlights/{a['id']}/clip")
    assert r.status_code == 200 and r.headers["content-type"] == "video/mp4"
    assert 'filename="bruno-4s.mp4"' in r.headers["content-disposition"]
    (tmp_path / "clip.mp4").write_bytes(r.content)
    info = probe(tmp_path / "clip.mp4")
    assert {s["codec_type"] for s in info["streams"]} == {"video", "audio"}
    assert abs(float(info["format"]["duration"]) - (8.9 - 4.0 + 2 * clips.PAD)) < 0.3
    assert info["format"]["tags"]["title"] == "Joana · Interview with Bruno · 0:04"
    reel = client.get("/api/tag/reel", params={"name": "pricing"})
    assert reel.status_code == 200
    (tmp_path / "reel.mp4").write_bytes(reel.content)
    length = float(probe(tmp_path / "reel.mp4")["format"]["duration"])
    assert abs(length - ((8.9 - 4.0) + (10.95 - 9.5) + 4 * clips.PAD)) < 0.5
    no_media = client.get("/api/tag/reel", params={"name": "nothing"})
    assert no_media.status_code == 400 and "local recordings" in no_media.json()["error"]


# --- inside Colab -------------------------------------------------------------------------------------
FAKE_COLAB = Path(__file__).resolve().parent / "fake_colab"


def test_the_notebook_step_shows_the_workspace_through_colabs_port_proxy(folder, tmp_path, monkeypatch, request):
    """With the stand-in for google.colab: the proxy's address is let in (its Host and Origin),
    the port is shown in an iframe, a foreign origin is still refused; Drive's interviews (as step
    8 read them) join the session's."""
    import sys

    import igot.colab

    # The stand-in google.colab for this test only: other tests ask "are we in Colab?" by importing it.
    colab_modules = lambda: [m for m in sys.modules if m == "google.colab" or m.startswith("google.colab.")]  # noqa: E731
    for name in colab_modules():
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.syspath_prepend(str(FAKE_COLAB))
    request.addfinalizer(lambda: [sys.modules.pop(name) for name in colab_modules()])
    monkeypatch.setenv("FAKE_COLAB_IFRAMES", str(tmp_path / "iframes.jsonl"))
    monkeypatch.chdir(tmp_path)  # off Colab, the notebook's folder is the current one (colab.workspace)
    drive_copy = tmp_path / "igot-drive"
    drive_copy.mkdir()
    kept = replace(interview(), source=Source("Kept in Drive", None, None, "file"))
    (drive_copy / "kept-in-drive.json").write_text(kept.to_json(), encoding="utf-8")
    (drive_copy / "joana.json").write_text("{}", encoding="utf-8")  # this session's own copy wins
    out = io.StringIO()
    with redirect_stdout(out):
        running = igot.colab.open_workspace("Research/iGot", out_dir=folder)
    try:
        shown = json.loads((tmp_path / "iframes.jsonl").read_text())
        assert shown["port"] == running.port and "Research workspace" in out.getvalue()
        proxy = f"{running.port}-m-s-fake.prod.colab.dev"
        for host, origin, status in [(proxy, f"https://{proxy}", 200), (f"127.0.0.1:{running.port}", None, 200),
                                     (proxy, "https://evil.example", 403), ("evil.example", None, 403)]:
            conn = http.client.HTTPConnection("127.0.0.1", running.port, timeout=5)
            headers = {"Host": host, "X-iGot-Token": running.token, **({"Origin": origin} if origin else {})}
            conn.request("GET", "/api/library", headers=headers)
            answer = conn.getresponse()
            body = answer.read()
            assert answer.status == status, (host, origin, body)
        stems = {iv["stem"] for iv in json.loads(_library(running))["interviews"]}
        assert stems == {"joana", "bruno", "carla", "kept-in-drive"}
        assert Transcript.load(folder / "joana.json").source.title == "Interview with Joana"
        page = _get(running.port, "/")
        assert "frame-ancestors 'self' https://colab.research.google.com https://*.googleusercontent.com" in page.getheader("content-security-policy")
        assert json.loads(_queue(running))["recording_folders"] == []  # no Drive mounted: no paths field
    finally:
        running.stop()
    # Drive mounted by step 2 (google_drive()): a workspace opened later (step 10) adds from it too
    (tmp_path / "drive" / "MyDrive").mkdir(parents=True)
    with redirect_stdout(out):
        running = igot.colab.open_workspace(out_dir=folder)
    try:
        assert json.loads(_queue(running))["recording_folders"] == [str(tmp_path / "drive" / "MyDrive"), str(tmp_path / "drive")]
        assert "or the path of one in" in out.getvalue()
    finally:
        running.stop()


def _get(port: int, path: str, headers: dict | None = None):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", path, headers=headers or {})
    answer = conn.getresponse()
    answer.read()
    return answer


def _queue(running) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", running.port, timeout=5)
    conn.request("GET", "/api/queue", headers={"X-iGot-Token": running.token})
    return conn.getresponse().read()


def _library(running) -> bytes:
    conn = http.client.HTTPConnection("127.0.0.1", running.port, timeout=5)
    conn.request("GET", "/api/library", headers={"X-iGot-Token": running.token})
    return conn.getresponse().read()


def test_only_opening_a_page_is_let_in_from_another_site():
    door = Door(PORT)
    own = f"127.0.0.1:{PORT}"
    assert door.refusal(own, None, "cross-site", navigation=True) is None  # a link followed, Colab's frame
    assert door.refusal(own, None, "cross-site") is not None  # <video src>, <img src> on a foreign page
    assert door.refusal(own, "https://evil.example", "cross-site", navigation=True) is not None  # a form posted
