"""Google Doc export against recorded Drive v3 exchanges: no Google server is reachable here.

The Drive client is built from its bundled discovery document and talks to a recording
HttpMockSequence, so each test sees exactly the requests iGot would send to Google.
"""

from __future__ import annotations

import email.parser
import email.policy
import html
import json
import re
import stat
import sys
import time
import types
from datetime import datetime, timedelta, timezone
from html.parser import HTMLParser
from pathlib import Path
from typing import NamedTuple
from urllib.parse import parse_qs, urlsplit

import googleapiclient.http
import httplib2
import pytest
from google.auth.exceptions import RefreshError
from google.oauth2.credentials import Credentials as UserCredentials
from google_auth_oauthlib.flow import InstalledAppFlow

from igot.errors import IgotError
from igot.outputs import gdoc
from igot.outputs.gdoc import (
    FOLDER,
    GOOGLE_DOC,
    RETRIES,
    SCOPES,
    doc_html,
    drive_service,
    export_to_google_doc,
    find_folder,
    upload_doc,
)
from igot.text import format_clock
from tests.test_export import NASTY, link, make_transcript, summarised

DATA = Path(__file__).parent / "data" / "drive"
ROOT_LIST = "files-list-found.json"  # "Research", found in My Drive
RESEARCH = "1Fq3mZk8T0dJx9VwY2pR7sLb4uHc6eNa5"
NEW_FOLDER = "1Kp7wQe2Rt5Yu8Io0Pa3Sd6Fg9Hj1Kl4Zx"
DOC = "1tWq8eRz3YuI6oP9aS2dF5gH8jK1lZ4xC7vB0nM3qW6e"


# --- recorded exchanges -----------------------------------------------------------------------
def reply(name: str) -> tuple[dict, bytes]:
    """A stored Drive response body; the status is the error's code, else 200."""
    body = (DATA / name).read_bytes()
    status = json.loads(body).get("error", {}).get("code", 200)
    return {"status": str(status), "content-type": "application/json; charset=UTF-8"}, body


class Sent(NamedTuple):
    method: str
    uri: str
    headers: dict
    body: bytes

    @property
    def query(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(urlsplit(self.uri).query).items()}

    def json(self) -> dict:
        return json.loads(self.body)


class Recorder(googleapiclient.http.HttpMockSequence):
    """Replays responses in order; keeps each request with its body read (upload chunks are streams)."""

    def __init__(self, responses):
        super().__init__(list(responses))
        self.sent: list[Sent] = []

    def request(self, uri, method="GET", body=None, headers=None, redirections=1, connection_type=None):
        if hasattr(body, "read"):
            body = body.read()
        if isinstance(body, str):
            body = body.encode("utf-8")
        self.sent.append(Sent(method, uri, dict(headers or {}), body or b""))
        return super().request(uri, method, body, headers, redirections, connection_type)


def drive(*responses) -> tuple:
    http = Recorder(responses)
    return drive_service(http=http), http


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:
    """The client's backoff sleeps, recorded instead of slept (only the network layer is patched)."""
    slept: list[float] = []
    monkeypatch.setattr(googleapiclient.http.time, "sleep", slept.append)
    return slept


def multipart(sent: Sent) -> tuple[dict, str, bytes]:
    """(metadata, media content type, media bytes) of a multipart/related upload request."""
    head = f"Content-Type: {sent.headers['content-type']}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.default).parsebytes(head + sent.body)
    meta, media = list(message.iter_parts())
    assert meta.get_content_type() == "application/json"
    return json.loads(meta.get_payload(decode=True)), media.get_content_type(), media.get_payload(decode=True)


