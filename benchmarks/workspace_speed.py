"""The research workspace (`igot serve`) at a real team's scale: 200 interviews, one an hour long.

Writes 199 generated ten-minute interviews and one generated hour (igot_dev/long_transcript.py,
every word timed, ~1,500 phrases in the hour) through the one save path, with a few tagged
highlights spread over them, then serves the folder and times, over HTTP on 127.0.0.1:

- start: from starting the server to the library's list answered (cold: the search cache is
  built; warm: a second start over the same folder);
- board: every tag with its counts (GET api/tags);
- the hour opening: its page data (GET api/interviews/…), and in headless Chromium the whole
  page drawn (transcript, highlights, player) from the click to ready;
- a search over every interview (GET api/search), and one right after a highlight was saved;
- a highlight saved on the hour (POST …/highlights: its JSON, HTML and Markdown written whole,
  under the library's lock, all or nothing; the subtitles and the library page do not show
  highlights and stay as they are);
- a phrase's words corrected on the hour (POST …/corrections: the JSON with the correction kept
  to undo, and every export, the library page too, since the words changed; the answer is what
  changed, which the page patches in);
- a tag renamed across every interview (POST api/tags/rename: every interview's JSON, HTML and
  Markdown and the library page prepared, then put in place together), `--renames` times.

Each is timed `--runs` times: p50 and p95. Targets (issues 31, 38, 39): the hour opens in under 1 s,
a highlight is saved and a phrase corrected in under 100 ms at p95.

    python -m benchmarks.workspace_speed [--interviews 200] [--runs 20] [--renames 3] [--folder KEEP] [--steps correction,...]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from benchmarks.search_speed import one_hour
from igot.outputs import highlights, store
from igot.speakers.phrases import add_links
from igot.transcript import Transcript
from igot.workspace import server
from igot_dev.long_transcript import long_interview
from igot_dev.tables import table

TAGS = ["pricing", "onboarding", "trust", "support", "fees", "app speed"]
STUDY = "study 2026"  # a tag on one highlight of every interview: what a rename across the library changes
STEPS = ("board", "open", "search", "highlight", "search-after", "correction", "rename", "browser")


def interview(seed: int, hours: float) -> Transcript:
    """A generated interview; the hour cut into ~1,500 phrases as Whisper gives (search_speed's)."""
    if hours == 1.0:
        t = one_hour(seed)
    else:
        t = add_links(long_interview(hours=hours, speakers=2 + seed % 2, seed=seed))
        t.source.title = f"Entrevista {seed + 1:03d} — {t.speakers[-1].name}"
        t.info["created"] = f"2026-{1 + seed % 12:02d}-{1 + seed % 28:02d}T10:00:00Z"
    # A few highlights, as a researcher leaves them: two or three per interview.
    for k in range(2 + seed % 2):
        p = t.phrases[(k * 37 + seed) % len(t.phrases)]
        tags = [TAGS[(seed + k) % len(TAGS)]] + ([STUDY] if k == 0 else [])
        t = highlights.with_highlight(t, highlights.new_highlight(t, p.start, p.end, tags))
    return t


def make_library(folder: Path, count: int) -> str:
    """`count` interviews in `folder`, the first an hour long; returns the hour's stem."""
    for i in range(count):
        store.save(interview(i, 1.0 if i == 0 else 1 / 6), folder, f"interview-{i:03d}", drive=False)
    return "interview-000"


class Client:
    """The workspace's page, as far as the server can tell: its token on every request."""

    def __init__(self, running: server.Running) -> None:
        self.port, self.token = running.port, running.token

    def call(self, method: str, path: str, body=None) -> tuple[int, dict]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        headers = {"X-iGot-Token": self.token, **({"Content-Type": "application/json"} if body is not None else {})}
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        answer = conn.getresponse()
        data = answer.read()
        conn.close()
        return answer.status, json.loads(data)


def saver(client: Client, folder: Path, stem: str):
    """A function that saves one more highlight on interview `stem`, on its latest version."""
    phrases = Transcript.load(folder / f"{stem}.json").phrases
    state = {"version": client.call("GET", f"/api/interviews/{stem}")[1]["version"], "k": 0}

    def save() -> None:
        p = phrases[(state["k"] * 53) % len(phrases)]
        state["k"] += 1
        status, done = client.call("POST", f"/api/interviews/{stem}/highlights",
                                   {"version": state["version"], "start": p.start, "end": p.end, "tags": ["benchmark"]})
        assert status == 201, done
        state["version"] = done["version"]

    return save


def searched_after(save, client: Client, runs: int) -> list[float]:
    """The search's time when a highlight was just saved: the folder changed since the last search."""
    out = []
    for _ in range(runs):
        save()
        t0 = time.perf_counter()
        client.call("GET", "/api/search?q=cart%C3%A3o")
        out.append(time.perf_counter() - t0)
    return out


def corrector(client: Client, stem: str):
    """A function that corrects one more phrase's words on interview `stem`, on its latest version."""
    page = client.call("GET", f"/api/interviews/{stem}")[1]
    phrases = [p["text"] for p in page["phrases"]]
    state = {"version": page["version"], "k": 0, "phrases": phrases}

    def correct() -> None:
        i = (state["k"] * 97 + 11) % len(phrases)
        state["k"] += 1
        words = state["phrases"][i].split()
        # Another word each time: a library kept from an earlier run (--folder) is corrected too.
        words[-1:] = ["corrigida." if words[-1:] == ["corrigido."] else "corrigido."]
        text = state["phrases"][i] = " ".join(words)
        status, done = client.call("POST", f"/api/interviews/{stem}/corrections",
                                   {"version": state["version"], "kind": "words", "phrase": i, "text": text})
        assert status == 200, done
        state["version"] = done["version"]

    return correct


def renamer(client: Client):
    """A function that renames the tag every interview has, and back the next time."""
    names = [STUDY, "study"]
    if not any(row["tag"] == STUDY for row in client.call("GET", "/api/tags")[1]["tags"]):
        names.reverse()  # a library kept from an earlier run (--folder) may hold the other name

    def rename() -> None:
        status, done = client.call("POST", "/api/tags/rename", {"old": names[0], "new": names[1]})
        assert status == 200, done
        names.reverse()

    return rename


def timed(fn, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--interviews", type=int, default=200)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--renames", type=int, default=3, help="how many times a tag is renamed across the library")
    parser.add_argument("--no-browser", dest="browser", action="store_false", help="skip the Chromium timing")
    parser.add_argument("--folder", type=Path, help="make the library there, or reuse the one made there before")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"which to time, of {','.join(STEPS)} (the starts always)")
    args = parser.parse_args()
    steps = set(args.steps.split(","))
    if not steps <= set(STEPS):
        parser.error(f"unknown steps: {', '.join(sorted(steps - set(STEPS)))}")

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.folder or Path(tmp) / "library"
        t0 = time.perf_counter()
        if not (folder / "interview-000.json").is_file():
            folder.mkdir(parents=True, exist_ok=True)
            make_library(folder, args.interviews)
        hour = "interview-000"
        made = time.perf_counter() - t0
        hour_json = folder / f"{hour}.json"
        print(f"{args.interviews} interviews ready in {made:.0f} s; the hour: "
              f"{len(Transcript.load(hour_json).phrases)} phrases, {hour_json.stat().st_size / 1e6:.1f} MB of JSON")

        rows: list[tuple[str, list[float]]] = []
        starts = []
        for label in ("cold", "warm"):
            t0 = time.perf_counter()
            running = server.start(folder)
            status, listing = Client(running).call("GET", "/api/library")
            starts.append((label, time.perf_counter() - t0))
            assert status == 200 and len(listing["interviews"]) == args.interviews, listing.get("skipped")
            if label == "cold":
                running.stop()
        client = Client(running)
        try:
            if "board" in steps:
                rows.append(("board (GET api/tags)", timed(lambda: client.call("GET", "/api/tags"), args.runs)))
            if "open" in steps:
                rows.append(("the hour's page data (GET api/interviews/…)",
                             timed(lambda: client.call("GET", f"/api/interviews/{hour}"), args.runs)))
            if "search" in steps:
                rows.append(("a search, every interview (GET api/search?q=cartão)",
                             timed(lambda: client.call("GET", "/api/search?q=cart%C3%A3o"), args.runs)))
            if "highlight" in steps:
                for stem, what in ((hour, "the hour"), ("interview-001", "a 10-minute interview")):
                    rows.append((f"a highlight saved on {what} (POST …/highlights)", timed(saver(client, folder, stem), args.runs)))
            if "search-after" in steps:
                rows.append(("a search right after a highlight was saved (the library read again)",
                             searched_after(saver(client, folder, "interview-002"), client, args.runs)))
            if "correction" in steps:
                rows.append(("a phrase corrected on the hour (POST …/corrections)", timed(corrector(client, hour), args.runs)))
            if "rename" in steps:
                rows.append((f"a tag renamed across {args.interviews} interviews (POST api/tags/rename)",
                             timed(renamer(client), args.renames)))
            if args.browser and "browser" in steps:
                rows.append(("the hour opened in Chromium (click to page ready)", browser_open(running.url, hour, args.runs)))
        finally:
            running.stop()

    found = [{"step": f"start, {label} (server up to the library's list)", "p50": f"{seconds * 1000:.0f} ms", "p95": "(once)"}
             for label, seconds in starts]
    for label, samples in rows:
        p50, p95 = percentiles(samples)
        found.append({"step": label, "p50": f"{p50 * 1000:.0f} ms", "p95": f"{p95 * 1000:.0f} ms"})
    table(found, f"Machine: {os.cpu_count()} cores. {args.runs} runs each.")


def browser_open(url: str, stem: str, runs: int) -> list[float]:
    from igot_dev.browser import Browser

    browser = Browser(Path(tempfile.mkdtemp()), timeout=60)
    try:
        page = browser.open(url)
        out = []
        for _ in range(runs):
            page.goto(f"{url}#/")
            page.locator("a.title").first.wait_for()
            t0 = time.perf_counter()
            page.evaluate(f"location.hash = '#/interview/{stem}'")
            while not page.evaluate("Boolean(window.igot && igot.ready() && document.querySelector('#transcript .phrase'))"):
                time.sleep(0.005)
            out.append(time.perf_counter() - t0)
        return out
    finally:
        browser.close()


if __name__ == "__main__":
    main()
