"""The synthetic-speech helper gives word times that match its audio exactly."""

from __future__ import annotations

import time

import numpy as np
import pytest
import soundfile as sf

from igot_dev.synth import (
    ENGLISH_INTERVIEW,
    ENGLISH_VOICES,
    PORTUGUESE_INTERVIEW,
    PORTUGUESE_VOICES,
    SpokenWord,
    espeak_available,
    reference_text,
    speaker_turns,
    synth_conversation,
    synth_sentence_wav,
)

pytestmark = pytest.mark.skipif(not espeak_available(), reason="espeak-ng not installed")

SR = 16000
WORD_GAP = 0.12
TURN_GAP = 0.7
EDGE = 0.5


def _spoken(sentence: str) -> list[str]:
    return [t for t in sentence.split() if any(c.isalnum() for c in t)]


def _median_f0(x: np.ndarray, sr: int = SR) -> float:
    """Median F0 (Hz) over voiced 40 ms frames, by normalised autocorrelation."""
    frame, hop = int(0.04 * sr), int(0.01 * sr)
    lo, hi = int(sr / 400), int(sr / 60)
    f0s = []
    for i in range(0, len(x) - frame, hop):
        fr = x[i : i + frame] - x[i : i + frame].mean()
        if np.sqrt(np.mean(fr**2)) < 0.02:
            continue
        ac = np.correlate(fr, fr, "full")[frame - 1 :]
        ac = ac / ac[0]
        lag = lo + int(np.argmax(ac[lo:hi]))
        if ac[lag] > 0.5:
            f0s.append(sr / lag)
    assert len(f0s) > 20, "too few voiced frames to estimate pitch"
    return float(np.median(f0s))


def _spectral_centroid(x: np.ndarray, sr: int = SR) -> float:
    spec = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(len(x), 1 / sr)
    return float((freqs * spec).sum() / spec.sum())


def _speaker_audio(audio: np.ndarray, words: list[SpokenWord], speaker: str) -> np.ndarray:
    return np.concatenate(
        [audio[round(w.start * SR) : round(w.end * SR)] for w in words if w.speaker == speaker]
    )


def _synth(script, path, voices):
    t0 = time.perf_counter()
    words = synth_conversation(script, path, voices, word_gap=WORD_GAP, turn_gap=TURN_GAP)
    elapsed = time.perf_counter() - t0
    audio, sr = sf.read(str(path), dtype="float64")
    print(
        f"\nsynth_conversation: {len(words)} words, {len(audio) / sr:.2f} s of audio "
        f"in {elapsed:.2f} s ({path.name})"
    )
    return words, audio, sr


@pytest.fixture(scope="module")
def english(tmp_path_factory):
    path = tmp_path_factory.mktemp("synth") / "english.wav"
    words, audio, sr = _synth(ENGLISH_INTERVIEW, path, ENGLISH_VOICES)
    return path, words, audio, sr


@pytest.fixture(scope="module")
def portuguese(tmp_path_factory):
    path = tmp_path_factory.mktemp("synth") / "portuguese.wav"
    words, audio, sr = _synth(PORTUGUESE_INTERVIEW, path, PORTUGUESE_VOICES)
    return path, words, audio, sr


def _check_ground_truth(script, words, audio, sr):
    # The words are the script's, in order, with the right speakers.
    expected = [(spk, tok) for spk, sentence in script for tok in _spoken(sentence)]
    assert [(w.speaker, w.text) for w in words] == expected
    assert {w.speaker for w in words} == {"A", "B"}

    # Times: monotonic, sample-aligned, known gaps and edges, exact duration.
    assert words[0].start == pytest.approx(EDGE, abs=1 / sr)
    turn_of = [i for i, (_, s) in enumerate(script) for _ in _spoken(s)]
    for k, w in enumerate(words):
        assert w.start < w.end
        assert w.start * sr == pytest.approx(round(w.start * sr), abs=1e-6)
        assert w.end * sr == pytest.approx(round(w.end * sr), abs=1e-6)
        if k:
            gap = TURN_GAP if turn_of[k] != turn_of[k - 1] else WORD_GAP
            assert w.start - words[k - 1].end == pytest.approx(gap, abs=1.01 / sr)
    assert len(audio) == round((words[-1].end + EDGE) * sr)

    # Audio: energy inside every word span, digital silence everywhere else,
    # and sound right at both edges of each span (the trim is tight).
    inside = np.zeros(len(audio), dtype=bool)
    edge = int(0.02 * sr)
    for w in words:
        a, b = round(w.start * sr), round(w.end * sr)
        inside[a:b] = True
        seg = audio[a:b]
        rms = np.sqrt(np.mean(seg**2))
        assert rms > 0.02, f"{w.text!r} at {w.start:.2f}s: rms {rms:.4f}"
        assert np.abs(seg[:edge]).max() > 0.002, f"{w.text!r}: silent onset"
        assert np.abs(seg[-edge:]).max() > 0.002, f"{w.text!r}: silent offset"
    assert not np.any(audio[~inside]), "sound outside the word spans"


