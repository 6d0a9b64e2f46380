"""Where an interview comes from: a local file, or a link that yt-dlp downloads (audio only).

Whatever goes wrong in a download, the user sees one line from us that names the link and says
what to do; yt-dlp itself never writes to the terminal.

A link is someone else's word, and its page names more addresses still (embedded videos, playlist
entries, media fragments, redirects). yt-dlp makes every request of ours through one request
handler, _PublicOnlyRH: it connects to no local address (igot.links.is_local_address) unless the
user allows local links, checking the very address each connection is made to (a name that
resolves to a public address when checked and to 127.0.0.1 when connected is refused too). A
download has a size and a time it may not pass, a live stream is refused before it starts, and
the run's progress hook is told as bytes come, so the workspace's Cancel stops it there.
"""

from __future__ import annotations

import functools
import os
import re
import socket
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any, Optional, Sequence
from urllib.parse import urlsplit

from tqdm import tqdm
from yt_dlp import YoutubeDL
from yt_dlp.networking import _urllib
from yt_dlp.networking.exceptions import RequestError
from yt_dlp.utils import YoutubeDLError
from yt_dlp.utils.networking import select_proxy

from igot.errors import IgotError
from igot.links import LocalLinks, allowed_local, is_url, local_address_of, local_link_refused, video_kind_and_url
from igot.runtime.progress import Progress
from igot.text import foreign_line
from igot.transcript import Source

_OR_UPLOAD = "or download the video yourself and give iGot the file (or upload it) instead"

# The most a download may take, in bytes and in seconds: generous for an interview (hours of video
# at a high bitrate), and an end for a link that never stops sending (a live stream, a radio).
MAX_DOWNLOAD_GB = 4.0
MAX_DOWNLOAD_HOURS = 2.0
# A site that sends nothing for this long has stalled: the download ends there (and Cancel, told
# as bytes come, is heard at least this often).
SOCKET_TIMEOUT = 20
# Protocols that yt-dlp downloads itself, through _PublicOnlyRH ("m3u8" too: hls_prefer_native).
# The others (rtmp, rtsp, mms, ...) are handed to ffmpeg or rtmpdump, which connect where the page
# says, unchecked.
_OWN_PROTOCOLS = {"http", "https", "m3u8", "m3u8_native", "http_dash_segments", "http_dash_segments_generator",
                  "ism", "f4m", "mhtml"}


def fetch(source: str, workdir: Path, cookies: Path | None = None, progress: Progress = True,
          allow_local_links: LocalLinks = False, max_gb: float = MAX_DOWNLOAD_GB,
          max_hours: float = MAX_DOWNLOAD_HOURS) -> tuple[Source, Path]:
    """The interview's Source and its local media file: downloaded into `workdir` for a link, at
    most `max_gb` GB in `max_hours` hours, from public addresses only but those `allow_local_links`
    allows (True: all; or a list of "HOST" and "HOST:PORT").
    `progress`: a terminal bar (True), the run's hook (told the bytes as they come; it may raise
    to stop the download), or nothing (False)."""
    source = source.strip()
    if not is_url(source):
        return _local(source)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    limits = _Limits(source, int(max_gb * 1e9), max_hours * 3600, workdir)
    return _download(source, workdir, cookies, progress, _Guard(source, allow_local_links, limits), limits)


LOOK_TIMEOUT = 15  # seconds a site may take to answer while a link is only looked at
# What looking at a link may read in all, and for how long: its pages, never its videos.
LOOK_BYTES, LOOK_SECONDS = 200_000_000, 120


def videos_of(url: str, allow_local_links: LocalLinks = False) -> list[tuple[str, str]]:
    """The videos a link holds, each as (its link, its title): the link itself for one video; each
    video's own link for a playlist, a channel or a page with several, listed without downloading
    any. A link that cannot be looked at now (a local one too, unless `allow_local_links` allows it)
    is given back as it is: its run says why."""
    try:
        with _PublicOnlyYDL({"extract_flat": "in_playlist", "noplaylist": True, "quiet": True, "no_warnings": True,
                             "logger": _QuietLog(), "socket_timeout": LOOK_TIMEOUT},
                            _Guard(url, allow_local_links, _Limits(url, LOOK_BYTES, LOOK_SECONDS))) as ydl:
            info = ydl.extract_info(url, download=False, process=False)
    except (YoutubeDLError, IgotError):
        return [(url, "")]
    if info.get("_type") != "playlist":
        return [(url, _title(info.get("title")))]
    found = []
    for entry in info.get("entries") or ():
        formats = entry.get("formats") or ()
        # a playlist's entry is a link to its page; a page's own videos come as their media files
        link = entry.get("url") if entry.get("_type") in ("url", "url_transparent") else (
            entry.get("webpage_url") or entry.get("url") or (formats[0].get("url") if len(formats) == 1 else None))
        if isinstance(link, str) and is_url(link):
            found.append((link, _title(entry.get("title"))))
    return found or [(url, _title(info.get("title")))]


