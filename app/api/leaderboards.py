"""Leaderboards: live (organisers; a team sees its own rows) and published (public, no token). JSON or CSV."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, Field

from app.api.media import CSV_OR_JSON
from app.api.qrels import JudgingOrderMark
from app.api.security import Member, Organiser, SessionDep, public
from app.evaluation.measures.registry import measure_help
from app.services import leaderboards, publication, reports, snapshots, visibility
from app.services.inputs import Id, Text
from app.services.tables import leaderboard_csv, per_topic_csv

router = APIRouter(prefix="/api", tags=["leaderboards"])
Format = Literal["json", "csv", "topics.csv"]
MeasureQuery = Annotated[Text | None, Query(description=measure_help())]
RunTypes = Annotated[leaderboards.Filters, Query()]
"""The run-type filters (system_type, training_type, novelty), declared once by leaderboards.Filters."""


class CampaignRef(BaseModel):
    """The campaign a board belongs to."""

    id: int
    name: str
    task_kind: str


class Bounds(BaseModel):
    """A confidence interval (null for counts, and where the numbers have none)."""

    ci_low: float | None
    ci_high: float | None


class IntervalInfo(BaseModel):
    """How a board's intervals were made (SPEC section 6): the paired bootstrap over topics, and what widened it."""

    level: float
    method: str = Field(description="percentile or BCa")
    n_resamples: int
    seed: int
    sampled: bool = Field(description="Widened by the variance of the judged sample or of the unjudged items")
    text: str
    widening: str | None = Field(
        default=None, description="jackknife, imputation or imputation+bias (marked numbers); null: not widened"
    )
    counts: str | None = Field(default=None, description="Set for a count measure, which has no interval")


INTERVAL = Field(default=None, description="How the intervals were made; null when the numbers have none")


class BoardRow(BaseModel):
    """One run on a board. `rank` only on ranked boards (organisers, published); `per_topic` only in a team's own
    view before publication (measure -> topic -> value). The interval of the board's measure (`ci_low`, `ci_high`,
    `level`) and of every measure (`intervals`); the run's rank interval and tier among the runs shown (null in a
    team's own view, for counts, and where the numbers have no intervals)."""

    rank: int | None = None
    run_id: int
    run: str
    team: str | None
    system_type: str
    training_type: str
    novelty: bool
    priority: int
    novelty_score: float | None = Field(
        default=None,
        description="A novelty run's TRECVID novelty score (relevant shots no other team returned, minus one per shot "
        "judged not relevant that another team returned too, summed over the topics); null on other rows",
    )
    score: float | None
    scores: dict[str, float | None]
    ci_low: float | None = None
    ci_high: float | None = None
    level: float | None = None
    intervals: dict[str, Bounds] | None = None
    rank_low: int | None = Field(default=None, description="Best rank in the bootstrap's central range")
    rank_high: int | None = Field(default=None, description="Worst rank in the bootstrap's central range")
    tier: int | None = Field(
        default=None, description="1 = best; a run in a tier is not separable from the run that leads it (Holm)"
    )
    per_topic: dict[str, dict[str, float | None]] | None = None


class TopicRow(BaseModel):
    """One topic: the best score and median over the board's runs; `best_run` on ranked boards, the team's own runs'
    scores (`runs`, run name -> value) in its view before publication."""

    topic: str
    best_run: str | None = None
    best: float | None
    median: float | None
    runs: dict[str, float | None] | None = None


class Leaderboard(BaseModel):
    """A leaderboard: rows sorted by `measure` (ranked within the filters), grouped by system type, per-topic table.

    A team before publication gets its own runs only, unranked, with `team_results` set (SPEC section 7)."""

    campaign: CampaignRef
    evaluation_id: int
    qrels_version_id: int | None
    judging_order: JudgingOrderMark | None = Field(
        default=None, description="How the qrels' judgements were ordered; `biased` marks every score on the board"
    )
    unjudged_topics: list[str] | None = Field(
        default=None, description="The campaign's topics without any judgement in the qrels (null: not known)"
    )
    qrels_judges: dict[str, object] | None = Field(
        default=None,
        description="Whose verdicts the qrels hold: judges (human, model or combined) and the version's provenance",
    )
    warning: str | None = Field(default=None, description="Set when some topics have no judgement: names them")
    measure: str
    measures: list[str]
    filters: leaderboards.Filters = Field(description="The filters it was built with (null: not filtered)")
    published: bool
    team_results: Literal["own"] | None = None
    interval: IntervalInfo | None = INTERVAL
    rows: list[BoardRow]
    by_system_type: dict[str, list[BoardRow]]
    per_topic: list[TopicRow]


Correction = Literal["holm", "bh"]
CorrectionQuery = Annotated[
    Correction, Query(description="holm (family-wise error) or bh (Benjamini-Hochberg, false discovery rate)")
]


class Pair(BaseModel):
    """Two runs' difference of means (run_a - run_b) with its interval, d_z and randomization p-values."""

    run_a: str
    run_b: str
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    effect_size: float | None = Field(description="Paired d_z: mean difference over its sd (null when infinite)")
    pvalue: float
    adjusted_pvalue: float
    significant: bool = Field(description="adjusted_pvalue below alpha")