class DocReader(HTMLParser):
    """The Doc as a reader sees it: headings, every link, and the transcript as (text, href) pieces."""

    def __init__(self) -> None:
        super().__init__()
        self.headings: list[str] = []
        self.links: list[str] = []
        self.pieces: list[list] = []  # [text, href or None], after the "Transcript" heading
        self.tags: list[str] = []
        self._href: str | None = None
        self._heading = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "a":
            self._href = dict(attrs)["href"]
            self.links.append(self._href)
            if self.headings[-1:] == ["Transcript"]:
                self.pieces.append(["", self._href])
        if tag in ("h1", "h2"):
            self._heading = True
            self.headings.append("")

    def handle_endtag(self, tag):
        if tag == "a":
            self._href = None
        if tag in ("h1", "h2"):
            self._heading = False

    def handle_data(self, data):
        if self._heading:
            self.headings[-1] += data
        elif self.headings[-1:] == ["Transcript"]:
            if self._href is not None:
                self.pieces[-1][0] += data
            else:
                self.pieces.append([data, None])


def read_doc(page: str) -> DocReader:
    reader = DocReader()
    reader.feed(page)
    reader.close()
    return reader


def assert_every_phrase_once_in_order(page: str, t) -> None:
    doc = read_doc(page)
    assert [(text, href) for text, href in doc.pieces if href] == [(p.text, p.link) for p in t.phrases if p.link]
    # Unlinked phrases are plain text between the names and times; all appear once, in order.
    flat, pos = "".join(text for text, _ in doc.pieces), 0
    for p in t.phrases:
        assert flat.count(p.text) == 1
        pos = flat.index(p.text, pos) + len(p.text)  # ValueError when out of order
    assert "script" not in doc.tags


# --- the Doc's HTML ---------------------------------------------------------------------------
def test_doc_html_every_phrase_once_in_order_with_its_link():
    t = make_transcript()
    page = doc_html(t)
    assert_every_phrase_once_in_order(page, t)
    assert NASTY in t.phrases[2].text and "<script>" not in page


def test_doc_html_header_turns_and_summary():
    t = make_transcript()
    t.info["created"] = "2025-03-14T10:20:00Z"
    page = doc_html(t, summary=["Checks the balance <twice> a day", "Worried & unsure"], title="Onboarding – Joana")
    doc = read_doc(page)
    assert doc.headings == ["Onboarding – Joana", "Summary", "Transcript"]
    assert "<style" not in page and "class=" not in page  # the converter reads inline styles only
    facts = page[page.index("</h1>"):page.index("<h2>")]
    assert "2025-03-14" in facts and 'href="https://www.youtube.com/watch?v=abc123"' in facts
    assert "Language: pt" in facts and "Duration: 0:31" in facts and "Bob &quot;B&quot; &lt;Ltd&gt; &amp; Co" in facts
    assert "<li>Checks the balance &lt;twice&gt; a day</li><li>Worried &amp; unsure</li>" in page
    # One paragraph per speaker turn, opening with the name in the speaker's own colour and the time.
    turns = [line for line in page.splitlines() if line.startswith("<p style=\"margin")]
    assert len(turns) == 4
    colours = [line.split('"color:', 1)[1].split('"', 1)[0] for line in turns]
    assert colours[0] == colours[3] and len(set(colours[:3])) == 3
    assert ">Joana</b>" in turns[2] and f"({format_clock(8.0)})" in turns[2]
    assert "Summary" not in doc_html(t) and datetime.now().date().isoformat() in doc_html(make_transcript())


def test_doc_html_summary_points_link_their_times_and_flag_what_is_unverified():
    t = summarised()
    page = doc_html(t)
    doc = read_doc(page)
    assert doc.headings == ["Entrevista com a Joana — São Paulo", "Summary", "Transcript"]
    summary = page[page.index("<h2>Summary</h2>"):page.index("<h2>Transcript</h2>")]
    items = summary.split("<li>")[1:]
    assert len(items) == 4 and "Written by a language model" in summary and "class=" not in page
    assert f'<a href="{link(0.0).replace("&", "&amp;")}" style="color:#5b6472">[0:00]</a>' in items[0]
    assert f'<a href="{link(8.0).replace("&", "&amp;")}" style="color:#5b6472">[0:08]</a>' in items[0]
    assert '<span style="background-color:#fde4de">“I love it &lt;3”</span> <span style="color:#b23a1e;font-size:9pt">⚠ unverified quote</span>' in items[0]
    assert "⚠ no linked moment" in items[1] and "[0:04]</span>" in items[2] and "[0:06]</span>" in items[3]
    assert "javascript" not in page
    # Summary links come first; the transcript's pieces and links are unchanged.
    assert doc.links[:3] == ["https://www.youtube.com/watch?v=abc123", link(0.0), link(8.0)]
    assert_every_phrase_once_in_order(page, t)


