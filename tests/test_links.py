import pytest

from igot.errors import IgotError
from igot.links import is_url, link_at, video_kind_and_url, youtube_id

YT = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"


@pytest.mark.parametrize(
    "url",
    [
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ",
        "https://youtube.com/watch?v=dQw4w9WgXcQ",
        "http://www.youtube.com/watch?v=dQw4w9WgXcQ",
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG&index=3",
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42s",
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ&si=abcDEF123",
        "https://www.youtube.com/watch?feature=shared&v=dQw4w9WgXcQ",
        "https://www.youtube.com/watch?v=dQw4w9WgXcQ#t=10",
        "https://m.youtube.com/watch?v=dQw4w9WgXcQ",
        "https://music.youtube.com/watch?v=dQw4w9WgXcQ&feature=share",
        "https://youtu.be/dQw4w9WgXcQ",
        "https://youtu.be/dQw4w9WgXcQ?si=Xyz_-123",
        "https://youtu.be/dQw4w9WgXcQ?t=30",
        "https://www.youtube.com/shorts/dQw4w9WgXcQ",
        "https://youtube.com/shorts/dQw4w9WgXcQ?feature=share",
        "https://www.youtube.com/embed/dQw4w9WgXcQ",
        "https://www.youtube.com/embed/dQw4w9WgXcQ?start=5",
        "https://www.youtube.com/live/dQw4w9WgXcQ?si=abc",
        "https://www.youtube.com/v/dQw4w9WgXcQ",
        "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ",
        "  https://youtu.be/dQw4w9WgXcQ  ",
    ],
)
def test_youtube_forms(url):
    assert youtube_id(url) == "dQw4w9WgXcQ"
    assert video_kind_and_url(url) == ("youtube", YT)


@pytest.mark.parametrize(
    "url",
    [
        "https://www.youtube.com/playlist?list=PLx0sYbCqOb8TBPRdmBHs5Iftvv9TPboYG",
        "https://www.youtube.com/@somechannel",
        "https://www.youtube.com/watch?v=tooshort",
        "https://notyoutube.com/watch?v=dQw4w9WgXcQ",
    ],
)
def test_youtube_without_a_video_is_web(url):
    assert youtube_id(url) is None
    assert video_kind_and_url(url) == ("web", url)


@pytest.mark.parametrize(
    "url, canonical",
    [
        ("https://vimeo.com/76979871", "https://vimeo.com/76979871"),
        ("https://www.vimeo.com/76979871", "https://vimeo.com/76979871"),
        ("https://vimeo.com/76979871?share=copy", "https://vimeo.com/76979871"),
        ("https://vimeo.com/76979871#t=20s", "https://vimeo.com/76979871"),
        ("https://vimeo.com/76979871/2e4fd1b2c3", "https://vimeo.com/76979871/2e4fd1b2c3"),
        ("https://vimeo.com/76979871/2e4fd1b2c3?share=copy", "https://vimeo.com/76979871/2e4fd1b2c3"),
        ("https://player.vimeo.com/video/76979871", "https://vimeo.com/76979871"),
        ("https://player.vimeo.com/video/76979871?h=2e4fd1b2c3&badge=0", "https://vimeo.com/76979871/2e4fd1b2c3"),
        ("https://vimeo.com/channels/staffpicks/76979871", "https://vimeo.com/76979871"),
        ("https://vimeo.com/groups/shortfilms/videos/76979871", "https://vimeo.com/76979871"),
        ("https://vimeo.com/showcase/1234567/video/76979871", "https://vimeo.com/76979871"),
    ],
)
def test_vimeo_forms(url, canonical):
    assert video_kind_and_url(url) == ("vimeo", canonical)


@pytest.mark.parametrize("url", ["https://vimeo.com/showcase/1234567", "https://vimeo.com/user12345"])
def test_vimeo_without_a_video_is_web(url):
    assert video_kind_and_url(url) == ("web", url)