class Significance(BaseModel):
    """Groups of the top runs (passing the filters) with no significant difference."""

    measure: str
    method: str
    filters: leaderboards.Filters = Field(description="The filters it was built with (null: not filtered)")
    alpha: float | None = None
    n_resamples: int | None = None
    seed: int | None = None
    runs: list[str]
    means: list[float | None] | None = None
    pvalues: list[list[float]]
    groups: list[list[str]]
    tested: bool | None = Field(default=None, description="False when there was nothing to test (see `note`)")
    note: str | None = Field(default=None, description="Why nothing was tested: one run, or no topic with scores")
    correction: Correction | None = Field(default=None, description="How `pairs` adjusts its p-values")
    interval: IntervalInfo | None = INTERVAL
    pairs: list[Pair] | None = Field(default=None, description="Every pair of the tested runs (null: older snapshot)")
    tiers: dict[str, int] | None = Field(default=None, description="Run -> tier (1 = best) by the adjusted p-values")
    rank_intervals: dict[str, list[int] | None] | None = Field(
        default=None, description="Run -> [best, worst] rank among the tested runs (null without intervals)"
    )


BOARD_RESPONSES: dict[int | str, dict[str, Any]] = {200: {**CSV_OR_JSON[200], "model": Leaderboard}}


def json_response(document: object) -> Response:
    """A document serialised once by orjson (NaN and infinities as null), skipping FastAPI's encoder."""
    return Response(orjson.dumps(document), media_type="application/json")


class PublishIn(BaseModel):
    """Which evaluation to publish (the newest finished one when omitted)."""

    evaluation_id: Id | None = None


def _render(board: dict[str, object], fmt: Format) -> Response:
    """The board as JSON, or one of its tables as CSV."""
    if fmt == "json":
        return json_response(board)
    text = leaderboard_csv(board) if fmt == "csv" else per_topic_csv(board)
    return Response(text, media_type="text/csv; charset=utf-8")


@router.get("/campaigns/{campaign_id}/leaderboard", response_model=None, responses=BOARD_RESPONSES)
def live(
    campaign_id: Id,
    session: SessionDep,
    principal: Member,
    filters: RunTypes,
    measure: MeasureQuery = None,
    evaluation_id: Id | None = None,
    format: Format = "json",
) -> Response:
    """The current leaderboard, sorted by `measure`, filtered by run type (ranks and per-topic best and median within
    the filters). Organisers see every run. A team sees the published board once published; before, what the
    campaign's `team_results` allows: `own` = its own runs' scores (mean and per topic, every measure) and each topic's
    best and median over all runs, no ranks; `hidden` = 403. Assessors: 403."""
    board = visibility.leaderboard_for(
        session, principal, campaign_id, measure=measure, evaluation_id=evaluation_id, filters=filters
    )
    return _render(board, format)


@router.get("/campaigns/{campaign_id}/significance", response_model=None, responses={200: {"model": Significance}})
def significance(
    campaign_id: Id,
    session: SessionDep,
    principal: Organiser,
    filters: RunTypes,
    measure: MeasureQuery = None,
    top: int = Query(10, ge=2, le=100),
    method: Literal["tukey", "pairwise"] = "tukey",
    n_resamples: int = Query(10_000, ge=100, le=1_000_000),
    seed: int = Query(0, ge=0, le=2**32 - 1),
    correction: CorrectionQuery = "holm",
) -> Response:
    """Groups of the top runs passing the filters with no significant difference, as in the TRECVID overview; over
    the same runs, every pair's difference with its interval, effect size and p-values adjusted by `correction`,
    their tiers and rank intervals."""
    return json_response(
        leaderboards.live_significance(
            session,
            principal,
            campaign_id,
            measure=measure,
            filters=filters,
            top=top,
            method=method,
            n_resamples=n_resamples,
            seed=seed,
            correction=correction,
        )
    )


@router.get(
    "/public/campaigns/{campaign_id}/significance",
    response_model=None,
    responses={200: {"model": Significance}},
    dependencies=[public()],
)
def published_significance(
    campaign_id: Id,
    session: SessionDep,
    filters: RunTypes,
    correction: CorrectionQuery = "holm",
) -> Response:
    """The significance groups of the published board's measure: frozen with it, or over the runs passing the
    filters or with another correction (computed with the same defaults)."""
    return json_response(leaderboards.published_significance(session, campaign_id, filters, correction))


@router.get("/campaigns/{campaign_id}/report")
def live_report(campaign_id: Id, session: SessionDep, principal: Organiser) -> dict[str, object]:
    """The campaign report of the newest evaluation (organisers, before publication)."""
    return reports.live_report(session, principal, campaign_id)


@router.get("/public/campaigns/{campaign_id}/report", dependencies=[public()])
def published_report(campaign_id: Id, session: SessionDep) -> dict[str, object]:
    """The report frozen with the published leaderboard."""
    return snapshots.published_report(session, snapshots.published_snapshot(session, campaign_id))


@router.post("/campaigns/{campaign_id}/publish", status_code=201)
def publish(campaign_id: Id, body: PublishIn, session: SessionDep, principal: Organiser) -> dict[str, object]:
    """Freeze and publish the leaderboard; it is then public without a token. `warning` names topics without any
    judgement in the evaluation's qrels (the published board says so too)."""
    snapshot = publication.publish(session, principal, campaign_id, evaluation_id=body.evaluation_id)
    session.commit()
    return {
        "snapshot_id": snapshot.id,
        "evaluation_id": snapshot.evaluation_id,
        "published_at": snapshot.published_at,
        "warning": snapshot.content.get("warning"),
    }


@router.get(
    "/public/campaigns/{campaign_id}/leaderboard",
    response_model=None,
    responses=BOARD_RESPONSES,
    dependencies=[public()],
)
def published(
    campaign_id: Id,
    session: SessionDep,
    filters: RunTypes,
    measure: MeasureQuery = None,
    format: Format = "json",
) -> Response:
    """A published leaderboard (no token needed), ranked and filtered by the same rule as the live one."""
    return _render(leaderboards.published_leaderboard(session, campaign_id, measure, filters), format)
