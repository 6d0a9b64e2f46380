"""The transformers engine, through its real loading code, with a small model saved here.

No model hub here, so the tests build a randomly initialised WhisperForConditionalGeneration with
tiny dimensions but Whisper's real multilingual vocabulary, save it with save_pretrained next to
its processor, and load the folder through `load_whisper` as a downloaded model would be loaded.
The tokenizer comes from the bundled Whisper base (igot[offline]): its CTranslate2 folder holds
the Hugging Face tokenizer.json (byte-level BPE, language, task and timestamp tokens), which
WhisperTokenizer reads as it is. The random weights are seeded, so the text is the same noise on
every run, but it is made of words, and the windows, batching, alignment and timing code is real.
"""

from __future__ import annotations

import shutil
import wave
from pathlib import Path

import numpy as np
import pytest

from igot.asr import transcribe as engine
from igot.asr import whisper_transformers
from igot.asr.transcribe import default_engine, load_whisper, transcribe
from igot.errors import IgotError
from igot.media.audio import SAMPLE_RATE, load_audio
from igot_dev.tiny_models import TINY, save_random_whisper, whisper_tokenizer


# The first language-specific token id after which large-v3 added <|yue|>, shifting all later ids.
@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    from igot.runtime.bundled import whisper_model_dir

    return whisper_tokenizer(whisper_model_dir("base"), tmp_path_factory.mktemp("whisper-tokenizer"))


@pytest.fixture(scope="module")
def folder(tmp_path_factory, tokenizer):
    # 16 tokens a window keep the CPU test fast; the engine takes the limit from generation_config.
    return save_random_whisper(tmp_path_factory.mktemp("tiny-whisper"), tokenizer, **TINY, max_new_tokens=16)


@pytest.fixture(scope="module")
def model(folder):
    model = load_whisper(str(folder), engine="transformers", device="cpu")
    model.batch_size = 2
    return model


@pytest.fixture(scope="module")
def long_wav(tmp_path_factory, devdata, wav16k):
    """75 s: the 11 s JFK clip again and again, with 3 s of digital silence after each."""
    clip = load_audio(wav16k(devdata / "openai_whisper/jfk.flac"))
    audio = np.concatenate([np.concatenate([clip, np.zeros(3 * SAMPLE_RATE, np.float32)]) for _ in range(6)])[:75 * SAMPLE_RATE]
    return write_wav(tmp_path_factory.mktemp("long") / "long.wav", audio)


def write_wav(path: Path, audio: np.ndarray) -> Path:
    with wave.open(str(path), "wb") as f:
        f.setnchannels(1), f.setsampwidth(2), f.setframerate(SAMPLE_RATE)
        f.writeframes((np.clip(audio, -1, 1) * 32767).astype(np.int16).tobytes())
    return path


def check_words(t) -> None:
    for phrase in t.phrases:
        assert phrase.words and phrase.start == phrase.words[0].start and phrase.end == phrase.words[-1].end
        assert all(0 <= w.start <= w.end <= t.duration + 0.01 for w in phrase.words)
        assert all(0 <= w.probability <= 1 for w in phrase.words)


def test_folder_loads_and_transcribes(model, devdata, wav16k):
    assert (model.engine, model.precision, model.model.config._attn_implementation) == ("transformers", "float32", "sdpa")
    t = transcribe(wav16k(devdata / "openai_whisper/jfk.flac"), model, language="en", progress=False)
    assert t.info["engine"] == "transformers" and t.language == "en" and abs(t.duration - 11.0) < 0.01
    assert t.words, "the seeded random model writes words on this clip"
    check_words(t)


def test_language_is_detected(model, devdata, wav16k):
    t = transcribe(wav16k(devdata / "openai_whisper/jfk.flac"), model, progress=False)
    assert f"<|{t.language}|>" in model.model.generation_config.lang_to_id


@pytest.mark.slow
def test_windows_are_batched_and_timed_in_the_recording(model, long_wav):
    """75 s without VAD: three windows, cut at quiet moments, decoded in two batches; each
    window's words are the words of that window transcribed alone, moved by its start."""
    audio = load_audio(long_wav)
    windows = whisper_transformers.quiet_cuts(audio)
    assert len(windows) == 3 and windows[0][0] == 0 and windows[-1][1] == len(audio)
    assert all(a < b <= a + 30 * SAMPLE_RATE for a, b in windows)
    assert all(np.abs(audio[b - 800:b + 800]).max() == 0 for _, b in windows[:-1]), "cut inside the silences"
    t = transcribe(long_wav, model, language="en", vad=False, progress=False)
    check_words(t)
    for a, b in windows[1:]:  # one in each batch
        alone = transcribe(write_wav(long_wav.with_name(f"w{a}.wav"), audio[a:b]), model, language="en", vad=False,
                           progress=False)
        inside = [w for w in t.words if a / SAMPLE_RATE <= w.start < b / SAMPLE_RATE]
        assert alone.words and [w.text for w in inside] == [w.text for w in alone.words]
        assert np.allclose([w.start for w in inside], [w.start + a / SAMPLE_RATE for w in alone.words], atol=0.021)
        assert np.allclose([w.end for w in inside], [w.end + a / SAMPLE_RATE for w in alone.words], atol=0.021)