def test_doc_html_without_speakers_or_speech():
    t = make_transcript()
    t.speakers = []
    for p in t.phrases:
        p.speaker = ""
    page = doc_html(t)
    assert "Unknown speaker" not in page and "<b" not in page.split("<h2>Transcript</h2>")[1]
    assert_every_phrase_once_in_order(page, t)
    t.phrases = []
    assert "No speech" in doc_html(t) and read_doc(doc_html(t)).links == ["https://www.youtube.com/watch?v=abc123"]


def test_doc_html_two_hour_interview_is_quick_and_small():
    from igot_dev.long_transcript import long_interview

    t = long_interview(hours=2.0)
    assert len(t.phrases) > 1000 and len(t.words) > 15000
    start = time.perf_counter()
    page = doc_html(t)
    seconds = time.perf_counter() - start
    size = len(page.encode("ascii", "xmlcharrefreplace"))  # what upload_doc sends
    print(f"\n[gdoc] 2 h, {len(t.phrases)} phrases: doc_html {seconds:.3f} s, {size / 1e6:.2f} MB")
    assert seconds < 2.0 and size < gdoc.SIMPLE_UPLOAD_LIMIT
    assert len(read_doc(page).links) == len(t.phrases) + 1  # every phrase, and the video


# --- folders ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        f"https://drive.google.com/drive/folders/{RESEARCH}",
        f"https://drive.google.com/drive/u/0/folders/{RESEARCH}?usp=sharing",
        f"https://drive.google.com/drive/u/1/folders/{RESEARCH}/",
        f"drive.google.com/drive/folders/{RESEARCH}",
        f"https://drive.google.com/open?id={RESEARCH}",
        f"  {RESEARCH} ",
    ],
)
def test_folder_links_and_ids_need_no_request(text):
    service, http = drive()
    assert find_folder(service, text) == RESEARCH and http.sent == []


@pytest.mark.parametrize("text", ["", "  ", "/", "My Drive", "https://drive.google.com/drive/my-drive"])
def test_top_of_my_drive(text):
    service, http = drive()
    assert find_folder(service, text) == "root" and http.sent == []


@pytest.mark.parametrize(
    "text",
    [
        f"https://docs.google.com/document/d/{DOC}/edit",
        f"https://drive.google.com/file/d/{RESEARCH}/view",
        "https://www.dropbox.com/home/Research",
    ],
)
def test_a_file_link_is_not_a_folder(text):
    service, http = drive()
    with pytest.raises(IgotError, match="not a Google Drive folder link") as err:
        find_folder(service, text)
    assert "\n" not in str(err.value) and http.sent == []


def test_folder_path_finds_existing_level_and_creates_missing_one():
    service, http = drive(reply(ROOT_LIST), reply("files-list-empty.json"), reply("folder-created.json"))
    assert find_folder(service, "My Drive/Research/ Onboarding interviews /") == NEW_FOLDER
    look_root, look_research, create = http.sent
    assert look_root.method == look_research.method == "GET"
    assert look_root.query["q"] == (
        f"name = 'Research' and 'root' in parents and mimeType = '{FOLDER}' and trashed = false"
    )
    assert look_research.query["q"] == (
        f"name = 'Onboarding interviews' and '{RESEARCH}' in parents and mimeType = '{FOLDER}' and trashed = false"
    )
    assert create.method == "POST" and urlsplit(create.uri).path == "/drive/v3/files"
    assert create.json() == {"name": "Onboarding interviews", "mimeType": FOLDER, "parents": [RESEARCH]}


