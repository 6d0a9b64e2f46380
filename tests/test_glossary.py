"""The library's glossary (issue 39, point 5): the terms as typed or read from a file, checked; the
words of a transcript close to a term, offered in Review; the file kept by the library store, its
changes versioned, through the workspace's API and its page; and a run that gives Whisper the terms,
so that it writes them as spelled."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from igot.asr import glossary
from igot.asr.transcribe import transcribe
from igot.cli import build_parser
from igot.pipeline.flags import library_glossary
from igot.errors import IgotError
from igot.outputs.store import Library, LibraryError, Stale
from igot.pipeline import Models, RunContext, RunOptions, make_plan
from igot.pipeline.stages import transcription_key
from igot.runtime.hub import Hub
from igot.workspace import server
from tests.test_openai_whisper import checkpoint  # noqa: F401 (a fixture: a tiny openai-whisper checkpoint)
from tests.test_transformers_whisper import folder as tiny_transformers, tokenizer  # noqa: F401 (fixtures)
from tests.test_workspace import client, folder  # noqa: F401 (fixtures: a library and the workspace's app)
from tests.test_workspace_attacks import browser  # noqa: F401 (a fixture: Chromium for one test)
from tests.test_workspace_browser import shot, wait_for

ROOT = Path(__file__).resolve().parents[1]


# --- the terms -------------------------------------------------------------------------------------
def test_terms_are_read_from_commas_and_lines_trimmed_and_kept_once_in_their_first_spelling():
    assert glossary.checked("Pix, Nubank\n  nubank ,, Ana\r\nMercado\tPago\n", "--glossary") == \
        ["Pix", "Nubank", "Ana", "Mercado Pago"]
    # a list's items are split too: the file keeps one term a line, and reads back the same
    assert glossary.checked(["Pix, Nubank", "PIX", "  "], "as saved") == ["Pix", "Nubank"]
    assert glossary.checked("", "--glossary") == []
    assert glossary.from_bytes(glossary.file_text(["Itaú", "São Paulo"]).encode(), "file") == ["Itaú", "São Paulo"]
    assert glossary.from_bytes("\ufeffPix\n".encode(), "file") == ["Pix"]  # a BOM, as Notepad writes


@pytest.mark.parametrize("terms,words", [
    ("Pix, Nu\x1b[2Jbank", ["--glossary", "control character", "\\x1b", "without it"]),
    ("Ana\u202eanA", ["--glossary", "control character", "without it"]),  # a bidi override
    ("Pix, <|endoftext|>", ["--glossary", "<|", "command"]),
    ("x" * 61, ["--glossary", "61 characters", "at most 60"]),
    (", ".join(f"term{i}" for i in range(201)), ["--glossary", "201 terms", "200"]),
    ([1, 2], ["--glossary", "list of words"]),
])
def test_a_term_iGot_cannot_keep_is_one_line_naming_the_input_and_the_fix(terms, words):
    with pytest.raises(IgotError) as caught:
        glossary.checked(terms, "--glossary")
    line = str(caught.value)
    assert "\n" not in line and "\x1b" not in line
    for word in words:
        assert word.lower() in line.lower(), (word, line)


def test_a_glossary_file_is_read_as_written_by_a_stranger(tmp_path):
    for data, words in ((b"Pix\n\xff\xfe", ["not UTF-8", "byte 4", "UTF-8"]),
                        (b"Pix\n" * (glossary.MAX_FILE_BYTES // 4 + 1), ["too large", "one per line"])):
        path = tmp_path / "terms.txt"
        path.write_bytes(data)
        with pytest.raises(IgotError) as caught:
            glossary.read_file(path)
        assert str(path) in str(caught.value) and all(w in str(caught.value) for w in words)
    with pytest.raises(IgotError, match="cannot be read"):
        glossary.read_file(tmp_path / "missing.txt")


def test_whisper_is_given_the_first_terms_that_fit_its_short_prompt():
    assert glossary.hotwords(["Pix", "Nubank"]) == "Pix, Nubank"
    assert glossary.hotwords([]) is None
    many = [f"Name{i:03d}" for i in range(100)]
    given = glossary.given_to_whisper(many)
    assert given == many[:len(given)] and 0 < len(given) < len(many)
    assert len(glossary.hotwords(many)) <= glossary.HOTWORDS_CHARS


# --- words close to a term -------------------------------------------------------------------------
TERMS = ["Pix", "Nubank", "Ana", "Itaú", "iFood", "Inter", "Mercado Pago", "McDonald's", "fellow-Americans"]


@pytest.mark.parametrize("said,offered", [
    ("new bank", "Nubank"), ("Nu bank", "Nubank"), ("no bank", "Nubank"), ("Newbank's", "Nubank"),
    ("pics", "Pix"), ("picks", "Pix"),  # sound the same
    ("Itau", "Itaú"), ("I food", "iFood"), ("Anna", "Ana"), ("mercado pagu", "Mercado Pago"),
    ("fellow Americans", "fellow-Americans"),
    # the term itself, whatever its case and the punctuation or possessive after it: not a miss
    ("Pix", None), ("pix", None), ("NUBANK,", None), ("Nubank's", None), ("McDonald's", None), ("Ana's", None),
    # real words one letter off a short term are not offered: too many would be
    ("six", None), ("fix", None), ("and", None), ("an", None), ("any", None), ("Intel", None), ("in them", None),
    ("bank", None), ("pixel", None), ("Americans", None), ("", None),
])
def test_a_word_that_sounds_close_to_a_term_is_offered_it(said, offered):
    assert glossary.near_miss(said, TERMS) == offered


def test_a_phrases_words_close_to_terms_are_found_with_where_they_are():
    words = "Then I paid with pics at the new bank, said Anna; Nubank's app and Pix work.".split()
    misses = glossary.near_misses(words, TERMS)
    assert misses == [(4, 4, "Pix"), (7, 8, "Nubank"), (10, 10, "Ana")]
    assert [" ".join(words[a:b + 1]) for a, b, _ in misses] == ["pics", "new bank,", "Anna;"]
    assert glossary.near_misses(words, []) == [] and glossary.near_misses([], TERMS) == []


# --- the library's file ----------------------------------------------------------------------------
def test_the_library_keeps_its_glossary_versioned_and_refuses_a_stale_write(tmp_path):
    lib = Library(tmp_path)
    empty = lib.kept_glossary()
    assert (empty.terms, empty.problem) == ([], None) and lib.glossary() == []
    saved = lib.set_glossary(["Pix", "Nubank", "pix"], empty.version)
    assert saved.terms == ["Pix", "Nubank"] and saved.version != empty.version
    assert (tmp_path / glossary.FILE).read_text(encoding="utf-8") == "Pix\nNubank\n"  # a person can edit it too
    with pytest.raises(Stale, match="changed since"):
        lib.set_glossary(["Ana"], empty.version)  # another tab's older version: refused, nothing lost
    assert lib.glossary() == ["Pix", "Nubank"]
    # a run's --glossary adds its terms after those kept, which keep their spelling
    assert lib.add_to_glossary(["NUBANK", "Ana"]) == ["Pix", "Nubank", "Ana"]
    with pytest.raises(LibraryError, match="version"):
        lib.set_glossary(["Ana"], None)
    with pytest.raises(LibraryError, match="list of terms"):
        lib.set_glossary("Ana", lib.kept_glossary().version)
    lib.set_glossary([], lib.kept_glossary().version)  # no terms: no file
    assert not (tmp_path / glossary.FILE).exists() and lib.glossary() == []


def test_a_glossary_file_iGot_cannot_read_says_why_and_a_save_replaces_it(tmp_path):
    lib = Library(tmp_path)
    (tmp_path / glossary.FILE).write_bytes(b"Pix\n\xc3(\n")
    kept = lib.kept_glossary()
    assert kept.terms == [] and "not UTF-8" in kept.problem
    with pytest.raises(LibraryError) as caught:
        lib.glossary()
    assert "not UTF-8" in str(caught.value) and "Glossary page" in str(caught.value)
    with pytest.raises(LibraryError, match="Nothing was added"):
        lib.add_to_glossary(["Ana"])  # the file's terms are not lost to a merge
    assert lib.set_glossary(["Ana"], kept.version).terms == ["Ana"]
    secret = tmp_path / "secret.txt"
    secret.write_text("not a glossary\n")
    (tmp_path / glossary.FILE).unlink()
    (tmp_path / glossary.FILE).symlink_to(secret)  # a link to another file is not read
    assert lib.kept_glossary().terms == [] and "link" in lib.kept_glossary().problem


# --- the workspace ---------------------------------------------------------------------------------
def test_the_workspace_reads_and_saves_the_glossary_and_refuses_a_stale_or_bad_one(client, folder):  # noqa: F811
    first = client.get("/api/glossary").json()
    assert first == {"terms": [], "version": first["version"], "problem": None, "given": 0}
    r = client.put("/api/glossary", json={"terms": ["Pix", " Nubank ", "pix"], "version": first["version"]})
    assert r.status_code == 200 and r.json()["terms"] == ["Pix", "Nubank"] and r.json()["given"] == 2
    assert (folder / glossary.FILE).read_text(encoding="utf-8") == "Pix\nNubank\n"
    stale = client.put("/api/glossary", json={"terms": ["Ana"], "version": first["version"]})
    assert stale.status_code == 409 and "\n" not in stale.json()["error"] and "Reload" in stale.json()["error"]
    version = r.json()["version"]
    for body, words in (({"terms": ["Nu\x07bank"], "version": version}, "control character"),
                        ({"terms": "Ana", "version": version}, "list of terms"),
                        ({"terms": [["Ana"]], "version": version}, "list of words"),
                        ({"terms": ["Ana"]}, "version")):
        bad = client.put("/api/glossary", json=body)
        assert bad.status_code == 400 and words in bad.json()["error"] and "\n" not in bad.json()["error"]
    assert (folder / glossary.FILE).read_text(encoding="utf-8") == "Pix\nNubank\n"
    refused = client.put("/api/glossary", json={"terms": [], "version": version}, headers={"X-iGot-Token": "wrong"})
    assert refused.status_code == 403 and (folder / glossary.FILE).exists()
    assert client.get("/api/glossary").json()["terms"] == ["Pix", "Nubank"]
    assert client.get("/static/glossary.js").status_code == 200


# --- a run -----------------------------------------------------------------------------------------
def test_a_run_uses_the_glossary_given_else_the_librarys_and_redoes_the_transcription_when_it_changes(tmp_path):
    lib = Library(tmp_path)
    lib.set_glossary(["Pix", "Nubank"], lib.kept_glossary().version)
    lines: list[str] = []

    def plan(options: RunOptions):
        return make_plan(options, lines.append, gpus=[], library=tmp_path)

    assert plan(RunOptions()).glossary == ("Pix", "Nubank")
    assert plan(RunOptions(glossary="Ana, Bruno")).glossary == ("Ana", "Bruno")
    assert make_plan(RunOptions(), gpus=[]).glossary == ()

    def key(options: RunOptions) -> dict:
        return transcription_key(RunContext(options, plan(options), Models(), Hub(), lines.append, tmp_path))

    assert key(RunOptions())["glossary"] == "Pix, Nubank"
    assert "glossary" not in key(RunOptions(glossary=[]))  # without one, the transcriptions kept before stay good
    (tmp_path / glossary.FILE).write_bytes(b"\xff")
    assert plan(RunOptions()).glossary == () and any(line.startswith("Glossary: not given to Whisper") for line in lines)
    with pytest.raises(IgotError, match="control character"):
        plan(RunOptions(glossary=["Pix\x00"]))


def test_igot_run_glossary_adds_its_terms_or_a_files_to_the_librarys(tmp_path, capsys):
    out = tmp_path / "out"
    assert library_glossary(out, "Pix, Nubank") == ["Pix", "Nubank"]
    terms = tmp_path / "terms.txt"
    terms.write_text("Ana\nnubank, Itaú\n", encoding="utf-8")
    assert library_glossary(out, str(terms)) == ["Pix", "Nubank", "Ana", "Itaú"]
    assert (out / glossary.FILE).read_text(encoding="utf-8") == "Pix\nNubank\nAna\nItaú\n"
    with pytest.raises(IgotError, match="No glossary file"):
        library_glossary(out, str(tmp_path / "typo.txt"))
    assert library_glossary(out, "Bruno") == ["Pix", "Nubank", "Ana", "Itaú", "Bruno"]  # one term, no such file
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--help"])
    assert "added to the output folder's glossary" in " ".join(capsys.readouterr().out.split())


JFK = "openai_whisper/jfk.flac"  # "And so my fellow Americans, ask not what your country can do for you …"
KNOT = "Ask Knot"  # a product's name, as a researcher would spell it, said the way Kennedy says "ask not"


def said(t) -> list[str]:
    return [w.text.strip(",.") for w in t.words]


@pytest.mark.slow
def test_whisper_writes_a_glossary_term_as_spelled_there(devdata, wav16k, tiny_en):
    """tiny.en writes "ask not"; told the glossary's "Ask Knot", it writes "Knot", in its one-by-one
    decoding (batch_size 1) and its batched one (the default, a CPU's and a GPU's). On older CPU kernels too:
    test_the_spelling_holds_on_older_cpu_kernels. Where Whisper still writes "ask not", Review
    offers the term there."""
    wav = wav16k(devdata / JFK)
    plain = transcribe(wav, tiny_en, language="en", progress=False)
    assert "not" in said(plain) and "Knot" not in said(plain) and "glossary" not in plain.info
    assert [(said(plain)[a:b + 1], term) for a, b, term in glossary.near_misses([w.text for w in plain.words], [KNOT])] \
        == [(["ask", "not"], KNOT)]
    for model in (replace(tiny_en, batch_size=1), tiny_en):
        told = transcribe(wav, model, language="en", progress=False, glossary=[KNOT])
        assert told.info["glossary"] == [KNOT]
        assert "Knot" in said(told) and "not" not in said(told), model.batch_size
        assert said(told)[-3:] == said(plain)[-3:] == ["for", "your", "country"]  # the rest as it was said
        assert glossary.near_misses([w.text for w in told.words], [KNOT]) == []


@pytest.mark.slow
def test_the_spelling_holds_on_older_cpu_kernels(devdata, wav16k):
    """The same, in a process whose CTranslate2 and oneDNN use AVX alone (the kernels of an older
    CPU): the spelling follows the glossary, not an accident of one CPU's arithmetic."""
    wav = wav16k(devdata / JFK)
    code = ("import sys; from dataclasses import replace; from igot.asr.transcribe import load_whisper, transcribe; "
            "wm = load_whisper('bundled:tiny.en', 'faster-whisper', 'cpu'); "
            "[print(' '.join(w.text for w in transcribe(sys.argv[1], m, language='en', progress=False, "
            f"glossary=[{KNOT!r}]).words)) for m in (replace(wm, batch_size=1), wm)]")
    env = {**os.environ, "CT2_FORCE_CPU_ISA": "AVX", "ONEDNN_MAX_CPU_ISA": "AVX", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code, str(wav)], capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all("Knot" in line.replace(",", " ").split() for line in lines), lines


