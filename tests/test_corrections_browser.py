"""Correcting an interview in the workspace's page (issue 39), in Chromium, with the mouse and the
keyboard as a user does: a word fixed in the inline editor, a phrase given to the other speaker, a
phrase split before selected words, two speakers made one by name, undo. After each step the page
is reloaded and shows it, and so do the files (JSON, HTML, Markdown, SRT, VTT), a highlight over the
edited words and the search."""

from __future__ import annotations

import html
import json
import re
from dataclasses import replace
from pathlib import Path
from urllib.parse import quote

import pytest

from igot.outputs import store
from igot.transcript import Source, Transcript
from igot.workspace import server
from tests.test_highlights import interview
from tests.test_workspace_attacks import browser  # noqa: F401 (a fixture: Chromium for one test)
from tests.test_workspace import tone
from tests.test_workspace_browser import drag_select, shot, wait_for

FORMATS = ("html", "md", "srt", "vtt")
# How each file writes who said a phrase (after its tags and ** are taken out).
SAYS = {"html": "{who} {time} {text}", "md": "{who} ({time}): {text}", "srt": "{who}: {text}", "vtt": "{who}: {text}"}


@pytest.fixture
def folder(tmp_path) -> Path:
    """joana: four phrases said by Ana and Joana, its recording (a tone) beside it."""
    out = tmp_path / "library"
    out.mkdir()
    t = interview()
    t = replace(t, source=Source("Interview with a team lead", None, str(tone(out / "joana.wav")), "file"), duration=20.0,
                phrases=[replace(p, link=None) for p in t.phrases])
    store.save(t, out, "joana", drive=False)
    return out


@pytest.fixture
def workspace(folder):
    running = server.start(folder)
    yield running
    running.stop()


def shown(folder: Path, fmt: str) -> str:
    """The file's text as a reader sees it: no tags, no Markdown marks, one space between words."""
    text = (folder / f"joana.{fmt}").read_text(encoding="utf-8")
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).replace("**", "").split())


def cues(folder: Path, fmt: str) -> list[str]:
    """The texts of a subtitle file's cues (SRT or VTT), without their tags."""
    blocks = (folder / f"joana.{fmt}").read_text(encoding="utf-8").strip().split("\n\n")
    return [re.sub(r"<[^>]+>", "", b.split("\n")[-1]).strip() for b in blocks if "-->" in b]


def saved(folder: Path) -> Transcript:
    return Transcript.load(folder / "joana.json")


def ready(page) -> None:
    wait_for(page, "window.igot && igot.ready() && document.querySelector('#transcript .phrase') !== null")


def reloaded(page) -> None:
    page.reload()
    ready(page)


def page_texts(page) -> list[str]:
    """Each phrase's text as the page shows it (its words, not its tools)."""
    return page.evaluate("[...document.querySelectorAll('#transcript .phrase')].map(p => p.textContent.trim())")


def who_says(page, i: int) -> str:
    return page.locator(f'.phrase[data-i="{i}"]').evaluate("p => p.closest('.turn').querySelector('.who').textContent")


def item(page, name: str):
    """The open menu's item `name` (Playwright's "has_text" would take Joana for Ana)."""
    return page.locator(".popover.menu").get_by_role("menuitem", name=name, exact=True)


def focused(locator) -> bool:
    return locator.evaluate("el => el === document.activeElement")


def fetched(page, path: str) -> dict:
    return page.evaluate("""async (path) => {
      const token = document.querySelector('meta[name="igot-token"]').content;
      const r = await fetch(path, {headers: {'X-iGot-Token': token}});
      return r.json();
    }""", path)


def search(page, q: str) -> dict:
    return fetched(page, "api/search?q=" + quote(q, safe=""))


def drawn(page) -> list:
    """The transcript as the page shows it: each turn's speaker (None: the phrases before anyone
    speaks) and its phrases, [number, text, marked as corrected]."""
    return page.evaluate("""[...document.querySelectorAll('#transcript > div')].map((d) => [
      d.classList.contains('turn') ? (d.querySelector('.who') ? d.querySelector('.who').textContent : '') : null,
      [...d.querySelectorAll('.phrase')].map((p) => [Number(p.dataset.i), p.textContent.trim(), p.classList.contains('fixed')])])""")


def turns(data: dict) -> list:
    """The transcript of an interview's page data as drawn (drawn()'s shape): a turn per speaker's
    phrases one after another; an empty phrase stays in the turn before it."""
    names = {s["id"]: s["name"] for s in data["speakers"]}
    out, last = [], None
    for i, p in enumerate(data["phrases"]):
        if p["text"] and p["speaker"] != last:
            out.append([names.get(p["speaker"], ""), []])
            last = p["speaker"]
        elif not out:
            out.append([None, []])
        out[-1][1].append([i, p["text"], p["heard"] is not None])
    return out


