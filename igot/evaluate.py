"""Measures of transcript quality against ground truth, for tests and benchmarks."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from typing import Sequence

from igot.transcript import SpeakerTurn, Word


def normalize(text: str) -> list[str]:
    """Lower case, no punctuation, hyphens split: the words a listener would count."""
    text = unicodedata.normalize("NFC", text.lower()).replace("-", " ")
    text = re.sub(r"[^\w\s']", " ", text).replace("'", "")
    return text.split()


def word_error_rate(reference: str, hypothesis: str) -> float:
    """(substitutions + deletions + insertions) / reference words, by edit distance."""
    ref, hyp = normalize(reference), normalize(hypothesis)
    if not ref:
        return float(bool(hyp))
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        current = [i]
        for j, h in enumerate(hyp, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h)))
        previous = current
    return previous[-1] / len(ref)


def speaker_of(turns: Sequence[SpeakerTurn], time: float) -> str | None:
    for t in turns:
        if t.start <= time < t.end:
            return t.speaker
    return None


def attribution_accuracy(words: Sequence[Word], truth: Sequence[SpeakerTurn]) -> float:
    """Share of transcribed words whose speaker matches the true speaker at the word's middle,
    after a one-to-one mapping of found to true speakers (largest agreements first), so
    splitting one person into two is an error, not a free pass."""
    pairs = [(w.speaker, speaker_of(truth, (w.start + w.end) / 2)) for w in words]
    pairs = [(found, true) for found, true in pairs if true is not None]
    if not pairs:
        return 0.0
    votes = Counter(pairs)
    mapping: dict[str | None, str] = {}
    for (found, true), _ in votes.most_common():
        if found not in mapping and true not in mapping.values():
            mapping[found] = true
    return sum(mapping.get(found) == true for found, true in pairs) / len(pairs)


def read_rttm(path) -> list[SpeakerTurn]:
    turns = []
    for line in open(path, encoding="utf-8"):
        parts = line.split()
        if parts and parts[0] == "SPEAKER":
            start, length = float(parts[3]), float(parts[4])
            turns.append(SpeakerTurn(parts[7], start, start + length))
    return turns
