"""Video URLs: what kind of link a URL is, its canonical form, and links to a moment in it.

Every phrase in a transcript links to its moment in the video, so the URL we store must be one
that a time offset can be added to: one canonical form per video, whatever form the user pasted.

A link is also someone else's say over what iGot asks for: is_local_address says which addresses
a link (and every page and file it leads to) may not reach unless the user allows local links.
"""

from __future__ import annotations

import ipaddress
import math
import socket
from pathlib import PurePosixPath
from typing import Sequence, Union
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


# NAT64's well-known prefix: on an IPv6-only network, DNS64 gives 64:ff9b::a.b.c.d for a site that
# has only the IPv4 address a.b.c.d, and the gateway connects to that.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

# Which local addresses links may lead to: none (False), all (True), or those named, each "HOST" or
# "HOST:PORT" (a name as the link writes it, or an address): a media server at home, and only it.
LocalLinks = Union[bool, Sequence[str]]


def is_local_address(address: str) -> bool:
    """True for an address of this computer or of a network it is on, which a link from someone
    else must not make iGot ask (a router's or a dev server's page that acts on a GET): loopback,
    private (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, where clouds answer
    with their credentials, fe80::/10), CGNAT (100.64/10), unspecified, multicast, reserved and
    documentation ranges; anything not global. IPv6 forms wrapping an IPv4 address are judged by
    it. Something that is not an address at all is local too: it cannot be shown to be public."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])  # fe80::1%eth0: the zone says nothing
    except ValueError:
        return True
    if isinstance(ip, ipaddress.IPv6Address):
        # an IPv4 address in IPv6 clothes is the IPv4 address that is connected to
        if ip.ipv4_mapped is not None:
            return is_local_address(str(ip.ipv4_mapped))
        if ip in _NAT64:
            return is_local_address(str(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)))
        if ip.sixtofour is not None and is_local_address(str(ip.sixtofour)):
            return True
    return not ip.is_global or ip.is_multicast or ip.is_reserved or ip.is_unspecified


def is_loopback(host: str) -> bool:
    """`host` (a name or an address, no port) is this computer itself: localhost, 127.x, ::1."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def local_address_of(host: str, port: int | None = None) -> str | None:
    """The first local address (is_local_address) that `host` names or resolves to, or None when
    all are public. A name that does not resolve gives None: it reaches nothing, and the download
    says so in its own words."""
    host = host.strip("[]")
    try:
        return address if is_local_address(address := str(ipaddress.ip_address(host.split("%", 1)[0]))) else None
    except ValueError:
        pass  # a name, not an address
    try:
        found = socket.getaddrinfo(host, port or 443, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return None
    return next((str(sockaddr[0]) for *_, sockaddr in found if is_local_address(str(sockaddr[0]))), None)


def local_links(given: str) -> list[str]:
    """The local servers allowed (`--allow-local-server HOST[:PORT]`, here joined by commas) as the
    list RunOptions keeps, each checked."""
    found = [part.strip() for part in given.split(",") if part.strip()]
    for entry in found:
        parts = urlsplit(f"//{entry}")
        try:
            port = parts.port
        except ValueError:
            port = None
            parts = None
        if parts is None or not parts.hostname or parts.path or parts.query or parts.username or (port is None and entry.endswith(":")):
            raise IgotError(f"--allow-local-server {entry!r} is not a HOST or HOST:PORT.",
                            "Give a local server that links may lead to, such as --allow-local-server 192.168.1.20:8096 "
                            "(or --allow-local-links for every local address).")
    if not found:
        raise IgotError("--allow-local-server was given no server.",
                        "Give one, such as --allow-local-server 192.168.1.20:8096 (or --allow-local-links for every local address).")
    return found


def allowed_local(allow: LocalLinks, url: str, address: str) -> bool:
    """May `url`, about to be fetched from `address`, be? Yes for a public address; for a local one,
    when `allow` is True or names its host (as the URL writes it, or the address) and, if it gives
    one, its port."""
    if allow is True or not is_local_address(address):
        return True
    if not allow:
        return False
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    for entry in allow.split(",") if isinstance(allow, str) else allow:
        named = urlsplit(f"//{entry.strip()}")
        try:
            if (named.hostname or "").lower() in (host, address.split("%", 1)[0].lower()) and named.port in (None, port):
                return True
        except ValueError:  # not a port: names nothing (check_options says so up front)
            continue
    return False


def local_link_refused(link: str, url: str, address: str, partly: bool = False) -> IgotError:
    """The error of a link that leads to a local address: `url` is where it led (the link itself,
    a redirect, or a file its page names). `partly`: some local servers were allowed, not this one."""
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2] or url
    shown = host if (parts.hostname or "") == address else f"{host} ({address})"
    where = f"{link} leads to {url}, at" if url != link else f"{link} is at"
    allowed = "a local server not allowed by --allow-local-server" if partly else "an address on this computer or its local network"
    fix = (f"If that server is yours too, add --allow-local-server {host}; " if partly else
           "If the link is yours (a media server at home or at work), run again with --allow-local-links; ")
    return IgotError(f"{where} {shown}, {allowed}, so iGot did not open it (a link from someone else could "
                     "otherwise make iGot act on your router or other devices).",
                     fix + "otherwise download the video yourself and give iGot the file (or upload it) instead.")


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
