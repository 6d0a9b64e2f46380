"""The interview library: every transcript in an output folder, one page and one search over all.

`write_library(folder)` (re)writes `folder/index.html`: one entry per interview JSON, newest
first, and a search box that finds phrases across all of them, in the browser, from file://.
`search(interviews, query)` is the same search for the terminal and the notebook.

Matching, the same in Python and in the page's JavaScript: text is normalised (accents and case
dropped, punctuation made spaces), every query word must start a word of the phrase or of its
speaker's name, in any order, and a "quoted phrase" must appear as whole words in that order.
"""

from __future__ import annotations

import html
import json
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Optional

from igot import export
from igot.errors import IgotError
from igot.links import link_at
from igot.transcript import Transcript

INDEX = "index.html"
CACHE = Path(".igot") / "library-cache.json"
CACHE_VERSION = 1
SUMMARY_POINTS = 3  # how many summary points each entry shows
# Accents that NFD splits off Latin, Greek and Cyrillic letters: "ç" is "c" + U+0327. Other
# scripts' marks (Devanagari vowel signs, say) are part of their letters and stay.
_MARKS = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
_NOT_WORD = re.compile(r"[\W_]+")
_NOT_WORD_KEEP_LINES = re.compile(r"[^\w\n]+|_+")
_QUOTED = re.compile(r'["“”«»„]([^"“”«»„]*)["“”«»„]?')


def normalize(text: str) -> str:
    """What search compares: 'Integração, já!' -> 'integracao ja'."""
    text = _MARKS.sub("", unicodedata.normalize("NFD", text)).lower()
    return " ".join(_NOT_WORD.sub(" ", text).split())


def _normalize_lines(texts: list[str]) -> list[str]:
    """normalize() of each text, padded with a space each side; done in one go (it is the
    costly part of a search over thousands of phrases)."""
    joined = _MARKS.sub("", unicodedata.normalize("NFD", "\n".join(texts))).lower()
    return [f" {' '.join(line.split())} " for line in _NOT_WORD_KEEP_LINES.sub(" ", joined).split("\n")]


def _normalize_mapped(text: str) -> tuple[str, list[int]]:
    """normalize(), with the index in `text` of each character of the result (for highlighting)."""
    out: list[str] = []
    where: list[int] = []
    for i, ch in enumerate(text):
        if not _MARKS.sub("", unicodedata.normalize("NFD", ch)):
            continue  # an accent typed on its own (already decomposed): dropped, as normalize() does
        piece = normalize(ch) or " "
        for c in piece:
            if c == " " and (not out or out[-1] == " "):
                continue
            out.append(c)
            where.append(i)
    if out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


# --- the interviews in a folder ---------------------------------------------------------------
@dataclass
class Interview:
    transcript: Transcript
    path: Path  # its JSON file
    date: datetime  # when it was transcribed: info["created"], else the JSON file's time

    @property
    def name(self) -> str:
        return export.clean_text(self.transcript.source.title) or self.path.stem

    @property
    def page(self) -> Path:
        """Its HTML transcript page, written next to the JSON."""
        return self.path.with_suffix(".html")

    def speaker_names(self) -> list[str]:
        return [name for _, name in export.header_facts(self.transcript).speakers]


def load_interviews(folder: Path | str) -> list[Interview]:
    """Every interview JSON directly in `folder`, newest first, its phrases without their words;
    other JSON files are passed over.

    What search needs of each file is kept in OUT/.igot/library-cache.json, by the file's time
    and size: with 200 one-hour interviews, reading every JSON again would cost each run ~10 s."""
    folder = Path(folder)
    cache = _read_cache(folder / CACHE)
    seen: dict[str, list] = {}
    interviews = []
    for path in sorted(folder.glob("*.json")):
        try:
            stat = path.stat()
            stamp = [stat.st_mtime_ns, stat.st_size]
            entry = cache.get(path.name)
            data = entry[1] if entry and entry[0] == stamp else _search_data(path)
            seen[path.name] = [stamp, data]
            if data is None:
                continue
            t = Transcript.from_dict(data)
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            continue  # not a transcript (or a damaged one): the library lists the others
        interviews.append(Interview(t, path, _date(t, path)))
    if seen.keys() != cache.keys() or any(cache[name][0] != entry[0] for name, entry in seen.items()):
        _write_cache(folder / CACHE, seen)
    interviews.sort(key=lambda i: (i.date, i.name), reverse=True)
    return interviews


