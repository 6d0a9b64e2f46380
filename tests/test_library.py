"""The interview library: OUT/index.html over real interviews, `igot index`, `igot search`, and
the page's search in a real browser giving the same hits as the Python search."""

from __future__ import annotations

import io
import json
import re
import time
import unicodedata
from contextlib import redirect_stderr, redirect_stdout
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from igot.cli import DEMO_VIDEO_URL, main
from igot.outputs import library
from igot.outputs.export import to_html
from igot.outputs.library import load_interviews, write_library
from igot.pipeline import RunOptions, run
from igot.search.words import Query, normalize, parse_query, search
from igot.text import format_clock
from igot.transcript import Phrase, Speaker, Transcript
from tests.test_export import link, make_transcript

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"


# --- real interviews, made once by the pipeline with the small offline models -------------------
@pytest.fixture(scope="module")
def archive(devdata, models, tmp_path_factory) -> Path:
    """Three interviews in one output folder, as three `igot run`s leave it: a four-speaker radio
    phone-in with a video link and names, three speakers from a local file, and Portuguese."""
    out = tmp_path_factory.mktemp("archive")
    common = dict(word_timing="engine", punctuate=False, summary=False, progress=False, voices=False)
    runs = [
        (devdata / "pyaudioanalysis/diarizationExample.flac",
         RunOptions(name="Radio phone-in", model="bundled:tiny.en", language="en", speakers=4, video_url=DEMO_VIDEO_URL,
                    names=["Host", "Brian", "Sandra", "Expert"], **common)),
        (devdata / "picovoice_falcon/test.flac", RunOptions(name="Falcon test call", model="bundled:tiny.en", language="en", **common)),
        (devdata / "falabrasil_pt/ufpalign_falabrasil.flac",
         RunOptions(name="Entrevista — alinhamento", model="bundled:base", language="pt", speakers=1,
                    names=["Joana Conceição"], **common)),
    ]
    for path, options in runs:
        run(str(path), out, options, models=models, log=lambda m: None)
    return out


def test_every_run_rewrites_the_library_page(archive):
    interviews = load_interviews(archive)
    assert [iv.name for iv in interviews] == ["Entrevista — alinhamento", "Falcon test call", "Radio phone-in"]  # newest first
    assert all(iv.transcript.phrases for iv in interviews)
    page = (archive / "index.html").read_text(encoding="utf-8")
    listed = re.findall(r'<a class="title" href="([^"]+)">([^<]+)</a>', page)
    assert [(href, unescape(name)) for href, name in listed] == [(iv.page.name, iv.name) for iv in interviews]
    assert all((archive / href).is_file() for href, _ in listed)
    radio = interviews[2].transcript
    assert [s.name for s in radio.speakers] == ["Host", "Brian", "Sandra", "Expert"]
    assert "Speakers: Host, Brian" in page and "Language: pt" in page and f'href="{DEMO_VIDEO_URL}"' in page


def test_transcript_pages_have_a_stable_anchor_per_phrase(archive):
    for iv in load_interviews(archive):
        page = iv.page.read_text(encoding="utf-8")
        ids = re.findall(r'class="phrase" id="p-(\d+)"', page)
        assert ids == [str(i) for i, p in enumerate(iv.transcript.phrases) if p.text.strip()]
        assert to_html(Transcript.load(iv.path)) == page  # written again, the same anchors


def test_search_is_accent_case_and_punctuation_insensitive_on_real_portuguese(archive):
    interviews = load_interviews(archive)
    pt = next(iv for iv in interviews if iv.transcript.language == "pt")
    accented = {w for p in pt.transcript.phrases for w in re.findall(r"\w+", p.text)
                if unicodedata.normalize("NFD", w) != w and len(w) >= 4}  # "é" alone would find English "e…"
    assert accented, "the Portuguese run should have accented words"
    for word in accented:
        plain = "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c)).upper()
        hits = search(interviews, plain)
        assert hits and all(h.interview == pt.name for h in hits), word
        assert all(word.lower() in [h.text[a:b].lower() for a, b in h.marks] for h in hits), word
        assert len(hits) == sum(1 for p in pt.transcript.phrases if re.search(rf"\b{word}", p.text, re.I))
    # The speaker's name is searchable, without its accent, and shown on every hit.
    by_name = search(interviews, "conceicao")
    assert len(by_name) == len(pt.transcript.phrases) and {h.speaker for h in by_name} == {"Joana Conceição"}


