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

- a team's minute (`team`): 20 people signed in to `igot serve --team` at once, each making a
  highlight, a correction, a comment or a search every 0.5-2 s, a third of them on two shared
  interviews; then every acknowledged change is looked for and every JSON parsed (issue 50:
  p95 of a change under 200 ms, nothing lost).

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
STEPS = ("board", "open", "search", "highlight", "search-after", "correction", "rename", "browser", "team")


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
    parser.add_argument("--people", type=int, default=20, help="team: how many people work at once (default: 20)")
    parser.add_argument("--seconds", type=float, default=60, help="team: for how long (default: 60)")
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
        if "team" in steps:
            team_rows = team_minute(folder, args.interviews, args.people, args.seconds)

    found = [{"step": f"start, {label} (server up to the library's list)", "p50": f"{seconds * 1000:.0f} ms", "p95": "(once)"}
             for label, seconds in starts]
    for label, samples in rows:
        p50, p95 = percentiles(samples)
        found.append({"step": label, "p50": f"{p50 * 1000:.0f} ms", "p95": f"{p95 * 1000:.0f} ms"})
    if "team" in steps:
        found += team_rows
    table(found, f"Machine: {os.cpu_count()} cores. {args.runs} runs each.")


# --- a team's minute: 20 people signed in, working at once ------------------------------------------
class Person:
    """One signed-in person of the team server, as their page is: the session cookie and the page's token."""

    def __init__(self, port: int, email: str, password: str) -> None:
        self.port, self.cookie, self.token = port, "", ""
        status, _, cookie = self.raw("POST", "/api/session", {"email": email, "password": password},
                                     {"Origin": f"http://127.0.0.1:{port}"})
        assert status == 200, status
        self.cookie = cookie.split(";")[0]
        page = self.raw("GET", "/", headers={"Cookie": self.cookie})[1]
        self.token = page.decode().split('name="igot-token" content="')[1].split('"')[0]

    def raw(self, method: str, path: str, body=None, headers=None) -> tuple[int, bytes, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        sent = {**(headers or {}), **({"Content-Type": "application/json"} if body is not None else {})}
        if self.token:
            sent.update({"Cookie": self.cookie, "X-iGot-Token": self.token, "Origin": f"http://127.0.0.1:{self.port}"})
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=sent)
        answer = conn.getresponse()
        data = answer.read()
        conn.close()
        return answer.status, data, answer.getheader("set-cookie") or ""

    def call(self, method: str, path: str, body=None) -> tuple[int, dict]:
        status, data, _ = self.raw(method, path, body)
        return status, json.loads(data)


