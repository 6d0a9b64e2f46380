"""The Review list (issue 39, point 4): the words the machine was unsure of (below a probability,
issue 53 point 7), speech it heard and could not write, words close to the glossary; each fixed by
a correction or accepted, and gone from the list then, in the workspace, on the library page and
in `igot review`."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from igot.asr.transcribe import UNTRANSCRIBED
from igot.cli import main
from igot.outputs import review, store
from igot.outputs.library import load_interviews
from igot.transcript import Transcript, Word
from igot.workspace import server
from igot.workspace.guard import Door
from igot.workspace.review import COUNTS
from tests.test_corrections import PORT, client  # noqa: F401 (a fixture: the workspace's app on `folder`)
from tests.test_highlights import interview

UNSURE = {"price": 0.2, "small": 0.31, "team.": 0.25, "onboarding": 0.5}


def unsure_interview() -> Transcript:
    """Joana's interview as a run writes it: every word with the engine's probability, four of
    them low; speech at 17-19 s with no words; a phrase saying "pics" and "new bank"."""
    t = interview()
    phrases = [replace(p, words=[replace(w, probability=UNSURE.get(w.text, 0.97)) for w in p.words]) for p in t.phrases]
    last = phrases[3]
    said = [Word(text, last.start + 0.4 * i, last.start + 0.4 * i + 0.3, "S1", 0.9)
            for i, text in enumerate("I pay with pics at new bank.".split())]
    phrases[3] = replace(last, text="I pay with pics at new bank.", words=said, end=said[-1].end)
    return replace(t, phrases=phrases, info={UNTRANSCRIBED: [{"start": 17.0, "end": 19.0}]})


@pytest.fixture
def folder(tmp_path) -> Path:
    out = tmp_path / "library"
    store.save(unsure_interview(), out, "joana", drive=False)
    (out / "glossary.txt").write_text("Nubank\nPix\n", encoding="utf-8")
    return out


def listed(items) -> list[tuple[str, str]]:
    return [(i["kind"], i["text"]) for i in items]


def test_the_least_sure_words_speech_without_words_and_glossary_near_misses_are_listed_in_order(client):
    page = client.get("/api/interviews/joana/review").json()
    # the 4 words below the threshold ("price", "team.", "small", "onboarding"; the rest 0.9 and
    # more); the two neighbours in one phrase are one item
    assert listed(page["items"]) == [("word", "price"), ("word", "small team."), ("word", "onboarding"),
                                     ("glossary", "pics"), ("glossary", "new bank."), ("unwritten", "")]
    assert page["left"] == 6
    pics, bank = page["items"][3:5]
    assert (pics["offer"], bank["offer"]) == ("Pix", "Nubank")
    assert "Nubank" in bank["why"] and bank["speaker"] == "Ana"
    assert page["items"][0]["why"].startswith("The machine was unsure of this word (probability 0.20)")
    assert page["items"][5]["clock"] == "0:17"
    assert page["words"] == "4 words the recogniser was less than 65 % sure of."
    assert client.get("/api/review/left").json() == {"joana": 6}


def test_an_item_accepted_or_fixed_leaves_the_list_the_library_page_and_igot_review(client, folder, capsys):
    page = client.get("/api/interviews/joana/review").json()
    first = page["items"][0]
    r = client.post("/api/interviews/joana/review", json={"version": page["version"], "accept": first["id"]})
    assert r.status_code == 200, r.text
    assert listed(r.json()["items"])[0] == ("word", "small team.")
    assert Transcript.load(folder / "joana.json").reviewed == [first["id"]]  # kept in the interview
    # a stale tab's accept of another item is kept beside it; of the same item, refused as done already
    stale = client.post("/api/interviews/joana/review", json={"version": page["version"], "accept": page["items"][1]["id"]})
    assert stale.status_code == 200
    assert Transcript.load(folder / "joana.json").reviewed == [first["id"], page["items"][1]["id"]]
    again = client.post("/api/interviews/joana/review", json={"version": page["version"], "accept": first["id"]})
    assert again.status_code == 409
    # an item that is not there is said in one line
    gone = client.post("/api/interviews/joana/review", json={"version": r.json()["version"], "accept": first["id"]})
    assert gone.status_code == 400 and "no review item" in gone.json()["error"]
    # correcting the phrase is reviewing it: "small team." corrected, its item goes
    now = client.get("/api/interviews/joana").json()
    fixed = client.post("/api/interviews/joana/corrections", json={
        "version": now["version"], "kind": "words", "phrase": 1, "text": "Honestly the price is too high for a smaller team."})
    assert fixed.status_code == 200, fixed.text
    after = client.get("/api/interviews/joana/review").json()
    assert ("word", "small team.") not in listed(after["items"]) and after["left"] == 4
    assert after["words"] == "1 word the recogniser was less than 65 % sure of."
    assert client.get("/api/review/left").json() == {"joana": 4}
    # the same list from a terminal
    assert main(["review", "joana", "--out", str(folder), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [(i["kind"], i["text"]) for i in printed] == listed(after["items"])
    assert set(printed[0]) == {"id", "kind", "start", "end", "text", "speaker", "why", "offer"}
    assert main(["review", str(folder / "joana.json"), "--out", str(folder)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("0:10  word") and "“onboarding”" in lines[0]
    assert lines[-2] == "1 word the recogniser was less than 65 % sure of."
    assert lines[-1] == "4 to review in joana; fix or accept them in the workspace (igot serve)."


def test_a_name_from_a_file_reaches_the_terminal_escaped(folder, capsys):
    t = Transcript.load(folder / "joana.json")
    t = replace(t, speakers=[replace(t.speakers[0], name="Ana\x1b[2J"), t.speakers[1]])
    store.save(t, folder, "joana", drive=False)
    assert main(["review", "joana", "--out", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "Ana\\x1b[2J" in out


def test_a_word_is_listed_below_the_threshold_and_corrected_words_do_not_bring_up_others():
    t = unsure_interview()
    assert [i.text for i in review.items(t) if i.kind == "word"] == ["price", "small team.", "onboarding"]
    # a lower threshold lists fewer: "small" (0.31) and "onboarding" (0.5) are sure enough at 0.3
    fewer = review.items(t, options=review.ReviewOptions(below=0.3))
    assert [i.text for i in fewer if i.kind == "word"] == ["price", "team."]
    assert review.doubtful_words(fewer, review.ReviewOptions(below=0.3)) == "2 words the recogniser was less than 30 % sure of."
    # "price" corrected by hand: its phrase listed no more, and no other word takes its place
    p = t.phrases[1]
    words_now = [*p.words[:2], replace(p.words[2], text="pricing", heard="price"), *p.words[3:]]
    fixed = replace(t, phrases=[t.phrases[0], replace(p, words=words_now), *t.phrases[2:]])
    assert [i.text for i in review.items(fixed) if i.kind == "word"] == ["onboarding"]


def scored(t: Transcript, probability) -> Transcript:
    """`t` with each word's probability given by `probability(phrase, word)`."""
    return replace(t, phrases=[replace(p, words=[replace(w, probability=probability(k, i)) for i, w in enumerate(p.words)])
                               for k, p in enumerate(t.phrases)])