@pytest.mark.slow
def test_the_other_engines_are_given_the_glossary_as_their_prompt(devdata, wav16k, tiny_transformers, checkpoint):  # noqa: F811
    """transformers (prompt_ids) and openai-whisper (initial_prompt, carried to every window), on
    small random models: the text is noise, the plumbing is real. The prompt is not itself written
    as the transcript; transformers' random model decodes otherwise with it (openai-whisper's writes
    one token over and over, whatever it is given)."""
    from igot.asr.transcribe import load_whisper

    wav = wav16k(devdata / JFK)
    for model in (load_whisper(str(tiny_transformers), engine="transformers", device="cpu"),
                  load_whisper(str(checkpoint), engine="openai-whisper", device="cpu")):
        told = transcribe(wav, model, language="en", progress=False, glossary=["Pix", "Nubank"])
        assert told.info["glossary"] == ["Pix", "Nubank"], model.engine
        assert said(told)[:2] != ["Pix", "Nubank"], model.engine
        if model.engine == "transformers":
            assert said(told) != said(transcribe(wav, model, language="en", progress=False))


@pytest.mark.slow
def test_igot_run_with_a_glossary_keeps_it_and_the_next_run_uses_it(devdata, tmp_path, capsys):
    from igot.cli import main
    from igot.transcript import Transcript

    out = tmp_path / "out"
    light = ["--model", "bundled:tiny.en", "--language", "en", "--speakers", "1", "--no-align", "--no-punctuate",
             "--no-summary", "--no-meaning", "--no-voices", "--quiet", "--out", str(out)]
    assert main(["run", str(devdata / JFK), *light, "--glossary", KNOT]) == 0
    assert "given the glossary (1 term)" in capsys.readouterr().err
    t = Transcript.load(out / "jfk.json")
    assert t.info["glossary"] == [KNOT] and "Knot" in " ".join(p.text for p in t.phrases)
    assert "Knot" in (out / "jfk.html").read_text(encoding="utf-8")
    assert (out / glossary.FILE).read_text(encoding="utf-8") == f"{KNOT}\n"
    assert main(["run", str(devdata / JFK), *light]) == 0  # the library's glossary: its transcription is reused
    assert "reusing the finished transcription" in capsys.readouterr().err


