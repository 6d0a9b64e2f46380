"""The repository in Drive, against recorded Drive v3 exchanges (as tests/test_gdoc.py): the
"iGot interviews" Sheet made once and updated in place, and each interview's JSON kept in the
folder's .igot subfolder, from where the notebook's search fetches them."""

from __future__ import annotations

import csv
import io
import json
from urllib.parse import urlsplit

import pytest

from igot.errors import IgotError
from igot.outputs.gdoc import (
    FOLDER,
    GOOGLE_DOC,
    GOOGLE_SHEET,
    SHEET_COLUMNS,
    SHEET_NAME,
    export_to_google_doc,
    fetch_transcripts,
    keep_transcript,
    sheet_row,
    update_sheet,
)
from igot.outputs.library import load_interviews
from igot.search.words import search
from igot.transcript import SummaryPoint, Transcript
from tests.test_export import make_transcript
from tests.test_gdoc import DATA, DOC, NEW_FOLDER, RESEARCH, ROOT_LIST, drive, multipart, reply, sleeps  # noqa: F401

SHEET = json.loads((DATA / "sheet-created.json").read_text())["id"]
KEPT = json.loads((DATA / "igot-folder-created.json").read_text())["id"]
KEPT_JSON = json.loads((DATA / "json-created.json").read_text())["id"]
DOC_URL = f"https://docs.google.com/document/d/{DOC}/edit?usp=drivesdk"


def exported(name: str = "sheet-export.csv") -> tuple[dict, bytes]:
    """The Sheet's content as Drive exports it to CSV."""
    return {"status": "200", "content-type": "text/csv"}, (DATA / name).read_bytes()


def sent_rows(sent) -> list[list[str]]:
    """The rows of the CSV an upload request carried (multipart create, or simple media update)."""
    data = multipart(sent)[2] if sent.query["uploadType"] == "multipart" else sent.body
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


def interview() -> Transcript:
    t = make_transcript()
    t.info["created"] = "2025-03-20T09:00:00Z"
    t.summary = [SummaryPoint("Pays with Pix every day"), SummaryPoint("=1+1 is not a formula here")]
    return t


def test_first_doc_makes_the_sheet_and_keeps_the_json(sleeps):
    t = interview()
    service, http = drive(
        reply(ROOT_LIST), reply("files-list-empty.json"), reply("folder-created.json"), reply("doc-created.json"),
        reply("files-list-empty.json"), reply("sheet-created.json"),  # no Sheet yet: made from CSV
        reply("files-list-empty.json"), reply("igot-folder-created.json"),  # .igot made
        reply("files-list-empty.json"), reply("json-created.json"),  # the JSON kept there
    )
    assert export_to_google_doc(t, "Research/Onboarding", service=service) == DOC_URL
    doc, look, make, look_kept, make_kept, look_json, keep = http.sent[3:]
    assert multipart(doc)[0]["mimeType"] == GOOGLE_DOC
    assert look.query["q"] == (f"name = 'iGot interviews' and '{NEW_FOLDER}' in parents "
                               f"and mimeType = '{GOOGLE_SHEET}' and trashed = false")
    meta, media_type, _ = multipart(make)
    assert meta == {"name": SHEET_NAME, "mimeType": GOOGLE_SHEET, "parents": [NEW_FOLDER]} and media_type == "text/csv"
    assert make.method == "POST" and urlsplit(make.uri).path == "/upload/drive/v3/files"
    assert sent_rows(make) == [SHEET_COLUMNS, [
        "2025-03-20", "Entrevista com a Joana — São Paulo", "pt", "0:00:31", 'Ana Conceição, Bob "B" <Ltd> & Co, Joana',
        DOC_URL, "https://www.youtube.com/watch?v=abc123", "Pays with Pix every day • =1+1 is not a formula here",
    ]]
    assert look_kept.query["q"] == f"name = '.igot' and '{NEW_FOLDER}' in parents and mimeType = '{FOLDER}' and trashed = false"
    assert make_kept.json() == {"name": ".igot", "mimeType": FOLDER, "parents": [NEW_FOLDER]}
    assert f"name = 'entrevista-com-a-joana-sao-paulo.json' and '{KEPT}' in parents" in look_json.query["q"]
    meta, media_type, body = multipart(keep)
    assert meta == {"name": "entrevista-com-a-joana-sao-paulo.json", "mimeType": "application/json", "parents": [KEPT]}
    kept = Transcript.from_json(body.decode("utf-8"))
    assert kept.info.pop("google_doc") == DOC_URL  # the Doc, for search hits
    assert kept.info.pop("drive") == {"folder": NEW_FOLDER, "name": "Entrevista com a Joana — São Paulo"}  # for later changes
    assert kept.to_dict() == t.to_dict()
    assert sleeps == []


