"""One door for every writer, nothing lost (issue 49): the notebook's naming and publish cells and
`igot rename` change an interview as its file is now, under the library's lock, with a new version
and a record in its history; so a word corrected in the workspace meanwhile stays, Undo never takes
a phrase away, the history stays small, and the label a speaker shows is the one `igot rename`
names."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import replace

import orjson
import pytest

import igot.colab
from igot.cli import main
from igot.outputs import corrections, library, store
from igot.outputs.store import Library, Stale
from igot.pipeline import RunResult
from igot.speakers.phrases import merge_speakers
from igot.transcript import Phrase, Source, Speaker, Transcript, Word
from tests.test_highlights import interview
from tests.test_same_name import SPLIT
from tests.test_same_name import interview as split_interview

CORRECTED = "It was fine, but the camera could not read my card."  # the researcher's words for Bruno's first phrase
AT = 2  # its place


def said(t: Transcript) -> Counter:
    """Every word of the interview, with its time: what must never go missing."""
    return Counter((w.text, w.start, w.end) for p in t.phrases for w in p.words)


def page_correction(lib: Library, stem: str, version: str, **asked) -> store.Opened:
    """A correction as the workspace's page sends it: the route's own call (server.py, correct())."""
    return lib.change(stem, version, lambda t: corrections.correction(t, asked))


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def session(tmp_path) -> tuple[RunResult, Library]:
    """What step 6 of the notebook leaves: the run's result (three speakers: Ana heard as two), its
    files in the session's library."""
    t = split_interview(SPLIT)
    saved = store.save(t, tmp_path / "igot-output", "first-day", drive=False)
    return RunResult(saved.transcript, saved.files, 1.0), Library(tmp_path / "igot-output")


def test_naming_in_the_notebook_keeps_a_word_corrected_in_the_workspace(session, capsys):
    result, lib = session
    page_correction(lib, "first-day", lib.open("first-day").version, kind="words", phrase=AT, text=CORRECTED)

    named = igot.colab.name_speakers(result, "Ana, Ana, Bruno")  # step 7, from the run's result in memory

    now = lib.open("first-day").transcript
    assert CORRECTED in [p.text for p in now.phrases] and CORRECTED in [p.text for p in named.transcript.phrases]
    assert [s.name for s in now.speakers] == ["Ana", "Bruno"]
    assert "3 speakers, 2 names" in capsys.readouterr().out
    # The naming is in the history after the correction: Undo takes it back whole, then the correction.
    before_naming = corrections.undone(now)
    assert [s.name for s in before_naming.speakers] == ["Speaker 1", "Speaker 2", "Speaker 3"]
    assert [(p.speaker, p.text) for p in before_naming.phrases] == [
        (p.speaker, CORRECTED if i == AT else p.text) for i, p in enumerate(result.transcript.phrases)]
    assert corrections.undone(before_naming).phrases == result.transcript.phrases
    # The cell run again with the same names (step 6's order) changes nothing more.
    igot.colab.name_speakers(result, "Ana, Ana, Bruno")
    assert lib.open("first-day").transcript.to_dict() == now.to_dict()


def test_publish_keeps_a_word_corrected_in_the_workspace_after_naming(session):
    result, lib = session
    named = igot.colab.name_speakers(result, "Ana, Ana, Bruno")
    fixed = "My sister helped me in the end, thank goodness."
    at = next(i for i, p in enumerate(named.transcript.phrases) if p.text.startswith("My sister"))
    page_correction(lib, "first-day", lib.open("first-day").version, kind="words", phrase=at, text=fixed)

    igot.colab.publish(named, download=False)  # step 8, with the transcript step 7 returned

    folder = lib.folder
    now = Transcript.load(folder / "first-day.json")
    assert now.phrases[at].text == fixed
    assert corrections.undoable(now) == (2, "words")  # the naming and the correction, both still to undo
    assert fixed in (folder / "first-day.html").read_text(encoding="utf-8")
    assert fixed in (folder / "first-day.srt").read_text(encoding="utf-8")
    assert fixed in (folder / library.INDEX).read_text(encoding="utf-8")


