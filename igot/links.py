"""Video URLs: what kind of link a URL is, its canonical form, and links to a moment in it.

Every phrase in a transcript links to its moment in the video, so the URL we store must be one
that a time offset can be added to: one canonical form per video, whatever form the user pasted.
"""

from __future__ import annotations

import math
from pathlib import PurePosixPath
from urllib.parse import parse_qs, unquote, urlsplit

from igot.errors import IgotError

# Path endings of files a browser or ffmpeg plays directly (the "media" kind).
MEDIA_EXTENSIONS = frozenset(
    "aac aif aiff amr avi caf flac m4a m4b m4v mka mkv mov mp2 mp3 mp4 mpeg mpg oga ogg ogv "
    "opus wav wave weba webm wma wmv 3gp".split()
)

# Vimeo path words followed by the id of a collection, not of a video.
_VIMEO_COLLECTIONS = {"album", "channels", "groups", "showcase", "user"}


def is_url(text: str) -> bool:
    """True for an http(s) link; anything else is treated as a local path."""
    parts = urlsplit(text.strip())
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc)


def youtube_id(url: str) -> str | None:
    """The 11-character video id of any YouTube video URL form, or None."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    segments = [s for s in parts.path.split("/") if s]
    candidate = ""
    if host in ("youtu.be", "www.youtu.be"):
        candidate = segments[0] if segments else ""
    elif _on_domain(host, "youtube.com") or _on_domain(host, "youtube-nocookie.com"):
        if segments == ["watch"]:
            candidate = parse_qs(parts.query).get("v", [""])[0]
        elif len(segments) >= 2 and segments[0] in ("shorts", "embed", "live", "v", "e"):
            candidate = segments[1]
    return candidate if _is_youtube_id(candidate) else None


def video_kind_and_url(url: str) -> tuple[str, str]:
    """Classify a link as "youtube", "vimeo", "media" or "web", and give its canonical URL."""
    url = url.strip()
    if not is_url(url):
        raise IgotError(f"{url!r} is not a web link.", "Links must start with http:// or https://.")
    video = youtube_id(url)
    if video:
        return "youtube", f"https://www.youtube.com/watch?v={video}"
    vimeo = _vimeo_url(url)
    if vimeo:
        return "vimeo", vimeo
    # The fragment is only ever a browser-side hint (often an old #t=); links add their own.
    url = url.split("#", 1)[0]
    suffix = PurePosixPath(unquote(urlsplit(url).path)).suffix.lower().lstrip(".")
    return ("media" if suffix in MEDIA_EXTENSIONS else "web"), url


def link_at(url: str | None, kind: str, seconds: float) -> str | None:
    """A link that opens the video at `seconds`, or None when there is no URL to link to."""
    if url is None:
        return None
    # Floor, so that following a link never skips the first words of a phrase.
    t = max(0, math.floor(seconds)) if math.isfinite(seconds) else 0
    if kind == "youtube":
        video = youtube_id(url)
        if video:
            return f"https://www.youtube.com/watch?v={video}&t={t}s"
    if kind == "vimeo":
        vimeo = _vimeo_url(url)
        if vimeo:
            return f"{vimeo}#t={t}s"
    # W3C media fragment: browsers start a media file at #t=SECONDS.
    return f"{url.split('#', 1)[0]}#t={t}"


def _on_domain(host: str, domain: str) -> bool:
    return host == domain or host.endswith("." + domain)


def _is_youtube_id(text: str) -> bool:
    return len(text) == 11 and all(c.isascii() and (c.isalnum() or c in "-_") for c in text)


def _vimeo_url(url: str) -> str | None:
    """Canonical https://vimeo.com/ID[/HASH]; the hash is what lets others watch an unlisted video."""
    parts = urlsplit(url.strip())
    host = (parts.hostname or "").lower()
    if not _on_domain(host, "vimeo.com"):
        return None
    segments = [s for s in parts.path.split("/") if s]
    query_hash = parse_qs(parts.query).get("h", [""])[0]
    if host == "player.vimeo.com":
        if len(segments) >= 2 and segments[0] == "video" and segments[1].isdigit():
            return _vimeo_canonical(segments[1], query_hash)
        return None
    # The video id is the last number in the path, unless that number names an album, showcase...
    for i in range(len(segments) - 1, -1, -1):
        if segments[i].isdigit():
            if i > 0 and segments[i - 1] in _VIMEO_COLLECTIONS:
                return None
            after = segments[i + 1] if i + 1 < len(segments) else ""
            return _vimeo_canonical(segments[i], after if _is_hex(after) else query_hash)
    return None


def _vimeo_canonical(video: str, unlisted_hash: str) -> str:
    return f"https://vimeo.com/{video}/{unlisted_hash}" if _is_hex(unlisted_hash) else f"https://vimeo.com/{video}"


def _is_hex(text: str) -> bool:
    return len(text) >= 6 and all(c in "0123456789abcdef" for c in text.lower())
