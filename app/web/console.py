"""The organiser console under /console/: campaigns (list, create, edit, open/close), their topics and collection.

Pages are rendered on the server from the organiser's session cookie (or a bearer header) and each has its JSON twin
(`app/web/twins.py`); without a session a page redirects to `/login?next=<this page>` (JSON: 401) and every form
carries the session's CSRF value (`app/web/session.py`), as in the team console. The data comes from the services
(`campaigns`, `topics`, `collection`); a form's errors (the services' InvalidInput names fields, a file's lines) are
shown in the page it came from, and nothing is stored on error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request, UploadFile
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, RedirectResponse, Response
from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session
from starlette.datastructures import FormData
from starlette.datastructures import UploadFile as StarletteUpload

from app.evaluation.formats.topics_file import TopicDef
from app.services import campaigns as campaign_service
from app.services import collection as collection_service
from app.services import teams as team_service
from app.services import tokens as token_service
from app.services import topics as topic_service
from app.services.errors import InvalidInput, NotFound, ServiceError
from app.services.inputs import Id
from app.storage.models import (
    ApiToken,
    Assessor,
    AssessorKind,
    Campaign,
    CampaignStatus,
    CollectionItem,
    Role,
    Run,
    TaskKind,
    Team,
    TeamResults,
    Topic,
)
from app.web import console_kit as kit
from app.web import session as web_session
from app.web.twins import render, twin_paths, wants_json

ReadUpload = Callable[[Request, UploadFile], bytes]
# (field, lowest, highest) of the whole-number settings, as the API bounds them
NUMBERS = (
    ("max_results", 1, 100_000),
    ("max_runs_per_team", 1, 1000),
    ("max_grade", 1, 10),
    ("interleave_every", 0, 1000),
)
FLAGS = ("anonymise_teams", "audio_on")
DATES = ("submission_opens_at", "submission_closes_at")  # datetime-local fields, in UTC
COUNTED = (("topics", Topic), ("teams", Team), ("assessors", Assessor), ("runs", Run), ("shots", CollectionItem))


def settings_of(form: Mapping[str, Any], *, new: bool) -> dict[str, object]:
    """The campaign settings a console form gives, checked as the API checks them; InvalidInput naming every bad
    field. `new`: the create form (name and task kind too)."""
    problems: list[dict[str, object]] = []
    values: dict[str, object] = {}
    if new:
        name = kit.text_field(form, "name").strip()
        if not 1 <= len(name) <= 200:
            problems.append({"field": "name", "message": "required, at most 200 characters"})
        values["name"] = name
        kind = kit.text_field(form, "task_kind")
        if kind not in TaskKind.__members__:
            problems.append({"field": "task_kind", "message": "shots or moments"})
        else:
            values["task_kind"] = TaskKind(kind)
    description = kit.text_field(form, "description")
    if len(description) > 100_000 or "\x00" in description:
        problems.append({"field": "description", "message": "at most 100,000 characters"})
    values["description"] = description
    for field, low, high in NUMBERS:
        raw = kit.text_field(form, field).strip()
        if raw.isascii() and raw.isdigit() and low <= int(raw) <= high:
            values[field] = int(raw)
        else:
            problems.append({"field": field, "message": f"a whole number from {low} to {high}"})
    results = kit.text_field(form, "team_results")
    if results not in TeamResults.__members__:
        problems.append({"field": "team_results", "message": "own or hidden"})
    else:
        values["team_results"] = TeamResults(results)
    template = kit.text_field(form, "media_url_template").strip()
    values["media_url_template"] = template or None
    if template:
        try:
            campaign_service.check_url_template(template)
        except InvalidInput as error:
            problems.extend(error.errors)
    for flag in FLAGS:
        values[flag] = kit.text_field(form, flag) in ("on", "true", "1", "yes")
    for field in DATES:
        try:
            values[field] = utc_moment(kit.text_field(form, field))
        except ValueError:
            problems.append({"field": field, "message": "a date and time (UTC), e.g. 2026-09-01T12:00, or empty"})
    opens, closes = values.get("submission_opens_at"), values.get("submission_closes_at")
    if isinstance(opens, datetime) and isinstance(closes, datetime) and closes <= opens:
        problems.append({"field": "submission_closes_at", "message": "must be after the opening"})
    if problems:
        raise InvalidInput("the campaign was not saved: correct the fields named below", problems)
    return values


def utc_moment(raw: str) -> datetime | None:
    """A form's date and time (a datetime-local value, read as UTC; seconds optional) or None when empty;
    ValueError otherwise."""
    raw = raw.strip()
    if not raw:
        return None
    moment = datetime.fromisoformat(raw)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def topics_of_json(text: str) -> tuple[list[TopicDef], list[topic_service.TopicGuidance]]:
    """The topics of the JSON form the API takes (a list of {number, title, description, guidelines, examples});
    InvalidInput naming the line of a syntax error, or each bad topic by its place in the list."""
    try:
        given = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput("topics JSON does not parse", [{"line": exc.lineno, "message": exc.msg}]) from None
    if not isinstance(given, list) or not given:
        raise InvalidInput("topics JSON must be a non-empty list", [{"field": "topics", "message": "a JSON list"}])
    problems: list[dict[str, object]] = []
    defs, guidance = [], []
    for i, item in enumerate(given, 1):
        where = f"topics[{i}]"
        if not isinstance(item, dict):
            problems.append({"field": where, "message": "an object with number and title"})
            continue
        number, title = item.get("number"), item.get("title")
        description, guidelines = item.get("description", ""), item.get("guidelines", "")
        if isinstance(number, int) and not isinstance(number, bool):
            number = str(number)
        if not isinstance(number, str) or not 1 <= len(number) <= 64 or any(c.isspace() for c in number):
            problems.append({"field": f"{where}.number", "message": "required, no spaces, at most 64 characters"})
        if not isinstance(title, str) or not 1 <= len(title) <= 10_000:
            problems.append({"field": f"{where}.title", "message": "required text"})
        if not isinstance(description, str) or not isinstance(guidelines, str):
            problems.append({"field": where, "message": "description and guidelines are text"})
        examples = item.get("examples", [])
        pairs: list[tuple[str, str]] = []
        if not isinstance(examples, list) or not all(
            isinstance(e, dict) and isinstance(e.get("url"), str) for e in examples
        ):
            problems.append({"field": f"{where}.examples", "message": "a list of {url, caption}"})
        else:
            pairs = [(e["url"], str(e.get("caption", ""))) for e in examples]
        if not problems:
            defs.append(TopicDef(str(number), str(title), str(description)))
            guidance.append(topic_service.TopicGuidance(str(guidelines), tuple(pairs)))
    if problems:
        raise InvalidInput(f"{len(problems)} problem(s) in the topics JSON: nothing stored", problems[:100])
    return defs, guidance


def counts(session: Session, ids: list[int]) -> dict[int, dict[str, int]]:
    """Per campaign: how many topics, teams, assessors, runs and collection shots it holds."""
    out: dict[int, dict[str, int]] = {i: dict.fromkeys((k for k, _ in COUNTED), 0) for i in ids}
    for key, model in COUNTED:
        column = model.campaign_id
        rows = session.execute(select(column, func.count()).where(column.in_(ids)).group_by(column))
        for campaign_id, n in rows:
            out[campaign_id][key] = n
    return out


def campaign_row(campaign: Campaign, n: Mapping[str, int]) -> dict[str, Any]:
    """A campaign as the console lists it: its settings, status and counts."""
    return {
        "id": campaign.id,
        "name": campaign.name,
        "task_kind": campaign.task_kind.value,
        "status": campaign.status.value,
        "description": campaign.description,
        "max_results": campaign.max_results,
        "max_runs_per_team": campaign.max_runs_per_team,
        "team_results": campaign.team_results.value,
        "max_grade": campaign.max_grade,
        "anonymise_teams": campaign.anonymise_teams,
        "audio_on": campaign.audio_on,
        "interleave_every": campaign.interleave_every,
        "media_url_template": campaign.media_url_template,
        "submission_opens_at": campaign.submission_opens_at,
        "submission_closes_at": campaign.submission_closes_at,
        "created_at": campaign.created_at,
        "counts": dict(n),
        "url": f"/console/campaigns/{campaign.id}",
    }


def live_tokens(session: Session, campaign_id: int) -> dict[tuple[str, int], int]:
    """How many live (unrevoked, unexpired) tokens each team and assessor of the campaign holds, browser sessions
    included: keyed ("team", id) and ("assessor", id)."""
    moment = token_service.now()
    rows = session.execute(
        select(ApiToken.team_id, ApiToken.assessor_id, func.count())
        .outerjoin(Team, Team.id == ApiToken.team_id)
        .outerjoin(Assessor, Assessor.id == ApiToken.assessor_id)
        .where(or_(Team.campaign_id == campaign_id, Assessor.campaign_id == campaign_id))
        .where(ApiToken.revoked_at.is_(None), or_(ApiToken.expires_at.is_(None), ApiToken.expires_at > moment))
        .group_by(ApiToken.team_id, ApiToken.assessor_id)
    )
    return {("team", t) if t is not None else ("assessor", a or 0): n for t, a, n in rows}


def provenance_of(form: Mapping[str, Any]) -> dict[str, Any]:
    """A model assessor's provenance from the form (empty fields left out; parameters as a JSON object)."""
    given: dict[str, Any] = {k: kit.text_field(form, k).strip() for k in ("model", "version", "config_hash")}
    given = {k: v for k, v in given.items() if v or k == "model"}
    raw = kit.text_field(form, "parameters").strip()
    if raw:
        try:
            given["parameters"] = json.loads(raw)
        except json.JSONDecodeError as exc:
            message = f"line {exc.lineno}: {exc.msg}"
            raise InvalidInput(
                "parameters are not JSON", [{"field": "provenance.parameters", "message": message}]
            ) from None
    return given


