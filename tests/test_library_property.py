"""The library page's search as a property: over random libraries and random queries, in
Chromium, every hit shown holds every query term, and the page shows exactly `igot search`'s hits,
in the same order. Seeded, so a failure names a library that can be made again."""

from __future__ import annotations

import json
import random
import re
import time
import unicodedata
from pathlib import Path
from urllib.parse import quote_plus

import pytest

from igot.outputs.export import slugify
from igot.outputs.library import write_library
from igot.transcript import Phrase, Source, Speaker, Transcript
from tests.test_library import HITS_JS, cli

SEED = 23
LIBRARIES = 12
QUERIES = 8  # per library
# Words with and without accents, some sharing beginnings (pix/pixel, nao/nada), some repeated often.
WORDS = ("não nada nothing confiava confiança pix pixel integração integrar ação açaí café você já São Paulo "
         "banco cartão conta senha fácil difícil pagamento cadastro ótimo niño über crème naïve résumé taxa "
         "tá e a o de do que the fee came late bank trust Ñandú").split()
NAMES = ["Ana", "Ana Lúcia", "Bruno", "Joana Conceição", "José", "Zé", "Speaker 1", "Speaker 2", "Renée O'Brien"]
PUNCTUATION = [".", ",", "?", "!", "…", " —", ":", ""]


def fold(text: str) -> str:
    """The test's own idea of 'accent- and case-insensitive': no code shared with igot.outputs.library."""
    return "".join(c for c in unicodedata.normalize("NFD", text) if not unicodedata.combining(c)).lower()


def words_of(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", fold(text))


def phrase_text(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(1, 9))]
    if rng.random() < 0.3:  # a word said twice, "não, não"
        k = rng.randrange(len(words))
        words.insert(k, words[k])
    text = " ".join(w + (rng.choice(PUNCTUATION) if rng.random() < 0.3 else "") for w in words)
    text = text[0].upper() + text[1:]
    if rng.random() < 0.1:
        text = f"“{text}”"
    # Some files hold accents as separate characters (a Mac, a hand edit): the same words to a reader.
    return unicodedata.normalize("NFD", text) if rng.random() < 0.15 else text


