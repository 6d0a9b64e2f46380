"""Exports: what people read and play, made from a saved Transcript alone.

HTML and Markdown are for reading (one paragraph per speaker turn, every phrase a link to its
moment in the video), SRT and WebVTT are for video players, JSON is the transcript itself so any
export can be made again later.
"""

from __future__ import annotations

import html
import math
import re
import unicodedata
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from operator import attrgetter
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Optional, Sequence, Union
from urllib.parse import urlsplit

from igot.errors import IgotError
from igot.links import link_at
from igot.outputs import highlights as marks
from igot.outputs.spans import Span, even_spans, word_spans
from igot.runtime import changes
from igot.text import clean_text, format_clock
from igot.transcript import Highlight, Phrase, SummaryPoint, Transcript, Word

FORMATS = ("json", "html", "md", "srt", "vtt")  # each is also the file extension
SHOW_HIGHLIGHTS = ("json", "html", "md")  # the formats a change of highlights alone changes
MAX_CUE_SECONDS = 7.0
MAX_CUE_CHARS = 84  # two subtitle lines of 42 characters, the usual broadcast limit
MIN_CUE_MS = 100  # a cue with no duration is never shown
PARAGRAPH_PAUSE = 3.0  # without speaker labels, start a new paragraph after this much silence
NO_SPEECH = "No speech was found in this recording."
# The summary: what marks a quote nobody said, a point with no moment to check it against, and
# the line under a model's summary that tells the reader how to check it.
UNVERIFIED = "⚠ unverified quote"
UNVERIFIED_TITLE = "Not found in the transcript (as said by the person named): check it in the recording."
NO_MOMENT = "⚠ no linked moment"
SUMMARY_NOTE = "Written by a language model from the transcript: click a time to check a point in the recording."
OPENING_QUOTES, CLOSING_QUOTES = "“\"«„", "”\"»“"

# A summary to show: points from the summary stage, or plain strings (notes written by hand).
Summary = Sequence[Union[str, SummaryPoint]]

# Speaker colours, all at least 4.5:1 against white (WCAG AA), and border styles so that speakers
# stay apart when printed in grey or read by someone who doesn't see the colours.
PALETTE = ("#1f5fa8", "#b23a1e", "#1b7f4b", "#7b3fb2", "#8a5a00", "#0e7a83", "#b02f6b", "#4b5a6b")
BORDERS = ("solid", "dashed", "dotted", "double")


# --- names and times --------------------------------------------------------------------------
# NFKD splits "ã" into "a" + accent; these Latin letters have no decomposition, so spell them out.
_LATIN_LETTERS = {"ß": "ss", "æ": "ae", "Æ": "ae", "ø": "o", "Ø": "o", "œ": "oe", "Œ": "oe", "đ": "d", "Đ": "d",
                  "ł": "l", "Ł": "l", "þ": "th", "ð": "d"}
# A stem's longest length in UTF-8 bytes, "-2" and the like added for a taken name still under it:
# its files are named STEM.json (.html …) and written first as .STEM.json.1a2b3c4d.tmp beside
# (igot.runtime.changes), which must fit the 143 bytes eCryptfs allows (255 on most file systems).
MAX_STEM_BYTES = 100
MAX_STEM_CHARS = 80  # a title of Latin letters is cut here, as iGot always did


def ascii_slug(title: str, max_length: int = MAX_STEM_CHARS) -> str:
    """A file stem of ASCII letters and digits alone, lower case, words joined by '-': iGot's stems
    before 2026-11-28 (a title in another script became "interview"), kept to find the files named
    so and for the work folders (igot.pipeline.cache), whose names must not change under a run."""
    text = unicodedata.normalize("NFKD", title.translate(str.maketrans(_LATIN_LETTERS)))
    text = text.encode("ascii", "ignore").decode("ascii").lower()
    return _not_reserved(_within(re.sub(r"[^a-z0-9]+", "-", text).strip("-"), max_length, MAX_STEM_BYTES))