def test_search_words_any_order_exact_phrase_and_filters(archive):
    interviews = load_interviews(archive)
    radio = next(iv for iv in interviews if iv.name == "Radio phone-in")
    phrase = max(radio.transcript.phrases, key=lambda p: len(p.text.split()))
    words = normalize(phrase.text).split()
    assert len(words) >= 4
    first, second = words[0], words[3]
    hits = search(interviews, f"{second.upper()} {first}")  # any order, any case
    assert any(h.text == phrase.text for h in hits)
    assert all(f" {first}" in f" {normalize(h.text)}" and f" {second}" in f" {normalize(h.text)}" for h in hits)
    exact = search(interviews, f'"{" ".join(words[:3])}"')
    assert any(h.text == phrase.text for h in exact)
    assert search(interviews, f'"{" ".join(reversed(words[:3]))}"') == [] or words[:3] == words[2::-1]
    # Filters: by speaker name, by interview name.
    speaker = next(s.name for s in radio.transcript.speakers if s.id == phrase.speaker)
    mine = search(interviews, first, speaker=speaker.lower())
    assert mine and {h.speaker for h in mine} == {speaker}
    assert {h.interview for h in search(interviews, first, interview="radio")} <= {"Radio phone-in"}
    hit = next(h for h in hits if h.text == phrase.text)
    assert hit.video == f"{DEMO_VIDEO_URL}#t={int(phrase.start)}" and hit.link == hit.video
    assert hit.page == f"{radio.page.resolve().as_uri()}#p-{radio.transcript.phrases.index(phrase)}"


def test_query_rules_on_a_written_transcript(tmp_path):
    t = make_transcript()
    t.phrases[1].text = "Vamos começar a integração, já!"
    t.save(tmp_path / "joana.json")
    interviews = load_interviews(tmp_path)
    texts = lambda q, **kw: [h.text for h in search(interviews, q, **kw)]  # noqa: E731
    assert texts("integracao") == texts("INTEGRAÇÃO") == texts("integ") == ["Vamos começar a integração, já!"]
    assert texts("ja comecar") == ["Vamos começar a integração, já!"]  # any order
    assert texts('"comecar a integracao"') == ["Vamos começar a integração, já!"]
    assert texts('"a comecar"') == [] and texts('"comec"') == []  # quoted: whole words, in order
    assert texts("tegracao") == []  # a word must start where the query word starts
    assert texts("") == texts("  ,.!  ") == texts('""') == []
    # A speaker's name finds what they said; with another word, both must match.
    assert len(texts("Conceição")) == 3 and texts("ana obrigada") == ["Olá, tudo bem? Obrigada por participar.", "Entendi, obrigada."]
    assert texts("joana obrigada") == []
    assert texts("obrigada", speaker="joana") == []
    hit = search(interviews, 'integracao "vamos"')[0]
    assert [hit.text[a:b] for a, b in hit.marks] == ["Vamos", "integração"]
    t.phrases[1].text = unicodedata.normalize("NFD", "Começar a integração")  # accents as separate characters
    t.save(tmp_path / "joana.json")
    [hit] = search(load_interviews(tmp_path), "integracao")
    assert hit.text[slice(*hit.marks[0])] == unicodedata.normalize("NFD", "integração")
    assert parse_query('«são paulo» ok “x y”') == Query(words=["ok"], phrases=["sao paulo", "x y"])


def test_library_skips_other_json_and_escapes_everything(tmp_path):
    t = make_transcript()
    t.source.title = "</script><script>alert(1)</script> & Co"
    t.source.url = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
    t.save(tmp_path / "nasty.json")
    (tmp_path / "settings.json").write_text('{"not": "a transcript"}')
    (tmp_path / "broken.json").write_text("{")
    page = write_library(tmp_path).read_text(encoding="utf-8")
    assert page.count("<script") == 2 and "alert(1)</script>" not in page
    data = json.loads(re.search(r'<script id="library-data" type="application/json">(.*?)</script>', page, re.S).group(1))
    [iv] = data["interviews"]
    assert iv["name"] == t.source.title and iv["x"].split("\n") == [" ".join(p.text.split()) for p in t.phrases]
    assert iv["link"] == ["https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=", "s"]  # + the phrase's second