def test_wav_format(english):
    path, *_ = english
    info = sf.info(str(path))
    assert (info.samplerate, info.channels, info.subtype) == (SR, 1, "PCM_16")


def test_english_ground_truth(english):
    _, words, audio, sr = english
    _check_ground_truth(ENGLISH_INTERVIEW, words, audio, sr)
    n = len(words)
    assert 80 <= n <= 120
    print(f"english: {n} words, {len(audio) / sr:.2f} s")


def test_portuguese_ground_truth(portuguese):
    _, words, audio, sr = portuguese
    _check_ground_truth(PORTUGUESE_INTERVIEW, words, audio, sr)
    assert 50 <= len(words) <= 70


def test_scripts_shape():
    for script in (ENGLISH_INTERVIEW, PORTUGUESE_INTERVIEW):
        assert 6 <= len(script) <= 8
        assert {spk for spk, _ in script} == {"A", "B"}
        assert any(2 <= len(_spoken(s)) <= 4 for spk, s in script if spk == "B")
    assert reference_text(ENGLISH_INTERVIEW).startswith("Thanks for joining me today.")


def test_speaker_turns(english):
    _, words, *_ = english
    turns = speaker_turns(words)
    assert [t.speaker for t in turns] == [spk for spk, _ in ENGLISH_INTERVIEW]
    assert [t.text for t in turns] == [" ".join(_spoken(s)) for _, s in ENGLISH_INTERVIEW]
    assert all(a.end < b.start for a, b in zip(turns, turns[1:]))


def test_voices_acoustically_distinct(english, portuguese):
    for name, (_, words, audio, _sr) in (("en", english), ("pt", portuguese)):
        a, b = _speaker_audio(audio, words, "A"), _speaker_audio(audio, words, "B")
        f0a, f0b = _median_f0(a), _median_f0(b)
        ca, cb = _spectral_centroid(a), _spectral_centroid(b)
        print(f"{name}: median F0 A {f0a:.0f} Hz, B {f0b:.0f} Hz; centroid A {ca:.0f} Hz, B {cb:.0f} Hz")
        assert 70 < f0a < 140 and 150 < f0b < 300
        assert f0b / f0a > 1.5


def test_cache_reuses_identical_waveforms(english):
    _, words, audio, sr = english
    by_key: dict[tuple[str, str], list[np.ndarray]] = {}
    for w in words:
        by_key.setdefault((w.text, w.speaker), []).append(audio[round(w.start * sr) : round(w.end * sr)])
    repeated = {k: v for k, v in by_key.items() if len(v) > 1}
    assert repeated, "the script should repeat some words"
    for key, segs in repeated.items():
        for seg in segs[1:]:
            assert np.array_equal(seg, segs[0]), key
    # The same word in the other voice is a different waveform.
    the_a, the_b = by_key[("the", "A")][0], by_key[("the", "B")][0]
    assert len(the_a) != len(the_b) or not np.array_equal(the_a, the_b)


def test_voice_spec_with_extra_args(tmp_path):
    turns = [("A", "Hello there, budget."), ("B", "Hello there, budget.")]
    voices = {"A": "en-us", "B": ["-v", "en-us", "-p", "85", "-s", "120"]}
    words, audio, sr = _synth(turns, tmp_path / "args.wav", voices)
    a = [w for w in words if w.speaker == "A"]
    b = [w for w in words if w.speaker == "B"]
    # -s 120 speaks slower than the default 175 wpm; -p 85 raises the pitch.
    assert sum(w.end - w.start for w in b) > 1.2 * sum(w.end - w.start for w in a)
    assert _median_f0(_speaker_audio(audio, words, "B")) > _median_f0(_speaker_audio(audio, words, "A"))
    # A voice given as one string with arguments works too.
    words2 = synth_conversation(turns[:1], tmp_path / "args2.wav", {"A": "en-us -s 120"})
    assert words2[-1].end - words2[0].start == pytest.approx(b[-1].end - b[0].start, abs=0.01)


def test_missing_voice_is_an_error(tmp_path):
    with pytest.raises(ValueError):
        synth_conversation([("C", "hello")], tmp_path / "x.wav", {"A": "en-us"})


def test_sentence_wav(tmp_path):
    path = tmp_path / "sentence.wav"
    t0 = time.perf_counter()
    duration = synth_sentence_wav(ENGLISH_INTERVIEW[0][1], "en-us", path)
    print(f"\nsynth_sentence_wav: {duration:.2f} s of audio in {time.perf_counter() - t0:.2f} s")
    info = sf.info(str(path))
    assert (info.samplerate, info.channels, info.subtype) == (SR, 1, "PCM_16")
    assert info.frames / info.samplerate == pytest.approx(duration, abs=1e-6)
    audio, _ = sf.read(str(path), dtype="float64")
    edge = int(EDGE * SR)
    assert not np.any(audio[:edge]) and not np.any(audio[-edge:])
    speech = audio[edge:-edge]
    assert 3.0 < len(speech) / SR < 8.0
    assert np.sqrt(np.mean(speech**2)) > 0.02