def slugify(title: str, max_length: int = MAX_STEM_CHARS) -> str:
    """A safe, readable file stem: the title's letters and digits in any script, lower case, words
    joined by '-'. Latin letters lose their accents ("São" -> "sao": the stems iGot always gave
    them); others stay as written (NFC), so "Интервью с Анной" is "интервью-с-анной", not
    "interview". At most MAX_STEM_CHARS characters and MAX_STEM_BYTES bytes, cut between words."""
    words, word = [], []
    # Lower case of the whole title: a Greek sigma's form depends on where in the word it is.
    for c in unicodedata.normalize("NFC", unicodedata.normalize("NFC", title).lower()):
        kept = _stem_letters(c)
        if kept is None:  # a space, a sign: the word ends
            if word:
                words.append("".join(word))
                word = []
        elif not (word and word[-1].isascii() and unicodedata.category(c)[0] == "M"):
            word.append(kept)  # but not an accent left on a Latin letter ("İ" lower-cased is "i" and a dot)
    if word:
        words.append("".join(word))
    return _not_reserved(_within("-".join(w for w in words if w), max_length, MAX_STEM_BYTES))


def _stem_letters(c: str) -> Optional[str]:
    """What a (lower-case) character of a title is in a stem: ASCII for a Latin letter or a digit
    that has an ASCII form, the character itself for another letter, digit or mark (a Hindi vowel
    sign, an Arabic vowel), "" for an invisible one (a zero-width joiner inside a Persian word), or
    None for what parts words."""
    if c in _LATIN_LETTERS or c == "ı":  # dotless i: Turkish
        return _LATIN_LETTERS.get(c, "i")
    if c.isascii():
        return c if c.isalnum() else None
    category = unicodedata.category(c)
    if category == "Cf":
        return ""
    if category[0] == "M":
        return c
    if category[0] not in "LN":
        return None
    base = [x for x in unicodedata.normalize("NFKD", c) if x.isalnum()]
    if base and all(x.isascii() for x in base):  # "é", "ﬁ", "１", "½": their ASCII, as in every stem iGot gave before
        return "".join(base).lower() or None
    return c


def _within(slug: str, max_chars: int, max_bytes: int) -> str:
    """`slug` within both lengths, cut at the last word that fits; a single long word (Japanese has
    no spaces) is cut between letters, never between a letter and its marks."""
    n = min(len(slug), max_chars)
    while len(slug[:n].encode("utf-8")) > max_bytes:
        n -= 1
    if n == len(slug) or slug[n] == "-":
        return slug[:n]
    if "-" in slug[:n]:
        return slug[:n].rsplit("-", 1)[0]
    while n > 0 and unicodedata.category(slug[n])[0] == "M":
        n -= 1
    return slug[:n]


def _not_reserved(slug: str) -> str:
    # Windows refuses these as file names, whatever the extension.
    if slug in ("con", "prn", "aux", "nul") or re.fullmatch(r"(com|lpt)[1-9]", slug):
        slug += "-interview"
    return slug or "interview"


def _ms(seconds: float) -> int:
    return max(0, round(seconds * 1000))


