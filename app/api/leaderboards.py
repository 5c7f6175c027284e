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


class BoardRow(BaseModel):
    """One run on a board. `rank` only on ranked boards (organisers, published); `per_topic` only in a team's own
    view before publication (measure -> topic -> value)."""

    rank: int | None = None
    run_id: int
    run: str
    team: str | None
    system_type: str
    training_type: str
    novelty: bool
    priority: int
    score: float | None
    scores: dict[str, float | None]
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
    warning: str | None = Field(default=None, description="Set when some topics have no judgement: names them")
    measure: str
    measures: list[str]
    filters: leaderboards.Filters = Field(description="The filters it was built with (null: not filtered)")
    published: bool
    team_results: Literal["own"] | None = None
    rows: list[BoardRow]
    by_system_type: dict[str, list[BoardRow]]
    per_topic: list[TopicRow]


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
) -> Response:
    """Groups of the top runs passing the filters with no significant difference, as in the TRECVID overview."""
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
) -> Response:
    """The significance groups of the published board's measure: frozen with it, or over the runs passing the
    filters (computed with the same defaults)."""
    return json_response(leaderboards.published_significance(session, campaign_id, filters))


@router.get("/campaigns/{campaign_id}/report")
def live_report(campaign_id: Id, session: SessionDep, principal: Organiser) -> dict[str, object]:
    """The campaign report of the newest evaluation (organisers, before publication)."""
    return reports.live_report(session, principal, campaign_id)


@router.get("/public/campaigns/{campaign_id}/report", dependencies=[public()])
def published_report(campaign_id: Id, session: SessionDep) -> dict[str, object]:
    """The report frozen with the published leaderboard."""
    return snapshots.published_snapshot(session, campaign_id).content["report"]


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