def test_igot_rename_keeps_a_workspace_correction_and_makes_a_new_version(session):
    result, lib = session
    first = lib.open("first-day").version
    page = page_correction(lib, "first-day", first, kind="words", phrase=AT, text=CORRECTED)  # the page now holds page.version

    code, out, err = cli("rename", "first-day", "--names", "Ana,Ana,Bruno", "--out", str(lib.folder), "--no-voices")

    assert code == 0, err
    assert "Speakers: 1 = Ana, 2 = Bruno" in out and "3 speakers, 2 names" in out
    now = lib.open("first-day")
    assert now.version != page.version and CORRECTED in [p.text for p in now.transcript.phrases]
    assert corrections.undoable(now.transcript) == (2, "names")
    # The page that read the interview before the rename is told to reload, and nothing changes.
    with pytest.raises(Stale, match="changed since this page read it"):
        page_correction(lib, "first-day", page.version, kind="words", phrase=1, text="Lost words.")
    assert lib.open("first-day").version == now.version


def test_undo_after_a_rename_joined_two_speakers_never_loses_a_phrase(tmp_path):
    """The story of the issue: a phrase split in the workspace, then `igot rename` gives both
    speakers one name (their phrases join again), then Undo in the workspace: every word is there,
    at every step."""
    folder = tmp_path / "library"
    store.save(interview(), folder, "joana", drive=False)
    lib = Library(folder)
    whole = said(lib.open("joana").transcript)
    split = page_correction(lib, "joana", lib.open("joana").version, kind="split", phrase=2, word=3)
    assert [p.text for p in split.transcript.phrases][2:4] == ["And the onboarding", "took me a whole week."]

    code, _, err = cli("rename", "joana", "--names", "Ana,Ana", "--out", str(folder), "--no-voices")
    assert code == 0, err
    joined = lib.open("joana")
    assert len(joined.transcript.speakers) == 1 and said(joined.transcript) == whole

    back = page_correction(lib, "joana", joined.version, kind="undo")  # takes back the rename
    assert said(back.transcript) == whole
    assert [p.text for p in back.transcript.phrases] == [p.text for p in split.transcript.phrases]
    assert [s.name for s in back.transcript.speakers] == ["Ana", "Joana"]
    again = page_correction(lib, "joana", back.version, kind="undo")  # then the split
    assert said(again.transcript) == whole
    assert "And the onboarding took me a whole week." in [p.text for p in again.transcript.phrases]
    assert [(p.speaker, p.text) for p in again.transcript.phrases] == [(p.speaker, p.text) for p in interview().phrases]


def test_undo_refuses_rather_than_lose_words_when_a_file_was_changed_behind_the_history(tmp_path):
    """A file an older iGot renamed (phrases joined, nothing kept in the history): Undo of the split
    made before says it cannot, and every word stays."""
    from igot.speakers.phrases import name_speakers

    folder = tmp_path / "library"
    store.save(interview(), folder, "joana", drive=False)
    lib = Library(folder)
    split = page_correction(lib, "joana", lib.open("joana").version, kind="split", phrase=2, word=3)
    store.save(name_speakers(split.transcript, ["Ana", "Ana"]), folder, "joana", drive=False)  # as igot rename wrote it before
    behind = lib.open("joana")
    with pytest.raises(corrections.CorrectionError, match="could lose words"):
        page_correction(lib, "joana", behind.version, kind="undo")
    assert lib.open("joana").version == behind.version and said(behind.transcript) == said(interview())


def long_interview(phrases: int = 400, words: int = 12) -> Transcript:
    """An hour's worth of talk: two people taking turns, each phrase with its measured voices."""
    out, clock = [], 0.0
    for k in range(phrases):
        speaker = "S1" if k % 2 == 0 else "S2"
        ws = [Word(f"word{k}-{i}{'.' if i == words - 1 else ''}", round(clock + i * 0.4, 3), round(clock + i * 0.4 + 0.35, 3),
                   speaker=speaker, probability=0.9) for i in range(words)]
        out.append(Phrase(speaker, ws[0].start, ws[-1].end, " ".join(w.text for w in ws), None, ws,
                          voices={"S1": 0.8 if speaker == "S1" else 0.2, "S2": 0.3 if speaker == "S1" else 0.75}))
        clock += words * 0.4 + 0.6
    return Transcript(Source("A long interview"), "en", clock, [Speaker("S1", "Ana"), Speaker("S2", "Joana")], out)


