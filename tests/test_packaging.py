"""What the Colab notebook installs must go on top of Colab's runtime without downgrades or a
restart, and be what CI tested."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Google's `pip freeze` of a fresh Colab GPU runtime (tests/data/colab/README.md)
COLAB_LIST = ROOT / "tests" / "data" / "colab" / "pip-freeze.gpu.txt"
COLAB_PROVIDES = {"torch", "numpy", "transformers", "google-auth", "google-api-python-client", "google-auth-oauthlib",
                  "scipy", "pandas", "ipython", "ipykernel", "requests", "tqdm", "sentencepiece"}


def requirements(extra: str) -> list[str]:
    """An extra's requirements, with igot[...] self-references expanded."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    out = []
    for req in extras[extra]:
        own = re.fullmatch(r"igot-interviews\[(.*)\]", req)
        if own:
            for name in own.group(1).split(","):
                out += requirements(name.strip())
        else:
            out.append(req)
    return out


def name_of(req: str) -> str:
    return re.split(r"[<>=!~\[; ]", req, 1)[0].lower()


def test_colab_install_pins_nothing_colab_already_has():
    for req in requirements("colab"):
        if name_of(req) in COLAB_PROVIDES:
            assert not re.search(r"==|<", req), f"{req} could downgrade Colab's own copy"
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not [r for r in core if name_of(r) in {"torch", "numpy", "transformers"} and re.search(r"==|<", r)]


def test_colab_pins_are_the_versions_tested_here():
    for req in requirements("colab"):
        if "==" in req:
            name, pinned = req.split("==")
            assert version(name) == pinned, f"CI tested {name} {version(name)}, the notebook installs {pinned}"


def test_notebook_installs_the_colab_extra_of_our_distribution():
    """The notebook, pyproject and the install hints in errors name one distribution, ours."""
    from igot.errors import DISTRIBUTION

    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["name"] == DISTRIBUTION != "igot"
    notebook = (ROOT / "notebooks" / "iGot.py").read_text()
    assert re.search(rf'IGOT_PACKAGE = "{DISTRIBUTION}\[colab\] @ git\+https://', notebook)


def test_colab_nemo_install_matches_the_nemo_extra():
    """The notebook installs NeMo with --no-deps (so nothing Colab has is touched); the NeMo it
    names is the one the `nemo` extra pins and CI tests."""
    from igot.colab import NEMO_NO_DEPS

    pinned = dict(r.split("==") for r in NEMO_NO_DEPS)
    assert [r for r in requirements("nemo")] == [f"nemo_toolkit[asr]=={pinned['nemo_toolkit']}"]
    assert not set(n.lower() for n in pinned) & {"torch", "numpy", "transformers", "packaging", "fsspec"}
    assert version("nemo_toolkit") == pinned["nemo_toolkit"]


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def colab_versions() -> dict[str, str]:
    pins = (re.fullmatch(r"([A-Za-z0-9_.\-]+)==(\S+)", line.strip()) for line in COLAB_LIST.read_text().splitlines())
    return {canonical(m.group(1)): m.group(2) for m in pins if m}


def test_every_pin_the_notebook_installs_is_colabs_own_version():
    """A package Colab already has must be asked for at Colab's version, or pip changes it in a
    running session: the colab extra (cell 1) and the NeMo list (installed with --no-deps)."""
    from packaging.requirements import Requirement

    from igot.colab import NEMO_NO_DEPS

    colab = colab_versions()
    assert colab["torch"].startswith("2.11.0") and colab["omegaconf"] == "2.3.1" and len(colab) > 600
    for text in requirements("colab") + NEMO_NO_DEPS:
        req = Requirement(text)
        have = colab.get(canonical(req.name))
        if have is not None:
            assert req.specifier.contains(have.split("+")[0], prereleases=True), \
                f"the notebook installs {text}, Colab has {req.name} {have}: pip would change it"
            assert "==" not in str(req.specifier) or str(req.specifier) == f"=={have}", f"{text}: Colab has {have}"
