"""The Colab notebook that lends a session to a team's iGot (notebooks/iGot_worker.ipynb): its
readable twin agrees, its cells are forms of a few statements, the command it runs is one `igot
worker` accepts, and, run in a kernel as a user would (google.colab faked, tests/fake_colab), it
makes a job of a real team server's queue with the small models and stops cleanly when the cell
is interrupted."""

from __future__ import annotations

import ast
import os
import re
import time
from pathlib import Path

import jupytext
import nbformat
import pytest

from tests.notebook_forms import fill_form

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "iGot_worker.ipynb"
FAKE_COLAB = Path(__file__).resolve().parent / "fake_colab"


def test_worker_notebook_and_its_readable_twin_agree():
    ipynb, script = jupytext.read(NOTEBOOK), jupytext.read(NOTEBOOK.with_suffix(".py"))
    assert [(c.cell_type, c.source) for c in ipynb.cells] == [(c.cell_type, c.source) for c in script.cells]
    assert [c.metadata.get("cellView") for c in ipynb.cells] == [c.metadata.get("cellView") for c in script.cells]


def test_worker_notebook_is_two_forms_and_installs_as_the_main_one():
    nb = nbformat.read(NOTEBOOK, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    titles = [re.search(r"#@title (.*?)(\{|$)", c.source, re.M).group(1).strip() for c in code]
    assert [t.split(".")[0] for t in titles] == ["1", "2"] and titles[1].startswith("2. Work for my team's iGot")
    assert all(c.metadata.get("cellView") == "form" and len(ast.parse(c.source).body) <= 10 for c in code)
    main = nbformat.read(ROOT / "notebooks" / "iGot.ipynb", as_version=4)
    install = lambda source: [line for line in source.splitlines() if not line.startswith("#@")]  # noqa: E731
    assert install(code[0].source) == install(next(c for c in main.cells if c.cell_type == "code").source)
    assert re.search(r'^server_address = ""  #@param \{type:"string"\}$', code[1].source, re.M)
    assert re.search(r'^worker_token = ""  #@param \{type:"string"\}$', code[1].source, re.M)
    assert "igot.colab.work_for_team(server_address, worker_token)" in code[1].source


def test_the_command_it_runs_is_igot_workers():
    import argparse

    from igot.colab import worker_command
    from igot.worker import add_worker_parser

    command = worker_command(" https://igot.example.com ", "TOKEN", "cuda")
    assert command[1:3] == ["-m", "igot"]
    parser = argparse.ArgumentParser()
    add_worker_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(command[3:])
    assert (args.command, args.server, args.token, args.device) == ("worker", "https://igot.example.com", "TOKEN", "cuda")


def test_no_token_is_one_clear_message(monkeypatch):
    from igot.colab import worker_token
    from igot.errors import IgotError

    monkeypatch.delenv("IGOT_WORKER_TOKEN", raising=False)
    with pytest.raises(IgotError, match="No worker token") as said:
        worker_token("  ")
    assert "IGOT_WORKER_TOKEN" in said.value.fix
    monkeypatch.setenv("IGOT_WORKER_TOKEN", "from-the-secret")
    assert worker_token("") == "from-the-secret" and worker_token(" typed ") == "typed"


@pytest.mark.slow  # a notebook kernel and a real igot worker making an interview with tiny.en
def test_the_notebook_works_for_a_real_team_server_until_stopped(devdata, tmp_path, monkeypatch):
    from jupyter_client import KernelManager

    from igot.team import jobs
    from igot.team.db import team_db
    from tests.test_team_workers import interviews, queue_uploads, start, wait_for

    folder = tmp_path / "library"
    folder.mkdir()
    running = start(folder, 0, lease=10.0)
    db = team_db(folder)
    token = jobs.add_worker(db, "colab-ana")
    monkeypatch.setenv("PYTHONPATH", f"{FAKE_COLAB}{os.pathsep}{ROOT}")
    monkeypatch.setenv("FAKE_COLAB_SECRETS", f'{{"IGOT_WORKER_TOKEN": "{token}"}}')  # the token kept as a secret
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    work = tmp_path / "session"
    work.mkdir()
    nb = nbformat.read(NOTEBOOK, as_version=4)
    fill_form(nb, server_address=running.url)
    install, serve = [c for c in nb.cells if c.cell_type == "code"]
    km = KernelManager(kernel_name="python3")
    km.start_kernel(cwd=str(work), env=dict(os.environ))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        installed = kc.execute_interactive(install.source, timeout=120, output_hook=lambda m: None)
        assert installed["content"]["status"] == "ok", installed
        asked = kc.execute(serve.source)  # the cell runs; the test goes on as the user does
        queue_uploads(running, {"ana.flac": (devdata / "openai_whisper/jfk.flac").read_bytes()})
        [job] = wait_for(lambda: (found := jobs.listing(db)) and found[0].state in jobs.ENDED and found, 120,
                         "the job made by the notebook's worker")
        time.sleep(1)  # its "done" line printed
        km.interrupt_kernel()  # ■ on the running cell
        texts, failed = [], []
        while True:
            message = kc.get_iopub_msg(timeout=60)
            if message["parent_header"].get("msg_id") != asked:
                continue
            kind = message["msg_type"]
            if kind == "stream":
                texts.append(message["content"]["text"])
            elif kind == "error":
                failed.append(message["content"]["ename"])
            elif kind == "status" and message["content"]["execution_state"] == "idle":
                break
        said = "".join(texts)
        assert not failed, f"{failed}\n{said}"
        assert (job.state, job.worker_name) == ("done", "colab-ana"), job
        [made] = interviews(folder)
        assert "ask not what your country" in " ".join(p.text for p in made.phrases).lower()
        assert f"Working for {running.url} on the CPU" in said and "To stop: ■" in said
        assert "Took ana.flac." in said and "ana.flac: done, saved as" in said
        assert said.rstrip().endswith("Stopped: this session no longer works for the team.")
        assert "Traceback" not in said and token not in said
        assert jobs.workers(db)[0].device == "cpu"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        running.stop()