def test_in_a_library_the_bad_interviews_doubtful_words_are_listed_and_the_clean_ones_confident_words_are_not(tmp_path):
    # A clean interview (every word 0.90-0.99 sure) and a bad one (16 of its 31 words 0.10-0.42):
    # a tenth of each interview's words (before issue 53) sent the researcher to 4 sure words of
    # the clean one and left 12 of the bad one's unlisted; the threshold lists all 16 doubtful
    # ones and nothing in the clean one.
    out = tmp_path / "library"
    clean = scored(interview(), lambda k, i: 0.99 - 0.01 * ((3 * k + i) % 10))
    bad = scored(interview(), lambda k, i: 0.10 + 0.04 * i if i % 2 == 0 else 0.95)
    store.save(clean, out, "clean", drive=False)
    store.save(bad, out, "bad", drive=False)
    # the library page's counts as an iGot of the tenth-per-interview rule kept them: counted anew
    stamps = {iv.path.stem: iv.stamp for iv in load_interviews(out)}
    version = store.Library(out).kept_glossary().version
    (out / COUNTS).parent.mkdir(exist_ok=True)
    (out / COUNTS).write_text(json.dumps({stem: [f"{stamp}|{version}", 4] for stem, stamp in stamps.items()}))
    door = Door(PORT)
    app = TestClient(server.create_app(store.Library(out), door), base_url=f"http://127.0.0.1:{PORT}",
                     headers={"X-iGot-Token": door.token})
    doubtful = [w.text for p in bad.phrases for w in p.words if w.probability < 0.65]
    assert len(doubtful) == 16

    page = app.get("/api/interviews/bad/review").json()
    shown = [w for i in page["items"] if i["kind"] == "word" for w in i["text"].split()]
    assert shown == doubtful
    assert page["words"] == "16 words the recogniser was less than 65 % sure of."
    assert page["items"][0]["why"] == "The machine was unsure of this word (probability 0.10)."
    quiet = app.get("/api/interviews/clean/review").json()
    assert quiet["items"] == [] and quiet["left"] == 0
    assert quiet["words"] == "No words left that the recogniser was less than 65 % sure of."
    assert app.get("/api/review/left").json() == {"bad": 16, "clean": 0}
    # a new interview does not change an old one's list: a third, worse one is added
    store.save(scored(interview(), lambda k, i: 0.05), out, "worse", drive=False)
    assert app.get("/api/interviews/bad/review").json()["items"] == page["items"]
    assert app.get("/api/review/left").json() == {"bad": 16, "clean": 0, "worse": 4}


def test_an_interview_without_probabilities_or_untranscribed_speech_has_nothing_to_review():
    t = interview()  # made by hand, as an older iGot's files: no word probabilities
    assert review.items(t) == []
    weird = replace(t, info={UNTRANSCRIBED: [{"start": "x"}, 3, {"start": 1.0, "end": float("inf")}]})
    assert review.items(weird) == []  # a hand-made info is passed over, never a crash