@pytest.mark.parametrize(
    "url, canonical",
    [
        ("https://example.com/files/interview.mp4", "https://example.com/files/interview.mp4"),
        ("https://example.com/a/b.M4A", "https://example.com/a/b.M4A"),
        ("http://127.0.0.1:8000/clip.mp3", "http://127.0.0.1:8000/clip.mp3"),
        ("https://cdn.example.com/x.wav?sig=abc&exp=1", "https://cdn.example.com/x.wav?sig=abc&exp=1"),
        ("https://example.com/x.webm#t=10", "https://example.com/x.webm"),
        ("https://example.com/my%20talk.mkv", "https://example.com/my%20talk.mkv"),
        ("https://example.com/x.mov", "https://example.com/x.mov"),
        ("https://example.com/x.ogg", "https://example.com/x.ogg"),
        ("https://example.com/x.opus", "https://example.com/x.opus"),
        ("https://example.com/x.flac", "https://example.com/x.flac"),
        ("https://example.com/x.aac", "https://example.com/x.aac"),
        ("https://example.com/x.m4v", "https://example.com/x.m4v"),
    ],
)
def test_media_links(url, canonical):
    assert video_kind_and_url(url) == ("media", canonical)


@pytest.mark.parametrize(
    "url, canonical",
    [
        ("https://www.dailymotion.com/video/x7tgad0", "https://www.dailymotion.com/video/x7tgad0"),
        ("https://example.com/talks/interview-3#comments", "https://example.com/talks/interview-3"),
        ("https://example.com/mp4", "https://example.com/mp4"),
        ("https://example.com/page.html?file=x.mp4", "https://example.com/page.html?file=x.mp4"),
    ],
)
def test_web_links(url, canonical):
    assert video_kind_and_url(url) == ("web", canonical)


def test_not_a_link():
    with pytest.raises(IgotError, match="interview.mp4"):
        video_kind_and_url("interview.mp4")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("https://youtu.be/dQw4w9WgXcQ", True),
        ("http://127.0.0.1:8000/x.mp4", True),
        ("  HTTPS://example.com  ", True),
        ("interview.mp4", False),
        ("/home/ana/interview.mp4", False),
        ("C:\\Users\\ana\\interview.mp4", False),
        ("www.youtube.com/watch?v=dQw4w9WgXcQ", False),
        ("ftp://example.com/x.mp4", False),
        ("https://", False),
        ("", False),
    ],
)
def test_is_url(text, expected):
    assert is_url(text) is expected


@pytest.mark.parametrize(
    "url, kind, seconds, expected",
    [
        (YT, "youtube", 83.0, "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=83s"),
        (YT, "youtube", 83.99, "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=83s"),
        (YT, "youtube", 0.4, "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=0s"),
        ("https://youtu.be/dQw4w9WgXcQ?si=x", "youtube", 3725.5, "https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=3725s"),
        ("https://vimeo.com/76979871", "vimeo", 83.7, "https://vimeo.com/76979871#t=83s"),
        ("https://vimeo.com/76979871/2e4fd1b2c3", "vimeo", 83.7, "https://vimeo.com/76979871/2e4fd1b2c3#t=83s"),
        ("https://example.com/x.mp4", "media", 83.999, "https://example.com/x.mp4#t=83"),
        ("https://example.com/x.mp4?sig=a", "media", 12.0, "https://example.com/x.mp4?sig=a#t=12"),
        ("https://example.com/x.mp4#t=5", "media", 12.0, "https://example.com/x.mp4#t=12"),
        ("https://example.com/talks/3", "web", 61.2, "https://example.com/talks/3#t=61"),
        ("https://example.com/x.mp4", "media", -0.2, "https://example.com/x.mp4#t=0"),
    ],
)
def test_link_at(url, kind, seconds, expected):
    assert link_at(url, kind, seconds) == expected


def test_link_at_without_url():
    assert link_at(None, "file", 12.5) is None


def test_link_never_lands_after_the_phrase_starts():
    for seconds in (0.0, 0.999, 1.0, 59.5, 60.0, 3599.999):
        link = link_at(YT, "youtube", seconds)
        assert int(link.rsplit("t=", 1)[1].rstrip("s")) <= seconds