def explain_download_error(url: str, message: str, warnings: Sequence[str] = (), cookies: bool = False) -> IgotError:
    """Turn a yt-dlp error message (and the warnings before it) into one line for the user."""
    text = _plain(message).lower()
    explained = _access_problem(url, text, cookies) or _link_problem(url, text)
    if explained:
        return explained
    # YouTube sometimes names the real cause (a bot check) only in a warning before a vaguer error.
    for warning in warnings:
        explained = _access_problem(url, _plain(warning).lower(), cookies)
        if explained:
            return explained
    # Keep yt-dlp's own words, less its bug-report boilerplate and exception chain.
    detail = re.split(r"[;.] please report this issue| \(caused by ", _plain(message), flags=re.I)[0][:300]
    return IgotError(
        f"Could not download {url}: {detail}",
        f"Check that the link plays in a browser; if it does, update yt-dlp (pip install -U yt-dlp) and try again, {_OR_UPLOAD}.",
    )


def _local(text: str) -> tuple[Source, Path]:
    path = Path(text).expanduser()
    if path.is_dir():
        raise IgotError(f"{text} is a folder, not a recording.", "Pass the path of an audio or video file.")
    if not path.is_file():
        raise IgotError(f"{text}: no such file.", "Check the path, or pass a video link starting with https://.")
    path = path.resolve()
    return Source(title=_pretty_title(path.stem), path=str(path), kind="file"), path


def _pretty_title(stem: str) -> str:
    """'user_interview-ana' -> 'User interview ana'; dates like 2024-05-01 keep their dashes."""
    stem = _title(stem) or "recording"
    title = " ".join(re.sub(r"_|(?<!\d)[-.]|[-.](?!\d)", " ", stem).split()) or stem
    return title[0].upper() + title[1:] if title.islower() else title


def _title(text: Any) -> str:
    """A title a page (or a file's name) gives, as iGot keeps it: one line without terminal escapes,
    control characters or bidi marks, so none reaches a terminal, a log or the library (a page's
    ESC [ 2 J would clear the screen of `igot serve`)."""
    return foreign_line(str(text or ""))


