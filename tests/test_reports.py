"""Reports (issue 52, point 3): findings with the highlights behind them, kept in the library through
its store, their quotes read from the interviews as they are now, exported as Markdown, HTML and a
Google Doc (recorded Drive exchanges), and served by the workspace's routes."""

from __future__ import annotations

import html
import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from igot.outputs import highlights, reports, store
from igot.outputs.store import Library, LibraryError, NotFound, Stale
from igot.transcript import Source
from igot.workspace import server
from igot.workspace.guard import Door
from tests.test_highlights import interview
from tests.test_workspace import tone

PORT = 8765
HOME = f"http://127.0.0.1:{PORT}"


def tagged(t, marks):
    for start, end, tags in marks:
        t = highlights.with_highlight(t, highlights.new_highlight(t, start, end, tags))
    return t


@pytest.fixture
def folder(tmp_path) -> Path:
    """Three interviews, two tags across them: "pricing" in joana and bruno, "onboarding" in bruno
    and carla (one of carla's with both)."""
    out = tmp_path / "library"
    out.mkdir()
    store.save(tagged(interview(), [(4.0, 8.9, ["pricing"])]), out, "joana", drive=False)
    bruno = replace(interview(), source=Source("Interview with Bruno", None, str(tone(out / "bruno.wav")), "file"))
    store.save(tagged(bruno, [(4.0, 6.0, ["Pricing"]), (9.0, 13.0, ["onboarding"])]), out, "bruno", drive=False)
    carla = replace(interview(), language="pt", source=Source("Entrevista com Carla", None, None, "file"))
    store.save(tagged(carla, [(9.5, 10.95, ["onboarding", "pricing"]), (14.0, 16.0, ["other"])]), out, "carla", drive=False)
    return out


def cited(lib: Library, tag: str) -> list[dict]:
    return [{"stem": iv.path.stem, "highlight": h.id} for iv in lib.listing()[0] for h in iv.transcript.highlights or []
            if highlights.has_tag(h, tag)]


TWO_TAGS = [{"kind": "tag", "name": "pricing"}, {"kind": "tag", "name": "Onboarding"}]


# --- the store ------------------------------------------------------------------------------------
def test_two_reports_of_one_title_stay_two_and_a_change_keeps_its_file(folder):
    lib = Library(folder)
    a = lib.make_report("Why teams leave", TWO_TAGS, by="Ana")
    b = lib.make_report("Why teams leave", TWO_TAGS, by="Bruno")
    assert a.report.id != b.report.id and reports.ID.fullmatch(a.report.id)
    listed, problems = lib.report_list()
    assert {k.report.id for k in listed} == {a.report.id, b.report.id} and problems == []
    changed = lib.change_report(a.report.id, a.version, title="Why small teams leave", by="Carla")
    assert sorted(p.name for p in (folder / "reports").iterdir()) == sorted([f"{a.report.id}.json", f"{b.report.id}.json"])
    again = lib.report(a.report.id)
    assert again == changed and (again.report.title, again.report.made_by, again.report.changed_by) == (
        "Why small teams leave", "Ana", "Carla")
    assert lib.report(b.report.id).report.title == "Why teams leave"


def test_a_change_on_a_stale_version_is_refused_and_loses_nothing(folder):
    lib = Library(folder)
    made = lib.make_report("Pricing", TWO_TAGS)
    first = lib.change_report(made.report.id, made.version, findings=[{"text": "Too expensive", "highlights": cited(lib, "pricing")}])
    with pytest.raises(Stale, match="changed since this page read it") as err:
        lib.change_report(made.report.id, made.version, findings=[{"text": "Mine", "highlights": []}])
    assert err.value.status == 409
    assert lib.report(made.report.id) == first  # the first change is kept, whole
    with pytest.raises(Stale):
        lib.delete_report(made.report.id, made.version)
    lib.delete_report(made.report.id, first.version)
    with pytest.raises(NotFound):
        lib.report(made.report.id)


@pytest.mark.parametrize("body,words", [
    ({"findings": "x"}, "must be sent as a list"),
    ({"findings": [{"text": "a", "highlights": [{"stem": "../x", "highlight": "h"}]}]}, "not a highlight"),
    ({"findings": [{"text": "x" * 4001}]}, "characters long"),
    ({"title": "t" * 201}, "characters long"),
])
def test_a_bad_change_is_refused_with_what_to_do(folder, body, words):
    lib = Library(folder)
    made = lib.make_report("Pricing", TWO_TAGS)
    with pytest.raises(LibraryError, match=words) as err:
        lib.change_report(made.report.id, made.version, **body)
    assert err.value.fix and lib.report(made.report.id) == made


