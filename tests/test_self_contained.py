"""A fresh clone is all the tests need: no data from beside the checkout, and the README's two
commands set themselves up in a virtual environment (an active one is used as it is)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The folder beside the checkout, named in pieces so that this file, which only looks for it,
# never holds the path it looks for: the parent's folder, a quoted folder name, the old
# devdata folder or its environment variable.
FOLDER = "sha" + "red"
READS_SHARED = re.compile(rf"\.\./{FOLDER}|[\"']{FOLDER}[\"']|{FOLDER}/devdata|IGOT_DEVDATA")


def reads_shared(text: str) -> bool:
    return bool(READS_SHARED.search(text))


def test_the_check_catches_reads_of_shared():
    assert reads_shared(f'DEVDATA = Path(os.environ.get("IGOT_DEVDATA", "../{FOLDER}/devdata"))')
    assert reads_shared(f'DEVDATA = ROOT.parent / "{FOLDER}" / "devdata"')
    assert not reads_shared('url = "https://www.youtube.com/watch?feature=shared&v=x"; shared = Models()')


def test_nothing_reads_shared_beside_the_checkout():
    files = [ROOT / "Makefile"] + [p for top in ("igot_dev", "tests", "benchmarks", "scripts", ".ci") for p in (ROOT / top).rglob("*")
                                   if p.is_file() and "__pycache__" not in p.parts and "node_modules" not in p.parts
                                   and p.suffix not in (".flac", ".pyc")]  # node_modules: npm's packages (tests/oidc), not ours
    files.remove(Path(__file__).resolve())  # its patterns are the check itself
    assert len(files) > 20
    offenders = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in files
                 for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
                 if reads_shared(line) and not line.lstrip().startswith("#")]  # comments may say why
    assert offenders == []


def test_ci_runs_the_readme_test_command_in_a_copy_without_shared():
    readme = (ROOT / "README.md").read_text()
    two_commands = readme.split("## Try it: two commands", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    assert re.search(r"^make test\b", two_commands, re.M)
    ci = (ROOT / ".ci" / "run").read_text()
    commands = [line.strip() for line in ci.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    assert commands[-1] == "make test"
    assert "mktemp -d" in ci and "git ls-files" in ci


def make_dry_run(target: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    done = subprocess.run(["make", "-n", target], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, check=True)
    return done.stdout


def test_make_runs_in_dot_venv_or_the_active_virtual_environment(tmp_path):
    assert ".venv/bin/python -m pytest -q" in make_dry_run("test")
    assert ".venv/bin/python -m igot demo" in make_dry_run("demo")
    active = make_dry_run("test", VIRTUAL_ENV=str(tmp_path / "mine"))
    assert f"{tmp_path}/mine/bin/python -m pytest -q" in active and ".venv/bin/python" not in active
