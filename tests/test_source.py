"""fetch() against a real HTTP server on 127.0.0.1 with real yt-dlp; nothing else is contacted. Its
links are local, so each is given allow_local_links, as a user with a media server of their own
does (--allow-local-links); tests/test_link_safety.py shows what happens without it."""

import socket
import subprocess
from pathlib import Path

import pytest

from igot.errors import IgotError
from igot.media.audio import convert_to_wav
from igot.media.source import explain_download_error, fetch, videos_of
from tests.webserver import serve


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    subprocess.run(
        ["ffmpeg", "-nostdin", "-loglevel", "error", "-y",
         "-f", "lavfi", "-i", "testsrc=size=96x64:rate=10:duration=2",
         "-f", "lavfi", "-i", "sine=frequency=440:duration=2:sample_rate=44100",
         "-c:v", "mpeg4", "-c:a", "aac", "-shortest", str(root / "clip.mp4")],
        check=True,
    )
    (root / "stream").write_bytes((root / "clip.mp4").read_bytes())
    (root / "page.html").write_text("<html><head><title>About us</title></head><body>No video here.</body></html>")
    (root / "one.html").write_text('<html><head><title>Interview</title></head><body><video src="clip.mp4"></video></body></html>')
    (root / "two.html").write_text(
        '<html><head><title>Two</title></head><body><video src="clip.mp4"></video><video src="stream"></video></body></html>')
    # A media file behind a URL without an extension: only the Content-Type says what it is.
    with serve(root, content_types={"/stream": "video/mp4"}) as url:
        yield url


def test_direct_media_link(site, tmp_path, capfd):
    url = f"{site}/clip.mp4"
    source, media = fetch(url, tmp_path / "work", progress=False, allow_local_links=True)
    assert (source.kind, source.url, source.path) == ("media", url, None)
    assert source.title == "clip"
    assert media.is_file() and media.parent == tmp_path / "work"
    assert convert_to_wav(media, tmp_path / "audio.wav") == pytest.approx(2.0, abs=0.05)
    assert capfd.readouterr() == ("", "")  # yt-dlp said nothing


def test_progress_bar(site, tmp_path, capfd):
    fetch(f"{site}/clip.mp4", tmp_path, progress=True, allow_local_links=True)
    err = capfd.readouterr().err
    assert "Downloading audio" in err and "100%" in err


def test_media_link_without_extension(site, tmp_path):
    source, media = fetch(f"{site}/stream", tmp_path, progress=False, allow_local_links=True)
    assert (source.kind, source.url) == ("media", f"{site}/stream")
    assert media.is_file()


def test_page_with_a_video(site, tmp_path):
    source, media = fetch(f"{site}/one.html", tmp_path, progress=False, allow_local_links=True)
    assert (source.kind, source.url) == ("web", f"{site}/one.html")
    assert "Interview" in source.title
    assert media.read_bytes() == Path(fetch(f"{site}/clip.mp4", tmp_path / "b", progress=False, allow_local_links=True)[1]).read_bytes()


def test_page_with_several_videos_is_refused_before_download(site, tmp_path):
    with pytest.raises(IgotError, match="several videos") as error:
        fetch(f"{site}/two.html", tmp_path, progress=False, allow_local_links=True)
    assert f"{site}/two.html" in str(error.value)
    assert list(tmp_path.iterdir()) == []


def test_a_page_of_several_videos_lists_each_and_one_video_is_itself(site, tmp_path):
    """What `igot run LINK` and the workspace's Add queue for a link: each video of a playlist or
    page, nothing downloaded; one video is the link itself; a link not answering is kept as given."""
    assert videos_of(f"{site}/two.html", allow_local_links=True) == [(f"{site}/clip.mp4", "Two (1)"), (f"{site}/stream", "Two (2)")]
    assert [link for link, _ in videos_of(f"{site}/one.html", allow_local_links=True)] == [f"{site}/one.html"]
    assert videos_of(f"{site}/clip.mp4", allow_local_links=True) == [(f"{site}/clip.mp4", "clip")]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert videos_of(f"http://127.0.0.1:{port}/x.mp4", allow_local_links=True) == [(f"http://127.0.0.1:{port}/x.mp4", "")]
    assert list(tmp_path.iterdir()) == []


