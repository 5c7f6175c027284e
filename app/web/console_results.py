"""The organiser console's results pages: a campaign's ground truth and qrels, its evaluations and analyses, and the
preview of its board with the Publish form.

As the rest of the console (`console.py`, `console_kit.py`): server-rendered pages from the organiser's session
cookie (or a bearer header) with a JSON twin each, the session's CSRF value on every form, and a form's errors
(fields, a file's lines) shown in the page it came from with nothing stored. The data and every change come from
the services the API uses (`qrels`, `moment_judging`, `evaluations`, `analyses`, `jobs`, `leaderboards`,
`publication`); jobs run in the worker, and the evaluations page reloads itself (console_jobs.js polling its JSON
twin) while one is queued or running. Downloads and figures have console routes here, as the API's take only
bearer tokens.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Depends, Query, Request, UploadFile
from fastapi.responses import Response
from sqlalchemy import func, select
from sqlalchemy.orm import Session
from starlette.datastructures import FormData
from starlette.datastructures import UploadFile as StarletteUpload

from app.evaluation.measures.registry import default_measures, describe
from app.services import analyses as analysis_service
from app.services import campaigns as campaign_service
from app.services import evaluations as evaluation_service
from app.services import jobs as job_service
from app.services import leaderboards, moment_judging, publication
from app.services import qrels as qrels_service
from app.services.analysis_registry import ANALYSES, Analysis, Parameter, figure_data, parameters
from app.services.errors import InvalidInput, NotFound, ServiceError
from app.services.inputs import Id
from app.services.scores import team_aliases
from app.services.tables import attachment, leaderboard_csv, per_topic_csv
from app.storage.models import (
    AnalysisJob,
    Assessor,
    AssessorKind,
    Campaign,
    CampaignStatus,
    Evaluation,
    GroundTruthSegment,
    Pool,
    QrelsVersion,
    Role,
    Run,
    TaskKind,
    Topic,
)
from app.web import console_kit as kit
from app.web import session as web_session
from app.web.twins import render, twin_paths

ReadUpload = Callable[[Request, UploadFile], bytes]
ACTIVE = ("queued", "running")
MAX_JOBS = 100  # jobs of each kind the evaluations page lists (newest first)
MAX_RUN_FIGURES = 50  # per-run figures a finished analysis links to
COMBINE = ("first", "union", "majority", "all")
RunTypes = Annotated[leaderboards.Filters, Query()]


def campaign_head(campaign: Campaign) -> dict[str, Any]:
    """What every results page says of its campaign."""
    return {
        "id": campaign.id,
        "name": campaign.name,
        "task_kind": campaign.task_kind.value,
        "status": campaign.status.value,
        "anonymise_teams": campaign.anonymise_teams,
    }


def n_topics(session: Session, campaign_id: int) -> int:
    """How many topics the campaign has."""
    return session.scalar(select(func.count()).select_from(Topic).where(Topic.campaign_id == campaign_id)) or 0


def version_row(version: QrelsVersion, topics: int) -> dict[str, Any]:
    """A qrels (or moment ground-truth) version as the qrels page lists it, with its download links."""
    if version.kind == "moments":
        downloads = [{"format": "moment truth (TSV)", "url": f"/console/qrels/{version.id}/download"}]
    else:
        formats = ("trec", "sample_eval") if version.kind == "sample_eval" else ("trec",)
        downloads = [{"format": f, "url": f"/console/qrels/{version.id}/download?format={f}"} for f in formats]
    return {
        "id": version.id,
        "label": version.label,
        "kind": version.kind,
        "source": version.source,
        "pool_id": version.pool_id,
        "judges": version.judges or qrels_service.HUMAN,
        "provenance": version.provenance,
        "combine": version.combine,
        "n_entries": version.n_entries,
        "judging_order": qrels_service.order_mark(version),
        "unjudged_topics": version.unjudged_topics,
        "unjudged_note": qrels_service.unjudged_note(version, topics),
        "created_at": version.created_at,
        "downloads": downloads,
    }


def current_pool(session: Session, campaign: Campaign) -> Pool | None:
    """The campaign's newest pool (of moments for a moment campaign), which qrels are cut from."""
    moments = campaign.task_kind is TaskKind.moments
    kind = Pool.kind == moment_judging.MOMENTS if moments else Pool.kind != moment_judging.MOMENTS
    query = select(Pool).where(Pool.campaign_id == campaign.id, kind).order_by(Pool.id.desc()).limit(1)
    pool: Pool | None = session.scalar(query)
    return pool


