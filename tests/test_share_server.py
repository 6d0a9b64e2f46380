"""Links for people outside the team, against a real team server over HTTPS (httpx): someone with
no account opens the shared highlight (its page, its clip seekable, its still, its player page), a
tag's reel and a report, and nothing else; a wrong, revoked, expired or switched-off link answers one same "gone" page; only the
roles the admin allows make links; the key is in no log, no listing, no activity, no file."""

from __future__ import annotations

import http.client
import json
import ssl
import subprocess
import time
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from igot.outputs import store
from igot.team import people
from igot.team.db import team_db
from igot.transcript import Source
from igot.workspace import team_server
from tests.test_highlights import interview
from tests.test_team_server import certificate
from tests.test_workspace import probe

pytestmark = pytest.mark.slow  # a server, ffmpeg
PASSWORD = "correct horse battery"


def video(path: Path, seconds: int = 20) -> Path:
    """A small video recording with sound, `seconds` long (a test pattern and a tone)."""
    subprocess.run(["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=320x240:rate=10", "-f", "lavfi", "-i",
                    "sine=frequency=440:sample_rate=16000", "-t", str(seconds), "-c:v", "libx264", "-preset", "ultrafast",
                    "-c:a", "aac", "-shortest", str(path)], check=True, capture_output=True)
    return path


def library(folder: Path) -> None:
    """joana (a video) and bruno (another video), each four phrases, Joana and Ana speaking."""
    for stem, title in (("joana", "Interview with a team lead"), ("bruno", "Interview with Bruno")):
        t = interview()
        t = replace(t, source=Source(title, None, str(video(folder / f"{stem}.mp4")), "file"),
                    phrases=[replace(p, link=None) for p in t.phrases])
        store.save(t, folder, stem, drive=False)


class Person:
    """A teammate's client: signed in through the form, sending the page's token with each change."""

    def __init__(self, origin: str, cert: Path, email: str):
        self.c = httpx.Client(base_url=origin, verify=ssl.create_default_context(cafile=str(cert)), timeout=30)
        r = self.c.post("/api/session", json={"email": email, "password": PASSWORD}, headers={"Origin": origin})
        assert r.status_code == 200, r.text
        token = self.c.get("/").text.split('name="igot-token" content="')[1].split('"')[0]
        self.c.headers["X-iGot-Token"] = token

    def highlight(self, stem: str, start: float, end: float, tags=("pricing",)) -> str:
        version = self.c.get(f"/api/interviews/{stem}").json()["version"]
        r = self.c.post(f"/api/interviews/{stem}/highlights", json={"version": version, "start": start, "end": end,
                                                                    "tags": list(tags)})
        assert r.status_code == 201, r.text
        return r.json()["id"]

    def share(self, **asked) -> httpx.Response:
        return self.c.post("/api/shares", json=asked)


def key_of(link: str) -> str:
    return link.rsplit("/s/", 1)[1]


