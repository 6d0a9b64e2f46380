"""Headless Chromium for the browser tests: Debian's system Chromium, driven by Playwright.

Why Playwright rather than Selenium + Debian's chromedriver: a test clicks a link that opens a
new tab and must see that tab's request stopped before the network. Playwright's context routes
cover new tabs and it reports the tab and its opener; Selenium's request handlers (WebDriver
BiDi) were skipped on Chrome for link-click navigation in Selenium's own tests. Playwright's
wheel downloads no browser (only `playwright install` would): `executable_path` names Debian's.

No request ever leaves the machine: --host-resolver-rules makes every host name fail to
resolve, and click_link fails the requests it causes with a route before they are sent (only
there: a route on every request makes each page load and evaluate slower). Each Browser has a
fresh profile: Playwright launches Chromium with a new temporary user-data directory and deletes
it on close.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import Page, Request, Route, sync_playwright

WIDTH, HEIGHT = 1280, 900
OUTSIDE = re.compile(r"^(https?|wss?|ftp):", re.IGNORECASE)


class Browser:
    def __init__(self, tmp_path: Path, timeout: float = 15.0) -> None:
        binary = os.environ.get("CHROMIUM") or next(
            (shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
        if not binary:
            pytest.fail("Chromium not found: run scripts/setup.sh (or set CHROMIUM to its path)")
        self.timeout = timeout
        self._playwright = sync_playwright().start()
        try:
            self._browser = self._playwright.chromium.launch(
                executable_path=binary, headless=True, timeout=timeout * 1000,
                # nothing outside this machine, ever (127.0.0.1 and localhost: the workspace's tests)
                args=["--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost",
                      "--disable-dev-shm-usage"],  # containers give /dev/shm 64 MB
            )
            self.context = self._browser.new_context(viewport={"width": WIDTH, "height": HEIGHT})
            self.context.set_default_timeout(timeout * 1000)
        except BaseException:
            self._playwright.stop()
            raise

    def new_context(self, **options):
        """Another context of the same Chromium: a second person, with cookies of their own
        (`options`: Playwright's, such as ignore_https_errors=True for a test certificate)."""
        context = self._browser.new_context(viewport={"width": WIDTH, "height": HEIGHT}, **options)
        context.set_default_timeout(self.timeout * 1000)
        return context

    @staticmethod
    def _block(route: Route) -> None:
        route.abort("blockedbyclient")

    def open(self, url: str) -> Page:
        """A new tab at `url`, once its load event has fired."""
        page = self.context.new_page()
        page.goto(url)
        return page

    def click_link(self, page: Page, index: int, selector: str = "a.phrase", url_part: str = "youtube.com") -> dict:
        """Click the index-th `selector` link with the mouse; report where the browser tried to go.

        The link opens a new tab, whose request (its URL holds `url_part`) the route fails before
        it is sent, so the test never waits for or depends on the outside world.
        """
        wanted = lambda r: url_part in r.url  # noqa: E731
        self.context.route(OUTSIDE, self._block)  # a context's route sees its new tabs' requests too
        try:
            with self.context.expect_event("requestfailed", predicate=wanted, timeout=5000) as failed, \
                    page.expect_popup() as popup:  # no request or no tab: the click missed
                page.locator(selector).nth(index).click()  # a real mouse click, once nothing covers it
        finally:
            self.context.unroute(OUTSIDE, self._block)
        request: Request = failed.value
        # The address the new tab shows: Playwright's popup.url is the error page's own
        # (chrome-error://) once its load failed, so ask Chromium for the tab's address.
        cdp = self.context.new_cdp_session(popup.value)
        new_tab = cdp.send("Target.getTargetInfo")["targetInfo"]["url"]
        cdp.detach()
        return {
            "request": request.url,
            "error": request.failure,
            "new_tab": new_tab,
            "opener": popup.value.opener(),
            "page_url": page.evaluate("location.href"),
        }

    def close(self) -> None:
        try:
            self._browser.close()
        finally:
            self._playwright.stop()
