"""Reports: the library's list of them, one report with its quotes read now and the highlights its
findings may cite, made from tags or themes, changed (naming the version the page read), deleted,
downloaded as Markdown or HTML, and sent to a Google Doc when the library's interviews are in
Drive. Deleting one needs WRITE, as deleting a highlight does: a report is a researcher's writing
over highlights, and deleting it loses no highlight of any interview."""

from __future__ import annotations

from dataclasses import asdict
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from igot.outputs import reports
from igot.outputs.store import Library
from igot.team import activity
from igot.team.roles import READ, WRITE
from igot.workspace import views
from igot.workspace.access import by, need
from igot.workspace.interviews import WorkspaceError
from igot.workspace.routes.common import Context, body


def report_view(lib: Library, kept: reports.KeptReport) -> dict:
    """A report as its page shows it: its findings with their quotes as the interviews have them
    now, the highlights a finding may cite (its tags' and themes'), and whether it can go to Drive."""
    r = kept.report
    found = reports.resolved(lib, r)
    return {"id": r.id, "title": r.title, "version": kept.version, "made_by": r.made_by, "changed_by": r.changed_by,
            "made": r.made, "changed": r.changed, "google_doc": r.google_doc,
            "sources": [asdict(s) for s in r.sources],
            "findings": [{"text": f.text, "quotes": [asdict(q) for q in f.quotes]} for f in found.findings],
            "candidates": [asdict(q) for q in reports.candidates(lib, r)],
            "drive": reports.drive_folder(lib, r) is not None, **views.colours()}


def listed(lib: Library) -> dict:
    kept, problems = lib.report_list()
    return {"reports": [{"id": k.report.id, "title": k.report.title, "findings": len(k.report.findings),
                         "sources": [asdict(s) for s in k.report.sources], "made_by": k.report.made_by,
                         "changed_by": k.report.changed_by, "changed": k.report.changed, "google_doc": k.report.google_doc}
                        for k in kept], "problems": problems}


def drive_service():
    """Google Drive with the sign-in saved on this computer (igot run --gdoc keeps one): the
    workspace never asks for a sign-in itself (nobody may be at this computer's browser)."""
    from igot.outputs import gdoc  # the Google client is needed only here

    creds = gdoc.saved_credentials()
    if creds is None:
        raise WorkspaceError("This computer has no saved Google sign-in, so iGot cannot make the Doc.",
                             "Run igot run --gdoc FOLDER once on this computer (it asks you to sign in), then send again.")
    return gdoc.drive_service(creds)


def router(ctx: Context) -> APIRouter:
    lib = ctx.lib
    r = APIRouter()

    def base(request: Request) -> str:
        """The workspace's address, before its #/interview/... links in an export or a Doc."""
        return ctx.team.origin.rstrip("/") + "/" if ctx.team is not None else str(request.base_url)

    @r.get("/api/reports", dependencies=[need(READ)])
    async def report_list() -> Response:
        return JSONResponse(await run_in_threadpool(listed, lib))

    @r.get("/api/reports/{report_id}", dependencies=[need(READ)])
    async def report(report_id: str) -> Response:
        return JSONResponse(await run_in_threadpool(lambda: report_view(lib, lib.report(report_id))))

    @r.post("/api/reports", dependencies=[need(WRITE)])
    async def make_report(request: Request) -> Response:
        asked = await body(request)
        kept = await run_in_threadpool(lib.make_report, asked.get("title", ""), asked.get("sources"), by(request))
        ctx.did(request, activity.MADE_REPORT, "", f"report {kept.report.id}", text=kept.report.title)
        return JSONResponse(await run_in_threadpool(report_view, lib, kept), status_code=201)

    @r.put("/api/reports/{report_id}", dependencies=[need(WRITE)])
    async def change_report(report_id: str, request: Request) -> Response:
        asked = await body(request)
        kept = await run_in_threadpool(lambda: lib.change_report(report_id, asked.get("version"), title=asked.get("title"),
                                                                 findings=asked.get("findings"), by=by(request)))
        ctx.did(request, activity.CHANGED_REPORT, "", f"report {report_id}", text=kept.report.title)
        return JSONResponse(await run_in_threadpool(report_view, lib, kept))

    @r.delete("/api/reports/{report_id}", dependencies=[need(WRITE)])
    async def delete_report(report_id: str, request: Request, version: str = "") -> Response:
        await run_in_threadpool(lib.delete_report, report_id, version)
        ctx.did(request, activity.DELETED_REPORT, "", f"report {report_id}")
        return JSONResponse({"deleted": report_id})

    @r.get("/api/reports/{report_id}/export", dependencies=[need(READ)])
    async def export_report(report_id: str, request: Request, format: str = "md") -> Response:
        if format not in ("md", "html"):
            raise WorkspaceError(f"Unknown export format {format!r}.", "Choose md or html.")
        at = base(request)

        def render() -> tuple[str, str]:
            found = reports.resolved(lib, lib.report(report_id).report)
            return found.report.title, reports.to_markdown(found, at) if format == "md" else reports.to_html(found, at)

        title, text = await run_in_threadpool(render)
        kind = "text/markdown; charset=utf-8" if format == "md" else "text/html; charset=utf-8"
        return Response(text, media_type=kind, headers={
            "Content-Disposition": f"attachment; filename=\"report.{format}\"; filename*=UTF-8''{quote(f'{title}.{format}')}"})

    @r.post("/api/reports/{report_id}/drive", dependencies=[need(WRITE)])
    async def send_report(report_id: str, request: Request) -> Response:
        at = base(request)

        def send() -> dict:
            kept = lib.report(report_id)
            if reports.drive_folder(lib, kept.report) is None:
                raise WorkspaceError(*reports.NO_DRIVE)
            return report_view(lib, reports.to_drive(lib, report_id, drive_service(), at))

        answer = await run_in_threadpool(send)
        ctx.did(request, activity.SENT_REPORT, "", f"report {report_id}", text=answer["title"])
        return JSONResponse(answer)

    return r
