"""A two-hour interview through every export, and its HTML page in a real browser.

Exports must stay quick and small for long interviews, and on the HTML page every phrase must
be a link a reader can actually click: rendered, visible, not covered by anything, pointing at
its second of the video.

The browser is Debian's headless Chromium, driven by Playwright (igot_dev/browser.py tells why).
Screenshots are decoded with Pillow.

No request ever leaves the machine: every request to another host, the video's included, is
failed by Playwright's route before it reaches the network, and --host-resolver-rules makes any
host name fail to resolve.
"""

from __future__ import annotations

import io
import re
import time
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from igot.links import link_at
from igot.outputs.export import to_html, write_exports
from igot_dev.browser import HEIGHT, WIDTH, Browser
from igot_dev.long_transcript import long_interview

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"  # kept after the run, for people and CI to look at
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
    from igot.outputs.gdoc import SIMPLE_UPLOAD_LIMIT, doc_html

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
        browser = Browser(tmp_path)
    try:
        with timed("open page"):
            page = browser.open(page_path.as_uri())
            ready = page.evaluate("document.readyState")
            assert ready == "complete"
            assert page.evaluate("document.title") == interview.source.title

        with timed("screenshot"):
            page.evaluate("window.scrollTo(0, 0)")
            png = page.screenshot()
            ARTIFACTS.mkdir(exist_ok=True)
            for folder in (ARTIFACTS, tmp_path):
                (folder / "long-export-top.png").write_bytes(png)
            _check_screenshot(png)

        with timed(f"check {len(expected)} links"):
            seen = page.evaluate(CHECK_LINKS_JS)
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
        assert opened["opener"] is page, opened  # opened by the transcript page ...
        assert opened["page_url"] == page_path.as_uri(), opened  # which stays where the reader was
        assert opened["error"] == "net::ERR_BLOCKED_BY_CLIENT", opened  # and stopped before the network
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