def corrected(page, act) -> dict:
    """Do `act` (the user's clicks or keys that send a correction); the interview as the page then
    shows it (it patches in the server's answer, what changed), checked against a reload's: its
    data, and the transcript drawn."""
    with page.expect_response(lambda r: r.url.endswith("/corrections") and r.request.method == "POST") as answer:
        act()
    assert answer.value.status == 200, answer.value.text()
    version = answer.value.json()["version"]
    wait_for(page, f"igot.interview().version === {json.dumps(version)}")
    data = page.evaluate("igot.interview()")
    assert data == fetched(page, "api/interviews/joana")
    assert drawn(page) == turns(data)
    return data


def check_files(folder: Path, said: list[tuple[str, str, str]], absent: list[str] = ()) -> None:
    """Every export shows each (who, time, text) as said, and none of `absent`; the JSON agrees with it."""
    t = saved(folder)
    texts = {p.text: t.speaker_name(p.speaker) for p in t.phrases}
    for who, _, text in said:
        assert texts.get(text) == who, (text, texts)
    for fmt in FORMATS:
        page = shown(folder, fmt)
        for who, time, text in said:
            line = SAYS[fmt].format(who=who, time=time, text=text)
            assert line in page, (fmt, line, page)
        for gone in absent:
            assert gone not in page, (fmt, gone)