def test_next_interview_updates_the_same_sheet_newest_first():
    t = interview()
    t.source.title = "Entrevista com o Caio"
    row = sheet_row(t, DOC_URL)
    service, http = drive(reply("files-list-sheet-found.json"), exported(), reply("sheet-created.json"))
    assert update_sheet(service, RESEARCH, row).startswith(f"https://docs.google.com/spreadsheets/d/{SHEET}/")
    look, read, write = http.sent
    assert read.method == "GET" and urlsplit(read.uri).path == f"/drive/v3/files/{SHEET}/export"
    assert read.query["mimeType"] == "text/csv"
    # The same file's content replaced: no new Sheet, no duplicate.
    assert write.method == "PATCH" and urlsplit(write.uri).path == f"/upload/drive/v3/files/{SHEET}"
    assert write.query["uploadType"] == "media" and write.headers["content-type"] == "text/csv"
    before = list(csv.reader(io.StringIO(exported()[1].decode("utf-8"))))
    rows = sent_rows(write)
    assert rows[0] == SHEET_COLUMNS and rows[1] == row and rows[2:] == before[1:]
    assert not any(s.method == "POST" for s in http.sent)


def test_rerun_of_an_interview_replaces_its_row():
    t = interview()  # the same name and video as the Sheet's first row, a new Doc
    row = sheet_row(t, DOC_URL)
    service, http = drive(reply("files-list-sheet-found.json"), exported(), reply("sheet-created.json"))
    update_sheet(service, RESEARCH, row)
    rows = sent_rows(http.sent[-1])
    before = list(csv.reader(io.StringIO(exported()[1].decode("utf-8"))))
    assert len(rows) == len(before) and rows[1] == row and rows[2] == before[2]
    assert [r[1] for r in rows[1:]].count("Entrevista com a Joana — São Paulo") == 1 and DOC_URL in rows[1]


def test_cells_that_look_like_formulas_stay_text():
    t = interview()
    t.source.title = "=IMPORTXML(\"https://evil.example\", \"//a\")"
    row = sheet_row(t, DOC_URL)
    service, http = drive(reply("files-list-empty.json"), reply("sheet-created.json"))
    update_sheet(service, RESEARCH, row)
    assert sent_rows(http.sent[-1])[1][1] == "'" + t.source.title  # Sheets shows it as text


def test_429_on_the_sheet_is_retried(sleeps):
    row = sheet_row(interview(), DOC_URL)
    service, http = drive(reply("files-list-sheet-found.json"), reply("error-429-rateLimitExceeded.json"), exported(),
                          reply("error-429-rateLimitExceeded.json"), reply("sheet-created.json"))
    update_sheet(service, RESEARCH, row)
    assert len(http.sent) == 5 and http.sent[1] == http.sent[2] and http.sent[3] == http.sent[4] and len(sleeps) == 2


def test_403_on_the_sheet_is_one_clear_line_and_the_new_doc_is_taken_back(sleeps, capsys):
    row = sheet_row(interview(), DOC_URL)
    service, http = drive(reply("files-list-sheet-found.json"), reply("error-403-appNotAuthorizedToFile.json"))
    with pytest.raises(IgotError, match="folders it created itself") as err:
        update_sheet(service, RESEARCH, row)
    assert "\n" not in str(err.value) and len(http.sent) == 2 and sleeps == []

    # All or nothing: no Doc is left behind without its row (a second try would make a second Doc).
    service, http = drive(reply("doc-created.json"), reply("files-list-sheet-found.json"),
                          reply("error-403-appNotAuthorizedToFile.json"), ({"status": "204"}, b""))
    with pytest.raises(IgotError, match="folders it created itself"):
        export_to_google_doc(interview(), RESEARCH, service=service)
    made, _, _, undo = http.sent
    assert made.method == "POST" and undo.method == "DELETE" and urlsplit(undo.uri).path == f"/drive/v3/files/{DOC}"