def _download(url: str, workdir: Path, cookies: Path | None, progress: Progress, guard: _Guard,
              limits: _Limits) -> tuple[Source, Path]:
    log = _QuietLog()
    bar = _ProgressBar(progress)
    params: dict[str, Any] = {
        "format": "bestaudio/best",  # audio is all we need; a video-only site still gives us "best"
        "outtmpl": str(workdir / "%(id)s.%(ext)s"),
        "restrictfilenames": True,
        "noplaylist": True,  # a watch?v=..&list=.. link means that one video
        "extract_flat": "in_playlist",  # never download the entries of a playlist we will refuse
        "logger": log,
        "quiet": True,
        "no_warnings": True,
        "noprogress": True,
        "progress_hooks": [limits.hook, bar.hook],
        "match_filter": functools.partial(_not_live, url),
        "max_filesize": limits.max_bytes,  # a size the server gives is refused before any byte comes
        "socket_timeout": SOCKET_TIMEOUT,
        "hls_prefer_native": True,  # HLS fragments through our request handler, not ffmpeg's
    }
    if guard.allow_local_links is not True:
        # yt-dlp still hands some HLS streams to ffmpeg (encrypted ones it cannot decrypt itself),
        # which would fetch their fragments from wherever the playlist says, unchecked: such an
        # ffmpeg may read no network address at all, so those streams fail instead.
        params["external_downloader_args"] = {"ffmpeg_i": ["-protocol_whitelist", "file,crypto,data"]}
    with tempfile.TemporaryDirectory(prefix="igot-cookies-") as tmp:
        if cookies is not None:
            # yt-dlp rewrites its cookie file when done: give it a checked copy, never the user's file.
            params["cookiefile"] = str(_copy_cookies(Path(cookies).expanduser(), Path(tmp) / "cookies.txt"))
        limits.tell = bar.told  # told as pages are read too: Cancel is heard while a page is looked at
        try:
            bar.hook({"status": "starting"})  # a run cancelled before its download starts stops here
            with _PublicOnlyYDL(params, guard) as ydl:
                # Look before downloading, so a playlist or channel link is refused, not fetched.
                info = ydl.extract_info(url, download=False, process=False)
                if info.get("_type") != "playlist":
                    info = ydl.process_ie_result(info, download=True)
                if info.get("_type") == "playlist":
                    raise IgotError(f"{url} holds several videos (a playlist, channel or page), not one.",
                                   "Pass the link of the single video to transcribe.")
        except BaseException as error:
            # Stopped (refused, too big, too long, cancelled, failed): no half-downloaded file stays.
            limits.remove_partial()
            if isinstance(error, YoutubeDLError):
                if guard.refused is not None:  # whatever yt-dlp made of the refusal, this is what happened
                    raise guard.refused from None
                if "external_downloader_args" in params and any("delegated to ffmpeg" in w for w in log.warnings):
                    raise IgotError(f"{url} is a stream that yt-dlp leaves to ffmpeg (an encrypted one), and iGot lets "
                                    "no ffmpeg fetch from the network: it would go wherever the stream says, unchecked.",
                                    "Install pycryptodomex (pip install pycryptodomex), with which yt-dlp decrypts it "
                                    f"itself, and run again, {_OR_UPLOAD}.") from None
                raise explain_download_error(url, str(error), log.warnings, cookies is not None) from None
            raise
        finally:
            bar.close()
    if log.too_big:
        raise limits.too_big()

    downloads = info.get("requested_downloads") or [{}]
    media = Path(downloads[0].get("filepath") or info.get("filepath") or "")
    if not media.is_file():
        raise IgotError(f"Downloaded {url} but found no media file in {workdir}.", "Run again; if it keeps failing, update yt-dlp.")
    return _source_for(url, info), media


def _source_for(url: str, info: dict[str, Any]) -> Source:
    """Source with the URL that time links will point at."""
    kind, canonical = video_kind_and_url(url)
    if kind == "web":
        page = info.get("webpage_url") or ""
        page_kind, page_url = video_kind_and_url(page) if is_url(page) else ("web", url)
        if page_kind in ("youtube", "vimeo"):  # e.g. a page that embeds a YouTube video
            kind, canonical = page_kind, page_url
        elif info.get("direct"):  # a media file served without a media extension in its URL
            kind = "media"
    title = _title(info.get("title")) or _title(info.get("id")) or canonical
    return Source(title=title, url=canonical, kind=kind)


