"""Google Doc export: the transcript as a Doc in the user's Drive, every phrase a link.

Drive converts an uploaded HTML page into a Google Doc, so the Doc is made from HTML with inline
styles only (the converter ignores most of <style>). iGot asks for the drive.file scope alone: it
sees and changes only the files and folders it created itself, never the rest of the Drive.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date, datetime
from pathlib import Path
from typing import Any, Callable, Iterator, Optional, Sequence
from urllib.parse import parse_qs, urlsplit

from igot.errors import IgotError, install_hint
from igot.outputs import highlights as highlight_marks
from igot.outputs.export import (
    NO_MOMENT,
    NO_SPEECH,
    PALETTE,
    SUMMARY_NOTE,
    UNVERIFIED,
    Paragraph,
    Summary,
    clean_text,
    facts_line,
    format_clock,
    from_model,
    header_facts,
    highlight_link,
    point_segments,
    safe_link,
    slugify,
    speaker_turns,
    summary_items,
)
from igot.runtime.files import write_atomic
from igot.speakers.voices import VOICES_FILE, Voices, merged, voices_from_json, voices_to_json
from igot.transcript import Highlight, Phrase, SummaryPoint, Transcript

try:
    import google.auth
    import httplib2
    from google.auth.credentials import Credentials
    from google.auth.exceptions import RefreshError, TransportError
    from google.auth.transport.requests import Request
    from google.oauth2.credentials import Credentials as UserCredentials
    from google_auth_oauthlib.flow import InstalledAppFlow, WSGITimeoutError
    from googleapiclient.discovery import Resource, build
    from googleapiclient.errors import HttpError
    from googleapiclient.http import MediaIoBaseUpload
    from oauthlib.oauth2.rfc6749.errors import OAuth2Error
except ImportError as err:  # the CLI prints an IgotError as one line
    raise IgotError(
        f"The Google Doc export needs Google's client libraries ({err.name} is missing).",
        f"Run: {install_hint('gdoc')}",
    ) from err

SCOPES = ["https://www.googleapis.com/auth/drive.file"]  # only what iGot creates; never the whole Drive
CONFIG_DIR = Path("~/.config/igot")
CLIENT_SECRETS = CONFIG_DIR / "client_secret.json"
TOKEN_FILE = CONFIG_DIR / "google-token.json"

FOLDER = "application/vnd.google-apps.folder"
GOOGLE_DOC = "application/vnd.google-apps.document"
SIMPLE_UPLOAD_LIMIT = 5 * 1024 * 1024  # Drive's advice: one request up to 5 MB, resumable above
CHUNK = 4 * 1024 * 1024  # resumable chunks must be multiples of 256 KiB
RETRIES = 5  # 429 and 5xx: exponential backoff, about a minute of waiting in all
# A bare folder id: 33 characters from "1" today; "0B…" for old folders, "0A…" for shared drives.
DRIVE_ID = re.compile(r"1[A-Za-z0-9_-]{32}|0[AB][A-Za-z0-9_-]{17,26}")

INK, MUTED = "#1d2430", "#5b6472"
WARN, WARN_BACKGROUND = "#b23a1e", "#fde4de"  # unverified quotes: the HTML export's colours
HIGHLIGHT = "#ffe58a"  # highlighted words: the HTML export's and the workspace's colour
HOW_TO_CLIENT = (
    "Create one in the Google Cloud console: APIs & Services → Credentials → Create credentials → "
    "OAuth client ID → Desktop app, download its JSON, and enable the Google Drive API "
    "(APIs & Services → Library → Google Drive API)."
)
CHECK_CONNECTION = "Check the internet connection and run again."
SIGN_IN_AGAIN = f"Sign in again: in Colab run the cell again; on a computer delete {TOKEN_FILE} and run again."
IGOT_FOLDERS_ONLY = (
    "iGot may only use Drive folders it created itself (it never asks for your whole Drive): give a folder "
    "path such as Research/Interviews and iGot creates it; you can then move or share that folder and keep using it."
)


class Unreachable(IgotError):
    """Google Drive could not be reached (no network), or was still busy (429, 5xx) after the
    client's retries: a next request would most likely wait as long and fail alike."""


# --- the Doc's HTML ---------------------------------------------------------------------------
def _date(t: Transcript) -> str:
    """The transcript's date (info["created"], ISO) when it has one; else today."""
    created = t.info.get("created")
    if isinstance(created, str) and created.strip():
        try:
            return datetime.fromisoformat(created.strip().replace("Z", "+00:00")).date().isoformat()
        except ValueError:
            return clean_text(created)
    return date.today().isoformat()


def _web_link(url: Optional[str]) -> Optional[str]:
    """A link that works from a Doc: http(s) only, so no file: or relative links."""
    url = safe_link(url)
    return url if url and urlsplit(url).scheme.lower() in ("http", "https") else None