def _search_data(path: Path) -> Optional[dict]:
    """The transcript in `path` without what search never reads (words, turns, links); None when
    the file is not a transcript."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or "source" not in data or not isinstance(data.get("phrases"), list):
        return None
    phrases = [{k: p[k] for k in ("speaker", "start", "end", "text") if k in p} for p in data["phrases"] if isinstance(p, dict)]
    return {**data, "turns": [], "phrases": phrases}


def _read_cache(path: Path) -> dict[str, list]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return data["files"] if data.get("version") == CACHE_VERSION and isinstance(data.get("files"), dict) else {}
    except (OSError, ValueError, KeyError, AttributeError):
        return {}


def _write_cache(path: Path, files: dict[str, list]) -> None:
    """Best effort: a folder we cannot write to is still searched, only more slowly."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        export._write_atomic(path, json.dumps({"version": CACHE_VERSION, "files": files}, ensure_ascii=False,
                                              separators=(",", ":")))
    except OSError:
        pass


def _date(t: Transcript, path: Path) -> datetime:
    created = t.info.get("created")
    if isinstance(created, str):
        try:
            when = datetime.fromisoformat(created.strip().replace("Z", "+00:00"))
            return when if when.tzinfo else when.replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)


def video_link(t: Transcript, seconds: float) -> Optional[str]:
    """The video at `seconds`: the web video when there is one, else the local media file."""
    if t.source.url:
        return export.safe_link(link_at(t.source.url, t.source.kind, seconds))
    if t.source.path:
        try:
            return f"{Path(t.source.path).resolve().as_uri()}#t={max(0, int(seconds))}"
        except ValueError:
            return None
    return None


# --- search -----------------------------------------------------------------------------------
@dataclass
class Query:
    words: list[str] = field(default_factory=list)  # normalised; each must start a word
    phrases: list[str] = field(default_factory=list)  # normalised "quoted phrases": whole words, in order

    @property
    def empty(self) -> bool:
        return not self.words and not self.phrases


def parse_query(text: str) -> Query:
    phrases = [normalize(m) for m in _QUOTED.findall(text)]
    rest = _QUOTED.sub(" ", text)
    return Query(words=list(dict.fromkeys(normalize(rest).split())), phrases=[p for p in phrases if p])


@dataclass
class Hit:
    interview: str  # its name
    speaker: str  # the speaker's name ("" when the transcript has no speakers)
    start: float  # seconds
    text: str  # the phrase
    phrase: int  # index into the transcript's phrases; the page's anchor is #p-<phrase>
    video: Optional[str]  # the video at that second
    page: str  # the transcript page at that phrase (file URI)
    marks: list[tuple[int, int]]  # character spans of `text` that matched, for highlighting
    doc: Optional[str] = None  # the interview's Google Doc, when iGot made one

    @property
    def link(self) -> str:
        return self.video or self.page


