"""The Review list in the workspace (issue 39, point 4), in Chromium, used as a researcher does:
opened from the library page's count, it says how many words it lists and why (issue 53 point 7),
each item plays its moment, one key accepts, the glossary's offer is taken with one click (the word
is corrected in every copy), and the count follows."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from igot.outputs import store
from igot.transcript import Source, Transcript
from igot.workspace import server
from tests.test_review import unsure_interview
from tests.test_workspace import tone
from tests.test_workspace_attacks import browser  # noqa: F401 (a fixture: Chromium for one test)
from tests.test_workspace_browser import shot, wait_for


@pytest.fixture
def folder(tmp_path) -> Path:
    out = tmp_path / "library"
    out.mkdir()
    t = unsure_interview()
    t = replace(t, source=Source("Interview to review", None, str(tone(out / "joana.wav")), "file"),
                phrases=[replace(p, link=None) for p in t.phrases])
    store.save(t, out, "joana", drive=False)
    (out / "glossary.txt").write_text("Nubank\nPix\n", encoding="utf-8")
    return out


@pytest.mark.slow  # Chromium
def test_review_from_the_library_count_play_accept_and_take_the_glossary_offer(browser, folder):  # noqa: F811
    running = server.start(folder)
    try:
        page = browser.open(running.url)
        wait_for(page, "document.querySelector('td.review-left a') !== null")
        assert page.locator("td.review-left").text_content() == "6"
        page.locator("td.review-left a").click()
        wait_for(page, "window.igot && igot.ready() && document.querySelectorAll('.review-item').length === 6")
        items = page.locator(".review-item")
        assert page.locator("#review").get_attribute("open") is not None  # opened by the library's link
        assert items.nth(0).locator("q").text_content() == "price"
        words = page.locator("#review-words")
        assert words.text_content() == "4 words the recogniser was less than 65 % sure of."
        assert words.is_visible()
        shot(page, "review-count.png")
        wait_for(page, "igot.now() === 1")  # the first item's phrase is the one played and marked
        # N goes to the next item and plays it; A accepts it: gone from the list, kept in the file
        page.keyboard.press("n")
        wait_for(page, "document.querySelector('.review-item.current q').textContent === 'small team.'")
        page.keyboard.press("a")
        wait_for(page, "document.querySelectorAll('.review-item').length === 5")
        assert page.locator("#review-left").text_content() == "5"
        assert words.text_content() == "2 words the recogniser was less than 65 % sure of."  # accepted ones leave the count
        assert len(Transcript.load(folder / "joana.json").reviewed) == 1
        # the glossary's offer: one click writes "Pix" for "pics", in the transcript and the files
        item = page.locator(".review-item", has_text="Glossary").first
        assert item.locator("q").text_content() == "pics"
        item.locator("button.offer").click()
        wait_for(page, "document.querySelectorAll('.review-item').length === 4")
        assert "I pay with Pix at new bank." in page.locator("#transcript").text_content()
        t = Transcript.load(folder / "joana.json")
        assert t.phrases[3].text == "I pay with Pix at new bank." and t.phrases[3].words[3].heard == "pics"
        assert "I pay with Pix at new bank." in (folder / "joana.md").read_text(encoding="utf-8")
        shot(page, "workspace-review.png")
        # a reload keeps all of it; the library's count follows
        page.goto(f"{running.url}#/")
        wait_for(page, "document.querySelector('td.review-left a') !== null")
        assert page.locator("td.review-left").text_content() == "4"
    finally:
        running.stop()
