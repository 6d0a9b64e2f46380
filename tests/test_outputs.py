"""One change, every copy: igot.outputs.store.save (what a run, naming, the summary, the notebook and
`igot rename` all call) writes the exports and the library page and, for an interview in Drive,
updates its Doc, Sheet row and kept JSON; all of it or none. Drive is a recorded exchange, as
in tests/test_gdoc.py."""

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


def test_all_or_nothing_when_drive_refuses(library, sleeps):
    in_drive(Transcript.load(library / f"{STEM}.json")).save(library / f"{STEM}.json")
    before = snapshot(library)
    named = name_speakers(Transcript.load(library / f"{STEM}.json"), ["Ana", "Bruno", "Ana"])
    service, http = drive(({"status": "200"}, json.dumps({"id": DOC, "trashed": False})), reply("doc-created.json"),
                          reply("files-list-sheet-found.json"), reply("error-403-appNotAuthorizedToFile.json"),
                          reply("doc-created.json"))
    with pytest.raises(store.DriveUnchanged, match="could not be updated.*Nothing was changed[.]") as err:
        store.save(named, library, STEM, service=service)
    assert "\n" not in str(err.value) and "folders it created itself" in str(err.value)
    assert snapshot(library) == before and not list(library.glob(".*.tmp"))  # no file changed, no temp left
    # The Doc, updated before the Sheet refused, has the transcript as it was again.
    changed, restored = multipart(http.sent[1])[2].decode("ascii"), multipart(http.sent[-1])[2].decode("ascii")
    assert http.sent[-1].method == "PATCH" and urlsplit(http.sent[-1].uri).path == f"/upload/drive/v3/files/{DOC}"
    assert ">Joana</b>" not in changed and ">Joana</b>" in restored and ">Bob" in restored

    # A first Doc, then the Sheet refused: the Doc is taken back, no file here changed.
    fresh = name_speakers(interview(), ["Ana", "Bruno", "Ana"])
    service, http = drive(reply("doc-created.json"), reply("files-list-sheet-found.json"),
                          reply("error-403-appNotAuthorizedToFile.json"), ({"status": "204"}, b""))
    with pytest.raises(IgotError, match="Nothing was changed"):
        store.save(fresh, library, "new-one", drive_folder=RESEARCH, service=service)
    assert http.sent[-1].method == "DELETE" and urlsplit(http.sent[-1].uri).path == f"/drive/v3/files/{DOC}"
    assert snapshot(library) == before


def test_all_or_nothing_when_a_file_cannot_be_written(library):
    """A folder where the subtitles go: found before anything moves; the new Doc is taken back."""
    before = snapshot(library)
    (library / f"{STEM}.srt").unlink()
    (library / f"{STEM}.srt").mkdir()
    before.pop(f"{STEM}.srt")
    service, http = drive(reply("doc-created.json"), ({"status": "204"}, b""))
    with pytest.raises(IgotError, match=f"{STEM}.srt: a folder of that name is in the way.*Nothing was changed"):
        store.save(name_speakers(interview(), ["Ana", "Bruno", "Ana"]), library, STEM, drive_folder=RESEARCH, service=service)
    assert [s.method for s in http.sent] == ["POST", "DELETE"]
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


def test_igot_rename_of_an_interview_in_drive_without_a_sign_in_changes_nothing(home, library):
    in_drive(Transcript.load(library / f"{STEM}.json")).save(library / f"{STEM}.json")
    before = snapshot(library)
    code, _, err = cli("rename", str(library / f"{STEM}.json"), "--names", "Ana, Bob, Ana")
    assert code == 2 and err.count("\n") == 1
    assert "Google Doc could not be updated" in err and "client" in err and "Nothing was changed" in err and "--no-drive" in err
    assert snapshot(library) == before
    # --no-drive: the files here change; the Doc stays recorded for the next change to bring up to date.
    code, _, err = cli("rename", str(library / f"{STEM}.json"), "--names", "Ana, Bob, Ana", "--no-drive")
    assert code == 0, err
    t = Transcript.load(library / f"{STEM}.json")
    assert [s.name for s in t.speakers] == ["Ana", "Bob"] and t.info["google_doc"] == DOC_URL
