"""Adding interviews: recordings (files or links) queued, then made one after another."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from igot.errors import IgotError
from igot.media import audio
from igot.team import activity
from igot.team.roles import READ, WRITE
from igot.workspace.access import need, person
from igot.workspace.queue import MAX_UPLOAD, Queue
from igot.workspace.routes.common import Context, NoRoom, body, chunk


def room_for_uploads(queue: Queue, asked: dict) -> None:
    """The files a batch announces, with the bytes of uploads still coming, must fit on the
    library's disk: refused before a byte is received (each upload alone may be up to 4 GB, and
    a full disk would fail every run and change of the library, not just this upload). Sizes
    that are not numbers, or past MAX_UPLOAD, are left to the queue, which refuses them."""
    files = asked.get("files")
    announced = sum(f["size"] for f in files if isinstance(f, dict) and type(f.get("size")) is int
                    and 0 < f["size"] <= MAX_UPLOAD) if isinstance(files, list) else 0
    if not announced:
        return
    with queue.lock:
        coming = sum(max(job.size - job.received, 0) for job in queue.jobs if job.state == "uploading")
    count = len(files)
    what = f"the {count} recording{'s' * (count != 1)} added" + (" and the uploads still coming" if coming else "")
    try:
        audio.check_free_space(queue.folder, announced + coming, what)
    except IgotError as err:
        raise NoRoom(err.problem, err.fix) from None


def router(ctx: Context) -> APIRouter:
    queue = ctx.queue
    r = APIRouter()

    @r.get("/api/queue", dependencies=[need(READ)])
    async def queue_list() -> Response:
        # with the folders recordings may be added from by their path: the page offers it only then
        return JSONResponse({"jobs": await run_in_threadpool(queue.listing),
                             "recording_folders": [str(f) for f in queue.recording_folders]})

    @r.post("/api/queue", dependencies=[need(WRITE)])
    async def queue_add(request: Request) -> Response:
        asked = await body(request)
        await run_in_threadpool(room_for_uploads, queue, asked)
        who = person(request)
        jobs = await run_in_threadpool(queue.add, asked, who.id if who is not None else None)
        ctx.did(request, activity.ADDED_INTERVIEW, "", "queue", text=f"{len(jobs)} recording{'s' * (len(jobs) != 1)}")
        return JSONResponse({"jobs": jobs}, status_code=201)

    @r.put("/api/queue/{job_id}/file", dependencies=[need(WRITE)])
    async def queue_file(job_id: str, request: Request, offset: int = 0, last: bool = False) -> Response:
        data = await chunk(request)
        return JSONResponse(await run_in_threadpool(queue.receive, job_id, offset, data, last))

    @r.post("/api/queue/{job_id}/cancel", dependencies=[need(WRITE)])
    async def queue_cancel(job_id: str) -> Response:
        return JSONResponse(await run_in_threadpool(queue.cancel, job_id))

    return r
