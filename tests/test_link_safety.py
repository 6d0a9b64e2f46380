"""Issue 49: no link a stranger gives can act beyond the library. Real yt-dlp against real HTTP
servers on 127.0.0.1 (tests/webserver.py), each logging the requests it hears: a link to this
computer is refused unless the user allows local links, and nothing is asked of its server; a
server allowed by --allow-local-server cannot send iGot on (a redirect, an embedded video, an HLS
fragment) to another local server that is not; a stream that never ends stops at the size or time
a download may take, and at Cancel, leaving no file; a page's title reaches nothing with a control
character in it."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import pytest
from yt_dlp.dependencies import Cryptodome

from igot.cli import build_parser, run_command_options
from igot.errors import IgotError
from igot.links import allowed_local, is_local_address, local_address_of
from igot.media.source import fetch, videos_of
from igot.outputs.store import Library
from igot.pipeline import RunOptions, check_options
from igot.workspace.queue import Queue
from tests.webserver import serve

ENDLESS = {"/radio": "audio/mpeg", "/page": "text/html"}  # a live radio; a page that never ends
EVIL_TITLE = "Inter\x1b[31mview\x07 \x1b]0;pwned\x07with Ana\x1b[2J"


@pytest.fixture(scope="module")
def media(tmp_path_factory) -> Path:
    """A folder with a 2-second clip, its HLS form (two segments), and pages."""
    root = tmp_path_factory.mktemp("media")
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=2",
                    "-c:a", "aac", str(root / "clip.m4a")], check=True)
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=2",
                    "-c:a", "aac", "-f", "hls", "-hls_time", "1", "-hls_list_size", "0",
                    "-hls_segment_filename", str(root / "seg%d.ts"), str(root / "vod.m3u8")], check=True)
    # The same, encrypted (AES-128): yt-dlp without pycryptodomex hands it to ffmpeg.
    (root / "k.key").write_bytes(bytes(range(16)))
    (root / "keyinfo").write_text(f"k.key\n{root / 'k.key'}\n")
    subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-f", "lavfi", "-i", "sine=frequency=440:duration=2",
                    "-c:a", "aac", "-f", "hls", "-hls_time", "1", "-hls_list_size", "0", "-hls_key_info_file", str(root / "keyinfo"),
                    "-hls_segment_filename", str(root / "enc%d.ts"), str(root / "enc.m3u8")], check=True)
    (root / "evil.html").write_text(f'<html><head><title>{EVIL_TITLE}</title></head><body><video src="clip.m4a"></video>'
                                    '</body></html>')
    return root


def other_server(root: Path, heard: list):
    """A second local server: the one a page must not send iGot to."""
    return serve(root, heard=heard, endless=ENDLESS)


def test_a_link_to_this_computer_is_refused_and_its_server_hears_nothing(media, tmp_path):
    heard: list[str] = []
    with serve(media, heard=heard) as url:
        for link in (f"{url}/clip.m4a", f"{url}/evil.html", url.replace("127.0.0.1", "localhost") + "/clip.m4a"):
            with pytest.raises(IgotError) as error:
                fetch(link, tmp_path / "work", progress=False)
            said = str(error.value)
            assert said.startswith(f"{link} is at ") and "an address on this computer or its local network" in said, said
            assert "--allow-local-links" in said  # the fix, for a link that is the user's own
        # Listing a playlist's videos (igot run, the workspace's Add) asks nothing of it either.
        assert videos_of(f"{url}/evil.html") == [(f"{url}/evil.html", "")]
    assert heard == []  # not one request: not even a GET that a router would act on
    assert not any((tmp_path / "work").iterdir())


def test_allowed_local_links_are_downloaded(media, tmp_path):
    with serve(media) as url:
        port = url.rsplit(":", 1)[1]
        for allow in (True, [f"127.0.0.1:{port}"], ["127.0.0.1"], [f"localhost:{port}"]):
            link = (url.replace("127.0.0.1", "localhost") if allow == [f"localhost:{port}"] else url) + "/clip.m4a"
            source, path = fetch(link, tmp_path / str(len(list(tmp_path.iterdir()))), progress=False, allow_local_links=allow)
            assert path.read_bytes() == (media / "clip.m4a").read_bytes()
        with pytest.raises(IgotError, match="a local server not allowed by --allow-local-server") as error:
            fetch(f"{url}/clip.m4a", tmp_path / "other", progress=False, allow_local_links=["127.0.0.1:1"])
        assert f"add --allow-local-server 127.0.0.1:{port}" in str(error.value)


def test_a_redirect_to_another_local_server_is_refused(media, tmp_path):
    """The user allows their media server (A); a link on it redirects to another server (B) on
    this computer: refused, and B hears nothing. Allowing every local address, the same link plays."""
    heard_a: list[str] = []
    heard_b: list[str] = []
    with other_server(media, heard_b) as b, serve(media, heard=heard_a, redirects={"/go": f"{b}/clip.m4a"}) as a:
        allow_a = [a.removeprefix("http://")]
        with pytest.raises(IgotError) as error:
            fetch(f"{a}/go", tmp_path / "work", progress=False, allow_local_links=allow_a)
        assert str(error.value).startswith(f"{a}/go leads to {b}/clip.m4a, at 127.0.0.1:"), str(error.value)
        assert heard_a and heard_b == []
        assert not any((tmp_path / "work").iterdir())
        _, path = fetch(f"{a}/go", tmp_path / "all", progress=False, allow_local_links=True)
        assert path.read_bytes() == (media / "clip.m4a").read_bytes() and heard_b


def test_a_page_that_embeds_a_video_of_another_local_server_is_refused(media, tmp_path):
    heard_b: list[str] = []
    site = tmp_path / "site"
    site.mkdir()
    with other_server(media, heard_b) as b:
        (site / "page.html").write_text(f'<html><head><title>Embed</title></head><body><video src="{b}/clip.m4a"></video>'
                                        '</body></html>')
        with serve(site) as a:
            with pytest.raises(IgotError, match=f"leads to {b}/clip.m4a"):
                fetch(f"{a}/page.html", tmp_path / "work", progress=False, allow_local_links=[a.removeprefix("http://")])
            assert heard_b == []
            source, _ = fetch(f"{a}/page.html", tmp_path / "all", progress=False, allow_local_links=True)
            assert source.title.startswith("Embed") and heard_b


def test_hls_fragments_on_another_local_server_are_refused(media, tmp_path):
    """A playlist on the allowed server whose media fragments are on another one: the fragments
    are requests yt-dlp makes on the page's behalf, and are refused like the page would be."""
    heard_b: list[str] = []
    site = tmp_path / "site"
    site.mkdir()
    with other_server(media, heard_b) as b:
        playlist = (media / "vod.m3u8").read_text()
        (site / "talk.m3u8").write_text("\n".join(f"{b}/{line}" if line.startswith("seg") else line for line in playlist.splitlines()))
        with serve(site) as a:
            with pytest.raises(IgotError, match=f"leads to {b}/seg0.ts"):
                fetch(f"{a}/talk.m3u8", tmp_path / "work", progress=False, allow_local_links=[a.removeprefix("http://")])
            assert heard_b == []
            assert not list((tmp_path / "work").rglob("*"))  # no fragment, no .part
            _, path = fetch(f"{a}/talk.m3u8", tmp_path / "all", progress=False, allow_local_links=True)
            segments = [f"/{line}" for line in playlist.splitlines() if line.startswith("seg")]
            assert len(segments) > 1 and heard_b == segments and path.stat().st_size > 10_000


