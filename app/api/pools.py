"""Pools of a campaign: build, statistics, topic assignments, progress, quality control, adjudication, qrels cut."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from app.api.security import Organiser, SessionDep
from app.services import judging, judging_orders, pools, qrels, quality, verification
from app.services.inputs import INT32_MAX, Id, Text
from app.storage.models import Pool, Verdict

router = APIRouter(prefix="/api", tags=["pools"])

if TYPE_CHECKING:
    JudgingOrderName = str  # a Literal built at run time is opaque to a type checker: to it, an order's name
else:
    JudgingOrderName = Literal[judging_orders.ORDERS]  # the orders, an enum in the OpenAPI schema


class RunSelection(BaseModel):
    """Which runs a pool is built from, and its seed: shared by shot and moment pools."""

    seed: int | None = Field(default=None, ge=0, le=2**63 - 1, description="Random when omitted; stored with the pool")
    max_priority: int | None = Field(default=None, ge=1, le=INT32_MAX, description="Only runs with priority <= this")
    system_types: list[Literal["F", "M", "R"]] | None = None
    run_ids: list[Id] | None = Field(default=None, max_length=100_000)


class VerificationIn(BaseModel):
    """A model-assisted pool: a model assessor judges every sampled item and people verify a seeded sample of its
    verdicts (drawn per topic once the model has judged the topic), which the combined qrels version corrects with."""

    human_share: float = Field(gt=0.0, le=1.0, description="Expected share of each topic's items people verify")
    stratify: Literal["none", "confidence"] = Field(
        default="none",
        description="none: every item equally likely; confidence: items whose model probability is nearest 0.5 "
        "drawn more often (the estimates weight each by its inclusion probability)",
    )
    model_assessor_id: Id | None = Field(
        default=None, description="The model assessor whose verdicts are verified; the campaign's only one if null"
    )


TopicNumber = Annotated[Text, Field(min_length=1, max_length=64)]
TopicDepth = Annotated[int, Field(ge=1, le=100_000)]


class PoolIn(RunSelection):
    """How to build a pool."""

    kind: Literal["depth", "stratified"] = "stratified"
    depth: int | None = Field(default=None, ge=1, le=100_000, description="For depth pools: the top k of every run")
    strata: Text | None = Field(
        default=None, max_length=1000, description="For stratified pools, e.g. '1-300:1.0, 301-1000:0.25'"
    )
    depths: dict[TopicNumber, TopicDepth] | None = Field(
        default=None,
        max_length=100_000,
        description="For depth pools: per-topic depths {topic: k} (each topic's pool is its runs' top k; `depth` "
        "for the topics not named), e.g. {'1': 50, '2': 100}; stored in the pool's params",
    )
    order: JudgingOrderName = Field(
        default="shuffled",
        description="Judging order within each topic: the seeded shuffle (a random sample at every point, the default"
        " for xinfAP), move-to-front (Cormack et al. 1998), the MM-NS bandit (Losada et al. 2016), Hedge (Aslam"
        " et al. 2003) or MTC (Carterette et al. 2006). Scores from"
        " qrels cut before a non-random order is judged to the end are marked biased.",
    )
    verification: VerificationIn | None = Field(
        default=None,
        description="Make the pool model-assisted: no first-round tasks for people at build time; they judge only "
        "each topic's verification sample",
    )


class PoolOut(BaseModel):
    """A pool with its parameters, seed and per-topic counts."""

    id: int
    campaign_id: int
    kind: str
    seed: int
    params: dict[str, object]
    topics: list[dict[str, object]]


class AssignmentIn(BaseModel):
    """A topic given to an assessor."""

    topic: Text = Field(min_length=1, max_length=64)
    assessor_id: Id


class AssignmentsIn(BaseModel):
    """Assignments to add; `shared` lets several assessors work one topic."""

    assignments: list[AssignmentIn] = Field(max_length=100_000)
    shared: bool = False


class AdjudicationIn(BaseModel):
    """An organiser's final verdict on a pooled item."""

    pool_item_id: Id
    verdict: Literal[Verdict.relevant, Verdict.not_relevant]


