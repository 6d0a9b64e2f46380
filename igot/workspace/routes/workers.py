"""A team's server only: what workers (`igot worker`, igot.worker) ask of it, and the page's list of
them. A worker proves itself with its bearer token (checked by the team's door: igot.workspace.
team_door), and each route about a job checks that the job is leased to that very worker: a worker
reads only the recording of the job it holds, and reports only on it.

The interview a worker sends is a stranger's file: read with Transcript.from_json (every value
checked), its source set here (the recording in LIB/recordings for an upload, the link for a
link), and saved through the library's one door (igot.outputs.store.save, under the library's
lock) under the stem stems.stem_for gives: the same recording keeps its stem, another never takes
one. A result sent twice for one job keeps the first.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from igot.links import video_kind_and_url
from igot.outputs import stems, store
from igot.runtime.files import first_link
from igot.team import activity, jobs
from igot.team.roles import READ, WORKER
from igot.transcript import Source, Transcript
from igot.workspace.access import need
from igot.workspace.interviews import WorkspaceError
from igot.workspace.queue import RECORDINGS
from igot.workspace.routes.common import Context, TooLarge, body
from igot.workspace.team_queue import EXTERNAL_WINDOW, TeamQueue

MAX_RESULT = 64 * 2**20  # bytes of one interview's JSON: a three-hour interview is ~15 MB
MAX_LINE = 1000  # characters of a failure's line


def number(asked: dict, key: str) -> float:
    value = asked.get(key, 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1e12:
        raise WorkspaceError(f"The progress's {key} must be a number of at least 0, not {str(value)[:40]!r}.",
                             "Check that the worker runs the same iGot as the server.")
    return float(value)


def recording_of(queue: TeamQueue, job: jobs.Job) -> Path:
    """The job's recording on the server: an upload's in LIB/recordings (never through a link), a
    path's checked again against the folders recordings may come from."""
    if job.kind == "path":
        return queue.recording_path(job.source)
    if job.kind != "upload":
        raise WorkspaceError(f"{job.name} is a link: the worker downloads it itself.", "Download the link.")
    path = Path(job.source)
    if not path.is_relative_to(queue.folder / RECORDINGS) or first_link(path, queue.folder) is not None \
            or not path.is_file():
        raise jobs.JobGone(f"The recording of {job.name} is no longer in the library.", "Add it again.")
    return path


def save_result(queue: TeamQueue, worker: int, job_id: int, data: bytes) -> str:
    """The interview a worker made for its job, saved into the library; its stem."""
    lib = queue.lib
    with lib.locked():  # one result at a time: the stem chosen and written under the same lock
        job = jobs.get(queue.db, job_id)
        if job.state == "done" and job.worker == worker and job.stem:
            return job.stem  # sent again: the first stays, nothing is written
        job = jobs.held(queue.db, job_id, worker)
        try:
            t = Transcript.from_json(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, TypeError, KeyError) as err:
            raise WorkspaceError(f"What the worker sent for {job.name} is not an interview ({str(err)[:200]}).",
                                 "Check that the worker runs the same iGot as the server.") from None
        if job.kind == "link":
            kind, url = video_kind_and_url(job.source)
            source = Source(t.source.title, url, None, kind)
        else:  # where the recording is on the server: the workspace plays it from there
            source = Source(t.source.title, None, str(recording_of(queue, job)), "file")
        t = replace(t, source=source)
        stem = stems.stem_for(lib.folder, t)
        store.save(t, lib.folder, stem, drive=False)
        queue.ended(job, worker, "done", "", stem)
        return stem


def router(ctx: Context) -> APIRouter:
    queue = ctx.queue
    db = ctx.team.db
    r = APIRouter()

    @r.post("/api/worker/take", dependencies=[need(WORKER)])
    async def take(request: Request) -> Response:
        asked = await body(request)
        worker = request.state.worker
        device = asked.get("device") if isinstance(asked.get("device"), str) else None
        queue.external_asked = time.monotonic()  # the server's own worker leaves the queue to the workers
        await run_in_threadpool(jobs.seen, db, worker.id, device)
        job = await run_in_threadpool(jobs.take, db, worker.id, queue.lease_seconds)
        if job is None:
            return Response(status_code=204)
        queue.log(f"{job.name}: taken by {worker.name}")
        return JSONResponse({"job": {"id": job.id, "name": job.name, "kind": job.kind, "options": job.options,
                                     "link": job.source if job.kind == "link" else None,
                                     "file": Path(job.source).name if job.kind != "link" else None},
                             "lease_seconds": queue.lease_seconds})

    @r.get("/api/worker/jobs/{job_id}/recording", dependencies=[need(WORKER)])
    async def recording(job_id: int, request: Request) -> Response:
        job = await run_in_threadpool(jobs.held, db, job_id, request.state.worker.id)
        path = await run_in_threadpool(recording_of, queue, job)
        return FileResponse(path, media_type="application/octet-stream")

    @r.post("/api/worker/jobs/{job_id}/progress", dependencies=[need(WORKER)])
    async def progress(job_id: int, request: Request) -> Response:
        asked = await body(request)
        stage = asked.get("stage", "")
        if not isinstance(stage, str):
            raise WorkspaceError("The progress's stage must be text.", "Check that the worker runs the same iGot as the server.")
        done, total = number(asked, "done"), number(asked, "total")
        worker = request.state.worker.id
        await run_in_threadpool(jobs.held, db, job_id, worker)
        go_on = await run_in_threadpool(jobs.renew, db, job_id, worker, stage, done, total, queue.lease_seconds)
        return JSONResponse({"go_on": go_on})

    @r.put("/api/worker/jobs/{job_id}/result", dependencies=[need(WORKER)])
    async def result(job_id: int, request: Request) -> Response:
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > MAX_RESULT:
            raise TooLarge(f"The interview sent is {int(length)} bytes long.", f"Send at most {MAX_RESULT} bytes.")
        data = bytearray()
        async for piece in request.stream():
            data += piece
            if len(data) > MAX_RESULT:
                raise TooLarge(f"The interview sent is over {MAX_RESULT} bytes long.", f"Send at most {MAX_RESULT} bytes.")
        stem = await run_in_threadpool(save_result, queue, request.state.worker.id, job_id, bytes(data))
        return JSONResponse({"stem": stem})

    @r.post("/api/worker/jobs/{job_id}/failed", dependencies=[need(WORKER)])
    async def failed(job_id: int, request: Request) -> Response:
        asked = await body(request)
        line = asked.get("line", "")
        line = "".join(c for c in line if c.isprintable())[:MAX_LINE] if isinstance(line, str) else ""
        worker = request.state.worker.id
        job = await run_in_threadpool(jobs.held, db, job_id, worker)
        # a job cancelled meanwhile ends cancelled (jobs.finish)
        ended = await run_in_threadpool(queue.ended, job, worker, "failed", line or f"{job.name} could not be made.", None)
        return JSONResponse({"state": ended.state})

    # --- the page: who works for the team ----------------------------------------------------------
    @r.get("/api/workers", dependencies=[need(READ)])
    async def team_workers() -> Response:
        found = await run_in_threadpool(jobs.workers, db)
        return JSONResponse({"workers": [{"name": w.name, "device": w.device,
                                          "seen": activity.iso(w.seen) if w.seen else None,
                                          "job": w.job_name} for w in found],
                             "server_works": queue.embedded and time.monotonic() - queue.external_asked >= EXTERNAL_WINDOW})

    return r
