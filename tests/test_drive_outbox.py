"""The Drive copy follows a committed change, from the library's outbox (igot.outputs.store): a
correction is saved here whatever Drive answers, and the Doc catches up at the next save. Drive is
a recorded exchange, as in tests/test_gdoc.py."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path

import httplib2
import pytest

from igot.outputs import highlights, store
from igot.outputs.gdoc import drive_service
from igot.runtime import changes
from igot.speakers.phrases import name_speakers
from igot.transcript import Transcript
from tests.test_drive_repository import DOC_URL, KEPT_JSON, exported
from tests.test_gdoc import DOC, RESEARCH, Recorder, drive, multipart, reply, sleeps  # noqa: F401
from tests.test_outputs import found, in_drive, interview

BUSY = "error-500-backendError.json"
TRIES = 6  # a request and the client's 5 retries (gdoc.RETRIES), each answered 500


def busy(requests: int = 1) -> list:
    """Drive answering 500 to `requests` requests, each with every retry."""
    return [reply(BUSY)] * (TRIES * requests)


def doc_there() -> tuple:
    return {"status": "200"}, json.dumps({"id": DOC, "trashed": False})


def sent_again() -> list:
    """An interview in Drive sent whole: the Doc looked for and updated, its Sheet row, its kept JSON."""
    return [doc_there(), reply("doc-created.json"), reply("files-list-sheet-found.json"), exported(),
            reply("sheet-created.json"), reply("files-list-found.json"), found(KEPT_JSON), reply("json-created.json")]


def other() -> Transcript:
    t = interview()
    t.source.title = "Entrevista com o Caio"
    return t


@pytest.fixture
def library(tmp_path):
    """A library with Joana's interview published in Drive earlier, and Caio's, only here."""
    folder = tmp_path / "out"
    store.save(in_drive(interview()), folder, "joana", drive=False)
    store.save(other(), folder, "caio", drive=False)
    return folder


def test_a_correction_saved_while_drive_fails_is_kept_and_sent_at_the_next_save(library, sleeps):
    lib = store.Library(library)
    service, http = drive(*busy())
    saved = lib.change_now("joana", lambda t: name_speakers(t, ["Ana", "Bruno", "Ana"]), service=service)

    # Saved here, said so; the Doc is left in the outbox.
    assert saved.doc is None and "HTTP 500" in saved.drive_problem
    assert saved.drive_problem.startswith("Saved here; the Google Doc was not updated (")
    assert saved.drive_problem.endswith("It will be tried again at the next save or start. Wait a few minutes and run again.")
    here = Transcript.load(library / "joana.json")
    assert [s.name for s in here.speakers] == ["Ana", "Bruno"] and here.info["google_doc"] == DOC_URL
    assert len(http.sent) == TRIES  # the Doc looked for, and nothing more
    entry = json.loads((library / ".igot" / "outbox" / "joana.json").read_text())
    assert set(entry) == {"stem", "folder", "name", "queued"} and entry["stem"] == "joana" and entry["folder"] is None
    assert "Bruno" not in json.dumps(entry)  # names and flags, never the transcript

    # The next save of any interview of the library sends it: the Doc gets the correction.
    service, http = drive(*sent_again())
    saved = store.save(other(), library, "caio", service=service)
    assert saved.drive_problem is None and saved.doc is None  # Caio's has no Drive copy
    page = multipart(http.sent[1])[2].decode("ascii")
    assert http.sent[1].method == "PATCH" and ">Bruno</b>" in page and ">Joana</b>" not in page
    kept = Transcript.from_json(http.sent[-1].body.decode("utf-8"))
    assert kept.to_dict() == Transcript.load(library / "joana.json").to_dict()
    assert store.outbox(library) == [] and not (library / ".igot" / "outbox" / "joana.json").exists()


def test_a_doc_asked_for_while_drive_fails_is_made_in_that_folder_at_the_next_save(tmp_path, sleeps):
    folder = tmp_path / "out"
    service, _ = drive(*busy())
    saved = store.save(interview(), folder, "joana", drive_folder=RESEARCH, doc_name="Onboarding – Joana", service=service)
    assert saved.drive_problem.startswith("Saved here; the Google Doc was not made (")
    assert (folder / "joana.html").is_file() and "google_doc" not in Transcript.load(folder / "joana.json").info
    # A later save that asks for no folder (a naming) keeps the folder and the name asked.
    service, _ = drive(*busy())
    store.save(name_speakers(interview(), ["Ana", "Bruno", "Ana"]), folder, "joana", service=service)
    [entry] = store.outbox(folder)
    assert (entry.folder, entry.name) == (RESEARCH, "Onboarding – Joana")

    service, http = drive(reply("doc-created.json"), reply("files-list-empty.json"), reply("sheet-created.json"),
                          reply("files-list-empty.json"), reply("igot-folder-created.json"), reply("files-list-empty.json"),
                          reply("json-created.json"))
    saved = store.save(other(), folder, "caio", service=service)
    assert multipart(http.sent[0])[0]["parents"] == [RESEARCH] and multipart(http.sent[0])[0]["name"] == "Onboarding – Joana"
    here = Transcript.load(folder / "joana.json")
    assert here.info["google_doc"] == DOC_URL and here.info["drive"] == {"folder": RESEARCH, "name": "Onboarding – Joana"}
    assert [s.name for s in here.speakers] == ["Ana", "Bruno"] and store.outbox(folder) == []


def test_two_saves_while_drive_is_down_leave_one_entry_per_interview(library, sleeps):
    store.save(in_drive(other()), library, "caio", drive=False)
    lib = store.Library(library)
    service, _ = drive(*busy(1))
    lib.change_now("joana", lambda t: name_speakers(t, ["Ana", "Bruno", "Ana"]), service=service)
    first = store.outbox(library)
    service, _ = drive(*busy(1))  # Joana's entry tried again; Caio's not after it
    assert lib.change_now("caio", lambda t: name_speakers(t, ["Caio", "Bia", "Caio"]), service=service).drive_problem
    service, _ = drive(*busy(1))
    assert lib.change_now("joana", lambda t: name_speakers(t, ["Ana", "Bia"]), service=service).drive_problem
    entries = store.outbox(library)
    assert [e.stem for e in entries] == ["joana", "caio"]  # one each, oldest first
    assert entries[0].queued == first[0].queued  # still queued since the first failure
    assert sorted(os.listdir(library / ".igot" / "outbox")) == ["caio.json", "joana.json"]


def test_a_planted_entry_naming_another_place_or_through_a_link_is_discarded_unsent(library, tmp_path, caplog):
    box = library / ".igot" / "outbox"
    box.mkdir(parents=True, exist_ok=True)
    entry = {"folder": None, "name": None, "queued": "2020-01-01T00:00:00Z"}
    (box / "x.json").write_text(json.dumps({"stem": "../x", **entry}))  # names a place outside the library
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"stem": "joana", **entry}))
    (box / "joana.json").symlink_to(elsewhere)  # the entry itself a link
    outside = tmp_path / "outside.json"
    outside.write_bytes((library / "joana.json").read_bytes())
    (library / "linked.json").symlink_to(outside)  # an interview's JSON through a link
    (box / "linked.json").write_text(json.dumps({"stem": "linked", **entry}))
    (box / "caio.json").write_text(json.dumps({"stem": "caio", "transcript": "…", **entry}))  # another shape

    service, http = drive()
    with caplog.at_level(logging.WARNING, logger="igot.outputs.store"):
        saved = store.save(other(), library, "caio", service=service)
    assert http.sent == [] and saved.drive_problem is None  # no Drive call for any of them
    assert os.listdir(box) == [] and elsewhere.is_file() and outside.is_file()  # the links removed, not what they lead to
    warned = [r.getMessage() for r in caplog.records if "discarded the Drive outbox entry" in r.getMessage()]
    assert len(warned) == 4


def test_a_change_journal_may_name_an_outbox_entry_and_nothing_beside_it():
    """A commit killed half way is finished from its journal: the outbox entry it wrote is one of
    the library's own files; a path climbing out of the outbox is not."""
    assert changes.library_file(".igot/outbox/joana.json")
    for bad in (".igot/outbox/../lock", ".igot/outbox/a/b.json", ".igot/outbox", ".igot/sending"):
        with pytest.raises(ValueError):
            changes.library_file(bad)


