"""The interview's summary in the workspace (issue 41, point 3, its first half): beside the player,
each point as the exports show it, a quote nobody said marked, and each time it cites a button that
plays that moment. In Chromium, clicked as a user does."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from igot.outputs import store
from igot.transcript import Citation, Source, SummaryPoint
from igot.workspace import server
from tests.test_highlights import interview
from tests.test_workspace import tone
from tests.test_workspace_attacks import browser  # noqa: F401 (a fixture: Chromium for one test)
from tests.test_workspace_browser import shot, wait_for


@pytest.fixture
def folder(tmp_path) -> Path:
    out = tmp_path / "library"
    out.mkdir()
    t = interview()
    summary = [SummaryPoint("The price is too high for a small team.", [Citation(4.0, None, 1)]),
               SummaryPoint('The onboarding "took a whole month" and Ana asked for more.',
                            [Citation(9.0, None, 2), Citation(14.0, None, 3)], ["took a whole month"])]
    t = replace(t, source=Source("Interview with a summary", None, str(tone(out / "joana.wav")), "file"), duration=20.0,
                phrases=[replace(p, link=None) for p in t.phrases], summary=summary)
    store.save(t, out, "joana", drive=False)
    return out


@pytest.mark.slow  # Chromium
def test_the_summary_beside_the_player_plays_the_moments_it_cites(browser, folder):  # noqa: F811
    running = server.start(folder)
    try:
        page = browser.open(f"{running.url}#/interview/joana")
        wait_for(page, "window.igot && igot.ready()")
        points = page.locator(".summary li")
        assert points.count() == 2
        assert points.nth(0).text_content().startswith("The price is too high for a small team.")
        assert page.locator(".summary mark.unverified").text_content() == '"took a whole month"'
        assert page.locator(".summary .cite-time").all_text_contents() == ["▶ 0:04", "▶ 0:09", "▶ 0:14"]
        page.locator(".summary .cite-time", has_text="0:09").click()
        wait_for(page, "igot.player().time() >= 9 && igot.now() === 2")  # the phrase said then is marked
        shot(page, "workspace-summary.png")
        page.locator(".summary .cite-time", has_text="0:04").click()
        wait_for(page, "igot.now() === 1 && Math.abs(igot.player().time() - 4) < 1.5")
    finally:
        running.stop()
