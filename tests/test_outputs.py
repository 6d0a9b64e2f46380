"""One change, every copy: igot.outputs.store.save (what a run, naming, the summary, the notebook and
`igot rename` all call) writes the exports and the library page all or nothing and, for an
interview in Drive, then updates its Doc, Sheet row and kept JSON (from the library's Drive
outbox). Drive is a recorded exchange, as in tests/test_gdoc.py."""

from __future__ import annotations

import json
import re
from urllib.parse import urlsplit

import pytest

from igot.errors import IgotError
from igot.outputs import store
from igot.outputs.gdoc import GOOGLE_DOC, SHEET_COLUMNS
from igot.outputs.library import load_interviews
from igot.search.words import search
from igot.speakers.phrases import name_speakers
from igot.transcript import SummaryPoint, Transcript
from tests.test_drive_repository import DOC_URL, KEPT_JSON, exported, sent_rows
from tests.test_export import make_transcript
from tests.test_gdoc import DOC, NEW_FOLDER, RESEARCH, ROOT_LIST, drive, multipart, reply, sleeps  # noqa: F401
from tests.test_library import cli

STEM = "joana"


def interview() -> Transcript:
    t = make_transcript()  # Ana Conceição, Bob, Joana
    t.info["created"] = "2025-03-20T09:00:00Z"
    t.summary = [SummaryPoint("Checks the balance every morning")]
    return t


def snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def library_names(folder, interview: str = "Entrevista com a Joana — São Paulo") -> list[str]:
    """The speakers the library page lists for the interview."""
    page = (folder / "index.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script id="library-data" type="application/json">(.*?)</script>', page, re.S).group(1))
    return next(iv["speakers"] for iv in data["interviews"] if iv["name"] == interview)


@pytest.fixture
def library(tmp_path):
    """An output folder with two interviews, as two runs left it."""
    folder = tmp_path / "out"
    store.save(interview(), folder, STEM)
    other = make_transcript()
    other.source.title = "Entrevista com o Caio"
    other.info["created"] = "2025-03-21T09:00:00Z"
    store.save(other, folder, "caio")
    return folder


def test_naming_reaches_the_files_and_the_library_page_and_keeps_the_date(library):
    t = Transcript.load(library / f"{STEM}.json")
    named = name_speakers(t, ["Ana", "Bruno", "Ana"])  # Joana is Ana, split in two
    saved = store.save(named, library, STEM)
    assert set(saved.files) == {"json", "html", "md", "srt", "vtt"} and saved.doc is None
    assert [s.name for s in Transcript.load(library / f"{STEM}.json").speakers] == ["Ana", "Bruno"]
    assert ">Joana<" not in (library / f"{STEM}.html").read_text() and "Ana: Olá" in (library / f"{STEM}.srt").read_text()
    assert library_names(library) == ["Ana", "Bruno"]
    assert library_names(library, "Entrevista com o Caio") == ["Ana Conceição", 'Bob "B" <Ltd> & Co', "Joana"]  # untouched
    # Searching the page's data and `igot search` find the new name; the interview kept its place.
    assert {h.speaker for h in search(load_interviews(library), "bruno")} == {"Bruno"}
    assert [iv.name for iv in load_interviews(library)] == ["Entrevista com o Caio", "Entrevista com a Joana — São Paulo"]
    assert Transcript.load(library / f"{STEM}.json").info["created"] == "2025-03-20T09:00:00Z"


def test_a_transcript_without_a_date_keeps_the_first_one(tmp_path):
    t = make_transcript()
    first = store.save(t, tmp_path, STEM).transcript.info["created"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", first)
    again = store.save(make_transcript(), tmp_path, STEM)  # a transcript that never saw the first
    assert again.transcript.info["created"] == first


def in_drive(t: Transcript) -> Transcript:
    t.info.update(google_doc=DOC_URL, drive={"folder": RESEARCH, "name": "Entrevista com a Joana — São Paulo"})
    return t


def found(file_id: str) -> tuple[dict, str]:
    return {"status": "200"}, json.dumps({"files": [{"id": file_id}]})


def test_a_change_to_an_interview_in_drive_updates_its_doc_row_and_kept_json(library):
    in_drive(Transcript.load(library / f"{STEM}.json")).save(library / f"{STEM}.json")  # published earlier
    named = name_speakers(interview(), ["Ana", "Bruno", "Ana"])  # from a transcript that never saw the Doc
    service, http = drive(
        ({"status": "200"}, json.dumps({"id": DOC, "trashed": False})),  # the Doc is still there
        reply("doc-created.json"),  # its content replaced
        reply("files-list-sheet-found.json"), exported(), reply("sheet-created.json"),  # the row replaced
        reply("files-list-found.json"), found(KEPT_JSON), reply("json-created.json"),  # the kept JSON replaced
    )
    saved = store.save(named, library, STEM, service=service)
    assert saved.doc == DOC_URL
    look, doc, _, _, sheet, _, _, kept = http.sent
    assert urlsplit(look.uri).path == f"/drive/v3/files/{DOC}" and look.method == "GET"
    # The same Doc, updated in place: no new Doc, the name it was given kept.
    assert doc.method == "PATCH" and urlsplit(doc.uri).path == f"/upload/drive/v3/files/{DOC}"
    meta, media_type, page = multipart(doc)
    assert meta == {"name": "Entrevista com a Joana — São Paulo"} and media_type == "text/html"
    text = page.decode("ascii")
    assert ">Ana</b>" in text and ">Bruno</b>" in text and "Joana</b>" not in text
    assert "Checks the balance every morning" in text
    # The Sheet: this interview's row has the new names and the summary, once.
    rows = sent_rows(sheet)
    mine = [r for r in rows if r[SHEET_COLUMNS.index("Google Doc")] == DOC_URL]
    assert len(mine) == 1 and mine[0][SHEET_COLUMNS.index("Speakers")] == "Ana, Bruno"
    assert mine[0][SHEET_COLUMNS.index("Summary")] == "Checks the balance every morning"
    assert [r[1] for r in rows].count("Entrevista com a Joana — São Paulo") == 1 and len(rows) == 3  # header, ours, Bruno's
    # The kept JSON in Drive and the one here are the same transcript.
    assert kept.method == "PATCH" and urlsplit(kept.uri).path == f"/upload/drive/v3/files/{KEPT_JSON}"
    drive_copy = Transcript.from_json(kept.body.decode("utf-8"))
    here = Transcript.load(library / f"{STEM}.json")
    assert drive_copy.to_dict() == here.to_dict() == saved.transcript.to_dict()
    assert [s.name for s in here.speakers] == ["Ana", "Bruno"] and here.info["google_doc"] == DOC_URL
    assert library_names(library) == ["Ana", "Bruno"]


def test_a_first_doc_is_recorded_so_later_changes_update_it(tmp_path):
    service, http = drive(
        reply(ROOT_LIST), reply("files-list-empty.json"), reply("folder-created.json"), reply("doc-created.json"),
        reply("files-list-empty.json"), reply("sheet-created.json"),
        reply("files-list-empty.json"), reply("igot-folder-created.json"), reply("files-list-empty.json"), reply("json-created.json"),
    )
    saved = store.save(interview(), tmp_path, STEM, drive_folder="Research/Onboarding", doc_name="Onboarding – Joana",
                         service=service)
    assert multipart(http.sent[3])[0] == {"name": "Onboarding – Joana", "mimeType": GOOGLE_DOC, "parents": [NEW_FOLDER]}
    here = Transcript.load(tmp_path / f"{STEM}.json")
    assert here.info["google_doc"] == saved.doc == DOC_URL
    assert here.info["drive"] == {"folder": NEW_FOLDER, "name": "Onboarding – Joana"}
    assert sent_rows(http.sent[5])[1][1] == "Onboarding – Joana"
    # The search hits of the page and the terminal link the Doc.
    assert {h.doc for h in search(load_interviews(tmp_path), "obrigada")} == {DOC_URL}


def test_a_doc_deleted_by_the_user_is_made_again(library):
    in_drive(Transcript.load(library / f"{STEM}.json")).save(library / f"{STEM}.json")
    service, http = drive(reply("error-404-notFound.json"), reply("doc-created.json"), reply("files-list-sheet-found.json"), exported(),
                          reply("sheet-created.json"), reply("files-list-found.json"), found(KEPT_JSON),
                          reply("json-created.json"))
    store.save(Transcript.load(library / f"{STEM}.json"), library, STEM, service=service)
    make = http.sent[1]
    assert make.method == "POST" and multipart(make)[0] == {"name": "Entrevista com a Joana — São Paulo", "mimeType": GOOGLE_DOC,
                                                           "parents": [RESEARCH]}


def test_a_drive_refusal_keeps_the_change_here_and_leaves_it_in_the_outbox(library, sleeps):
    """The change is committed first: Drive refusing the Sheet after the Doc was updated undoes
    nothing here (nor takes the Doc back); the outbox keeps the entry, and the error says so."""
    in_drive(Transcript.load(library / f"{STEM}.json")).save(library / f"{STEM}.json")
    named = name_speakers(Transcript.load(library / f"{STEM}.json"), ["Ana", "Bruno", "Ana"])
    service, http = drive(({"status": "200"}, json.dumps({"id": DOC, "trashed": False})), reply("doc-created.json"),
                          reply("files-list-sheet-found.json"), reply("error-403-appNotAuthorizedToFile.json"))
    saved = store.save(named, library, STEM, service=service)
    assert saved.doc is None and "\n" not in saved.drive_problem and "folders it created itself" in saved.drive_problem
    assert saved.drive_problem.startswith("Saved here; the Google Doc was not updated (")
    assert "It will be tried again at the next save or start." in saved.drive_problem
    assert len(http.sent) == 4  # no request taking the Doc back
    here = Transcript.load(library / f"{STEM}.json")
    assert [s.name for s in here.speakers] == ["Ana", "Bruno"] and library_names(library) == ["Ana", "Bruno"]
    assert [e.stem for e in store.outbox(library)] == [STEM] and not list(library.glob(".*.tmp"))

    # A first Doc, then the Sheet refused: the Doc is kept and recorded (the next try updates it,
    # never makes a second), the interview saved here, its entry left to send.
    # (The outbox is sent oldest first: the entry left above is tried again first, and refused again.)
    fresh = name_speakers(interview(), ["Ana", "Bruno", "Ana"])
    service, http = drive(reply("error-403-appNotAuthorizedToFile.json"), reply("doc-created.json"),
                          reply("files-list-sheet-found.json"), reply("error-403-appNotAuthorizedToFile.json"))
    saved = store.save(fresh, library, "new-one", drive_folder=RESEARCH, service=service)
    assert saved.drive_problem and all(s.method != "DELETE" for s in http.sent)
    assert Transcript.load(library / "new-one.json").info["google_doc"] == DOC_URL
    assert {e.stem for e in store.outbox(library)} == {STEM, "new-one"}


def test_a_file_that_cannot_be_written_changes_nothing_and_reaches_no_drive(library):
    """A folder where the subtitles go: found before anything moves, and before Drive is asked."""
    before = snapshot(library)
    (library / f"{STEM}.srt").unlink()
    (library / f"{STEM}.srt").mkdir()
    before.pop(f"{STEM}.srt")
    service, http = drive()
    with pytest.raises(IgotError, match=f"{STEM}.srt: a folder of that name is in the way"):
        store.save(name_speakers(interview(), ["Ana", "Bruno", "Ana"]), library, STEM, drive_folder=RESEARCH, service=service)
    assert http.sent == [] and store.outbox(library) == []
    assert snapshot(library) == before and not list(library.glob(".*.tmp"))


# --- igot rename ----------------------------------------------------------------------------------
def test_igot_rename_merges_and_updates_every_local_copy(library):
    code, out, err = cli("rename", "Entrevista com a Joana — São Paulo", "--names", "Ana, Bob, ana", "--out", str(library))
    assert code == 0, err
    assert "Speakers: 1 = Ana, 2 = Bob" in out and "3 speakers, 2 names: speakers with the same name are now one person." in out
    assert "Library: every interview in" in out
    t = Transcript.load(library / f"{STEM}.json")
    assert [s.name for s in t.speakers] == ["Ana", "Bob"] and {p.speaker for p in t.phrases} == {"S1", "S2"}
    assert library_names(library) == ["Ana", "Bob"]
    code, _, err = cli("rename", "nobody", "--names", "Ana", "--out", str(library))
    assert code == 2 and "No interview 'nobody'" in err and "Entrevista com o Caio" in err


def test_igot_rename_of_an_interview_in_drive_without_a_sign_in_is_saved_here_and_queued(home, library):
    in_drive(Transcript.load(library / f"{STEM}.json")).save(library / f"{STEM}.json")
    code, _, err = cli("rename", str(library / f"{STEM}.json"), "--names", "Ana, Bob, Ana")
    assert code == 2 and err.count("\n") == 1
    assert "Saved here; the Google Doc was not updated" in err and "client" in err and "tried again at the next save" in err
    t = Transcript.load(library / f"{STEM}.json")
    assert [s.name for s in t.speakers] == ["Ana", "Bob"] and t.info["google_doc"] == DOC_URL
    assert [e.stem for e in store.outbox(library)] == [STEM]
    # --no-drive: the files here change, Drive is not reached; the entry waits for a save that may.
    code, _, err = cli("rename", str(library / f"{STEM}.json"), "--names", "Ana, Bruno", "--no-drive")
    assert code == 0, err
    t = Transcript.load(library / f"{STEM}.json")
    assert [s.name for s in t.speakers] == ["Ana", "Bruno"] and t.info["google_doc"] == DOC_URL
    assert [e.stem for e in store.outbox(library)] == [STEM]
