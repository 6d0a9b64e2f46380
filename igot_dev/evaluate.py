"""Measures of transcript quality against ground truth, for tests and benchmarks."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from igot.text import edit_distance
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
    return words_apart(ref, hyp) / len(ref)


def words_apart(ref: list[str], hyp: list[str]) -> int:
    """Word edit distance: substitutions + deletions + insertions that turn `ref` into `hyp`."""
    return edit_distance(ref, hyp)


def align_words(said: Sequence[Word], heard: Sequence[Word], near: float = 1.0) -> list[tuple[int, int]]:
    """(i, j) pairs of a transcript's words `heard[j]` and the words truly said `said[i]`, both in
    time order: the edit-distance alignment (same word or a substitution, words within `near`
    seconds of each other), as the word diarization error rate (WDER) scores speakers on the
    words a transcript holds. A word only one side has is left out."""
    ref = np.array([" ".join(normalize(w.text)) for w in said], dtype=object)
    hyp = np.array([" ".join(normalize(w.text)) for w in heard], dtype=object)
    far = len(ref) + len(hyp) + 1  # a pair of words further apart than `near` is never aligned
    said_mid = np.array([w.start + w.end for w in said]) / 2
    heard_mid = np.array([w.start + w.end for w in heard]) / 2

    def costs(i: int) -> np.ndarray:  # said word i against every heard word
        return np.where(np.abs(said_mid[i] - heard_mid) >= near, far, (ref[i] != hyp).astype(np.int64))

    # Row by row (a long interview has thousands of words each side): a cell is the best of the
    # diagonal and the cell above, then of the cells to its left plus one per step, a running minimum.
    table = np.zeros((len(ref) + 1, len(hyp) + 1), dtype=np.int32)  # 7,000 x 7,000 words: 196 MB
    table[:, 0], table[0, :] = np.arange(len(ref) + 1), np.arange(len(hyp) + 1)
    steps = np.arange(len(hyp) + 1)
    for i in range(1, len(ref) + 1):
        row = np.empty(len(hyp) + 1, dtype=np.int32)
        row[0] = i
        row[1:] = np.minimum(table[i - 1, :-1] + costs(i - 1), table[i - 1, 1:] + 1)
        table[i] = np.minimum.accumulate(row - steps) + steps
    pairs, i, j = [], len(ref), len(hyp)
    cost, cost_row = None, -1
    while i and j:
        if cost_row != i:  # said word i - 1's costs, made again only when the walk leaves its row
            cost, cost_row = costs(i - 1), i
        if table[i, j] == table[i - 1, j - 1] + cost[j - 1] and cost[j - 1] < far:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif table[i, j] == table[i - 1, j] + 1:
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def heard_speakers(said: Sequence[Word], speakers: Sequence[str], heard: Sequence[Word]) -> list[Optional[str]]:
    """Per word of a transcript, who said it: the speaker of the said word it is aligned with
    (align_words), None for a word no one said there."""
    true: list[Optional[str]] = [None] * len(heard)
    for i, j in align_words(said, heard):
        true[j] = speakers[i]
    return true


def speaker_of(turns: Sequence[SpeakerTurn], time: float) -> str | None:
    for t in turns:
        if t.start <= time < t.end:
            return t.speaker
    return None


def attribution_accuracy(words: Sequence[Word], truth: Sequence[SpeakerTurn]) -> float:
    """Share of transcribed words whose speaker matches the true speaker at the word's middle,
    after the best one-to-one mapping of found to true speakers, so splitting one person into
    two is an error, not a free pass."""
    pairs = [(w.speaker, speaker_of(truth, (w.start + w.end) / 2)) for w in words]
    return right_speaker_share([found for found, true in pairs if true is not None],
                               [true for _, true in pairs if true is not None])


def right_speaker_share(found: Sequence[Optional[str]], true: Sequence[str]) -> float:
    """Share of words whose found speaker is their true one, under the one-to-one mapping of
    found to true speakers that gets the most words right (Hungarian algorithm)."""
    return sum(right_speaker_words(found, true)) / len(true) if true else 0.0


def right_speaker_words(found: Sequence[Optional[str]], true: Sequence[str]) -> list[bool]:
    """Per word, whether its found speaker is its true one under right_speaker_share's mapping."""
    from scipy.optimize import linear_sum_assignment

    if not true:
        return []
    votes = Counter(zip(found, true))
    found_ids, true_ids = sorted({f for f, _ in votes}, key=str), sorted(set(true))
    table = np.array([[votes[(f, t)] for t in true_ids] for f in found_ids], dtype=float)
    rows, cols = linear_sum_assignment(-table)
    mapped = {found_ids[r]: true_ids[c] for r, c in zip(rows, cols)}
    return [f in mapped and mapped[f] == t for f, t in zip(found, true)]