def _name(colour: int, name: str) -> str:
    return f'<b style="color:{PALETTE[colour % len(PALETTE)]}">{html.escape(name)}</b>'


def _doc_phrase(p: Phrase, runs: Sequence[tuple[int, int, list[Highlight]]] = ()) -> str:
    """A phrase, its highlighted words (highlights.marked) on the highlight colour."""
    e = html.escape
    text = "".join(f'<span style="background-color:{HIGHLIGHT}">{e(piece)}</span>' if covering else e(piece)
                   for piece, covering in highlight_marks.pieces(clean_text(p.text), runs))
    link = _web_link(p.link)
    # Ink colour, no underline: a page of blue underlined text is hard to read; Docs still shows the link.
    return f'<a href="{e(link)}" style="color:{INK};text-decoration:none">{text}</a>' if link else text


def _doc_turn(turn: Paragraph, runs: dict[int, list] | None = None, index: dict[int, int] | None = None) -> str:
    head = f"{_name(turn.colour, turn.name)} " if turn.name else ""
    head += f'<span style="color:{MUTED}">({format_clock(turn.start)})</span>:'
    marked = lambda p: (runs or {}).get((index or {}).get(id(p), -1), ())  # noqa: E731
    return f'<p style="margin:0 0 10pt;line-height:1.4">{head} {" ".join(_doc_phrase(p, marked(p)) for p in turn.phrases)}</p>'


def _doc_highlights(t: Transcript) -> list[str]:
    """The Highlights section the Doc opens with: each tag, its quotes, who said them and when (a link)."""
    groups = highlight_marks.by_tag(t)
    if not groups:
        return []
    e = html.escape
    ids = t.speaker_ids()
    out = ["<h2>Highlights</h2>"]
    for tag, items in groups:
        out.append(f"<h3>{e(tag)} ({len(items)})</h3>")
        lines = []
        for h in items:
            speaker = t.highlight_speaker(h)
            who = t.speaker_name(speaker) if (t.speakers or speaker) else ""
            link, clock = _web_link(highlight_link(t, h)), format_clock(h.start)
            when = f'<a href="{e(link)}" style="color:{MUTED}">[{clock}]</a>' if link else f'<span style="color:{MUTED}">[{clock}]</span>'
            by = (_name(ids.index(speaker) if speaker in ids else 0, who) + " ") if who else ""
            note = f' <i style="color:{MUTED}">{e(h.note)}</i>' if h.note else ""
            lines.append(f'<li><span style="background-color:{HIGHLIGHT}">“{e(clean_text(h.quote))}”</span> — {by}{when}{note}</li>')
        out.append("<ul>" + "".join(lines) + "</ul>")
    return out


def _doc_point(item: str | SummaryPoint) -> str:
    """A summary bullet: unverified quotes highlighted and flagged, then its times, each a link."""
    e = html.escape
    if isinstance(item, str):
        return e(clean_text(item))
    flag = f'<span style="color:{WARN};font-size:9pt">{UNVERIFIED}</span>'
    text = "".join(f'<span style="background-color:{WARN_BACKGROUND}">{e(piece)}</span> {flag}' if flagged else e(piece)
                   for piece, flagged in point_segments(item))
    times = []
    for c in item.citations:
        link, clock = _web_link(c.link), format_clock(c.time)
        times.append(f'<a href="{e(link)}" style="color:{MUTED}">[{clock}]</a>' if link
                     else f'<span style="color:{MUTED}">[{clock}]</span>')
    times = times or [f'<span style="color:{WARN};font-size:9pt">{NO_MOMENT}</span>']
    return f"{text} {' '.join(times)}"


def doc_html(t: Transcript, summary: Optional[Summary] = None, title: str | None = None) -> str:
    """HTML for Drive's HTML → Google Doc conversion: title, facts, summary, one paragraph per turn.

    `summary`: what the Summary section shows; None shows the transcript's own summary."""
    e = html.escape
    facts = header_facts(t)
    title = clean_text(title or "") or facts.title

    # Docs keeps only web links: a file: link to the video becomes plain text
    facts = replace(facts, video=_web_link(facts.video))
    meta = [e(_date(t))] + facts_line(facts, e, lambda url: f'<a href="{e(url)}">Open the video</a>', _name)

    out = [
        f'<!doctype html>\n<html lang="{e(t.language or "und")}">',
        f'<head><meta charset="utf-8"><title>{e(title)}</title></head>',
        f"<body>\n<h1>{e(title)}</h1>",
        f'<p style="color:{MUTED}">{" · ".join(meta)}</p>',
    ]
    out += _doc_highlights(t)
    items = summary_items(t, summary)
    if items:
        out += ["<h2>Summary</h2>", "<ul>" + "".join(f"<li>{_doc_point(s)}</li>" for s in items) + "</ul>"]
        out += [f'<p style="color:{MUTED};font-size:9pt">{SUMMARY_NOTE}</p>'] if from_model(items) else []
    out.append("<h2>Transcript</h2>")
    turns = speaker_turns(t)
    runs, index = highlight_marks.marked(t), {id(p): i for i, p in enumerate(t.phrases)}
    out += [_doc_turn(turn, runs, index) for turn in turns] or [f'<p style="color:{MUTED};font-style:italic">{NO_SPEECH}</p>']
    linked = " Every phrase links to its moment in the video." if any(_web_link(p.link) for p in t.phrases) else ""
    footer = "Transcribed automatically with iGot; it can contain mistakes." + linked
    out.append(f'<p style="color:{MUTED};font-size:9pt">{footer}</p>')
    out.append("</body>\n</html>\n")
    return "\n".join(out)