def search(interviews: Iterable[Interview], query: str | Query, speaker: str = "", interview: str = "",
           language: str = "") -> list[Hit]:
    """Phrases of every interview that match `query`, interview by interview (newest first), in
    order of time. `speaker` and `interview` keep only names that contain them (any case, accents);
    `language` only interviews in that language."""
    q = parse_query(query) if isinstance(query, str) else query
    if q.empty:
        return []
    want_speaker, want_interview = normalize(speaker), normalize(interview)
    hits = []
    for iv in interviews:
        t = iv.transcript
        if want_interview and want_interview not in normalize(iv.name):
            continue
        if language and (t.language or "") != language:
            continue
        names = {s: export.clean_text(t.speaker_name(s)) if (t.speakers or s) else "" for s in {p.speaker for p in t.phrases}}
        padded = {s: f" {normalize(n)} " for s, n in names.items()}
        texts = [export.clean_text(p.text) for p in t.phrases]
        for i, (p, text, hay) in enumerate(zip(t.phrases, texts, _normalize_lines(texts))):
            if want_speaker and want_speaker not in padded[p.speaker]:
                continue
            if all(f" {w}" in hay or f" {w}" in padded[p.speaker] for w in q.words) and \
                    all(f" {ph} " in hay for ph in q.phrases):
                hits.append(Hit(iv.name, names[p.speaker], p.start, text, i, video_link(t, p.start),
                                f"{iv.page.resolve().as_uri()}#p-{i}", _marks(text, q), t.info.get("google_doc")))
    return hits


def _marks(text: str, q: Query) -> list[tuple[int, int]]:
    """Where the query's words and phrases are in `text`, as merged character spans."""
    norm, where = _normalize_mapped(text)
    hay = f" {norm} "
    spans = []
    for needle, whole in [(w, False) for w in q.words] + [(ph, True) for ph in q.phrases]:
        at = hay.find(f" {needle}")
        while at >= 0:
            end = at + 1 + len(needle)
            if not whole or hay[end] == " ":
                # at+1 in hay is at in norm; the end is past the last matched character's source.
                spans.append((where[at], where[end - 2] + 1))
            at = hay.find(f" {needle}", at + 1)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


# --- the page ---------------------------------------------------------------------------------
def _link_parts(t: Transcript) -> Optional[list[str]]:
    """The video link around its seconds, [before, after]: the page makes each hit's link from
    these and the phrase's start, rather than storing 300,000 links."""
    probe = 987654321
    link = video_link(t, probe)
    if not link or str(probe) not in link:
        return None
    before, _, after = link.partition(str(probe))
    return [before, after]


def page_data(interviews: list[Interview], folder: Path) -> dict:
    """What the page searches: per interview its facts and, per phrase, start second, speaker and
    text (the texts joined by newlines: no quotes and commas per phrase)."""
    out = []
    for iv in interviews:
        t = iv.transcript
        ids = export._speaker_ids(t)
        points = export.summary_items(t, None)[:SUMMARY_POINTS]
        out.append({
            "name": iv.name,
            "date": iv.date.date().isoformat(),
            "duration": export.format_clock(export._duration(t)) if export._duration(t) else "",
            "language": t.language or "",
            "speakers": [export.clean_text(t.speaker_name(s)) if (t.speakers or s) else "" for s in ids],
            "spoken": iv.speaker_names(),
            "summary": [export.clean_text(p if isinstance(p, str) else p.text) for p in points],
            "page": _relative(iv.page, folder),
            "video": video_link(t, 0) if (t.source.url or t.source.path) else None,
            "link": _link_parts(t),
            "t": [int(max(0.0, p.start)) for p in t.phrases],
            "s": [ids.index(p.speaker) for p in t.phrases],
            "x": "\n".join(export.clean_text(p.text) for p in t.phrases),
        })
    return {"interviews": out}


def _relative(path: Path, folder: Path) -> str:
    try:
        return path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_uri()