def uploaded_segments(session: Session, campaign_id: int) -> int:
    """How many ground-truth segments a moment campaign has from an upload."""
    query = select(func.count()).select_from(GroundTruthSegment).join(Topic, Topic.id == GroundTruthSegment.topic_id)
    return session.scalar(query.where(Topic.campaign_id == campaign_id)) or 0


def model_assessors(session: Session, campaign_id: int) -> list[dict[str, Any]]:
    """The campaign's model assessors (whose verdicts a model or combined version holds)."""
    rows = session.scalars(
        select(Assessor)
        .where(Assessor.campaign_id == campaign_id, Assessor.kind == AssessorKind.model.value)
        .order_by(Assessor.id)
    )
    return [{"id": a.id, "name": a.name, "model": (a.provenance or {}).get("model")} for a in rows]


def checked_label(label: str) -> str:
    """A version's label as typed, stripped; InvalidInput naming `label` unless 1 to 200 characters."""
    label = label.strip()
    if not 1 <= len(label) <= 200:
        raise InvalidInput("the version was not stored", [{"field": "label", "message": "1 to 200 characters"}])
    return label


def optional_id(raw: str, field: str) -> int | None:
    """A form's optional id (empty: None); InvalidInput naming `field` unless a positive whole number."""
    raw = raw.strip()
    if not raw:
        return None
    if raw.isascii() and raw.isdigit() and 1 <= int(raw) <= 2**31 - 1:
        return int(raw)
    raise InvalidInput("not an id", [{"field": field, "message": "choose one of the list"}])


# ----------------------------------------------------------------------------------------------------------- analyses


def parameter_row(kind: str, p: Parameter) -> dict[str, Any]:
    """An analysis parameter as its form field shows it."""
    if p.type is bool:
        widget = "yesno"
    elif p.choices and not p.multiple:
        widget = "choice"
    else:
        widget = "text"
    if p.parse is not None:
        how = p.syntax
    elif p.multiple:
        how = "separated by spaces" if p.type is str else "separated by spaces or commas"
    else:
        how = ""
    return {
        "name": p.name,
        "id": f"an-{kind}-{p.name}",
        "type": p.type_name(),
        "widget": widget,
        "choices": list(p.choices),
        "default": p.default_words,
        "description": p.description,
        "how": how,
    }


def analysis_kinds(campaign: Campaign) -> list[dict[str, Any]]:
    """The analysis kinds that apply to the campaign, with their parameters."""
    return [
        {
            "kind": record.name,
            "description": record.description,
            "reproduces": record.reproduces,
            "figure": record.figure,
            "parameters": [parameter_row(record.name, p) for p in parameters(record)],
        }
        for record in ANALYSES.values()
        if campaign.task_kind.value in record.task_kinds
    ]


def _one_value(p: Parameter, raw: str) -> object:
    """One typed value of a parameter; ValueError saying what it should be."""
    if p.type is int:
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"{raw!r} is not a whole number") from None
    if p.type is float:
        try:
            return float(raw)
        except ValueError:
            raise ValueError(f"{raw!r} is not a number") from None
    return raw


def parameter_value(p: Parameter, raw: str) -> object:
    """A parameter's value from its form field (ValueError saying what is wrong)."""
    if p.type is bool:
        if raw not in ("true", "false"):
            raise ValueError("yes or no")
        return raw == "true"
    if p.multiple:
        if p.parse is not None:
            return p.parse(raw)
        parts = raw.split() if p.type is str else raw.replace(",", " ").split()
        return [_one_value(p, part) for part in parts]
    return _one_value(p, raw)


def params_of(record: Analysis, form: Mapping[str, Any]) -> dict[str, object]:
    """The parameters a kind's form gives (empty fields: the defaults); InvalidInput naming each bad one as
    `params.<name>`, as the API names them."""
    values: dict[str, object] = {}
    problems: list[dict[str, object]] = []
    for p in parameters(record):
        raw = kit.text_field(form, p.name).strip()
        if not raw:
            continue
        try:
            values[p.name] = parameter_value(p, raw)
        except ValueError as exc:
            problems.append({"field": f"params.{p.name}", "message": str(exc)})
    if problems:
        raise InvalidInput("the analysis was not started: correct the parameters named below", problems)
    return values


