"""Headless Chromium driven over the DevTools protocol through `--remote-debugging-pipe`
(messages on file descriptors 3 and 4, each ended by a NUL byte): no driver binary, no port,
no extra Python package. Used by the browser tests (test_long_export.py tells why this way).

No request ever leaves the machine: --host-resolver-rules makes every host name fail to
resolve, and click_link fails the video request it sees with the Fetch domain.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

WIDTH, HEIGHT = 1280, 900


def _move_above_9(fd: int) -> int:
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Page:
    def __init__(self, target: str, session: str) -> None:
        self.target, self.session = target, session


class Chromium:
    """Headless Chromium with a fresh profile, spoken to in DevTools-protocol messages."""

    FLAGS = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-extensions", "--disable-dev-shm-usage", "--no-default-browser-check",
        "--hide-scrollbars", "--mute-audio", f"--window-size={WIDTH},{HEIGHT}",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # nothing outside this machine, ever
        "--remote-debugging-pipe",
    ]

    def __init__(self, tmp_path: Path, timeout: float = 15.0) -> None:
        binary = os.environ.get("CHROMIUM") or next(
            (shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
        if not binary:
            pytest.fail("Chromium not found: run scripts/setup.sh (or set CHROMIUM to its path)")
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=tmp_path)
        self.log_path = tmp_path / "chromium.log"
        self._next_id = 0
        self._replies: dict[int, dict] = {}
        self._events: list[dict] = []
        self._lock = threading.Condition()
        self._closed = False

        # Chromium reads commands from fd 3 and writes replies and events to fd 4. The shell puts
        # our pipe ends there (bash, not sh: dash only knows fds 0-9; ours are kept above 9 so that
        # moving them cannot clobber one another).
        commands_r, self._commands_w = os.pipe()
        self._replies_r, replies_w = os.pipe()
        commands_r, replies_w = _move_above_9(commands_r), _move_above_9(replies_w)
        shell = f'exec "$0" "$@" 3<&{commands_r} 4>&{replies_w} {commands_r}<&- {replies_w}>&-'
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(
                ["bash", "-c", shell, binary, *self.FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(commands_r, replies_w),
            )
        os.close(commands_r)
        os.close(replies_w)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        try:
            self.call("Browser.getVersion")
            self.call("Target.setDiscoverTargets", discover=True)
        except BaseException:
            self.close()
            raise

    # messages
    def _read(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = os.read(self._replies_r, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                with self._lock:
                    self._closed = True
                    self._lock.notify_all()
                return
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            with self._lock:
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message:
                        self._replies[message["id"]] = message
                    else:
                        self._events.append(message)
                self._lock.notify_all()

    def _wait(self, ready: Callable[[], Any], what: str, timeout: Optional[float] = None) -> Any:
        deadline = time.monotonic() + (timeout or self.timeout)
        with self._lock:
            while True:
                found = ready()
                if found is not None:
                    return found
                left = deadline - time.monotonic()
                if self._closed or left <= 0:
                    lines = self.log_path.read_text(errors="replace").splitlines()
                    log = "\n".join(line for line in lines if "dbus" not in line)[-3000:]
                    state = "Chromium exited" if self._closed else "timed out"
                    raise AssertionError(f"{state} waiting for {what}; its log ends:\n{log}")
                self._lock.wait(left)

    def call(self, method: str, session: Optional[str] = None, **params) -> dict:
        with self._lock:
            self._next_id += 1
            id_ = self._next_id
        message = {"id": id_, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self._commands_w, data):]
        except BrokenPipeError:  # Chromium is gone: waiting for the reply says so, with its log
            pass
        reply = self._wait(lambda: self._replies.pop(id_, None), method)
        if "error" in reply:
            raise AssertionError(f"{method} failed: {reply['error']}")
        return reply.get("result", {})

    def mark(self) -> int:
        with self._lock:
            return len(self._events)

    def wait_event(self, method: str, since: int, match: Callable[[dict], bool] = lambda m: True,
                   timeout: Optional[float] = None) -> dict:
        def find():
            for message in self._events[since:]:
                if message["method"] == method and match(message):
                    return message
            return None

        return self._wait(find, method, timeout)

    # pages
    def open(self, url: str) -> Page:
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(target, session)
        self.call("Page.enable", session)
        self.call("Runtime.enable", session)
        self.call("Emulation.setDeviceMetricsOverride", session, width=WIDTH, height=HEIGHT,
                  deviceScaleFactor=1, mobile=False)
        mark = self.mark()
        self.call("Page.navigate", session, url=url)
        self.wait_event("Page.loadEventFired", mark, lambda m: m.get("sessionId") == session)
        return page

    def evaluate(self, page: Page, expression: str) -> Any:
        result = self.call("Runtime.evaluate", page.session, expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"JavaScript failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, page: Page) -> bytes:
        data = self.call("Page.captureScreenshot", page.session, format="png")["data"]
        return base64.b64decode(data)

    def click_at(self, page: Page, selector: str, index: int) -> None:
        """A real mouse click on the centre of the largest box of the index-th `selector` match."""
        where = self.evaluate(page, f"""(() => {{
          const a = document.querySelectorAll({json.dumps(selector)})[{index}];
          a.scrollIntoView({{block: 'center'}});
          const r = [...a.getClientRects()].sort((p, q) => q.width * q.height - p.width * p.height)[0];
          return {{x: r.left + r.width / 2, y: r.top + r.height / 2}};
        }})()""")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", page.session, type=kind, x=where["x"], y=where["y"],
                      button="left" if kind != "mouseMoved" else "none", clickCount=1)

    def click_link(self, page: Page, index: int, selector: str = "a.phrase", url_pattern: str = "*youtube.com*") -> dict:
        """Click the index-th phrase link with the mouse; report where the browser tried to go.

        Requests for the video are paused by the Fetch domain (browser-wide, so the new tab's
        are too) and failed, so the test never waits for or depends on the outside world.
        """
        self.call("Fetch.enable", patterns=[{"urlPattern": url_pattern}])
        mark = self.mark()
        self.click_at(page, selector, index)
        paused = self.wait_event("Fetch.requestPaused", mark, timeout=5)  # no request: the click missed
        self.call("Fetch.failRequest", requestId=paused["params"]["requestId"], errorReason="BlockedByClient")
        created = self.wait_event("Target.targetCreated", mark,
                                  lambda m: m["params"]["targetInfo"].get("openerId") == page.target)
        new_target = created["params"]["targetInfo"]["targetId"]
        # The new tab's URL may be filled in after it is created.
        info = self.wait_event("Target.targetInfoChanged", mark,
                               lambda m: m["params"]["targetInfo"]["targetId"] == new_target
                               and m["params"]["targetInfo"]["url"] not in ("", "about:blank"),
                               ) if created["params"]["targetInfo"]["url"] in ("", "about:blank") else created
        self.call("Fetch.disable")
        return {
            "request": paused["params"]["request"]["url"],
            "new_tab": info["params"]["targetInfo"]["url"],
            "opener": created["params"]["targetInfo"].get("openerId"),
            "page_url": self.evaluate(page, "location.href"),
        }

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.call("Browser.close")
            except (AssertionError, OSError):
                pass
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        # The reader sees end-of-file once Chromium is gone; close its pipe only after that.
        self._reader.join(timeout=5)
        for fd in (self._commands_w, self._replies_r):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)
