"""Reports: a title and findings a researcher writes from one or more tags or themes, each finding
with the highlights behind it, from any interviews.

A report is kept as one file of its own, OUT/reports/ID.json, written only through the library's
store (igot.outputs.store.Library: make_report, change_report, delete_report), each change named
by the version (a hash of the file) the page read. One file per report: two people writing two
reports never refuse each other's change, a damaged file costs that report alone, and a change is
one file put in place by its rename (whole or not at all, no journal).

A report keeps which highlights it cites (the interview's stem and the highlight's id), never the
quotes themselves: `resolved` reads them from the interviews as they are now, so a word corrected
since shows in the report and its exports, and a highlight deleted since shows as removed. The
exports (Markdown, HTML, the Google Doc's HTML) are made when asked, from the report resolved then:
kept ones would be wrong after every correction of an interview it cites.

Its id is random ("r-" and 16 hex digits), never made from its title: two reports of one title are
two reports, a rename keeps its file, and the id is safe as a file name and in an address.
"""

from __future__ import annotations

import html
import json
import re
import uuid
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Callable, Optional, Protocol, Sequence
from urllib.parse import quote

from igot.errors import IgotError
from igot.outputs import conflicts, export, highlights
from igot.outputs.library import Interview
from igot.text import clean_text, format_clock, typed_line, without_controls

FOLDER = "reports"  # OUT/reports/ID.json
FORMAT = 1  # the file's "igot_report": what this iGot writes and reads
ID = re.compile(r"r-[0-9a-f]{16}")
MAX_FILE_BYTES = 1024 * 1024  # a report's file: a hundred findings of 2,000 characters is ~250 kB
TITLE_MAX = 200
FINDING_MAX = 4000  # characters in one finding's text
FINDINGS_MAX = 100
CITED_MAX = 100  # highlights under one finding
SOURCES_MAX = 20  # tags and themes a report is made from
THEME_MAX = 500  # highlights a theme source names
UNTITLED = "Untitled report"
TAG, THEME = "tag", "theme"
REMOVED = "This highlight was removed from its interview."
DOC_LINK = re.compile(r"https://docs\.google\.com/document/d/[A-Za-z0-9_-]+(/[A-Za-z0-9_./?=&-]*)?$")


class ReportError(IgotError):
    """A report that cannot be kept as asked: nothing is changed."""


# --- the model ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Source:
    """What a report was made from: a tag (its highlights are those with it now), or a theme of the
    Themes board (the highlights it held when the report was made: a theme's id changes with them)."""

    kind: str  # TAG or THEME
    name: str  # the tag, or the theme's name as the board showed it
    highlights: tuple[str, ...] = ()  # a theme's highlights, "STEM/ID" each; () for a tag


@dataclass(frozen=True)
class Cited:
    """A highlight behind a finding: interview `stem`'s highlight `highlight`."""

    stem: str
    highlight: str


@dataclass(frozen=True)
class Finding:
    text: str
    highlights: tuple[Cited, ...] = ()


@dataclass(frozen=True)
class Report:
    id: str
    title: str
    sources: tuple[Source, ...] = ()
    findings: tuple[Finding, ...] = ()
    made_by: str = ""  # who made it ("" in a one-person library)
    changed_by: str = ""  # who changed it last
    made: str = ""  # ISO 8601, UTC
    changed: str = ""
    # Its Google Doc, once sent ({"folder": Drive folder id, "doc": link}): a later send updates it.
    google_doc: Optional[dict] = None


@dataclass(frozen=True)
class KeptReport:
    """A report as its file is now, and the version a change must name."""

    report: Report
    version: str


def new_id() -> str:
    return "r-" + uuid.uuid4().hex[:16]


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


# --- what a change may hold ---------------------------------------------------------------------
def checked_title(title: object) -> str:
    if not isinstance(title, str):
        raise ReportError("A report's title must be text.", "Type a title.")
    title = typed_line(title)
    if len(title) > TITLE_MAX:
        raise ReportError(f"The title is {len(title)} characters long.", f"Keep a title to {TITLE_MAX} characters.")
    return title or UNTITLED