# --- the page --------------------------------------------------------------------------------------
@pytest.mark.slow  # Chromium
def test_the_glossary_page_adds_and_removes_terms_and_saves_them(browser, tmp_path):  # noqa: F811
    out = tmp_path / "library"
    out.mkdir()
    Library(out).set_glossary(["Nubank", "<b>Ana</b>"], Library(out).kept_glossary().version)  # shown as text
    running = server.start(out)
    try:
        page = browser.open(f"{running.url}#/glossary")
        wait_for(page, "document.querySelectorAll('.terms .chip').length === 2")
        assert page.locator(".terms .chip").nth(1).text_content().startswith("<b>Ana</b>")
        assert "Given to Whisper on the next runs" in page.locator(".glossary").text_content()
        page.locator(".add-terms input").fill("Pix, Mercado Pago, nubank")
        page.locator(".add-terms button").click()
        wait_for(page, "document.querySelectorAll('.terms .chip').length === 4")  # nubank is there already
        page.locator(".terms .chip", has_text="<b>Ana</b>").locator("button.remove").click()
        wait_for(page, "document.querySelectorAll('.terms .chip').length === 3")
        assert "Not saved yet" in page.locator(".unsaved").text_content()
        page.locator("button.save").click()
        wait_for(page, "document.querySelector('.unsaved').textContent === ''")
        assert (out / glossary.FILE).read_text(encoding="utf-8") == "Nubank\nPix\nMercado Pago\n"
        page.reload()
        wait_for(page, "document.querySelectorAll('.terms .chip').length === 3")
        assert [c.split("×")[0] for c in page.locator(".terms .chip").all_text_contents()] == ["Nubank", "Pix", "Mercado Pago"]
        shot(page, "workspace-glossary.png")
        # another tab (or a run) saved meanwhile: this one's save is refused, and it offers Reload
        Library(out).set_glossary(["Nubank"], Library(out).kept_glossary().version)
        page.locator(".terms .chip", has_text="Pix").locator("button.remove").click()
        page.locator("button.save").click()
        wait_for(page, "Boolean(document.getElementById('reload-glossary'))")
        assert (out / glossary.FILE).read_text(encoding="utf-8") == "Nubank\n"
        page.locator("#reload-glossary").click()
        wait_for(page, "document.querySelectorAll('.terms .chip').length === 1")
    finally:
        running.stop()