class Meanwhile(Recorder):
    """Drive as recorded, and `change` made when its first request comes: the workspace saving a
    correction while the outbox is being sent."""

    def __init__(self, responses, change):
        super().__init__(responses)
        self.change = change

    def request(self, *args, **kwargs):
        change, self.change = self.change, None
        if change is not None:
            change()
        return super().request(*args, **kwargs)


def test_an_interview_changed_while_it_is_sent_stays_in_the_outbox(library, sleeps):
    """Drive is answered without the library's lock held: a correction saved meanwhile is not
    lost from Drive, its entry stays for the version the Doc does not have yet."""
    lib = store.Library(library)
    service, _ = drive(*busy())
    lib.change_now("joana", lambda t: name_speakers(t, ["Ana", "Bruno", "Ana"]), service=service)
    http = Meanwhile(sent_again(), lambda: lib.change("joana", lib.open("joana").version,
                                                      lambda t: name_speakers(t, ["Ana", "Bia"])))
    sent = store.send_outbox(library, service=drive_service(http=http))
    assert ">Bruno</b>" in multipart(http.sent[1])[2].decode("ascii")  # the version read when sending began
    assert [s.name for s in sent["joana"][0].speakers] == ["Ana", "Bia"]
    assert [e.stem for e in store.outbox(library)] == ["joana"]  # Bia goes to the Doc next time


