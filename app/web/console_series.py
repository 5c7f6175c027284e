"""The organiser console's campaign series pages: /console/series (list, create) and /console/series/{id}.

A series page attaches campaigns, adds progress topics in named sets (one `set number title` line each), shows each
set's state (sealed until released) with a Release form (a ticked confirmation), builds a series pool of a set over
chosen campaigns (depth or strata, per-topic depths, seed, judging order, top-up reuse of earlier verdicts) and links
to each set's cross-year board, rendered from the document `GET /api/series/{id}/sets/{name}/board` answers (means
with intervals, rank intervals, tiers). The data comes from `app.services.series`, as the API's.

As in `console.py`: pages rendered on the server with their JSON twins, the organiser's session (or a bearer header),
the CSRF value on every form, a form's errors shown in the form it came from and nothing stored on error; the audit
trail records the changes as the API's (the session's principal is the actor).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any
from urllib.parse import quote, urlencode

import orjson
from fastapi import APIRouter, Depends, Query, Request, UploadFile
from fastapi.responses import JSONResponse, RedirectResponse, Response
from pydantic import TypeAdapter
from sqlalchemy import select
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from app.evaluation.measures.registry import describe
from app.services import campaigns as campaign_service
from app.services import judging_orders, leaderboards
from app.services import series as series_service
from app.services.errors import InvalidInput, NotFound, ServiceError
from app.services.inputs import INT32_MAX, Id
from app.storage.models import Pool, Role, SeriesTopicSet, TaskKind
from app.web import console_kit as kit
from app.web import session as web_session
from app.web.console_pools import DEFAULT_STRATA, ORDER_NOTES, pool_spec_of
from app.web.twins import render, twin_paths, wants_json

ReadUpload = Callable[[Request, UploadFile], bytes]
RunTypes = Annotated[leaderboards.Filters, Query()]
MAX_TOPIC_LINES = 10_000  # as the API's ProgressTopicsIn
ON = ("on", "true", "1")
SERIES_JSON = TypeAdapter(series_service.SeriesView)  # a series as the API serialises it


def series_fields(form: Mapping[str, Any]) -> tuple[str, str]:
    """A new series' name and description, checked as the API checks them; InvalidInput naming every bad field."""
    problems: list[dict[str, object]] = []
    name = kit.text_field(form, "name").strip()
    if not 1 <= len(name) <= 200 or "\x00" in name:
        problems.append({"field": "name", "message": "required, at most 200 characters"})
    description = kit.text_field(form, "description")
    if len(description) > 100_000 or "\x00" in description:
        problems.append({"field": "description", "message": "at most 100,000 characters"})
    if problems:
        raise InvalidInput("the series was not created: correct the fields named below", problems)
    return name, description


def progress_lines(text: str) -> list[series_service.ProgressTopic]:
    """Progress topics from a textarea, one `set number title` line each (blank lines skipped); InvalidInput naming
    every bad line (the field `topics` when there is none)."""
    if "\x00" in text:
        raise InvalidInput("the topics were not added", [{"field": "topics", "message": "NUL characters"}])
    topics: list[series_service.ProgressTopic] = []
    problems: list[dict[str, object]] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split(None, 2)
        if len(parts) < 3:
            problems.append({"line": line_no, "message": "expected: set number title (e.g. A 1701 a wooden bridge)"})
            continue
        name, number, title = parts[0], parts[1], parts[2].strip()
        if len(name) > 64 or len(number) > 64:
            problems.append({"line": line_no, "message": "a set name and a topic number are at most 64 characters"})
        elif len(title) > 10_000:
            problems.append({"line": line_no, "message": "a title is at most 10,000 characters"})
        else:
            topics.append(series_service.ProgressTopic(number, title, "", name))
    if len(topics) + len(problems) > MAX_TOPIC_LINES:
        problems.append({"field": "topics", "message": f"at most {MAX_TOPIC_LINES} topics at once"})
    if not problems and not topics:
        problems.append({"field": "topics", "message": "one topic per line: set number title"})
    if problems:
        raise InvalidInput("the topics were not added: correct the lines named below", problems)
    return topics


def chosen_ids(form: FormData, field: str) -> list[int]:
    """The ids ticked in a checkbox group (InvalidInput naming the field when one is not an id or none is)."""
    raw = [v for v in form.getlist(field) if isinstance(v, str)]
    ids = [int(v) for v in raw if v.isascii() and v.isdigit() and 0 < int(v) <= INT32_MAX]
    if len(ids) != len(raw):
        raise InvalidInput("unreadable choice", [{"field": field, "message": "campaign ids"}])
    return ids


