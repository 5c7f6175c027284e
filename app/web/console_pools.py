"""The organiser console's pool, judging and adjudication pages: /console/campaigns/{id}/pool and .../adjudication.

The pool page builds a campaign's pool from a form (depth, optionally per topic, or strata, judging order, runs,
seed, a model-assisted pool's verification; a moment campaign's depth and merge threshold), previews its size per
topic without storing anything (`pools.preview_pool`: the same checks and the same pool as the build), and once the
pool exists shows its parameters, per-topic counts, judging progress per topic and assessor, a model-assisted pool's
verification and the pool statistics, with the forms that assign topics to assessors and queue quality control's
second judgements. The adjudication page lists the disputed items (`quality.adjudication_queue`) with the shot
playing, every verdict and who gave it, and decides each with a button; Cohen's kappa between first and second
judgements beside it.

As in `console.py`: pages rendered on the server with their JSON twins, the organiser's session (or a bearer header),
the CSRF value on every form, a form's errors shown in the page it came from and nothing stored on error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urldefrag, urlencode

from fastapi import APIRouter, Depends, Request, UploadFile
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, Response
from sqlalchemy.orm import Session
from starlette.datastructures import FormData

from app.evaluation.pools.builders import TRECVID_STRATA
from app.services import campaigns as campaign_service
from app.services import judging, judging_orders, moment_judging, pools, quality, topic_depths, verification
from app.services import teams as team_service
from app.services import topics as topic_service
from app.services.errors import Conflict, InvalidInput, ServiceError
from app.services.inputs import INT32_MAX, Id
from app.storage.models import Campaign, Pool, PoolItem, Role, TaskKind, Verdict
from app.web import console_kit as kit
from app.web import session as web_session
from app.web.twins import HEADERS, render, twin_paths, wants_json

ReadUpload = Callable[[Request, UploadFile], bytes]

DEFAULT_STRATA = ", ".join(f"{s.first}-{s.last}:{s.rate}" for s in TRECVID_STRATA)
# One line per judging order (app/evaluation/pools/orders.py has the full account); all but the shuffle are biased
# until judged to the end, which every score from their qrels says.
ORDER_NOTES = {
    "shuffled": "Seeded random order: every prefix is a random sample, estimates are unbiased (the default).",
    "move_to_front": "Move-to-front (Cormack et al. 1998): stay with a run while it gives relevant shots.",
    "mm_ns": "MM-NS bandit (Losada et al. 2016): the run with the best recent share of relevant shots next.",
    "hedge": "Hedge (Aslam et al. 2003): runs weighted by the relevant shots they rank high.",
    "mtc": "MTC (Carterette et al. 2006): the shot that most moves the runs' differences in AP.",
    "mtc_hedge": "MTC's weight times Hedge's vote: what judging a shot is expected to change.",
    "lara": "LARA (Takehi et al. 2025): shots whose calibrated model probability is nearest 0.5 first.",
}
SYSTEM_TYPES = ("F", "M", "R")
QC_DEFAULTS = {"min_runs": 10, "window": 5}
LISTED = 10  # disputed items shown at once (the count is whole; deciding one brings the next)
# The adjudication page plays shots from the campaign's media host (its URL template names it), as the judging page
MEDIA_HEADERS = {
    **HEADERS,
    "Content-Security-Policy": HEADERS["Content-Security-Policy"].replace(
        "default-src 'self'; ", "default-src 'self'; media-src * data: blob:; "
    ),
}


def whole(form: Mapping[str, Any], name: str, low: int, high: int, problems: list[dict[str, object]]) -> int | None:
    """A whole-number field from `low` to `high` (None when empty); a problem naming the field otherwise."""
    raw = kit.text_field(form, name).strip()
    if not raw:
        return None
    if raw.isascii() and raw.isdigit() and low <= int(raw) <= high:
        return int(raw)
    problems.append({"field": name, "message": f"a whole number from {low} to {high}"})
    return None


def selection_of(form: FormData, problems: list[dict[str, object]]) -> dict[str, Any]:
    """The run selection and seed of a build form: max priority, system types, seed."""
    types = [t for t in form.getlist("system_types") if isinstance(t, str)]
    if any(t not in SYSTEM_TYPES for t in types):
        problems.append({"field": "system_types", "message": "F, M or R"})
    return {
        "seed": whole(form, "seed", 0, 2**63 - 1, problems),
        "max_priority": whole(form, "max_priority", 1, INT32_MAX, problems),
        "system_types": tuple(t for t in SYSTEM_TYPES if t in types) or None,
    }


def pool_spec_of(form: FormData) -> pools.PoolSpec:
    """The shot pool a build form asks for, checked as the API checks its body; InvalidInput naming every bad field
    (the service checks the rest: strata, runs, the model assessor)."""
    problems: list[dict[str, object]] = []
    kind = kit.text_field(form, "kind")
    if kind not in ("depth", "stratified"):
        problems.append({"field": "kind", "message": "depth or stratified"})
    depth = None
    if kind == "depth":
        depth = whole(form, "depth", 1, 100_000, problems)
        if depth is None and not any(p["field"] == "depth" for p in problems):
            problems.append({"field": "depth", "message": "required for a depth pool: a whole number from 1 to 100000"})
    strata = kit.text_field(form, "strata").strip() if kind == "stratified" else ""
    depths = per_topic_depths(form, kind, problems)
    if len(strata) > 1000 or "\x00" in strata:
        problems.append({"field": "strata", "message": "at most 1000 characters"})
    order = kit.text_field(form, "order") or "shuffled"
    if order not in judging_orders.ORDERS:
        problems.append({"field": "order", "message": f"one of {', '.join(judging_orders.ORDERS)}"})
    selection = selection_of(form, problems)
    check = None
    if kit.text_field(form, "model_assisted") in ("on", "true", "1"):
        try:
            share = float(kit.text_field(form, "human_share"))
        except ValueError:
            share = -1.0
        if not 0.0 < share <= 1.0:
            problems.append({"field": "verification.human_share", "message": "a share in (0, 1], e.g. 0.2"})
        stratify = kit.text_field(form, "stratify") or "none"
        if stratify not in pools.STRATIFY:
            problems.append({"field": "verification.stratify", "message": "none or confidence"})
        model = kit.text_field(form, "model_assessor_id").strip()
        model_id = int(model) if model.isascii() and model.isdigit() and 0 < int(model) <= INT32_MAX else None
        if model and model_id is None:
            problems.append({"field": "verification.model_assessor_id", "message": "a model assessor of this campaign"})
        check = pools.VerificationSpec(human_share=share, stratify=stratify, model_assessor_id=model_id)
    if problems:
        raise InvalidInput("the pool was not built: correct the fields named below", problems)
    return pools.PoolSpec(
        kind=kind, depth=depth, strata=strata or None, order=order, verification=check, depths=depths or None,
        **selection,
    )  # fmt: skip


def per_topic_depths(form: FormData, kind: str, problems: list[dict[str, object]]) -> dict[str, int]:
    """A depth pool form's per-topic depths (`1:50, 2:100`; empty: none), a problem naming the field otherwise."""
    text = kit.text_field(form, "depths").strip() if kind == "depth" else ""
    if len(text) > 100_000 or "\x00" in text:
        problems.append({"field": "depths", "message": "at most 100000 characters"})
        return {}
    try:
        return topic_depths.parse_depths(text)
    except InvalidInput as error:
        problems.extend(error.errors)
        return {}


