"""The Colab notebook, run top to bottom as a user would, with only `google.colab` replaced
(tests/fake_colab) and the small offline models; `igot` itself runs for real."""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import jupytext
import nbformat
import pytest

from tests.notebook_forms import fill_form

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "iGot.ipynb"
TWIN = NOTEBOOK.with_suffix(".py")
FAKE_COLAB = Path(__file__).resolve().parent / "fake_colab"


def test_notebook_and_its_readable_twin_agree():
    ipynb, script = jupytext.read(NOTEBOOK), jupytext.read(TWIN)
    assert [(c.cell_type, c.source) for c in ipynb.cells] == [(c.cell_type, c.source) for c in script.cells]
    assert [c.metadata.get("cellView") for c in ipynb.cells] == [c.metadata.get("cellView") for c in script.cells]


def test_cells_are_forms_in_the_promised_order():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    titles = [re.search(r"#@title (.*?)(\{|$)", c.source, re.M).group(1).strip() for c in nb.cells if c.cell_type == "code"]
    assert [t.split(".")[0] for t in titles] == ["1", "2", "3", "4", "5", "6", "7", "8"]
    assert all(c.metadata.get("cellView") == "form" for c in nb.cells if c.cell_type == "code")
    # every code cell stays a few statements: the logic lives in igot, where it is tested
    for c in nb.cells:
        assert c.cell_type != "code" or len(ast.parse(c.source).body) <= 10, c.source


def test_summary_prompt_in_the_notebook_is_the_default():
    """The prompt sits in the last cell's code for the user to edit; it starts as iGot's own."""
    from igot.summarize import DEFAULT_PROMPT

    nb = nbformat.read(NOTEBOOK, as_version=4)
    cell = next(c for c in nb.cells if "PROMPT = " in c.source)
    prompt = next(n.value for n in ast.parse(cell.source).body if isinstance(n, ast.Assign) and n.targets[0].id == "PROMPT")
    assert ast.literal_eval(prompt) == DEFAULT_PROMPT and cell.metadata.get("cellView") == "form"


def test_language_choices_are_whisper_languages():
    from faster_whisper.tokenizer import _LANGUAGE_CODES

    nb = nbformat.read(NOTEBOOK, as_version=4)
    choices = re.search(r'^language = .*#@param (\[.*?\])', "\n".join(c.source for c in nb.cells), re.M).group(1)
    codes = json.loads(choices)
    assert codes[0] == "auto" and "pt" in codes and "en" in codes
    assert set(codes[1:]) <= set(_LANGUAGE_CODES)


def test_notebook_runs_top_to_bottom(devdata, models, tmp_path, monkeypatch):
    from nbclient import NotebookClient

    from igot.library import load_interviews, search
    from igot.pipeline import RunOptions, run

    drive = tmp_path / "my-drive"
    (drive / "Interviews").mkdir(parents=True)
    shutil.copy(devdata / "pyaudioanalysis/diarizationExample.flac", drive / "Interviews/radio call.flac")
    monkeypatch.setenv("PYTHONPATH", f"{FAKE_COLAB}:{Path(__file__).resolve().parents[1]}")
    monkeypatch.setenv("FAKE_COLAB_DRIVE", str(drive))
    monkeypatch.setenv("FAKE_COLAB_DOWNLOADS", str(tmp_path / "downloads"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    nb = nbformat.read(NOTEBOOK, as_version=4)
    fill_form(nb, drive_path="Interviews/radio call.flac", interview_name="Radio call", language="en",
              whisper_model="bundled:tiny.en", number_of_speakers=4, speaker_names="Host, Brian, Sandra, Expert",
              drive_folder="")  # no Google server here: the Drive upload is tested in test_gdoc.py
    work = tmp_path / "session"
    work.mkdir()
    # An interview made earlier, for the last cell to search along with the notebook's own.
    run(str(devdata / "picovoice_falcon/test.flac"), work / "igot-output",
        RunOptions(name="Falcon test call", model="bundled:tiny.en", language="en", align=False, punctuate=False,
                   summary=False, progress=False), models=models, log=lambda m: None)
    fill_form(nb, search_for="thank")
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}}).execute()

    outputs = ["".join(o.get("text", "") for o in c.get("outputs", [])) for c in nb.cells if c.cell_type == "code"]
    assert "All libraries installed!" in outputs[0]
    assert "No HF_TOKEN secret" in outputs[1]
    assert "radio call.flac" in outputs[2]
    assert re.search(r"Done: 0:41 of audio, 4 speakers, \d+ phrases .*real-time factor \d", outputs[4])
    # word timing and punctuation are on by default; offline their models are skipped with a word
    assert "Word timing: skipped, the alignment model facebook/wav2vec2-base-960h is not on this computer" in outputs[4]
    audio_players = [o for o in nb.cells[6].outputs if "text/html" in o.get("data", {}) and "<audio" in o["data"]["text/html"]]
    assert len(audio_players) == 4  # one clip per speaker, to know who is who
    assert "Speakers: 1 = Host, 2 = Brian, 3 = Sandra, 4 = Expert" in outputs[5]
    # offline, the (gated) default summary model cannot be had: said in one line, files still made
    assert "⚠ No summary:" in outputs[6]

    # The search cell: hits from both interviews, each with its link.
    hits = search(load_interviews(work / "igot-output"), "thank")
    assert {h.interview for h in hits} == {"Radio call", "Falcon test call"}
    assert outputs[7].startswith(f"{len(hits)} phrases in 2 of 2 interviews:")
    for h in hits:
        assert f"• {h.interview} · " in outputs[7] and f"{h.text}\n  {h.video}\n" in outputs[7]

    saved = json.loads((work / "igot-output" / "radio-call.json").read_text())
    assert [s["name"] for s in saved["speakers"]] == ["Host", "Brian", "Sandra", "Expert"]
    assert sorted(p.name for p in (tmp_path / "downloads").iterdir()) == ["radio-call.html", "radio-call.json", "radio-call.srt"]


def test_missing_interview_is_one_clear_message(tmp_path, monkeypatch):
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    monkeypatch.setenv("PYTHONPATH", f"{FAKE_COLAB}:{Path(__file__).resolve().parents[1]}")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    with pytest.raises(CellExecutionError):
        NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    err = "".join(o.get("text", "") for o in nb.cells[3].outputs if o.get("name") == "stderr")
    assert "No interview chosen" in err and "Traceback" not in err