def one_id(form: Mapping[str, Any], field: str, message: str) -> int:
    """A chosen id (a select's value); InvalidInput naming the field otherwise."""
    raw = kit.text_field(form, field).strip()
    if raw.isascii() and raw.isdigit() and 0 < int(raw) <= INT32_MAX:
        return int(raw)
    raise InvalidInput(message, [{"field": field, "message": "choose one"}])


def view_data(view: series_service.SeriesView) -> dict[str, Any]:
    """A series as the API answers it (`GET /api/series/{id}`), with its page's URL."""
    return {**SERIES_JSON.dump_python(view, mode="json"), "url": f"/console/series/{view.id}"}


def set_url(series_id: int, name: str) -> str:
    """The console path of a progress set (its name quoted)."""
    return f"/console/series/{series_id}/sets/{quote(name, safe='')}"


def make_router(page_role: Any, session_dependency: Any, read_upload: ReadUpload) -> APIRouter:
    """The series pages (declared `page_role`: a page checks its session itself, redirecting to /login);
    `read_upload` is unused here (no page of these takes a file), kept for the console's one signature."""
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

    def add_page(path: str, name: str, endpoint: Callable[..., Response]) -> None:
        """Register a page and its JSON twin (the twin first: `{id}` would take "1.json")."""
        for each in reversed(twin_paths(path)):
            router.add_api_route(each, endpoint, methods=["GET"], name=name + ("_json" if ".json" in each else ""))

    # ------------------------------------------------------------------------------------------------- the list

    def list_page(
        request: Request, session: Session, web: web_session.WebPrincipal, *, failure: kit.Failure | None = None,
        status_code: int = 200,
    ) -> Response:  # fmt: skip
        """Every series with its campaigns and sets, and the create form (with its errors)."""
        try:
            found = series_service.list_series(session, web.principal)
        except ServiceError as error:
            return failed(request, web, error)
        data = {"series": [view_data(v) for v in found], "problem": failure}
        given = (failure or {}).get("given") or {"name": "", "description": ""}
        return render(request, "console/series.html", data, extra=kit.extra(web, given=given), status_code=status_code)

    def series_list(request: Request, session: Session = SessionDep) -> Response:
        """The campaign series, and a form to create one."""
        web = signed_in(request, session)
        return web if isinstance(web, Response) else list_page(request, session, web)

    add_page("/console/series", "console_series", series_list)

    @router.post("/console/series")
    def create(request: Request, form: FormData = FormDep, session: Session = SessionDep) -> Response:
        """Create a series from the form; field errors shown in the list page, nothing stored."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        given = kit.given_of(form)
        try:
            name, description = series_fields(form)
            made = series_service.create_series(session, web.principal, name, description)
            view = series_service.series_view(session, made)
        except ServiceError as error:
            session.rollback()
            if wants_json(request):
                return failed(request, web, error)
            return list_page(
                request, session, web, failure=kit.problem("create", error, given), status_code=kit.status_of(error)
            )
        session.commit()
        if wants_json(request):
            return JSONResponse({"created": view_data(view)}, status_code=201)
        return RedirectResponse(f"/console/series/{view.id}?created=1", status_code=303)

    # ------------------------------------------------------------------------------------------- one series

    def set_rows(session: Session, view: series_service.SeriesView) -> list[dict[str, Any]]:
        """Each progress set: its topics (number, title), state, pools built (host, reused verdicts) and its URLs."""
        titles = {t.number: t.title for t in series_service.progress_topics(session, view.id)}
        query = select(SeriesTopicSet.name, SeriesTopicSet.id).where(SeriesTopicSet.series_id == view.id)
        ids = {name: set_id for name, set_id in session.execute(query)}
        names = {c.id: c.name for c in view.campaigns}
        rows = []
        for topic_set in view.sets:
            built = session.scalars(
                select(Pool).where(Pool.series_set_id == ids.get(topic_set.name)).order_by(Pool.id)
            ).all()
            url = set_url(view.id, topic_set.name)
            rows.append(
                {
                    "name": topic_set.name,
                    "topics": [{"number": n, "title": titles.get(n, "")} for n in topic_set.topics],
                    "released_at": topic_set.released_at,
                    "sealed": topic_set.sealed,
                    "pools": [
                        {
                            "id": p.id,
                            "campaign_id": p.campaign_id,
                            "campaign": names.get(p.campaign_id, str(p.campaign_id)),
                            "kind": p.kind,
                            "seed": p.seed,
                            "campaign_ids": (p.params.get("series") or {}).get("campaign_ids", []),
                            "campaigns": [
                                names.get(i, str(i)) for i in (p.params.get("series") or {}).get("campaign_ids", [])
                            ],
                            "reused": int((p.params.get("reused") or {}).get("items", 0)),
                            "pool_url": f"/console/campaigns/{p.campaign_id}/pool",
                        }
                        for p in built
                    ],
                    "board_url": f"{url}/board",
                    "release_url": f"{url}/release",
                }
            )
        return rows

    def series_page(
        request: Request,
        session: Session,
        web: web_session.WebPrincipal,
        series_id: int,
        *,
        failure: kit.Failure | None = None,
        status_code: int = 200,
    ) -> Response:
        """A series' page: its campaigns (and the attach form), progress sets with their release and board, the
        topics form and the pool form (and a form's errors)."""
        try:
            view = series_service.get_series(session, web.principal, series_id)
        except ServiceError as error:
            return failed(request, web, error)
        members = {c.id for c in view.campaigns}
        candidates = [
            {"id": c.id, "name": c.name, "status": c.status.value}
            for c in campaign_service.list_campaigns(session, web.principal)
            if c.id not in members and c.series_id is None and c.task_kind is TaskKind.shots
        ]
        shown = ("created", "attached", "topics", "released", "built", "host", "reused")
        data = {
            "series": view_data(view),
            "sets": set_rows(session, view),
            "candidates": candidates,
            "orders": [{"name": o, "description": ORDER_NOTES.get(o, "")} for o in judging_orders.ORDERS],
            "default_strata": DEFAULT_STRATA,
            "problem": failure,
            "notice": {k: request.query_params[k] for k in shown if k in request.query_params} or None,
        }
        defaults: dict[str, Any] = {"kind": "depth", "depth": "", "depths": "", "strata": DEFAULT_STRATA,
                                    "order": "shuffled", "seed": "", "reuse": "on", "campaign_ids": []}  # fmt: skip
        given = (failure or {}).get("given") or {}
        pool_given = {**defaults, **given} if failure and failure["form"] == "pool" else defaults
        more = kit.extra(
            web,
            g=pool_given,
            topics_text=given.get("topics", "") if failure and failure["form"] == "topics" else "",
        )
        return render(request, "console/series_page.html", data, extra=more, status_code=status_code)

    def series(request: Request, series_id: Id, session: Session = SessionDep) -> Response:
        """One series: campaigns, progress sets (sealed or released), pools and boards."""
        web = signed_in(request, session)
        return web if isinstance(web, Response) else series_page(request, session, web, series_id)

    add_page("/console/series/{series_id}", "console_series_page", series)

    def changed(
        request: Request, session: Session, web: web_session.WebPrincipal, series_id: int, form_name: str,
        change: Callable[[], str], given: Mapping[str, Any],
    ) -> Response:  # fmt: skip
        """Run one change of a series' page (`kit.changed`): back to the page with a notice, or the page with the
        error in the form it came from."""
        return kit.changed(
            request, session, web, form_name=form_name, change=change, given=given,
            back=f"/console/series/{series_id}",
            again=lambda failure, status: series_page(
                request, session, web, series_id, failure=failure, status_code=status
            ),
        )  # fmt: skip

    @router.post("/console/series/{series_id}/campaigns")
    def attach(request: Request, series_id: Id, form: FormData = FormDep, session: Session = SessionDep) -> Response:
        """Put a campaign in the series: it takes the series' progress topics."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web

        def change() -> str:
            campaign_id = one_id(form, "campaign_id", "no campaign chosen")
            series_service.add_campaign(session, web.principal, series_id, campaign_id)
            return urlencode({"attached": campaign_id})

        return changed(request, session, web, series_id, "campaign", change, kit.given_of(form))

    @router.post("/console/series/{series_id}/topics")
    def add_topics(
        request: Request, series_id: Id, form: FormData = FormDep, session: Session = SessionDep
    ) -> Response:
        """Add progress topics (`set number title` lines): copied into each campaign of the series, sealed until
        their set is released."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        text = kit.text_field(form, "topics")

        def change() -> str:
            topics = progress_lines(text)
            series_service.add_progress_topics(session, web.principal, series_id, topics)
            return urlencode({"topics": len(topics)})

        return changed(request, session, web, series_id, "topics", change, {"topics": text})

    @router.post("/console/series/{series_id}/sets/{name}/release")
    def release(
        request: Request, series_id: Id, name: str, form: FormData = FormDep, session: Session = SessionDep
    ) -> Response:
        """Release a progress set (the confirmation ticked): its judgements, scores and board reach teams and the
        public from now on."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web

        def change() -> str:
            if kit.text_field(form, "confirm") not in ON:
                message = "tick the confirmation: teams and the public see the set's judgements and scores from then on"
                raise InvalidInput(f"progress set {name} was not released", [{"field": "confirm", "message": message}])
            series_service.release_set(session, web.principal, series_id, name)
            return urlencode({"released": name})

        return changed(request, session, web, series_id, "release", change, {"set": name})

    @router.post("/console/series/{series_id}/pools")
    def build(request: Request, series_id: Id, form: FormData = FormDep, session: Session = SessionDep) -> Response:
        """Build a pool of a progress set over the ticked campaigns' runs (on the newest of them, the host): depth,
        per-topic depths or strata, seed, judging order; with reuse ticked, a top-up pool keeping earlier verdicts."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        given: dict[str, Any] = kit.given_of(form)
        given["campaign_ids"] = [v for v in form.getlist("campaign_ids") if isinstance(v, str)]
        given["reuse"] = "on" if kit.text_field(form, "reuse") in ON else ""

        def change() -> str:
            name = kit.text_field(form, "set")
            if not name:
                raise InvalidInput("the pool was not built", [{"field": "set", "message": "choose a progress set"}])
            spec = pool_spec_of(form)
            campaign_ids = chosen_ids(form, "campaign_ids")
            pool = series_service.create_series_pool(
                session,
                web.principal,
                series_id,
                name,
                campaign_ids,
                spec,
                reuse=given["reuse"] == "on",
                memory_mb=request.app.state.settings.job_memory_mb,
            )
            reused = int((pool.params.get("reused") or {}).get("items", 0))
            return urlencode({"built": pool.id, "host": pool.campaign_id, "reused": reused})

        return changed(request, session, web, series_id, "pool", change, given)

    # ---------------------------------------------------------------------------------------------- a set's board

    def board(
        request: Request,
        series_id: Id,
        name: str,
        filters: RunTypes,
        measure: str | None = None,
        evaluation_id: Id | None = None,
        session: Session = SessionDep,
    ) -> Response:
        """A progress set's board over every year's runs: each run with its campaign and team, mean and interval,
        rank interval and tier (the API's document); while nothing of the set is evaluated, what to do first."""
        web = signed_in(request, session)
        if isinstance(web, Response):
            return web
        try:
            view = series_service.get_series(session, web.principal, series_id)
            if name not in {s.name for s in view.sets}:
                raise NotFound(f"series {series_id} has no progress set {name!r}")
            topic_set = next(s for s in view.sets if s.name == name)
            try:
                document: dict[str, Any] | None = series_service.series_board(
                    session, web.principal, series_id, name, measure=measure, evaluation_id=evaluation_id,
                    filters=filters,
                )  # fmt: skip
            except NotFound:
                if evaluation_id is not None:
                    raise
                document = None
        except ServiceError as error:
            return failed(request, web, error)
        data = {
            "series": {"id": view.id, "name": view.name},
            "set": {"name": name, "sealed": topic_set.sealed, "released_at": topic_set.released_at},
            "board": orjson.loads(orjson.dumps(document)) if document is not None else None,  # the API's JSON
            "next_step": None
            if document is not None
            else (
                f"Nothing of progress set {name} is evaluated yet: build a series pool on the series page, judge it "
                "on its host campaign, cut its qrels and evaluate them there; the board shows here once one is done."
            ),
            "api_url": f"/api/series/{series_id}/sets/{quote(name, safe='')}/board",
        }
        more = kit.extra(web, describe=describe, series_url=f"/console/series/{series_id}")
        return render(request, "console/series_board.html", data, extra=more)

    add_page("/console/series/{series_id}/sets/{name}/board", "console_series_board", board)

    return router
