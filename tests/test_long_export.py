"""A two-hour interview through every export, and its HTML page in a real browser.

Exports must stay quick and small for long interviews, and on the HTML page every phrase must
be a link a reader can actually click: rendered, visible, not covered by anything, pointing at
its second of the video.

The browser is Debian's headless Chromium, driven over the DevTools protocol through
`--remote-debugging-pipe` (messages on file descriptors 3 and 4, each ended by a NUL byte).
That is the least fragile way we found: no driver binary whose version must match the browser
(Selenium + chromedriver), no TCP port to pick or race for, no HTTP endpoint to poll until the
browser is up, and no extra Python package (a websocket client) — just the Chromium that
scripts/setup.sh installs and the standard library. Screenshots are decoded with Pillow.

No request ever leaves the machine: requests to the video are intercepted with the protocol's
Fetch domain and failed before they reach the network, and --host-resolver-rules makes any
other host name fail to resolve.
"""

from __future__ import annotations

import base64
import fcntl
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Optional

import pytest
from PIL import Image

from igot.export import to_html, write_exports
from igot.links import link_at
from tests.long_transcript import long_interview

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"  # kept after the run, for people and CI to look at
WIDTH, HEIGHT = 1280, 900
CPU_LIMIT_S = 10.0
HTML_LIMIT_BYTES = 10_000_000


@pytest.fixture(scope="module")
def interview():
    t0 = time.perf_counter()
    t = long_interview(hours=2.0, speakers=3, seed=0)
    print(f"\n[long export] generated {len(t.phrases)} phrases, {len(t.words)} words "
          f"in {time.perf_counter() - t0:.2f} s")
    return t


# --- the generated interview ------------------------------------------------------------------
def test_generated_interview_looks_like_two_hours_of_real_speech(interview):
    t = interview
    assert 1_200 <= len(t.phrases) <= 1_800
    assert 17_000 <= len(t.words) <= 23_000
    assert 7_000 < t.phrases[-1].end <= t.duration == 7_200
    assert [s.id for s in t.speakers] == ["S1", "S2", "S3"] and all(s.name for s in t.speakers)
    assert list(dict.fromkeys(p.speaker for p in t.phrases)) == ["S1", "S2", "S3"]  # order of first words
    assert min(Counter(p.speaker for p in t.phrases).values()) > 100
    assert t.source.kind == "youtube" and t.source.url == "https://www.youtube.com/watch?v=dQw4w9WgXcQ"

    previous_end = 0.0
    for p in t.phrases:
        assert p.words and p.text == " ".join(w.text for w in p.words)
        assert p.start == p.words[0].start and p.end == p.words[-1].end
        for w in p.words:
            assert previous_end <= w.start < w.end and w.speaker == p.speaker
            previous_end = w.end
        assert p.link == link_at(t.source.url, "youtube", p.start)

    texts = [p.text for p in t.phrases]
    assert any("<" in s for s in texts) and any("&" in s for s in texts) and any('"' in s for s in texts)
    assert any("ção" in s for s in texts) and any(" the " in s for s in texts)  # Portuguese and English
    lengths = [len(p.words) for p in t.phrases]
    assert min(lengths) <= 2 and max(lengths) >= 30  # "Sim." as well as long answers
    assert long_interview(seed=0).to_dict() == t.to_dict() != long_interview(seed=1).to_dict()