def moment_spec_of(form: FormData) -> moment_judging.MomentPoolSpec:
    """The moment pool a build form asks for: depth, merge threshold (IoU), run selection and seed."""
    problems: list[dict[str, object]] = []
    depth = whole(form, "depth", 1, 100_000, problems)
    if depth is None and not problems:
        problems.append({"field": "depth", "message": "a whole number from 1 to 100000"})
    try:
        iou = float(kit.text_field(form, "iou") or "0.5")
    except ValueError:
        iou = -1.0
    if not 0.0 < iou <= 1.0:
        problems.append({"field": "iou", "message": "a number in (0, 1], e.g. 0.5"})
    selection = selection_of(form, problems)
    if problems:
        raise InvalidInput("the pool was not built: correct the fields named below", problems)
    return moment_judging.MomentPoolSpec(depth=depth or 10, iou=iou, **selection)


def given_of(form: FormData) -> dict[str, Any]:
    """A form's values as typed (lists for its checkbox groups), to fill it again."""
    given: dict[str, Any] = kit.given_of(form)
    for name in ("system_types", "pair"):
        given[name] = [v for v in form.getlist(name) if isinstance(v, str)]
    return given


def pairs_of(form: FormData) -> list[tuple[str, int]]:
    """The (topic, assessor id) pairs an assignment form ticks (`pair` values are `<assessor id>:<topic>`)."""
    pairs, bad = [], []
    for value in form.getlist("pair"):
        assessor, _, topic = value.partition(":") if isinstance(value, str) else ("", "", "")
        if assessor.isascii() and assessor.isdigit() and topic:
            pairs.append((topic, int(assessor)))
        else:
            bad.append(value)
    if bad:
        raise InvalidInput("unreadable assignments", [{"field": "pair", "message": f"{len(bad)} unreadable"}])
    if not pairs:
        raise InvalidInput(
            "nothing to assign", [{"field": "pair", "message": "tick at least one topic for an assessor"}]
        )
    return pairs


