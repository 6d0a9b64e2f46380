"""Reports (issue 52, point 3): findings with the highlights behind them, kept in the library through
its store, their quotes read from the interviews as they are now, exported as Markdown, HTML and a
Google Doc (recorded Drive exchanges), and served by the workspace's routes."""

from __future__ import annotations

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
    (folder / "reports" / f"{other}.json").write_text(json.dumps({**planted, "id": link_id}))  # another's id
    listed, problems = lib.report_list()
    assert [k.report.id for k in listed] == [made.report.id]
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
        [f"{made.report.id}.json", "notes.txt", f"{other}.json"])


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