def _copy_cookies(src: Path, dest: Path) -> Path:
    """Copy the Netscape-format cookie lines only; yt-dlp would print a warning for each bad line."""
    if not src.is_file():
        raise IgotError(f"Cookies file {src} not found.", "Check the path given to --cookies.")
    how = "Export them again as a Netscape cookies.txt file (e.g. with the 'Get cookies.txt LOCALLY' browser extension)."
    text = src.read_text(encoding="utf-8", errors="replace")
    if text.lstrip()[:1] in ("[", "{"):
        raise IgotError(f"Cookies file {src} is JSON, but downloads need the Netscape cookies.txt format.", how)
    lines = [line for line in text.splitlines() if _is_cookie_line(line)]
    if not lines:
        raise IgotError(f"Cookies file {src} has no cookies in Netscape cookies.txt format.", how)
    # Cookies are credentials: readable by the owner only.
    with os.fdopen(os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as f:
        f.write("# Netscape HTTP Cookie File\n" + "\n".join(lines) + "\n")
    return dest


def _is_cookie_line(line: str) -> bool:
    # Same rules as yt-dlp's loader: 7 tab-separated fields, expiry empty or a number.
    line = line.removeprefix("#HttpOnly_")
    fields = line.split("\t")
    return not line.startswith("#") and len(fields) == 7 and re.fullmatch(r"[0-9]*(\.[0-9]+)?", fields[4]) is not None


def _plain(message: str) -> str:
    """yt-dlp's message without colours, 'ERROR:' and '[site] id:' prefixes, or typographic quotes."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", message).replace("\u2019", "'")
    text = re.sub(r"^\s*(ERROR|WARNING):\s*", "", text)
    return re.sub(r"^\[[\w:.-]+\]\s*([\w.-]+:\s*)?", "", text).strip()


def _cookies_how(site: str = "YouTube", fresh: bool = False) -> str:
    which = "fresh cookies (the ones given did not work)" if fresh else "your cookies"
    return (f"export {which} from a browser where you are signed in to {site} to a cookies.txt file "
            "(e.g. with the 'Get cookies.txt LOCALLY' extension) and run again with --cookies cookies.txt")


def _access_problem(url: str, text: str, cookies: bool) -> IgotError | None:
    """Problems that a signed-in account (cookies) can solve."""
    how = _cookies_how(fresh=cookies)
    if "not a bot" in text:
        return IgotError(f"YouTube blocked the download of {url} with a bot check (\"Sign in to confirm you're not a bot\").",
                         f"To get past it, {how}; {_OR_UPLOAD}.")
    if "private video" in text or "video is private" in text:
        return IgotError(f"{url} is a private video.",
                         f"If your account can watch it, {how}; otherwise ask the owner to make it unlisted, {_OR_UPLOAD}.")
    if "confirm your age" in text or "age-restricted" in text or "age restricted" in text:
        return IgotError(f"{url} is age-restricted, so YouTube wants a signed-in account.", f"{how[0].upper()}{how[1:]}; {_OR_UPLOAD}.")
    if "members-only" in text or "members only" in text or "channel's members" in text or "join this channel" in text:
        return IgotError(f"{url} is for channel members only.",
                         f"If your account is a member, {how}; {_OR_UPLOAD}.")
    return None


def _link_problem(url: str, text: str) -> IgotError | None:
    """Problems with the link itself, the site, or the network."""
    check = "Check the link for typos and that it opens in a browser"
    if "unsupported url" in text or "is not a valid url" in text:
        return IgotError(f"{url} is not a link iGot can download: no video or audio was found there.",
                         "Pass a YouTube or Vimeo link, a page with a video on it, a direct link to a media file, or a local file.")
    if "rate-limited" in text or "try again later" in text:
        return IgotError(f"The site is rate-limiting downloads, so {url} could not be fetched.",
                         f"Wait an hour and run again, or {_cookies_how()}.")
    if "video unavailable" in text or "removed" in text or "no longer available" in text \
            or "has been terminated" in text or "video is unavailable" in text or "http error 410" in text:
        return IgotError(f"{url} is not available any more: the video was removed or made unavailable.",
                         f"{check}; if you have the recording, pass the file instead.")
    if "your country" in text or "geo restriction" in text or "geo-restrict" in text or "your location" in text:
        return IgotError(f"{url} is not available in your country.", f"Download it where it is available, {_OR_UPLOAD}.")
    if "live event will begin" in text or "premieres in" in text or "is not currently live" in text:
        return IgotError(f"{url} is a live stream or premiere that has not started yet.", "Run again after it has finished.")
    if "protected by a password" in text or "video password" in text:
        return IgotError(f"{url} is protected by a password.", "Download it in your browser and give iGot the file (or upload it) instead.")
    if "embed-only" in text:
        return IgotError(f"{url} may only be played on the site that embeds it.", "Pass the link of the web page that shows the video.")
    if "http error 404" in text:
        return IgotError(f"{url} was not found (HTTP 404).", f"{check}.")
    if "http error 401" in text or "http error 403" in text:
        status = "401" if "http error 401" in text else "403"
        return IgotError(f"The server refused access to {url} (HTTP {status}).",
                         "Check that the link opens in a browser (links that expire need a fresh copy) and update yt-dlp "
                         f"(pip install -U yt-dlp); {_OR_UPLOAD}.")
    if re.search(r"http error 5\d\d", text):
        return IgotError(f"The server of {url} failed (HTTP {text.split('http error ')[1][:3]}).", "Try again later.")
    if "registered users" in text or "login required" in text or "--cookies" in text or "sign in" in text:
        return IgotError(f"{url} needs a signed-in account.", f"If your account can watch it, {_cookies_how('the site')}; {_OR_UPLOAD}.")
    network = (
        ("failed to resolve", "the site's name could not be resolved (DNS)"),
        ("name or service not known", "the site's name could not be resolved (DNS)"),
        ("nodename nor servname", "the site's name could not be resolved (DNS)"),
        ("getaddrinfo failed", "the site's name could not be resolved (DNS)"),
        ("name resolution", "the site's name could not be resolved (DNS)"),
        ("connection refused", "the connection was refused"),
        ("10061", "the connection was refused"),
        ("timed out", "the connection timed out"),
        ("certificate", "its secure connection (TLS certificate) could not be verified"),
        ("ssl", "its secure connection (TLS) failed"),
        ("network is unreachable", "the network is unreachable"),
        ("no route to host", "the network is unreachable"),
        ("connection reset", "the connection was cut"),
        ("remote end closed", "the connection was cut"),
        ("unable to download", "the connection failed"),
    )
    for needle, reason in network:
        if needle in text:
            return IgotError(f"Could not reach {url}: {reason}.",
                             "Check the address and your internet connection (proxy, firewall), then run again.")
    return None


class _QuietLog:
    """Receives yt-dlp's messages so none reach the terminal; keeps warnings to explain errors."""

    def __init__(self) -> None:
        self.warnings: list[str] = []
        self.too_big = False  # yt-dlp stopped at max_filesize: it says so only here, then gives no file

    def debug(self, message: str) -> None:
        if "larger than max-filesize" in message:
            self.too_big = True

    def info(self, message: str) -> None:
        pass

    def warning(self, message: str) -> None:
        self.warnings.append(message)

    def error(self, message: str) -> None:
        pass  # raised to us as an exception too


class _ProgressBar:
    """One tqdm bar driven by yt-dlp's progress hooks, or the run's progress hook told the bytes."""

    DESC = "Downloading audio"

    def __init__(self, progress: Progress) -> None:
        self.enabled = progress is True
        self.told = progress if callable(progress) else None
        self.bar: tqdm | None = None

    def hook(self, status: dict[str, Any]) -> None:
        total = int(status.get("total_bytes") or status.get("total_bytes_estimate") or 0) or None
        finished = status.get("status") == "finished"
        if self.told is not None:
            # The workspace's Cancel raises here: out through yt-dlp, the download stops at once.
            self.told(self.DESC, float(status.get("downloaded_bytes") or 0), float(total or 0))
        if not self.enabled or status.get("status") == "starting":
            return
        if self.bar is None:
            self.bar = tqdm(desc=self.DESC, total=total, unit="B", unit_scale=True, unit_divisor=1024)
        if total and self.bar.total != total:
            self.bar.total = total  # fragment downloads refine their estimate as they go
        # A file already in the work folder reports "finished" with no bytes downloaded.
        done = status.get("downloaded_bytes") or (total if finished else 0) or 0
        self.bar.update(done - self.bar.n)
        if finished:
            self.close()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


# A web page (HTML, JSON, XML, a playlist) is read whole into memory: one larger than this is not a
# page, but a stream that would fill the memory.
PAGE_MAX_BYTES = 50_000_000
_PAGE_TYPES = re.compile(r"text/|[^;]*(json|xml|mpegurl)", re.I)


class _Limits:
    """The size and time a link's fetch may take, checked as its bytes come: every byte read through
    _PublicOnlyRH (its pages too: one that never ends is stopped as well), and the download's own
    count from yt-dlp's progress hook (yt-dlp's max_filesize needs a size given up front, and a
    stream gives none). `tell`: the run's hook, told as bytes come, so that Cancel is heard. The
    files it began in `workdir`, removed when it stops."""

    def __init__(self, url: str, max_bytes: int, max_seconds: float, workdir: Optional[Path] = None) -> None:
        self.url, self.max_bytes, self.max_seconds, self.workdir = url, max_bytes, max_seconds, workdir
        self.started = time.monotonic()
        self.read = 0
        self.tell: Optional[Any] = None
        self.before = set(workdir.iterdir()) if workdir is not None else set()  # the stages kept from an earlier run stay

    def hook(self, status: dict[str, Any]) -> None:
        if status.get("status") == "downloading":
            self.check(max(status.get("downloaded_bytes") or 0, status.get("total_bytes") or 0))

    def took(self, size: int, page: Optional[tuple[str, int]]) -> None:
        """`size` more bytes read through the request handler; `page`: (its URL, its bytes so far)
        when they are a page's."""
        self.read += size
        if page is not None and page[1] > PAGE_MAX_BYTES:
            which = f"{self.url} is a page" if page[0] == self.url else f"{self.url} sent iGot a page ({page[0]})"
            raise IgotError(f"{which} of more than {PAGE_MAX_BYTES // 1_000_000} MB, more than any web page holds, so "
                            "iGot stopped reading it.",
                            f"Check that the link opens a video in a browser, {_OR_UPLOAD}.")
        self.check(self.read)
        if self.tell is not None:
            self.tell(_ProgressBar.DESC, 0.0, 0.0)  # no share of the download said: a hook that stops the run may

    def check(self, size: int) -> None:
        if size > self.max_bytes:
            raise self.too_big()
        if time.monotonic() - self.started > self.max_seconds:
            raise IgotError(f"Downloading {self.url} took more than {_duration(self.max_seconds)}, the most iGot gives "
                            "one download (a live stream or radio never ends).",
                            f"If it is a recording that slow to fetch, run again with a larger --max-download-hours, {_OR_UPLOAD}.")

    def too_big(self) -> IgotError:
        return IgotError(f"{self.url} is more than {_figure(self.max_bytes / 1e9)} GB, the most iGot downloads.",
                         f"If it is the recording you want, run again with a larger --max-download-gb, {_OR_UPLOAD}.")

    def remove_partial(self) -> None:
        """Remove the files of a download that did not finish (the media file, its .part, the
        .part-FragN of a fragmented one, yt-dlp's .ytdl notes): those new in the work folder, where
        nothing but the download writes while it runs."""
        if self.workdir is None or not self.workdir.is_dir():
            return
        for found in set(self.workdir.iterdir()) - self.before:
            if found.is_file() or found.is_symlink():
                found.unlink(missing_ok=True)


def _figure(value: float) -> str:
    return f"{value:.3g}"


def _duration(seconds: float) -> str:
    """'2 hours', '90 minutes', '5 seconds': in the unit that reads best."""
    for unit, size in (("hour", 3600), ("minute", 60), ("second", 1)):
        if seconds >= size or unit == "second":
            figure = _figure(seconds / size)
            return f"{figure} {unit}{'s' * (figure != '1')}"
    raise AssertionError


def _not_live(url: str, info: dict[str, Any], *, incomplete: bool = False) -> None:
    """yt-dlp's match_filter: a live stream (or one not started) is refused before its download,
    which would never end."""
    if info.get("is_live") or info.get("live_status") in ("is_live", "is_upcoming"):
        raise IgotError(f"{url} is a live stream: it has no end to download and transcribe.",
                        "Run again with the link of its recording once the stream is over, or record it yourself and "
                        "give iGot the file.")
    return None


class _Refused(RequestError):
    """A connection to a local address, stopped before it was made. A RequestError, so that yt-dlp
    passes it on (from its extractors and downloaders) as the failed request it is."""


class _Guard:
    """What a link (and every request made on its behalf) may connect to; the first refusal, which
    is what the user is told whatever yt-dlp made of it."""

    def __init__(self, link: str, allow_local_links: LocalLinks, limits: _Limits) -> None:
        self.link, self.allow_local_links, self.limits = link, allow_local_links, limits
        self.refused: Optional[IgotError] = None

    def check(self, url: str, address: Optional[str]) -> None:
        """Refuse `url`, about to be fetched from `address`, when that is a local address the user
        did not allow."""
        if address is None or allowed_local(self.allow_local_links, url, address):
            return
        error = local_link_refused(self.link, url, address, partly=bool(self.allow_local_links))
        self.refused = self.refused or error
        raise _Refused(str(error))

    def check_name(self, url: str) -> None:
        """Refuse `url` when its host resolves to a local address here: for a request a proxy makes,
        which connects to the proxy (the proxy resolves the name itself)."""
        if self.allow_local_links is not True:
            self.check(url, local_address_of(urlsplit(url).hostname or ""))


def _checked_connection(guard: _Guard, url: str, address: tuple[str, int], timeout: Any = socket._GLOBAL_DEFAULT_TIMEOUT,
                        source_address: Any = None) -> socket.socket:
    """socket.create_connection, with each address it resolves checked before it is connected to:
    the address checked is the one connected to (no second lookup for a name to answer otherwise)."""
    host, port = address
    error: Optional[OSError] = None
    for family, kind, proto, _, sockaddr in socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM):
        guard.check(url, str(sockaddr[0]))
        sock = socket.socket(family, kind, proto)
        try:
            if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:
                sock.settimeout(timeout)
            if source_address:
                sock.bind(source_address)
            sock.connect(sockaddr)
            return sock
        except OSError as err:
            sock.close()
            error = err
    raise error or OSError(f"getaddrinfo gave no address for {host}")