@pytest.mark.slow  # 200 merges on an hour's 4,800 words: ~13 s
def test_two_hundred_merges_keep_the_history_small_and_each_merge_keeps_only_what_it_changed():
    t = long_interview()
    interview_bytes = len(orjson.dumps(t.phrases))
    sizes = []
    for k in range(200):
        at = (k * 37) % len(t.phrases)
        owner = t.phrases[at].speaker
        t = corrections.given(t, at, corrections.NEW_SPEAKER)  # a phrase the detection gave someone else
        new = t.phrases[at].speaker
        before_merge = t
        t = corrections.renamed(t, {new: t.speaker_name(owner)})  # named like its owner: one person again
        assert len(t.speakers) == 2
        group = [e for e in t.edits if e.id == t.edits[-1].id]
        sizes.append(len(orjson.dumps(group)))
        if k == 199:  # the last merge undone: exactly the interview before it
            back = corrections.undone(t)
            assert (back.phrases, back.speakers) == (before_merge.phrases, before_merge.speakers)
    assert max(sizes) < interview_bytes / 20  # a merge keeps what it changed, not the whole interview
    history = len(orjson.dumps(t.edits))
    assert history <= corrections.HISTORY_BYTES + 1024
    assert len(t.to_json().encode()) <= len(replace(t, edits=[]).to_json().encode()) + corrections.HISTORY_BYTES + 4096
    # Undo goes back as far as the history keeps, then says why it goes no further.
    count, _ = corrections.undoable(t)
    assert 0 < count < 400
    for _ in range(count):
        t = corrections.undone(t)
    assert said(t) == said(long_interview())
    with pytest.raises(corrections.CorrectionError, match="forgotten"):
        corrections.undone(t)


def test_a_correction_too_large_to_keep_cannot_be_undone_and_says_so(monkeypatch):
    monkeypatch.setattr(corrections, "HISTORY_BYTES", 2000)
    t = long_interview(20)
    t = corrections.corrected(t, 0, "A short phrase.")
    t = corrections.renamed(t, {"S2": "Ana"})  # every phrase joins Ana's: more than the history holds
    assert corrections.undoable(t) == (0, None)
    with pytest.raises(corrections.CorrectionError, match="cannot be undone"):
        corrections.undone(t)
    assert t.phrases[0].text.startswith("A short phrase.")


def test_a_speaker_joined_by_the_run_shows_the_label_of_its_id_and_rename_names_it(tmp_path):
    """The run joins a small speaker into a bigger one (igot.speakers.rejoin, by merge_speakers):
    the ids are renumbered, and so are the labels of speakers not yet named."""
    t = split_interview(SPLIT)  # S1 Ana (asks), S2 (an "um", "do after that?", "yeah"), S3 Bruno
    joined = merge_speakers(t, {"S1": "S2"})  # the run joined Ana into the voice heard as S2
    assert [(s.id, s.name) for s in joined.speakers] == [("S1", "Speaker 1"), ("S2", "Speaker 2")]
    store.save(joined, tmp_path, "call", drive=False)
    code, out, err = cli("rename", "call", "--names", "Speaker 2=Bruno", "--out", str(tmp_path), "--no-voices")
    assert code == 0, err
    now = Transcript.load(tmp_path / "call.json")
    bruno = next(p for p in now.phrases if p.text.startswith("It was fine"))
    assert now.speaker_name(bruno.speaker) == "Bruno"


def test_rename_names_the_label_the_user_sees_in_a_file_an_older_igot_wrote(tmp_path):
    """A file written before labels followed ids: a lone speaker with id S1 labelled "Speaker 2"."""
    t = interview()
    t = replace(t, speakers=[Speaker("S1", "Speaker 2")], phrases=[replace(p, speaker="S1", words=[replace(w, speaker="S1") for w in p.words])
                                                                   for p in t.phrases])
    store.save(t, tmp_path, "alone", drive=False)
    code, out, err = cli("rename", "alone", "--names", "Speaker 2=Ana", "--out", str(tmp_path), "--no-voices")
    assert code == 0, err
    assert [(s.id, s.name) for s in Transcript.load(tmp_path / "alone.json").speakers] == [("S1", "Ana")]