def figures_of(job: AnalysisJob) -> list[dict[str, str]]:
    """A finished analysis's figures: one, or one per run (the first MAX_RUN_FIGURES) for a per-run figure."""
    if job.status != "done" or job.result is None or job.kind not in ANALYSES:
        return []
    base = f"/console/analyses/{job.id}/figure"
    if not ANALYSES[job.kind].figure_per_run:
        return [{"label": job.kind, "url": base}]
    runs = [str(row.get("run")) for row in job.result.get("runs", []) if isinstance(row, dict) and row.get("run")]
    return [{"label": run, "url": f"{base}?run={quote(run)}"} for run in runs[:MAX_RUN_FIGURES]]


def evaluation_row(evaluation: Evaluation, labels: Mapping[int, str]) -> dict[str, Any]:
    """An evaluation job as the evaluations page lists it."""
    version = evaluation.qrels_version_id
    return {
        "id": evaluation.id,
        "key": f"evaluation-{evaluation.id}",
        "qrels_version_id": version,
        "qrels_label": labels.get(version) if version is not None else None,
        "measures": list(evaluation.measures.get("names", [])),
        "status": evaluation.status,
        "progress": evaluation.progress,
        "error": evaluation.error,
        "created_at": evaluation.created_at,
        "finished_at": evaluation.finished_at,
        "cancel_url": f"/console/evaluations/{evaluation.id}/cancel" if evaluation.status in ACTIVE else None,
        "board_url": (
            f"/console/campaigns/{evaluation.campaign_id}/board/evaluations/{evaluation.id}"
            if evaluation.status == "done"
            else None
        ),
    }


def analysis_row(job: AnalysisJob) -> dict[str, Any]:
    """An analysis job as the evaluations page lists it (its result stays out: the figures draw it)."""
    params = {k: v for k, v in (job.params or {}).items() if k != "evaluation_id"}
    return {
        "id": job.id,
        "key": f"analysis-{job.id}",
        "kind": job.kind,
        "params": params,
        "evaluation_id": (job.params or {}).get("evaluation_id"),
        "status": job.status,
        "progress": job.progress,
        "error": job.error,
        "created_at": job.created_at,
        "finished_at": job.finished_at,
        "cancel_url": f"/console/analyses/{job.id}/cancel" if job.status in ACTIVE else None,
        "figures": figures_of(job),
    }


def job_state(rows: list[dict[str, Any]]) -> str:
    """Every listed job's status in one string: the page reloads when its JSON twin's differs."""
    return " ".join(f"{r['key']}:{r['status']}" for r in rows)


# ---------------------------------------------------------------------------------------------------------- the router