def test_an_edited_or_removed_interview_is_read_again(tmp_path):
    t = make_transcript()
    t.save(tmp_path / "joana.json")
    assert [h.speaker for h in search(load_interviews(tmp_path), "vamos")] == ["Ana Conceição"]
    assert (tmp_path / ".igot" / "library-cache.json").is_file()
    t.speakers[0].name = "Ana Souza"  # renamed by hand: the next search sees it
    t.save(tmp_path / "joana.json")
    assert [h.speaker for h in search(load_interviews(tmp_path), "vamos")] == ["Ana Souza"]
    t.source.title = "Outra"
    t.save(tmp_path / "outra.json")
    (tmp_path / "joana.json").unlink()
    assert [iv.name for iv in load_interviews(tmp_path)] == ["Outra"]
    (tmp_path / ".igot" / "library-cache.json").write_text("{damaged")
    assert [iv.name for iv in load_interviews(tmp_path)] == ["Outra"]



def test_a_server_reads_again_only_the_interviews_that_changed(tmp_path):
    """What igot serve does after every change: the listing it had is kept, and only a changed or
    new file is read again; searches see every change."""
    t = make_transcript()
    t.save(tmp_path / "joana.json")
    t.source.title = "Outra"
    t.save(tmp_path / "outra.json")
    first, _ = library.load_library(tmp_path)
    assert [h.speaker for h in search(first, "vamos")] == ["Ana Conceição", "Ana Conceição"]
    t.speakers[0].name = "Ana Souza"
    t.save(tmp_path / "outra.json")
    time.sleep(0.01)
    t.source.title = "Nova"
    t.save(tmp_path / "nova.json")
    (tmp_path / "joana.json").unlink()
    second, skipped = library.load_library(tmp_path, known=first)
    assert not skipped and sorted(iv.name for iv in second) == ["Nova", "Outra"]
    assert [h.speaker for h in search(second, "vamos")] == ["Ana Souza", "Ana Souza"]
    kept = next(iv for iv in second if iv.name == "Outra")
    third, _ = library.load_library(tmp_path, known=second)
    assert next(iv for iv in third if iv.name == "Outra") is kept  # unchanged: kept, with its word index


# --- the command line ---------------------------------------------------------------------------
def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_igot_search_and_index_from_the_terminal(archive, tmp_path):
    interviews = load_interviews(archive)
    pt = next(iv for iv in interviews if iv.transcript.language == "pt")
    code, out, err = cli("search", "conceicao", "--out", str(archive))
    lines = out.splitlines()
    n = len(pt.transcript.phrases)
    assert code == 0 and len(lines) == n and f"{n} phrase{'s' * (n != 1)} found" in err
    first = pt.transcript.phrases[0]
    assert lines[0].startswith(f"Entrevista — alinhamento · {format_clock(first.start)} · Joana Conceição: {first.text.strip()} · file://")
    assert lines[0].endswith(f"falabrasil_pt/ufpalign_falabrasil.flac#t={int(first.start)}")  # the recording, at that second
    code, out, _ = cli("search", "conceicao", "--out", str(archive), "--json", "--speaker", "joana")
    hits = json.loads(out)
    assert code == 0 and [h["phrase"] for h in hits] == list(range(len(pt.transcript.phrases)))
    assert hits[0]["page"].endswith("#p-0") and hits[0]["link"] == hits[0]["video"]
    assert cli("search", "conceicao", "--out", str(archive), "--interview", "radio")[0] == 1
    code, _, err = cli("search", "x", "--out", str(tmp_path / "nowhere"))
    assert code == 2 and "No output folder" in err
    copy = tmp_path / "copy"
    copy.mkdir()
    for iv in interviews:
        (copy / iv.path.name).write_bytes(iv.path.read_bytes())
    code, out, _ = cli("index", "--out", str(copy))
    assert code == 0 and "3 interviews" in out and (copy / "index.html").is_file()


