"""What someone with no account sees of a link a teammate shared (igot.team.shares): the quote,
who said it (or "Participant"), the interview's name (or nothing), and its clip; nothing else of
the library. A page of plain HTML, no script, small enough for a phone, that chat tools unfurl
(Open Graph and Twitter card tags: the quote, a still of the video, the clip, a player page).

What a link of each kind shows is one function of the library, registered in KINDS by `kind`:
a new kind (a report) is one function that returns a Shown.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from html import escape
from typing import Callable, Optional

from igot.errors import IgotError
from igot.outputs import highlights, reports
from igot.outputs.store import Library
from igot.team import shares
from igot.text import clean_text, format_clock, typed_line
from igot.transcript import Transcript
from igot.workspace.clips import Part
from igot.workspace.interviews import is_video, media_file
from igot.workspace.tags import quotes as tag_quotes

PARTICIPANT = "Participant"  # who said it, when the researcher hides the names
QUOTE_LINE = 300  # characters of a quote in a chat tool's preview


class Gone(IgotError):
    """What the link showed is no longer in the library (deleted), or the link opens nothing."""

    status = 404


@dataclass(frozen=True)
class Target:
    """What a link points at, and what it hides."""

    kind: str
    stem: str = ""
    thing: str = ""
    hide_names: bool = False
    hide_interview: bool = False


@dataclass(frozen=True)
class Quote:
    text: str
    who: str  # "" when the interview was never split by speaker
    interview: str  # "" when hidden
    at: float  # seconds into its recording
    clip: Optional[int] = None  # its own clip (a report's quotes), by index in Shown.clips


@dataclass(frozen=True)
class Section:
    heading: str
    text: str
    quotes: list[Quote]


@dataclass
class Shown:
    """What a link shows."""

    title: str  # the page's and the preview's title
    description: str  # the preview's text (the quote)
    sections: list[Section]
    clips: list[list[Part]] = field(default_factory=list)  # what /s/KEY/clip/N plays
    video: Optional[int] = None  # the clip at the top of the page (a highlight's, a reel)
    still: Optional[Part] = None  # where the preview's picture is taken from (a video recording)


Draw = Callable[[Library, Target], Shown]
KINDS: dict[str, Draw] = {}


def kind(name: str) -> Callable[[Draw], Draw]:
    def register(draw: Draw) -> Draw:
        KINDS[name] = draw
        return draw
    return register


def shown(lib: Library, target: Target) -> Shown:
    """What `target` shows now; Gone when it is no longer there."""
    draw = KINDS.get(target.kind)
    if draw is None:
        raise Gone(f"A link to a {target.kind} cannot be shown by this iGot.", "Upgrade iGot.")
    try:
        return draw(lib, target)
    except Gone:
        raise
    except IgotError as err:  # the interview, the highlight or the tag was deleted meanwhile
        raise Gone(str(err), "Share it again.") from None


def speaker_shown(t: Transcript, speaker_id: str, hide: bool) -> str:
    if hide:
        return PARTICIPANT
    for s in t.speakers:
        if s.id == speaker_id:
            return typed_line(s.name)
    return typed_line(speaker_id) if t.speakers else ""


def interview_shown(t: Transcript, stem: str, hide: bool) -> str:
    return "" if hide else typed_line(clean_text(t.source.title) or stem)


def clip_title(who: str, interview: str, start: float) -> str:
    """The title a shared clip opens with: only what the page shows."""
    return " · ".join(x for x in (who, interview, format_clock(start)) if x)


@kind(shares.HIGHLIGHT)
def highlight_shown(lib: Library, target: Target) -> Shown:
    t = lib.open(target.stem).transcript
    h = highlights.find(t, target.thing)
    who = speaker_shown(t, t.highlight_speaker(h), target.hide_names)
    interview = interview_shown(t, target.stem, target.hide_interview)
    quote = Quote(typed_line(clean_text(h.quote)), who, interview, h.start)
    media = media_file(t, lib.folder)
    parts = [Part(media, h.start, h.end, is_video(media), clip_title(who, interview, h.start))] if media else []
    title = " · ".join(x for x in (who or "A quote", interview) if x)
    return Shown(title, shorter(quote.text), [Section("", "", [quote])], [parts] if parts else [],
                 0 if parts else None, parts[0] if parts and parts[0].video else None)


def cited(lib: Library, opened: dict, stem: str, highlight_id: str, target: Target) -> tuple:
    """A highlight of a reel or a report: (the highlight, who said it, the interview, its recording
    or None) as the link shows them; each interview opened once (`opened`, by stem)."""
    if stem not in opened:
        t = lib.open(stem).transcript
        opened[stem] = (t, media_file(t, lib.folder))
    t, media = opened[stem]
    h = highlights.find(t, highlight_id)
    return (h, speaker_shown(t, t.highlight_speaker(h), target.hide_names),
            interview_shown(t, stem, target.hide_interview), media)


@kind(shares.REEL)
def reel_shown(lib: Library, target: Target) -> Shown:
    found = tag_quotes(lib.listing()[0], target.thing)
    if not found:
        raise Gone(f"No highlight has the tag {target.thing!r} any more.", "Share it again.")
    quotes, parts, opened = [], [], {}
    for q in found:
        h, who, interview, media = cited(lib, opened, q.stem, q.highlight, target)
        quotes.append(Quote(typed_line(q.quote), who, interview, q.start))
        if media is not None:
            parts.append(Part(media, q.start, q.end, is_video(media), clip_title(who, interview, q.start)))
    interviews = len({q.stem for q in found})
    title = f"{typed_line(target.thing) or 'Untagged'}: {len(found)} highlight{'s' * (len(found) != 1)}" + \
        ("" if target.hide_interview else f" from {interviews} interview{'s' * (interviews != 1)}")
    still = next((p for p in parts if p.video), None)
    return Shown(title, shorter(quotes[0].text), [Section("", "", quotes)], [parts] if parts else [],
                 0 if parts else None, still)


@kind(shares.REPORT)
def report_shown(lib: Library, target: Target) -> Shown:
    """A report: its title, each finding with the highlights behind it, each with its clip (a
    highlight deleted since is left out)."""
    found = reports.resolved(lib, lib.report(target.thing).report)
    sections, clips, opened, still = [], [], {}, None
    for finding in found.findings:
        quotes = []
        for q in finding.quotes:
            if q.removed:
                continue
            h, who, interview, media = cited(lib, opened, q.stem, q.highlight, target)
            clip = None
            if media is not None:
                part = Part(media, h.start, h.end, is_video(media), clip_title(who, interview, h.start))
                clip, still = len(clips), still or (part if part.video else None)
                clips.append([part])
            quotes.append(Quote(typed_line(q.quote), who, interview, h.start, clip))
        sections.append(Section("", typed_line(finding.text), quotes))
    title = typed_line(found.report.title) or "A report"
    first = next((s.text for s in sections if s.text), "") or next((q.text for s in sections for q in s.quotes), "")
    return Shown(title, shorter(first), sections, clips, None, still)


def shorter(text: str, n: int = QUOTE_LINE) -> str:
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


# --- the pages ---------------------------------------------------------------------------------------
CSS = """body{margin:0;font:17px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#1d2430;background:#f6f7f9}
main{max-width:760px;margin:0 auto;padding:1.2rem}video{width:100%;max-height:70vh;background:#000;border-radius:8px}
blockquote{margin:1rem 0 .3rem;font-size:1.25rem;line-height:1.45}.who{margin:0 0 1.2rem;color:#5b6472}
h1{font-size:1.3rem}h2{font-size:1.1rem;margin-top:2rem}ol{padding-left:1.2rem}li{margin-bottom:1rem}
footer{margin-top:2rem;font-size:.8rem;color:#5b6472}.gone{text-align:center;padding-top:20vh}
body.embed{background:#000}body.embed main{max-width:none;padding:0}body.embed video{max-height:100vh;border-radius:0}"""
STYLE_HASH = "sha256-" + base64.b64encode(hashlib.sha256(CSS.encode()).digest()).decode()
# No script at all; the page's own style (by its hash), its still and its clip; never framed but the player page.
POLICY = (f"default-src 'none'; style-src '{STYLE_HASH}'; img-src 'self'; media-src 'self'; base-uri 'none'; "
          "form-action 'none'; frame-ancestors {frames}")
HEADERS = {"X-Robots-Tag": "noindex, nofollow", "Referrer-Policy": "no-referrer", "Cache-Control": "private, no-store",
           "X-Content-Type-Options": "nosniff"}
GONE_TEXT = "This link was revoked or has expired."


def headers(embed: bool = False, media: bool = False) -> dict[str, str]:
    """A shared link's answers: never indexed, never cached (a revoked link is gone at once), no
    script; the player page alone may be framed, the clip and still loaded by other sites' previews."""
    found = dict(HEADERS)
    found["Content-Security-Policy"] = POLICY.format(frames="*" if embed else "'none'")
    found["Cross-Origin-Resource-Policy"] = "cross-origin" if media or embed else "same-origin"
    return found


def _head(title: str, extra: str = "") -> str:
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta name="robots" content="noindex, nofollow"><meta name="referrer" content="no-referrer">'
            f'<title>{escape(title)}</title>{extra}<style>{CSS}</style></head>')


def page(what: Shown, base: str) -> str:
    """The page of a link at `base` (https://HOST/s/KEY): the clip, the quotes, who and where."""
    a = lambda text: escape(text, quote=True)  # noqa: E731
    meta = [f'<meta property="og:title" content="{a(what.title)}">',
            f'<meta property="og:description" content="{a(what.description)}">',
            '<meta property="og:site_name" content="iGot">',
            f'<meta name="twitter:title" content="{a(what.title)}">',
            f'<meta name="twitter:description" content="{a(what.description)}">']
    if what.still is not None:
        meta += [f'<meta property="og:image" content="{a(base)}/still.jpg">',
                 f'<meta name="twitter:image" content="{a(base)}/still.jpg">']
    if what.video is not None:
        meta += ['<meta property="og:type" content="video.other">',
                 f'<meta property="og:video" content="{a(base)}/clip">',
                 f'<meta property="og:video:secure_url" content="{a(base)}/clip">',
                 '<meta property="og:video:type" content="video/mp4">',
                 '<meta property="og:video:width" content="1280"><meta property="og:video:height" content="720">',
                 '<meta name="twitter:card" content="player">',
                 f'<meta name="twitter:player" content="{a(base)}/embed">',
                 '<meta name="twitter:player:width" content="1280"><meta name="twitter:player:height" content="720">',
                 f'<meta name="twitter:player:stream" content="{a(base)}/clip">',
                 '<meta name="twitter:player:stream:content_type" content="video/mp4">']
    else:
        meta += ['<meta property="og:type" content="article">',
                 f'<meta name="twitter:card" content="{"summary_large_image" if what.still else "summary"}">']
    body = []
    if what.video is not None:
        body.append(video(f"{base}/clip", what.still is not None and f"{base}/still.jpg"))
    many = sum(len(s.quotes) for s in what.sections) > 1 or len(what.sections) > 1 or any(s.text for s in what.sections)
    if many:
        body.append(f"<h1>{escape(what.title)}</h1>")
    for section in what.sections:
        if section.heading:
            body.append(f"<h2>{escape(section.heading)}</h2>")
        if section.text:  # a report's finding
            body.append(f'<h2 class="finding">{escape(section.text)}</h2>')
        items = [quote_html(q, base) for q in section.quotes]
        body.append(f"<ol>{''.join(f'<li>{i}</li>' for i in items)}</ol>" if many else "".join(items))
    body.append("<footer>Shared from iGot by the team that made this research. The link may be revoked at any time.</footer>")
    return _head(what.title, "".join(meta)) + f"<body><main>{''.join(body)}</main></body></html>\n"


def quote_html(q: Quote, base: str) -> str:
    said = " · ".join(escape(x) for x in (q.who, q.interview, format_clock(q.at)) if x)
    clip = video(f"{base}/clip/{q.clip}", None) if q.clip is not None else ""
    return f"{clip}<blockquote>“{escape(q.text)}”</blockquote><p class=\"who\">— {said}</p>"


def video(src: str, poster) -> str:
    shown_poster = f' poster="{escape(poster, quote=True)}"' if poster else ""
    return (f'<video controls playsinline preload="metadata"{shown_poster} src="{escape(src, quote=True)}">'
            f'<a href="{escape(src, quote=True)}">Play the clip</a></video>')


def embed(what: Shown, base: str) -> str:
    """The player page another site may frame: the clip alone."""
    if what.video is None:
        return _head(what.title) + f"<body class=\"embed\"><main><blockquote>“{escape(what.description)}”</blockquote></main></body></html>\n"
    return _head(what.title) + f"<body class=\"embed\"><main>{video(f'{base}/clip', what.still is not None and f'{base}/still.jpg')}</main></body></html>\n"


def gone() -> str:
    """One page for every link that opens nothing: unknown, revoked, expired, switched off."""
    return _head("Link gone") + f'<body><main class="gone"><h1>{GONE_TEXT}</h1>' \
        "<p>Ask the person who sent it for a new one.</p></main></body></html>\n"


def target_of(share: shares.Share) -> Target:
    return Target(share.kind, share.stem, share.thing, share.hide_names, share.hide_interview)


def clip_parts(what: Shown, n: int) -> list[Part]:
    if not 0 <= n < len(what.clips) or not what.clips[n]:
        raise Gone("No such clip.", "")
    return what.clips[n]