@pytest.mark.slow
def test_speech_left_without_words_under_the_glossary_is_decoded_again_without_it(devdata, wav16k, tiny_en):
    """Given a glossary, Whisper sometimes ends its window early and a sentence is lost (the dev
    recordings: benchmarks/review_quality.py). Whatever speech is left without words is decoded
    again without the glossary: here the JFK recording with its second half's words taken away,
    as such a decode leaves it, gets them back, in order, and the first half is kept as it was."""
    from igot.asr.transcribe import untranscribed_speech, with_speech_filled
    from igot.media.audio import load_audio

    wav = wav16k(devdata / JFK)
    audio = load_audio(wav)
    whole = transcribe(wav, tiny_en, language="en", progress=False)
    cut = 5.5  # "…ask not what your country can do for you" | "ask what you can do for your country"
    first = [replace(p, words=[w for w in p.words if w.end <= cut]) for p in whole.phrases]
    first = [replace(p, end=p.words[-1].end) for p in first if p.words]
    assert untranscribed_speech(audio, first)  # the second half is speech without words
    filled = with_speech_filled(tiny_en, audio, first, "en")
    words = [w.text.strip(",.") for p in filled for w in p.words]
    assert words[:len(said(replace(whole, phrases=first)))] == said(replace(whole, phrases=first))
    assert words[-3:] == ["for", "your", "country"]
    assert [w.start for p in filled for w in p.words] == sorted(w.start for p in filled for w in p.words)
    assert not untranscribed_speech(audio, filled)