def test_a_planted_file_or_a_link_under_reports_is_said_never_followed(folder, tmp_path):
    lib = Library(folder)
    made = lib.make_report("Real", TWO_TAGS)
    secret = tmp_path / "secret.json"
    planted = json.loads(reports.file_text(replace(made.report, id="r-" + "0" * 16, title="Stolen")))
    secret.write_text(json.dumps(planted))
    link_id = "r-" + "0" * 16
    os.symlink(secret, folder / "reports" / f"{link_id}.json")
    (folder / "reports" / "notes.txt").write_text("hi")
    other = "r-" + "1" * 16
    lured = "r-" + "2" * 16  # a Doc link that would run a script: read as no Doc
    (folder / "reports" / f"{lured}.json").write_text(json.dumps({**planted, "id": lured, "google_doc": {
        "folder": "x", "doc": "javascript:alert(1)//https://docs.google.com/document/d/x"}}))
    (folder / "reports" / f"{other}.json").write_text(json.dumps({**planted, "id": link_id}))  # another's id
    listed, problems = lib.report_list()
    assert sorted(k.report.id for k in listed) == sorted([made.report.id, lured])
    assert lib.report(lured).report.google_doc is None
    assert any(f"{link_id}.json" in p and "link" in p for p in problems)
    assert any("notes.txt" in p for p in problems) and any("another report's id" in p for p in problems)
    with pytest.raises(LibraryError, match="link"):
        lib.report(link_id)
    with pytest.raises(LibraryError, match="link"):
        lib.change_report(link_id, "x", title="Through the link")
    lib.delete_report(link_id, "whatever")  # the link goes, never what it leads to
    assert secret.is_file() and not (folder / "reports" / f"{link_id}.json").is_symlink()
    with pytest.raises(NotFound):
        lib.report("../joana")
    # The reports folder itself a link: nothing is read through it, nor written.
    (folder / "reports").rename(tmp_path / "moved")
    os.symlink(tmp_path / "moved", folder / "reports")
    assert lib.report_list() == ([], [lib.report_list()[1][0]]) and "is a link" in lib.report_list()[1][0]
    with pytest.raises(LibraryError, match="link"):
        lib.make_report("Elsewhere", TWO_TAGS)
    assert sorted(p.name for p in (tmp_path / "moved").iterdir()) == sorted(
        [f"{made.report.id}.json", "notes.txt", f"{other}.json", f"{lured}.json"])


def test_quotes_are_read_live_and_a_removed_highlight_shows_as_removed(folder):
    lib = Library(folder)
    made = lib.make_report("Pricing", TWO_TAGS)
    kept = lib.change_report(made.report.id, made.version, findings=[{"text": "Price", "highlights": cited(lib, "pricing")}])
    joana = lib.open("joana")
    h = next(h for h in joana.transcript.highlights if highlights.has_tag(h, "pricing"))
    lib.change("joana", joana.version, lambda t: replace(t, highlights=[replace(x, quote=x.quote.replace("price", "PRICE"))
                                                                         for x in t.highlights]))
    quotes = reports.resolved(lib, kept.report).quotes()
    assert any("PRICE" in q.quote for q in quotes)  # a word corrected since shows in the report
    lib.change("joana", lib.open("joana").version, lambda t: highlights.without_highlight(t, h.id))
    r = reports.resolved(lib, lib.report(made.report.id).report)
    gone = [q for q in r.quotes() if q.removed]
    assert [(q.stem, q.highlight) for q in gone] == [("joana", h.id)] and gone[0].interview == "Interview with Joana"
    assert reports.REMOVED in reports.to_markdown(r) and reports.REMOVED in reports.to_html(r)
    assert len(r.quotes()) == 3  # the two others still there