def test_an_encrypted_stream_reaches_no_other_local_server(media, tmp_path):
    """Without pycryptodomex, yt-dlp hands an encrypted HLS stream to ffmpeg, which fetches the
    fragments itself, from wherever the playlist says: that ffmpeg may fetch nothing from the
    network. With it, yt-dlp decrypts the fragments itself, each through iGot's checked
    connections. Either way the server the playlist points at hears nothing."""
    heard_b: list[str] = []
    site = tmp_path / "site"
    site.mkdir()
    (site / "k.key").write_bytes((media / "k.key").read_bytes())
    with other_server(media, heard_b) as b:
        playlist = (media / "enc.m3u8").read_text()
        (site / "enc.m3u8").write_text("\n".join(f"{b}/{line}" if line.startswith("enc") else line for line in playlist.splitlines()))
        with serve(site) as a:
            with pytest.raises(IgotError) as refused:
                fetch(f"{a}/enc.m3u8", tmp_path / "work", progress=False, allow_local_links=[a.removeprefix("http://")])
            if Cryptodome.AES is None:
                assert re.search("leaves to ffmpeg .* Install pycryptodomex", str(refused.value)), refused.value
            assert heard_b == []
            assert not list((tmp_path / "work").rglob("*"))
            _, path = fetch(f"{a}/enc.m3u8", tmp_path / "all", progress=False, allow_local_links=True)
            assert path.stat().st_size > 10_000 and heard_b  # allowed everything: ffmpeg fetches them