# --- the page in Chromium -----------------------------------------------------------------------
class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs.append(dict(attrs).get("href"))


def unescape(text: str) -> str:
    import html

    return html.unescape(text)


HITS_JS = """[...document.querySelectorAll('#hits .hit')].map(li => ({
  text: li.querySelector('.text').textContent,
  marks: [...li.querySelectorAll('mark')].map(m => m.textContent),
  who: (li.querySelector('.who') || {}).textContent || '',
  video: (li.querySelector('a.video') || {href: null}).href,
  page: li.querySelector('a.page').href,
}))"""


def test_library_page_searches_in_chromium(archive, tmp_path):
    from igot_dev.browser import Browser

    interviews = load_interviews(archive)
    radio = next(iv for iv in interviews if iv.name == "Radio phone-in")
    common = max(((w, len(search(interviews, w))) for p in radio.transcript.phrases for w in normalize(p.text).split() if len(w) >= 3),
                 key=lambda x: (x[1], x[0]))[0]
    pt = next(iv for iv in interviews if iv.transcript.language == "pt")
    accented = next(w for p in pt.transcript.phrases for w in p.text.split() if normalize(w) != w.lower())
    queries = [common, normalize(accented).upper(), "conceicao", f'"{" ".join(normalize(radio.transcript.phrases[0].text).split()[:2])}"',
               "host", "zzzzqx"]
    browser = Browser(tmp_path)
    try:
        page = browser.open((archive / "index.html").as_uri())
        for q in queries:  # the page finds exactly what the Python search finds
            assert page.evaluate(f"igotSearch({json.dumps(q)})") == len(search(interviews, q)), q
        filtered = page.evaluate(f"igotSearch({json.dumps(common)}, {{speaker: 'Brian'}})")
        assert filtered == len(search(interviews, common, speaker="Brian"))

        # A user types a query into the box; the hits appear, each with its links.
        page.evaluate("document.getElementById('q').focus()")
        page.keyboard.insert_text(common)
        want = search(interviews, common)
        deadline = time.monotonic() + 10
        while not page.evaluate("document.querySelectorAll('#hits .hit').length") and time.monotonic() < deadline:
            time.sleep(0.05)
        shown = page.evaluate(HITS_JS)
        status = page.evaluate("document.getElementById('status').textContent")
        assert status.startswith(f"{len(want)} phrase") and len(shown) == min(len(want), 100)
        for got, hit in zip(shown, want):
            assert got["text"] == hit.text and got["who"] == hit.speaker
            assert [m.lower() for m in got["marks"]] == [hit.text[a:b].lower() for a, b in hit.marks]
            assert got["video"] == hit.video and got["page"] == hit.page
            path, anchor = unquote(urlsplit(got["page"]).path), urlsplit(got["page"]).fragment
            assert f'id="{anchor}"' in Path(path).read_text(encoding="utf-8")

        page.evaluate("window.scrollTo(0, 0)")
        ARTIFACTS.mkdir(exist_ok=True)
        (ARTIFACTS / "library-search.png").write_bytes(page.screenshot())

        # Click a hit's video link: the browser asks for the radio recording at that second.
        index = next(i for i, h in enumerate(want) if h.interview == "Radio phone-in" and h.start >= 1)
        opened = browser.click_link(page, index, selector="#hits a.video", url_part="pyAudioAnalysis")
        assert opened["new_tab"] == want[index].video == f"{DEMO_VIDEO_URL}#t={int(want[index].start)}"
        assert opened["request"] == DEMO_VIDEO_URL  # requests carry no #fragment; the new tab's address does
        assert opened["page_url"] == f"{(archive / 'index.html').as_uri()}#q={common}"  # the search is in the address
        # Click its "in the transcript" link: the transcript page opens at that phrase.
        with page.expect_navigation():
            page.locator("#hits a.page").nth(index).click()
        assert page.evaluate("location.href") == want[index].page
        assert page.evaluate("document.querySelector(':target').textContent") == want[index].text
        # Back: the library again, with the same search and the same hits.
        page.go_back()
        assert page.evaluate("document.getElementById('q').value") == common
        assert [g["text"] for g in page.evaluate(HITS_JS)] == [h.text for h in want[:100]]

        # Tricky text: the page and Python agree on every hit and every highlighted piece.
        tricky = tmp_path / "tricky"
        t = make_transcript()
        t.phrases[1].text = unicodedata.normalize("NFD", "Vamos começar a INTEGRAÇÃO — já, já!")
        t.phrases[3].text = "Ação/reação: 50% “ótimo” (açaí_de_manhã) São-Paulo"
        tricky.mkdir()
        t.save(tricky / "joana.json")
        write_library(tricky)
        page = browser.open((tricky / "index.html").as_uri())
        for q in ["integracao ja", "JA", '"comecar a integracao"', "acai manha", "sao paulo", "reacao 50", "otimo",
                  "conceicao obrigada", "bob", '"tudo bem obrigada"', "script alert"]:
            want = search(load_interviews(tricky), q)
            got = page.evaluate(f"document.getElementById('q').value = {json.dumps(q)}; igotRun(); {HITS_JS}")
            assert [(g["text"], g["marks"], g["who"]) for g in got] == \
                [(h.text, [h.text[a:b] for a, b in h.marks], h.speaker) for h in want], q
            assert want, q
    finally:
        browser.close()