def random_interview(rng: random.Random, n: int, most: int = 14) -> Transcript:
    names = rng.sample(NAMES, rng.randint(1, 3))
    speakers = [Speaker(f"S{i + 1}", name) for i, name in enumerate(names)]
    count = 0 if rng.random() < 0.25 else rng.randint(1, most)  # a recording with no speech has no phrases
    phrases, at = [], 0.0
    for _ in range(count):
        start = at + rng.uniform(0.2, 30)
        at = start + rng.uniform(0.5, 8)
        phrases.append(Phrase(rng.choice(speakers).id, round(start, 2), round(at, 2), phrase_text(rng)))
    url = f"https://www.youtube.com/watch?v=vid{n:04d}" if rng.random() < 0.6 else None
    return Transcript(
        source=Source(f"Entrevista {n} — {rng.choice(WORDS)}", url, None if url else f"/recordings/{n}.mp4",
                      "youtube" if url else "file"),
        language=rng.choice(["pt", "en", "es"]), duration=at, speakers=speakers, phrases=phrases,
        info={"created": f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:00:00Z"},
    )


def random_library(rng: random.Random, folder: Path, big: bool = False) -> list[Transcript]:
    """1-30 interviews of up to 14 phrases; a big one: 30 of up to 40."""
    folder.mkdir()
    made = [random_interview(rng, n, 40 if big else 14) for n in range(30 if big else rng.randint(1, 30))]
    for t in made:
        t.save(folder / f"{slugify(t.source.title)}.json")
    if rng.random() < 0.3:  # a damaged file among them: skipped, with a line
        (folder / "cut-short.json").write_text('{"source": {"title": "x"}, "phrases": [{"text": "pix')
    write_library(folder)
    return made


def random_query(rng: random.Random, made: list[Transcript]) -> str:
    """Terms taken from one phrase (or its speaker's name): whole words, word beginnings, a
    quoted run of words; case and accents changed at random, any order."""
    spoken = [t for t in made if t.phrases]
    if not spoken or rng.random() < 0.05:
        return "zzqx"  # nothing has it: no hits, on both sides
    t = rng.choice(spoken)
    p = rng.choice(t.phrases)
    words = words_of(p.text) or ["a"]
    if rng.random() < 0.08:
        return words[0][0]  # one letter: hundreds of hits, shown a hundred at a time
    terms = []
    if rng.random() < 0.3 and len(words) >= 2:
        k = rng.randrange(len(words) - 1)
        terms.append('"' + " ".join(words[k:k + rng.randint(2, 3)]) + '"')
    for w in rng.sample(words, min(len(words), rng.randint(1, 2))):
        terms.append(w[:rng.randint(min(2, len(w)), len(w))])  # a word, or how it begins
    if rng.random() < 0.2:
        terms.append(words_of(t.speakers[int(p.speaker[1:]) - 1].name)[0])
    rng.shuffle(terms)
    query = " ".join(terms)
    # As typed: capitals, and accents put back on (São for sao) where the phrase had them.
    if rng.random() < 0.5:
        query = query.upper()
    if rng.random() < 0.5:
        for original in re.findall(r"[^\W_]+", unicodedata.normalize("NFC", p.text)):
            query = re.sub(rf"(?i)\b{re.escape(fold(original))}\b", original, query, count=1)
    return query


def holds(query: str, text: str, speaker: str) -> bool:
    """Every term of the query is in the phrase: a quoted run as whole words in order, any other
    word as the start of a word of the phrase or of its speaker's name."""
    quoted = re.findall(r'"([^"]*)"', query)
    loose = words_of(re.sub(r'"[^"]*"', " ", query))
    said, name = words_of(text), words_of(speaker)
    runs = f" {' '.join(said)} "
    return (all(f" {' '.join(words_of(q))} " in runs for q in quoted if words_of(q))
            and all(any(w.startswith(term) for w in said + name) for term in loose))


SHOW_ALL = "(() => { const more = document.getElementById('more'); while (!more.hidden) more.click(); })()"


@pytest.mark.slow
def test_page_hits_hold_every_term_and_equal_igot_search(tmp_path):
    from igot_dev.browser import Browser

    rng = random.Random(SEED)
    browser = Browser(tmp_path)
    checked = hits_seen = empties = most = 0
    started = time.monotonic()
    try:
        for n in range(LIBRARIES):
            folder = tmp_path / f"library-{n}"
            made = random_library(rng, folder, big=n == LIBRARIES - 1)
            empties += sum(not t.phrases for t in made)
            queries = [random_query(rng, made) for _ in range(QUERIES)]
            if n == LIBRARIES - 1:  # the letter most words start with: past the first hundred hits
                letters = [w[0] for t in made for p in t.phrases for w in words_of(p.text)]
                queries[-1] = max(set(letters), key=letters.count)
            # The first search comes in the address, as a bookmark would bring it; the others as typed.
            tab = browser.open(f"{(folder / 'index.html').as_uri()}#q={quote_plus(queries[0])}")
            for k, query in enumerate(queries):
                if k:
                    tab.evaluate(f"document.getElementById('q').value = {json.dumps(query)}; igotRun()")
                tab.evaluate(SHOW_ALL)
                shown = tab.evaluate(HITS_JS)
                code, out, _ = cli("search", query, "--out", str(folder), "--json")
                want = json.loads(out)
                where = f"library {n} (seed {SEED}), query {query!r}"
                assert code == (0 if want else 1), where
                assert [(g["text"], g["who"], g["page"]) for g in shown] == \
                    [(h["text"], h["speaker"], h["page"]) for h in want], where
                status = tab.evaluate("document.getElementById('status').textContent")
                assert status.startswith(f"{len(want)} phrase") or (not want and status == "No phrase matches."), where
                for g in shown:
                    assert holds(query, g["text"], g["who"]), f"{where}: {g['text']!r} ({g['who']})"
                # Each hit is the phrase at its anchor in that interview's JSON: the one that matched.
                for h in want:
                    page, anchor = h["page"].rsplit("#p-", 1)
                    saved = json.loads(Path(page.removeprefix("file://")).with_suffix(".json").read_text(encoding="utf-8"))
                    assert " ".join(saved["phrases"][int(anchor)]["text"].split()) == h["text"], where
                # And no phrase of the library that holds every term is missing.
                every = sum(holds(query, " ".join(p.text.split()), t.speakers[int(p.speaker[1:]) - 1].name)
                            for t in made for p in t.phrases)
                assert len(want) == every, where
                checked += 1
                hits_seen += len(want)
                most = max(most, len(want))
            tab.close()
    finally:
        browser.close()
    # The test saw what it is about: empty interviews, and searches past the first hundred hits.
    assert checked == LIBRARIES * QUERIES and empties >= 5 and most > 100
    assert time.monotonic() - started < 60
