"""Where an interview comes from: a local file, or a link that yt-dlp downloads (audio only).

Whatever goes wrong in a download, the user sees one line from us that names the link and says
what to do; yt-dlp itself never writes to the terminal.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import Any, Sequence

from tqdm import tqdm
from yt_dlp import YoutubeDL
from yt_dlp.utils import YoutubeDLError

from igot.errors import IgotError
from igot.links import is_url, video_kind_and_url
from igot.transcript import Source

_OR_UPLOAD = "or download the video yourself and give iGot the file (or upload it) instead"


def fetch(source: str, workdir: Path, cookies: Path | None = None, progress: bool = True) -> tuple[Source, Path]:
    """The interview's Source and its local media file: downloaded into `workdir` for a link."""
    source = source.strip()
    if not is_url(source):
        return _local(source)
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    return _download(source, workdir, cookies, progress)


LOOK_TIMEOUT = 15  # seconds a site may take to answer while a link is only looked at


def videos_of(url: str) -> list[tuple[str, str]]:
    """The videos a link holds, each as (its link, its title): the link itself for one video; each
    video's own link for a playlist, a channel or a page with several, listed without downloading
    any. A link that cannot be looked at now is given back as it is: its run says why."""
    try:
        with YoutubeDL({"extract_flat": "in_playlist", "noplaylist": True, "quiet": True, "no_warnings": True,
                        "logger": _QuietLog(), "socket_timeout": LOOK_TIMEOUT}) as ydl:
            info = ydl.extract_info(url, download=False, process=False)
    except YoutubeDLError:
        return [(url, "")]
    if info.get("_type") != "playlist":
        return [(url, str(info.get("title") or ""))]
    found = []
    for entry in info.get("entries") or ():
        formats = entry.get("formats") or ()
        # a playlist's entry is a link to its page; a page's own videos come as their media files
        link = entry.get("url") if entry.get("_type") in ("url", "url_transparent") else (
            entry.get("webpage_url") or entry.get("url") or (formats[0].get("url") if len(formats) == 1 else None))
        if isinstance(link, str) and is_url(link):
            found.append((link, str(entry.get("title") or "")))
    return found or [(url, str(info.get("title") or ""))]


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
    title = " ".join(re.sub(r"_|(?<!\d)[-.]|[-.](?!\d)", " ", stem).split()) or stem
    return title[0].upper() + title[1:] if title.islower() else title


def _download(url: str, workdir: Path, cookies: Path | None, progress: bool) -> tuple[Source, Path]:
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
        "progress_hooks": [bar.hook],
    }
    with tempfile.TemporaryDirectory(prefix="igot-cookies-") as tmp:
        if cookies is not None:
            # yt-dlp rewrites its cookie file when done: give it a checked copy, never the user's file.
            params["cookiefile"] = str(_copy_cookies(Path(cookies).expanduser(), Path(tmp) / "cookies.txt"))
        try:
            with YoutubeDL(params) as ydl:
                # Look before downloading, so a playlist or channel link is refused, not fetched.
                info = ydl.extract_info(url, download=False, process=False)
                if info.get("_type") != "playlist":
                    info = ydl.process_ie_result(info, download=True)
                if info.get("_type") == "playlist":
                    raise IgotError(f"{url} holds several videos (a playlist, channel or page), not one.",
                                   "Pass the link of the single video to transcribe.")
        except YoutubeDLError as error:
            raise explain_download_error(url, str(error), log.warnings, cookies is not None) from None
        finally:
            bar.close()

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
    title = info.get("title") or info.get("id") or canonical
    return Source(title=str(title), url=canonical, kind=kind)


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

    def debug(self, message: str) -> None:
        pass

    def info(self, message: str) -> None:
        pass

    def warning(self, message: str) -> None:
        self.warnings.append(message)

    def error(self, message: str) -> None:
        pass  # raised to us as an exception too


class _ProgressBar:
    """One tqdm bar driven by yt-dlp's progress hooks."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.bar: tqdm | None = None

    def hook(self, status: dict[str, Any]) -> None:
        if not self.enabled:
            return
        total = int(status.get("total_bytes") or status.get("total_bytes_estimate") or 0) or None
        finished = status.get("status") == "finished"
        if self.bar is None:
            self.bar = tqdm(desc="Downloading audio", total=total, unit="B", unit_scale=True, unit_divisor=1024)
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
