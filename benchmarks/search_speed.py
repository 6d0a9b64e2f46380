"""The interview library at a real team's scale: 200 one-hour interviews, ~300,000 phrases.

Writes 200 generated one-hour interviews (igot_dev/long_transcript.py, Portuguese and English,
every word timed, phrases cut to the ~1,500 an hour Whisper gives) as JSON into a folder, then:

- builds the library page (`igot index`: load every JSON, write index.html) and times it;
- compares the page's data with the transcripts' text (UTF-8 bytes of every phrase);
- opens the page in headless Chromium (from file://) and times its load and each query
  (common word, rare word, exact phrase, accented query): the search alone, and the search
  with the first 100 hits drawn;
- times the same queries with `igot search` (Python) for the terminal.

    python -m benchmarks.search_speed [--interviews 200] [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from igot.outputs.library import load_interviews, write_library  # noqa: E402
from igot.search.words import search  # noqa: E402
from igot.speakers.phrases import add_links  # noqa: E402
from igot.transcript import Transcript  # noqa: E402
from igot_dev.browser import Browser  # noqa: E402
from igot_dev.long_transcript import long_interview  # noqa: E402

RARE = "ornitorrinco"  # planted in a few phrases: a word almost nobody says
QUERIES = [
    ("common word", "app"),
    ("rare word", RARE),
    ("exact phrase", '"não sei pra que serve"'),
    ("accented query", "transferência"),
    ("two words, any order", "cartão limite"),
]


def one_hour(seed: int) -> Transcript:
    """A generated hour with its long phrases cut in two at a word: ~1,500 phrases an hour."""
    t = long_interview(hours=1.0, speakers=2 + seed % 3, seed=seed)
    phrases = []
    for p in t.phrases:
        if len(p.words) < 6:
            phrases.append(p)
            continue
        half = len(p.words) // 2
        for words in (p.words[:half], p.words[half:]):
            phrases.append(replace(p, start=words[0].start, end=words[-1].end, words=words,
                                   text=" ".join(w.text for w in words)))
    t = add_links(replace(t, phrases=phrases))
    t.source.title = f"Entrevista {seed + 1:03d} — {t.speakers[-1].name}"
    t.info["created"] = f"2026-{1 + seed % 12:02d}-{1 + seed % 28:02d}T10:00:00Z"
    return t


def table(rows: list[dict], title: str) -> None:
    print(f"\n{title}")
    keys = list(rows[0])
    widths = [max(len(k), *(len(str(r[k])) for r in rows)) for k in keys]
    print("| " + " | ".join(k.ljust(w) for k, w in zip(keys, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in rows:
        print("| " + " | ".join(str(r[k]).ljust(w) for k, w in zip(keys, widths)) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--interviews", type=int, default=200)
    parser.add_argument("--runs", type=int, default=7, help="times each query is run in the browser")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="igot-library-") as tmp:
        folder = Path(tmp) / "out"
        folder.mkdir()
        t0 = time.perf_counter()
        rng = random.Random(0)
        text_bytes = phrases = 0
        for seed in range(args.interviews):
            t = one_hour(seed)
            for p in rng.sample(t.phrases, 1) if seed % 40 == 0 else []:  # 5 of 200 interviews
                p.text = f"{p.text} {RARE}"
            t.save(folder / f"entrevista-{seed + 1:03d}.json")
            phrases += len(t.phrases)
            text_bytes += sum(len(p.text.encode("utf-8")) for p in t.phrases)
        print(f"{args.interviews} one-hour interviews, {phrases:,} phrases, {text_bytes / 1e6:.2f} MB of text "
              f"written in {time.perf_counter() - t0:.1f} s")

        t0 = time.perf_counter()
        interviews = load_interviews(folder)
        load_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        page = write_library(folder)
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        write_library(folder)  # what the next `igot run` pays: the cache has every interview
        again_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        interviews = load_interviews(folder)
        cached_load_s = time.perf_counter() - t0
        html = page.read_text(encoding="utf-8")
        start = html.index('<script id="library-data"')
        data = html[html.index(">", start) + 1:html.index("</script>", start)]
        data_bytes, page_bytes = len(data.encode("utf-8")), len(html.encode("utf-8"))
        table([
            {"what": "load the JSONs (igot index, part 1)", "value": f"{load_s:.1f} s"},
            {"what": "igot index (load + write index.html)", "value": f"{build_s:.1f} s"},
            {"what": "igot index again (JSONs unchanged, from the cache)", "value": f"{again_s:.1f} s"},
            {"what": "load for igot search (from the cache)", "value": f"{cached_load_s:.1f} s"},
            {"what": "transcripts' text (UTF-8)", "value": f"{text_bytes / 1e6:.2f} MB"},
            {"what": "page data (the JSON in the page)", "value": f"{data_bytes / 1e6:.2f} MB"},
            {"what": "data / text", "value": f"{data_bytes / text_bytes:.2f}"},
            {"what": "whole index.html", "value": f"{page_bytes / 1e6:.2f} MB"},
        ], "Index build and size")

        browser = Browser(Path(tmp))
        rows = []
        try:
            t0 = time.perf_counter()
            tab = browser.open(page.as_uri())
            open_s = time.perf_counter() - t0
            index_ms = tab.evaluate("window.igotIndexMs")
            total = tab.evaluate("document.querySelectorAll('#interview option').length - 1")
            assert total == args.interviews, total
            for label, query in QUERIES:
                py_t0 = time.perf_counter()
                want = len(search(interviews, query))
                py_s = time.perf_counter() - py_t0
                search_ms, drawn_ms = [], []
                for _ in range(args.runs):
                    got = tab.evaluate(f"""(() => {{
                      const t = performance.now(); const n = igotSearch({json.dumps(query)}); return [n, performance.now() - t];
                    }})()""")
                    assert got[0] == want, (query, got[0], want)
                    search_ms.append(got[1])
                    shown = tab.evaluate(f"""(() => {{
                      document.getElementById('q').value = {json.dumps(query)};
                      const t = performance.now(); const r = igotRun(); return [r.count, performance.now() - t];
                    }})()""")
                    assert shown[0] == want
                    drawn_ms.append(shown[1])
                rows.append({"query": f"{label}: {query}", "hits": f"{want:,}",
                             "search ms (median / max)": f"{statistics.median(search_ms):.1f} / {max(search_ms):.1f}",
                             "with 100 hits drawn ms": f"{statistics.median(drawn_ms):.1f} / {max(drawn_ms):.1f}",
                             "igot search (Python) s": f"{py_s:.2f}"})
        finally:
            browser.close()
        print(f"\nChromium: page open (parse + index) {open_s:.2f} s, of which the search index {index_ms:.0f} ms")
        table(rows, f"Query time in headless Chromium, {phrases:,} phrases ({args.runs} runs each)")


if __name__ == "__main__":
    main()