@pytest.mark.slow  # Chromium
def test_a_researcher_corrects_an_interview_in_the_page(browser, workspace, folder):
    page = browser.open(f"{workspace.url}#/interview/joana")
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    ready(page)
    assert page.evaluate("igot.player().kind") == "audio"
    assert page.locator(".fix-bar").count() == 0  # nothing corrected yet: no Undo, no toggle

    # A highlight over the words about to be fixed, made with the mouse.
    drag_select(page, '.phrase[data-i="1"] .w[data-w="0"]', '.phrase[data-i="1"] .w[data-w="4"]')
    page.locator(".popover.offer-more", has_text="Give to…").wait_for(state="visible", timeout=5000)  # offered after mouseup
    assert page.locator(".popover.offer-more", has_text="Split here").count() == 0  # from the first word: no split
    page.locator(".popover.offer").click()
    page.locator(".form-pop .tag-input").fill("pricing")
    page.keyboard.press("Enter")
    with page.expect_response(lambda r: r.url.endswith("/highlights") and r.request.method == "POST") as made:
        page.locator(".form-pop button[type=submit]").click()
    assert made.value.status == 201
    assert saved(folder).highlights[0].quote == "Honestly the price is too"

    # --- 1. "price" -> "pricing" in the inline editor (the ✎ on the phrase, shown on hover) ------------
    page.locator('.phrase[data-i="3"]').click()  # the player at phrase 3: where it must stay
    before = page.evaluate("[igot.now(), igot.player().time()]")
    page.locator('.phrase[data-i="1"]').hover()
    page.locator('.phrase[data-i="1"] .fix-words').click()
    editor = page.locator("#transcript .editor textarea")
    assert focused(editor) and editor.input_value() == "Honestly the price is too high for a small team."
    page.keyboard.press("Control+Home")
    for _ in range(len("Honestly the price")):
        page.keyboard.press("ArrowRight")  # in the editor, arrows move the caret, not the player
    page.keyboard.press("Backspace")
    page.keyboard.type("ing")
    page.keyboard.press("Space")  # a space typed, not the player started
    page.keyboard.press("Backspace")
    assert page.evaluate("[igot.now(), igot.player().time()]") == before and page.evaluate("igot.player().paused()")
    assert editor.input_value() == "Honestly the pricing is too high for a small team."
    page.evaluate("document.querySelector('audio').dataset.kept = 'yes'")  # the same player after the answer
    shot(page, "workspace-corrections.png")
    answer = corrected(page, lambda: page.keyboard.press("Enter"))
    assert answer["phrases"][1]["text"] == "Honestly the pricing is too high for a small team."
    assert page.locator("#transcript .editor").count() == 0
    assert page.evaluate("document.querySelector('audio').dataset.kept") == "yes"
    assert page.evaluate("[igot.now(), igot.player().time()]") == before
    assert page.evaluate("igot.interview().version") == answer["version"]
    assert page.locator(".fix-bar .undo").get_attribute("title") == "Undo the last correction: the corrected words of a phrase"
    assert page.locator(".hl-item .quote-link").text_content() == "“Honestly the pricing is too”"
    # A later highlight names the new version: saved, not refused.
    drag_select(page, '.phrase[data-i="3"] .w[data-w="0"]', '.phrase[data-i="3"] .w[data-w="1"]')
    page.locator(".popover.offer").click()
    page.locator(".form-pop .tag-input").fill("follow-up")
    page.keyboard.press("Enter")
    with page.expect_response(lambda r: r.url.endswith("/highlights") and r.request.method == "POST") as made:
        page.locator(".form-pop button[type=submit]").click()
    assert made.value.status == 201, made.value.text()

    reloaded(page)
    assert page_texts(page)[1] == "Honestly the pricing is too high for a small team."
    assert page.locator('.phrase[data-i="1"].fixed .fixed-mark').count() == 1  # marked as corrected
    assert not page.locator(".heard").first.is_visible()  # what the machine heard: not shown until asked
    check_files(folder, [("Joana", "0:04", "Honestly the pricing is too high for a small team.")], absent=["the price is"])
    t = saved(folder)
    assert t.phrases[1].words[2].heard == "price" and t.highlights[0].quote == "Honestly the pricing is too"
    hits = search(page, "pricing")["hits"]
    assert [h["text"] for h in hits] == ["Honestly the pricing is too high for a small team."]
    assert search(page, '"price is"')["count"] == 0

    # --- 2. a phrase given to the other speaker: its ⋯ menu, "Speaker…", "Ana" -------------------------
    page.locator('.phrase[data-i="2"]').hover()
    page.locator('.phrase[data-i="2"] .fix-more').click()
    item(page, "Speaker…").click()
    assert page.locator(".popover.menu .menu-item:disabled").text_content() == "Joana"  # who says it now
    corrected(page, lambda: item(page, "Ana").click())
    assert who_says(page, 2) == "Ana"
    reloaded(page)
    assert who_says(page, 2) == "Ana" and who_says(page, 1) == "Joana"
    check_files(folder, [("Ana", "0:09", "And the onboarding took me a whole week.")])
    assert [p.speaker for p in saved(folder).phrases] == ["S1", "S2", "S1", "S1"]

    # --- 3. two words selected inside a phrase, "Split here": cut before the first -------------------------
    drag_select(page, '.phrase[data-i="1"] .w[data-w="5"]', '.phrase[data-i="1"] .w[data-w="6"]')
    corrected(page, lambda: page.locator(".popover.offer-more button", has_text="Split here").click())
    reloaded(page)
    assert page_texts(page)[1:3] == ["Honestly the pricing is too", "high for a small team."]
    assert [p.text for p in saved(folder).phrases][1:3] == ["Honestly the pricing is too", "high for a small team."]
    for fmt in ("srt", "vtt"):  # a cue each
        assert {"Joana: Honestly the pricing is too", "Joana: high for a small team."} <= set(cues(folder, fmt)), fmt
    check_files(folder, [("Joana", "0:04", "Honestly the pricing is too")])
    assert saved(folder).highlights[0].quote == "Honestly the pricing is too"

    # --- 4. the Speakers panel: a sample of Joana played, then Joana named Ana: one person -----------------
    page.locator(".names-open").click()
    page.locator('.names-panel .sample[data-id="S2"]').click()
    wait_for(page, "!igot.player().paused() && igot.player().time() >= 4")
    wait_for(page, "igot.player().paused()", timeout=8)  # the sample stops by itself (Joana's longest phrase)
    assert 4.0 <= page.evaluate("igot.player().time()") <= 9.3
    page.locator('.names-panel input[data-id="S2"]').click()
    page.keyboard.press("Control+a")
    page.keyboard.type("Ana")
    answer = corrected(page, lambda: page.locator(".names-panel button[type=submit]").click())
    assert [s["name"] for s in answer["speakers"]] == ["Ana"]
    reloaded(page)
    assert page.locator(".speakers .who").all_text_contents() == ["Ana"]
    assert page.locator(".fix-bar .undo").get_attribute("title") == "Undo the last correction: the speakers' names"
    t = saved(folder)
    assert [s.name for s in t.speakers] == ["Ana"] and {p.speaker for p in t.phrases} == {"S1"}
    for fmt in FORMATS:
        assert "Joana" not in shown(folder, fmt), fmt
        assert "pricing is too" in shown(folder, fmt), fmt
    assert t.highlights[0].quote == "Honestly the pricing is too" and t.highlights[0].speaker == "S1"
    assert search(page, '"price is"')["count"] == 0

    # --- 5. Undo once: the names as they were ---------------------------------------------------------------
    corrected(page, lambda: page.locator(".fix-bar .undo").click())
    reloaded(page)
    assert page.locator(".speakers .who").all_text_contents() == ["Ana", "Joana"]
    check_files(folder, [("Joana", "0:04", "Honestly the pricing is too"), ("Ana", "0:09", "And the onboarding took me a whole week.")])
    assert page.locator(".fix-bar .undo").get_attribute("title") == "Undo the last correction: a phrase split in two"
    found = search(page, "pricing")
    assert [h["text"] for h in found["hits"]] == ["Honestly the pricing is too"] and search(page, '"price is"')["count"] == 0

    # What the machine heard, on demand: beneath the corrected phrase, struck through.
    page.locator(".fix-bar .heard-toggle input").check()
    heard = page.locator(".heard").first
    heard.wait_for(state="visible", timeout=5000)
    assert heard.text_content() == "Honestly the price is too"
    assert heard.evaluate("h => getComputedStyle(h).textDecorationLine") == "line-through"
    shot(page, "workspace-corrections-heard.png")
    assert errors == []
    page.close()