def test_folder_names_with_quotes_and_backslashes_are_escaped():
    service, http = drive(reply("files-list-empty.json"), reply("folder-created.json"))
    find_folder(service, "Ana's \"Pix\" \\ notes")
    assert http.sent[0].query["q"].startswith("name = 'Ana\\'s \"Pix\" \\\\ notes' and 'root' in parents")
    assert http.sent[1].json()["name"] == "Ana's \"Pix\" \\ notes"


def test_429_on_files_list_is_retried(sleeps):
    service, http = drive(reply("error-429-rateLimitExceeded.json"), reply(ROOT_LIST))
    assert find_folder(service, "Research") == RESEARCH
    assert len(http.sent) == 2 and http.sent[0] == http.sent[1] and len(sleeps) == 1


def test_rate_limit_that_never_ends_is_one_clear_error(sleeps):
    service, http = drive(*[reply("error-403-userRateLimitExceeded.json")] * (RETRIES + 1))
    with pytest.raises(IgotError, match="busy.*Wait a few minutes"):
        find_folder(service, "Research")
    assert len(http.sent) == RETRIES + 1 and len(sleeps) == RETRIES


# --- upload -----------------------------------------------------------------------------------
def test_export_uploads_html_for_conversion_into_the_folder(sleeps):
    t = make_transcript()
    service, http = drive(
        reply(ROOT_LIST), reply("files-list-empty.json"), reply("folder-created.json"), reply("doc-created.json")
    )
    # repository=False: the Doc alone (the Sheet and the kept JSON: tests/test_drive_repository.py)
    url = export_to_google_doc(t, "Research/Onboarding", summary=["Pays with Pix"], service=service, repository=False)
    assert url == f"https://docs.google.com/document/d/{DOC}/edit?usp=drivesdk"
    upload = http.sent[-1]
    assert upload.method == "POST" and upload.query["uploadType"] == "multipart"
    assert urlsplit(upload.uri).path == "/upload/drive/v3/files" and upload.query["fields"] == "id,webViewLink"
    meta, media_type, media = multipart(upload)
    assert meta == {"name": "Entrevista com a Joana — São Paulo", "mimeType": GOOGLE_DOC, "parents": [NEW_FOLDER]}
    assert media_type == "text/html"
    page = media.decode("ascii")  # non-ASCII sent as references: right whatever charset Drive assumes
    assert_every_phrase_once_in_order(page, t)
    assert read_doc(page).headings == ["Entrevista com a Joana — São Paulo", "Summary", "Transcript"]
    assert sleeps == []


def test_429_then_success_on_upload_is_retried(sleeps):
    service, http = drive(
        reply("error-429-rateLimitExceeded.json"), reply("error-500-backendError.json"), reply("doc-created.json")
    )
    doc_id, url = upload_doc(service, "<p>Olá</p>", "Entrevista", RESEARCH)
    assert doc_id == DOC and url.startswith("https://docs.google.com/document/d/")
    assert len(http.sent) == 3 and http.sent[0].body == http.sent[2].body and len(sleeps) == 2


def test_url_falls_back_when_drive_gives_no_link():
    service, _ = drive(({"status": "200"}, json.dumps({"id": DOC})))
    assert upload_doc(service, "<p>x</p>", "x", "root") == (DOC, f"https://docs.google.com/document/d/{DOC}/edit")


@pytest.mark.parametrize(
    "response, message",
    [
        ("error-403-insufficientPermissions.json", "sign-in does not let iGot"),
        ("error-403-appNotAuthorizedToFile.json", "folders it created itself"),
        ("error-404-notFound.json", "folders it created itself.*give a folder path"),
        ("error-403-storageQuotaExceeded.json", "Drive is full"),
        ("error-403-accessNotConfigured.json", "Drive API is not enabled.*Library"),
    ],
)
def test_permanent_errors_are_one_clear_line_and_not_retried(response, message, sleeps):
    service, http = drive(reply(response))
    with pytest.raises(IgotError, match=message) as err:
        upload_doc(service, "<p>x</p>", "Entrevista", "1Zy9xWv8uTs7rQp6oNm5lKj4iHg3fEd2c")
    assert len(http.sent) == 1 and sleeps == []
    assert "\n" not in str(err.value) and err.value.fix and err.value.__cause__ is None


