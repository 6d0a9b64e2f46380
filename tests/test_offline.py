"""Offline without waiting: with the model hub unreachable and HF_HUB_OFFLINE not set, `igot run`
asks the hub once, skips at once each default hub model that is not on this computer (one line
saying how to get it, no retry noise), uses the ones in the local cache, and refuses at once a
model the user named that it cannot have."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from igot.errors import IgotError
from igot.pipeline import RunOptions, run
from igot.runtime import hub
from igot_dev.tiny_models import save_tiny_punctuator, save_tiny_wav2vec2
from tests.webserver import serve

ROOT = Path(__file__).resolve().parents[1]
DEFAULTS = [("Punctuation", "kredor/punctuate-all", "--punctuation-model"),
            ("Summary", "google/gemma-3-270m-it", "--llm-model"),
            ("Meaning index", "intfloat/multilingual-e5-small", "--embedding-model")]  # the CPU defaults


def closed_port() -> str:
    """A hub address where nothing listens: every connection is refused, whatever the network."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def igot_offline(recording: Path, tmp_path: Path, cache: Path, *more: str) -> tuple[subprocess.CompletedProcess, dict]:
    """`igot run` as a user types it, with HF_HUB_OFFLINE unset and the hub unreachable."""
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_TOKEN")}
    env.update(HF_ENDPOINT=closed_port(), HF_HUB_CACHE=str(cache), HF_HOME=str(tmp_path / "hf-home"),
               PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]))
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "igot", "run", str(recording), "--model", "bundled:tiny.en",
                           "--language", "en", "--out", str(out), "--quiet", *more],
                          env=env, capture_output=True, text=True, timeout=900)
    saved = json.loads((out / f"{recording.stem}.json").read_text()) if done.returncode == 0 else {}
    return done, saved


@pytest.mark.slow
def test_offline_run_skips_default_hub_models_at_once(devdata, tmp_path):
    recording = devdata / "ami_meetings/trn00.flac"  # a 30 s meeting
    done, saved = igot_offline(recording, tmp_path, cache=tmp_path / "empty-cache")
    assert done.returncode == 0, done.stderr
    err = done.stderr.splitlines()
    for label, model, option in DEFAULTS:
        skipped = [line for line in err if line.startswith(f"{label}: skipped")]
        assert len(skipped) == 1, done.stderr
        assert model in skipped[0] and option in skipped[0] and "cannot be reached" in skipped[0], skipped[0]
    assert "Retry" not in done.stderr and "Traceback" not in done.stderr
    assert saved["phrases"] and saved["speakers"]
    # What the skipped stages cost: the baseline was ~40 s each (retries); now well under the
    # recording's length (benchmarks/offline_run.py prints the whole run's time).
    timings = saved["info"]["timings"]
    assert "Word timing: skipped" not in done.stderr  # on a CPU the engine's own word times: no model to fetch
    assert timings.get("alignment", 0) + timings["punctuation"] + timings["summary"] + timings["meaning"] < 0.25 * saved["duration"]


def cache_as_downloaded(cache: Path, repo_id: str, save) -> None:
    """The hub client's cache layout: models--ORG--NAME/snapshots/REVISION/ and refs/main."""
    repo = cache / f"models--{repo_id.replace('/', '--')}"
    revision = "0123456789abcdef0123456789abcdef01234567"
    save(repo / "snapshots" / revision)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision)


@pytest.mark.slow
def test_offline_run_uses_default_models_in_the_local_cache(devdata, tmp_path):
    cache = tmp_path / "hub-cache"
    cache_as_downloaded(cache, "facebook/wav2vec2-base-960h", save_tiny_wav2vec2)
    cache_as_downloaded(cache, "kredor/punctuate-all", save_tiny_punctuator)
    done, saved = igot_offline(devdata / "openai_whisper/jfk.flac", tmp_path, cache, "--word-timing", "precise")
    assert done.returncode == 0, done.stderr
    assert "Word timing: aligning words with facebook/wav2vec2-base-960h" in done.stderr
    assert "Punctuation: restoring sentences with kredor/punctuate-all" in done.stderr
    assert saved["info"]["alignment"] == "facebook/wav2vec2-base-960h"
    assert saved["info"]["punctuation"] == "kredor/punctuate-all"
    assert [line for line in done.stderr.splitlines() if line.startswith("Summary: skipped")]  # not cached
    assert "Retry" not in done.stderr


def test_a_model_the_user_named_is_an_error_at_once_offline(conversation, models, tmp_path):
    wav, _ = conversation
    options = RunOptions(model="bundled:tiny.en", language="en", align_model="someone/never-downloaded", progress=False, voices=False)
    with pytest.raises(IgotError) as caught:
        run(str(wav), tmp_path, options, models=models, log=lambda m: None)
    assert "someone/never-downloaded" in caught.value.problem and "not on this computer" in caught.value.problem
    assert "--align-model" in caught.value.fix
    assert not (tmp_path / "interview.json").exists()


def test_the_hub_is_asked_quickly(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", closed_port())
    assert not hub.reachable()
    with serve(tmp_path) as url:  # any answer, even 404, is a hub that can be reached
        monkeypatch.setenv("HF_ENDPOINT", url)
        assert hub.reachable()
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the user's word counts, whatever the network
        assert not hub.reachable()
        assert hub.Hub().unreachable() == "HF_HUB_OFFLINE is set"
