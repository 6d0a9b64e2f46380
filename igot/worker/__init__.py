"""`igot worker`: a computer that makes a team's queued interviews (issue 51).

It only connects out, to the team's server (HTTPS with its certificate checked; plain HTTP only to
this computer, as the server itself allows), proving itself with the token `igot workers add NAME`
printed. It takes one job at a time and keeps its models loaded between jobs. For each: the
recording downloaded into a temporary folder (a link: downloaded here by the pipeline, under the
same link rules as `igot run`: never this computer's own network), the run made into a temporary
library with the job's options on this computer's device, its stage and counts sent as it goes
(at most once a second, and at least every third of the lease, so a long stage keeps its job),
stopped when the server says so (the job was cancelled, or given to another worker), and the
interview's JSON sent back: the server saves it into the library. A revoked token stops it at its
next request; a server that cannot be reached is waited for, trying again less and less often.

Each stage the run finishes (its file in the run's work folder, igot.pipeline.cache) is sent to the
server as it comes (igot.workspace.team_queue.STAGE_FILES), and a job taken after another worker
lost it (killed) starts with the stages that worker sent, placed in this run's work folder: the
run reuses them. Phrase vectors this computer cannot make (the job's embedding model is a folder
on the server, or cannot be downloaded here) are left to the server, which makes them after the save.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import ssl
import sys
import tempfile
import threading
import time
import uuid
import urllib.error
import urllib.request
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Optional
from urllib.parse import urlsplit

from igot.errors import IgotError
from igot.links import is_loopback
from igot.pipeline import DEVICES, Models, RunOptions, run, work_dir_for
from igot.runtime import hub
from igot.workspace.queue import Cancelled, one_line, upload_name
from igot.workspace.team_queue import MAX_STAGE, STAGE_FILES, Reporter, options_from

IDLE_WAIT = 2.0  # seconds between two asks when the queue is empty
MAX_BACKOFF = 60.0  # seconds: the longest wait for a server that cannot be reached
TIMEOUT = 60.0  # seconds one request may take
RESULT_TIMEOUT = 600.0  # seconds the result's request may take: the server makes its phrase vectors meanwhile
STAGES_LOOK = 1.0  # seconds between two looks at the run's work folder for a stage finished
CHUNK = 1 << 20


class Revoked(IgotError):
    """The server refused this worker's token."""


class Unreachable(IgotError):
    """The server could not be reached (or answered with a server error): tried again later."""


@dataclass
class Client:
    """The team's server, as this worker speaks to it."""

    server: str
    token: str
    ca_file: Optional[Path] = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.server)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise IgotError(f"{self.server!r} is not a team server's address.", "Give it as https://NAME[:PORT].")
        if parts.scheme == "http" and not is_loopback(parts.hostname):
            raise IgotError(f"{self.server} is plain HTTP: the token and the interviews would cross the network readable.",
                            "Give the server's https:// address.")
        self.server = self.server.rstrip("/")
        self.context = ssl.create_default_context(cafile=str(self.ca_file) if self.ca_file else None)

    def ask(self, method: str, path: str, data: Optional[bytes] = None, kind: str = "application/json",
            timeout: float = TIMEOUT) -> tuple[int, Any]:
        """(status, the answer: its JSON, or the response itself for a download)."""
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = kind
        request = urllib.request.Request(self.server + path, data=data, method=method, headers=headers)
        try:
            answer = urllib.request.urlopen(request, context=self.context if self.server.startswith("https") else None,
                                            timeout=timeout)
        except urllib.error.HTTPError as err:
            said = err.read()[:2000].decode("utf-8", "replace")
            try:
                said = json.loads(said).get("error", said)
            except (ValueError, AttributeError):
                pass
            if err.code in (401, 403):
                raise Revoked(f"The server refused this worker ({err.code}: {said.strip()})",
                              "Ask the team's admin for a new token (igot workers add NAME), then start it again.") from None
            if err.code >= 500:
                raise Unreachable(f"The server answered {err.code}.", "It is tried again.") from None
            return err.code, {"error": said}
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            if isinstance(reason, ssl.SSLCertVerificationError):
                raise IgotError(f"The server's certificate is not trusted ({reason.verify_message}).",
                                "Give the certificate that signs it with --ca-file, or fix the server's certificate.") from None
            raise Unreachable(f"The server {self.server} cannot be reached ({reason}).", "It is tried again.") from None
        if method == "GET":
            return answer.status, answer
        with answer:
            body = answer.read()
        return answer.status, json.loads(body) if body else None

    def json(self, method: str, path: str, given: dict) -> tuple[int, Any]:
        return self.ask(method, path, json.dumps(given).encode("utf-8"))

    def download(self, job_id: int, to: Path, path: str = "recording", what: str = "recording") -> None:
        status, answer = self.ask("GET", f"/api/worker/jobs/{job_id}/{path}")
        if status != 200:
            raise IgotError(f"The job's {what} could not be had ({status}: {answer.get('error', '')}).",
                            "It was probably cancelled or given to another worker.")
        tmp = to.with_name(f".{to.name}.{uuid.uuid4().hex[:8]}.tmp")  # whole or not at all: a run reads it
        try:
            with answer, open(tmp, "wb") as out:
                while piece := answer.read(CHUNK):
                    out.write(piece)
            os.replace(tmp, to)
        finally:
            tmp.unlink(missing_ok=True)


