"""Exports as a reader sees them: every phrase once, in order, linked to its moment, nothing broken."""

from __future__ import annotations

import html
import os
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from igot.errors import IgotError
from igot.outputs.export import (
    format_clock,
    format_srt_time,
    format_vtt_time,
    slugify,
    subtitle_cues,
    to_html,
    to_markdown,
    to_srt,
    to_vtt,
    write_exports,
)
from igot.transcript import Citation, Phrase, Source, Speaker, SummaryPoint, Transcript, Word

VIDEO = "https://www.youtube.com/watch?v=abc123"
NASTY = 'I tried <script>alert("hi")</script> & it\'s "fine"'
LONG_WORDS = (
    "Então, eu uso o aplicativo todo dia de manhã para ver o saldo e depois à noite quando chego "
    "em casa eu confiro as compras que fiz, mas às vezes não aparece nada e aí eu fico preocupada "
    "porque não sei se a compra passou ou não"
).split()


def link(t: float) -> str:
    return f"{VIDEO}&t={int(t)}s"  # contains "&": must survive escaping


def long_phrase(start: float = 8.0, duration: float = 20.0) -> Phrase:
    step = duration / len(LONG_WORDS)
    # Words as faster-whisper gives them: leading space, own times.
    words = [Word(" " + w, start + i * step, start + (i + 0.8) * step, "S3", 0.9) for i, w in enumerate(LONG_WORDS)]
    return Phrase("S3", start, start + duration, " ".join(LONG_WORDS), link(start), words)


def make_transcript() -> Transcript:
    return Transcript(
        source=Source("Entrevista com a Joana — São Paulo", VIDEO, None, "youtube"),
        language="pt",
        duration=31.0,
        speakers=[Speaker("S1", "Ana Conceição"), Speaker("S2", 'Bob "B" <Ltd> & Co'), Speaker("S3", "Joana")],
        phrases=[
            Phrase("S1", 0.0, 2.4, "Olá, tudo bem? Obrigada por participar.", link(0.0)),
            Phrase("S1", 2.5, 4.0, "Vamos começar.", link(2.5)),
            Phrase("S2", 4.2, 6.0, NASTY, link(4.2)),
            Phrase("S2", 6.0, 7.5, "No link [sic] *really* _ok_ `code` here", None),
            long_phrase(),
            Phrase("S1", 28.5, 30.0, "Entendi, obrigada.", link(28.5)),
        ],
        info={"engine": "test"},
    )


