"""Moment pools and marking: build a moment pool, assessors mark relevant moments, cut a moment ground truth,
agreement. Assessor payloads carry the topic, the video and a proposed segment: never runs, ranks or others' marks."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, Field

from app.api.pools import PoolOut, RunSelection
from app.api.security import Organiser, SessionDep, role
from app.services import moment_judging
from app.services.auth import Principal
from app.services.inputs import Id, Text
from app.services.moment_judging import MarkView
from app.storage.models import Role

router = APIRouter(prefix="/api", tags=["moment judging"])
Assessor = Annotated[Principal, role(Role.assessor)]
Seconds = Annotated[float, Field(allow_inf_nan=False)]


class MomentPoolIn(RunSelection):
    """How to build a moment pool: each run's top `depth` moments per topic, merged when IoU >= `iou`."""

    depth: int = Field(default=10, ge=1, le=100_000, description="The top k moments of every run per topic")
    iou: float = Field(default=0.5, gt=0, le=1, allow_inf_nan=False, description="Merge threshold (temporal IoU)")


class SegmentIn(BaseModel):
    """A marked relevant moment of the item's video, in seconds."""

    start: Seconds
    end: Seconds


class MarksIn(BaseModel):
    """The relevant moments of the item's video (an empty list: none relevant) and, optionally, the time it took."""

    segments: list[SegmentIn] = Field(max_length=moment_judging.MAX_SEGMENTS)
    seconds_spent: float | None = Field(default=None, ge=0, le=10**6, allow_inf_nan=False)
    change: bool = Field(
        default=False,
        description="Replace your own earlier marks on the item (going back to it). Without it, marks on an item you"
        " marked already are refused (409, naming your stored marks): two tabs never overwrite each other silently.",
    )


class LabelIn(BaseModel):
    """A label for a new moment ground-truth version, and how several assessors' marks of one item combine."""

    label: Text = Field(min_length=1, max_length=200)
    combine: Literal["first", "union", "majority", "all"] = Field(
        default="first",
        description="first: the first assessor's marks; union / majority / all: the time marked by any, by more than"
        " half, by all of the item's assessors",
    )
    allow_incomplete: bool = Field(
        default=False,
        description="Cut even when a topic has no mark at all (409 otherwise, saying how much is unmarked); the "
        "version lists those topics and boards scored on it warn about them",
    )


class TruthOut(BaseModel):
    """A moment ground-truth version (a qrels version of kind `moments`)."""

    id: int
    campaign_id: int
    label: str
    kind: str
    source: str
    pool_id: int | None
    n_entries: int
    combine: str | None = Field(default=None, description="How several assessors' marks of an item were combined")
    unjudged_topics: list[str] | None = Field(default=None, description="Topics no assessor had marked at the cut")


@router.post("/campaigns/{campaign_id}/moment-pools", status_code=201, response_model=PoolOut)
def create_moment_pool(campaign_id: Id, body: MomentPoolIn, session: SessionDep, principal: Organiser) -> PoolOut:
    """Build the moment pool of a closed moment campaign (assign its topics with POST /api/pools/{id}/assignments)."""
    spec = moment_judging.MomentPoolSpec(
        depth=body.depth,
        iou=body.iou,
        seed=body.seed,
        max_priority=body.max_priority,
        system_types=tuple(body.system_types) if body.system_types else None,
        run_ids=tuple(body.run_ids) if body.run_ids else None,
    )
    pool = moment_judging.create_moment_pool(session, principal, campaign_id, spec)
    out = PoolOut(
        id=pool.id,
        campaign_id=pool.campaign_id,
        kind=pool.kind,
        seed=pool.seed,
        params=pool.params,
        topics=moment_judging.moment_topic_counts(session, pool),
    )
    session.commit()
    return out


@router.get("/moment-pools/{pool_id}", response_model=PoolOut)
def get_moment_pool(pool_id: Id, session: SessionDep, principal: Organiser) -> PoolOut:
    """A moment pool with proposed and marked segments per topic."""
    pool = moment_judging.get_moment_pool(session, principal, pool_id)
    topics = moment_judging.moment_topic_counts(session, pool)
    return PoolOut(
        id=pool.id, campaign_id=pool.campaign_id, kind=pool.kind, seed=pool.seed, params=pool.params, topics=topics
    )


@router.get("/moment-pools/{pool_id}/agreement")
def agreement(pool_id: Id, session: SessionDep, principal: Organiser) -> dict[str, object]:
    """Inter-assessor agreement on segments: mean IoU of marked sets per topic, per assessor pair and overall."""
    return moment_judging.agreement(session, principal, pool_id)


@router.post("/moment-pools/{pool_id}/truth", status_code=201, response_model=TruthOut)
def cut_truth(pool_id: Id, body: LabelIn, session: SessionDep, principal: Organiser) -> TruthOut:
    """Freeze the marks as an immutable moment ground-truth version (evaluate with its id as qrels_version_id)."""
    version = moment_judging.cut_moment_truth(
        session, principal, pool_id, body.label, body.combine, allow_incomplete=body.allow_incomplete
    )
    out = TruthOut.model_validate(version, from_attributes=True)
    session.commit()
    return out


@router.get("/moment-truth/{version_id}")
def export_truth(version_id: Id, session: SessionDep, principal: Organiser) -> StreamingResponse:
    """A moment ground-truth version as a file: `topic<TAB>video<TAB>start<TAB>end` per segment."""
    body = moment_judging.export_moment_truth(session, principal, version_id)
    return StreamingResponse(body, media_type="text/tab-separated-values")


@router.post("/moment-judging/next", response_model=MarkView, responses={204: {"description": "Nothing left"}})
def next_item(session: SessionDep, principal: Assessor) -> MarkView | Response:
    """Your next proposed segment to mark (204 when every proposal of your topics is marked)."""
    view = moment_judging.next_item(session, principal)
    if view is None:
        return Response(status_code=204)
    return view


@router.post("/moment-judging/items/{item_id}", response_model=MarkView)
def submit(item_id: Id, body: MarksIn, session: SessionDep, principal: Assessor) -> MarkView:
    """Mark the relevant moments of an item's video (an empty list: none relevant), or change your marks (`change`).

    Marks on an item you marked already, without `change` (another tab, say), are a 409 naming your stored marks.
    """
    segments = [(s.start, s.end) for s in body.segments]
    view = moment_judging.mark(
        session, principal, item_id, segments, seconds_spent=body.seconds_spent, change=body.change
    )
    session.commit()
    return view


@router.get("/moment-judging/items/{item_id}", response_model=MarkView)
def own_item(item_id: Id, session: SessionDep, principal: Assessor) -> MarkView:
    """An item of yours, with your marks."""
    return moment_judging.own_item(session, principal, item_id)


@router.get("/moment-judging/progress")
def progress(session: SessionDep, principal: Assessor) -> dict[str, int]:
    """How many of your proposals you have marked."""
    return moment_judging.own_progress(session, principal)