# --- what no interview may do to another, and the search in the address ---------------------------
def interview_named(title: str, *texts: str, speakers=("Ana Conceição", "Bruno")) -> Transcript:
    t = make_transcript()
    t.source.title = title
    t.speakers = [Speaker(f"S{i + 1}", name) for i, name in enumerate(speakers)]
    t.phrases = [Phrase(f"S{i % len(speakers) + 1}", 3.0 * i, 3.0 * i + 2, text, link(3.0 * i)) for i, text in enumerate(texts)]
    return t


def test_empty_and_unreadable_interviews_change_nothing_for_the_others(tmp_path):
    """The issue's library: interviews with no phrases (silence, noise, a 0.3 s clip) among others,
    and interview files that are damaged or from a newer iGot: each hit shows the phrase that matched."""
    from igot_dev.browser import Browser

    folder = tmp_path / "out"
    folder.mkdir()
    made = [interview_named("Silence"), interview_named("A", "There is nothing to say.", "Pix every day."),
            interview_named("Noise"), interview_named("B", "Nothing works.", "I trust the bank.", "Nothing else?"),
            interview_named("Clip"), interview_named("C", "The fee came late.", "Nothing, really.")]
    for i, t in enumerate(made):
        t.info["created"] = f"2025-03-{10 + i:02d}T09:00:00Z"  # "Silence" oldest … "C" newest: empties in between
        t.save(folder / f"{export_slug(t)}.json")
    (folder / "broken.json").write_text('{"source": {"title": "Cut short"}, "phrases": [{"speaker": "S1", "st')
    newer = interview_named("From the future", "Nothing here is readable.")
    (folder / "future.json").write_text(json.dumps({**newer.to_dict(), "schema_version": 99}))
    odd = interview_named("Odd", "Nothing at all.").to_dict()
    odd["phrases"][0]["text"] = None
    (folder / "odd.json").write_text(json.dumps(odd))
    (folder / "settings.json").write_text('{"theme": "dark"}')  # not an interview: passed over in silence

    code, out, err = cli("index", "--out", str(folder))
    assert code == 0 and "6 interviews" in out
    skipped = [line.removeprefix("igot: ") for line in err.splitlines() if "Skipped" in line]
    assert len(skipped) == 3 and not any("settings.json" in line for line in skipped)
    assert any(line.startswith("Skipped broken.json: it is not valid JSON") and "igot run again" in line for line in skipped)
    assert any(line.startswith("Skipped future.json: it was written by a newer iGot") and "pip install -U igot-interviews" in line
               for line in skipped)
    assert any(line.startswith("Skipped odd.json: phrase 1 has a text of None") for line in skipped)
    page = (folder / "index.html").read_text(encoding="utf-8")
    assert page.count('class="skipped"') == 3  # the page says which files are missing from it, too

    want = search(load_interviews(folder), "nothing")
    assert [h.text for h in want] == ["Nothing, really.", "Nothing works.", "Nothing else?", "There is nothing to say."]
    code, out, err = cli("search", "nothing", "--out", str(folder))
    assert code == 0 and out.count("\n") == 4 and err.count("Skipped") == 3
    browser = Browser(tmp_path)
    try:
        tab = browser.open((folder / "index.html").as_uri())
        got = tab.evaluate(f"document.getElementById('q').value = 'nothing'; igotRun(); {HITS_JS}")
        assert [g["text"] for g in got] == [h.text for h in want]
        assert [g["page"] for g in got] == [h.page for h in want]
        assert tab.evaluate("document.getElementById('status').textContent") == "4 phrases in 3 interviews"
    finally:
        browser.close()


