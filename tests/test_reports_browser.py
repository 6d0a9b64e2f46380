"""A report made in the workspace's page (issue 52, point 3), in Chromium as a user does it: from a
tag's page with a second tag ticked, a finding added with highlights of two interviews picked under
it, saved, and still there after a reload."""

from __future__ import annotations

import pytest

from igot.workspace import server
from tests.test_reports import folder  # noqa: F401 (a fixture: three interviews, two tags across them)
from tests.test_workspace_attacks import browser  # noqa: F401 (a fixture: Chromium for one test)
from tests.test_workspace_browser import shot, wait_for


@pytest.mark.slow  # Chromium
def test_a_report_from_two_tags_made_saved_and_read_again_in_the_page(browser, folder):  # noqa: F811
    running = server.start(folder)
    try:
        page = browser.open(f"{running.url}#/tag/pricing")
        page.locator("button.make-report").click()
        page.locator(".pick-tag", has_text="onboarding").locator("input").check()
        page.locator(".report-form input[name=title]").fill("What blocks small teams")
        page.locator(".report-form button[type=submit]").click()
        page.locator(".report-title").wait_for()
        assert page.url.split("#")[1].startswith("/report/r-")
        assert page.locator("a.tag").all_text_contents() == ["pricing", "onboarding"]
        page.locator("button.add-finding").click()
        page.locator(".finding-text").fill("Price is the first wall for small teams")
        page.locator(".pick summary").click()
        picks = page.locator(".pick-one")
        assert picks.count() == 4  # every highlight of the two tags, from the three interviews
        for who in ("Bruno", "Carla"):  # one highlight of each of two interviews
            picks.filter(has_text=who).first.locator("input").check()
        page.locator("button.add-picked").click()
        assert page.locator(".finding .quote").count() == 2
        assert page.locator(".unsaved").is_visible()
        with page.expect_response(lambda r: "/api/reports/" in r.url and r.request.method == "PUT") as answer:
            page.locator("button.save-report").click()
        assert answer.value.status == 200
        page.locator(".unsaved").wait_for(state="hidden")

        page.reload()
        page.locator(".finding .quote").first.wait_for()
        assert page.locator(".report-title").input_value() == "What blocks small teams"
        assert page.locator(".finding-text").input_value() == "Price is the first wall for small teams"
        quotes = page.locator(".finding .quote")
        assert quotes.count() == 2 and all(q in " ".join(quotes.all_text_contents()) for q in ("Bruno", "Carla"))
        assert page.locator("a", has_text="Download Markdown").get_attribute("href").startswith("api/reports/r-")
        page.locator(".finding .quote", has_text="Bruno").locator("button.play").click()  # its recording is in the folder
        wait_for(page, "igot.player() && igot.player().time() >= 4")
        shot(page, "report.png")

        # From the Themes board (grouped by tag: this library has no meaning index): two ticked.
        page.goto(f"{running.url}#/themes")
        page.locator(".theme .for-report").first.wait_for()
        assert page.locator("button.make-report").is_disabled()
        for name in ("pricing", "onboarding"):
            page.locator(".theme", has=page.locator("h2", has_text=name)).locator(".for-report").check()
        page.locator("button.make-report").click()
        page.locator(".report-title").wait_for()
        assert page.locator(".report-title").input_value() in ("pricing · onboarding", "onboarding · pricing")
        assert sorted(page.locator("a.tag").all_text_contents()) == ["onboarding", "pricing"]
        page.locator("a", has_text="Reports").first.click()
        page.locator(".report-list li").nth(1).wait_for()
        assert page.locator(".report-list li").count() == 2
    finally:
        running.stop()