def make_router(page_role: Any, session_dependency: Any, read_upload: ReadUpload) -> APIRouter:
    """The results pages of the organiser console (declared `page_role`: a page checks its session itself,
    redirecting to /login); `read_upload` reads an upload within the configured limits."""
    router = APIRouter(tags=["web"], include_in_schema=False, dependencies=[page_role])
    SessionDep = Depends(session_dependency)
    FormDep = Depends(kit.read_form)

    def signed_in(request: Request, session: Session) -> web_session.WebPrincipal | Response:
        """The organiser's principal, or the answer to give without one (a redirect to /login; JSON: 401)."""
        return kit.signed_in(request, session, Role.organiser)

    def posted(request: Request, session: Session, form: FormData) -> web_session.WebPrincipal | Response:
        """The organiser's principal of a POST with its CSRF value checked, or the answer to give instead."""
        return kit.posted(request, session, form, Role.organiser)

    def failed(request: Request, web: web_session.WebPrincipal, error: ServiceError) -> Response:
        """A service error as a page (or the API's error body)."""
        return kit.failed(request, web, error, home="/console/")

    def notice_of(request: Request, names: tuple[str, ...]) -> dict[str, str] | None:
        """The notices a redirect after a change put in the query."""
        found = {k: request.query_params[k] for k in names if k in request.query_params}
        return found or None

    def add_page(path: str, name: str, endpoint: Callable[..., Response]) -> None:
        """Register a page and its JSON twin (the twin first: `{id}` would take "1.json")."""
        for each in reversed(twin_paths(path)):
            router.add_api_route(each, endpoint, methods=["GET"], name=name + ("_json" if ".json" in each else ""))

    # ------------------------------------------------------------------------------------------ qrels, ground truth

    def qrels_page(
        request: Request,
        session: Session,
        web: web_session.WebPrincipal,
        campaign_id: int,
        *,
        failure: dict[str, Any] | None = None,
        status_code: int = 200,
    ) -> Response:
        """The campaign's qrels versions, the cut form (its incompleteness warning) and the upload form."""
        try:
            campaign = campaign_service.get_organised(session, web.principal, campaign_id)
            versions = qrels_service.list_qrels(session, web.principal, campaign_id)
        except ServiceError as error:
            return failed(request, web, error)
        topics = n_topics(session, campaign_id)
        pool = current_pool(session, campaign)
        moments = campaign.task_kind is TaskKind.moments
        data = {
            "campaign": campaign_head(campaign),
            "versions": [version_row(v, topics) for v in versions],
            "pool": {"id": pool.id, "kind": pool.kind, "created_at": pool.created_at} if pool else None,
            "judges": list(qrels_service.JUDGES),
            "combine": list(COMBINE) if moments else None,
            "model_assessors": [] if moments else model_assessors(session, campaign_id),
            "uploaded_segments": uploaded_segments(session, campaign_id) if moments else None,
            "problem": failure,
            "notice": notice_of(request, ("cut", "imported", "segments")),
        }
        given = (failure or {}).get("given") or {}
        more = kit.extra(web, given=given)
        return render(request, "console/qrels.html", data, extra=more, status_code=status_code)

    def qrels(request: Request, campaign_id: Id, session: Session = SessionDep) -> Response:
        """A campaign's qrels versions (or moment ground truth): list, cut, upload, download."""
        web = signed_in(request, session)
        return web if isinstance(web, Response) else qrels_page(request, session, web, campaign_id)

    add_page("/console/campaigns/{campaign_id}/qrels", "console_qrels", qrels)

    @router.post("/console/campaigns/{campaign_id}/qrels/cut")
    def cut(request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep) -> Response:
        """Cut a new version from the current pool's judgements (moment campaigns: its marks); refused while
        judging is incomplete unless `allow_incomplete` is ticked (the page then says how much is unjudged)."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        names = ("label", "judges", "model_assessor_id", "combine")
        given: dict[str, object] = {k: kit.text_field(form, k) for k in names}
        allow = kit.text_field(form, "allow_incomplete") in ("on", "true", "1", "yes")
        given["allow_incomplete"] = allow
        incomplete = False

        def change() -> str:
            nonlocal incomplete
            campaign = campaign_service.get_organised(session, web.principal, campaign_id)
            label = checked_label(str(given["label"]))
            pool = current_pool(session, campaign)
            if pool is None:
                raise InvalidInput(
                    "there is no pool to cut from: build one on the Pool and judging page",
                    [{"field": "pool", "message": "no pool yet"}],
                )
            try:
                if campaign.task_kind is TaskKind.moments:
                    combine = str(given["combine"]) or "first"
                    if combine not in COMBINE:
                        raise InvalidInput("unknown combine", [{"field": "combine", "message": " or ".join(COMBINE)}])
                    moment_judging.cut_moment_truth(
                        session, web.principal, pool.id, label, combine, allow_incomplete=allow
                    )
                else:
                    qrels_service.cut_qrels(
                        session,
                        web.principal,
                        pool.id,
                        label,
                        allow_incomplete=allow,
                        judges=str(given["judges"]) or qrels_service.HUMAN,
                        model_assessor_id=optional_id(str(given["model_assessor_id"]), "model_assessor_id"),
                    )
            except qrels_service.Incomplete:
                incomplete = True
                raise
            return urlencode({"cut": label})

        def again(failure: dict[str, Any], status: int) -> Response:
            failure["incomplete"] = incomplete
            return qrels_page(request, session, web, campaign_id, failure=failure, status_code=status)

        return kit.changed(
            request, session, web, form_name="cut", change=change, given=given,
            back=f"/console/campaigns/{campaign_id}/qrels", again=again,
        )  # fmt: skip

    @router.post("/console/campaigns/{campaign_id}/qrels/upload")
    def upload(request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep) -> Response:
        """Upload ground truth: a TREC or sample_eval qrels file as a new version (shot campaigns), or the moment
        ground truth, replacing the uploaded one (moment campaigns); every bad line named, nothing stored."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        file, label = form.get("file"), kit.text_field(form, "label")

        def change() -> str:
            campaign = campaign_service.get_organised(session, web.principal, campaign_id)
            moments = campaign.task_kind is TaskKind.moments
            checked = "" if moments else checked_label(label)
            if not isinstance(file, StarletteUpload) or not file.filename:
                raise InvalidInput("choose a file", [{"field": "file", "message": "required"}])
            data = read_upload(request, file)  # type: ignore[arg-type]  # FastAPI's UploadFile is Starlette's
            max_errors = request.app.state.settings.max_errors
            if moments:
                count = evaluation_service.replace_ground_truth(
                    session, web.principal, campaign_id, data, max_errors=max_errors
                )
                return f"segments={count}"
            qrels_service.import_qrels(session, web.principal, campaign_id, data, checked, max_errors=max_errors)
            return urlencode({"imported": checked})

        return kit.back_to(qrels_page, "/qrels")(request, session, web, campaign_id, "upload", change, {"label": label})

    @router.get("/console/qrels/{qrels_id}/download")
    def download(request: Request, qrels_id: Id, format: str = "trec", session: Session = SessionDep) -> Response:
        """A version as a file: TREC or sample_eval qrels, or a moment ground truth's segments."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        try:
            version = qrels_service.get_qrels(session, web.principal, qrels_id)
            if version.kind == "moments":
                chunks = moment_judging.export_moment_truth(session, web.principal, qrels_id)
                filename = f"moment-truth-{qrels_id}.tsv"
            else:
                chunks = qrels_service.export_qrels(session, web.principal, qrels_id, format)
                filename = f"qrels-{qrels_id}.{format}.txt"
            body = b"".join(chunks)
        except ServiceError as error:
            return failed(request, web, error)
        headers = {"Content-Disposition": attachment(filename), "Cache-Control": "no-store"}
        return Response(body, media_type="text/plain; charset=utf-8", headers=headers)

    # --------------------------------------------------------------------------------------- evaluations, analyses

    def evaluations_page(
        request: Request,
        session: Session,
        web: web_session.WebPrincipal,
        campaign_id: int,
        *,
        failure: dict[str, Any] | None = None,
        status_code: int = 200,
    ) -> Response:
        """The start forms (evaluation, analyses), the jobs with their progress, cancel buttons and figures."""
        try:
            campaign = campaign_service.get_organised(session, web.principal, campaign_id)
            versions = qrels_service.list_qrels(session, web.principal, campaign_id)
        except ServiceError as error:
            return failed(request, web, error)
        moments = campaign.task_kind is TaskKind.moments
        labels = {v.id: v.label for v in versions}
        if moments:
            versions = [v for v in versions if v.kind == "moments"]
        evaluations = session.scalars(
            select(Evaluation).where(Evaluation.campaign_id == campaign_id).order_by(Evaluation.id.desc())
        ).all()[:MAX_JOBS]
        jobs = session.scalars(
            select(AnalysisJob).where(AnalysisJob.campaign_id == campaign_id).order_by(AnalysisJob.id.desc())
        ).all()[:MAX_JOBS]
        evaluation_rows = [evaluation_row(e, labels) for e in evaluations]
        analysis_rows = [analysis_row(j) for j in jobs]
        rows = evaluation_rows + analysis_rows
        done = next((e for e in evaluations if e.status == "done"), None)
        segments = uploaded_segments(session, campaign_id) if moments else 0
        data = {
            "campaign": campaign_head(campaign),
            "qrels_versions": [
                {
                    "id": v.id,
                    "label": v.label,
                    "kind": v.kind,
                    "judges": v.judges or qrels_service.HUMAN,
                    "default_measures": evaluation_service.campaign_measures(campaign, v),
                }
                for v in reversed(versions)
            ],
            "uploaded_segments": segments if moments else None,
            "default_measures": (
                {"moments": evaluation_service.campaign_measures(campaign, None)}
                if moments
                else {"trec": default_measures(stratified=False), "sample_eval": default_measures(stratified=True)}
            ),
            "may_evaluate": bool(versions) or segments > 0,
            "analysis_evaluation_id": done.id if done else None,
            "analysis_kinds": analysis_kinds(campaign),
            "evaluations": evaluation_rows,
            "analyses": analysis_rows,
            "active": any(r["status"] in ACTIVE for r in rows),
            "state": job_state(rows),
            "problem": failure,
            "notice": notice_of(request, ("evaluation", "analysis", "cancelled")),
        }
        more = kit.extra(
            web, given=(failure or {}).get("given") or {}, poll_url=f"/console/campaigns/{campaign_id}/evaluations.json"
        )
        return render(request, "console/evaluations.html", data, extra=more, status_code=status_code)

    def evaluations(request: Request, campaign_id: Id, session: Session = SessionDep) -> Response:
        """A campaign's evaluations and analyses: start, watch, cancel, figures."""
        web = signed_in(request, session)
        return web if isinstance(web, Response) else evaluations_page(request, session, web, campaign_id)

    add_page("/console/campaigns/{campaign_id}/evaluations", "console_evaluations", evaluations)

    back_to_evaluations = kit.back_to(evaluations_page, "/evaluations")

    @router.post("/console/campaigns/{campaign_id}/evaluations")
    def start_evaluation(
        request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep
    ) -> Response:
        """Queue an evaluation of every run against the chosen version (measures: those typed, else the defaults)."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        given = {k: kit.text_field(form, k) for k in ("qrels_version_id", "measures")}

        def change() -> str:
            version = optional_id(given["qrels_version_id"], "qrels_version_id")
            measures = given["measures"].split()
            if len(measures) > 200 or any(len(m) > 100 for m in measures):
                raise InvalidInput("too many measures", [{"field": "measures", "message": "at most 200 names"}])
            evaluation = evaluation_service.start_evaluation(
                session, web.principal, campaign_id, qrels_version_id=version, measures=measures or None
            )
            concurrency = request.app.state.settings.job_campaign_concurrency
            job_service.enqueue(session, evaluation, campaign_concurrency=concurrency)
            return f"evaluation={evaluation.id}"

        return back_to_evaluations(request, session, web, campaign_id, "evaluation", change, given)

    @router.post("/console/campaigns/{campaign_id}/analyses")
    def start_analysis(
        request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep
    ) -> Response:
        """Queue an analysis of the newest finished evaluation: the kind's form, empty fields taking the defaults."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        kind = kit.text_field(form, "kind")
        given = kit.given_of(form)

        def change() -> str:
            record = ANALYSES.get(kind)
            if record is None:
                raise InvalidInput("unknown analysis", [{"field": "kind", "message": f"one of {', '.join(ANALYSES)}"}])
            params = params_of(record, form)
            job = analysis_service.start_analysis(session, web.principal, campaign_id, kind, params)
            concurrency = request.app.state.settings.job_campaign_concurrency
            job_service.enqueue(session, job, campaign_concurrency=concurrency)
            return f"analysis={job.id}"

        form_name = f"analysis-{kind}" if kind in ANALYSES else "analysis"
        return back_to_evaluations(request, session, web, campaign_id, form_name, change, given)

    def cancel_route(evaluation: bool) -> Callable[..., Response]:
        noun = "evaluation" if evaluation else "analysis"

        def cancel(request: Request, job_id: Id, form: FormData = FormDep, session: Session = SessionDep) -> Response:
            web = posted(request, session, form)
            if isinstance(web, Response):
                return web
            job: Evaluation | AnalysisJob | None = (
                session.get(Evaluation, job_id) if evaluation else session.get(AnalysisJob, job_id)
            )
            try:
                if job is None:
                    raise NotFound(f"{noun} {job_id} not found")
                campaign_service.get_organised(session, web.principal, job.campaign_id)
            except ServiceError as error:
                return failed(request, web, error)
            assert job is not None
            campaign_id = job.campaign_id

            def change() -> str:
                if evaluation:
                    job_service.cancel(session, web.principal, Evaluation, job_id)
                else:
                    job_service.cancel(session, web.principal, AnalysisJob, job_id)
                return f"cancelled={noun}-{job_id}"

            return back_to_evaluations(request, session, web, campaign_id, f"{noun}-{job_id}", change, {})

        cancel.__doc__ = f"Cancel an {noun}: a queued one at once, a running one at its next progress report."
        return cancel

    router.add_api_route("/console/evaluations/{job_id}/cancel", cancel_route(True), methods=["POST"])
    router.add_api_route("/console/analyses/{job_id}/cancel", cancel_route(False), methods=["POST"])

    @router.get("/console/analyses/{job_id}/figure")
    def figure(request: Request, job_id: Id, run: str | None = None, session: Session = SessionDep) -> Response:
        """A finished analysis's figure as SVG (a per-run figure: the `run`'s), drawn from its stored result."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        try:
            job = analysis_service.finished_analysis(session, web.principal, job_id)
            try:
                data = figure_data(job.kind, job.result or {}, run)
            except ValueError as exc:
                raise InvalidInput("cannot draw this figure", [{"field": "run", "message": str(exc)}]) from None
        except ServiceError as error:
            return failed(request, web, error)
        from app.figures.analyses import draw
        from app.figures.analyses import render as draw_image  # matplotlib: only when a figure is asked for

        image = draw_image(draw(ANALYSES[job.kind].figure, data), "svg")
        return Response(image, media_type="image/svg+xml", headers={"Cache-Control": "private, max-age=3600"})

    # ----------------------------------------------------------------------------------------------------- the board

    def board_page(
        request: Request,
        session: Session,
        web: web_session.WebPrincipal,
        campaign_id: int,
        evaluation_id: int | None,
        measure: str | None,
        filters: leaderboards.Filters,
        *,
        failure: dict[str, Any] | None = None,
        status_code: int = 200,
    ) -> Response:
        """The board as publishing would make it (teams anonymised when the campaign asks), with the Publish form."""
        try:
            campaign = campaign_service.get_organised(session, web.principal, campaign_id)
        except ServiceError as error:
            return failed(request, web, error)
        done = session.scalars(
            select(Evaluation)
            .where(Evaluation.campaign_id == campaign_id, Evaluation.status == "done")
            .order_by(Evaluation.id.desc())
        ).all()
        rows = session.execute(
            select(QrelsVersion.id, QrelsVersion.label).where(QrelsVersion.campaign_id == campaign_id)
        )
        labels = {version_id: label for version_id, label in rows}
        board = significance = None
        next_step = None
        try:
            if not done:
                next_step = (
                    "Nothing is evaluated yet: cut or upload ground truth on the Qrels page, then start an "
                    "evaluation on the Evaluations page; the board is previewed here once one is done."
                )
            else:
                board = leaderboards.live_leaderboard(
                    session, web.principal, campaign_id, measure=measure, evaluation_id=evaluation_id, filters=filters
                )
                if campaign.anonymise_teams:  # as the published board will name them
                    found = session.execute(select(Run.id, Run.team_id).where(Run.campaign_id == campaign_id))
                    run_teams = {run_id: team_id for run_id, team_id in found}
                    board = leaderboards.anonymised(board, run_teams, team_aliases(session, campaign_id))
                significance = leaderboards.live_significance(
                    session, web.principal, campaign_id, filters=filters, evaluation_id=evaluation_id
                )
        except ServiceError as error:
            return failed(request, web, error)
        chosen = board["evaluation_id"] if board else None
        public = campaign.status is CampaignStatus.published
        query = {
            k: v
            for k, v in {"measure": board["measure"] if board else None, **filters.model_dump()}.items()
            if v is not None
        }
        here = f"/console/campaigns/{campaign_id}/board" + (f"/evaluations/{evaluation_id}" if evaluation_id else "")
        data = {
            "campaign": campaign_head(campaign),
            "preview": True,
            "public": public,
            "public_url": f"/campaigns/{campaign_id}/leaderboard" if public else None,
            "may_publish": campaign.status not in (CampaignStatus.draft, CampaignStatus.open) and board is not None,
            "evaluations": [
                {
                    "id": e.id,
                    "qrels_label": labels.get(e.qrels_version_id) if e.qrels_version_id else None,
                    "finished_at": e.finished_at,
                    "url": f"/console/campaigns/{campaign_id}/board/evaluations/{e.id}",
                }
                for e in done
            ],
            "evaluation_id": chosen,
            "next_step": next_step,
            "board": board,
            "significance": significance,
            "problem": failure,
        }
        more = kit.extra(
            web,
            describe=describe,
            campaign_id=campaign_id,
            topics_csv_url=f"{here}/export?{urlencode({**query, 'format': 'topics.csv'})}",
            csv_url=f"{here}/export?{urlencode({**query, 'format': 'csv'})}",
        )
        return render(request, "console/board.html", data, extra=more, status_code=status_code)

    def board(
        request: Request,
        campaign_id: Id,
        filters: RunTypes,
        measure: str | None = None,
        session: Session = SessionDep,
    ) -> Response:
        """The board of the newest finished evaluation, as it would be published."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        return board_page(request, session, web, campaign_id, None, measure, filters)

    def board_of(
        request: Request,
        campaign_id: Id,
        evaluation_id: Id,
        filters: RunTypes,
        measure: str | None = None,
        session: Session = SessionDep,
    ) -> Response:
        """The board of one finished evaluation, as it would be published."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        return board_page(request, session, web, campaign_id, evaluation_id, measure, filters)

    add_page("/console/campaigns/{campaign_id}/board", "console_board", board)
    add_page("/console/campaigns/{campaign_id}/board/evaluations/{evaluation_id}", "console_board_of", board_of)

    def export(
        request: Request, campaign_id: int, evaluation_id: int | None, measure: str | None,
        filters: leaderboards.Filters, format: str, session: Session,
    ) -> Response:  # fmt: skip
        """The previewed board's table or per-topic table as CSV."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        try:
            if format not in ("csv", "topics.csv"):
                raise InvalidInput("unknown format", [{"field": "format", "message": "csv or topics.csv"}])
            document = leaderboards.live_leaderboard(
                session, web.principal, campaign_id, measure=measure, evaluation_id=evaluation_id, filters=filters
            )
        except ServiceError as error:
            return failed(request, web, error)
        text = leaderboard_csv(document) if format == "csv" else per_topic_csv(document)
        name = f"board-{campaign_id}-preview{'-topics' if format == 'topics.csv' else ''}.csv"
        headers = {"Content-Disposition": attachment(name), "Cache-Control": "no-store"}
        return Response(text, media_type="text/csv; charset=utf-8", headers=headers)

    @router.get("/console/campaigns/{campaign_id}/board/export")
    def board_export(
        request: Request, campaign_id: Id, filters: RunTypes, measure: str | None = None, format: str = "csv",
        session: Session = SessionDep,
    ) -> Response:  # fmt: skip
        """The newest finished evaluation's board as CSV (format=csv) or its per-topic table (format=topics.csv)."""
        return export(request, campaign_id, None, measure, filters, format, session)

    @router.get("/console/campaigns/{campaign_id}/board/evaluations/{evaluation_id}/export")
    def board_of_export(
        request: Request, campaign_id: Id, evaluation_id: Id, filters: RunTypes, measure: str | None = None,
        format: str = "csv", session: Session = SessionDep,
    ) -> Response:  # fmt: skip
        """One finished evaluation's board as CSV (format=csv) or its per-topic table (format=topics.csv)."""
        return export(request, campaign_id, evaluation_id, measure, filters, format, session)

    @router.post("/console/campaigns/{campaign_id}/publish")
    def publish(request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep) -> Response:
        """Publish the board (the chosen finished evaluation, else the newest) and go to the public board."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        given = {"evaluation_id": kit.text_field(form, "evaluation_id")}

        def change() -> str:
            chosen = optional_id(given["evaluation_id"], "evaluation_id")
            publication.publish(session, web.principal, campaign_id, evaluation_id=chosen)
            return "published=1"

        def again(failure: dict[str, Any], status: int) -> Response:
            chosen = given["evaluation_id"]
            evaluation = int(chosen) if chosen.isascii() and chosen.isdigit() and len(chosen) < 10 else None
            known = session.get(Evaluation, evaluation) if evaluation is not None else None
            if known is None or known.campaign_id != campaign_id or known.status != "done":
                evaluation = None  # the page previews the newest instead
            return board_page(
                request, session, web, campaign_id, evaluation, None, leaderboards.Filters(),
                failure=failure, status_code=status,
            )  # fmt: skip

        return kit.changed(
            request, session, web, form_name="publish", change=change, given=given,
            back=f"/campaigns/{campaign_id}/leaderboard", again=again,
        )  # fmt: skip

    return router