class _CheckedHTTPHandler(_urllib.HTTPHandler):
    """yt-dlp's HTTP(S) handler, whose direct connections go through _checked_connection."""

    guard: _Guard

    def _make_conn_class(self, base, req):
        conn_class = super()._make_conn_class(base, req)
        if conn_class is not base or req.has_proxy() or req._tunnel_host:
            return conn_class  # through a proxy, which connects for us: _ProxiedCheck checked the name
        guard, url = self.guard, req.full_url

        class Checked(conn_class):
            def connect(self):
                self._create_connection = functools.partial(_checked_connection, guard, url)
                super().connect()

        return Checked


class _ProxiedCheck(urllib.request.BaseHandler):
    """Every request, redirects too, that goes through a proxy: its host's name checked here."""

    def __init__(self, guard: _Guard, proxies: dict) -> None:
        self.guard, self.proxies = guard, proxies

    def http_request(self, req):
        if select_proxy(req.full_url, self.proxies or {}):
            self.guard.check_name(req.full_url)
        return req

    https_request = http_request


class _PublicOnlyRH(_urllib.UrllibRH):
    """yt-dlp's urllib request handler, the only one iGot's downloads use: http, https and data
    only (no ftp or file), each connection checked (_CheckedHTTPHandler), redirects included."""

    _SUPPORTED_URL_SCHEMES = ("http", "https", "data")
    RH_NAME = "urllib, public addresses only"

    def __init__(self, *, guard: _Guard, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.guard = guard

    def _send(self, request):
        response = super()._send(request)
        # Every byte of every answer counted against the fetch's limits (_Limits.took).
        limits, read, seen = self.guard.limits, response.read, [0]
        page = bool(_PAGE_TYPES.match(response.headers.get("Content-Type") or ""))

        def counted(amt=None):
            if amt is None or amt < 0:  # "all of it" (how a page is read), in pieces, each counted
                return b"".join(iter(lambda: counted(1 << 20), b""))
            data = read(amt)
            seen[0] += len(data)
            limits.took(len(data), (response.url, seen[0]) if page else None)
            return data

        response.read = counted
        return response

    def _create_instance(self, proxies, cookiejar, legacy_ssl_support=None):
        # yt-dlp's own opener (UrllibRH._create_instance), with the checked HTTP handler and no ftp:
        # ftplib connects where it is told, unchecked
        opener = urllib.request.OpenerDirector()
        http_handler = _CheckedHTTPHandler(
            debuglevel=int(bool(self.verbose)), context=self._make_sslcontext(legacy_ssl_support=legacy_ssl_support),
            source_address=self.source_address)
        http_handler.guard = self.guard
        for handler in (_urllib.ProxyHandler(proxies), _ProxiedCheck(self.guard, proxies), http_handler,
                        urllib.request.HTTPCookieProcessor(cookiejar), urllib.request.DataHandler(), urllib.request.UnknownHandler(),
                        urllib.request.HTTPDefaultErrorHandler(), urllib.request.HTTPErrorProcessor(),
                        _urllib.RedirectHandler()):
            opener.add_handler(handler)
        opener.addheaders = []
        return opener


class _PublicOnlyYDL(YoutubeDL):
    """YoutubeDL whose every request goes through _PublicOnlyRH: an extractor's pages, the files
    and fragments a downloader fetches, and their redirects."""

    def __init__(self, params: dict[str, Any], guard: _Guard) -> None:
        self._guard = guard
        super().__init__(params)

    def build_request_director(self, handlers, preferences=None):
        # requests, curl_cffi and websockets, when installed, connect in ways we cannot check
        return super().build_request_director([functools.partial(_PublicOnlyRH, guard=self._guard)], preferences)

    def build_format_selector(self, format_spec):
        # Chosen among the formats yt-dlp downloads itself (_OWN_PROTOCOLS): every address checked.
        select = super().build_format_selector(format_spec)

        def own_protocols_only(ctx: dict[str, Any]):
            formats = [f for f in ctx["formats"]
                       if all(p in _OWN_PROTOCOLS for p in str(f.get("protocol") or "https").split("+"))]
            yield from select(dict(ctx, formats=formats))

        return own_protocols_only