def test_large_html_goes_up_resumable_in_chunks(sleeps):
    page = "<p>" + "Olá, tudo bem? " * 400_000 + "</p>"  # ~6.8 MB once "á" is a reference
    data = page.encode("ascii", "xmlcharrefreplace")
    assert len(data) > gdoc.SIMPLE_UPLOAD_LIMIT
    session = "https://www.googleapis.com/upload/drive/v3/files?uploadType=resumable&upload_id=ABPtcPp"
    service, http = drive(
        ({"status": "200", "location": session}, b""),
        ({"status": "308", "range": f"bytes=0-{gdoc.CHUNK - 1}"}, b""),
        reply("error-429-rateLimitExceeded.json"),  # a chunk refused once, then sent again
        reply("doc-created.json"),
    )
    assert upload_doc(service, page, "Longa", RESEARCH)[0] == DOC
    start, first, refused, second = http.sent
    assert start.method == "POST" and start.query["uploadType"] == "resumable"
    assert start.headers["X-Upload-Content-Type"] == "text/html"
    assert start.json() == {"name": "Longa", "mimeType": GOOGLE_DOC, "parents": [RESEARCH]}
    assert first.method == second.method == "PUT" and first.uri == second.uri == session
    assert refused == second and first.body + second.body == data and len(sleeps) == 1


# --- signing in -------------------------------------------------------------------------------
def fake_colab(monkeypatch) -> list[str]:
    calls: list[str] = []
    auth = types.ModuleType("google.colab.auth")
    auth.authenticate_user = lambda: calls.append("authenticate_user")
    colab = types.ModuleType("google.colab")
    colab.auth = auth
    monkeypatch.setitem(sys.modules, "google.colab", colab)
    monkeypatch.setitem(sys.modules, "google.colab.auth", auth)

    def default(scopes=None, **kwargs):
        calls.append(scopes)
        return "colab-credentials", "project"

    monkeypatch.setattr(gdoc.google.auth, "default", default)
    return calls


def test_colab_signs_in_with_drive_file_scope_only(monkeypatch):
    calls = fake_colab(monkeypatch)
    assert gdoc.credentials() == "colab-credentials"
    assert calls == ["authenticate_user", ["https://www.googleapis.com/auth/drive.file"]]


def write_client(tmp_path: Path, kind: str = "installed") -> Path:
    path = tmp_path / "client_secret.json"
    path.write_text(json.dumps({kind: {
        "client_id": "123456789012-abc.apps.googleusercontent.com",
        "project_id": "igot-test",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": "https://oauth2.googleapis.com/token",
        "client_secret": "GOCSPX-test",
        "redirect_uris": ["http://localhost"],
    }}))
    return path


@pytest.fixture
def browser(monkeypatch) -> list[str]:
    """Stands in for the browser and Google: records the authorization URL iGot builds offline."""
    urls: list[str] = []

    def run_local_server(self, port=0, **kwargs):
        self.redirect_uri = "http://localhost:8765/"
        url, _ = self.authorization_url()
        urls.append(url)
        return UserCredentials(
            "access-token", refresh_token="refresh-token", token_uri="https://oauth2.googleapis.com/token",
            client_id="123456789012-abc.apps.googleusercontent.com", client_secret="GOCSPX-test", scopes=SCOPES,
            expiry=datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(hours=1),
        )

    monkeypatch.setattr(InstalledAppFlow, "run_local_server", run_local_server)
    return urls


def test_local_sign_in_asks_for_drive_file_only_and_keeps_the_token_private(tmp_path, browser):
    token = tmp_path / "igot" / "google-token.json"
    creds = gdoc.local_credentials(write_client(tmp_path), token)
    query = parse_qs(urlsplit(browser[0]).query)
    assert query["scope"] == ["https://www.googleapis.com/auth/drive.file"]
    assert query["client_id"] == ["123456789012-abc.apps.googleusercontent.com"] and query["access_type"] == ["offline"]
    assert stat.S_IMODE(token.stat().st_mode) == 0o600 and json.loads(token.read_text())["scopes"] == SCOPES
    assert creds.token == "access-token"
    # The next run reuses the saved token: no browser.
    assert gdoc.local_credentials(write_client(tmp_path), token).token == "access-token" and len(browser) == 1


