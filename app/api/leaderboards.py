"""Leaderboards: live (organisers; a team sees its own rows) and published (public, no token). JSON or CSV."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel

from app.api.media import CSV_OR_JSON
from app.api.security import Member, Organiser, SessionDep, public
from app.evaluation.registry import measure_help
from app.services import leaderboards, publication, reports
from app.services.inputs import Id, Text
from app.services.tables import leaderboard_csv, per_topic_csv

router = APIRouter(prefix="/api", tags=["leaderboards"])
Format = Literal["json", "csv", "topics.csv"]
MeasureQuery = Annotated[Text | None, Query(description=measure_help())]


class PublishIn(BaseModel):
    """Which evaluation to publish (the newest finished one when omitted)."""

    evaluation_id: Id | None = None


def _render(board: dict[str, object], fmt: Format) -> dict[str, object] | Response:
    """The board as JSON, or one of its tables as CSV."""
    if fmt == "json":
        return board
    text = leaderboard_csv(board) if fmt == "csv" else per_topic_csv(board)
    return Response(text, media_type="text/csv; charset=utf-8")


@router.get("/campaigns/{campaign_id}/leaderboard", response_model=None, responses=CSV_OR_JSON)
def live(
    campaign_id: Id,
    session: SessionDep,
    principal: Member,
    measure: MeasureQuery = None,
    system_type: Text | None = None,
    training_type: Text | None = None,
    novelty: bool | None = None,
    evaluation_id: Id | None = None,
    format: Format = "json",
) -> dict[str, object] | Response:
    """The current leaderboard, sorted by `measure`, filtered by run type."""
    filters = leaderboards.Filters(system_type, training_type, novelty)
    board = leaderboards.live_leaderboard(
        session, principal, campaign_id, measure=measure, evaluation_id=evaluation_id, filters=filters
    )
    return _render(board, format)


@router.get("/campaigns/{campaign_id}/significance")
def significance(
    campaign_id: Id,
    session: SessionDep,
    principal: Organiser,
    measure: MeasureQuery = None,
    top: int = Query(10, ge=2, le=100),
    method: Literal["tukey", "pairwise"] = "tukey",
    n_resamples: int = Query(10_000, ge=100, le=1_000_000),
    seed: int = Query(0, ge=0, le=2**32 - 1),
) -> dict[str, object]:
    """Groups of the top runs with no significant difference, as in the TRECVID overview."""
    return leaderboards.live_significance(
        session, principal, campaign_id, measure=measure, top=top, method=method, n_resamples=n_resamples, seed=seed
    )


@router.get("/public/campaigns/{campaign_id}/significance", dependencies=[public()])
def published_significance(campaign_id: Id, session: SessionDep) -> dict[str, object]:
    """The significance groups frozen with the published leaderboard."""
    return leaderboards.published_snapshot(session, campaign_id).content["significance"]


@router.get("/campaigns/{campaign_id}/report")
def live_report(campaign_id: Id, session: SessionDep, principal: Organiser) -> dict[str, object]:
    """The campaign report of the newest evaluation (organisers, before publication)."""
    return reports.live_report(session, principal, campaign_id)


@router.get("/public/campaigns/{campaign_id}/report", dependencies=[public()])
def published_report(campaign_id: Id, session: SessionDep) -> dict[str, object]:
    """The report frozen with the published leaderboard."""
    return leaderboards.published_snapshot(session, campaign_id).content["report"]


@router.post("/campaigns/{campaign_id}/publish", status_code=201)
def publish(campaign_id: Id, body: PublishIn, session: SessionDep, principal: Organiser) -> dict[str, object]:
    """Freeze and publish the leaderboard; it is then public without a token."""
    snapshot = publication.publish(session, principal, campaign_id, evaluation_id=body.evaluation_id)
    session.commit()
    return {"snapshot_id": snapshot.id, "evaluation_id": snapshot.evaluation_id, "published_at": snapshot.published_at}


@router.get(
    "/public/campaigns/{campaign_id}/leaderboard", response_model=None, responses=CSV_OR_JSON, dependencies=[public()]
)
def published(
    campaign_id: Id,
    session: SessionDep,
    measure: MeasureQuery = None,
    system_type: Text | None = None,
    training_type: Text | None = None,
    novelty: bool | None = None,
    format: Format = "json",
) -> dict[str, object] | Response:
    """A published leaderboard (no token needed)."""
    filters = leaderboards.Filters(system_type, training_type, novelty)
    return _render(leaderboards.published_leaderboard(session, campaign_id, measure, filters), format)
