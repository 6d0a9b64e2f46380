"""Themes: quotes (the library's highlights) grouped by meaning, each named, with how many
interviews and people back it.

Grouping is average-linkage clustering on the quotes' vectors: the two groups whose quotes are
nearest on average are joined, again and again, while that average stands out from the quotes'
similarities as a whole (THEME_Z standard deviations above their mean). A threshold on the
cosine itself would not carry from one model to another: E5's cosines sit between 0.7 and 0.9,
MiniLM's spread from 0 to 1. Every quote ends in exactly one theme.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

from igot.search.words import normalize

# How far above the mean similarity two groups must be, on average, to be one theme. Not tuned:
# no labelled themes exist in the dev data (benchmarks/search_quality.py has questions, not themes).
THEME_Z = 1.0
NAME_WORDS = 3  # telling words in a theme's name when no LLM names it
DEFAULT_SPEAKER = re.compile(r"^(speaker|falante|orador)\s*\d+$", re.I)
# Words that tell nothing about a theme, English and Portuguese (normalised: no accents).
STOPWORDS = set("""
a an and are as at be been but by can could did do does for from had has have he her him his how i i'd if in is it its
just kind like me my no not now of on one or our really she so than that the their them then there they this to too
up very was way we were what when where which who why will with would yes you your
a o os as um uma uns umas e ou mas de do da dos das no na nos nas em por pra pro para com sem que se nao sim eu me
meu minha meus minhas voce ele ela eles elas isso isto aquilo esse essa este esta ai la ja so mais muito muita
quando onde como porque foi era ser estar estava tem tinha ter fica ficou vez vezes tipo sabe entao ate tambem ao aos
""".split())


@dataclass
class Quote:
    text: str
    interview: str  # its name
    speaker: str  # the speaker's name ("" when unknown)
    ref: Any = None  # what the caller needs to find it again (a highlight's id, a phrase index)


@dataclass
class Theme:
    name: str
    quotes: list[Quote] = field(default_factory=list)

    @property
    def interviews(self) -> int:
        return len({q.interview for q in self.quotes})

    @property
    def people(self) -> int:
        """Named people count once across interviews; "Speaker 2" is someone else in each interview."""
        return len({(q.interview if DEFAULT_SPEAKER.match(q.speaker.strip()) or not q.speaker.strip() else "", q.speaker.strip())
                    for q in self.quotes})


def group_themes(quotes: Sequence[Quote], vectors: np.ndarray, z: float = THEME_Z) -> list[Theme]:
    """The quotes in themes, biggest first, each named by its most telling words."""
    groups = cluster(np.asarray(vectors, np.float32), z)
    themes = [Theme("", [quotes[i] for i in g]) for g in groups]
    names = telling_words([[q.text for q in t.quotes] for t in themes])
    for theme, words in zip(themes, names):
        theme.name = " · ".join(words) or theme.quotes[0].text[:40]
    return sorted(themes, key=lambda t: (-len(t.quotes), -t.interviews, t.name))


def cluster(vectors: np.ndarray, z: float = THEME_Z) -> list[list[int]]:
    """Average-linkage groups of the rows of `vectors` (unit length), each row in exactly one."""
    n = len(vectors)
    if n < 2:
        return [[i] for i in range(n)]
    sims = vectors @ vectors.T
    pairs = sims[np.triu_indices(n, 1)]
    threshold = float(pairs.mean() + z * pairs.std())
    groups: list[list[int]] = [[i] for i in range(n)]
    # Sum of similarities between groups: the average is the sum over the product of their sizes.
    between = sims.astype(np.float64).copy()
    np.fill_diagonal(between, -np.inf)
    sizes = np.ones(n)
    alive = np.ones(n, bool)
    while alive.sum() > 1:
        average = between / np.outer(sizes, sizes)
        average[~alive, :] = -np.inf
        average[:, ~alive] = -np.inf
        np.fill_diagonal(average, -np.inf)
        a, b = np.unravel_index(int(np.argmax(average)), average.shape)
        if average[a, b] < threshold:
            break
        a, b = min(a, b), max(a, b)
        groups[a] += groups[b]
        groups[b] = []
        between[a, :] += between[b, :]
        between[:, a] += between[:, b]
        between[a, a] = -np.inf
        sizes[a] += sizes[b]
        alive[b] = False
    return [sorted(g) for g in groups if g]


def telling_words(theme_texts: Sequence[Sequence[str]], count: int = NAME_WORDS) -> list[list[str]]:
    """Per theme, the words said most in it and least elsewhere (tf-idf over themes), as written."""
    per_theme = []
    spelled: dict[str, Counter] = {}
    for texts in theme_texts:
        counts: Counter = Counter()
        for text in texts:
            for word in re.findall(r"[\w'-]+", text):
                key = normalize(word)
                if len(key) > 2 and key not in STOPWORDS and not key.isdigit():
                    counts[key] += 1
                    spelled.setdefault(key, Counter())[word.lower()] += 1
        per_theme.append(counts)
    themes_with = Counter(key for counts in per_theme for key in counts)
    names = []
    for counts in per_theme:
        score = {key: c * math.log(1 + len(per_theme) / themes_with[key]) for key, c in counts.items()}
        best = sorted(score, key=lambda key: (-score[key], key))[:count]
        names.append([spelled[key].most_common(1)[0][0] for key in best])
    return names


def name_with_llm(theme: Theme, llm: Any, max_new_tokens: int = 16) -> Optional[str]:
    """A short name for the theme written by the local LLM from its quotes; None when it gives none."""
    quotes = "\n".join(f"- {q.text}" for q in theme.quotes[:20])
    prompt = ("These quotes from user interviews share a theme. Name the theme in two to five words, "
              f"in the language of the quotes. Answer with the name only.\n\n{quotes}")
    name = " ".join(llm.generate(prompt, max_new_tokens).split()).strip(" \"'*.-")
    return name[:60] or None