def checked_sources(sources: object) -> tuple[Source, ...]:
    """The tags and themes a report is made from, as the page sends them: [{"kind": "tag", "name":
    ...} or {"kind": "theme", "name": ..., "highlights": ["STEM/ID", ...]}], at least one."""
    if not isinstance(sources, list) or not sources:
        raise ReportError("A report is made from one or more tags or themes.", "Choose them on a tag's page or the Themes board.")
    if len(sources) > SOURCES_MAX:
        raise ReportError(f"{len(sources)} tags and themes chosen.", f"Make a report from at most {SOURCES_MAX}.")
    found: dict[tuple, Source] = {}
    for given in sources:
        if not isinstance(given, dict) or given.get("kind") not in (TAG, THEME) or not isinstance(given.get("name"), str):
            raise ReportError(f"{str(given)[:80]!r} is not a tag or a theme.", "Choose them on a tag's page or the Themes board.")
        name = typed_line(given["name"])[:TITLE_MAX]
        if given["kind"] == TAG:
            source = Source(TAG, highlights.clean_tag(name))
        else:
            keys = given.get("highlights")
            if not isinstance(keys, list) or not keys or len(keys) > THEME_MAX or not all(isinstance(k, str) for k in keys):
                raise ReportError(f"The theme {name!r} names no highlights.", "Choose it again on the Themes board.")
            cited = [checked_cited(*k.split("/", 1)) if "/" in k else None for k in keys]
            if None in cited:
                raise ReportError(f"The theme {name!r} names a highlight that is not STEM/ID.", "Choose it again on the Themes board.")
            source = Source(THEME, name or "Theme", tuple(dict.fromkeys(f"{c.stem}/{c.highlight}" for c in cited if c)))
        found.setdefault((source.kind, highlights.tag_key(source.name), source.highlights), source)
    return tuple(found.values())


def checked_cited(stem: object, highlight: object) -> Optional[Cited]:
    """A cited highlight as named, when its names can be an interview's stem and a highlight's id."""
    for name in (stem, highlight):
        if not isinstance(name, str) or not name or len(name) > 200 or name.startswith(".") \
                or any(c in name for c in "/\\\x00:") or without_controls(name) != name:
            return None
    return Cited(stem, highlight)  # type: ignore[arg-type]


def checked_findings(findings: object) -> tuple[Finding, ...]:
    """The findings as the page sends them: [{"text": ..., "highlights": [{"stem", "highlight"}]}]."""
    if not isinstance(findings, list):
        raise ReportError("The findings must be sent as a list.", "Save the report from its page.")
    if len(findings) > FINDINGS_MAX:
        raise ReportError(f"{len(findings)} findings.", f"Keep a report to {FINDINGS_MAX} findings.")
    out = []
    for n, given in enumerate(findings, 1):
        if not isinstance(given, dict) or not isinstance(given.get("text", ""), str):
            raise ReportError(f"Finding {n} is not a text with highlights.", "Save the report from its page.")
        text = without_controls(given.get("text", "").replace("\r\n", "\n"), keep="\n\t").strip()
        if len(text) > FINDING_MAX:
            raise ReportError(f"Finding {n} is {len(text)} characters long.", f"Keep a finding to {FINDING_MAX} characters.")
        cited_given = given.get("highlights", [])
        if not isinstance(cited_given, list) or len(cited_given) > CITED_MAX:
            raise ReportError(f"Finding {n}'s highlights are not a list of at most {CITED_MAX}.", "Save the report from its page.")
        cited = []
        for c in cited_given:
            one = checked_cited(c.get("stem"), c.get("highlight")) if isinstance(c, dict) else None
            if one is None:
                raise ReportError(f"Finding {n} cites {str(c)[:80]!r}, which is not a highlight.", "Pick it again from the list.")
            cited.append(one)
        out.append(Finding(text, tuple(dict.fromkeys(cited))))
    return tuple(out)


# --- the file -----------------------------------------------------------------------------------
def file_text(r: Report) -> str:
    return json.dumps({
        "igot_report": FORMAT, "id": r.id, "title": r.title,
        "sources": [{"kind": s.kind, "name": s.name, **({"highlights": list(s.highlights)} if s.kind == THEME else {})}
                    for s in r.sources],
        "findings": [{"text": f.text, "highlights": [{"stem": c.stem, "highlight": c.highlight} for c in f.highlights]}
                     for f in r.findings],
        "made_by": r.made_by, "changed_by": r.changed_by, "made": r.made, "changed": r.changed,
        "google_doc": r.google_doc,
    }, ensure_ascii=False, indent=1) + "\n"