def test_someone_with_no_account_opens_the_shared_highlight_and_nothing_else(tmp_path, capfd, caplog):
    folder = tmp_path / "library"
    folder.mkdir()
    library(folder)
    db = team_db(folder)
    for email, role in (("rui@example.com", "researcher"), ("vera@example.com", "viewer"), ("ada@example.com", "admin")):
        people.accept(db, people.invite(db, email, role), email.split("@")[0].title(), PASSWORD)
    cert, key_file = certificate(tmp_path)
    sock = team_server.bind(0, "127.0.0.1")
    where = team_server.address("127.0.0.1", sock.getsockname()[1], cert, key_file)
    running = team_server.start_team(folder, where, sock=sock, log=print)
    keys: list[str] = []
    try:
        rui, vera, ada = (Person(where.origin, cert, f"{n}@example.com") for n in ("rui", "vera", "ada"))
        # Joana's own words, phrase 2 (4.0 s to 8.9 s); another highlight beside it, and one in Bruno's interview.
        shared = rui.highlight("joana", 4.0, 8.9)
        other = rui.highlight("joana", 9.0, 12.9)
        rui.highlight("bruno", 0.0, 2.9)
        made = rui.share(kind="highlight", stem="joana", highlight=shared, hide_names=True, days=7)
        assert made.status_code == 201, made.text
        link = made.json()["link"]
        key = key_of(link)
        keys.append(key)
        assert link.startswith(f"{where.origin}/s/") and len(key) >= 43

        stranger = httpx.Client(base_url=where.origin, verify=ssl.create_default_context(cafile=str(cert)), timeout=60)  # no cookie, ever
        # A link pasted in a chat, opened from another site: the page reads without script.
        page = stranger.get(f"/s/{key}", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate",
                                                  "Sec-Fetch-Dest": "document"})
        assert page.status_code == 200, page.text
        html = page.text
        assert "Honestly the price is too high for a small team." in html and "Participant" in html
        assert "Interview with a team lead" in html and "Joana" not in html  # the name hidden, the interview shown
        assert "the onboarding" not in html and "Bruno" not in html and "/api/" not in html and "<script" not in html
        assert page.headers["x-robots-tag"].startswith("noindex") and '<meta name="robots" content="noindex' in html
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "script-src" not in policy and "frame-ancestors 'none'" in policy
        assert page.headers["referrer-policy"] == "no-referrer" and "no-store" in page.headers["cache-control"]
        assert "set-cookie" not in page.headers
        for tag in ('property="og:title"', 'property="og:description" content="Honestly the price',
                    f'property="og:image" content="{link}/still.jpg"', f'property="og:video" content="{link}/clip"',
                    'name="twitter:card" content="player"', f'name="twitter:player" content="{link}/embed"'):
            assert tag in html, tag
        # The clip: an MP4 of the highlight, seekable (a Range asked is a Range answered).
        clip = stranger.get(f"/s/{key}/clip")
        assert clip.status_code == 200 and clip.headers["content-type"] == "video/mp4"
        assert clip.headers["accept-ranges"] == "bytes"
        (tmp_path / "shared.mp4").write_bytes(clip.content)
        info = probe(tmp_path / "shared.mp4")
        assert 4.9 <= float(info["format"]["duration"]) <= 6.5
        assert info["format"].get("tags", {}).get("title") == "Participant · Interview with a team lead · 0:04"
        part = stranger.get(f"/s/{key}/clip", headers={"Range": "bytes=1000-1999"})
        assert part.status_code == 206 and part.content == clip.content[1000:2000]
        assert part.headers["content-range"] == f"bytes 1000-1999/{len(clip.content)}"
        kept = list((folder / ".igot" / "share-clips").glob("*.mp4"))
        assert len(kept) == 1 and stranger.get(f"/s/{key}/clip").content == clip.content  # made once, kept
        still = stranger.get(f"/s/{key}/still.jpg")
        assert still.status_code == 200 and still.content[:2] == b"\xff\xd8" and still.headers["content-type"] == "image/jpeg"
        player = stranger.get(f"/s/{key}/embed", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate",
                                                         "Sec-Fetch-Dest": "iframe"})
        assert player.status_code == 200 and "frame-ancestors *" in player.headers["content-security-policy"]
        assert f'src="{link}/clip"' in player.text and "<script" not in player.text
        assert stranger.head(f"/s/{key}").status_code == 200  # chat tools ask HEAD first

        # Nothing else answers the stranger: the library, the interviews, their recordings, another clip, the API.
        for path in ("/", "/api/library", "/api/interviews/joana", "/api/interviews/bruno", "/media/joana",
                     f"/api/interviews/joana/highlights/{other}/clip", "/api/tag/reel?name=pricing", "/api/shares",
                     "/api/activity", "/files/joana.md", "/api/search?q=price"):
            assert stranger.get(path).status_code in (401, 303), path
        gone = stranger.get("/s/" + "A" * 43)
        assert gone.status_code == 404 and "revoked or has expired" in gone.text
        for path in (f"/s/{key}/clip/1", f"/s/{key}/clip/0/x", f"/s/{key}/nothing", "/s/", f"/s/{key[:-1]}"):
            assert stranger.get(path).status_code == 404, path
        assert stranger.post(f"/s/{key}", headers={"Origin": where.origin}).status_code == 405
        raw = http.client.HTTPSConnection("127.0.0.1", where.port, context=ssl.create_default_context(cafile=str(cert)))
        for path in (f"/s/{key}/../../api/library", f"/s/{key}/..%2f..%2fapi%2flibrary", "/s/..%2fapi%2flibrary"):
            raw.request("GET", path, headers={"Host": f"127.0.0.1:{where.port}"})
            answer = raw.getresponse()
            assert answer.status in (401, 404) and b"interviews" not in answer.read(), path
        # Another Host (a name pointed at this server by someone else) is still refused.
        assert stranger.get(f"/s/{key}", headers={"Host": "rebound.example"}).status_code == 403

        # A viewer may not make a link, until the admin allows viewers.
        refused = vera.share(kind="highlight", stem="joana", highlight=other)
        assert refused.status_code == 403 and "viewer" in refused.json()["error"]
        assert vera.c.put("/api/shares/settings", json={"roles": ["viewer"]}).status_code == 403
        assert ada.c.put("/api/shares/settings", json={"roles": ["viewer", "researcher"]}).json()["roles"] == [
            "viewer", "researcher", "admin"]
        allowed = vera.share(kind="highlight", stem="joana", highlight=other, hide_interview=True)
        assert allowed.status_code == 201
        vera_key = key_of(allowed.json()["link"])
        keys.append(vera_key)
        shown = stranger.get(f"/s/{vera_key}").text
        assert "the onboarding took me a whole week" in shown and "Interview with a team lead" not in shown and "Joana" in shown
        # A reel of a tag across both interviews.
        reel = rui.share(kind="reel", tag="pricing", days=30)
        assert reel.status_code == 201
        reel_key = key_of(reel.json()["link"])
        keys.append(reel_key)
        reel_page = stranger.get(f"/s/{reel_key}").text
        assert "pricing: 3 highlights from 2 interviews" in reel_page and "Interview with Bruno" in reel_page
        # A report of two findings, its highlights from both interviews, each quote with its own clip.
        made_report = rui.c.post("/api/reports", json={"title": "Pricing blocks small teams",
                                                       "sources": [{"kind": "tag", "name": "pricing"}]}).json()
        bruno_h = [h for h in rui.c.get("/api/interviews/bruno").json()["highlights"]][0]["id"]
        saved = rui.c.put(f"/api/reports/{made_report['id']}", json={"version": made_report["version"], "findings": [
            {"text": "The price is the first thing they raise.", "highlights": [{"stem": "joana", "highlight": shared},
                                                                                {"stem": "bruno", "highlight": bruno_h}]},
            {"text": "Onboarding takes too long.", "highlights": [{"stem": "joana", "highlight": other}]}]})
        assert saved.status_code == 200, saved.text
        report = rui.share(kind="report", report=made_report["id"], hide_interview=True)
        assert report.status_code == 201, report.text
        report_key = key_of(report.json()["link"])
        keys.append(report_key)
        report_page = stranger.get(f"/s/{report_key}").text
        for text in ("Pricing blocks small teams", "The price is the first thing they raise.", "Onboarding takes too long.",
                     "How much would you pay for", "the onboarding took me a whole week"):
            assert text in report_page, text
        assert "Interview with" not in report_page and report_page.count("<video") == 3
        third = stranger.get(f"/s/{report_key}/clip/2")
        assert third.status_code == 200 and third.headers["content-type"] == "video/mp4"
        assert stranger.get(f"/s/{report_key}/clip/3").status_code == 404
        assert rui.share(kind="report", report="nosuchreport").status_code == 404
        assert rui.share(kind="highlight", stem="joana", highlight="nosuch").status_code == 404
        assert rui.share(kind="library").status_code == 400

        # Expired (the clock moved on by the database's row): gone, like a link never made.
        with db.write() as conn:
            conn.execute("UPDATE shares SET expires = ? WHERE id = ?", (time.time() - 1, allowed.json()["share"]["id"]))
        assert stranger.get(f"/s/{vera_key}").status_code == 404
        assert stranger.get(f"/s/{vera_key}/clip").status_code == 404
        # Revoked by its maker: gone at once, the same page as a wrong key; a researcher who did not make it may not.
        share_id = made.json()["share"]["id"]
        bruno_like = vera.c.delete(f"/api/shares/{share_id}")
        assert bruno_like.status_code == 403
        assert rui.c.delete(f"/api/shares/{share_id}").json()["share"]["state"] == "revoked"
        revoked = stranger.get(f"/s/{key}")
        assert revoked.status_code == 404 and revoked.text == gone.text
        assert stranger.get(f"/s/{key}/clip").status_code == 404 and stranger.get(f"/s/{key}/still.jpg").status_code == 404
        assert not [p for p in (folder / ".igot" / "share-clips").glob(f"{share_id}-*")]  # its clip and still removed
        # Switched off for the whole library: every link gone at once, none made; on again, back.
        assert stranger.get(f"/s/{reel_key}").status_code == 200
        assert ada.c.put("/api/shares/settings", json={"public": False}).json()["public"] is False
        assert stranger.get(f"/s/{reel_key}").status_code == 404
        assert rui.share(kind="reel", tag="pricing").status_code == 403
        ada.c.put("/api/shares/settings", json={"public": True})
        assert stranger.get(f"/s/{reel_key}").status_code == 200

        # The Shared page's list: what, by whom, opened how often; never a key.
        listed = rui.c.get("/api/shares")
        rows = {s["id"]: s for s in listed.json()["shares"]}
        assert rows[share_id]["state"] == "revoked" and rows[share_id]["opened"] >= 2 and rows[share_id]["by"] == "Rui"
        assert rows[allowed.json()["share"]["id"]]["state"] == "expired"
        activity = rui.c.get("/api/activity").text
        assert "shared a public link" in activity and "revoked a public link" in activity
        for text in (listed.text, activity, vera.c.get("/api/shares").text):
            assert not any(k in text for k in keys)
    finally:
        running.stop()
    out, err = capfd.readouterr()
    logged = out + err + caplog.text
    assert not any(k in logged for k in keys)
    for path in folder.rglob("*"):  # nor in any file of the library (the team's database keeps hashes)
        if path.is_file():
            assert not any(k.encode() in path.read_bytes() for k in keys), path