DEFAULTS = {"max_results": 1000, "max_runs_per_team": 10, "max_grade": 1, "interleave_every": 10, "audio_on": True}


def make_router(page_role: Any, session_dependency: Any, read_upload: ReadUpload) -> APIRouter:
    """The organiser console's pages (declared `page_role`: a page checks its session itself, redirecting to /login);
    `read_upload` reads an upload within the configured limits (the API's reader, handed in by the application)."""
    router = APIRouter(tags=["web"], include_in_schema=False, dependencies=[page_role])
    SessionDep = Depends(session_dependency)
    FormDep = Depends(kit.read_form)

    def signed_in(request: Request, session: Session) -> web_session.WebPrincipal | Response:
        """The organiser's principal, or the answer to give without one (a redirect to /login; JSON: 401)."""
        return kit.signed_in(request, session, Role.organiser)

    def extra(web: web_session.WebPrincipal, **more: Any) -> dict[str, Any]:
        """What every console template gets beyond its data."""
        return kit.extra(web, **more)

    def failed(request: Request, web: web_session.WebPrincipal, error: ServiceError) -> Response:
        """A service error as a page (or the API's error body)."""
        return kit.failed(request, web, error, home="/console/")

    def posted(request: Request, session: Session, form: FormData) -> web_session.WebPrincipal | Response:
        """The organiser's principal of a console POST with its CSRF value checked, or the answer to give instead."""
        return kit.posted(request, session, form, Role.organiser)

    def home_page(
        request: Request, session: Session, web: web_session.WebPrincipal, *, failure: dict[str, Any] | None = None
    ) -> Response:
        """The campaigns list with the create form (and the create form's errors)."""
        campaigns = [
            c for c in campaign_service.list_campaigns(session, web.principal) if web.principal.may_organise(c.id)
        ]
        n = counts(session, [c.id for c in campaigns])
        data = {
            "campaigns": [campaign_row(c, n[c.id]) for c in campaigns],
            "may_create": web.principal.campaign_id is None,
            "problem": failure,
        }
        status = 200 if failure is None else 422
        more = extra(web, given=(failure or {}).get("given") or DEFAULTS, defaults=DEFAULTS)
        return render(request, "console/home.html", data, extra=more, status_code=status)

    def home(request: Request, session: Session = SessionDep) -> Response:
        """The campaigns this organiser organises, and a form to create one."""
        web = signed_in(request, session)
        return web if isinstance(web, Response) else home_page(request, session, web)

    for path in twin_paths("/console/"):
        router.add_api_route(path, home, methods=["GET"], name="console_home" + ("_json" if ".json" in path else ""))

    @router.get("/console")
    def console_root() -> Response:
        """The console lives at /console/."""
        return RedirectResponse("/console/", status_code=308)

    @router.post("/console/campaigns")
    def create(request: Request, form: FormData = FormDep, session: Session = SessionDep) -> Response:
        """Create a campaign (draft) from the form; field errors shown in the list page, nothing stored."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        given = {k: v for k, v in form.items() if isinstance(v, str) and k != web_session.CSRF_FIELD}
        try:
            values = settings_of(form, new=True)
            later = {k: values.pop(k) for k in ("anonymise_teams", "audio_on", "interleave_every")}
            campaign = campaign_service.create_campaign(
                session,
                web.principal,
                campaign_service.CampaignSpec(**values),  # type: ignore[arg-type]  # checked
            )
            campaign_service.update_campaign(session, web.principal, campaign.id, later)
        except ServiceError as error:
            session.rollback()
            if wants_json(request):
                return failed(request, web, error)
            return home_page(request, session, web, failure=kit.problem("create", error, given))
        session.commit()
        if wants_json(request):
            return JSONResponse(jsonable_encoder({"created": campaign_row(campaign, {})}), status_code=201)
        return RedirectResponse(f"/console/campaigns/{campaign.id}?created=1", status_code=303)

    def campaign_page(
        request: Request,
        session: Session,
        web: web_session.WebPrincipal,
        campaign_id: int,
        *,
        failure: dict[str, Any] | None = None,
        secret: dict[str, Any] | None = None,
        status_code: int = 200,
    ) -> Response:
        """A campaign's page: its settings form, open/close, topics, collection, teams and assessors (and a form's
        errors, or a new token shown this once: never in the JSON twin of the page)."""
        try:
            campaign = campaign_service.get_organised(session, web.principal, campaign_id)
            topics = topic_service.list_topics(session, web.principal, campaign_id)
            shots = collection_service.summarise(session, campaign)
            teams = team_service.list_teams(session, web.principal, campaign_id)
            assessors = team_service.list_assessors(session, web.principal, campaign_id)
        except ServiceError as error:
            return failed(request, web, error)
        shown = ("created", "saved", "status", "topics", "shots", "revoked")
        live = live_tokens(session, campaign_id)
        notice = {k: request.query_params[k] for k in shown if k in request.query_params}
        data = {
            "campaign": campaign_row(campaign, counts(session, [campaign.id])[campaign.id]),
            "topics": [
                {
                    "id": t.id,
                    "number": t.number,
                    "title": t.title,
                    "description": t.description,
                    "guidelines": t.guidelines,
                    "examples": t.examples or [],
                }
                for t in topics
            ],
            "collection": {"n_shots": shots.n_shots, "n_videos": shots.n_videos},
            "teams": [{"id": t.id, "name": t.name, "live_tokens": live.get(("team", t.id), 0)} for t in teams],
            "assessors": [
                {
                    "id": a.id,
                    "name": a.name,
                    "kind": a.kind,
                    "provenance": a.provenance,
                    "live_tokens": live.get(("assessor", a.id), 0),
                }
                for a in assessors
            ],
            "may_open": campaign.status in campaign_service.TRANSITIONS[CampaignStatus.open],
            "may_close": campaign.status in campaign_service.TRANSITIONS[CampaignStatus.closed],
            "may_add_topics": campaign.status in (CampaignStatus.draft, CampaignStatus.open),
            "problem": failure,
            "notice": notice or None,
        }
        given = (failure or {}).get("given") if failure and failure["form"] == "settings" else None
        more = extra(web, given=given or data["campaign"], secret=secret)
        return render(request, "console/campaign.html", data, extra=more, status_code=status_code)

    def campaign(request: Request, campaign_id: Id, session: Session = SessionDep) -> Response:
        """One campaign: settings, status, topics and collection."""
        web = signed_in(request, session)
        return web if isinstance(web, Response) else campaign_page(request, session, web, campaign_id)

    for path in reversed(twin_paths("/console/campaigns/{campaign_id}")):  # `{campaign_id}` would take "1.json"
        name = "console_campaign" + ("_json" if ".json" in path else "")
        router.add_api_route(path, campaign, methods=["GET"], name=name)

    def changed(
        request: Request, session: Session, web: web_session.WebPrincipal, campaign_id: int, form_name: str,
        change: Callable[[], str | dict[str, Any]], given: Mapping[str, Any] | None = None,
    ) -> Response:  # fmt: skip
        """Run one change of a campaign's page (`kit.changed`): back to the page with a notice, the page showing a
        secret made this once, or the page with the error in the form it came from."""
        return kit.changed(
            request, session, web, form_name=form_name, change=change, given=given,
            back=f"/console/campaigns/{campaign_id}",
            again=lambda failure, status: campaign_page(
                request, session, web, campaign_id, failure=failure, status_code=status
            ),
            shown=lambda secret: campaign_page(request, session, web, campaign_id, secret=secret),
        )  # fmt: skip

    @router.post("/console/campaigns/{campaign_id}")
    def edit(request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep) -> Response:
        """Change a campaign's settings (max_results only until submissions close)."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        given: dict[str, object] = {k: v for k, v in form.items() if isinstance(v, str) and k != web_session.CSRF_FIELD}
        for flag in FLAGS:
            given[flag] = flag in form

        def change() -> str:
            campaign = campaign_service.get_organised(session, web.principal, campaign_id)
            values = settings_of(form, new=False)
            if values["max_results"] == campaign.max_results:
                values.pop("max_results")  # unchanged: allowed after submissions closed too
            campaign_service.update_campaign(session, web.principal, campaign_id, values)
            return "saved=1"

        return changed(request, session, web, campaign_id, "settings", change, given)

    def status_route(target: CampaignStatus) -> Callable[..., Response]:
        def set_status(
            request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep
        ) -> Response:
            web = posted(request, session, form)
            if isinstance(web, Response):
                return web

            def change() -> str:
                campaign_service.set_status(session, web.principal, campaign_id, target)
                return f"status={target.value}"

            return changed(request, session, web, campaign_id, "status", change)

        set_status.__doc__ = f"Move the campaign to {target.value} (submissions {target.value})."
        return set_status

    router.add_api_route("/console/campaigns/{campaign_id}/open", status_route(CampaignStatus.open), methods=["POST"])
    router.add_api_route(
        "/console/campaigns/{campaign_id}/close", status_route(CampaignStatus.closed), methods=["POST"]
    )

    @router.post("/console/campaigns/{campaign_id}/topics")
    def add_topics(
        request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep
    ) -> Response:
        """Add topics from a file (TRECVID lines or topics XML) or the API's JSON (guidelines and examples too)."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        upload, text = form.get("file"), kit.text_field(form, "topics_json")

        def change() -> str:
            if isinstance(upload, StarletteUpload) and upload.filename:
                data = read_upload(request, upload)  # type: ignore[arg-type]  # FastAPI's UploadFile is Starlette's
                max_errors = request.app.state.settings.max_errors
                rows = topic_service.add_topics_file(session, web.principal, campaign_id, data, max_errors=max_errors)
            elif text.strip():
                defs, guidance = topics_of_json(text)
                rows = topic_service.add_topics(session, web.principal, campaign_id, defs, guidance)
            else:
                raise InvalidInput(
                    "choose a topics file or paste topics JSON", [{"field": "file", "message": "required"}]
                )
            return f"topics={len(rows)}"

        return changed(request, session, web, campaign_id, "topics", change, {"topics_json": text})

    @router.post("/console/campaigns/{campaign_id}/collection")
    def collection(
        request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep
    ) -> Response:
        """Replace the collection (master shot reference: `shot_id video_id start end` lines) from a file."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        upload, template = form.get("file"), kit.text_field(form, "media_url_template").strip()

        def change() -> str:
            if not isinstance(upload, StarletteUpload) or not upload.filename:
                raise InvalidInput("choose a collection file", [{"field": "file", "message": "required"}])
            data = read_upload(request, upload)  # type: ignore[arg-type]  # FastAPI's UploadFile is Starlette's
            summary = collection_service.replace_collection(
                session, web.principal, campaign_id, data, media_url_template=template or None,
                max_errors=request.app.state.settings.max_errors,
            )  # fmt: skip
            return f"shots={summary.n_shots}"

        return changed(request, session, web, campaign_id, "collection", change, {"media_url_template": template})

    def judge_url(request: Request, session: Session, assessor_id: int) -> tuple[str, Any]:
        """A new one-time judging link of a person, as the URL of the page (judging or marking) and its expiry."""
        lifetime = request.app.state.settings.judge_link_seconds
        link, expires_at = token_service.issue_judge_link(session, None, assessor_id, lifetime)
        kind = team_service.assessor_task_kind(session, assessor_id)
        page = "mark_page" if kind is TaskKind.moments else "judge_page"
        return f"{request.url_for(page)}#{urlencode({'link': link})}", expires_at

    @router.post("/console/campaigns/{campaign_id}/teams")
    def create_team(
        request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep
    ) -> Response:
        """Register a team; its token is shown this once."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        name = kit.text_field(form, "name").strip()

        def change() -> dict[str, Any]:
            if not 1 <= len(name) <= 200:
                raise InvalidInput("the team was not added", [{"field": "name", "message": "1 to 200 characters"}])
            team, token = team_service.create_team(session, web.principal, campaign_id, name)
            return {"made": "team", "id": team.id, "name": team.name, "token": token}

        return changed(request, session, web, campaign_id, "team", change, {"name": name})

    @router.post("/console/campaigns/{campaign_id}/assessors")
    def create_assessor(
        request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep
    ) -> Response:
        """Register an assessor: a person (token and one-time judging link shown this once) or a model (its
        provenance: model, version, configuration hash, parameters)."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        given = {k: kit.text_field(form, k) for k in ("name", "kind", "model", "version", "config_hash", "parameters")}

        def change() -> dict[str, Any]:
            name, kind = given["name"].strip(), given["kind"] or "human"
            if not 1 <= len(name) <= 200:
                raise InvalidInput("the assessor was not added", [{"field": "name", "message": "1 to 200 characters"}])
            if kind not in AssessorKind.__members__:
                raise InvalidInput("the assessor was not added", [{"field": "kind", "message": "human or model"}])
            model = AssessorKind(kind) is AssessorKind.model
            provenance = provenance_of(form) if model else None
            assessor, token = team_service.create_assessor(
                session, web.principal, campaign_id, name, kind=AssessorKind(kind), provenance=provenance
            )
            made = {"made": "assessor", "id": assessor.id, "name": assessor.name, "kind": kind, "token": token}
            if not model:
                made["judge_url"], made["judge_url_expires_at"] = judge_url(request, session, assessor.id)
            return made

        return changed(request, session, web, campaign_id, "assessor", change, given)

    def member_route(role: Role, action: str) -> Callable[..., Response]:
        def act(request: Request, member_id: Id, form: FormData = FormDep, session: Session = SessionDep) -> Response:
            web = posted(request, session, form)
            if isinstance(web, Response):
                return web
            member: Team | Assessor | None = (
                session.get(Team, member_id) if role is Role.team else session.get(Assessor, member_id)
            )
            try:
                if member is None:
                    raise NotFound(f"{role.value} {member_id} not found")
                campaign_service.get_organised(session, web.principal, member.campaign_id)
            except ServiceError as error:
                return failed(request, web, error)
            assert member is not None
            owner = {"team_id": member.id} if role is Role.team else {"assessor_id": member.id}

            def change() -> str | dict[str, Any]:
                made: dict[str, Any] = {"made": role.value, "id": member.id, "name": member.name, "action": action}
                if action == "revoke":
                    n = token_service.revoke_member_tokens(session, **owner)
                    return f"revoked={n}"
                if action == "rotate":
                    _, made["token"] = token_service.issue_member_token(
                        session, web.principal, role, member.id, revoke_previous=True
                    )
                made["judge_url"], made["judge_url_expires_at"] = (
                    judge_url(request, session, member.id) if isinstance(member, Assessor) and member.kind == "human"
                    else (None, None)
                )  # fmt: skip
                return made

            return changed(request, session, web, member.campaign_id, f"{role.value}-{member.id}", change)

        act.__doc__ = {
            "rotate": f"A new token for the {role.value}, its previous tokens revoked (shown this once).",
            "revoke": f"Revoke every token of the {role.value} (and an assessor's unused judging links).",
            "link": "A new one-time judging link for a person.",
        }[action]
        return act

    for role, plural in ((Role.team, "teams"), (Role.assessor, "assessors")):
        for action in ("rotate", "revoke", "link") if role is Role.assessor else ("rotate", "revoke"):
            path = f"/console/{plural}/{{member_id}}/{action}"
            router.add_api_route(
                path, member_route(role, action), methods=["POST"], name=f"console_{role.value}_{action}"
            )

    return router