def from_bytes(data: bytes, report_id: str) -> Report:
    """The report in a file's bytes, checked as a stranger's file (anyone may write the folder):
    ReportError says what is wrong. `report_id`: the id its name gives, which it must hold."""
    if len(data) > MAX_FILE_BYTES:
        raise ReportError(f"it is over {MAX_FILE_BYTES // 1024} kB", "")
    try:
        given = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise ReportError(f"it is not JSON ({str(err)[:80]})", "") from None
    if not isinstance(given, dict) or given.get("igot_report") != FORMAT:
        raise ReportError("it is not a report this iGot writes", "")
    if given.get("id") != report_id:
        raise ReportError(f"it holds another report's id ({str(given.get('id'))[:40]!r})", "")
    try:
        doc = given.get("google_doc")
        doc = doc if isinstance(doc, dict) and isinstance(doc.get("doc"), str) and DOC_LINK.match(doc["doc"]) \
            and isinstance(doc.get("folder"), str) else None  # a planted javascript: link is never shown
        return Report(report_id, checked_title(given.get("title", "")),
                      checked_sources(given["sources"]) if given.get("sources") else (),
                      checked_findings(given.get("findings", [])),
                      conflicts.person(given.get("made_by", "")), conflicts.person(given.get("changed_by", "")),
                      _stamp(given.get("made")), _stamp(given.get("changed")),
                      {"folder": doc["folder"][:200], "doc": doc["doc"][:500]} if doc else None)
    except ReportError as err:
        raise ReportError(err.problem[:1].lower() + err.problem[1:].rstrip("."), "") from None


def _stamp(value: object) -> str:
    return typed_line(value)[:40] if isinstance(value, str) else ""


# --- a report with its quotes read from the interviews as they are now ----------------------------
class Listing(Protocol):
    def listing(self) -> tuple[list[Interview], list]: ...


@dataclass
class Quote:
    """A highlight behind a finding as its interview has it now (removed: no longer there)."""

    stem: str
    highlight: str
    interview: str = ""  # its name ("" when the interview is gone too)
    date: str = ""  # YYYY-MM-DD
    speaker: str = ""  # the name shown ("" when never split by speaker)
    colour: int = 0
    start: float = 0.0
    end: float = 0.0
    quote: str = ""
    note: str = ""
    tags: list[str] = field(default_factory=list)
    video: Optional[str] = None  # the web video at that moment, when there is one
    link: str = ""  # the interview at that moment in the workspace: "#/interview/STEM?t=START"
    removed: bool = False


@dataclass
class ResolvedFinding:
    text: str
    quotes: list[Quote]


@dataclass
class Resolved:
    report: Report
    findings: list[ResolvedFinding]

    def quotes(self) -> list[Quote]:
        return [q for f in self.findings for q in f.quotes]


def moment(stem: str, start: float) -> str:
    """The workspace's address of interview `stem` at `start` (relative: the page's own #fragment)."""
    return f"#/interview/{quote(stem, safe='')}?t={start:g}"


def quote_of(iv: Interview, h: Any) -> Quote:
    t = iv.transcript
    ids = t.speaker_ids()
    speaker = t.highlight_speaker(h)
    stem = iv.path.stem
    return Quote(stem, h.id, iv.name, iv.date.strftime("%Y-%m-%d"),
                 clean_text(t.speaker_name(speaker)) if (t.speakers or speaker) else "",
                 ids.index(speaker) if speaker in ids else 0, h.start, h.end, clean_text(h.quote), h.note, list(h.tags),
                 export.highlight_link(t, h), moment(stem, h.start))


def _by_key(interviews: Sequence[Interview]) -> tuple[dict[tuple[str, str], Quote], dict[str, Interview]]:
    stems = {iv.path.stem: iv for iv in interviews}
    return {(iv.path.stem, h.id): quote_of(iv, h) for iv in interviews for h in iv.transcript.highlights or []}, stems