def test_igot_serve_start_sends_the_outbox_with_the_saved_sign_in_only(library, sleeps, monkeypatch):
    from igot.outputs import gdoc
    from igot.workspace.server import send_waiting

    service, _ = drive(*busy())
    store.Library(library).change_now("joana", lambda t: name_speakers(t, ["Ana", "Bruno", "Ana"]), service=service)
    said: list[str] = []
    monkeypatch.setattr(gdoc, "saved_credentials", lambda: None)  # never signed in on this computer: nobody is asked
    send_waiting(library, said.append)
    assert said == ["Google Drive: 1 interview waits to be sent to Google Drive, at the next igot run or igot rename "
                    "that reaches it (this computer has no saved Google sign-in)."] and len(store.outbox(library)) == 1

    service, http = drive(*sent_again())
    monkeypatch.setattr(gdoc, "saved_credentials", lambda: "signed in")
    monkeypatch.setattr(gdoc, "drive_service", lambda creds: service if creds == "signed in" else None)
    send_waiting(library, said.append)
    assert said[-1] == "Google Drive: brought up to date: joana." and store.outbox(library) == []
    assert ">Bruno</b>" in multipart(http.sent[1])[2].decode("ascii")


# --- Drive is talked to without the library's lock ----------------------------------------------
class Gated(Recorder):
    """Drive as recorded, each request waiting until `go` is set (a Drive that takes its time to
    answer); notes whether this process held the library's lock when each request was made."""

    def __init__(self, folder: Path, responses):
        super().__init__(responses)
        self.folder = folder
        self.asked, self.go = threading.Event(), threading.Event()
        self.under_lock: list[bool] = []

    def request(self, *args, **kwargs):
        self.under_lock.append(changes.holds(self.folder))
        self.asked.set()
        self.go.wait(30)
        return super().request(*args, **kwargs)