class LabelIn(BaseModel):
    """A label for a new qrels version."""

    label: Text = Field(min_length=1, max_length=200)
    allow_incomplete: bool = Field(
        default=False,
        description="Cut even when nothing is judged yet (409 otherwise, saying how much is unjudged); a version "
        "lists its topics without any judgement and boards scored on it warn about them",
    )
    judges: Literal["human", "model", "combined"] = Field(
        default="human",
        description="Whose verdicts: people's (human; in a model-assisted pool only the verification sample), one "
        "model assessor's (model) or, for a model-assisted pool, a person's where there is one, else the model's "
        "(combined: evaluations estimate from it with prediction-powered inference)",
    )
    model_assessor_id: Id | None = Field(
        default=None,
        description="For model versions: the model assessor (the pool's verified model, else the campaign's only one)",
    )


def _out(session: SessionDep, pool: Pool) -> PoolOut:
    return PoolOut(
        id=pool.id,
        campaign_id=pool.campaign_id,
        kind=pool.kind,
        seed=pool.seed,
        params=pool.params,
        topics=pools.topic_counts(session, pool),
    )


class StratumCount(BaseModel):
    """A stratum's items of one topic: pooled, and sampled to be judged."""

    pooled: int
    sampled: int


class TopicCount(BaseModel):
    """A topic's items: pooled and sampled, in all and per stratum (keyed by its 1-based number)."""

    topic: str
    pooled: int
    sampled: int
    strata: dict[str, StratumCount]


class PoolTotals(BaseModel):
    """Topics with pooled items, and the pooled and sampled items of all of them."""

    topics: int
    pooled: int
    sampled: int


class PoolPreviewOut(BaseModel):
    """What a build with the same body would store, counted: its seed (build with it to get exactly this pool)."""

    campaign_id: int
    kind: str
    seed: int
    strata: list[list[float]]
    depths: dict[str, int] | None = None
    order: str
    run_ids: list[int]
    topics: list[TopicCount]
    totals: PoolTotals


def pool_spec(body: PoolIn) -> pools.PoolSpec:
    """The service's spec of a build request."""
    return pools.PoolSpec(
        kind=body.kind,
        depth=body.depth,
        strata=body.strata,
        seed=body.seed,
        max_priority=body.max_priority,
        system_types=tuple(body.system_types) if body.system_types else None,
        run_ids=tuple(body.run_ids) if body.run_ids else None,
        order=body.order,
        verification=pools.VerificationSpec(**body.verification.model_dump()) if body.verification else None,
        depths=dict(body.depths) if body.depths else None,
    )


@router.post("/campaigns/{campaign_id}/pools", status_code=201, response_model=PoolOut)
def build_pool(campaign_id: Id, body: PoolIn, session: SessionDep, principal: Organiser, request: Request) -> PoolOut:
    """Build the pool of a closed campaign (reproducible from the returned seed)."""
    memory_mb = request.app.state.settings.job_memory_mb  # runs are read in blocks of about this much
    pool = pools.create_pool(session, principal, campaign_id, pool_spec(body), memory_mb=memory_mb)
    session.commit()
    return _out(session, pool)


@router.post("/campaigns/{campaign_id}/pools/preview", response_model=PoolPreviewOut)
def preview_pool(
    campaign_id: Id, body: PoolIn, session: SessionDep, principal: Organiser, request: Request
) -> dict[str, object]:
    """The pool a build with this body would store, per topic and stratum (pooled and sampled items) and in total,
    with its seed (drawn when the body has none): nothing is stored; the same checks and errors as a build."""
    memory_mb = request.app.state.settings.job_memory_mb
    return pools.preview_pool(session, principal, campaign_id, pool_spec(body), memory_mb=memory_mb)