@pytest.mark.slow  # two `igot serve` processes and several `igot rename`: ~20 s
def test_two_servers_and_igot_rename_on_one_folder_keep_every_acknowledged_correction(tmp_path):
    from tests.test_library_store import Served

    folder = tmp_path / "library"
    store.save(interview(), folder, "joana", drive=False)
    a, b = Served(folder), Served(folder)
    acknowledged: list[str] = []  # a word each acknowledged correction added
    before_rename: list[str] = []  # phrase 1's words, each acknowledged correction of it made from before a rename
    refused: list[str] = []
    try:
        for round_ in range(6):
            page = json.loads(a.request("GET", "/api/interviews/joana")[1])
            answers: dict[str, tuple[int, str]] = {}

            def correct(name: str, server: Served, phrase: int) -> None:
                text = page["phrases"][phrase]["text"] + f" {name}{round_}"
                answers[name] = server.request("POST", "/api/interviews/joana/corrections",
                                               {"version": page["version"], "kind": "words", "phrase": phrase, "text": text})

            threads = [threading.Thread(target=correct, args=(n, s, k)) for n, s, k in (("a", a, 0), ("b", b, 3))]
            [t.start() for t in threads]
            [t.join() for t in threads]
            for name, (status, body) in answers.items():
                assert status in (200, 409), body
                (acknowledged if status == 200 else refused).append(f"{name}{round_}" if status == 200 else body)
            # Different phrases: both may be kept (a server that read the version the page names
            # compares only the phrase changed); at least the first to arrive always is.
            assert any(status == 200 for status, _ in answers.values())
            held = next(json.loads(body)["version"] for status, body in answers.values() if status == 200)
            # `igot rename` between two corrections: from the file as it is, a version of its own.
            names = "Ana,Joana" if round_ % 2 else "Ana Maria,Joana"
            done = subprocess.run([sys.executable, "-m", "igot", "rename", "joana", "--names", names, "--out", str(folder),
                                   "--no-voices"], capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
            # A correction from before the rename, to a phrase the rename did not touch: kept when the
            # server knows the version it was made on, else refused ("changed since"): never lost unsaid.
            status, body = b.request("POST", "/api/interviews/joana/corrections",
                                     {"version": held, "kind": "words", "phrase": 1, "text": f"Words from before the rename {round_}."})
            assert status in (200, 409), body
            if status == 200:  # each replaces phrase 1's words: the last one acknowledged is what it reads
                before_rename.append(f"Words from before the rename {round_}.")
            else:
                refused.append(body)
        now = Transcript.load(folder / "joana.json")
        text = " ".join(p.text for p in now.phrases)
        assert all(word in text.split() for word in acknowledged) and len(acknowledged) >= 6
        if before_rename:
            assert now.phrases[1].text == before_rename[-1]
        assert all("changed since this page read it" in json.loads(body)["error"] for body in refused)
        assert [s.name for s in now.speakers] == ["Ana", "Joana"]  # the last rename's names
        # every correction and every rename, each to undo
        assert corrections.undoable(now)[0] == len(acknowledged) + len(before_rename) + 6
    finally:
        a.stop()
        b.stop()


def test_naming_an_interview_in_drive_sends_the_workspace_correction_to_its_doc_row_and_kept_json(tmp_path):
    """The door `igot rename` and the notebook's cells go through, with Drive: the Doc and the kept
    JSON in Drive show the names and the word corrected in the workspace meanwhile."""
    from tests.test_drive_repository import KEPT_JSON, exported
    from tests.test_gdoc import DOC, drive, multipart, reply
    from tests.test_outputs import found, in_drive
    from tests.test_outputs import interview as drive_interview

    folder = tmp_path / "out"
    store.save(in_drive(drive_interview()), folder, "joana", drive=False)  # published earlier
    lib = Library(folder)
    fixed = lib.open("joana").transcript.phrases[0].text + " Right."
    page_correction(lib, "joana", lib.open("joana").version, kind="words", phrase=0, text=fixed)
    service, http = drive(
        ({"status": "200"}, json.dumps({"id": DOC, "trashed": False})), reply("doc-created.json"),
        reply("files-list-sheet-found.json"), exported(), reply("sheet-created.json"),
        reply("files-list-found.json"), found(KEPT_JSON), reply("json-created.json"),
    )

    saved = lib.change_now("joana", lambda t: corrections.named(t, ["Ana", "Bruno", "Ana"]), service=service)

    doc, kept = http.sent[1], http.sent[-1]
    page = multipart(doc)[2].decode("ascii")
    assert ">Bruno</b>" in page and "Right." in page
    drive_copy = Transcript.from_json(kept.body.decode("utf-8"))
    assert drive_copy.to_dict() == Transcript.load(folder / "joana.json").to_dict() == saved.transcript.to_dict()
    assert drive_copy.phrases[0].text.startswith(fixed.removesuffix(" Right.")) and "Right." in drive_copy.phrases[0].text
    assert corrections.undoable(drive_copy) == (2, "names")