def resolved(library: Listing, report: Report) -> Resolved:
    """`report` with each cited highlight read from its interview as the library has it now; one
    removed since (or whose interview is gone) is a Quote with `removed` set, its words unknown."""
    found, stems = _by_key(library.listing()[0])
    out = []
    for f in report.findings:
        quotes = []
        for c in f.highlights:
            q = found.get((c.stem, c.highlight))
            if q is None:
                iv = stems.get(c.stem)
                q = Quote(c.stem, c.highlight, iv.name if iv else "", removed=True)
            quotes.append(q)
        out.append(ResolvedFinding(f.text, quotes))
    return Resolved(report, out)


def candidates(library: Listing, report: Report) -> list[Quote]:
    """The highlights a finding may cite: those of the report's tags (as tagged now) and themes,
    from every interview, interview by interview in order of time, each once."""
    interviews = library.listing()[0]
    found, _ = _by_key(interviews)
    keys: dict[tuple[str, str], None] = {}
    for source in report.sources:
        if source.kind == THEME:
            keys.update(dict.fromkeys(tuple(k.split("/", 1)) for k in source.highlights))
    tags = [s.name for s in report.sources if s.kind == TAG]
    for iv in interviews:
        for h in iv.transcript.highlights or []:
            if any(highlights.has_tag(h, tag) for tag in tags):
                keys[(iv.path.stem, h.id)] = None
    order = {iv.path.stem: i for i, iv in enumerate(interviews)}
    return sorted((found[k] for k in keys if k in found), key=lambda q: (order[q.stem], q.start, q.end))


def drive_folder(library: Listing, report: Report) -> Optional[str]:
    """The Drive folder a report's Doc goes to: the one it has, else that of most of the interviews
    it cites that are in Drive, else the library's (most of its interviews'); None when the
    library does not use Drive."""
    if report.google_doc:
        return report.google_doc["folder"]
    interviews = library.listing()[0]
    cited = {c.stem for f in report.findings for c in f.highlights}

    def folders(ivs) -> Counter:
        return Counter(d["folder"] for iv in ivs if isinstance(d := iv.transcript.info.get("drive"), dict)
                       and isinstance(d.get("folder"), str) and d["folder"])

    found = folders([iv for iv in interviews if iv.path.stem in cited]) or folders(interviews)
    return found.most_common(1)[0][0] if found else None


# --- the exports: made when asked, from the report resolved then -----------------------------------
def _who(q: Quote) -> str:
    return ", ".join(x for x in (q.speaker, q.interview, format_clock(q.start)) if x)


def to_markdown(r: Resolved, base: str = "") -> str:
    """The report as Markdown: its title, then each finding with its quotes (who said it, in which
    interview, when), each linked to its moment in the workspace (`base` + "#/interview/..."; ""
    keeps the link relative) and to the video when there is one."""
    esc = export.md_text
    rep = r.report
    out = [f"# {esc(rep.title)}", ""]
    made = ", ".join(x for x in (f"made by {esc(rep.made_by)}" if rep.made_by else "", _from_line(rep)) if x)
    if made:
        out += [f"_{made[0].upper()}{made[1:]}._", ""]
    for n, f in enumerate(r.findings, 1):
        out += [f"## {n}. {esc(f.text.splitlines()[0]) if f.text else 'Finding'}", ""]
        rest = f.text.splitlines()[1:]
        if any(line.strip() for line in rest):
            out += [esc(line) if line.strip() else "" for line in rest] + [""]
        for q in f.quotes:
            if q.removed:
                out.append(f"- _{REMOVED}_ ({esc(q.interview or q.stem)})")
                continue
            links = [f"[open in iGot]({export.md_url(base + q.link)})"]
            links += [f"[video]({export.md_url(q.video)})"] if q.video else []
            out.append(f"- “{esc(q.quote)}” — {esc(_who(q))} · {' · '.join(links)}")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def _from_line(rep: Report) -> str:
    names = [f"{'tag' if s.kind == TAG else 'theme'} “{s.name}”" for s in rep.sources]
    return f"from the {', '.join(names)}" if names else ""