RENAME_TAG = """
import sys
from igot.outputs.store import Library
from igot.runtime import changes
changes.WAIT = 10.0  # a lock held while Drive answers: Busy in 10 s, not 60
print(sorted(Library(sys.argv[1]).rename_tag("pricing", "price")))
"""


def test_while_drive_is_down_another_thread_and_process_change_the_library(library, sleeps):
    """The naming is committed, then Drive is asked (each request slow, then 500 after every
    retry): meanwhile the workspace (a thread of this process) saves a highlight, and `igot tags`
    (another process) renames a tag in every interview, neither waiting for Drive."""
    lib = store.Library(library)
    http = Gated(library, busy())
    said: dict = {}
    naming = threading.Thread(target=lambda: said.update(saved=lib.change_now(
        "joana", lambda t: name_speakers(t, ["Ana", "Bruno", "Ana"]), service=drive_service(http=http))))
    naming.start()
    try:
        assert http.asked.wait(30)  # Drive is being asked for Joana's Doc
        workspace = threading.Thread(target=lambda: said.update(tagged=lib.change(
            "caio", lib.open("caio").version,
            lambda t: highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 6.0, ["pricing"])))))
        workspace.start()
        workspace.join(10)
        assert not workspace.is_alive() and "tagged" in said  # saved while Drive has not answered
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        tags = subprocess.run([sys.executable, "-c", RENAME_TAG, str(library)], capture_output=True, text=True,
                              timeout=60, env=env)
        assert tags.returncode == 0, tags.stderr
        assert tags.stdout.strip() == "['caio']"
        assert not http.go.is_set() and naming.is_alive()  # all of it before Drive answered
    finally:
        http.go.set()
        naming.join(60)
    assert not naming.is_alive()
    assert http.under_lock == [False] * TRIES  # no request made while this process held the lock
    saved = said["saved"]
    assert saved.doc is None and "HTTP 500" in saved.drive_problem
    assert [s.name for s in Transcript.load(library / "joana.json").speakers] == ["Ana", "Bruno"]
    assert [h.tags for h in Transcript.load(library / "caio.json").highlights] == [["price"]]
    assert [e.stem for e in store.outbox(library)] == ["joana"]  # the naming waits for the next try


def test_a_save_under_the_callers_lock_is_sent_once_the_caller_lets_it_go(library):
    """A caller that holds the library's lock around the save (a run: the stem and its files under
    one hold) does not hold it while Drive answers: the save sends as the caller lets it go, and
    what Drive answered is in Saved then."""
    http = Gated(library, sent_again())
    http.go.set()
    named = name_speakers(Transcript.load(library / "joana.json"), ["Ana", "Bruno", "Ana"])
    with changes.locked(library):
        with changes.locked(library):
            saved = store.save(named, library, "joana", service=drive_service(http=http))
        assert http.sent == [] and saved.doc is None  # not yet: the lock is still held
        assert [s.name for s in Transcript.load(library / "joana.json").speakers] == ["Ana", "Bruno"]  # committed
    assert len(http.sent) == len(sent_again()) and http.under_lock == [False] * len(sent_again())
    assert saved.doc == DOC_URL and saved.drive_problem is None and saved.transcript.info["google_doc"] == DOC_URL
    assert store.outbox(library) == []


def test_a_block_that_fails_after_the_save_sends_nothing_and_the_entry_waits(library):
    http = Gated(library, sent_again())
    http.go.set()
    with pytest.raises(RuntimeError):
        with changes.locked(library):
            store.save(name_speakers(interview(), ["Ana", "Bruno", "Ana"]), library, "joana",
                       service=drive_service(http=http))
            raise RuntimeError("the caller's next step failed")
    assert http.sent == [] and [e.stem for e in store.outbox(library)] == ["joana"]