def test_the_addresses_a_link_may_not_reach():
    local = ["127.0.0.1", "127.8.9.10", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
             "0.0.0.0", "224.0.0.251", "239.255.255.250", "255.255.255.255", "192.0.2.7", "240.0.0.1",
             "::1", "::", "fe80::1", "fe80::1%eth0", "fc00::1", "fd12:3456::1", "ff02::1",
             "::ffff:127.0.0.1", "::ffff:192.168.0.1", "2002:7f00:1::1", "64:ff9b::a9fe:a9fe", "not an address"]
    public = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808",
              "2002:808:808::1"]
    assert [a for a in local if not is_local_address(a)] == []
    assert [a for a in public if is_local_address(a)] == []
    assert local_address_of("localhost") in ("127.0.0.1", "::1")
    assert local_address_of("[::1]") == "::1" and local_address_of("8.8.8.8") is None
    # After a redirect, or for a page's video, the decision is the same, on the address connected to.
    assert not allowed_local(False, "http://example.com/a.mp4", "192.168.0.10")  # a name resolved to a local address
    assert allowed_local(False, "http://example.com/a.mp4", "93.184.216.34")
    assert allowed_local(["192.168.0.10:8096"], "http://192.168.0.10:8096/a.mp4", "192.168.0.10")
    assert allowed_local(["nas.local"], "https://nas.local/a.mp4", "192.168.0.10")
    assert not allowed_local(["nas.local:8096"], "https://nas.local/a.mp4", "192.168.0.10")  # port 443
    assert not allowed_local(["192.168.0.10"], "http://router.lan/reboot", "192.168.0.1")


def test_the_flags_of_run_and_serve(tmp_path):
    parser = build_parser()
    default = run_command_options(parser.parse_args(["run", "x.mp3"]))
    assert (default.allow_local_links, default.max_download_gb, default.max_download_hours) == (False, 4.0, 2.0)
    for command in (["run", "x.mp3"], ["serve", "--out", str(tmp_path)]):
        given = parser.parse_args([*command, "--allow-local-server", "192.168.1.20:8096", "--allow-local-server", "nas.local",
                                   "--max-download-gb", "1.5", "--max-download-hours", "0.5"])
        if command[0] == "run":
            options = run_command_options(given)
        else:
            from igot.pipeline.flags import run_options_from
            options = run_options_from(given)
        assert (options.allow_local_links, options.max_download_gb, options.max_download_hours) == (
            ["192.168.1.20:8096", "nas.local"], 1.5, 0.5)
        assert run_command_options(parser.parse_args(["run", "x", "--allow-local-links"])).allow_local_links is True
    with pytest.raises(IgotError, match="'nas.local/x' is not a HOST or HOST:PORT"):
        run_command_options(parser.parse_args(["run", "x.mp3", "--allow-local-server", "nas.local/x"]))
    for bad in (dict(max_download_gb=0), dict(max_download_hours=-1), dict(allow_local_links=["a:b"])):
        with pytest.raises(IgotError):
            check_options(RunOptions(**bad))


def test_an_endless_stream_stops_at_the_most_a_download_may_take_leaving_no_file(media, tmp_path):
    heard: list[str] = []
    with other_server(media, heard) as url:
        start = time.monotonic()
        with pytest.raises(IgotError) as error:
            fetch(f"{url}/radio", tmp_path / "big", progress=False, allow_local_links=True, max_gb=0.02)
        assert str(error.value).startswith(f"{url}/radio is more than 0.02 GB, the most iGot downloads.")
        assert "--max-download-gb" in str(error.value)
        assert time.monotonic() - start < 20
        assert not any((tmp_path / "big").iterdir())  # no half file, no .part

        start = time.monotonic()
        with pytest.raises(IgotError) as error:
            fetch(f"{url}/radio", tmp_path / "long", progress=False, allow_local_links=True, max_hours=2 / 3600)
        assert str(error.value).startswith(f"Downloading {url}/radio took more than 2 seconds"), str(error.value)
        assert "--max-download-hours" in str(error.value)
        assert time.monotonic() - start < 20
        assert not any((tmp_path / "long").iterdir())


def test_a_live_stream_is_refused_before_its_download(media, tmp_path):
    """An HLS playlist with no end (#EXT-X-ENDLIST): a live stream, refused before any fragment."""
    heard: list[str] = []
    site = tmp_path / "site"
    site.mkdir()
    for segment in media.glob("seg*.ts"):
        (site / segment.name).write_bytes(segment.read_bytes())
    (site / "live.m3u8").write_text((media / "vod.m3u8").read_text().replace("#EXT-X-ENDLIST", ""))
    with serve(site, heard=heard) as url:
        with pytest.raises(IgotError) as error:
            fetch(f"{url}/live.m3u8", tmp_path / "work", progress=False, allow_local_links=True)
    assert str(error.value).startswith(f"{url}/live.m3u8 is a live stream: it has no end to download"), str(error.value)
    assert heard and not any(path.endswith(".ts") for path in heard)
    assert not any((tmp_path / "work").iterdir())


