"""The openai-whisper engine, through its real loading code, with a small checkpoint saved here.

No openai-whisper weights can be downloaded in CI, so the test writes a checkpoint file in
the engine's own format (a randomly initialised Whisper with tiny dimensions) and runs it
through `load_whisper` and `igot run`: the text is noise, the plumbing is real.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest
import torch

from igot.asr.transcribe import load_whisper, transcribe
from igot.cli import main
from igot.errors import IgotError


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    from whisper.model import ModelDimensions, Whisper

    torch.manual_seed(0)
    dims = ModelDimensions(
        n_mels=80, n_audio_ctx=1500, n_audio_state=64, n_audio_head=2, n_audio_layer=1,
        n_vocab=51865, n_text_ctx=64, n_text_state=64, n_text_head=2, n_text_layer=1,
    )
    # n_text_ctx 64 (448 in every real one): random weights decode noise until the window's token
    # limit, n_text_ctx // 2, at every fallback temperature; 32 tokens a try keep this test quick.
    model = Whisper(dims)
    # openai-whisper leaves the decoder's positional embedding as uninitialised memory (a real
    # checkpoint overwrites it); give it values so the random model never computes NaN.
    torch.nn.init.normal_(model.decoder.positional_embedding, std=0.02)
    path = tmp_path_factory.mktemp("openai-whisper") / "tiny-random.pt"
    torch.save({"dims": asdict(dims), "model_state_dict": model.state_dict()}, path)
    return path


def test_checkpoint_loads_and_transcribes(checkpoint, devdata, wav16k):
    model = load_whisper(str(checkpoint), engine="openai-whisper", device="cpu")
    assert model.engine == "openai-whisper" and model.precision == "float32"
    wav = wav16k(devdata / "openai_whisper/jfk.flac")
    t = transcribe(wav, model, language="en", progress=False)
    assert t.info["engine"] == "openai-whisper" and t.language == "en"
    for phrase in t.phrases:
        assert phrase.words and 0 <= phrase.start <= phrase.end <= t.duration + 0.1
        assert all(w.start <= w.end for w in phrase.words)


def test_run_with_openai_engine(checkpoint, devdata, tmp_path, capsys):
    code = main(["run", str(devdata / "openai_whisper/jfk.flac"), "--engine", "openai-whisper",
                 "--model", str(checkpoint), "--language", "en", "--speakers", "1", "--out", str(tmp_path), "--quiet"])
    assert code in (0, 3)  # random weights may or may not produce words
    saved = json.loads((tmp_path / "jfk.json").read_text())
    assert saved["info"]["engine"] == "openai-whisper" and saved["info"]["model"] == str(checkpoint)


def test_broken_checkpoint_is_a_clear_error(tmp_path):
    bad = tmp_path / "broken.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(IgotError, match="Could not read the Whisper model"):
        load_whisper(str(bad), engine="openai-whisper", device="cpu")