# --- every export, quickly --------------------------------------------------------------------
def test_all_exports_of_a_two_hour_interview_are_quick_and_small(interview, tmp_path):
    from igot.gdoc import SIMPLE_UPLOAD_LIMIT, doc_html

    t0, c0 = time.perf_counter(), time.process_time()
    paths = write_exports(interview, tmp_path, "long-interview")
    google_doc = doc_html(interview).encode("utf-8")  # what the Drive upload sends
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    # one simple upload request, far under Drive's conversion limits
    assert len(google_doc) < SIMPLE_UPLOAD_LIMIT, f"Doc HTML is {len(google_doc) / 1e6:.1f} MB"

    sizes = {fmt: path.stat().st_size for fmt, path in paths.items()}
    print(f"\n[long export] write_exports: {cpu:.2f} s CPU, {wall:.2f} s wall; sizes: "
          + ", ".join(f"{fmt} {size / 1e6:.2f} MB" for fmt, size in sizes.items()))
    assert set(paths) == {"json", "html", "md", "srt", "vtt"}
    assert all(size > 10_000 for size in sizes.values()), sizes
    assert cpu < CPU_LIMIT_S, f"exports took {cpu:.1f} s of CPU"
    assert sizes["html"] < HTML_LIMIT_BYTES, f"HTML is {sizes['html'] / 1e6:.1f} MB"
    # Every linked phrase is in the page once.
    page = paths["html"].read_text(encoding="utf-8")
    assert len(re.findall(r'<a [^>]*class="phrase"', page)) == sum(1 for p in interview.phrases if p.link)


# --- the page in a browser --------------------------------------------------------------------
def test_html_page_renders_in_chromium_and_every_phrase_link_is_clickable(interview, tmp_path):
    timings: dict[str, float] = {}

    def timed(name: str):
        return _Timer(timings, name)

    page_path = tmp_path / "long-interview.html"
    page_path.write_text(to_html(interview), encoding="utf-8")
    expected = [p for p in interview.phrases if p.link]

    with timed("start Chromium"):
        browser = Chromium(tmp_path)
    try:
        with timed("open page"):
            page = browser.open(page_path.as_uri())
            ready = browser.evaluate(page, "document.readyState")
            assert ready == "complete"
            assert browser.evaluate(page, "document.title") == interview.source.title

        with timed("screenshot"):
            browser.evaluate(page, "window.scrollTo(0, 0)")
            png = browser.screenshot(page)
            ARTIFACTS.mkdir(exist_ok=True)
            for folder in (ARTIFACTS, tmp_path):
                (folder / "long-export-top.png").write_bytes(png)
            _check_screenshot(png)

        with timed(f"check {len(expected)} links"):
            seen = browser.evaluate(page, CHECK_LINKS_JS)
        assert len(seen) == len(expected), f"{len(seen)} phrase links on the page, {len(expected)} phrases"
        problems = []
        for i, (p, link) in enumerate(zip(expected, seen)):
            wrong = []
            if link["href"] != p.link or link["resolved"] != p.link:
                wrong.append(f"href {link['href']!r}")
            if link["text"] != p.text:
                wrong.append(f"text {link['text']!r}")
            if not (link["width"] > 0 and link["height"] > 0 and link["visible"]):
                wrong.append(f"not visible ({link['width']}x{link['height']}, {link['style']})")
            if not link["inView"]:
                wrong.append("not in the viewport after scrolling to it")
            if not link["hit"]:
                wrong.append(f"covered by {link['top']} at its centre")
            if wrong:
                problems.append(f"phrase {i} at {p.start:.1f} s ({p.text[:40]!r}): " + "; ".join(wrong))
        assert not problems, f"{len(problems)} phrase links broken:\n" + "\n".join(problems[:20])

        with timed("real click"):
            # A phrase an hour in, with characters that must survive escaping: a real mouse click.
            index, phrase = next((i, p) for i, p in enumerate(expected) if p.start > 3600 and "&" in p.text)
            opened = browser.click_link(page, index)
        want = phrase.link
        assert want == f"https://www.youtube.com/watch?v=dQw4w9WgXcQ&t={int(phrase.start)}s"
        assert opened["request"] == want, opened  # the browser asked for exactly the phrase's moment
        assert opened["new_tab"] == want, opened  # in a new tab (target=_blank) ...
        assert opened["opener"] == page.target, opened  # opened by the transcript page ...
        assert opened["page_url"] == page_path.as_uri(), opened  # which stays where the reader was
    finally:
        with timed("close Chromium"):
            browser.close()
        print("\n[long export] Chromium: " + ", ".join(f"{k} {v:.2f} s" for k, v in timings.items()))