# --- parsing helpers (what a browser / a player would read back) -----------------------------
class PageReader(HTMLParser):
    """Collects phrases (tag, href, title, text), turns (class, name) and every tag seen."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.phrases: list[dict] = []
        self.turns: list[dict] = []
        self.style = ""
        self.lang = None
        self._in: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        classes = (a.get("class") or "").split()
        if tag == "html":
            self.lang = a.get("lang")
        if "phrase" in classes:
            self.phrases.append({"tag": tag, "href": a.get("href"), "title": a.get("title"), "text": ""})
            self._in = "phrase"
        elif "turn" in classes:
            self.turns.append({"class": [c for c in classes if c != "turn"], "name": ""})
        elif tag == "b" and "who" in classes:
            self._in = "name"
        elif tag == "style":
            self._in = "style"

    def handle_endtag(self, tag):
        if tag in ("a", "span", "b", "style"):
            self._in = None

    def handle_data(self, data):
        if self._in == "phrase":
            self.phrases[-1]["text"] += data
        elif self._in == "name":
            self.turns[-1]["name"] += data
        elif self._in == "style":
            self.style += data


def read_page(page: str) -> PageReader:
    reader = PageReader()
    reader.feed(page)
    reader.close()
    return reader


def read_cues(text: str, vtt: bool) -> list[tuple[float, float, str]]:
    blocks = [b for b in text.strip().split("\n\n") if b]
    if vtt:
        assert blocks.pop(0).startswith("WEBVTT")
    cues = []
    for block in blocks:
        lines = block.split("\n")
        if not vtt:
            assert lines.pop(0).isdigit()
        sep = r"\." if vtt else ","
        m = re.fullmatch(rf"(\d\d):(\d\d):(\d\d){sep}(\d\d\d) --> (\d\d):(\d\d):(\d\d){sep}(\d\d\d)", lines[0])
        assert m, lines[0]
        h1, m1, s1, ms1, h2, m2, s2, ms2 = map(int, m.groups())
        assert len(lines) == 2, block  # one line of text per cue
        cues.append((h1 * 3600 + m1 * 60 + s1 + ms1 / 1000, h2 * 3600 + m2 * 60 + s2 + ms2 / 1000, lines[1]))
    return cues


def tokens(text: str) -> list[str]:
    return text.split()


# --- HTML -------------------------------------------------------------------------------------
def test_html_every_phrase_once_in_order_with_its_link():
    t = make_transcript()
    page = read_page(to_html(t))
    assert [p["text"] for p in page.phrases] == [p.text for p in t.phrases]
    for got, phrase in zip(page.phrases, t.phrases):
        if phrase.link:
            assert got["tag"] == "a" and got["href"] == phrase.link
        else:
            assert got["tag"] == "span" and got["href"] is None
        assert got["title"].startswith(format_clock(phrase.start))
    assert page.lang == "pt"


def test_html_escapes_names_and_text():
    page_text = to_html(make_transcript())
    page = read_page(page_text)
    assert "script" not in page.tags and "<script>" not in page_text and "<Ltd>" not in page_text
    assert NASTY in [p["text"] for p in page.phrases]
    assert 'Bob "B" <Ltd> & Co' in [t["name"] for t in page.turns]
    assert "<title>Entrevista com a Joana — São Paulo</title>" in page_text
    assert 'charset="utf-8"' in page_text and "<link" not in page_text and "src=" not in page_text


def test_html_turns_group_phrases_and_speakers_look_different():
    page = read_page(to_html(make_transcript()))
    assert [t["name"] for t in page.turns] == ["Ana Conceição", 'Bob "B" <Ltd> & Co', "Joana", "Ana Conceição"]
    classes = [tuple(t["class"]) for t in page.turns]
    assert classes[0] == classes[3] and len({classes[0], classes[1], classes[2]}) == 3
    # Each speaker class gets its own colour and its own border style (readable without colour).
    styles = {}
    for cls in set(classes):
        rule = re.search(rf"\.{cls[0]} {{([^}}]*)}}", page.style)
        assert rule, cls
        styles[cls] = (re.search(r"--c: ([^;]+)", rule.group(1)).group(1), re.search(r"--b: ([^;]+)", rule.group(1)).group(1))
    assert len({c for c, _ in styles.values()}) == 3 and len({b for _, b in styles.values()}) == 3


def test_html_summary_above_transcript():
    page = to_html(make_transcript(), summary=["Checks the balance <twice> a day", "Worried & unsure"])
    assert page.index("Summary") < page.index("Transcript</h2>")
    assert "<li>Checks the balance &lt;twice&gt; a day</li>" in page and "<li>Worried &amp; unsure</li>" in page
    assert "Summary" not in to_html(make_transcript())


def summarised() -> Transcript:
    """make_transcript() with a checked summary: linked times, an unverified quote, no moment,
    a time with no video link, and a hand-edited javascript: link."""
    t = make_transcript()
    t.summary = [
        SummaryPoint("Ana opens; Joana: “uso o aplicativo todo dia” and “I love it <3”.",
                     [Citation(0.0, link(0.0), 0), Citation(8.0, link(8.0), 4)], ["I love it <3"]),
        SummaryPoint("- Worried <when> nothing shows up", removed_times=["[9:99]"]),
        SummaryPoint("1. Said at a moment with no video link", [Citation(4.2, None, 2)]),
        SummaryPoint("Edited by hand", [Citation(6.0, "javascript:alert(1)", 3)]),
    ]
    return t


def test_html_summary_points_link_their_times_and_flag_what_is_unverified():
    t = summarised()
    page = to_html(t)
    section = page[page.index('<section class="summary">'):page.index('<section class="transcript">')]
    items = re.findall(r"<li>(.*?)</li>", section)
    assert len(items) == 4 and "Written by a language model" in section
    assert items[0].endswith(
        f'<a class="cite" href="{html.escape(link(0.0))}" target="_blank" rel="noopener">[0:00]</a> '
        f'<a class="cite" href="{html.escape(link(8.0))}" target="_blank" rel="noopener">[0:08]</a>'
    )
    assert '<mark class="unverified"' in items[0] and "“I love it &lt;3”</mark> <span class=\"flag\">⚠ unverified quote</span>" in items[0]
    assert "<mark" not in items[0].split("“uso o aplicativo todo dia”")[0]  # the quote found is not marked
    assert items[1] == '- Worried &lt;when&gt; nothing shows up <span class="flag">⚠ no linked moment</span>'
    assert items[2].endswith('<span class="cite">[0:04]</span>') and items[3].endswith('<span class="cite">[0:06]</span>')
    assert "javascript" not in page
    # Every phrase of the transcript is still there once, with its link: the citations are not phrases.
    assert [p["text"] for p in read_page(page).phrases] == [p.text for p in t.phrases]
    # A summary given to the export replaces the transcript's own; an empty one hides it.
    assert "Written by a language model" not in to_html(t, summary=["My own note"]) and "Summary" not in to_html(t, summary=[])


def test_markdown_summary_points_link_their_times_and_flag_what_is_unverified():
    md = to_markdown(summarised())
    lines = md[md.index("## Summary"):md.index("## Transcript")].splitlines()
    items = [line for line in lines if line.startswith("- ")]
    assert items[0] == (f"- Ana opens; Joana: “uso o aplicativo todo dia” and “I love it \\<3” _(⚠ unverified quote)_. "
                        f"[\\[0:00\\]]({link(0.0)}) [\\[0:08\\]]({link(8.0)})")
    assert items[1] == "- \\- Worried \\<when\\> nothing shows up _(⚠ no linked moment)_"
    assert items[2] == "- 1\\. Said at a moment with no video link \\[0:04\\]"
    assert items[3] == "- Edited by hand \\[0:06\\]" and "javascript" not in md
    assert "_Written by a language model" in md


def test_write_exports_shows_the_transcripts_summary_and_keeps_it_in_the_json(tmp_path: Path):
    t = summarised()
    paths = write_exports(t, tmp_path, "x")
    assert Transcript.load(paths["json"]).summary == t.summary
    assert "[0:08]</a>" in paths["html"].read_text(encoding="utf-8")
    assert f"({link(8.0)})" in paths["md"].read_text(encoding="utf-8")
    assert "unverified" not in paths["srt"].read_text(encoding="utf-8")  # subtitles are the speech only


def test_html_refuses_javascript_links():
    t = make_transcript()
    t.phrases[0].link = "javascript:alert(1)"
    page = read_page(to_html(t))
    assert page.phrases[0]["tag"] == "span" and all("javascript" not in (p["href"] or "") for p in page.phrases)


# --- Markdown ---------------------------------------------------------------------------------
def test_markdown_phrases_links_and_escaping():
    t = make_transcript()
    md = to_markdown(t)
    found = re.findall(r"(?<!\\)\[((?:\\.|[^\]\\])*)\]\(([^)\s]+)\)", md)  # a link, not an escaped "\["
    unescape = lambda s: re.sub(r"\\(.)", r"\1", s)
    linked = [p for p in t.phrases if p.link]
    assert [(unescape(text), url) for text, url in found if text != "Open the video"] == [(p.text, p.link) for p in linked]
    assert r"No link \[sic\] \*really\* \_ok\_ \`code\` here" in md
    assert r"\<script\>" in md and "<script>" not in md
    lines = [line for line in md.splitlines() if line.startswith("**")]
    assert lines[0].startswith("**Ana Conceição** (0:00): ") and lines[2].startswith("**Joana** (0:08): ")
    # Order: each phrase's text appears after the previous one.
    flat, pos = unescape(md), 0
    for p in t.phrases:
        pos = flat.index(p.text, pos) + 1


# --- subtitles --------------------------------------------------------------------------------
@pytest.mark.parametrize("vtt", [False, True])
def test_subtitles_monotonic_and_cover_every_word_once(vtt: bool):
    t = make_transcript()
    text = to_vtt(t) if vtt else to_srt(t)
    cues = read_cues(text, vtt)
    prev_end = 0.0
    said: list[str] = []
    for start, end, line in cues:
        assert prev_end <= start < end
        prev_end = end
        if vtt:
            m = re.fullmatch(r"<v ([^>]*)>(.*)", line)
            assert m, line
            name, line = html.unescape(m.group(1)), html.unescape(m.group(2))
            assert line.startswith(name + ": ")
        name, _, words = line.partition(": ")
        assert name in {s.name for s in t.speakers}
        said += tokens(words)
    assert said == [w for p in t.phrases for w in tokens(p.text)]
    if vtt:
        assert "&lt;script&gt;" in text and "<script>" not in text


def test_long_phrase_split_at_word_times():
    t = make_transcript()
    phrase = t.phrases[4]
    cues = [c for c in subtitle_cues(t) if c.speaker == "Joana"]
    assert len(cues) >= 3  # 20 s of speech
    assert all(c.end - c.start <= 7.0 + 1e-9 and len(c.text) <= 84 for c in cues)
    assert " ".join(c.text for c in cues) == phrase.text
    word_starts = {round(w.start, 3) for w in phrase.words}
    assert all(round(c.start, 3) in word_starts for c in cues[1:])  # cut where a word begins
    assert cues[0].start == phrase.start and cues[-1].end == phrase.end


def test_long_phrase_without_words_split_evenly():
    t = make_transcript()
    t.phrases[4].words = []
    cues = [c for c in subtitle_cues(t) if c.speaker == "Joana"]
    assert len(cues) >= 3 and " ".join(c.text for c in cues) == t.phrases[4].text
    assert all(c.end - c.start <= 7.0 + 1e-9 and len(c.text) <= 84 for c in cues)


def test_overlapping_phrase_times_never_overlap_in_subtitles():
    t = make_transcript()
    t.phrases[1].start, t.phrases[1].end = 1.0, 1.0  # starts before the previous ends, lasts nothing
    t.phrases[3].start, t.phrases[3].end = 5.0, 4.0  # ends before it starts
    cues = read_cues(to_srt(t), vtt=False)
    for (s1, e1, _), (s2, e2, _) in zip(cues, cues[1:]):
        assert s1 < e1 <= s2 < e2



def test_backchannel_phrase_after_its_sentence_in_subtitles_and_documents():
    """A back-channel's phrase comes after the sentence it interrupted though it started
    earlier: cues stay in start-time order (WebVTT requires it) and never overlap, and every
    export (the Google Doc's HTML too) reads sentence, then "yeah", then the next sentence."""
    from igot.speakers.phrases import assign_speakers
    from igot.transcript import SpeakerTurn

    words = [Word(w, 0.6 * i, 0.6 * i + 0.4) for i, w in enumerate(
        "I signed up on my phone yeah and it took more than ten minutes to get through all the steps.".split())]
    words += [Word("Why?", 12.0, 12.4)]
    t = Transcript(Source("Interview"), "en", 13.0, phrases=[Phrase("", 0.0, 12.4, "", words=words)])
    t = assign_speakers(t, [SpeakerTurn("A", 0.0, 11.85), SpeakerTurn("B", 3.58, 4.02), SpeakerTurn("B", 11.9, 12.6)])
    assert [p.text for p in t.phrases][1:] == ["yeah", "Why?"] and t.phrases[1].start < t.phrases[0].end
    for vtt in (False, True):
        cues = read_cues(to_vtt(t) if vtt else to_srt(t), vtt=vtt)
        assert len(cues) >= 4  # the 11 s sentence takes two cues
        for (s1, e1, _), (s2, e2, _) in zip(cues, cues[1:]):
            assert s1 < e1 <= s2 < e2
        assert [text.split(": ", 1)[1] for *_, text in cues][-2:] == ["yeah", "Why?"]
        assert cues[-3][2].endswith("steps.")
    from igot.outputs.gdoc import doc_html

    for page in (to_markdown(t), to_html(t), doc_html(t)):
        assert page.index("all the steps.") < page.index("yeah") < page.index("Why?")


# --- files ------------------------------------------------------------------------------------
def test_write_exports_round_trip_and_no_temp_files(tmp_path: Path):
    t = make_transcript()
    paths = write_exports(t, tmp_path / "out", slugify(t.source.title))
    assert set(paths) == {"json", "html", "md", "srt", "vtt"}
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        f"entrevista-com-a-joana-sao-paulo.{f}" for f in ("json", "html", "md", "srt", "vtt")
    )
    assert Transcript.load(paths["json"]) == t
    assert "São Paulo" in paths["html"].read_text(encoding="utf-8")