class StageSender:
    """The stages the run finishes, sent to the server as they come: a look at the run's work folder
    each STAGES_LOOK seconds (and at each line the run says, as a stage begins once the one before
    is kept), each stage file new or changed since sent. One that cannot be sent now is tried at
    the next look; the server refusing it (the job is no longer this worker's) stops nothing here:
    the run hears it at its next progress report."""

    def __init__(self, client: Client, job_id: int, work: Path, log: Callable[[str], None]):
        self.client, self.job_id, self.work, self.log = client, job_id, work, log
        self.sent: dict[str, tuple[int, int]] = {}  # by name: (mtime_ns, size) as sent (or received)
        self.wake = threading.Event()
        self.ended = threading.Event()
        self.thread = threading.Thread(target=self.looking, daemon=True, name="igot-stages")

    def stamp(self, name: str) -> Optional[tuple[int, int]]:
        try:
            st = (self.work / name).stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def received(self, names: list[str]) -> None:
        """Stages put in the work folder from the server: not sent back."""
        for name in names:
            if (found := self.stamp(name)) is not None:
                self.sent[name] = found

    def __enter__(self) -> "StageSender":
        self.thread.start()
        return self

    def __exit__(self, kind, *exc) -> None:
        self.ended.set()
        self.wake.set()
        self.thread.join(timeout=TIMEOUT)
        if kind is None:  # the run's last stages (its phrase vectors: the server uses them) before its result
            self.send_new()

    def looking(self) -> None:
        while not self.ended.is_set():
            self.wake.wait(STAGES_LOOK)
            self.wake.clear()
            if not self.ended.is_set():
                self.send_new()

    def send_new(self) -> None:
        for name in STAGE_FILES:
            found = self.stamp(name)
            if found is None or self.sent.get(name) == found or found[1] > MAX_STAGE:
                continue
            try:
                data = (self.work / name).read_bytes()
                status, answer = self.client.ask("PUT", f"/api/worker/jobs/{self.job_id}/stages/{name}", data)
            except (OSError, IgotError) as err:  # Unreachable, Revoked: the progress report says it too
                self.log(f"Stage {name} not sent ({getattr(err, 'problem', err)}); tried again.")
                continue
            self.sent[name] = found  # sent, or refused: not sent again unless it changes
            if status != 200:
                self.log(f"Stage {name} refused by the server ({status}: {(answer or {}).get('error', '')}).")


def take_up_stages(client: Client, job: dict, work: Path, log: Callable[[str], None]) -> list[str]:
    """The stages the job's earlier worker sent, put in this run's work folder (the run reuses
    them): the names. One that cannot be had is made again by the run."""
    names = [n for n in job.get("stages") or [] if n in STAGE_FILES]
    if not names:
        return []
    work.mkdir(parents=True, exist_ok=True)
    taken = []
    for name in names:
        try:
            client.download(int(job["id"]), work / name, f"stages/{name}", f"stage {name}")
            taken.append(name)
        except (OSError, IgotError) as err:
            if isinstance(err, Revoked):
                raise
            log(f"Stage {name} sent before could not be had ({getattr(err, 'problem', err)}): made again.")
    if taken:
        log(f"Picking up where the job stopped: {', '.join(n.rsplit('.', 1)[0] for n in taken)} made before.")
    return taken


def embeds_here(options: RunOptions) -> bool:
    """Whether this computer can make the phrase vectors the job asks for: its embedding model a
    folder here, or a hub model here or downloadable now, and sentence-transformers installed.
    The default model out of reach is skipped by the run itself."""
    if not options.meaning:
        return True
    if importlib.util.find_spec("sentence_transformers") is None:
        return False
    name = options.embedding_model
    if name is None:
        return True
    if hub.is_hub_id(name):
        return not hub.out_of_reach(name)
    return Path(name).expanduser().is_dir()


def take(client: Client, device: str) -> Optional[dict]:
    status, answer = client.json("POST", "/api/worker/take", {"device": device})
    if status == 204:
        return None
    if status != 200:
        raise Unreachable(f"The server did not give a job ({status}: {answer.get('error', '')}).", "It is tried again.")
    return answer


