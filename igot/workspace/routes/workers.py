"""A team's server only: what workers (`igot worker`, igot.worker) ask of it, and the page's list of
them. A worker proves itself with its bearer token (checked by the team's door: igot.workspace.
team_door), and each route about a job checks that the job is leased to that very worker: a worker
reads only the recording of the job it holds, and reports only on it.

The interview a worker sends is a stranger's file: read with Transcript.from_json (every value
checked), its source set here (the recording in LIB/recordings for an upload, the link for a
link), and saved through the library's one door (igot.outputs.store.save, under the library's
lock) under the stem stems.stem_for gives: the same recording keeps its stem, another never takes
one. A result sent twice for one job keeps the first; one sent for a job cancelled meanwhile is
refused, and the job ends cancelled. The interview's phrase vectors (search by meaning) follow its
save, as a run's do: the ones its worker sent as its last stage when they are of these phrases
with the job's model, else made here with the workspace's model pool (the worker could not load
the model), unless the job asked for none.

A worker sends each stage it finishes (PUT .../stages/NAME, one of team_queue.STAGE_FILES, kept in
LIB/.igot/jobs/ID/); the worker that takes the job next lists them (GET .../stages) and fetches
each (GET .../stages/NAME), so its run picks up where the first stopped.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Optional

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from igot.links import video_kind_and_url
from igot.outputs import stems, store
from igot.runtime.files import first_link
from igot.search import commands, embed
from igot.team import activity, jobs
from igot.team.roles import READ, WORKER
from igot.transcript import Source, Transcript
from igot.workspace.access import need
from igot.workspace.interviews import WorkspaceError
from igot.workspace.queue import RECORDINGS
from igot.workspace.routes.common import Context, body, capped
from igot.workspace.team_queue import EXTERNAL_WINDOW, MAX_STAGE, TeamQueue, forget_left_stages, keep_stage, \
    kept_stages, stage_name

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


class JobCancelled(jobs.LeaseLost):
    """The job was cancelled before its result came: nothing saved (HTTP 409)."""


def vectors_for(queue: TeamQueue, job: jobs.Job, t: Transcript, models: Any,
                log: Callable[[str], None]) -> Optional[embed.PhraseEmbeddings]:
    """The interview's phrase vectors, with the model the job's run would use (its options', else
    iGot's default): those its worker sent when they are of these phrases, else made with the
    workspace's model pool. None: the job asked for none, no phrases, or the model cannot load
    here (said: `igot index` makes them later)."""
    options = job.options if isinstance(job.options, dict) else {}
    if options.get("meaning") is False or not t.phrases:
        return None
    name = options.get("embedding_model") or embed.DEFAULT_EMBEDDING_MODEL
    sent = kept_stages(queue.folder, job.id).get("embeddings.json")
    kept = embed.load_embeddings_file(sent) if sent is not None else None
    if kept is not None and kept.matches(t, name):
        return kept
    if models is None:
        return None
    embedder = commands.embedder_for(name, models.device, log, models.pool.embedder, models.hub)
    if embedder is None:
        return None
    return embed.embed_phrases(t, embedder)


def kept_vectors(vectors: embed.PhraseEmbeddings) -> Callable[[store.Committed], None]:
    """The store's writer of the vectors once the interview is committed (as a run's)."""
    def write(done: store.Committed) -> None:
        if not vectors.matches(done.after, vectors.model):
            return  # the interview's phrases are not these (kept from before): `igot index` makes them
        try:
            embed.save_embeddings(done.folder / f"{done.stem}.json", vectors)
        except OSError as err:
            raise WorkspaceError(f"The phrases' vectors of '{done.after.source.title}' could not be kept "
                                 f"({err.strerror or err}).", "Search by meaning makes them again when needed.") from None

    return write


def save_result(queue: TeamQueue, worker: int, job_id: int, data: bytes, models: Any = None) -> str:
    """The interview a worker made for its job, saved into the library; its stem."""
    lib = queue.lib
    job = jobs.get(queue.db, job_id)
    if job.state == "done" and job.worker == worker and job.stem:
        return job.stem  # sent again: the first stays, nothing is written
    job = jobs.held(queue.db, job_id, worker)
    if job.cancel:
        queue.ended(job, worker, "cancelled", "", None)
        raise JobCancelled(f"{job.name} was cancelled: its interview was not saved.", "Ask for the next job.")
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
    # Made before the library's lock is taken (a long interview's take seconds on a CPU); written after the commit.
    vectors = vectors_for(queue, job, t, models, lambda line: queue.log(f"{job.name}: {line}"))
    with lib.locked():  # one result at a time: the stem chosen and written under the same lock
        job = jobs.get(queue.db, job_id)
        if job.state == "done" and job.worker == worker and job.stem:
            return job.stem
        job = jobs.held(queue.db, job_id, worker)
        if job.cancel:
            queue.ended(job, worker, "cancelled", "", None)
            raise JobCancelled(f"{job.name} was cancelled: its interview was not saved.", "Ask for the next job.")
        stem = stems.stem_for(lib.folder, t)
        then = [("Meaning index", kept_vectors(vectors))] if vectors is not None else []
        store.save(t, lib.folder, stem, drive=False, log=queue.log, then=then)
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
        await run_in_threadpool(forget_left_stages, queue.folder, db)  # of jobs that ended on the way
        if job is None:
            return Response(status_code=204)
        queue.log(f"{job.name}: taken by {worker.name}")
        options = await run_in_threadpool(queue.sent_options, job)
        stages = await run_in_threadpool(kept_stages, queue.folder, job.id)
        return JSONResponse({"job": {"id": job.id, "name": job.name, "kind": job.kind, "options": options,
                                     "link": job.source if job.kind == "link" else None,
                                     "file": Path(job.source).name if job.kind != "link" else None,
                                     "stages": sorted(stages)},
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
        await run_in_threadpool(jobs.held_or_done, db, job_id, request.state.worker.id)  # before the body comes
        data = await capped(request, MAX_RESULT, "interview")
        stem = await run_in_threadpool(save_result, queue, request.state.worker.id, job_id, data, ctx.models)
        return JSONResponse({"stem": stem})

    @r.put("/api/worker/jobs/{job_id}/stages/{name}", dependencies=[need(WORKER)])
    async def send_stage(job_id: int, name: str, request: Request) -> Response:
        stage_name(name)
        worker = request.state.worker.id
        await run_in_threadpool(jobs.held, db, job_id, worker)
        data = await capped(request, MAX_STAGE, "stage")
        await run_in_threadpool(jobs.held, db, job_id, worker)  # still its own once the file came
        await run_in_threadpool(keep_stage, queue.folder, job_id, name, data)
        return JSONResponse({"kept": name})

    @r.get("/api/worker/jobs/{job_id}/stages", dependencies=[need(WORKER)])
    async def stages(job_id: int, request: Request) -> Response:
        await run_in_threadpool(jobs.held, db, job_id, request.state.worker.id)
        found = await run_in_threadpool(kept_stages, queue.folder, job_id)
        return JSONResponse({"stages": sorted(found)})

    @r.get("/api/worker/jobs/{job_id}/stages/{name}", dependencies=[need(WORKER)])
    async def stage(job_id: int, name: str, request: Request) -> Response:
        stage_name(name)
        await run_in_threadpool(jobs.held, db, job_id, request.state.worker.id)
        path = (await run_in_threadpool(kept_stages, queue.folder, job_id)).get(name)
        if path is None:
            raise jobs.JobGone(f"No stage {name} kept for job {job_id}.", "Make it.")
        return FileResponse(path, media_type="application/octet-stream")

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
