"""Naming a new interview's speakers in the workspace (issue 41, point 4), in Chromium: a name
recognised by a remembered voice is shown as such in the Names panel, with a sample to listen to,
and accepted with one click; every file then says the name alone."""

from __future__ import annotations

from dataclasses import replace

import pytest

from igot.outputs import store
from igot.transcript import Transcript
from tests.test_corrections_browser import folder, shown, workspace  # noqa: F401 (fixtures: a library, its server)
from tests.test_workspace_attacks import browser  # noqa: F401 (a fixture: Chromium for one test)
from tests.test_workspace_browser import shot, wait_for


@pytest.mark.slow  # Chromium
def test_a_recognised_name_is_listened_to_and_accepted_in_the_names_panel(browser, folder, workspace):  # noqa: F811
    t = Transcript.load(folder / "joana.json")
    store.save(replace(t, speakers=[t.speakers[0], replace(t.speakers[1], recognised=True)]), folder, "joana", drive=False)
    page = browser.open(f"{workspace.url}#/interview/joana")
    wait_for(page, "window.igot && igot.ready()")
    assert "Joana (recognised)" in page.locator(".speakers").text_content()
    page.locator(".names-open").click()
    row = page.locator(".name-row", has=page.locator("button.accept-name"))
    assert row.count() == 1 and row.locator("input").input_value() == "Joana"  # the name alone, to keep or retype
    row.locator("button.sample").click()
    wait_for(page, "igot.now() === 1")  # her longest phrase plays
    shot(page, "workspace-naming.png")
    row.locator("button.accept-name").click()
    wait_for(page, "!document.querySelector('.speakers').textContent.includes('recognised')")
    assert page.locator("button.accept-name").count() == 0
    assert not Transcript.load(folder / "joana.json").speakers[1].recognised
    assert "(recognised)" not in shown(folder, "html") and "Joana" in shown(folder, "md")
    page.reload()
    wait_for(page, "window.igot && igot.ready()")
    assert "recognised" not in page.locator(".speakers").text_content()