def _stamp(ms: int, decimal: str) -> str:
    h, rem = divmod(ms, 3_600_000)
    m, rem = divmod(rem, 60_000)
    s, ms = divmod(rem, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{decimal}{ms:03d}"


def format_srt_time(seconds: float) -> str:
    """'00:01:23,456'"""
    return _stamp(_ms(seconds), ",")


def format_vtt_time(seconds: float) -> str:
    """'00:01:23.456'"""
    return _stamp(_ms(seconds), ".")


# --- shared helpers ---------------------------------------------------------------------------
def safe_link(url: Optional[str]) -> Optional[str]:
    """Web, file and relative links only: a hand-edited JSON must not make a javascript: link."""
    if not url:
        return None
    if url.startswith(("https://", "http://")):
        return url  # nearly every link (an hour has ~3,000): urlsplit would say the same, slower
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return None
    return url if scheme in ("http", "https", "file", "") else None


def _label(t: Transcript, speaker_id: str) -> str:
    """The name a reader sees; none at all when the transcript was never split by speaker."""
    if not speaker_id and not t.speakers:
        return ""
    return t.speaker_name(speaker_id)


@dataclass
class Paragraph:
    """One speaker turn as people read it: consecutive phrases of one speaker."""

    speaker: str  # speaker id
    name: str  # what the reader sees; "" when the transcript was never split by speaker
    colour: int  # index into PALETTE and BORDERS, the same for a speaker all through the transcript
    phrases: list[Phrase]

    @property
    def start(self) -> float:
        return self.phrases[0].start


def speaker_turns(t: Transcript, ids: Optional[list[str]] = None) -> list[Paragraph]:
    """The transcript as paragraphs, one per speaker turn; empty phrases left out. `ids`:
    t.speaker_ids(), when already read (it reads every phrase)."""
    ids = t.speaker_ids() if ids is None else ids
    turns: list[Paragraph] = []
    for p in t.phrases:
        if not p.text.strip():  # what clean_text would make empty, without making it
            continue
        last = turns[-1].phrases[-1] if turns else None
        if last and last.speaker == p.speaker and (p.speaker or p.start - last.end < PARAGRAPH_PAUSE):
            turns[-1].phrases.append(p)
        else:
            turns.append(Paragraph(p.speaker, _label(t, p.speaker), ids.index(p.speaker), [p]))
    return turns


@dataclass
class Facts:
    """What the top of a page says about the interview; each format renders it its own way."""

    title: str
    video: Optional[str]  # a safe link to the video, when there is one
    file: Optional[str]  # the local file's name, when there is no video link
    language: Optional[str]
    duration: float  # seconds; 0 when unknown
    speakers: list[tuple[int, str]]  # (colour, name) of each speaker who says something, in order


def header_facts(t: Transcript, ids: Optional[list[str]] = None) -> Facts:
    """`ids`: t.speaker_ids(), when already read (it reads every phrase)."""
    video = safe_link(t.source.url)
    spoken = {p.speaker for p in t.phrases if p.text.strip()}
    return Facts(
        title=clean_text(t.source.title) or "Interview",
        video=video,
        file=_file_name(t.source.path) if t.source.path and not video else None,
        language=t.language,
        duration=t.length(),
        speakers=[(i, _label(t, s)) for i, s in enumerate(t.speaker_ids() if ids is None else ids)
                  if s in spoken and _label(t, s)],
    )


@dataclass
class Layout:
    """What the HTML and the Markdown pages both read of a transcript (each reads every phrase):
    made once when both are written (a correction in the workspace writes both for an hour)."""

    ids: list[str]  # t.speaker_ids()
    facts: Facts
    turns: list[Paragraph]
    index: dict[int, int]  # each phrase's place, by id()
    runs: dict[int, list[tuple[int, int, list[Highlight]]]]  # highlights.marked()


def laid_out(t: Transcript) -> Layout:
    ids = t.speaker_ids()
    return Layout(ids, header_facts(t, ids), speaker_turns(t, ids), {id(p): i for i, p in enumerate(t.phrases)},
                  marks.marked(t))


def facts_line(facts: Facts, text: Callable[[str], str], link: Callable[[str], str],
               name: Callable[[int, str], str]) -> list[str]:
    """The items of the line under the title, each written the way a format writes text,
    the video link and a speaker's name."""
    items = []
    if facts.video:
        items.append(link(facts.video))
    elif facts.file:
        items.append(f"File: {text(facts.file)}")
    if facts.language:
        items.append(f"Language: {text(facts.language)}")
    if facts.duration:
        items.append(f"Duration: {format_clock(facts.duration)}")
    if facts.speakers:
        items.append("Speakers: " + ", ".join(name(colour, who) for colour, who in facts.speakers))
    return items


def _file_name(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


# --- summary ----------------------------------------------------------------------------------
def summary_items(t: Transcript, summary: Optional[Summary]) -> list[Union[str, SummaryPoint]]:
    """What the Summary section shows: the summary given, else the transcript's own; empty ones left out."""
    items = t.summary if summary is None else summary
    return [item for item in items if clean_text(item if isinstance(item, str) else item.text)]


def from_model(items: Sequence[Union[str, SummaryPoint]]) -> bool:
    return any(isinstance(item, SummaryPoint) for item in items)


def point_segments(point: SummaryPoint) -> list[tuple[str, bool]]:
    """The point's text cut into (piece, is an unverified quote); a quote keeps its quotation marks.
    A quote that is not in the text (a hand-edited JSON) is shown at the end, still marked."""
    text = clean_text(point.text)
    pieces: list[tuple[str, bool]] = []
    missing: list[str] = []
    pos = 0
    for quote in (clean_text(q) for q in point.unverified_quotes):
        start = text.find(quote, pos) if quote else -1
        if start < 0:
            missing += [quote] if quote else []
            continue
        end = start + len(quote)
        if start > 0 and end < len(text) and text[start - 1] in OPENING_QUOTES and text[end] in CLOSING_QUOTES:
            start, end = start - 1, end + 1
        pieces += [(text[pos:start], False), (text[start:end], True)]
        pos = end
    pieces.append((text[pos:], False))
    for quote in missing:
        pieces += [(" ", False), (f"“{quote}”", True)]
    return [(piece, flagged) for piece, flagged in pieces if piece]


# --- HTML -------------------------------------------------------------------------------------
def page_code(name: str) -> str:
    """A page's style, script or HTML, shipped beside this code as a file of its own (igot/outputs/pages/)."""
    return resources.files("igot.outputs").joinpath("pages", name).read_text(encoding="utf-8")


CSS = page_code("transcript.css")  # the transcript page's style
TRANSCRIPT_PAGE = page_code("transcript.html")  # its HTML around what to_html() draws


def _html_phrase(p: Phrase, index: int, runs: Sequence[tuple[int, int, list[Highlight]]] = ()) -> str:
    """A phrase, with id "p-<index>" (its place in the transcript) for the library's search to
    link to: the same phrase gets the same anchor when the page is written again. `runs`: the
    characters highlights cover (highlights.marked), marked with their tags."""
    if not runs:
        return _plain_html_phrase(p.text, index, p.link, p.start, p.end)
    e = html.escape
    tags = lambda covering: ", ".join(dict.fromkeys(tag for h in covering for tag in h.tags)) or marks.UNTAGGED  # noqa: E731
    text = "".join(f'<mark class="hl" title="{e(tags(covering))}">{e(piece)}</mark>' if covering else e(piece)
                   for piece, covering in marks.pieces(clean_text(p.text), runs))
    return _html_phrase_around(text, index, p.link, p.start, p.end)


# A phrase no highlight touches is drawn once and kept: a highlight saved in the workspace draws
# its interview's page again, and an hour has ~1,500 phrases (an hour's page: ~35 ms to ~10 ms).
# The key is everything the drawing reads, so a changed phrase is drawn anew. ~4 MB when full.
PHRASES_KEPT = 16384


@lru_cache(maxsize=PHRASES_KEPT)
def _plain_html_phrase(text: str, index: int, link: Optional[str], start: float, end: float) -> str:
    return _html_phrase_around(html.escape(clean_text(text)), index, link, start, end)


def _html_phrase_around(text: str, index: int, link: Optional[str], start: float, end: float) -> str:
    """The phrase's element around its drawn `text`: a link to its moment, or a span."""
    e = html.escape
    first, last = format_clock(start), format_clock(end)
    when = first if first == last else f"{first}–{last}"
    link = safe_link(link)
    if link:  # a new tab, so the reader keeps their place in the transcript
        return f'<a class="phrase" id="p-{index}" href="{e(link)}" title="{when}" target="_blank" rel="noopener">{text}</a>'
    return f'<span class="phrase" id="p-{index}" title="{when}">{text}</span>'


def highlight_link(t: Transcript, h: Highlight) -> Optional[str]:
    """The video at a highlight's start, when the interview has a video link."""
    return safe_link(link_at(t.source.url, t.source.kind, h.start))


def _html_highlights(t: Transcript, ids: list[str]) -> str:
    """The Highlights section: every highlight under each of its tags, with who said it and when;
    `ids`: t.speaker_ids()."""
    groups = marks.by_tag(t)
    if not groups:
        return ""
    e = html.escape
    out = ['<section class="highlights">', "<h2>Highlights</h2>"]
    for tag, items in groups:
        out.append(f'<h3>{e(tag)} <span class="count">{len(items)}</span></h3>\n<ul>')
        for h in items:
            speaker = t.highlight_speaker(h)
            who = _label(t, speaker)
            colour = ids.index(speaker) if speaker in ids else 0
            clock = format_clock(h.start)
            link = highlight_link(t, h)
            at = t.phrase_at(h.start) if not link else None
            when = (f'<a href="{e(link)}" target="_blank" rel="noopener">{clock}</a>' if link
                    else f'<a href="#p-{at}">{clock}</a>' if at is not None else clock)
            by = (f'<span class="who s{colour}">{e(who)}</span>, ' if who else "") + when
            note = f'<span class="hl-note">{e(h.note)}</span>' if h.note else ""
            out.append(f'<li><q>{e(clean_text(h.quote))}</q> <span class="by">— {by}</span>{note}</li>')
        out.append("</ul>")
    out.append("</section>\n")
    return "\n".join(out)


def _html_point(item: Union[str, SummaryPoint]) -> str:
    """A summary bullet: its text, unverified quotes marked, then its times, each a link."""
    e = html.escape
    if isinstance(item, str):
        return e(clean_text(item))
    text = "".join(
        f'<mark class="unverified" title="{e(UNVERIFIED_TITLE)}">{e(piece)}</mark> <span class="flag">{UNVERIFIED}</span>'
        if flagged else e(piece)
        for piece, flagged in point_segments(item)
    )
    times = []
    for c in item.citations:
        link, clock = safe_link(c.link), format_clock(c.time)
        times.append(f'<a class="cite" href="{e(link)}" target="_blank" rel="noopener">[{clock}]</a>' if link
                     else f'<span class="cite">[{clock}]</span>')
    times = times or [f'<span class="flag">{NO_MOMENT}</span>']
    return f"{text} {' '.join(times)}"


def to_html(t: Transcript, *, summary: Optional[Summary] = None, layout: Optional[Layout] = None) -> str:
    """A standalone page (no external files) to read, share or print.

    `summary`: what the Summary section shows; None shows the transcript's own summary. `layout`:
    laid_out(t), when already made."""
    e = html.escape
    layout = layout or laid_out(t)
    ids, facts, index, runs = layout.ids, layout.facts, layout.index, layout.runs
    title = facts.title

    meta = facts_line(facts, e, lambda url: f'<a href="{e(url)}" target="_blank" rel="noopener">Open the video</a>',
                      lambda i, name: f'<span class="who s{i}">{e(name)}</span>')

    body = []
    for turn in layout.turns:
        head = (f'<b class="who">{e(turn.name)}</b>' if turn.name else "") + f'<span class="time">{format_clock(turn.start)}</span>'
        phrases = " ".join(_html_phrase(p, index[id(p)], runs.get(index[id(p)], ())) for p in turn.phrases)
        body.append(
            f'<div class="turn s{turn.colour}" data-speaker="{e(turn.speaker)}">\n'
            f'<div class="head">{head}</div>\n<p>{phrases}</p>\n</div>'
        )
    if not body:
        body.append(f'<p class="empty">{NO_SPEECH}</p>')

    summary_html = ""
    points = summary_items(t, summary)
    if points:
        items = "\n".join(f"<li>{_html_point(s)}</li>" for s in points)
        note = f'<p class="note">{SUMMARY_NOTE}</p>\n' if from_model(points) else ""
        summary_html = f'<section class="summary">\n<h2>Summary</h2>\n<ul>\n{items}\n</ul>\n{note}</section>\n'

    # One rule per speaker: colour and border style, the same in the turns and the speaker list.
    speaker_css = "\n".join(
        f".s{i} {{ --c: {PALETTE[i % len(PALETTE)]}; --b: {BORDERS[i % len(BORDERS)]}; }}" for i in range(len(ids))
    )
    checked = " Click any phrase to check it in the recording." if any(safe_link(p.link) for p in t.phrases) else ""
    sep = ' <span aria-hidden="true">·</span> '
    return TRANSCRIPT_PAGE.format(lang=e(t.language or "und"), title=e(title), css=CSS + speaker_css,
                                  meta=sep.join(meta), summary=summary_html, highlights=_html_highlights(t, ids),
                                  body="\n".join(body), checked=checked)


# --- Markdown ---------------------------------------------------------------------------------
def md_text(text: str) -> str:
    """Backslash-escape what Markdown would read as formatting, links or HTML."""
    return re.sub(r"([\\`*_\[\]<>#~])", r"\\\1", clean_text(text))


def md_url(url: str) -> str:
    # A space or a parenthesis would end the link target early.
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def _md_phrase(p: Phrase, runs: Sequence[tuple[int, int, list[Highlight]]] = ()) -> str:
    """A phrase; the words highlights cover in bold (highlights.marked)."""
    if not runs:
        return _plain_md_phrase(p.text, p.link)
    text = "".join(f"**{_md_inline(piece)}**" if covering else _md_inline(piece)
                   for piece, covering in marks.pieces(clean_text(p.text), runs))
    return _md_linked(text, p.link)


@lru_cache(maxsize=PHRASES_KEPT)  # as _plain_html_phrase
def _plain_md_phrase(text: str, link: Optional[str]) -> str:
    return _md_linked(_md_inline(clean_text(text)), link)


def _md_linked(text: str, link: Optional[str]) -> str:
    link = safe_link(link)
    return f"[{text}]({md_url(link)})" if link else text


def _md_highlights(t: Transcript) -> list[str]:
    """The Highlights section in Markdown, like _html_highlights."""
    groups = marks.by_tag(t)
    if not groups:
        return []
    out = ["## Highlights", ""]
    for tag, items in groups:
        out += [f"### {md_text(tag)} ({len(items)})", ""]
        for h in items:
            who = _label(t, t.highlight_speaker(h))
            link = highlight_link(t, h)
            clock = f"[{format_clock(h.start)}]({md_url(link)})" if link else format_clock(h.start)
            by = f"{md_text(who)}, {clock}" if who else clock
            note = f" _{md_text(h.note)}_" if h.note else ""
            out.append(f"- “{md_text(h.quote)}” — {by}{note}")
        out.append("")
    return out


def _md_inline(text: str) -> str:
    """md_text without trimming: pieces of a line keep the spaces between them."""
    return re.sub(r"([\\`*_\[\]<>#~])", r"\\\1", text)


def _md_point(item: Union[str, SummaryPoint]) -> str:
    """A summary bullet in Markdown; like _html_point."""
    if isinstance(item, str):
        line = md_text(item)
    else:
        line = "".join(f"{_md_inline(piece)} _({UNVERIFIED})_" if flagged else _md_inline(piece)
                       for piece, flagged in point_segments(item))
        times = [f"[\\[{format_clock(c.time)}\\]]({md_url(link)})" if (link := safe_link(c.link))
                 else f"\\[{format_clock(c.time)}\\]" for c in item.citations]
        line += " " + (" ".join(times) or f"_({NO_MOMENT})_")
    # At the start of a list item, "1." or "-" would open a nested list.
    return re.sub(r"^(\d+)([.)])", r"\1\\\2", re.sub(r"^([+-])", r"\\\1", line))


def to_markdown(t: Transcript, *, summary: Optional[Summary] = None, layout: Optional[Layout] = None) -> str:
    """The same page as the HTML, for notes tools and wikis. `layout`: laid_out(t), when already made."""
    layout = layout or laid_out(t)
    facts, index, runs = layout.facts, layout.index, layout.runs
    title = md_text(facts.title)
    meta = facts_line(facts, md_text, lambda url: f"[Open the video]({md_url(url)})",
                      lambda _, name: md_text(name))

    out = [f"# {title}", ""]
    if meta:
        out += [" · ".join(meta), ""]
    points = summary_items(t, summary)
    if points:
        out += ["## Summary", ""]
        out += [f"- {_md_point(item)}" for item in points]
        out += ["", f"_{SUMMARY_NOTE}_", ""] if from_model(points) else [""]
    out += _md_highlights(t)
    out += ["## Transcript", ""]
    turns = layout.turns
    for turn in turns:
        clock = format_clock(turn.start)
        head = f"**{md_text(turn.name)}** ({clock}):" if turn.name else f"**{clock}**"
        out += [f"{head} " + " ".join(_md_phrase(p, runs.get(index[id(p)], ())) for p in turn.phrases), ""]
    if not turns:
        out += [f"_{NO_SPEECH}_", ""]
    return "\n".join(out)


# --- subtitles --------------------------------------------------------------------------------
@dataclass
class Cue:
    start: float  # seconds, whole milliseconds
    end: float
    speaker: str  # the name shown, "" when the transcript has no speakers
    text: str


def _cut(text: str, start: float, end: float, spans: list[Span], max_seconds: float, max_chars: int) -> list[tuple[float, float, str]]:
    """A long phrase's text cut into cues at its words (`spans`)."""
    # Only cut between words: "don" + "'t" are two Whisper words but one word on screen.
    if " " in text:
        joined: list[Span] = []
        for s in spans:
            if joined and not text[s.c0 - 1].isspace():
                joined[-1] = Span(joined[-1].c0, s.c1, joined[-1].start, s.end)
            else:
                joined.append(s)
        spans = joined

    # Spread the phrase evenly over the fewest cues that fit, so it doesn't end on a one-word stub;
    # then cut whatever piece is still over a limit.
    n = max(math.ceil((end - start) / max_seconds), math.ceil(len(text) / max_chars))
    groups: list[list[Span]] = []
    last = -1
    for s in spans:
        by_time = ((s.start + s.end) / 2 - start) / (end - start) if end > start else 0.0
        by_chars = (s.c0 + s.c1) / 2 / len(text)
        index = max(last, min(n - 1, int(max(by_time, by_chars) * n)))
        if index != last:
            groups.append([])
            last = index
        groups[-1].append(s)
    pieces: list[list[Span]] = []
    for group in groups:
        pieces.append([])
        for s in group:
            piece = pieces[-1]
            if piece and (s.end - piece[0].start > max_seconds or s.c1 - piece[0].c0 > max_chars):
                pieces.append([])
            pieces[-1].append(s)

    # Cut the text at each piece's first word, so every character lands in exactly one cue.
    cuts = [0] + [piece[0].c0 for piece in pieces[1:]] + [len(text)]
    times = [start] + [min(max(piece[0].start, start), end) for piece in pieces[1:]] + [end]
    for i in range(1, len(times)):
        times[i] = max(times[i], times[i - 1])
    return [(times[i], times[i + 1], text[cuts[i]:cuts[i + 1]].strip()) for i in range(len(pieces))]


# A phrase's cues are cut once and kept (as _plain_html_phrase): a correction in the workspace
# writes the subtitles of its whole interview again, and an hour has ~1,500 phrases (the cuts and
# the cue lines were ~30 ms of the hour's two subtitle files; ~3 ms kept). The keys are everything
# the cutting reads: a phrase's text and times, and its words' when it is cut by them.
@lru_cache(maxsize=PHRASES_KEPT)
def _short_cues(text: str, start: float, end: float, max_seconds: float, max_chars: int) -> Optional[tuple]:
    """The phrase's one cue as ((start ms, end ms, text),), () when it says nothing, or None when it
    is too long to read at once (then its words cut it: _long_cues)."""
    text = clean_text(text)
    if not text:
        return ()
    end = max(end, start)
    if end - start <= max_seconds and len(text) <= max_chars:
        return ((_ms(start), _ms(end), text),)
    return None


@lru_cache(maxsize=PHRASES_KEPT)
def _long_cues(text: str, start: float, end: float, words: tuple, max_seconds: float, max_chars: int) -> tuple:
    """A long phrase's cues as ((start ms, end ms, text), ...); `words`: (text, start, end) of each."""
    text = clean_text(text)
    end = max(end, start)
    spans = word_spans(text, [Word(*w) for w in words]) or even_spans(text, start, end)
    return tuple((_ms(a), _ms(b), piece) for a, b, piece in _cut(text, start, end, spans, max_seconds, max_chars))


_WORD_KEY = attrgetter("text", "start", "end")  # what cutting a phrase reads of its words


def subtitle_cues(t: Transcript, max_seconds: float = MAX_CUE_SECONDS, max_chars: int = MAX_CUE_CHARS) -> list[Cue]:
    """Cues in order, never overlapping or going back in time, whatever the phrase times say."""
    cues: list[Cue] = []
    labels = {s: _label(t, s) for s in t.speaker_ids()}
    prev_end = 0
    for p in t.phrases:
        pieces = _short_cues(p.text, p.start, p.end, max_seconds, max_chars)
        if pieces is None:
            pieces = _long_cues(p.text, p.start, p.end, tuple(map(_WORD_KEY, p.words)), max_seconds, max_chars)
        for start, end, piece in pieces:
            s = start if start > prev_end else prev_end
            e = end if end > s + MIN_CUE_MS else s + MIN_CUE_MS
            cues.append(Cue(s / 1000, e / 1000, labels[p.speaker], piece))
            prev_end = e
    return cues


def _cues_or_notice(t: Transcript) -> list[Cue]:
    # An empty subtitle file looks broken to players and people alike: say why it is empty.
    return subtitle_cues(t) or [Cue(0.0, min(t.length(), 5.0) or 5.0, "", f"[{NO_SPEECH}]")]


def _cue_line(speaker: str, text: str) -> str:
    line = f"{speaker}: {text}" if speaker else text
    return line.replace("-->", "->")  # the one sequence that would end the cue early


# A cue's lines are written once and kept, as its cutting (_short_cues).
@lru_cache(maxsize=PHRASES_KEPT)
def _srt_cue(start: float, end: float, speaker: str, text: str) -> str:
    return f"{format_srt_time(start)} --> {format_srt_time(end)}\n{_cue_line(speaker, text)}\n"


def to_srt(t: Transcript, cues: Optional[list[Cue]] = None) -> str:
    """SubRip subtitles: one cue per phrase (long ones split), 'Name: text'. `cues`: the
    transcript's, when already made (the VTT's are the same)."""
    return "\n".join(f"{i}\n{_srt_cue(c.start, c.end, c.speaker, c.text)}"
                     for i, c in enumerate(cues if cues is not None else _cues_or_notice(t), 1))


def _vtt_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@lru_cache(maxsize=PHRASES_KEPT)
def _vtt_cue(start: float, end: float, speaker: str, text: str) -> str:
    voice = f"<v {_vtt_escape(speaker)}>" if speaker else ""
    return f"{format_vtt_time(start)} --> {format_vtt_time(end)}\n{voice}{_vtt_escape(_cue_line(speaker, text))}\n"


def to_vtt(t: Transcript, cues: Optional[list[Cue]] = None) -> str:
    """WebVTT subtitles: like the SRT, with a <v Name> voice tag players can style."""
    return "\n".join(["WEBVTT\n", *(_vtt_cue(c.start, c.end, c.speaker, c.text)
                                     for c in (cues if cues is not None else _cues_or_notice(t)))])


# --- files ------------------------------------------------------------------------------------
def render_exports(t: Transcript, formats: Iterable[str] = FORMATS, *, summary: Optional[Summary] = None) -> dict[str, str]:
    """Each format's text, {format: text}; nothing written. `summary` as in write_exports."""
    return dict(rendered(t, formats, summary=summary))


def rendered(t: Transcript, formats: Iterable[str] = FORMATS, *, summary: Optional[Summary] = None) -> Iterator[tuple[str, str]]:
    """(format, text) of each format, each made when reached: a change (igot.runtime.changes)
    writes one to disk while the next is made. `summary` as in write_exports."""
    formats = [formats] if isinstance(formats, str) else list(dict.fromkeys(formats))
    unknown = [f for f in formats if f not in FORMATS]
    if unknown:
        raise IgotError(f"Unknown export format: {', '.join(unknown)}.", f"Choose from {', '.join(FORMATS)}.")

    cues: list[Cue] = []  # made once for both subtitles, when first needed
    layouts: list[Layout] = []  # and once for both pages

    def subtitles() -> list[Cue]:
        cues[:] = cues or _cues_or_notice(t)
        return cues

    def layout() -> Layout:
        layouts[:] = layouts or [laid_out(t)]
        return layouts[0]

    render = {
        "json": t.to_json,
        "html": lambda: to_html(t, summary=summary, layout=layout()),
        "md": lambda: to_markdown(t, summary=summary, layout=layout()),
        "srt": lambda: to_srt(t, subtitles()),
        "vtt": lambda: to_vtt(t, subtitles()),
    }
    return ((fmt, render[fmt]()) for fmt in formats)


def export_paths(out_dir: Path, stem: str, formats: Iterable[str]) -> dict[str, Path]:
    """{format: out_dir/stem.format}, once the stem is checked to be a plain file name."""
    if not stem or "/" in stem or "\\" in stem or stem in (".", ".."):
        raise IgotError(f"Can't name export files {stem!r}.", "Use a plain file name, e.g. slugify(title).")
    return {fmt: Path(out_dir) / f"{stem}.{fmt}" for fmt in formats}


@contextmanager
def staged(texts: Union[Mapping[Path, str], Iterable[tuple[Path, str]]], folder: Optional[Path] = None) -> Iterator[None]:
    """Write every text beside its file, then, when the block ends without an error, put them
    all in place at once; if writing or the block fails, none is. `texts`: {path: text}, or
    (path, text) pairs made one by one (each is written while the next is made). `folder`: the
    library they belong to: then under its lock, and whole even if the process is killed half way
    (igot.runtime.changes)."""
    change = changes.Change(folder, texts)
    try:
        yield
    except BaseException:
        change.discard()
        raise
    if folder is None:
        change.commit()
        return
    with changes.locked(folder):
        change.commit()


def write_exports(
    t: Transcript,
    out_dir: Path,
    stem: str,
    formats: Iterable[str] = FORMATS,
    *,
    summary: Optional[Summary] = None,
) -> dict[str, Path]:
    """Write `out_dir/stem.<format>` for each format; returns {format: path}. All or none: a bug
    in one format, or a full disk, leaves every earlier file as it was.

    `summary`: what the HTML and Markdown show as the summary; None shows the transcript's own
    (which the JSON holds). For a transcript in a library (the library page, the Doc, the Sheet
    kept in step), igot.outputs.store.save is the one to call."""
    texts = render_exports(t, formats, summary=summary)
    paths = export_paths(out_dir, stem, texts)
    with staged({paths[fmt]: text for fmt, text in texts.items()}):
        pass
    return paths