def test_not_found(site, tmp_path, capfd):
    url = f"{site}/missing.mp4"
    with pytest.raises(IgotError, match="not found") as error:
        fetch(url, tmp_path, progress=False, allow_local_links=True)
    assert url in str(error.value) and "404" in str(error.value)
    assert capfd.readouterr() == ("", "")


def test_nothing_listening(tmp_path):
    with socket.socket() as s:  # a port that was free a moment ago
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/clip.mp4"
    with pytest.raises(IgotError, match="Could not reach") as error:
        fetch(url, tmp_path, progress=False, allow_local_links=True)
    assert url in str(error.value) and "refused" in str(error.value)


def test_page_without_video(site, tmp_path):
    url = f"{site}/page.html"
    with pytest.raises(IgotError, match="not a link iGot can download") as error:
        fetch(url, tmp_path, progress=False, allow_local_links=True)
    assert url in str(error.value)


def test_local_file(tmp_path):
    recording = tmp_path / "user_interview-ana 2024-05-01.m4a"
    recording.write_bytes(b"not checked here")
    source, path = fetch(str(recording), tmp_path / "work")
    assert source.kind == "file" and source.url is None
    assert source.title == "User interview ana 2024-05-01"
    assert path == recording and Path(source.path).is_absolute()


def test_local_file_missing(tmp_path):
    with pytest.raises(IgotError, match="nope.mp4: no such file"):
        fetch(str(tmp_path / "nope.mp4"), tmp_path)
    with pytest.raises(IgotError, match="is a folder"):
        fetch(str(tmp_path), tmp_path)


COOKIE = ".example.com\tTRUE\t/\tFALSE\t0\tsession\tabc123\n"


def test_cookies_file_is_used_but_never_rewritten(site, tmp_path):
    cookies = tmp_path / "cookies.txt"
    cookies.write_text("# Netscape HTTP Cookie File\n" + COOKIE + "#HttpOnly_" + COOKIE + "a stray line\n")
    stat = cookies.stat()
    content = cookies.read_bytes()
    source, media = fetch(f"{site}/clip.mp4", tmp_path / "work", cookies=cookies, progress=False, allow_local_links=True)
    assert media.is_file()
    # yt-dlp saves its cookie jar back to the cookie file on exit; ours must stay as the user made it.
    assert cookies.read_bytes() == content and cookies.stat().st_mtime_ns == stat.st_mtime_ns
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["clip.mp4"]


def test_cookies_without_header_are_accepted(site, tmp_path, capfd):
    cookies = tmp_path / "cookies.txt"
    cookies.write_text(COOKIE)
    fetch(f"{site}/clip.mp4", tmp_path / "work", cookies=cookies, progress=False, allow_local_links=True)
    assert capfd.readouterr() == ("", "")


def test_cookies_problems(site, tmp_path):
    url = f"{site}/clip.mp4"
    with pytest.raises(IgotError, match="missing.txt not found"):
        fetch(url, tmp_path, cookies=tmp_path / "missing.txt")
    (tmp_path / "c.json").write_text('[{"domain": ".youtube.com", "name": "SID"}]')
    with pytest.raises(IgotError, match="is JSON"):
        fetch(url, tmp_path, cookies=tmp_path / "c.json")
    (tmp_path / "c.txt").write_text("hello\n")
    with pytest.raises(IgotError, match="no cookies in Netscape"):
        fetch(url, tmp_path, cookies=tmp_path / "c.txt")


# Error messages exactly as yt-dlp raises them for YouTube (unreachable from here).
URL = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"
COOKIES_HINT = (
    "Use --cookies-from-browser or --cookies for the authentication. See  "
    "https://github.com/yt-dlp/yt-dlp/wiki/FAQ#how-do-i-pass-cookies-to-yt-dlp  for how to manually pass cookies. "
    "Also see  https://github.com/yt-dlp/yt-dlp/wiki/Extractors#exporting-youtube-cookies  for tips on "
    "effectively exporting YouTube cookies"
)
BOT = f"ERROR: [youtube] dQw4w9WgXcQ: Sign in to confirm you\u2019re not a bot. {COOKIES_HINT}"
PRIVATE = f"ERROR: [youtube] dQw4w9WgXcQ: Private video. Sign in if you've been granted access to this video. {COOKIES_HINT}"
AGE = f"ERROR: [youtube] dQw4w9WgXcQ: Sign in to confirm your age. This video may be inappropriate for some users. {COOKIES_HINT}"
MEMBERS = ("ERROR: [youtube] dQw4w9WgXcQ: Join this channel to get access to members-only content like this video, "
           "and other exclusive perks.")