@pytest.mark.parametrize("down", ["busy", "offline"])
def test_once_drive_cannot_be_reached_the_next_entries_are_not_tried(library, sleeps, down):
    """Each entry tried would wait the client's retries again (about a minute): after the first
    that cannot reach Drive, the rest wait for the next try, and say so."""
    store.save(in_drive(other()), library, "caio", drive=False)
    lib = store.Library(library)
    service, _ = drive(*busy())
    lib.change_now("joana", lambda t: name_speakers(t, ["Ana", "Bruno", "Ana"]), service=service)  # queued first

    class Offline(Recorder):
        def request(self, *args, **kwargs):
            self.sent.append(args)
            raise httplib2.ServerNotFoundError("Unable to find the server at www.googleapis.com")

    http = Recorder(busy(2)) if down == "busy" else Offline([])
    said: list[str] = []
    saved = lib.change_now("caio", lambda t: name_speakers(t, ["Caio", "Bia", "Caio"]), service=drive_service(http=http),
                           log=said.append)
    assert len(http.sent) == TRIES  # Joana's Doc looked for, with every retry; nothing asked for Caio's
    assert saved.doc is None and saved.drive_problem.startswith(
        "Saved here; the Google Doc was not updated (not tried: Google Drive did not answer for interview 'joana' just before: ")
    assert saved.drive_problem.endswith(AGAIN_FIX[down])
    assert [line for line in said if line.startswith("Google Drive: interview 'joana': Saved here;")]
    assert [e.stem for e in store.outbox(library)] == ["joana", "caio"]  # both wait for the next try
    assert [s.name for s in Transcript.load(library / "caio.json").speakers] == ["Caio", "Bia"]


AGAIN_FIX = {"busy": f"{store.AGAIN} Wait a few minutes and run again.",
             "offline": f"{store.AGAIN} Check the internet connection and run again."}


def test_an_entry_drive_refuses_does_not_stop_the_next(library, sleeps):
    """A refusal that is the entry's own (its Doc's folder gone: 404) says nothing of Drive being down:
    the next entry is sent."""
    store.save(in_drive(other()), library, "caio", drive=False)
    lib = store.Library(library)
    service, _ = drive(*busy())
    lib.change_now("joana", lambda t: name_speakers(t, ["Ana", "Bruno", "Ana"]), service=service)
    service, _ = drive(*busy())
    lib.change_now("caio", lambda t: name_speakers(t, ["Caio", "Bia", "Caio"]), service=service)  # both queued
    service, http = drive(doc_there(), reply("error-404-notFound.json"), *sent_again())  # Joana's Doc not taken
    sent = store.send_outbox(library, service=service)
    assert "missing or not one iGot may use" in str(sent["joana"])
    assert sent["caio"][1] == DOC_URL and len(http.sent) == 2 + len(sent_again())
    assert [e.stem for e in store.outbox(library)] == ["joana"]


def test_two_senders_of_the_outbox_take_turns(library, sleeps):
    """Two saves (a run in the workspace, a notebook cell) send the outbox at once now that neither
    holds the library's lock: the second waits for the first, then finds what is left (here
    nothing): an entry is never sent twice at once (a Doc made twice, an older version last)."""
    service, _ = drive(*busy())
    store.Library(library).change_now("joana", lambda t: name_speakers(t, ["Ana", "Bruno", "Ana"]), service=service)
    first = Gated(library, sent_again())
    said: dict = {}
    sender = threading.Thread(target=lambda: said.update(first=store.send_outbox(library, service=drive_service(http=first))))
    sender.start()
    second_service, second = drive(*sent_again())
    other_sender = threading.Thread(target=lambda: said.update(second=store.send_outbox(library, service=second_service)))
    try:
        assert first.asked.wait(30)
        other_sender.start()
        other_sender.join(0.5)
        assert other_sender.is_alive() and second.sent == []  # waiting for the first
    finally:
        first.go.set()
        sender.join(30)
        other_sender.join(30)
    assert said["first"]["joana"][1] == DOC_URL and said["second"] == {} and second.sent == []
    assert store.outbox(library) == []