def progress_rows(
    counts: list[dict[str, Any]], progress: Mapping[str, list[dict[str, Any]]], titles: Mapping[str, str],
    owners: Mapping[str, list[str]],
) -> list[dict[str, Any]]:  # fmt: skip
    """Per topic of a shot pool: title, pooled and sampled items, tasks done of total per round, its assessors."""
    rounds: dict[str, dict[int, dict[str, Any]]] = {}
    for row in progress["topics"]:
        rounds.setdefault(str(row["topic"]), {})[int(row["round"])] = row
    return [
        {
            **c,
            "title": titles.get(str(c["topic"]), ""),
            "rounds": {
                r: {"done": v["done"], "total": v["total"]} for r, v in sorted(rounds.get(str(c["topic"]), {}).items())
            },
            "assessors": owners.get(str(c["topic"]), []),
        }
        for c in counts
    ]


def play_url(item: Mapping[str, Any]) -> str | None:
    """The shot's media URL with a media fragment playing its window only (`#t=start,end`)."""
    url = item.get("media_url")
    if not url:
        return None
    if item.get("start") is None or item.get("end") is None:
        return str(url)
    return f"{urldefrag(str(url)).url}#t={float(item['start']):g},{float(item['end']):g}"


def make_router(page_role: Any, session_dependency: Any, read_upload: ReadUpload) -> APIRouter:
    """The pool and adjudication pages (declared `page_role`: a page checks its session itself, redirecting to
    /login); `read_upload` is unused here (no page of these takes a file), kept for the console's one signature."""
    router = APIRouter(tags=["web"], include_in_schema=False, dependencies=[page_role])
    SessionDep = Depends(session_dependency)
    FormDep = Depends(kit.read_form)

    def failed(request: Request, web: web_session.WebPrincipal, error: ServiceError) -> Response:
        """A service error as a page (or the API's error body)."""
        return kit.failed(request, web, error, home="/console/")

    def campaign_of(campaign: Campaign) -> dict[str, Any]:
        """The campaign as these pages name it."""
        return {
            "id": campaign.id,
            "name": campaign.name,
            "task_kind": campaign.task_kind.value,
            "status": campaign.status.value,
            "media_url_template": campaign.media_url_template,
        }

    def notice_of(request: Request, keys: tuple[str, ...]) -> dict[str, str] | None:
        """The notice of a change just made (from the redirect's query string)."""
        return {k: request.query_params[k] for k in keys if k in request.query_params} or None

    # ------------------------------------------------------------------------------------------------ the pool page

    def pool_view(
        session: Session, web: web_session.WebPrincipal, campaign: Campaign, *, with_statistics: bool, memory_mb: float
    ) -> dict[str, Any]:
        """The pool page's data: the campaign's pool (parameters, counts, progress and, when asked, its statistics,
        which read every pooled run) or none, the assessors, topics and assignments, and whether a (re)build is
        allowed."""
        principal = web.principal
        topics = topic_service.list_topics(session, principal, campaign.id)
        titles = {t.number: t.title for t in topics}
        assessors = team_service.list_assessors(session, principal, campaign.id)
        people = [{"id": a.id, "name": a.name} for a in assessors if a.kind == "human"]
        models = [{"id": a.id, "name": a.name} for a in assessors if a.kind == "model"]
        names = {a.id: a.name for a in assessors}
        pool = pools.current_pool(session, campaign.id)
        moments = campaign.task_kind is TaskKind.moments
        data: dict[str, Any] = {
            "campaign": campaign_of(campaign),
            "topics": [{"number": t.number, "title": t.title} for t in topics],
            "assessors": people,
            "model_assessors": models,
            "pool": None,
            "assignments": [],
            "progress": None,
            "verification": None,
            "statistics": None,
            "may_build": True,
            "may_pool": campaign.status.value in ("closed", "pooled", "judging"),
            "orders": [{"name": o, "description": ORDER_NOTES.get(o, "")} for o in judging_orders.ORDERS],
            "default_strata": DEFAULT_STRATA,
        }
        if pool is None:
            return data
        assigned: list[dict[str, Any]] = pools.list_assignments(session, principal, pool.id)
        owners: dict[str, list[str]] = {}
        for a in assigned:
            owners.setdefault(str(a["topic"]), []).append(names.get(a["assessor_id"], "?"))
        data["assignments"] = assigned
        shown: dict[str, Any] = {"id": pool.id, "kind": pool.kind, "seed": pool.seed, "params": pool.params}
        if moments:
            moment_counts: list[dict[str, Any]] = moment_judging.moment_topic_counts(session, pool)
            shown["topics"] = [
                {**c, "title": titles.get(str(c["topic"]), ""), "assessors": owners.get(str(c["topic"]), [])}
                for c in moment_counts
            ]
            shown["totals"] = {
                "topics": len(moment_counts),
                "proposed": sum(c["proposed"] for c in moment_counts),
                "judged": sum(c["judged"] for c in moment_counts),
            }
            shown["judged"] = shown["totals"]["judged"] > 0
        else:
            counts: list[dict[str, Any]] = pools.topic_counts(session, pool)
            progress: dict[str, Any] = judging.pool_progress(session, principal, pool.id)
            shown["topics"] = progress_rows(counts, progress, titles, owners)
            shown["totals"] = pools.totals(counts)
            shown["judged"] = pools.has_judgements(session, pool.id)
            data["progress"] = {"assessors": progress["assessors"]}
            if pools.verification_of(pool) is not None:
                data["verification"] = jsonable_encoder(verification.progress(session, principal, pool.id))
            if with_statistics:
                data["statistics"] = pools.statistics(session, principal, pool.id, memory_mb=memory_mb)
                data["statistics"].pop("topics", None)  # the counts are shown above
        data["pool"] = shown
        data["may_build"] = not shown["judged"]
        return data

    def pool_page(
        request: Request,
        session: Session,
        web: web_session.WebPrincipal,
        campaign_id: int,
        *,
        failure: dict[str, Any] | None = None,
        preview: dict[str, Any] | None = None,
        given: Mapping[str, Any] | None = None,
        status_code: int = 200,
    ) -> Response:
        """The pool page (with a form's errors, or a preview of the pool the build form would store)."""
        try:
            campaign = campaign_service.get_organised(session, web.principal, campaign_id)
            data = pool_view(
                session,
                web,
                campaign,
                with_statistics="statistics" in request.query_params,
                memory_mb=request.app.state.settings.job_memory_mb,
            )
        except ServiceError as error:
            return failed(request, web, error)
        data["preview"] = preview
        data["problem"] = failure
        data["notice"] = notice_of(request, ("built", "assigned", "queued", "frequent", "neighbours"))
        build_given = given or ((failure or {}).get("given") if failure and failure["form"] == "build" else None)
        defaults = {"kind": "stratified", "strata": DEFAULT_STRATA, "depth": "", "depths": "", "order": "shuffled",
                    "iou": "0.5", "human_share": "0.2", "stratify": "none", "system_types": []}  # fmt: skip
        if campaign.task_kind is TaskKind.moments:
            defaults["depth"] = "10"
        more = kit.extra(
            web,
            g={**defaults, **(build_given or {})},
            qc=(failure or {}).get("given") if failure and failure["form"] == "qc" else QC_DEFAULTS,
            ticked=set(failure["given"].get("pair", [])) if failure and failure["form"] == "assign" else set(),
            assigned_keys={f"{a['assessor_id']}:{a['topic']}" for a in data["assignments"]},
        )
        return render(request, "console/pool.html", data, extra=more, status_code=status_code)

    def pool(request: Request, campaign_id: Id, session: Session = SessionDep) -> Response:
        """A campaign's pool: build (with a preview) or, once built, its counts, progress, assignments and QC."""
        web = kit.signed_in(request, session, Role.organiser)
        return web if isinstance(web, Response) else pool_page(request, session, web, campaign_id)

    for path in twin_paths("/console/campaigns/{campaign_id}/pool"):
        router.add_api_route(path, pool, methods=["GET"], name="console_pool" + ("_json" if ".json" in path else ""))

    def posted(request: Request, session: Session, form: FormData) -> web_session.WebPrincipal | Response:
        """The organiser's principal of a POST with its CSRF value checked, or the answer to give instead."""
        return kit.posted(request, session, form, Role.organiser)

    pool_changed = kit.back_to(pool_page, "/pool")

    @router.post("/console/campaigns/{campaign_id}/pool/preview")
    def preview(request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep) -> Response:
        """The pool the build form would store, per topic and in total: nothing is stored."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        given = given_of(form)
        try:
            campaign = campaign_service.get_organised(session, web.principal, campaign_id)
            if campaign.task_kind is TaskKind.moments:
                raise Conflict("a moment pool has no preview: build it (a pool without marks may be rebuilt)")
            memory_mb = request.app.state.settings.job_memory_mb  # runs are read in blocks of about this much
            counted = pools.preview_pool(session, web.principal, campaign_id, pool_spec_of(form), memory_mb=memory_mb)
        except ServiceError as error:
            session.rollback()
            if wants_json(request):
                return failed(request, web, error)
            return pool_page(
                request, session, web, campaign_id, failure=kit.problem("build", error, given),
                status_code=kit.status_of(error),
            )  # fmt: skip
        session.rollback()  # nothing to keep
        if wants_json(request):
            return JSONResponse(jsonable_encoder(counted))
        return pool_page(
            request, session, web, campaign_id, preview=counted, given={**given, "seed": str(counted["seed"])}
        )

    @router.post("/console/campaigns/{campaign_id}/pool")
    def build(request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep) -> Response:
        """Build (or rebuild, while it has no judgements) the campaign's pool from the form."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web

        def change() -> str:
            campaign = campaign_service.get_organised(session, web.principal, campaign_id)
            if campaign.task_kind is TaskKind.moments:
                made = moment_judging.create_moment_pool(session, web.principal, campaign_id, moment_spec_of(form))
            else:
                memory_mb = request.app.state.settings.job_memory_mb
                made = pools.create_pool(session, web.principal, campaign_id, pool_spec_of(form), memory_mb=memory_mb)
            return f"built={made.id}"

        return pool_changed(request, session, web, campaign_id, "build", change, given_of(form))

    def current(session: Session, web: web_session.WebPrincipal, campaign_id: int) -> Pool:
        """The campaign's pool (Conflict when it has none yet)."""
        campaign_service.get_organised(session, web.principal, campaign_id)
        found = pools.current_pool(session, campaign_id)
        if found is None:
            raise Conflict("the campaign has no pool yet: build one first")
        return found

    @router.post("/console/campaigns/{campaign_id}/assignments")
    def assign(request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep) -> Response:
        """Give the ticked topics to the assessors (a topic to several only when `shared` is ticked)."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        shared = kit.text_field(form, "shared") in ("on", "true", "1")

        def change() -> str:
            pool_id = current(session, web, campaign_id).id
            try:
                made = pools.assign_topics(session, web.principal, pool_id, pairs_of(form), shared=shared)
            except Conflict as error:  # the API's wording names its body's field; the page's is a checkbox
                raise Conflict(error.message.replace("pass shared=true", "tick 'shared'")) from None
            return f"assigned={len(made)}"

        return pool_changed(request, session, web, campaign_id, "assign", change, given_of(form))

    @router.post("/console/campaigns/{campaign_id}/quality-control")
    def quality_control(
        request: Request, campaign_id: Id, form: FormData = FormDep, session: Session = SessionDep
    ) -> Response:
        """Queue blind second judgements for frequent false positives and neighbour disagreements."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web

        def change() -> str:
            problems: list[dict[str, object]] = []
            min_runs = whole(form, "min_runs", 1, quality.MAX_MIN_RUNS, problems)
            window = whole(form, "window", 1, quality.MAX_WINDOW, problems)
            for name, value in (("min_runs", min_runs), ("window", window)):
                if value is None and not any(p["field"] == name for p in problems):
                    problems.append({"field": name, "message": "required"})
            if problems:
                raise InvalidInput("quality control did not run: correct the fields named below", problems)
            assert min_runs is not None and window is not None
            pool_id = current(session, web, campaign_id).id
            result = quality.run_quality_control(session, web.principal, pool_id, min_runs=min_runs, window=window)
            return urlencode(
                {
                    "queued": result["queued"],
                    "frequent": result["frequent_false_positives"],
                    "neighbours": result["neighbour_disagreements"],
                }
            )

        return pool_changed(request, session, web, campaign_id, "qc", change, given_of(form))

    # -------------------------------------------------------------------------------------------- adjudication

    def adjudication_page(
        request: Request,
        session: Session,
        web: web_session.WebPrincipal,
        campaign_id: int,
        *,
        failure: dict[str, Any] | None = None,
        status_code: int = 200,
    ) -> Response:
        """The adjudication queue (its first items, of one topic when asked) and the assessors' agreement."""
        wanted = request.query_params.get("topic") or None
        try:
            campaign = campaign_service.get_organised(session, web.principal, campaign_id)
            pool = pools.current_pool(session, campaign_id)
            queue = quality.adjudication_queue(session, web.principal, pool.id) if pool is not None else []
            agreement = quality.agreement(session, web.principal, pool.id) if pool is not None else None
        except ServiceError as error:
            return failed(request, web, error)
        per_topic: dict[str, int] = {}
        for item in queue:
            per_topic[str(item["topic"])] = per_topic.get(str(item["topic"]), 0) + 1
        chosen = [q for q in queue if wanted is None or q["topic"] == wanted]
        data = {
            "campaign": campaign_of(campaign),
            "pool_id": pool.id if pool is not None else None,
            "moments": campaign.task_kind is TaskKind.moments,
            "size": len(queue),
            "topic": wanted,
            "per_topic": [{"topic": t, "count": n} for t, n in per_topic.items()],
            "items": [{**q, "play_url": play_url(q)} for q in chosen[:LISTED]],
            "more": max(0, len(chosen) - LISTED),
            "agreement": agreement,
            "problem": failure,
            "notice": notice_of(request, ("decided", "verdict")),
        }
        return render(
            request, "console/adjudication.html", data, extra=kit.extra(web), status_code=status_code,
            headers=MEDIA_HEADERS,
        )  # fmt: skip

    def adjudication(request: Request, campaign_id: Id, session: Session = SessionDep) -> Response:
        """The disputed items, each with its shot playing, every verdict and who gave it, and two buttons."""
        web = kit.signed_in(request, session, Role.organiser)
        return web if isinstance(web, Response) else adjudication_page(request, session, web, campaign_id)

    for path in twin_paths("/console/campaigns/{campaign_id}/adjudication"):
        router.add_api_route(
            path, adjudication, methods=["GET"], name="console_adjudication" + ("_json" if ".json" in path else "")
        )

    @router.post("/console/campaigns/{campaign_id}/adjudication/{pool_item_id}")
    def decide(
        request: Request, campaign_id: Id, pool_item_id: Id, form: FormData = FormDep, session: Session = SessionDep
    ) -> Response:
        """Record the organiser's final verdict on a disputed item; back to the queue with a notice."""
        web = posted(request, session, form)
        if isinstance(web, Response):
            return web
        verdict = kit.text_field(form, "verdict")
        topic = kit.text_field(form, "topic")

        def change() -> str:
            if verdict not in (Verdict.relevant.value, Verdict.not_relevant.value):
                raise InvalidInput(
                    "the item was not decided", [{"field": "verdict", "message": "relevant or not_relevant"}]
                )
            pool_id = current(session, web, campaign_id).id
            quality.adjudicate(session, web.principal, pool_id, pool_item_id, Verdict(verdict))
            item = session.get(PoolItem, pool_item_id)
            return urlencode({"decided": item.docno if item else pool_item_id, "verdict": verdict})

        back = f"/console/campaigns/{campaign_id}/adjudication"
        return kit.changed(
            request, session, web, form_name="adjudicate", change=change, given={"verdict": verdict},
            back=f"{back}?{urlencode({'topic': topic})}" if topic else back,
            again=lambda failure, status: adjudication_page(
                request, session, web, campaign_id, failure=failure, status_code=status
            ),
        )  # fmt: skip

    return router