# --- signing in -------------------------------------------------------------------------------
def colab_credentials() -> Credentials:
    """Colab's own Google sign-in, narrowed to drive.file."""
    from google.colab import auth

    try:
        auth.authenticate_user()
    except Exception as err:  # Colab's own AuthorizationError, or NotImplementedError where unsupported
        raise IgotError(f"Colab's Google sign-in did not finish: {err}.", "Run the cell again and allow Drive access.") from None
    creds, _ = google.auth.default(scopes=SCOPES)
    return creds


def _client_config(path: Path) -> dict[str, Any]:
    """The downloaded OAuth client file, checked: it must be a Desktop app client."""
    if not path.is_file():
        raise IgotError(f"No Google OAuth client file at {path}.", HOW_TO_CLIENT)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        raise IgotError(f"{path} is not a Google OAuth client file (not JSON).", HOW_TO_CLIENT) from None
    app = data.get("installed") if isinstance(data, dict) else None
    if not isinstance(app, dict) or not app.get("client_id") or not app.get("client_secret"):
        what = ("a Web application client" if isinstance(data, dict) and "web" in data
                else "a service account key" if isinstance(data, dict) and data.get("type") == "service_account"
                else "not an OAuth client file")
        raise IgotError(f"{path} is {what}, not a Desktop app OAuth client.", HOW_TO_CLIENT)
    app.setdefault("auth_uri", "https://accounts.google.com/o/oauth2/auth")
    app.setdefault("token_uri", "https://oauth2.googleapis.com/token")
    return data


def _cached_token(path: Path) -> Optional[UserCredentials]:
    """The saved sign-in, if it is readable and for exactly iGot's scopes (else ask again)."""
    if not path.is_file():
        return None
    try:
        creds = UserCredentials.from_authorized_user_file(str(path))
    except (OSError, ValueError, KeyError):
        return None
    return creds if set(creds.scopes or ()) == set(SCOPES) else None


def _save_token(creds: UserCredentials, path: Path) -> None:
    """Owner-only (0600) and atomic: the file holds a refresh token to the user's Drive."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    write_atomic(path, creds.to_json(), mode=0o600)


def _sign_in(client_secrets: Path) -> UserCredentials:
    flow = InstalledAppFlow.from_client_config(_client_config(client_secrets), scopes=SCOPES)
    try:
        return flow.run_local_server(
            port=0,
            authorization_prompt_message="Sign in to Google in your browser to let iGot create the Doc. "
            "If no browser opened, open this link:\n{url}",
            success_message="iGot can now create Google Docs in your Drive. You can close this tab.",
            timeout_seconds=600,
        )
    except WSGITimeoutError:
        raise IgotError("The Google sign-in was not finished in 10 minutes.", "Run again and finish it in the browser.") from None
    except OAuth2Error as err:
        raise IgotError(f"Google sign-in failed: {err.description or err.error}.", "Run again and allow access.") from None


def local_credentials(client_secrets: Path, token_file: Path = TOKEN_FILE) -> Credentials:
    """Installed-app sign-in: the browser asks once, then the saved token is reused and refreshed."""
    client_secrets, token_file = Path(client_secrets).expanduser(), Path(token_file).expanduser()
    creds = _cached_token(token_file)
    if creds and creds.valid:
        return creds
    if creds and creds.refresh_token:
        try:
            creds.refresh(Request())
        except RefreshError:
            creds = None  # withdrawn, or expired for good (7 days for apps in "Testing"): ask again
        except TransportError as err:
            raise IgotError(f"Could not reach Google to refresh the sign-in: {err}.", CHECK_CONNECTION) from None
    if not creds or not creds.valid:
        creds = _sign_in(client_secrets)
    _save_token(creds, token_file)
    return creds


def saved_credentials(token_file: Path = TOKEN_FILE) -> Optional[Credentials]:
    """The sign-in saved on this computer, refreshed when it has expired; None when there is none,
    or it cannot be refreshed now: nothing asks the user (what a server sends in the background
    with)."""
    token_file = Path(token_file).expanduser()
    creds = _cached_token(token_file)
    if creds and not creds.valid and creds.refresh_token:
        try:
            creds.refresh(Request())
            _save_token(creds, token_file)
        except (RefreshError, TransportError, OSError):
            return None
    return creds if creds and creds.valid else None


def credentials(client_secrets: Path | None = None) -> Credentials:
    """Colab's sign-in in Colab; elsewhere the installed-app flow with the user's OAuth client file."""
    try:
        import google.colab  # noqa: F401
    except ImportError:
        return local_credentials(Path(client_secrets or CLIENT_SECRETS))
    return colab_credentials()


# --- Drive ------------------------------------------------------------------------------------
def drive_service(credentials: Credentials | None = None, http: Any = None) -> Resource:
    """Drive v3 from the discovery document bundled with the client: no network until a request.

    Give credentials (from credentials()) or, in tests, an httplib2-like `http`.
    """
    if (credentials is None) == (http is None):
        raise ValueError("give credentials or http, not both or neither")
    auth = {"credentials": credentials} if http is None else {"http": http}
    return build("drive", "v3", static_discovery=True, cache_discovery=False, **auth)


def _reason(err: HttpError) -> str:
    """Drive's machine-readable reason, e.g. 'storageQuotaExceeded'; '' when the body has none."""
    try:
        error = json.loads(err.content.decode("utf-8"))["error"]
        reasons = [e.get("reason", "") for e in error.get("errors", [])]
        reasons += [d.get("reason", "") for d in error.get("details", []) if isinstance(d, dict)]
        return next((r for r in reasons if r), "")
    except (ValueError, KeyError, TypeError, AttributeError):
        return ""


