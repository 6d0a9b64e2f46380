"""Speaker detection "auto" never fails for NeMo's sake: on a GPU, a NeMo that does not import
(a module of its own missing, a broken build) or a Sortformer that cannot be loaded hands over to
senko with one line saying why. Only choosing "nemo" by name makes it an error, and in Colab its
advice never tells the user to pip install NeMo (that would change Colab's own libraries).

A broken NeMo is a real `nemo` package put first on sys.path in a subprocess; "on a GPU" is the
device the pipeline passes to pick_diarizer."""

from __future__ import annotations

import os
from dataclasses import replace
import subprocess
import sys
from pathlib import Path

import pytest

from igot.pipeline import RunContext, RunOptions, make_plan
from igot.pipeline.stages import diarize_with

ROOT = Path(__file__).resolve().parents[1]
FAKE_COLAB = ROOT / "tests" / "fake_colab"
BROKEN_NEMO = {
    "a module it needs is missing": ("import onnx_not_installed_here\n", "No module named 'onnx_not_installed_here'"),
    "a broken build": ("raise RuntimeError('libcudart.so.13: cannot open shared object file')\n", "libcudart.so.13"),
}
CHOOSE = """
import sys
from igot.errors import IgotError
from igot.pipeline import RunOptions, pick_diarizer
lines = []
try:
    print("chosen:", pick_diarizer(RunOptions(diarizer=sys.argv[1]), "cuda", lines.append))
except IgotError as exc:
    print("error:", exc.problem)
    print("fix:", exc.fix)
for line in lines:
    print("log:", line)
"""


def choose_on_a_gpu(tmp_path: Path, nemo_init: str, diarizer: str, in_colab: bool = False) -> list[str]:
    (tmp_path / "nemo").mkdir(exist_ok=True)
    (tmp_path / "nemo" / "__init__.py").write_text(nemo_init)
    path = [str(tmp_path), *([str(FAKE_COLAB)] if in_colab else []), str(ROOT)]
    done = subprocess.run([sys.executable, "-c", CHOOSE, diarizer], env={**os.environ, "PYTHONPATH": os.pathsep.join(path)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.splitlines()


@pytest.mark.parametrize("case", list(BROKEN_NEMO))
def test_auto_on_a_gpu_uses_senko_when_nemo_does_not_import(tmp_path, case):
    nemo_init, reason = BROKEN_NEMO[case]
    out = choose_on_a_gpu(tmp_path, nemo_init, "auto")
    assert out[0] == "chosen: senko"
    logs = [line for line in out if line.startswith("log:")]
    assert len(logs) == 1 and "using senko" in logs[0] and "NeMo" in logs[0] and reason in logs[0], out


def test_nemo_by_name_is_an_error_whose_colab_advice_installs_nothing(tmp_path):
    nemo_init, reason = BROKEN_NEMO["a module it needs is missing"]
    out = choose_on_a_gpu(tmp_path, nemo_init, "nemo", in_colab=True)
    error, fix = out[0], out[1]
    assert error.startswith("error:") and "NeMo" in error and reason in error
    assert "speaker detection to 'auto'" in fix and "pip install" not in fix.replace("do not pip install", "")
    # outside Colab, installing the extra is the fix
    out = choose_on_a_gpu(tmp_path, nemo_init, "nemo")
    assert "pip install 'igot-interviews[nemo]'" in out[1]


def test_auto_uses_senko_when_the_sortformer_cannot_be_loaded(models, devdata, wav16k, tmp_path):
    """NeMo imports (the real one), but the model cannot be had (no connection to the hub, a bad
    file): "auto" says so in one line and the speakers come from senko; "nemo" stops with the error."""
    from igot.errors import IgotError
    from igot.runtime.hub import Hub

    wav = wav16k(devdata / "picovoice_falcon/test.flac")
    missing = str(tmp_path / "not-downloaded.nemo")
    lines: list[str] = []

    def on_cpu(options: RunOptions) -> RunContext:
        # the plan of a CPU run; the options still name the missing model, as a user's would
        plan = make_plan(replace(options, diarizer_model=None), gpus=[])
        return RunContext(options, plan, models, Hub(), lines.append, tmp_path)

    engine, turns = diarize_with(on_cpu(RunOptions(diarizer="auto", diarizer_model=missing, progress=False)), "nemo", wav)
    assert engine == "senko" and turns and len({t.speaker for t in turns}) >= 1
    assert len(lines) == 1 and lines[0].startswith("Speakers: using senko instead:") and "not-downloaded.nemo" in lines[0]
    with pytest.raises(IgotError, match="could not be loaded"):
        diarize_with(on_cpu(RunOptions(diarizer="nemo", diarizer_model=missing, progress=False)), "nemo", wav)