def export_slug(t: Transcript) -> str:
    from igot.outputs.export import slugify

    return slugify(t.source.title)


def type_slowly(tab, text: str) -> None:
    """Letter by letter, 0.2 s apart: each letter's search runs, as when a person types."""
    tab.evaluate("document.getElementById('q').focus()")
    for ch in text:
        tab.keyboard.insert_text(ch)
        time.sleep(0.2)
    time.sleep(0.3)


@pytest.mark.slow
def test_the_search_is_in_the_address_for_bookmarks_links_and_the_back_button(tmp_path):
    from igot_dev.browser import Browser

    folder = tmp_path / "out"
    folder.mkdir()
    interview_named("Pix", "Eu não confiava no pix.", "O pix caiu na hora.", "Não confiava, mas agora uso.",
                    speakers=("Ana Conceição", "Bruno")).save(folder / "pix.json")
    interview_named("Banco", "Não confiava no banco.", "Pix? Nunca.", speakers=("Ana Lima", "Caio")).save(folder / "banco.json")
    write_library(folder)
    interviews = load_interviews(folder)
    texts = lambda q, **kw: [h.text for h in search(interviews, q, **kw)]  # noqa: E731
    shown = lambda: [g["text"] for g in tab.evaluate(HITS_JS)]  # noqa: E731
    browser = Browser(tmp_path)
    try:
        # A link a colleague sent, written by hand: words, an exact phrase, a speaker's first name.
        tab = browser.open(f'{(folder / "index.html").as_uri()}#q=pix+"não+confiava"&speaker=Ana')
        assert tab.evaluate("document.getElementById('q').value") == 'pix "não confiava"'
        assert tab.evaluate("document.getElementById('speaker').value") == "Ana"
        assert shown() == texts('pix "não confiava"', speaker="Ana") == ["Eu não confiava no pix."]
        start = tab.evaluate("history.length")

        # A new search typed letter by letter is one step back, not one per letter.
        tab.evaluate("document.getElementById('q').value = ''")
        type_slowly(tab, "nao confiava")
        assert tab.evaluate("history.length") == start + 1
        assert tab.evaluate("new URLSearchParams(location.hash.slice(1)).get('q')") == "nao confiava"
        assert tab.evaluate("new URLSearchParams(location.hash.slice(1)).get('speaker')") == "Ana"
        assert shown() == texts("nao confiava", speaker="Ana")
        # A filter chosen is another step.
        tab.evaluate("const s = document.getElementById('speaker'); s.value = 'Caio'; s.dispatchEvent(new Event('change'))")
        assert tab.evaluate("history.length") == start + 2 and shown() == texts("nao confiava", speaker="Caio") == []
        tab.evaluate("const i = document.getElementById('speaker'); i.value = ''; i.dispatchEvent(new Event('change'))")
        assert shown() == texts("nao confiava") and len(shown()) == 3

        # The back button walks back through the searches, the boxes and hits with it.
        for q, speaker in (("nao confiava", "Caio"), ("nao confiava", "Ana"), ('pix "não confiava"', "Ana")):
            tab.evaluate("new Promise(done => { addEventListener('popstate', () => setTimeout(done, 0), {once: true}); history.back(); })")
            assert tab.evaluate("[document.getElementById('q').value, document.getElementById('speaker').value]") == [q, speaker]
            assert shown() == texts(q, speaker=speaker)
        # A bookmark opens the same search on a fresh page.
        bookmark = tab.evaluate("location.href")
        again = browser.open(bookmark)
        assert [g["text"] for g in again.evaluate(HITS_JS)] == ["Eu não confiava no pix."]
    finally:
        browser.close()