def test_the_markdown_of_a_report_from_two_tags_across_three_interviews_carries_every_finding(folder):
    lib = Library(folder)
    made = lib.make_report("What blocks small teams", TWO_TAGS, by="Ana")
    pool = reports.candidates(lib, made.report)
    assert {q.stem for q in pool} == {"joana", "bruno", "carla"} and len(pool) == 4  # carla's "other" is not in it
    findings = [{"text": "Price is the first wall\nSmall teams compare per seat.", "highlights": cited(lib, "pricing")},
                {"text": "Onboarding takes a week", "highlights": cited(lib, "onboarding")}]
    kept = lib.change_report(made.report.id, made.version, findings=findings)
    r = reports.resolved(lib, kept.report)
    md = reports.to_markdown(r)
    assert md.startswith("# What blocks small teams\n")
    assert "## 1. Price is the first wall" in md and "Small teams compare per seat." in md
    assert "## 2. Onboarding takes a week" in md
    for f in r.findings:
        for q in f.quotes:
            line = next(line for line in md.splitlines() if q.quote in line and q.interview in line)
            assert q.speaker in line and f"(#/interview/{q.stem}?t={q.start:g})" in line
    assert md.count("open in iGot") == 5  # carla's pricing+onboarding highlight is under both findings
    assert "[video](https://www.youtube.com/watch?v=abc123XYZ_0&t=4s)" in md  # joana's is on YouTube
    page = reports.to_html(r, base="https://igot.example.com/")
    assert page.count('href="https://igot.example.com/#/interview/') == 5 and "<script" not in page


# --- its Google Doc, through recorded Drive exchanges ----------------------------------------------
def test_the_doc_of_a_report_carries_every_finding_with_its_quotes_and_links(folder):
    from tests.test_gdoc import DOC, RESEARCH, drive, multipart, read_doc, reply
    from tests.test_outputs import in_drive
    from igot.outputs.gdoc import GOOGLE_DOC
    from igot.transcript import Transcript

    lib = Library(folder)
    made = lib.make_report("Sem Drive", TWO_TAGS)
    with pytest.raises(reports.ReportError, match="not in Google Drive"):
        reports.to_drive(lib, made.report.id, service=None)
    for stem in ("joana", "bruno"):  # two of the three interviews have their Docs in the folder "Research"
        in_drive(Transcript.load(folder / f"{stem}.json")).save(folder / f"{stem}.json")
    findings = [{"text": "Price is the first wall", "highlights": cited(lib, "pricing")},
                {"text": "Onboarding takes a week", "highlights": cited(lib, "onboarding")}]
    kept = lib.change_report(made.report.id, made.version, title="O que trava times pequenos", findings=findings)
    base = "https://igot.example.com/"
    service, http = drive(reply("doc-created.json"))
    sent = reports.to_drive(lib, kept.report.id, service, base)
    assert sent.report.google_doc == {"folder": RESEARCH, "doc": f"https://docs.google.com/document/d/{DOC}/edit?usp=drivesdk"}
    assert lib.report(kept.report.id) == sent and sent.report.findings == kept.report.findings
    [upload] = http.sent
    assert upload.method == "POST"
    meta, media_type, media = multipart(upload)
    assert meta == {"name": "O que trava times pequenos", "mimeType": GOOGLE_DOC, "parents": [RESEARCH]}
    page = media.decode("ascii")
    doc = read_doc(page)
    assert doc.headings == ["O que trava times pequenos", "1. Price is the first wall", "2. Onboarding takes a week"]
    r = reports.resolved(lib, sent.report)
    shown = html.unescape(page)
    for q in r.quotes():
        assert f"“{q.quote}”" in shown and f"{q.speaker}, {q.interview}" in shown
        assert f"{base}#/interview/{q.stem}?t={q.start:g}" in doc.links
    assert "https://www.youtube.com/watch?v=abc123XYZ_0&t=4s" in doc.links
    # Sent again: the same Doc, its content replaced (same link), none made beside it.
    service, http = drive(({"status": "200"}, json.dumps({"id": DOC, "trashed": False})), reply("doc-created.json"))
    again = reports.to_drive(lib, kept.report.id, service, base)
    assert [s.method for s in http.sent] == ["GET", "PATCH"] and f"/files/{DOC}" in http.sent[1].uri
    assert again.report.google_doc == sent.report.google_doc


# --- the workspace's routes --------------------------------------------------------------------------
@pytest.fixture
def client(folder) -> TestClient:
    door = Door(PORT)
    return TestClient(server.create_app(Library(folder), door), base_url=HOME, headers={"X-iGot-Token": door.token})