def _http_error(err: HttpError, doing: str) -> IgotError:
    """One line for a Drive error that retrying won't fix: what happened, and what to do."""
    status, reason = err.resp.status, _reason(err)
    if status == 404 or reason in ("appNotAuthorizedToFile", "insufficientFilePermissions"):
        return IgotError(f"Google Drive would not let iGot {doing}: the folder is missing or not one iGot may use.",
                         IGOT_FOLDERS_ONLY)
    if reason == "storageQuotaExceeded":
        return IgotError(f"Could not {doing}: your Google Drive is full.",
                         "Free some space (empty the bin too) or get more storage, then run again.")
    if reason in ("accessNotConfigured", "SERVICE_DISABLED"):
        return IgotError(
            "The Google Drive API is not enabled in the Google Cloud project of your OAuth client.",
            "Enable it: Google Cloud console → APIs & Services → Library → Google Drive API → Enable; then run again.",
        )
    if status == 401 or reason in ("insufficientPermissions", "ACCESS_TOKEN_SCOPE_INSUFFICIENT", "authError"):
        return IgotError(f"Could not {doing}: the Google sign-in does not let iGot create files in your Drive.", SIGN_IN_AGAIN)
    if status == 429 or status >= 500 or reason in ("rateLimitExceeded", "userRateLimitExceeded"):
        return Unreachable(f"Could not {doing}: Google Drive is busy (HTTP {status}), still after {RETRIES} retries.",
                           "Wait a few minutes and run again.")
    return IgotError(f"Google Drive refused to {doing}: {err.reason or status} (HTTP {status}).",
                     "Check the folder and the Google account you signed in with, then run again.")


@contextmanager
def _drive_errors(doing: str) -> Iterator[None]:
    """Turn what reaches us after the client's retries into one IgotError."""
    try:
        yield
    except HttpError as err:
        raise _http_error(err, doing) from None
    except RefreshError:
        raise IgotError(f"Could not {doing}: the Google sign-in has expired or was withdrawn.", SIGN_IN_AGAIN) from None
    except (httplib2.HttpLib2Error, TransportError, OSError) as err:
        raise Unreachable(f"Could not reach Google Drive to {doing}: {err}.", CHECK_CONNECTION) from None