REMOVED = [
    "ERROR: [youtube] dQw4w9WgXcQ: Video unavailable. This video has been removed by the uploader",
    "ERROR: [youtube] dQw4w9WgXcQ: Video unavailable. This video is no longer available because the YouTube "
    "account associated with this video has been terminated.",
    "ERROR: [youtube] dQw4w9WgXcQ: This video has been removed for violating YouTube's Terms of Service",
    "ERROR: [youtube] dQw4w9WgXcQ: Video unavailable",
]


def test_bot_check_says_how_to_pass_cookies():
    message = str(explain_download_error(URL, BOT))
    assert URL in message and "bot" in message
    assert "--cookies cookies.txt" in message and "signed in to YouTube" in message and "cookies.txt file" in message
    assert "upload" in message
    # With cookies already given, ask for fresh ones.
    assert "fresh cookies" in str(explain_download_error(URL, BOT, cookies=True))


def test_bot_check_named_only_in_a_warning():
    error = explain_download_error(URL, "ERROR: [youtube] dQw4w9WgXcQ: Requested format is not available",
                                   warnings=[f"[youtube] dQw4w9WgXcQ: Sign in to confirm you\u2019re not a bot. {COOKIES_HINT}"])
    assert "bot check" in str(error)


def test_private_video():
    message = str(explain_download_error(URL, PRIVATE))
    assert URL in message and "private video" in message and "--cookies cookies.txt" in message


def test_age_restricted_and_members_only():
    age = str(explain_download_error(URL, AGE))
    assert URL in age and "age-restricted" in age and "--cookies cookies.txt" in age
    members = str(explain_download_error(URL, MEMBERS))
    assert URL in members and "members only" in members and "--cookies cookies.txt" in members


@pytest.mark.parametrize("raw", REMOVED)
def test_removed_video(raw):
    message = str(explain_download_error(URL, raw))
    assert URL in message and "removed" in message and "cookies" not in message


def test_other_messages():
    assert "not a link iGot can download" in str(explain_download_error("https://x.org/a", "ERROR: Unsupported URL: https://x.org/a"))
    geo = ("ERROR: [youtube] dQw4w9WgXcQ: The uploader has not made this video available in your country. "
           "This video is available in Germany. You might want to use a VPN or a proxy server (with --proxy) to workaround.")
    assert "not available in your country" in str(explain_download_error(URL, geo))
    live = "ERROR: [youtube] dQw4w9WgXcQ: This live event will begin in 3 hours."
    assert "has not started" in str(explain_download_error(URL, live))
    dns = ("ERROR: [generic] x: Unable to download webpage: HTTPSConnection(host='nope.example', port=443): "
           "Failed to resolve 'nope.example' ([Errno -2] Name or service not known)")
    assert "could not be resolved" in str(explain_download_error("https://nope.example/x", dns))


def test_unknown_error_keeps_yt_dlp_words():
    raw = ("ERROR: [vimeo] 123: Something new went wrong; please report this issue on  "
           "https://github.com/yt-dlp/yt-dlp/issues?q= , filling out the appropriate issue template.")
    message = str(explain_download_error("https://vimeo.com/123", raw))
    assert message.startswith("Could not download https://vimeo.com/123: Something new went wrong")
    assert "report this issue" not in message and "pip install -U yt-dlp" in message


@pytest.mark.parametrize("raw", [BOT, PRIVATE, AGE, MEMBERS, *REMOVED])
def test_messages_are_one_line(raw):
    error = explain_download_error(URL, raw)
    assert "\n" not in str(error) and error.problem and error.fix