def test_a_file_larger_than_the_most_a_download_may_take_is_refused_before_it_comes(media, tmp_path):
    heard: list[str] = []
    with serve(media, heard=heard) as url:
        with pytest.raises(IgotError, match=f"{url}/clip.m4a is more than 1e-05 GB, the most iGot downloads"):
            fetch(f"{url}/clip.m4a", tmp_path / "work", progress=False, allow_local_links=True, max_gb=1e-5)
    assert not any((tmp_path / "work").iterdir())


def test_a_page_that_never_ends_is_not_read_into_memory_for_ever(media, tmp_path):
    with other_server(media, []) as url:
        start = time.monotonic()
        with pytest.raises(IgotError, match=f"{url}/page is a page of more than 50 MB, more than any web page holds"):
            fetch(f"{url}/page", tmp_path / "work", progress=False, allow_local_links=True)
        assert videos_of(f"{url}/page", allow_local_links=True) == [(f"{url}/page", "")]  # given back as it is
        assert time.monotonic() - start < 60


class Stop(Exception):
    """What a progress hook raises to stop the run (the workspace's Cancel raises its own)."""


def test_the_runs_progress_hook_is_told_the_bytes_and_stops_the_download(media, tmp_path):
    told: list[tuple[str, float, float]] = []
    pressed: dict[str, float] = {}

    def hook(what: str, done: float, total: float) -> None:
        told.append((what, done, total))
        if done > 1e6 and "at" not in pressed:
            pressed["at"] = time.monotonic()
        if "at" in pressed:
            raise Stop()

    with other_server(media, []) as url:
        with pytest.raises(Stop):  # the hook's own exception, not a download error
            fetch(f"{url}/radio", tmp_path / "work", progress=hook, allow_local_links=True)
    assert time.monotonic() - pressed["at"] < 1
    assert told[0][0] == "Downloading audio" and told[-1][1] > 1e6
    assert not any((tmp_path / "work").iterdir())


def test_cancel_in_the_workspace_stops_a_download_within_seconds(media, tmp_path):
    folder = tmp_path / "library"
    folder.mkdir()
    heard: list[str] = []
    options = RunOptions(model="bundled:tiny.en", word_timing="engine", punctuate=False, summary=False, meaning=False, voices=False,
                         allow_local_links=True)
    with serve(media, heard=heard, endless=ENDLESS) as url:
        queue = Queue(Library(folder), options)
        try:
            [job] = queue.add({"links": f"{url}/radio"})
            deadline = time.monotonic() + 30
            while heard.count("/radio") < 2:  # looked at (videos_of, the extractor), then downloading
                assert time.monotonic() < deadline, heard
                time.sleep(0.05)
            time.sleep(1)
            assert queue.cancel(job["id"])["stopping"]
            cancelled = time.monotonic()
            while (state := next(j for j in queue.listing() if j["id"] == job["id"])["state"]) == "running":
                assert time.monotonic() - cancelled < 10, "Cancel did not stop the download"
                time.sleep(0.05)
            assert state == "cancelled"
        finally:
            queue.close()
    left = [p for p in folder.rglob("*") if p.is_file() and p.suffix in (".part", ".mp3", ".ytdl")]
    assert left == []


def test_a_pages_title_reaches_nothing_with_a_control_character(media, tmp_path):
    with serve(media) as url:
        source, _ = fetch(f"{url}/evil.html", tmp_path / "work", progress=False, allow_local_links=True)
        [(link, title)] = videos_of(f"{url}/evil.html", allow_local_links=True)
        folder = tmp_path / "library"
        folder.mkdir()
        queue = Queue(Library(folder), RunOptions(allow_local_links=True))
        lines: list[str] = []
        queue.log = lines.append
        try:
            [job] = queue.add({"links": f"{url}/evil.html"})
            queue.cancel(job["id"])
        finally:
            queue.close()
    for text in (source.title, title, job["name"], *lines):
        assert not any(ord(c) < 32 or c == "\x7f" for c in text), repr(text)
        assert "[31m" not in text and "pwned" not in text
    assert source.title.startswith("Interview with Ana")
    # A file's name is someone else's words too.
    named = tmp_path / "call\x1b[2J\x07 with Bo.m4a"
    named.write_bytes(b"")
    assert fetch(str(named), tmp_path)[0].title == "call with Bo"