def test_vad_windows_hold_the_speech(model, long_wav):
    """With faster-whisper's Silero VAD: windows hold speech only, so no word lies in a silence."""
    audio = load_audio(long_wav)[:40 * SAMPLE_RATE]
    windows = whisper_transformers.speech_windows(audio, vad=True)
    assert len(windows) == 2 and all(b - a <= 30 * SAMPLE_RATE for a, b in windows)
    assert windows[0][0] < SAMPLE_RATE and windows[1][1] > 38 * SAMPLE_RATE, "speech kept"
    assert all(b < 26 * SAMPLE_RATE or a > 27 * SAMPLE_RATE for a, b in windows), "the silence at 25-28 s left out"
    t = transcribe(write_wav(long_wav.with_name("40s.wav"), audio), model, language="en", progress=False)
    check_words(t)
    assert t.words and all(any(a / SAMPLE_RATE <= w.start <= w.end <= b / SAMPLE_RATE for a, b in windows)
                           for w in t.words)


def test_silence_gives_empty_transcript(model, tmp_path):
    wav = write_wav(tmp_path / "silence.wav", np.zeros(3 * SAMPLE_RATE, np.float32))
    for vad in (True, False):
        assert transcribe(wav, model, vad=vad, progress=False).phrases == []


def test_words_keep_punctuation_and_characters_whole(tokenizer):
    text = ' "Hello," she said: it\'s 4.5% — ok! 日本語です。'
    tokens = tokenizer.encode(text, add_special_tokens=False)
    words = whisper_transformers.window_words(tokenizer, tokens, "en")
    assert [w for w, _, _ in words] == ['"Hello,"', "she", "said:", "it's", "4.5%", "—", "ok!", "日本語です。"]
    assert words[0][1] == 0 and words[-1][2] == len(tokens)
    assert all(a < b for _, a, b in words) and all(w[2] == n[1] for w, n in zip(words, words[1:]))
    japanese = whisper_transformers.window_words(tokenizer, tokenizer.encode("日本語です。", add_special_tokens=False), "ja")
    assert [w for w, _, _ in japanese] == ["日本", "語", "です。"]


def test_dtw_finds_the_cheapest_path():
    """The row-at-a-time DTW against the textbook cell-by-cell recursion."""
    rng = np.random.default_rng(1)
    for n, m in [(1, 1), (1, 9), (6, 6), (5, 40), (12, 30)]:
        cost = rng.normal(size=(n, m))
        acc = np.full((n + 1, m + 1), np.inf)
        acc[0, 0] = 0
        for i in range(1, n + 1):
            for j in range(1, m + 1):
                acc[i, j] = cost[i - 1, j - 1] + min(acc[i - 1, j - 1], acc[i - 1, j], acc[i, j - 1])
        rows, cols = whisper_transformers.dtw(cost)
        assert (rows[0], cols[0], rows[-1], cols[-1]) == (0, 0, n - 1, m - 1)
        assert all(0 <= dr <= 1 and 0 <= dc <= 1 and dr + dc > 0 for dr, dc in zip(np.diff(rows), np.diff(cols)))
        assert np.isclose(cost[rows, cols].sum(), acc[n, m])


def test_default_engine(monkeypatch):
    assert default_engine("cpu") == "faster-whisper"
    monkeypatch.setattr(engine, "ctranslate2_can_use_cuda", lambda: False)
    assert default_engine("cuda") == "transformers"
    monkeypatch.setattr(engine, "ctranslate2_can_use_cuda", lambda: True)
    assert default_engine("cuda") == "faster-whisper"


def test_auto_engine_on_cpu_is_faster_whisper():
    assert load_whisper("bundled:tiny.en", engine="auto", device="cpu").engine == "faster-whisper"


def test_load_errors(tmp_path, folder):
    with pytest.raises(IgotError, match="CTranslate2 format"):
        load_whisper("bundled:base", engine="transformers", device="cpu")
    with pytest.raises(IgotError, match="Could not download the Whisper model 'tiny'"):
        load_whisper("tiny", engine="transformers", device="cpu")  # the tests run with HF_HUB_OFFLINE=1
    broken = tmp_path / "broken"
    shutil.copytree(folder, broken)
    (broken / "model.safetensors").write_bytes(b"not a model")
    with pytest.raises(IgotError, match="Could not read the Whisper model"):
        load_whisper(str(broken), engine="transformers", device="cpu")