def test_saved_token_with_other_scopes_is_asked_again(tmp_path, browser):
    token = tmp_path / "google-token.json"
    token.write_text(json.dumps({
        "token": "old", "refresh_token": "old-refresh", "client_id": "x", "client_secret": "y",
        "scopes": ["https://www.googleapis.com/auth/drive"],
    }))
    assert gdoc.local_credentials(write_client(tmp_path), token).token == "access-token" and len(browser) == 1
    assert json.loads(token.read_text())["scopes"] == SCOPES


def test_expired_token_is_refreshed(tmp_path, browser, monkeypatch):
    token = tmp_path / "google-token.json"
    token.write_text(json.dumps({
        "token": "old", "refresh_token": "refresh-token", "client_id": "x", "client_secret": "y",
        "token_uri": "https://oauth2.googleapis.com/token", "scopes": SCOPES, "expiry": "2020-01-01T00:00:00Z",
    }))

    def refresh(self, request):
        self.token, self.expiry = "fresh", datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(hours=1)

    monkeypatch.setattr(UserCredentials, "refresh", refresh)
    assert gdoc.local_credentials(write_client(tmp_path), token).token == "fresh" and browser == []
    assert json.loads(token.read_text())["token"] == "fresh"


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "No Google OAuth client file"),
        ("not json", "not JSON"),
        ("web", "Web application client"),
        (json.dumps({"type": "service_account", "client_email": "x@y"}), "service account key"),
    ],
)
def test_bad_client_secret_file_says_how_to_make_one(tmp_path, browser, monkeypatch, content, message):
    path = tmp_path / "client_secret.json"
    if content == "web":
        path = write_client(tmp_path, "web")
    elif content is not None:
        path.write_text(content)
    monkeypatch.setitem(sys.modules, "google.colab", None)  # not in Colab: the local flow
    with pytest.raises(IgotError, match=message) as err:
        gdoc.credentials(path)
    assert "OAuth client ID → Desktop app" in err.value.fix and "Google Drive API" in err.value.fix
    assert browser == []


def test_withdrawn_sign_in_asks_again(tmp_path, browser, monkeypatch):
    token = tmp_path / "google-token.json"
    token.write_text(json.dumps({
        "token": "old", "refresh_token": "revoked", "client_id": "x", "client_secret": "y",
        "scopes": SCOPES, "expiry": "2020-01-01T00:00:00Z",
    }))

    def refresh(self, request):
        raise RefreshError("invalid_grant: Token has been expired or revoked.")

    monkeypatch.setattr(UserCredentials, "refresh", refresh)
    assert gdoc.local_credentials(write_client(tmp_path), token).token == "access-token" and len(browser) == 1


def test_colab_sign_in_refused_is_one_clear_line(monkeypatch):
    calls = fake_colab(monkeypatch)

    def refuse():
        raise RuntimeError("Failed to fetch user credentials")

    monkeypatch.setattr(sys.modules["google.colab.auth"], "authenticate_user", refuse)
    with pytest.raises(IgotError, match="Colab's Google sign-in did not finish"):
        gdoc.credentials()
    assert calls == []


def test_no_network_is_one_clear_line(sleeps):
    class Offline(Recorder):
        def request(self, *args, **kwargs):
            raise httplib2.ServerNotFoundError("Unable to find the server at www.googleapis.com")

    service = drive_service(http=Offline([]))
    with pytest.raises(IgotError, match="Could not reach Google Drive.*internet connection"):
        find_folder(service, "Research")
    assert len(sleeps) == RETRIES