def overlapped_words(words: Sequence[Word], by: float = 0.02) -> list[bool]:
    """Per word, whether another word shares more than `by` seconds with it: two people at once.
    A transcript decoded as one stream of text (Whisper's) holds no such pair; the words said in a
    simulated conversation do, and a back-channel inside an answer is one."""
    flags = [False] * len(words)
    reach, latest = -np.inf, None  # the furthest end among the words before, and whose it is
    for k in sorted(range(len(words)), key=lambda k: words[k].start):
        if latest is not None and min(reach, words[k].end) - words[k].start > by:
            flags[k] = flags[latest] = True
        if words[k].end > reach:
            reach, latest = words[k].end, k
    return flags


def read_rttm(path) -> list[SpeakerTurn]:
    turns = []
    for line in open(path, encoding="utf-8"):
        parts = line.split()
        if parts and parts[0] == "SPEAKER":
            start, length = float(parts[3]), float(parts[4])
            turns.append(SpeakerTurn(parts[7], start, start + length))
    return turns


def read_uem(path) -> dict[str, list[tuple[float, float]]]:
    """Scored regions per file: `file channel start end` lines."""
    regions: dict[str, list[tuple[float, float]]] = {}
    for line in open(path, encoding="utf-8"):
        parts = line.split()
        if len(parts) >= 4:
            regions.setdefault(parts[0], []).append((float(parts[2]), float(parts[3])))
    return regions


def read_rttm_files(path) -> dict[str, list[SpeakerTurn]]:
    """An RTTM holding several recordings: turns per file id."""
    turns: dict[str, list[SpeakerTurn]] = {}
    for line in open(path, encoding="utf-8"):
        parts = line.split()
        if parts and parts[0] == "SPEAKER":
            start, length = float(parts[3]), float(parts[4])
            turns.setdefault(parts[1], []).append(SpeakerTurn(parts[7], start, start + length))
    return turns


# Scoring on a 10 ms grid, as md-eval and dscore do in effect (their times have 10 ms precision).
STEP = 0.01


@dataclass
class ErrorCounts:
    """Seconds of diarization error in the scored regions; add two to pool files."""
    speech: float = 0.0  # reference speaker time (two people at once count twice)
    missed: float = 0.0
    false_alarm: float = 0.0
    confusion: float = 0.0

    @property
    def der(self) -> float:
        """Diarization error rate: (missed + false alarm + confusion) / reference speaker time."""
        errors = self.missed + self.false_alarm + self.confusion
        return errors / self.speech if self.speech else float(errors > 0)

    def __add__(self, other: "ErrorCounts") -> "ErrorCounts":
        return ErrorCounts(*(getattr(self, f) + getattr(other, f) for f in ("speech", "missed", "false_alarm", "confusion")))