class _Timer:
    def __init__(self, timings: dict[str, float], name: str) -> None:
        self.timings, self.name = timings, name

    def __enter__(self):
        self.t0 = time.perf_counter()

    def __exit__(self, *exc):
        self.timings[self.name] = time.perf_counter() - self.t0


def _check_screenshot(png: bytes) -> None:
    """A real picture of the page: decodes, has the viewport's size, text on a light page."""
    image = Image.open(io.BytesIO(png))
    image.load()
    assert image.format == "PNG" and image.size == (WIDTH, HEIGHT), (image.format, image.size)
    rgb = image.convert("RGB")
    colours = rgb.getcolors(maxcolors=WIDTH * HEIGHT)
    assert len(colours) > 50, f"only {len(colours)} colours: a blank or flat page"
    grey = rgb.convert("L")
    histogram = grey.histogram()
    dark, light = sum(histogram[:80]), sum(histogram[200:])
    assert light > 0.5 * WIDTH * HEIGHT, "the page should be mostly light"
    assert dark > 2_000, "there should be dark text on the page"


# Each phrase link, scrolled into view, as the browser lays it out and hit-tests it. A phrase
# that wraps onto two lines has two boxes; the centre of its bounding box can fall between them,
# so the centre tested is that of its largest box, which is a point a reader would click.
CHECK_LINKS_JS = """
(() => {
  const out = [];
  for (const a of document.querySelectorAll('a.phrase')) {
    a.scrollIntoView({block: 'center', inline: 'nearest'});
    const boxes = [...a.getClientRects()].filter(r => r.width > 0 && r.height > 0);
    boxes.sort((p, q) => q.width * q.height - p.width * p.height);
    const style = getComputedStyle(a);
    const item = {
      href: a.getAttribute('href'), resolved: a.href, text: a.textContent,
      width: 0, height: 0, inView: false, hit: false, top: null,
      visible: style.visibility === 'visible' && style.display !== 'none' && Number(style.opacity) > 0,
      style: `${style.display} ${style.visibility} ${style.opacity}`,
    };
    if (boxes.length) {
      const r = boxes[0], x = r.left + r.width / 2, y = r.top + r.height / 2;
      const whole = a.getBoundingClientRect();
      item.width = whole.width; item.height = whole.height;
      item.inView = x >= 0 && y >= 0 && x < innerWidth && y < innerHeight;
      const top = document.elementFromPoint(x, y);
      item.hit = !!top && (top === a || a.contains(top));
      item.top = top ? `${top.tagName.toLowerCase()}.${top.className}` : null;
    }
    out.push(item);
  }
  return out;
})()
"""


# --- a small DevTools-protocol client over --remote-debugging-pipe ----------------------------
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

    def click_link(self, page: Page, index: int) -> dict:
        """Click the index-th phrase link with the mouse; report where the browser tried to go.

        Requests for the video are paused by the Fetch domain (browser-wide, so the new tab's
        are too) and failed, so the test never waits for or depends on the outside world.
        """
        self.call("Fetch.enable", patterns=[{"urlPattern": "*youtube.com*"}])
        where = self.evaluate(page, f"""(() => {{
          const a = document.querySelectorAll('a.phrase')[{index}];
          a.scrollIntoView({{block: 'center'}});
          const r = [...a.getClientRects()].sort((p, q) => q.width * q.height - p.width * p.height)[0];
          return {{x: r.left + r.width / 2, y: r.top + r.height / 2}};
        }})()""")
        mark = self.mark()
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", page.session, type=kind, x=where["x"], y=where["y"],
                      button="left" if kind != "mouseMoved" else "none", clickCount=1)
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