@router.get("/pools/{pool_id}", response_model=PoolOut)
def get_pool(pool_id: Id, session: SessionDep, principal: Organiser) -> PoolOut:
    """A pool and its per-topic counts."""
    return _out(session, pools.get_pool(session, principal, pool_id))


@router.get("/pools/{pool_id}/stats")
def pool_stats(pool_id: Id, request: Request, session: SessionDep, principal: Organiser) -> dict[str, object]:
    """Judged share of each run's results (min/max/mean), unique contributions per run and team."""
    return pools.statistics(session, principal, pool_id, memory_mb=request.app.state.settings.job_memory_mb)


@router.get("/pools/{pool_id}/verification", response_model=list[verification.TopicVerification])
def verification_progress(
    pool_id: Id, session: SessionDep, principal: Organiser
) -> list[verification.TopicVerification]:
    """A model-assisted pool per topic: sampled items, model-judged, drawn for people, judged by people (422 for
    pools built without `verification`)."""
    return verification.progress(session, principal, pool_id)


@router.post("/pools/{pool_id}/assignments", status_code=201)
def assign(pool_id: Id, body: AssignmentsIn, session: SessionDep, principal: Organiser) -> dict[str, int]:
    """Give topics to assessors."""
    made = pools.assign_topics(
        session, principal, pool_id, [(a.topic, a.assessor_id) for a in body.assignments], shared=body.shared
    )
    session.commit()
    return {"created": len(made)}


@router.get("/pools/{pool_id}/progress")
def progress(pool_id: Id, session: SessionDep, principal: Organiser) -> dict[str, list[dict[str, object]]]:
    """Judging progress per topic and round, and per assessor with time spent."""
    return judging.pool_progress(session, principal, pool_id)


@router.post("/pools/{pool_id}/quality-control")
def quality_control(
    pool_id: Id,
    session: SessionDep,
    principal: Organiser,
    min_runs: int = Query(10, ge=1, le=quality.MAX_MIN_RUNS, description="Runs that make an item 'frequent'"),
    window: int = Query(5, ge=1, le=quality.MAX_WINDOW, description="Neighbouring shots compared on each side"),
) -> dict[str, int]:
    """Queue second judgements for frequent false positives and neighbour disagreements."""
    result = quality.run_quality_control(session, principal, pool_id, min_runs=min_runs, window=window)
    session.commit()
    return result


@router.get("/pools/{pool_id}/adjudication")
def adjudication_queue(pool_id: Id, session: SessionDep, principal: Organiser) -> list[dict[str, object]]:
    """Items whose judgements disagree or are unsure."""
    return quality.adjudication_queue(session, principal, pool_id)


@router.post("/pools/{pool_id}/adjudication", status_code=204)
def adjudicate(pool_id: Id, body: AdjudicationIn, session: SessionDep, principal: Organiser) -> None:
    """Decide an item."""
    quality.adjudicate(session, principal, pool_id, body.pool_item_id, Verdict(body.verdict))
    session.commit()


@router.get("/pools/{pool_id}/agreement")
def agreement(pool_id: Id, session: SessionDep, principal: Organiser) -> dict[str, list[dict[str, object]]]:
    """Cohen's kappa per topic and per assessor pair."""
    return quality.agreement(session, principal, pool_id)


@router.post("/pools/{pool_id}/qrels", status_code=201)
def cut_qrels(pool_id: Id, body: LabelIn, session: SessionDep, principal: Organiser) -> dict[str, object]:
    """Freeze the current judgements as an immutable qrels version."""
    version = qrels.cut_qrels(
        session,
        principal,
        pool_id,
        body.label,
        allow_incomplete=body.allow_incomplete,
        judges=body.judges,
        model_assessor_id=body.model_assessor_id,
    )
    session.commit()
    return {
        "id": version.id,
        "label": version.label,
        "kind": version.kind,
        "n_entries": version.n_entries,
        "judging_order": qrels.order_mark(version),
        "unjudged_topics": version.unjudged_topics,
        "judges": version.judges,
        "provenance": version.provenance,
    }