def _grid(turns: Sequence[SpeakerTurn], frames: int) -> tuple[list[str], np.ndarray]:
    """Who speaks in each 10 ms frame: one boolean column per speaker."""
    speakers = sorted({t.speaker for t in turns})
    grid = np.zeros((frames, len(speakers)), dtype=bool)
    for t in turns:
        grid[int(round(t.start / STEP)):int(round(t.end / STEP)), speakers.index(t.speaker)] = True
    return speakers, grid


def _scored(reference, uem, collar: float, frames: int) -> np.ndarray:
    scored = np.zeros(frames, dtype=bool)
    for start, end in uem:
        scored[int(round(start / STEP)):int(round(end / STEP))] = True
    # No error is counted within `collar` seconds of a reference turn's start or end: human
    # annotators do not agree on boundaries closer than that.
    for t in reference:
        for edge in (t.start, t.end):
            scored[max(0, int(round((edge - collar) / STEP))):int(round((edge + collar) / STEP))] = False
    return scored


def diarization_errors(reference: Sequence[SpeakerTurn], hypothesis: Sequence[SpeakerTurn],
                       uem: Optional[Sequence[tuple[float, float]]] = None, collar: float = 0.0) -> ErrorCounts:
    """Missed speech, false alarm and speaker confusion (NIST md-eval definitions, overlap
    scored): found speakers are mapped one-to-one onto true ones to maximise the time they
    agree (Hungarian algorithm); `collar` seconds either side of every reference boundary are
    not scored. `uem` are the scored regions (default: from 0 to the last turn's end)."""
    from scipy.optimize import linear_sum_assignment

    end = max([t.end for t in [*reference, *hypothesis]] + [e for _, e in uem or []] + [0.0])
    frames = int(round(end / STEP)) + 1
    scored = _scored(reference, uem or [(0.0, end)], collar, frames)
    _, ref = _grid(reference, frames)
    _, hyp = _grid(hypothesis, frames)
    ref, hyp = ref[scored], hyp[scored]
    n_ref, n_hyp = ref.sum(1), hyp.sum(1)
    together = ref.T.astype(float) @ hyp.astype(float)  # frames each pair speaks at once
    rows, cols = linear_sum_assignment(-together) if together.size else ([], [])
    correct = together[rows, cols].sum()
    return ErrorCounts(speech=n_ref.sum() * STEP, missed=np.maximum(n_ref - n_hyp, 0).sum() * STEP,
                       false_alarm=np.maximum(n_hyp - n_ref, 0).sum() * STEP,
                       confusion=(np.minimum(n_ref, n_hyp).sum() - correct) * STEP)


def speaker_jers(reference: Sequence[SpeakerTurn], hypothesis: Sequence[SpeakerTurn],
                 uem: Optional[Sequence[tuple[float, float]]] = None) -> list[float]:
    """Jaccard error of each true speaker (DIHARD / dscore definition): 1 - |true ∩ found| /
    |true ∪ found| with its found speaker under the one-to-one mapping that minimises the total;
    a true speaker left without a found one scores 1. Average them (per file or pooled) for JER."""
    from scipy.optimize import linear_sum_assignment

    end = max([t.end for t in [*reference, *hypothesis]] + [e for _, e in uem or []] + [0.0])
    frames = int(round(end / STEP)) + 1
    scored = _scored([], uem or [(0.0, end)], 0.0, frames)
    _, ref = _grid(reference, frames)
    _, hyp = _grid(hypothesis, frames)
    ref, hyp = ref[scored].astype(float), hyp[scored].astype(float)
    ref, hyp = ref[:, ref.sum(0) > 0], hyp[:, hyp.sum(0) > 0]
    if not ref.shape[1]:
        return []
    together = ref.T @ hyp
    union = ref.sum(0)[:, None] + hyp.sum(0)[None, :] - together
    jer = 1 - together / np.maximum(union, 1e-9)
    errors = np.ones(ref.shape[1])
    if jer.size:
        rows, cols = linear_sum_assignment(jer)
        errors[rows] = jer[rows, cols]
    return [float(e) for e in errors]