def _quote(value: str) -> str:
    """A string literal for a Drive query: backslash first, then the quote it delimits with."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _id_from_url(url: str) -> str:
    parts = urlsplit(url if "://" in url else "https://" + url)
    segments = [s for s in parts.path.split("/") if s]
    if parts.hostname in ("drive.google.com", "docs.google.com"):
        if "folders" in segments[:-1]:  # /drive/folders/ID, /drive/u/0/folders/ID, …
            return segments[segments.index("folders") + 1]
        if "my-drive" in segments:
            return "root"
        ids = parse_qs(parts.query).get("id")  # open?id=ID
        if ids and "d" not in segments:
            return ids[0]
    raise IgotError(
        f"{url} is not a Google Drive folder link.",
        "Copy the folder's address from the browser (it has /folders/ in it), or give a path such as Research/Interviews.",
    )


def _find_or_create(service: Resource, name: str, parent: str) -> str:
    """The id of folder `name` in `parent`: the oldest one if there are several, a new one if none."""
    query = f"name = {_quote(name)} and {_quote(parent)} in parents and mimeType = '{FOLDER}' and trashed = false"
    with _drive_errors(f"look for the folder “{name}”"):
        found = service.files().list(
            q=query, spaces="drive", fields="files(id,name)", orderBy="createdTime", pageSize=1
        ).execute(num_retries=RETRIES)
    if found.get("files"):
        return found["files"][0]["id"]
    with _drive_errors(f"create the folder “{name}”"):
        made = service.files().create(
            body={"name": name, "mimeType": FOLDER, "parents": [parent]}, fields="id", supportsAllDrives=True
        ).execute(num_retries=RETRIES)
    return made["id"]


def find_folder(service: Resource, folder: str) -> str:
    """The id of a Drive folder given as a link, an id, or a path from My Drive (missing levels created).

    "" (or "My Drive") is the top of My Drive. Paths use "/", so a folder whose name has "/" in it
    can only be given by its link.
    """
    text = folder.strip()
    if "://" in text or re.match(r"(drive|docs)\.google\.com/", text, re.IGNORECASE):
        return _id_from_url(text)
    if DRIVE_ID.fullmatch(text):
        return text
    parts = [p.strip() for p in text.split("/") if p.strip()]
    if parts and parts[0].lower() in ("my drive", "root"):
        parts = parts[1:]  # a path copied from Drive's breadcrumbs
    folder_id = "root"
    for name in parts:
        folder_id = _find_or_create(service, name, folder_id)
    return folder_id


class _BytesUpload(MediaIoBaseUpload):
    """Resumable chunks handed to the client as bytes, not as a slice of the stream.

    After a 429 or 5xx the client sends the same chunk object again; a stream slice has been read
    to its end by then, so the retry would carry no data. Bytes are sent whole every time.
    """

    def has_stream(self) -> bool:
        return False


def upload_doc(service: Resource, html: str, name: str, folder_id: str, replacing: Optional[str] = None) -> tuple[str, str]:
    """Upload HTML that Drive converts to a Google Doc; returns (doc id, the Doc's URL). With
    `replacing` (a Doc's id), that Doc's content and name are replaced instead: same link."""
    # Characters as &#NNN; references: the Doc is right whatever charset the converter assumes.
    data = html.encode("ascii", "xmlcharrefreplace")
    resumable = len(data) > SIMPLE_UPLOAD_LIMIT
    media = _BytesUpload(io.BytesIO(data), mimetype="text/html", chunksize=CHUNK, resumable=resumable)
    if replacing:
        request = service.files().update(fileId=replacing, body={"name": name}, media_body=media, fields="id,webViewLink",
                                         supportsAllDrives=True)
    else:
        request = service.files().create(
            body={"name": name, "mimeType": GOOGLE_DOC, "parents": [folder_id]},
            media_body=media,
            fields="id,webViewLink",
            supportsAllDrives=True,
        )
    with _drive_errors(f"upload “{name}”"):
        if resumable:
            doc = None
            while doc is None:
                _, doc = request.next_chunk(num_retries=RETRIES)
        else:
            doc = request.execute(num_retries=RETRIES)
    made = doc["id"]
    return made, doc.get("webViewLink") or f"https://docs.google.com/document/d/{made}/edit"


def doc_id(url: str) -> Optional[str]:
    """The id in a Doc's link, …/document/d/ID/edit."""
    found = re.search(r"/document/d/([A-Za-z0-9_-]+)", url or "")
    return found.group(1) if found else None


def in_drive(service: Resource, file_id: str) -> bool:
    """Whether the file is still there and not in the bin: the user may have deleted the Doc."""
    with _drive_errors("look for the interview's Google Doc"):
        try:
            found = service.files().get(fileId=file_id, fields="id,trashed", supportsAllDrives=True
                                        ).execute(num_retries=RETRIES)
        except HttpError as err:
            if err.resp.status == 404:
                return False
            raise
    return not found.get("trashed", False)


def delete_file(service: Resource, file_id: str) -> None:
    """Best effort, to take back a Doc made by a change that then failed: the change is undone
    whole, and running it again makes no second Doc."""
    try:
        service.files().delete(fileId=file_id, supportsAllDrives=True).execute(num_retries=RETRIES)
    except Exception:  # noqa: BLE001  the change's own error is the one the user needs to see
        pass


@dataclass
class Published:
    """Where an interview is in Drive; kept in its JSON (info["google_doc"] and info["drive"])."""

    folder: str  # the folder's id
    doc: str  # the Doc's link
    name: str  # the Doc's name, also the interview's name in the Sheet
    made: bool = False  # the Doc was made just now

    def recorded(self, t: Transcript) -> Transcript:
        return replace(t, info={**t.info, "google_doc": self.doc, "drive": {"folder": self.folder, "name": self.name}})


def published(t: Transcript) -> Optional[Published]:
    """Where the transcript's Doc is, when iGot made one for it."""
    drive = t.info.get("drive")
    if isinstance(drive, dict) and isinstance(drive.get("folder"), str) and doc_id(t.info.get("google_doc", "")):
        return Published(drive["folder"], t.info["google_doc"], str(drive.get("name") or ""))
    return None


def put_doc(service: Resource, t: Transcript, folder: Optional[str] = None, name: Optional[str] = None,
            summary: Optional[Summary] = None) -> Published:
    """The transcript's Doc: the Doc it has updated in place (when it is in `folder`, if given),
    else a new Doc in `folder` (a link, id or path)."""
    before = published(t)
    folder_id = find_folder(service, folder) if folder is not None else before.folder if before else None
    if folder_id is None:
        raise IgotError("This interview has no Google Doc yet, and no Drive folder was given for one.",
                        "Give a Drive folder (--gdoc FOLDER, or the notebook's Drive folder).")
    same = before is not None and before.folder == folder_id
    name = clean_text(name or "") or (before.name if same else "") or header_facts(t).title
    page = doc_html(t, summary, title=name)
    if same and in_drive(service, doc_id(before.doc)):
        _, url = upload_doc(service, page, name, folder_id, replacing=doc_id(before.doc))
        return Published(folder_id, url, name)
    _, url = upload_doc(service, page, name, folder_id)
    return Published(folder_id, url, name, made=True)


def put_repository(service: Resource, t: Transcript, where: Published, stem: str) -> None:
    """The interview's row in the folder's Sheet, its highlights in the highlights Sheet, and its
    JSON kept in the folder's .igot."""
    update_sheet(service, where.folder, sheet_row(t, where.doc, where.name))
    if t.highlights is not None:  # an interview that never had a highlight leaves that Sheet alone
        update_highlights_sheet(service, where.folder, t, where.doc, where.name)
    keep_transcript(service, where.folder, where.recorded(t), stem)


def export_to_google_doc(
    t: Transcript,
    folder: str,
    name: str | None = None,
    summary: Optional[Summary] = None,
    service: Resource | None = None,
    repository: bool = True,
) -> str:
    """Make the transcript a Google Doc in `folder` (link, id or path), or update the Doc it has
    there; returns the Doc's URL. Drive only: igot.outputs.store.save keeps the local files and the
    library page in step with it.

    `summary`: None shows the transcript's own summary. `repository`: also give the interview
    its row in the folder's "iGot interviews" Sheet and keep its JSON in the folder's .igot
    subfolder (for searching every interview later). All or nothing: when the Sheet or the JSON
    fails, a Doc made just now is taken back and the error says why."""
    doc_html(t, summary)  # before signing in: a bad transcript fails fast
    if service is None:
        service = drive_service(credentials())
    where = put_doc(service, t, folder, name, summary)
    if repository:
        try:
            put_repository(service, t, where, slugify(t.source.title))
        except BaseException:
            if where.made:
                delete_file(service, doc_id(where.doc))
            raise
    return where.doc


# --- the repository: one Sheet listing every interview, and every interview's JSON -------------
SHEET_NAME = "iGot interviews"
GOOGLE_SHEET = "application/vnd.google-apps.spreadsheet"
SHEET_COLUMNS = ["Date", "Interview", "Language", "Duration", "Speakers", "Google Doc", "Video", "Summary"]
KEPT_FOLDER = ".igot"  # the interviews' JSON, next to the Docs, for the notebook's search
_FORMULA = tuple("=+-@")  # a cell starting with these would be a formula in Sheets


def _clock(seconds: float) -> str:
    """H:MM:SS always: Sheets reads '41:07' as 41 hours, '0:41:07' as what it is."""
    s = int(max(0.0, seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def sheet_row(t: Transcript, doc_url: str, name: str | None = None) -> list[str]:
    """The interview's row, in SHEET_COLUMNS order."""
    facts = header_facts(t)
    points = [clean_text(p if isinstance(p, str) else p.text) for p in summary_items(t, None)]
    return [_date(t), clean_text(name or "") or facts.title, t.language or "", _clock(facts.duration) if facts.duration else "",
            ", ".join(who for _, who in facts.speakers), doc_url, _web_link(t.source.url) or "", " • ".join(points)]


def _csv(rows: list[list[str]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    for row in rows:
        writer.writerow(["'" + cell if cell.startswith(_FORMULA) else cell for cell in row])
    return out.getvalue().encode("utf-8")


def _rows(data: bytes) -> list[list[str]]:
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    return [[c[1:] if c.startswith("'") and c[1:].startswith(_FORMULA) else c for c in row] for row in rows if any(row)]


def _key(row: list[str]) -> tuple[str, str]:
    """What makes a row one interview: its name and its video."""
    row = row + [""] * len(SHEET_COLUMNS)
    return row[SHEET_COLUMNS.index("Interview")], row[SHEET_COLUMNS.index("Video")]


def _find_file(service: Resource, name: str, folder_id: str, mime: str, doing: str) -> Optional[str]:
    """The id of the oldest file `name` of type `mime` in the folder (drive.file: one iGot made)."""
    query = f"name = {_quote(name)} and {_quote(folder_id)} in parents and mimeType = '{mime}' and trashed = false"
    with _drive_errors(doing):
        found = service.files().list(q=query, spaces="drive", fields="files(id,name)", orderBy="createdTime",
                                     pageSize=1, supportsAllDrives=True, includeItemsFromAllDrives=True
                                     ).execute(num_retries=RETRIES)
    return found["files"][0]["id"] if found.get("files") else None


def update_sheet(service: Resource, folder_id: str, row: list[str]) -> str:
    """Put the interview's row in the folder's "iGot interviews" Sheet; returns the Sheet's URL.

    The first time, the Sheet is made from a CSV (Drive converts it); after that the same file's
    content is replaced, newest row first. A row with the same interview name and video, or
    the same Doc, is replaced (a rerun, a change), so the Sheet never lists an interview twice."""
    doc = SHEET_COLUMNS.index("Google Doc")
    return _put_rows(service, folder_id, SHEET_NAME, SHEET_COLUMNS, [row],
                     lambda r: _key(r) != _key(row) and (r + [""] * len(SHEET_COLUMNS))[doc] != row[doc])


def _put_rows(service: Resource, folder_id: str, name: str, columns: list[str], rows: list[list[str]],
              keep: Callable[[list[str]], bool]) -> str:
    """The Sheet `name` in the folder with `rows` first, then the rows it had that `keep` keeps
    (made from a CSV the first time, its content replaced after); returns its URL."""
    sheet_id = _find_file(service, name, folder_id, GOOGLE_SHEET, f"look for the “{name}” Sheet")
    kept = []
    if sheet_id:
        with _drive_errors(f"read the “{name}” Sheet"):
            data = service.files().export_media(fileId=sheet_id, mimeType="text/csv").execute(num_retries=RETRIES)
        kept = [r for r in _rows(data)[1:] if keep(r)]
    media = _BytesUpload(io.BytesIO(_csv([columns, *rows, *kept])), mimetype="text/csv", resumable=False)
    with _drive_errors(f"update the “{name}” Sheet"):
        if sheet_id:
            sheet = service.files().update(fileId=sheet_id, media_body=media, fields="id,webViewLink",
                                           supportsAllDrives=True).execute(num_retries=RETRIES)
        else:
            sheet = service.files().create(body={"name": name, "mimeType": GOOGLE_SHEET, "parents": [folder_id]},
                                           media_body=media, fields="id,webViewLink", supportsAllDrives=True
                                           ).execute(num_retries=RETRIES)
    return sheet.get("webViewLink") or f"https://docs.google.com/spreadsheets/d/{sheet['id']}/edit"


# Every highlight of the folder's interviews, one row each. A Sheet of its own beside "iGot
# interviews": a Sheet made from a CSV has one tab, and iGot's Drive access (drive.file) has no
# Sheets API to add another.
HIGHLIGHTS_SHEET = "iGot highlights"
HIGHLIGHT_COLUMNS = ["Interview", "Speaker", "Time", "Link", "Quote", "Tags", "Note", "Google Doc"]


def highlight_rows(t: Transcript, doc_url: str, name: str | None = None) -> list[list[str]]:
    """The interview's highlights as rows, in HIGHLIGHT_COLUMNS order, in order of time."""
    title = clean_text(name or "") or header_facts(t).title
    rows = []
    for h in sorted(t.highlights or [], key=lambda h: h.start):
        speaker = t.highlight_speaker(h)
        who = t.speaker_name(speaker) if (t.speakers or speaker) else ""
        rows.append([title, who, _clock(h.start), _web_link(highlight_link(t, h)) or doc_url, clean_text(h.quote),
                     ", ".join(h.tags), clean_text(h.note), doc_url])
    return rows


def update_highlights_sheet(service: Resource, folder_id: str, t: Transcript, doc_url: str, name: str | None = None) -> str:
    """The interview's highlights in the folder's "iGot highlights" Sheet, in place of those it had
    there (found by its Doc); every other interview's rows stay. Returns the Sheet's URL."""
    doc = HIGHLIGHT_COLUMNS.index("Google Doc")
    return _put_rows(service, folder_id, HIGHLIGHTS_SHEET, HIGHLIGHT_COLUMNS, highlight_rows(t, doc_url, name),
                     lambda r: (r + [""] * len(HIGHLIGHT_COLUMNS))[doc] != doc_url)


def keep_transcript(service: Resource, folder_id: str, t: Transcript, stem: str) -> str:
    """Keep the interview's JSON in the folder's .igot subfolder (replacing an earlier one of
    the same name): Colab's disk is wiped, Drive is not. Returns the file id."""
    kept = _find_or_create(service, KEPT_FOLDER, folder_id)
    name = f"{stem}.json"
    file_id = _find_file(service, name, kept, "application/json", f"look for {name} in {KEPT_FOLDER}")
    media = _BytesUpload(io.BytesIO(t.to_json().encode("utf-8")), mimetype="application/json", resumable=False)
    with _drive_errors(f"keep {name} in Drive"):
        if file_id:
            done = service.files().update(fileId=file_id, media_body=media, fields="id", supportsAllDrives=True
                                          ).execute(num_retries=RETRIES)
        else:
            done = service.files().create(body={"name": name, "mimeType": "application/json", "parents": [kept]},
                                          media_body=media, fields="id", supportsAllDrives=True).execute(num_retries=RETRIES)
    return done["id"]


def fetch_transcripts(service: Resource, folder: str, dest: Path) -> list[Path]:
    """Download every interview JSON iGot kept in the folder's .igot subfolder into `dest`."""
    folder_id = find_folder(service, folder)
    query = f"name = {_quote(KEPT_FOLDER)} and {_quote(folder_id)} in parents and mimeType = '{FOLDER}' and trashed = false"
    with _drive_errors(f"look for the interviews kept in “{folder}”"):
        kept = service.files().list(q=query, spaces="drive", fields="files(id)", orderBy="createdTime", pageSize=1
                                    ).execute(num_retries=RETRIES).get("files", [])
        files, page = [], None
        while kept:
            found = service.files().list(
                q=f"{_quote(kept[0]['id'])} in parents and mimeType = 'application/json' and trashed = false",
                spaces="drive", fields="nextPageToken,files(id,name)", pageSize=1000, pageToken=page,
            ).execute(num_retries=RETRIES)
            files += found.get("files", [])
            page = found.get("nextPageToken")
            if not page:
                break
    dest.mkdir(parents=True, exist_ok=True)
    paths = []
    for f in files:
        name = Path(f["name"]).name
        if not name.endswith(".json") or name.startswith(".") or name == VOICES_FILE:  # voices are no interview
            continue
        with _drive_errors(f"download {name}"):
            data = service.files().get_media(fileId=f["id"]).execute(num_retries=RETRIES)
        (dest / name).write_bytes(data)
        paths.append(dest / name)
    return paths


# --- the library's remembered voices, beside the interviews' JSON ---------------------------------
def put_voices(service: Resource, folder_id: str, voices: Voices) -> Voices:
    """Keep the library's remembered voices in the folder's .igot (igot.speakers.voices' file), so a later
    Colab session has them. The first time in this folder, the voices already kept there join
    them; the folder is noted in them, so that forgetting a person reaches this copy too.
    Returns the voices as kept."""
    kept = _find_or_create(service, KEPT_FOLDER, folder_id)
    file_id = _find_file(service, VOICES_FILE, kept, "application/json", f"look for {VOICES_FILE} in {KEPT_FOLDER}")
    if folder_id not in voices.drive:
        if file_id:
            with _drive_errors(f"read {VOICES_FILE} in Drive"):
                there = service.files().get_media(fileId=file_id).execute(num_retries=RETRIES)
            voices = merged(voices, voices_from_json(there.decode("utf-8"), f"{KEPT_FOLDER}/{VOICES_FILE} in Drive"))
        voices = replace(voices, drive=[*voices.drive, folder_id])
    media = _BytesUpload(io.BytesIO(voices_to_json(voices).encode("utf-8")), mimetype="application/json", resumable=False)
    with _drive_errors(f"keep {VOICES_FILE} in Drive"):
        if file_id:
            service.files().update(fileId=file_id, media_body=media, fields="id", supportsAllDrives=True).execute(num_retries=RETRIES)
        else:
            service.files().create(body={"name": VOICES_FILE, "mimeType": "application/json", "parents": [kept]},
                                   media_body=media, fields="id", supportsAllDrives=True).execute(num_retries=RETRIES)
    return voices


def fetch_voices(service: Resource, folder: str) -> Optional[Voices]:
    """The remembered voices kept in the folder's .igot (a path, link or id), or None."""
    folder_id = find_folder(service, folder)
    query = f"name = {_quote(KEPT_FOLDER)} and {_quote(folder_id)} in parents and mimeType = '{FOLDER}' and trashed = false"
    with _drive_errors(f"look for the voices kept in “{folder}”"):
        kept = service.files().list(q=query, spaces="drive", fields="files(id)", orderBy="createdTime", pageSize=1
                                    ).execute(num_retries=RETRIES).get("files", [])
    file_id = kept and _find_file(service, VOICES_FILE, kept[0]["id"], "application/json", f"look for {VOICES_FILE} in Drive")
    if not file_id:
        return None
    with _drive_errors(f"read {VOICES_FILE} in Drive"):
        data = service.files().get_media(fileId=file_id).execute(num_retries=RETRIES)
    voices = voices_from_json(data.decode("utf-8"), f"{KEPT_FOLDER}/{VOICES_FILE} in “{folder}”")
    return voices if folder_id in voices.drive else replace(voices, drive=[*voices.drive, folder_id])