def _script_json(data: dict) -> str:
    """JSON safe inside <script>: no '</script>' or '<!--' can end or confuse the element."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c").replace(
        "\u2028", "\\u2028").replace("\u2029", "\\u2029")


def library_html(interviews: list[Interview], folder: Path) -> str:
    """The library page: the interviews, newest first, and a search over all their phrases."""
    e = html.escape
    entries = []
    for iv in interviews:
        t = iv.transcript
        facts = export.header_facts(t)
        meta = [e(iv.date.date().isoformat())]
        meta += export.facts_line(facts, e, lambda url: f'<a href="{e(url)}" target="_blank" rel="noopener">Open the video</a>',
                                  lambda _, name: e(name))
        points = export.summary_items(t, None)[:SUMMARY_POINTS]
        summary = "".join(f"<li>{e(export.clean_text(p if isinstance(p, str) else p.text))}</li>" for p in points)
        entries.append(
            f'<li class="interview"><a class="title" href="{e(_relative(iv.page, folder))}">{e(iv.name)}</a>'
            f'<p class="meta">{" · ".join(meta)}</p>' + (f'<ul class="points">{summary}</ul>' if summary else "") + "</li>"
        )
    listing = "\n".join(entries) or '<li class="empty">No interviews yet: run <code>igot run</code> and they appear here.</li>'
    count = f"{len(interviews)} interview{'s' * (len(interviews) != 1)}"
    phrases = sum(len(iv.transcript.phrases) for iv in interviews)
    return PAGE.format(count=count, phrases=f"{phrases:,}", listing=listing,
                       data=_script_json(page_data(interviews, folder)), script=SCRIPT, css=LIBRARY_CSS)


def write_library(folder: Path | str, interviews: Optional[list[Interview]] = None) -> Path:
    """(Re)write folder/index.html from every interview JSON in `folder` (or the `interviews`
    already loaded from it); returns its path."""
    folder = Path(folder)
    if not folder.is_dir():
        raise IgotError(f"No output folder {folder}.", "Give the folder iGot wrote the interviews to (--out).")
    path = folder / INDEX
    try:
        export._write_atomic(path, library_html(load_interviews(folder) if interviews is None else interviews, folder))
    except OSError as err:
        raise IgotError(f"Could not write {path}: {err.strerror or err}.", "Check that you can write to that folder.") from err
    return path


LIBRARY_CSS = """
:root { color-scheme: light; --ink: #1d2430; --muted: #5b6472; --line: #e2e5ea; }
* { box-sizing: border-box; }
body { margin: 0; background: #f5f6f8; color: var(--ink);
  font: 16px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 58rem; margin: 2rem auto; padding: 2rem 2.5rem; background: #fff;
  border: 1px solid var(--line); border-radius: 12px; }
h1 { font-size: 1.6rem; margin: 0 0 .3rem; }
h2 { font-size: .78rem; letter-spacing: .08em; text-transform: uppercase; color: var(--muted);
  margin: 2rem 0 .8rem; padding-bottom: .4rem; border-bottom: 1px solid var(--line); }
.meta { margin: 0; color: var(--muted); font-size: .88rem; }
.meta a { color: inherit; }
.search { display: flex; flex-wrap: wrap; gap: .5rem; margin-top: 1.2rem; }
.search input { flex: 1 1 16rem; font: inherit; padding: .55rem .8rem; border: 1px solid #b8bfca; border-radius: 8px; }
.search select { font: inherit; font-size: .9rem; padding: .4rem; border: 1px solid #b8bfca; border-radius: 8px; max-width: 12rem; }
.help { color: var(--muted); font-size: .82rem; margin: .4rem 0 0; }
#status { color: var(--muted); font-size: .9rem; margin: 1rem 0 .4rem; }
ol.hits { list-style: none; padding: 0; margin: 0; }
.hit { padding: .55rem 0; border-bottom: 1px solid var(--line); }
.hit .where { font-size: .85rem; color: var(--muted); }
.hit .where b { color: var(--ink); }
.hit .time { font-variant-numeric: tabular-nums; }
.hit .text { margin: .15rem 0 0; }
.hit a { color: #1f5fa8; }
mark { background: #fff1bf; color: inherit; border-radius: 2px; }
ul.interviews { list-style: none; padding: 0; margin: 0; }
.interview { padding: .8rem 0; border-bottom: 1px solid var(--line); }
.interview .title { font-weight: 600; font-size: 1.05rem; color: var(--ink); }
.points { margin: .3rem 0 0; padding-left: 1.2rem; font-size: .92rem; }
button.more { margin-top: .8rem; font: inherit; padding: .35rem .9rem; border-radius: 8px; border: 1px solid #b8bfca; background: #fff; }
.empty { color: var(--muted); font-style: italic; }
@media (max-width: 640px) { main { margin: 0; padding: 1.2rem; border: 0; border-radius: 0; } }
"""

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>iGot interviews</title>
<style>{css}</style>
</head>
<body>
<main>
<header>
<h1>iGot interviews</h1>
<p class="meta">{count} · {phrases} phrases</p>
<form class="search" role="search" onsubmit="return false">
<input id="q" type="search" placeholder="Search every interview: words in any order, or &quot;an exact phrase&quot;" autocomplete="off" autofocus aria-label="Search">
<select id="interview" aria-label="Interview"><option value="">All interviews</option></select>
<select id="speaker" aria-label="Speaker"><option value="">All speakers</option></select>
<select id="language" aria-label="Language"><option value="">All languages</option></select>
</form>
<p class="help">Case and accents don't matter: integracao finds integração. A speaker's name finds what they said.</p>
</header>
<section id="results" hidden>
<p id="status" role="status"></p>
<ol class="hits" id="hits"></ol>
<button class="more" id="more" type="button" hidden>Show more</button>
</section>
<section>
<h2>Interviews</h2>
<ul class="interviews">
{listing}
</ul>
</section>
</main>
<script id="library-data" type="application/json">{data}</script>
<script>{script}</script>
</body>
</html>
"""

# The search. Same rules as igot.library.search: every text normalised once at load into one
# string, " words of phrase one \\n words of phrase two \\n…"; a query word is found with
# indexOf(" word") (a word start), which V8 runs over tens of megabytes in milliseconds, and the
# phrase it lands in is found by binary search over where each phrase starts.
SCRIPT = r"""
(() => {
'use strict';
const LIB = JSON.parse(document.getElementById('library-data').textContent).interviews;
const PAGE_SIZE = 100;
const MARKS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;
const PUNCTUATION = /[^\p{L}\p{N}\n ]+/gu;  // only runs that are not already single spaces: far fewer replacements
const norm = s => s.normalize('NFD').replace(MARKS, '').toLowerCase().replace(PUNCTUATION, ' ').replace(/\s+/g, ' ').trim();

// One haystack for everything; phrase k of the whole library starts at starts[k]. Built with a
// few whole-string operations (per-phrase strings cost seconds at 300,000 phrases).
const t0 = performance.now();
const all = LIB.map(iv => iv.x).join('\n').normalize('NFD').replace(MARKS, '').toLowerCase()
  .replace(PUNCTUATION, ' ').replace(/  +/g, ' ').replace(/ ?\n ?/g, '\n').replace(/^ | $/g, '');
const hay = ' ' + all.replaceAll('\n', ' \n ') + ' ';
const total = LIB.reduce((n, iv) => n + iv.t.length, 0);
const starts = new Int32Array(total + 1);
const owner = new Int32Array(total);   // interview of each phrase
const local = new Int32Array(total);   // its index in that interview
let k = 0;
LIB.forEach((iv, i) => {
  iv.texts = iv.x.split('\n');
  iv.speakerKeys = iv.speakers.map(n => ' ' + norm(n) + ' ');
  for (let j = 0; j < iv.t.length; j++, k++) { owner[k] = i; local[k] = j; }
});
for (let n = 1, at = hay.indexOf('\n'); n < total; n++, at = hay.indexOf('\n', at + 1)) starts[n] = at + 1;
starts[total] = hay.length + 1;
window.igotIndexMs = performance.now() - t0;

function parseQuery(text) {
  const phrases = [];
  const rest = text.replace(/["“”«»„]([^"“”«»„]*)["“”«»„]?/g, (_, p) => { const n = norm(p); if (n) phrases.push(n); return ' '; });
  const words = [...new Set(norm(rest).split(' ').filter(Boolean))];
  return {words, phrases};
}

function phraseAt(offset) {  // the last phrase starting at or before offset
  let lo = 0, hi = total - 1;
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (starts[mid] <= offset) lo = mid; else hi = mid - 1; }
  return lo;
}

function search(text, filter) {
  const q = parseQuery(text);
  if (!q.words.length && !q.phrases.length) return [];
  const fi = filter.interview === '' ? -1 : Number(filter.interview);
  const fs = filter.speaker ? norm(filter.speaker) : '';
  const fl = filter.language || '';
  // Per interview, which speakers' names a query word starts a word of.
  const bySpeaker = q.words.map(w => LIB.map(iv => iv.speakerKeys.map(n => n.includes(' ' + w))));
  const needles = q.words.map(w => ' ' + w).concat(q.phrases.map(p => ' ' + p + ' '));
  const ok = k => {
    const i = owner[k], iv = LIB[i];
    if (fi >= 0 && fi !== i) return false;
    if (fl && iv.language !== fl) return false;
    const s = iv.s[local[k]];
    if (fs && !iv.speakerKeys[s].includes(fs)) return false;
    const line = hay.slice(starts[k], starts[k + 1] - 1);
    for (let n = 0; n < needles.length; n++) {
      if (!line.includes(needles[n]) && !(n < q.words.length && bySpeaker[n][i][s])) return false;
    }
    return true;
  };
  // Drive the scan with the longest needle that only text can match; with none (a speaker's
  // name alone), look at every phrase.
  let drive = -1;
  needles.forEach((n, i) => {
    const nameToo = i < q.words.length && bySpeaker[i].some(a => a.some(Boolean));
    if (!nameToo && (drive < 0 || n.length > needles[drive].length)) drive = i;
  });
  const found = [];
  if (drive < 0) {
    for (let k = 0; k < total; k++) if (ok(k)) found.push(k);
    return found;
  }
  const needle = needles[drive];
  let at = hay.indexOf(needle);
  while (at >= 0) {
    const k = phraseAt(at);
    if (ok(k)) found.push(k);
    at = hay.indexOf(needle, starts[k + 1]);
  }
  return found;
}

// Highlight: normalise the phrase character by character, remembering where each came from.
function marks(text, q) {
  let out = '', where = [];
  for (let i = 0; i < text.length;) {
    const ch = String.fromCodePoint(text.codePointAt(i));
    const piece = ch.normalize('NFD').replace(MARKS, '') ? (norm(ch) || ' ') : '';  // a lone accent: dropped
    for (const c of piece) {
      if (c === ' ' && (!out || out.endsWith(' '))) continue;
      out += c; where.push(i);
    }
    i += ch.length;
  }
  if (out.endsWith(' ')) { out = out.slice(0, -1); where.pop(); }
  const h = ' ' + out + ' ', spans = [];
  const add = (needle, whole) => {
    for (let at = h.indexOf(' ' + needle); at >= 0; at = h.indexOf(' ' + needle, at + 1)) {
      const end = at + 1 + needle.length;
      if (whole && h[end] !== ' ') continue;
      const last = where[end - 2];
      spans.push([where[at], last + String.fromCodePoint(text.codePointAt(last)).length]);
    }
  };
  q.words.forEach(w => add(w, false));
  q.phrases.forEach(p => add(p, true));
  spans.sort((a, b) => a[0] - b[0]);
  const merged = [];
  for (const s of spans) {
    if (merged.length && s[0] <= merged[merged.length - 1][1]) merged[merged.length - 1][1] = Math.max(s[1], merged[merged.length - 1][1]);
    else merged.push(s);
  }
  return merged;
}

const esc = s => s.replace(/[&<>"']/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;'}[c]));
const clock = s => {
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, sec = s % 60;
  return (h ? h + ':' + String(m).padStart(2, '0') : String(m)) + ':' + String(sec).padStart(2, '0');
};
const $ = id => document.getElementById(id);

function hitHtml(k, q) {
  const iv = LIB[owner[k]], j = local[k], text = iv.texts[j], sec = iv.t[j];
  let shown = '', last = 0;
  for (const [a, b] of marks(text, q)) { shown += esc(text.slice(last, a)) + '<mark>' + esc(text.slice(a, b)) + '</mark>'; last = b; }
  shown += esc(text.slice(last));
  const who = iv.speakers[iv.s[j]];
  const video = iv.link ? `<a class="video" href="${esc(iv.link[0] + sec + iv.link[1])}" target="_blank" rel="noopener">video at ${clock(sec)}</a>` : '';
  return `<li class="hit"><div class="where"><b>${esc(iv.name)}</b> · <span class="time">${clock(sec)}</span>` +
    (who ? ` · <span class="who">${esc(who)}</span>` : '') + `</div><p class="text">${shown}</p>` +
    `<div class="where">${video}${video ? ' · ' : ''}<a class="page" href="${esc(iv.page + '#p-' + j)}">in the transcript</a></div></li>`;
}

let current = [], shownCount = 0, currentQuery = null;
function showMore() {
  const next = current.slice(shownCount, shownCount + PAGE_SIZE);
  $('hits').insertAdjacentHTML('beforeend', next.map(k => hitHtml(k, currentQuery)).join(''));
  shownCount += next.length;
  $('more').hidden = shownCount >= current.length;
}

function run() {
  const text = $('q').value;
  const filter = {interview: $('interview').value, speaker: $('speaker').value, language: $('language').value};
  const t = performance.now();
  current = search(text, filter);
  const ms = performance.now() - t;
  currentQuery = parseQuery(text);
  $('hits').innerHTML = '';
  shownCount = 0;
  const any = currentQuery.words.length || currentQuery.phrases.length;
  $('results').hidden = !any;
  if (!any) return {count: 0, ms};
  showMore();
  const n = current.length, ivs = new Set(current.map(k => owner[k])).size;
  $('status').textContent = n ? `${n} phrase${n === 1 ? '' : 's'} in ${ivs} interview${ivs === 1 ? '' : 's'}` : 'No phrase matches.';
  window.igotLast = {count: n, ms};
  return window.igotLast;
}

// Filters, from the data.
const options = (id, values) => { for (const [v, label] of values) $(id).insertAdjacentHTML('beforeend', `<option value="${esc(String(v))}">${esc(label)}</option>`); };
options('interview', LIB.map((iv, i) => [i, iv.name]));
options('speaker', [...new Set(LIB.flatMap(iv => iv.spoken))].sort((a, b) => a.localeCompare(b)).map(n => [n, n]));
options('language', [...new Set(LIB.map(iv => iv.language).filter(Boolean))].sort().map(l => [l, l]));

let timer = 0;
$('q').addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(run, 120); });
for (const id of ['interview', 'speaker', 'language']) $(id).addEventListener('change', run);
$('more').addEventListener('click', showMore);
window.igotSearch = (text, filter) => search(text, Object.assign({interview: '', speaker: '', language: ''}, filter || {})).length;
window.igotRun = run;
if ($('q').value) run();  // the browser kept the query (back button)
})();
"""


def hit_line(h: Hit, bold: bool = False) -> str:
    """One hit on one line: interview, time, speaker, the phrase (matches in bold on a terminal), link."""
    text, last = "", 0
    for a, b in h.marks:
        part = h.text[a:b]
        text += h.text[last:a] + (f"\033[1m{part}\033[0m" if bold else part)
        last = b
    text += h.text[last:]
    who = f"{h.speaker}: " if h.speaker else ""
    return f"{h.interview} · {export.format_clock(h.start)} · {who}{text} · {h.link}"