def test_write_exports_crash_keeps_old_file(tmp_path: Path, monkeypatch):
    t = make_transcript()
    (tmp_path / "x.html").write_text("old", encoding="utf-8")

    def crash(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(IgotError, match="No space left"):
        write_exports(t, tmp_path, "x", formats=("html",))
    assert [p.name for p in tmp_path.iterdir()] == ["x.html"]
    assert (tmp_path / "x.html").read_text(encoding="utf-8") == "old"


def test_write_exports_rejects_bad_format_and_stem(tmp_path: Path):
    with pytest.raises(IgotError, match="pdf"):
        write_exports(make_transcript(), tmp_path, "x", formats=("html", "pdf"))
    with pytest.raises(IgotError):
        write_exports(make_transcript(), tmp_path, "../x")
    assert list(tmp_path.iterdir()) == []


def test_empty_transcript_writes_valid_files_saying_no_speech(tmp_path: Path):
    t = Transcript(source=Source("Silêncio", None, "/videos/silencio.mp4"), language="pt", duration=12.0)
    paths = write_exports(t, tmp_path, "silencio")
    page = read_page(paths["html"].read_text(encoding="utf-8"))
    assert page.phrases == [] and "No speech" in paths["html"].read_text(encoding="utf-8")
    assert "No speech" in paths["md"].read_text(encoding="utf-8")
    for fmt in ("srt", "vtt"):
        cues = read_cues(paths[fmt].read_text(encoding="utf-8"), vtt=fmt == "vtt")
        assert len(cues) == 1 and "No speech" in cues[0][2] and cues[0][0] < cues[0][1]
    assert Transcript.load(paths["json"]) == t


def test_transcript_without_speakers_has_no_fake_names():
    t = make_transcript()
    t.speakers = []
    for p in t.phrases:
        p.speaker = ""
    assert "Unknown speaker" not in to_html(t) + to_markdown(t) + to_srt(t) + to_vtt(t)
    assert read_cues(to_srt(t), vtt=False)[0][2] == t.phrases[0].text


# --- names and times --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "title, slug",
    [
        ("Entrevista com a Joana — São Paulo", "entrevista-com-a-joana-sao-paulo"),
        ("", "interview"),
        ("  ¿¡!? ", "interview"),
        ("Straße / Ærø: Ação #2", "strasse-aero-acao-2"),
        ("CON", "con-interview"),
        ("Çà et là: ÉLÈVE_ñandú", "ca-et-la-eleve-nandu"),
    ],
)
def test_slugify(title: str, slug: str):
    assert slugify(title) == slug


def test_slugify_long_title_cut_at_word():
    slug = slugify("palavra " * 30)
    assert len(slug) <= 80 and not slug.endswith("-") and slug.split("-")[-1] == "palavra"


def test_time_formats():
    assert format_clock(83.9) == "1:23"
    assert format_clock(3723) == "1:02:03"
    assert format_clock(-1) == "0:00"
    assert format_srt_time(83.456) == "00:01:23,456"
    assert format_vtt_time(83.456) == "00:01:23.456"
    assert format_srt_time(3600 * 12 + 0.0004) == "12:00:00,000"
