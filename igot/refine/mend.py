"""Whisper's own word times, mended where they are known to slip, from what the run already has.

The engine times a word by where its decoder looked (cross-attention and dynamic time warping):
near a pause that look is vague, and a word takes in the silence beside it. The last word before a
pause runs on through it, and the first word after a long silence starts seconds early
(faster-whisper issue #125). A link a researcher clicks then opens in the silence.

The VAD hears where speech is, and the pauses between. Two steps, each from what the run already
has: where two words meet (the engine's words mostly touch) and a pause lies near that meeting
and between the two, the first word ends where the pause begins and the next starts where it ends;
then a word's edge still in a pause is moved to the speech beside it (a start forward to where
speech begins, an end back to where it stops). A word never grows past its neighbours, so the
order stays as it is. Whether this is on by default was decided by benchmarks/word_timing.py on
the dev data's check side (docs/findings.md, "Engine word times on a laptop").
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass, replace
from typing import Optional, Sequence

import numpy as np

from igot.asr.transcribe import speech_stretches
from igot.transcript import Transcript

Stretches = Sequence[tuple[float, float]]  # (start, end) seconds of speech, in order, apart

# Engine word times are mended by default: on the dev data's check side (benchmarks/word_timing.py)
# the share of word edges within 100 ms of the truth rose beyond the noise (docs/findings.md).
ON = True


@dataclass(frozen=True)
class MendOptions:
    """The VAD's settings for the speech edges, and how far an edge may move. Chosen on the dev
    data's tune side (benchmarks/word_timing.py)."""

    min_silence_ms: int = 60  # shorter pauses are heard as one stretch (the VAD's own rule)
    pad_ms: int = 30  # each stretch widened by this: a word's soft edges (a breath, an "s") stay in
    shortest_move_s: float = 0.0  # an edge is moved only when it lies at least this far into a pause
    # Where two words meet, a pause at most this far from the meeting takes the place of it (0: off).
    meeting_s: float = 0.3
    shortest_word_s: float = 0.05  # a word is never made shorter than this


def speech(audio: np.ndarray, options: MendOptions = MendOptions()) -> list[tuple[float, float]]:
    """The stretches of speech the engine's VAD hears in `audio` (16 kHz samples)."""
    return speech_stretches(audio, options.min_silence_ms, options.pad_ms)


def mend(t: Transcript, stretches: Stretches, options: MendOptions = MendOptions()) -> Transcript:
    """`t` with its words' edges moved out of the pauses the VAD hears (the module's two steps);
    each phrase then starts at its first word and ends at its last. Text, order and everything
    else kept."""
    if not stretches:  # a VAD that hears nothing says nothing of where the words are
        return t
    times = [(w.start, w.end) for p in t.phrases for w in p.words]
    if options.meeting_s > 0:
        times = meetings_in_pauses(times, pauses(stretches), options)
    ends = [b for _, b in stretches]
    times = [edges_in_speech(a, b, stretches, options, ends) for a, b in times]
    mended = iter(times)
    phrases = []
    for phrase in t.phrases:
        words = [w if (w.start, w.end) == (a, b) else replace(w, start=round(a, 3), end=round(b, 3))
                 for w, (a, b) in zip(phrase.words, mended)]
        if words:
            phrase = replace(phrase, start=words[0].start, end=words[-1].end)
        phrases.append(replace(phrase, words=words))
    return replace(t, phrases=phrases)


def pauses(stretches: Stretches) -> list[tuple[float, float]]:
    """The silences between the stretches of speech."""
    return [(a[1], b[0]) for a, b in zip(stretches, stretches[1:]) if b[0] > a[1]]


def meetings_in_pauses(times: list[tuple[float, float]], gaps: list[tuple[float, float]],
                       options: MendOptions) -> list[tuple[float, float]]:
    """Each place two words meet (the first's end, the next's start), moved to the pause nearest
    it, within options.meeting_s and inside the two words: the first ends where the pause begins,
    the next starts where it ends."""
    times = list(times)
    gap_ends = [g1 for _, g1 in gaps]
    reach = options.meeting_s
    for i in range(len(times) - 1):
        (a0, a1), (b0, b1) = times[i], times[i + 1]
        meet = (a1 + b0) / 2
        near = list(itertools.takewhile(lambda g: g[0] <= meet + reach, gaps[bisect.bisect_left(gap_ends, meet - reach):]))
        near = [(g0, g1) for g0, g1 in near if g0 - a0 >= options.shortest_word_s and b1 - g1 >= options.shortest_word_s]
        if not near:
            continue
        g0, g1 = min(near, key=lambda g: max(g[0] - meet, meet - g[1], 0.0))
        times[i] = (a0, g0)
        times[i + 1] = (g1, b1)
    return times


def edges_in_speech(start: float, end: float, stretches: Stretches, options: MendOptions,
                    ends: Optional[list[float]] = None) -> tuple[float, float]:
    """(start, end) with the start moved forward to the first speech it covers and the end back to
    the last, where the edge lies at least options.shortest_move_s into a pause. A word that covers
    no speech at all is left as it is: the VAD may miss a soft word, Whisper heard something."""
    ends = [b for _, b in stretches] if ends is None else ends  # each stretch's end, for a binary search
    inside = list(itertools.takewhile(lambda s: s[0] < end, stretches[bisect.bisect_right(ends, start):]))
    if not inside:
        return start, end
    new_start = inside[0][0] if inside[0][0] - start >= options.shortest_move_s else start
    new_end = inside[-1][1] if end - inside[-1][1] >= options.shortest_move_s else end
    if new_end - new_start < options.shortest_word_s:  # a word of one frame of speech: keep some of it
        return start, end
    return new_start, new_end