def test_a_rerun_replaces_the_kept_json():
    t = interview()
    service, http = drive(reply("files-list-found.json"), ({"status": "200"}, json.dumps({"files": [{"id": KEPT_JSON}]})),
                          reply("json-created.json"))
    assert keep_transcript(service, RESEARCH, t, "joana") == KEPT_JSON
    write = http.sent[-1]
    assert write.method == "PATCH" and urlsplit(write.uri).path == f"/upload/drive/v3/files/{KEPT_JSON}"
    assert Transcript.from_json(write.body.decode("utf-8")).to_dict() == t.to_dict()


def test_kept_interviews_are_fetched_and_searchable(tmp_path):
    first, second = interview(), interview()
    second.source.title = "Entrevista com o Caio"
    second.phrases[1].text = "A integração com o banco demorou."
    listing = {"files": [{"id": "1a", "name": "joana.json"}, {"id": "1b", "name": "caio.json"},
                         {"id": "1c", "name": "../escape.json"}]}
    service, http = drive(
        reply("files-list-found.json"), ({"status": "200"}, json.dumps(listing)),
        ({"status": "200"}, first.to_json()), ({"status": "200"}, second.to_json()), ({"status": "200"}, first.to_json()),
    )
    paths = fetch_transcripts(service, RESEARCH, tmp_path / "kept")
    assert sorted(p.name for p in paths) == ["caio.json", "escape.json", "joana.json"]
    assert all(p.parent == tmp_path / "kept" for p in paths)
    assert [urlsplit(s.uri).path for s in http.sent[2:]] == [f"/drive/v3/files/{i}" for i in ("1a", "1b", "1c")]
    assert all(s.query["alt"] == "media" for s in http.sent[2:])
    hits = search(load_interviews(tmp_path / "kept"), "integracao")
    assert [(h.interview, h.text) for h in hits] == [("Entrevista com o Caio", "A integração com o banco demorou.")]


def test_nothing_kept_yet_is_no_interviews(tmp_path):
    service, http = drive(reply("files-list-empty.json"))
    assert fetch_transcripts(service, RESEARCH, tmp_path / "kept") == [] and len(http.sent) == 1


def test_notebook_search_finds_this_sessions_and_drives_interviews(tmp_path, monkeypatch, capsys):
    from igot import colab
    from igot.outputs import gdoc

    here = interview()  # made in this session, no Doc yet
    here.source.title = "Entrevista com o Caio"
    here.source.url, here.source.kind = None, "file"
    here.phrases[1].text = "A integração demorou."
    (tmp_path / "igot-output").mkdir()
    here.save(tmp_path / "igot-output" / "caio.json")
    kept = interview()  # from an earlier session, kept in Drive with its Doc
    kept.info["google_doc"] = DOC_URL
    kept.source.url, kept.source.kind = None, "file"
    kept.phrases[0].text = "Integração? Sim."
    stale = interview()  # Drive's copy of this session's interview: the local one is searched
    stale.source.title = "Entrevista com o Caio"
    listing = {"files": [{"id": "1a", "name": "joana.json"}, {"id": "1b", "name": "caio.json"}]}
    service, http = drive(reply("files-list-found.json"), ({"status": "200"}, json.dumps(listing)),
                          ({"status": "200"}, kept.to_json()), ({"status": "200"}, stale.to_json()))
    monkeypatch.setattr(colab, "workspace", lambda: tmp_path)
    monkeypatch.setattr(gdoc, "credentials", lambda *a: "creds")
    monkeypatch.setattr(gdoc, "drive_service", lambda creds: service)
    (tmp_path / "igot-drive").mkdir()
    (tmp_path / "igot-drive" / "deleted-from-drive.json").write_text(interview().to_json())

    hits = colab.search_interviews("INTEGRACAO", RESEARCH)  # the folder by id: .igot looked up in it
    out = capsys.readouterr().out
    assert sorted((h.interview, h.text) for h in hits) == [
        ("Entrevista com a Joana — São Paulo", "Integração? Sim."), ("Entrevista com o Caio", "A integração demorou.")]
    assert out.startswith("2 phrases in 2 of 2 interviews:")
    assert f"• Entrevista com a Joana — São Paulo · 0:00 · Ana Conceição: Integração? Sim.\n  {DOC_URL}\n" in out
    assert "A integração demorou.\n  file://" in out and "#p-1" in out  # no video, no Doc: its local page
    assert not (tmp_path / "igot-drive" / "deleted-from-drive.json").exists()
    assert colab.search_interviews("  ", RESEARCH) == [] and "Type words" in capsys.readouterr().out
