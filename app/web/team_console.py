"""The team console under /team/: submit a run, my runs (download, withdraw), my results, per-run reports (with the
run's explanations), a bundle.

Every page is rendered on the server from the signed-in team's session cookie (or a bearer header: the JSON twins
serve scripts too) and has its JSON twin (`app/web/twins.py`). Without a session a page redirects to
`/login?next=<this page>` (JSON: 401). Every form carries the session's CSRF value (`app/web/session.py`). The data
comes from the services: `runs.submit_run` (its line-numbered errors shown in the page, nothing stored on error),
`runs.delete_run`, `visibility.leaderboard_for` and `team_reports` (SPEC section 7: what `team_results` allows).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, File, Form, Query, Request, UploadFile
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, RedirectResponse, Response
from sqlalchemy.orm import Session

from app.services import run_explanations, team_reports, visibility
from app.services import runs as run_service
from app.services.errors import InvalidInput, ServiceError
from app.services.inputs import Id
from app.services.tables import attachment
from app.web import console_kit as kit
from app.web import session as web_session
from app.web.twins import render, twin_paths, wants_json

ReadUpload = Callable[[Request, UploadFile], bytes]
FIELDS = ("name", "system_type", "training_type", "novelty", "priority", "description")
SHOWN_EXPLANATIONS = 10  # the first ones a run report lists; the rest in its JSON


def figures(report: dict[str, Any]) -> dict[str, str]:
    """A run report's figures as inline SVG: per topic against the median and best (the recall-precision curve is
    drawn by the template)."""
    if "versus" not in report or not report["versus"].get("topics"):
        return {}
    from app.figures import campaign_analyses as drawn  # matplotlib: only when a report is drawn

    return {"versus": drawn.svg(drawn.run_vs_median_best(report["versus"]))}


def curve_points(curve: dict[str, Any], width: int = 320, height: int = 220, pad: int = 40) -> str:
    """The recall-precision curve as SVG polyline points in a width x height box (None precision: skipped)."""
    inner_w, inner_h = width - pad - 10, height - pad - 10
    points = []
    for recall, precision in zip(curve["recall"], curve["precision"], strict=True):
        if precision is not None:
            points.append(f"{pad + recall * inner_w:.1f},{10 + (1 - precision) * inner_h:.1f}")
    return " ".join(points)


def make_router(page_role: Any, session_dependency: Any, read_upload: ReadUpload) -> APIRouter:
    """The team console's pages (declared `page_role`: a page checks its session itself, redirecting to /login);
    `read_upload` reads an upload within the configured limits (the API's reader, handed in by the application)."""
    router = APIRouter(tags=["web"], include_in_schema=False, dependencies=[page_role])
    SessionDep = Depends(session_dependency)

    def signed_in(request: Request, session: Session) -> web_session.WebPrincipal | Response:
        """The request's principal, or the answer to give without one (a redirect to /login; JSON: 401)."""
        return kit.signed_in(request, session)

    extra, failed = kit.extra, kit.failed

    def home_page(
        request: Request,
        session: Session,
        web: web_session.WebPrincipal,
        *,
        upload: dict[str, Any] | None = None,
        status_code: int = 200,
    ) -> Response:
        """The console's home, with the result of an upload when there is one."""
        try:
            data = team_reports.console(session, web.principal)
        except ServiceError as error:
            return failed(request, web, error)
        notice = {k: request.query_params[k] for k in ("submitted", "withdrawn") if k in request.query_params}
        data = {**data, "upload": upload, "notice": notice or None}
        return render(request, "team/home.html", data, extra=extra(web), status_code=status_code)

    def home(request: Request, session: Session = SessionDep) -> Response:
        """The team's runs, the submission form and links to results and reports."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        return home_page(request, session, web)

    for path in twin_paths("/team/"):
        router.add_api_route(path, home, methods=["GET"], name="team_home" + ("_json" if ".json" in path else ""))

    @router.get("/team")
    def team_root() -> Response:
        """The console lives at /team/."""
        return RedirectResponse("/team/", status_code=308)

    @router.post("/team/runs")
    def submit(
        request: Request,
        file: Annotated[UploadFile | None, File(description="The run file")] = None,
        name: Annotated[str, Form(max_length=300)] = "",
        system_type: Annotated[str, Form(max_length=5)] = "",
        training_type: Annotated[str, Form(max_length=5)] = "",
        novelty: Annotated[str, Form(max_length=5)] = "",
        priority: Annotated[str, Form(max_length=12)] = "",
        description: Annotated[str, Form(max_length=100_000)] = "",
        format: Annotated[str, Form(max_length=10)] = "",
        csrf_token: Annotated[str, Form(max_length=200)] = "",
        session: Session = SessionDep,
    ) -> Response:
        """Submit a run: validated whole by the run service; every error by line shown in the page, nothing stored."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        try:
            web_session.check_csrf(web, csrf_token)
        except ServiceError as error:
            return failed(request, web, error)
        given = {
            "name": name,
            "system_type": system_type,
            "training_type": training_type,
            "novelty": novelty,
            "priority": priority,
            "description": description,
            "format": format,
        }
        try:
            if file is None or not file.filename:
                raise InvalidInput("choose a run file", [{"field": "file", "message": "required"}])
            data = read_upload(request, file)
            metadata = _metadata(given)
            chosen: Literal["trec", "xml", "moments"] | None = format if format in ("trec", "xml", "moments") else None  # type: ignore[assignment]  # checked by the `in`
            submission = run_service.Submission(data=data, metadata=metadata, format=chosen)
            settings = request.app.state.settings
            cpu = run_service.CpuPolicy(processes=settings.parse_processes, niceness=settings.worker_niceness)
            run = run_service.submit_run(
                session, web.principal, web.principal.campaign_id or 0, submission, max_errors=settings.max_errors,
                cpu=cpu,
            )  # fmt: skip
        except ServiceError as error:
            session.rollback()
            errors = error.errors if isinstance(error, InvalidInput) else []
            upload = {"ok": False, "detail": error.message, "errors": errors, "given": given}
            return home_page(request, session, web, upload=upload, status_code=kit.status_of(error))
        session.commit()
        if wants_json(request):
            return JSONResponse(jsonable_encoder({"submitted": team_reports.run_summary(run)}), status_code=201)
        return RedirectResponse(f"/team/?submitted={run.id}", status_code=303)

    @router.get("/team/runs/{run_id}/download")
    def download(request: Request, run_id: Id, original: bool = False, session: Session = SessionDep) -> Response:
        """One of the team's runs as a file (TREC 6 columns, or moment TSV); with `original=true` the file exactly
        as uploaded, its explanations included."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        try:
            if original:
                _, data, name, media_type = run_service.original_upload(session, web.principal, run_id)
                headers = {"Content-Disposition": attachment(name), "Cache-Control": "no-store"}
                return Response(data, media_type=media_type, headers=headers)
            run, chunks = run_service.download_run(session, web.principal, run_id)
        except ServiceError as error:
            return failed(request, web, error)
        filename = f"{run.name}.{'tsv' if run.format == 'moments' else 'txt'}"
        return Response(
            b"".join(chunks),
            media_type="text/plain; charset=utf-8",
            headers={"Content-Disposition": attachment(filename), "Cache-Control": "no-store"},
        )

    @router.post("/team/runs/{run_id}/withdraw")
    def withdraw(
        request: Request,
        run_id: Id,
        csrf_token: Annotated[str, Form(max_length=200)] = "",
        session: Session = SessionDep,
    ) -> Response:
        """Withdraw (delete) one of the team's runs while submissions are open."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        try:
            web_session.check_csrf(web, csrf_token)
            run = run_service.visible_run(session, web.principal, run_id)
            name = run.name
            run_service.delete_run(session, web.principal, run_id)
        except ServiceError as error:
            session.rollback()
            return failed(request, web, error)
        session.commit()
        if wants_json(request):
            return JSONResponse({"withdrawn": run_id})
        return RedirectResponse(f"/team/?withdrawn={_quoted(name)}", status_code=303)

    def results(request: Request, measure: str | None = None, session: Session = SessionDep) -> Response:
        """My results as SPEC section 7 allows: the own-runs view before publication, the published board after."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        try:
            home = team_reports.console(session, web.principal)
            board = visibility.leaderboard_for(session, web.principal, home["campaign"]["id"], measure=measure)
        except ServiceError as error:
            return failed(request, web, error)
        data = {"campaign": home["campaign"], "team": home["team"], "board": board}
        return render(request, "team/results.html", data, extra=extra(web))

    for path in twin_paths("/team/results"):
        router.add_api_route(path, results, methods=["GET"], name="team_results" + ("_json" if ".json" in path else ""))

    def report(request: Request, run_id: Id, measure: str | None = None, session: Session = SessionDep) -> Response:
        """The report NIST sends a team about one run."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        try:
            data = team_reports.run_report(session, web.principal, run_id, measure)
            data = {**data, "explanations": _explanations(session, web, run_id, SHOWN_EXPLANATIONS)}
        except ServiceError as error:
            return failed(request, web, error)
        more = {"figures": figures(data), "curve_points": curve_points}
        return render(request, "team/report.html", data, extra=extra(web, **more))

    for path in twin_paths("/team/runs/{run_id}/report"):
        router.add_api_route(path, report, methods=["GET"], name="team_report" + ("_json" if ".json" in path else ""))

    @router.get("/team/runs/{run_id}/explanations.json")
    def explanations(
        request: Request,
        run_id: Id,
        offset: Annotated[int, Query(ge=0, le=2_147_483_647)] = 0,
        limit: Annotated[int, Query(ge=1, le=run_explanations.MAX_PAGE)] = 100,
        topic: Annotated[str | None, Query(max_length=200)] = None,
        session: Session = SessionDep,
    ) -> Response:
        """A page of the run's explanations, as JSON (the run report lists the first ones)."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        try:
            page = _explanations(session, web, run_id, limit, offset=offset, topic=topic)
        except ServiceError as error:
            return failed(request, web, error)
        return JSONResponse(jsonable_encoder(page), headers={"Cache-Control": "no-store"})

    def bundle(request: Request, measure: str | None = None, session: Session = SessionDep) -> Response:
        """Every run's report in one HTML file (figures inline), as a download."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        try:
            data = team_reports.bundle(session, web.principal, measure)
        except ServiceError as error:
            return failed(request, web, error)
        shown = {r["run"]["id"]: figures(r) for r in data["reports"]}
        more = {"figures_of": shown, "curve_points": curve_points, "stylesheet": _stylesheet()}
        response = render(request, "team/bundle.html", data, extra=extra(web, **more))
        if not wants_json(request):
            filename = f"trecpool-{data['campaign']['id']}-{data['team']['name']}-reports.html"
            response.headers["Content-Disposition"] = attachment(filename)
        return response

    for path in twin_paths("/team/bundle"):
        router.add_api_route(path, bundle, methods=["GET"], name="team_bundle" + ("_json" if ".json" in path else ""))

    return router


def _explanations(
    session: Session,
    web: web_session.WebPrincipal,
    run_id: int,
    limit: int,
    *,
    offset: int = 0,
    topic: str | None = None,
) -> dict[str, Any]:
    """A page of a run's explanations with the console's links: all of them as JSON, the file as uploaded."""
    page = run_explanations.explanations_page(session, web.principal, run_id, offset=offset, limit=limit, topic=topic)
    return {
        **jsonable_encoder(page),
        "json": f"/team/runs/{run_id}/explanations.json",
        "download": f"/team/runs/{run_id}/download?original=true",
    }


def _quoted(text: str) -> str:
    """A value for a query string."""
    from urllib.parse import quote

    return quote(text, safe="")


def _stylesheet() -> str:
    """The console's styles, inlined into the downloaded bundle (it opens offline)."""
    from app.web.pages import STATIC_DIR

    return (STATIC_DIR / "results.css").read_text() + (STATIC_DIR / "team.css").read_text()


def _metadata(given: dict[str, str]) -> run_service.RunMetadata:
    """The form's run metadata (empty: the XML run's attribute or the default); field errors as InvalidInput."""
    problems: list[dict[str, object]] = []
    priority: int | None = None
    if given["priority"].strip():
        text = given["priority"].strip()
        if text.isascii() and text.isdigit() and 1 <= int(text) <= 2_147_483_647:
            priority = int(text)
        else:
            problems.append({"field": "priority", "message": "a whole number from 1"})
    novelty = {"": None, "yes": True, "no": False}.get(given["novelty"].strip().lower(), "bad")
    if novelty == "bad":
        problems.append({"field": "novelty", "message": "yes or no"})
    if problems:
        raise InvalidInput("invalid run metadata", problems)
    return run_service.RunMetadata(
        name=given["name"].strip(),
        system_type=given["system_type"].strip() or None,
        training_type=given["training_type"].strip() or None,
        novelty=novelty if isinstance(novelty, bool) else None,
        priority=priority,
        description=given["description"] or None,
    )