def team_minute(folder: Path, count: int, people: int, seconds: float, seed: int = 7) -> list[dict]:
    """`people` researchers signed in to one team server over the library, each working for
    `seconds` with their page polling for news every 2 s: a highlight, a correction, a comment or
    a search every 0.5-2 s (their think time),
    most on an interview of their own, a third of them together on two shared interviews (their
    changes to different phrases must all be kept). Every acknowledged highlight, correction and
    comment is then looked for in the files and the team's database; every JSON must parse."""
    import random
    import threading

    from igot.team import comments as team_comments
    from igot.team import people as team_people
    from igot.team import throttle
    from igot.team.db import team_db
    from igot.workspace import team_server

    db = team_db(folder)
    password = "benchmark password"
    sock = team_server.bind(0)
    where = team_server.address("127.0.0.1", sock.getsockname()[1])
    emails = [f"person{i:02d}@example.com" for i in range(people)]
    throttle.clear(db, throttle.address_key("127.0.0.1"))  # a run before this one left its sign-ins counted
    for i, email in enumerate(emails):
        throttle.clear(db, throttle.email_key(email))
        if team_people.by_email(db, email) is None:
            team_people.accept(db, team_people.invite(db, email, "researcher"), f"Person {i:02d}", password)
    running = team_server.start_team(folder, where, sock=sock)
    took: dict[str, list[float]] = {"highlight": [], "correction": [], "comment": [], "search": []}
    kept: dict[str, list] = {"highlight": [], "correction": [], "comment": []}
    refused = {"conflict": 0}
    lock = threading.Lock()
    shared = ["interview-001", "interview-002"]
    end = time.perf_counter() + seconds

    def work(i: int) -> None:
        rng = random.Random(seed * 1000 + i)
        me = Person(where.port, emails[i], password)
        stem = shared[i % 2] if i % 3 == 0 else f"interview-{3 + i:03d}"
        page = me.call("GET", f"/api/interviews/{stem}")[1]
        # Each person corrects phrases of their own (on a shared interview, the others' are other phrases).
        mine = [k for k in range(len(page["phrases"])) if k % people == i] or [i % len(page["phrases"])]

        def poll() -> None:  # the open page asks what teammates changed every 2 s (team.js)
            last = 0
            while time.perf_counter() < end:
                status, news = me.call("GET", f"/api/activity?after={last}")
                assert status == 200, status
                last = news["last"]
                time.sleep(2.0)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        while time.perf_counter() < end:
            time.sleep(rng.uniform(0.5, 2.0))
            what = rng.choice(["highlight", "highlight", "correction", "comment", "search"])
            t0 = time.perf_counter()
            if what == "search":
                status, _ = me.call("GET", "/api/search?q=cart%C3%A3o")
            elif what == "highlight":
                p = page["phrases"][rng.randrange(len(page["phrases"]))]
                status, done = me.call("POST", f"/api/interviews/{stem}/highlights",
                                       {"version": page["version"], "start": p["start"], "end": p["end"], "tags": [f"p{i}"]})
                if status == 201:
                    page["version"] = done["version"]
                    with lock:
                        kept["highlight"].append((stem, done["id"]))
            elif what == "correction":
                k = rng.choice(mine)
                text = f"{page['phrases'][k]['text'].rstrip('.')} ({i}-{rng.randrange(10**6)})."
                status, done = me.call("POST", f"/api/interviews/{stem}/corrections",
                                       {"version": page["version"], "kind": "words", "phrase": k, "text": text})
                if status == 200:
                    page["version"] = done["version"]
                    page["phrases"][k]["text"] = text
                    with lock:
                        kept["correction"].append((stem, k, i, text))
            else:
                highlights_now = me.call("GET", f"/api/interviews/{stem}")[1]["highlights"]
                t0 = time.perf_counter()  # the comment alone is timed
                target = highlights_now[rng.randrange(len(highlights_now))]["id"]
                status, done = me.call("POST", f"/api/interviews/{stem}/highlights/{target}/comments",
                                       {"text": f"seen by {i}"})
                if status == 201:
                    with lock:
                        kept["comment"].append(done["id"])
            spent = time.perf_counter() - t0
            if status == 409:
                with lock:
                    refused["conflict"] += 1
                page = me.call("GET", f"/api/interviews/{stem}")[1]
                continue
            assert status in (200, 201), (what, status)
            with lock:
                took[what].append(spent)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(people)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        running.stop()
    # Nothing lost: every acknowledged change is in the files (a later correction of the same
    # phrase by the same person replaces theirs), every comment in the database, every JSON parses.
    lost = 0
    files = {p.stem: Transcript.load(p) for p in folder.glob("interview-*.json")}
    assert len(files) == count
    for stem, hid in kept["highlight"]:
        lost += not any(h.id == hid for h in files[stem].highlights or [])
    last: dict[tuple, str] = {}
    for stem, k, i, text in kept["correction"]:
        last[(stem, k)] = text
    lost += sum(files[stem].phrases[k].text != text for (stem, k), text in last.items())
    in_db = {c.id for stem in files for thread in team_comments.threads(db, stem).values() for c in thread}
    lost += sum(cid not in in_db for cid in kept["comment"])
    rows = []
    for what, samples in took.items():
        if samples:
            p50, p95 = percentiles(samples)
            rows.append({"step": f"{people} people for {seconds:.0f} s: a {what} ({len(samples)} made)",
                         "p50": f"{p50 * 1000:.0f} ms", "p95": f"{p95 * 1000:.0f} ms"})
    changes = took["highlight"] + took["correction"] + took["comment"]
    p50, p95 = percentiles(changes)
    rows.append({"step": f"**every change** ({len(changes)}; {refused['conflict']} refused as conflicts; {lost} lost; "
                         f"{len(files)} JSON files parse)", "p50": f"{p50 * 1000:.0f} ms", "p95": f"**{p95 * 1000:.0f} ms**"})
    return rows


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