# --- corrections reach the Doc ------------------------------------------------------------------
def test_corrections_made_in_the_workspace_reach_the_doc_and_sheets_on_the_next_drive_save(tmp_path):
    """Issue 39: the workspace saves a correction here only (Drive is not asked on every click);
    the next save of the interview in Drive (a naming, the notebook, `igot rename`) sends the
    corrected transcript: the word the researcher typed and not the one the machine heard, the
    phrase under the speaker it was given to, the names given, in the Doc, the interviews'
    Sheet, the highlights' Sheet and the kept JSON."""
    from igot.outputs import corrections, highlights, store
    from igot.outputs.store import Library
    from igot.transcript import Transcript
    from tests.test_drive_repository import DOC_URL, exported, sent_rows
    from tests.test_highlights import interview

    folder, stem = tmp_path / "library", "joana"
    t = interview()  # Ana asks, Joana answers: "Honestly the price is too high …", "And the onboarding took me …"
    t = highlights.with_highlight(t, highlights.new_highlight(t, 4.0, 6.45, ["pricing"]))  # "Honestly the price is too"
    t.info.update(google_doc=DOC_URL, drive={"folder": RESEARCH, "name": "Interview with Joana"})  # published earlier
    store.save(t, folder, stem, drive=False)

    lib = Library(folder)
    for asked in ({"kind": "words", "phrase": 1, "text": "Honestly the pricing is too high for a small team."},
                  {"kind": "speaker", "phrase": 2, "speaker": "S1"},  # "And the onboarding …" was Ana's
                  {"kind": "names", "names": {"S1": "Ana Souza", "S2": "Joana Lima"}}):
        lib.change(stem, lib.open(stem).version, lambda t, asked=asked: corrections.correction(t, asked))
    corrected = Transcript.load(folder / f"{stem}.json")
    assert corrected.phrases[1].words[2].heard == "price"  # what the machine heard is kept in the JSON

    found = {"status": "200"}, json.dumps({"files": [{"id": "1keptJson"}]})
    service, http = drive(
        ({"status": "200"}, json.dumps({"id": DOC, "trashed": False})), reply("doc-created.json"),  # the Doc
        reply("files-list-sheet-found.json"), exported(), reply("sheet-created.json"),  # "iGot interviews"
        reply("files-list-empty.json"), reply("sheet-created.json"),  # "iGot highlights"
        reply("files-list-found.json"), found, reply("json-created.json"),  # the kept JSON
    )
    store.save(corrected, folder, stem, service=service)
    _, doc, _, _, sheet, _, marks, _, _, kept = http.sent

    page = multipart(doc)[2].decode("ascii")
    shown = html.unescape(re.sub(r"<[^>]+>", "", page))  # as the Doc reads (highlighted words are spans)
    turns = [line for line in shown.splitlines() if re.match(r"\S.* \(\d+:\d\d\): ", line)]
    assert turns == ["Ana Souza (0:00): How much would you pay for this?",
                     "Joana Lima (0:04): Honestly the pricing is too high for a small team.",
                     "Ana Souza (0:09): And the onboarding took me a whole week. Tell me more about that week."]
    assert "price is" not in shown and "Speakers: Ana Souza, Joana Lima" in shown
    assert "“Honestly the pricing is too” — Joana Lima [0:04]" in shown  # the highlight's quote, read again from the words
    assert_every_phrase_once_in_order(page, corrected)

    mine = next(r for r in sent_rows(sheet) if r[gdoc.SHEET_COLUMNS.index("Google Doc")] == DOC_URL)
    assert mine[gdoc.SHEET_COLUMNS.index("Speakers")] == "Ana Souza, Joana Lima"
    quoted = sent_rows(marks)[1]
    assert quoted[1] == "Joana Lima" and quoted[4] == "Honestly the pricing is too"
    drive_copy = Transcript.from_json(kept.body.decode("utf-8"))
    assert drive_copy.to_dict() == Transcript.load(folder / f"{stem}.json").to_dict()
    assert [p.speaker for p in drive_copy.phrases] == ["S1", "S2", "S1", "S1"] and len(drive_copy.edits) == 3