@pytest.mark.slow  # Chromium
def test_words_given_to_another_a_join_and_a_stale_tab(browser, workspace, folder):
    """An interjection given to someone else from a selection, the turn's name as a menu, join with
    next; a correction from a tab that missed another tab's is refused, and its toast offers Reload."""
    page = browser.open(f"{workspace.url}#/interview/joana")
    ready(page)
    stale = browser.open(f"{workspace.url}#/interview/joana")
    ready(stale)
    page.bring_to_front()
    # "the onboarding" (words 1-2 of phrase 2), said by someone new.
    drag_select(page, '.phrase[data-i="2"] .w[data-w="1"]', '.phrase[data-i="2"] .w[data-w="2"]')
    page.locator(".popover.offer-more button", has_text="Give to…").click()
    answer = corrected(page, lambda: item(page, "New speaker").click())
    assert [(p["speaker"], p["text"]) for p in answer["phrases"][2:5]] == [
        ("S2", "And"), ("S3", "the onboarding"), ("S2", "took me a whole week.")]
    # The new speaker's turn, by its name: given back to Joana; then "And" joined with it.
    page.locator('.phrase[data-i="3"]').evaluate("p => p.closest('.turn').querySelector('.who-pick').click()")
    corrected(page, lambda: item(page, "Joana").click())
    page.locator('.phrase[data-i="2"]').hover()
    page.locator('.phrase[data-i="2"] .fix-more').click()
    corrected(page, lambda: item(page, "Join with next").click())
    assert [p.text for p in saved(folder).phrases][2:4] == ["And the onboarding", "took me a whole week."]
    # The page patches in what each correction changed, never drawn whole again: after a join, an
    # undo and a split (the phrases after them numbered anew), a phrase after them is corrected.
    data = corrected(page, lambda: page.locator(".fix-bar .undo").click())
    assert [p["text"] for p in data["phrases"]][2:5] == ["And", "the onboarding", "took me a whole week."]
    drag_select(page, '.phrase[data-i="1"] .w[data-w="3"]', '.phrase[data-i="1"] .w[data-w="4"]')
    corrected(page, lambda: page.locator(".popover.offer-more button", has_text="Split here").click())
    page.locator('.phrase[data-i="5"]').dblclick()
    page.keyboard.press("End")
    page.keyboard.type(" Really.")
    data = corrected(page, lambda: page.keyboard.press("Enter"))
    assert data["phrases"][5]["text"] == "took me a whole week. Really."
    assert saved(folder).phrases[5].text == "took me a whole week. Really."
    data = corrected(page, lambda: page.locator(".fix-bar .undo").click())
    data = corrected(page, lambda: page.locator(".fix-bar .undo").click())
    assert [p["text"] for p in data["phrases"]][1:3] == ["Honestly the price is too high for a small team.", "And"]
    page.locator('.phrase[data-i="2"]').hover()
    page.locator('.phrase[data-i="2"] .fix-more').click()
    corrected(page, lambda: item(page, "Join with next").click())
    # The keyboard reaches a phrase's tools: Tab from the turn's name to the ✎, Enter opens the
    # editor, Esc closes it.
    page.locator(".turn .who-pick").first.focus()
    page.keyboard.press("Tab")
    pencil = page.locator('.phrase[data-i="0"] .fix-words')
    assert focused(pencil)
    pencil.wait_for()  # shown while it has the focus
    page.keyboard.press("Enter")
    assert focused(page.locator("#transcript .editor textarea"))
    page.keyboard.press("Escape")
    assert page.locator("#transcript .editor").count() == 0 and page.locator('.phrase[data-i="0"]').is_visible()

    stale.bring_to_front()
    before = (folder / "joana.json").read_bytes()
    stale.locator('.phrase[data-i="0"]').dblclick()
    stale.keyboard.type(" Really?")
    with stale.expect_response(lambda r: r.url.endswith("/corrections")) as refused:
        stale.keyboard.press("Enter")
    assert refused.value.status == 409
    assert (folder / "joana.json").read_bytes() == before
    toast = stale.locator("#toast")
    toast.locator("button", has_text="Reload").wait_for(state="visible", timeout=5000)
    toast.locator("button", has_text="Reload").click()
    wait_for(stale, "document.querySelectorAll('#transcript .phrase').length === 5")
    assert page_texts(stale)[2] == "And the onboarding"
    page.close()
    stale.close()