def test_a_report_made_changed_exported_and_deleted_through_the_workspace(client, folder):
    made = client.post("/api/reports", json={"title": "Small teams", "sources": TWO_TAGS})
    assert made.status_code == 201
    r = made.json()
    assert r["findings"] == [] and {q["stem"] for q in r["candidates"]} == {"joana", "bruno", "carla"}
    assert r["drive"] is False
    pricing = [{"stem": q["stem"], "highlight": q["highlight"]} for q in r["candidates"]
               if any(t.casefold() == "pricing" for t in q["tags"])]
    saved = client.put(f"/api/reports/{r['id']}", json={"version": r["version"], "title": "Small teams, big prices",
                                                        "findings": [{"text": "Too expensive", "highlights": pricing}]})
    assert saved.status_code == 200 and saved.json()["title"] == "Small teams, big prices"
    assert sorted(q["interview"] for q in saved.json()["findings"][0]["quotes"]) == [
        "Entrevista com Carla", "Interview with Bruno", "Interview with Joana"]
    stale = client.put(f"/api/reports/{r['id']}", json={"version": r["version"], "findings": []})
    assert stale.status_code == 409 and "changed since this page read it" in stale.json()["error"]
    listed = client.get("/api/reports").json()
    assert [(x["id"], x["title"], x["findings"]) for x in listed["reports"]] == [(r["id"], "Small teams, big prices", 1)]
    md = client.get(f"/api/reports/{r['id']}/export?format=md")
    assert md.status_code == 200 and md.headers["content-type"].startswith("text/markdown")
    assert "attachment" in md.headers["content-disposition"] and "Small%20teams" in md.headers["content-disposition"]
    assert md.text.count(f"({HOME}/#/interview/") == 3 and "## 1. Too expensive" in md.text
    page = client.get(f"/api/reports/{r['id']}/export?format=html")
    assert page.headers["content-type"].startswith("text/html") and page.text.count("<blockquote>") == 3
    assert client.get(f"/api/reports/{r['id']}/export?format=exe").status_code == 400
    nodrive = client.post(f"/api/reports/{r['id']}/drive", json={})
    assert nodrive.status_code == 400 and "not in Google Drive" in nodrive.json()["error"]
    assert client.get("/api/reports/..%2Fjoana").status_code == 404
    assert client.delete(f"/api/reports/{r['id']}?version={r['version']}").status_code == 409
    assert client.delete(f"/api/reports/{r['id']}?version={saved.json()['version']}").status_code == 200
    assert client.get(f"/api/reports/{r['id']}").status_code == 404 and client.get("/api/reports").json()["reports"] == []


def test_in_a_team_a_viewer_reads_reports_and_only_a_researcher_makes_and_changes_them(folder):
    from igot.workspace import team_server
    from tests.test_team_server import ORIGIN, signed_in

    app, _ = team_server.team_app(Library(folder), team_server.Address("127.0.0.1", 443, ORIGIN))
    vera = signed_in(app, folder, "vera@example.com", "viewer", "Vera")
    rui = signed_in(app, folder, "rui@example.com", "researcher", "Rui")
    assert vera.post("/api/reports", json={"title": "x", "sources": TWO_TAGS}).status_code == 403
    made = rui.post("/api/reports", json={"title": "Pricing", "sources": TWO_TAGS})
    assert made.status_code == 201 and made.json()["made_by"] == "Rui"
    r = made.json()
    seen = vera.get(f"/api/reports/{r['id']}")
    assert seen.status_code == 200 and seen.json()["title"] == "Pricing"
    assert vera.put(f"/api/reports/{r['id']}", json={"version": r["version"], "title": "Mine"}).status_code == 403
    assert vera.delete(f"/api/reports/{r['id']}?version={r['version']}").status_code == 403
    md = vera.get(f"/api/reports/{r['id']}/export?format=md")
    assert md.status_code == 200 and "_Made by Rui" in md.text  # the team's own address before its links
    assert rui.put(f"/api/reports/{r['id']}", json={"version": r["version"], "findings": [
        {"text": "Price", "highlights": cited(Library(folder), "pricing")}]}).json()["changed_by"] == "Rui"
    assert f"({ORIGIN}/#/interview/" in vera.get(f"/api/reports/{r['id']}/export?format=md").text
    feed = [(i["kind"], i["name"]) for i in vera.get("/api/activity").json()["items"]]
    assert ("made a report", "Rui") in feed and ("changed a report", "Rui") in feed