def make(client: Client, given: dict, base: RunOptions, models: Models, log: Callable[[str], None]) -> str:
    """One job, made here and sent back: what became of it (a line)."""
    job, lease = given["job"], float(given.get("lease_seconds") or 60)
    job_id, name = int(job["id"]), str(job.get("name", ""))[:200]
    revoked: list[Revoked] = []

    def send(stage: str, done: float, total: float) -> bool:
        try:
            status, answer = client.json("POST", f"/api/worker/jobs/{job_id}/progress",
                                         {"stage": stage, "done": done, "total": total})
        except Revoked as err:
            revoked.append(err)
            return False
        return status == 200 and bool(answer.get("go_on"))

    def failed(line: str) -> None:
        try:
            client.json("POST", f"/api/worker/jobs/{job_id}/failed", {"line": line})
        except Unreachable:
            pass  # the lease runs out: the job goes to another worker

    source = ""
    with tempfile.TemporaryDirectory(prefix="igot-worker-") as tmp:
        library = Path(tmp) / "library"
        library.mkdir()
        reporter = Reporter(send, min(lease / 3, 20.0), lambda line: log(f"{name}: {line}"))
        try:
            with reporter:
                options = options_from(job.get("options"), base)
                if not embeds_here(options):
                    log(f"{name}: the phrase vectors are left to the server (its embedding model "
                        f"{options.embedding_model} cannot be had here).")
                    options = replace(options, meaning=False)
                if job.get("kind") == "link":
                    source = str(job.get("link") or "")
                else:  # the server's recording, under its own file's name (the interview's title comes from it)
                    recording = Path(tmp) / (upload_name({"name": str(job.get("file") or "recording.wav")}) or "recording.wav")
                    reporter.stage = "receiving the recording"
                    client.download(job_id, recording)
                    source = str(recording)
                work = work_dir_for(source, library)  # the run's work folder: where its stages are kept
                sender = StageSender(client, job_id, work, lambda line: log(f"{name}: {line}"))
                sender.received(take_up_stages(client, job, work, lambda line: log(f"{name}: {line}")))

                def heard(line: str) -> None:
                    sender.wake.set()  # a stage begins: the one before may be kept now
                    reporter.heard(line)

                with sender:
                    result = run(source, library, options, models=models, log=heard, progress=reporter.step,
                                 stage=reporter.began)
        except Cancelled:
            if revoked:
                raise revoked[0] from None
            failed(f"{name} was stopped.")
            return f"{name}: stopped (cancelled, or given to another worker)"
        except Revoked:
            raise
        except IgotError as err:
            line = one_line(str(err), source, name)
            failed(line)
            return f"{name}: failed: {line}"
        except Exception as err:  # noqa: BLE001  a bug, not the user's: said, and the worker goes on
            line = f"Unexpected error while making {name} on worker ({type(err).__name__}: {one_line(str(err), source, name)})."
            failed(line)
            return f"{name}: failed: {line}"
        json_file = result.files.get("json")
        if json_file is None:
            failed(f"No speech found in {name}: nothing was written.")
            return f"{name}: no speech found"
        data = Path(json_file).read_bytes()
    for wait in (1, 2, 4, 8, 16, 0):  # a result sent again keeps the first: safe to retry
        try:
            status, answer = client.ask("PUT", f"/api/worker/jobs/{job_id}/result", data, timeout=RESULT_TIMEOUT)
            break
        except Unreachable as err:
            if not wait:
                return f"{name}: made, but the server could not be reached to take it ({err.problem})"
            log(f"{err.problem} Sending {name} again in {wait} s.")
            time.sleep(wait)
    if status != 200:
        return f"{name}: the server refused it ({status}: {answer.get('error', '')})"
    return f"{name}: done, saved as {answer['stem']}"


def work(client: Client, device: str, once: bool = False, log: Callable[[str], None] = print,
         models: Optional[Models] = None) -> int:
    """Take jobs until stopped (or one, `once`): 0, or 3 when the token was refused."""
    models = models or Models(keep=True)  # kept: the next job loads nothing again
    base = RunOptions(device=device, progress=False, drive=False)
    backoff = 1.0
    said_idle = False
    while True:
        try:
            given = take(client, device)
            backoff = 1.0
            if given is None:
                if once:
                    log("No job waits.")
                    return 0
                if not said_idle:
                    log("Waiting for a job.")
                    said_idle = True
                time.sleep(IDLE_WAIT)
                continue
            said_idle = False
            log(f"Took {given['job'].get('name', '')}.")
            log(make(client, given, base, models, log))
            if once:
                return 0
        except Revoked as err:
            log(f"Stopped: {err}")
            return 3
        except Unreachable as err:
            log(f"{err.problem} Trying again in {backoff:.0f} s.")
            time.sleep(backoff)
            backoff = min(backoff * 2, MAX_BACKOFF)


def add_worker_parser(subparsers) -> None:
    w = subparsers.add_parser("worker", help="make a team's queued interviews on this computer (a token from igot workers add)")
    w.add_argument("--server", required=True, help="the team server's address, such as https://igot.example.com")
    w.add_argument("--token", required=True, help="this worker's token (igot workers add NAME prints it)")
    w.add_argument("--device", default="auto", choices=DEVICES, help="where the models run (default: auto)")
    w.add_argument("--ca-file", type=Path, help="the certificate (PEM) that signs the server's, when not a public one")
    w.add_argument("--once", action="store_true", help="make one job (or none when none waits), then stop")


def run_worker(args: argparse.Namespace) -> int:
    try:
        client = Client(args.server, args.token, args.ca_file)
        return work(client, args.device, args.once, log=lambda line: print(line, flush=True))
    except IgotError as exc:
        print(f"igot: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