def _html_body(r: Resolved, base: str, link: Callable[[str], Optional[str]], muted: str) -> list[str]:
    e = html.escape
    rep = r.report
    out = [f"<h1>{e(rep.title)}</h1>"]
    made = ", ".join(x for x in (f"made by {rep.made_by}" if rep.made_by else "", _from_line(rep)) if x)
    if made:
        out.append(f'<p style="color:{muted}">{e(made[0].upper() + made[1:])}.</p>')
    for n, f in enumerate(r.findings, 1):
        lines = f.text.splitlines() or ["Finding"]
        out.append(f"<h2>{n}. {e(lines[0])}</h2>")
        out += [f"<p>{e(line)}</p>" for line in lines[1:] if line.strip()]
        items = []
        for q in f.quotes:
            if q.removed:
                items.append(f'<li><i style="color:{muted}">{e(REMOVED)}</i> ({e(q.interview or q.stem)})</li>')
                continue
            links = [f'<a href="{e(url)}">open in iGot</a>' for url in [link(base + q.link)] if url]
            links += [f'<a href="{e(url)}">video</a>' for url in [link(q.video or "")] if url]
            items.append(f"<li><blockquote>“{e(q.quote)}”</blockquote>"
                         f'<p style="color:{muted}">— {e(_who(q))}{" · " if links else ""}{" · ".join(links)}</p></li>')
        if items:
            out.append("<ul>" + "".join(items) + "</ul>")
    return out


def to_html(r: Resolved, base: str = "") -> str:
    """The report as a page of its own (no script, no outside file): as to_markdown."""
    e = html.escape
    body = _html_body(r, base, export.safe_link, "#666")
    return "\n".join([
        '<!doctype html>\n<html lang="und">',
        f'<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(r.report.title)}</title>"
        "<style>body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}"
        "ul{list-style:none;padding:0}blockquote{margin:.6rem 0 0;font-size:1.05rem}"
        "li p{margin:.2rem 0 .8rem;font-size:.9rem}</style></head>",
        "<body>", *body, "</body>\n</html>\n"])


def doc_html(r: Resolved, base: str = "") -> str:
    """The report as HTML for Drive's conversion into a Google Doc: as to_html, with web links
    only (a Doc keeps no relative link: the workspace's links need `base`, its http(s) address)."""
    e = html.escape

    def web(url: str) -> Optional[str]:
        url = export.safe_link(url) or ""
        return url if url.lower().startswith(("http://", "https://")) else None

    return "\n".join(['<!doctype html>\n<html lang="und">',
                      f'<head><meta charset="utf-8"><title>{e(r.report.title)}</title></head>', "<body>",
                      *_html_body(r, base, web, "#666666"),
                      '<p style="color:#666666;font-size:9pt">Made with iGot from the interviews\' highlights.</p>',
                      "</body>\n</html>\n"])


def changed(r: Report, *, title: Optional[str] = None, findings: Optional[tuple[Finding, ...]] = None,
            by: str = "") -> Report:
    return replace(r, title=r.title if title is None else title, findings=r.findings if findings is None else findings,
                   changed_by=conflicts.person(by), changed=now())


# --- its Google Doc -------------------------------------------------------------------------------
NO_DRIVE = ("This library's interviews are not in Google Drive, so a report has no Drive folder to go to.",
            "Download its Markdown or HTML instead; or send an interview to Drive first (igot run --gdoc FOLDER).")


class Sending(Listing, Protocol):
    def report(self, report_id: object) -> KeptReport: ...

    def keep_report_doc(self, report_id: object, folder_id: str, doc: str) -> KeptReport: ...


def to_drive(library: Sending, report_id: str, service: Any, base: str = "") -> KeptReport:
    """Report `report_id` as a Google Doc in its Drive folder (drive_folder), through the Drive
    code the transcripts use (igot.outputs.gdoc.upload_doc): the Doc it has updated in place (same
    link), else a new one, whose link is kept in the report's file. Its quotes are read now.
    `base`: the workspace's http(s) address, so that each quote links to its moment there."""
    from igot.outputs import gdoc  # the Google client is needed only here

    kept = library.report(report_id)
    folder_id = drive_folder(library, kept.report)
    if folder_id is None:
        raise ReportError(*NO_DRIVE)
    page = doc_html(resolved(library, kept.report), base)
    had = gdoc.doc_id(kept.report.google_doc["doc"]) if kept.report.google_doc else None
    if had and gdoc.in_drive(service, had):
        _, url = gdoc.upload_doc(service, page, kept.report.title, folder_id, replacing=had)
    else:
        _, url = gdoc.upload_doc(service, page, kept.report.title, folder_id)
    return library.keep_report_doc(report_id, folder_id, url)
