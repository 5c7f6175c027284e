"""Campaign series: progress topics in sets, sealed until released, pooled and evaluated over several years' runs."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, Response
from pydantic import BaseModel, Field

from app.api.leaderboards import MeasureQuery, RunTypes, json_response
from app.api.pools import PoolIn, pool_spec
from app.api.security import Organiser, SessionDep, public
from app.services import pools
from app.services import series as service
from app.services.inputs import Id, Text

router = APIRouter(prefix="/api", tags=["series"])

SetName = Annotated[Text, Path(min_length=1, max_length=64, description="A progress set's name, e.g. A")]


class SeriesIn(BaseModel):
    """A new campaign series."""

    name: Text = Field(min_length=1, max_length=200)
    description: Text = Field(default="", max_length=100_000)


class MemberIn(BaseModel):
    """A campaign to put in the series."""

    campaign_id: Id


class ProgressTopicIn(BaseModel):
    """A progress topic and the set it belongs to."""

    number: Text = Field(min_length=1, max_length=64)
    title: Text = Field(min_length=1, max_length=10_000)
    description: Text = Field(default="", max_length=100_000)
    set: Text = Field(min_length=1, max_length=64, description="The progress set, e.g. A or B")


class ProgressTopicsIn(BaseModel):
    """Progress topics to copy into each campaign of the series."""

    topics: list[ProgressTopicIn] = Field(min_length=1, max_length=10_000)


class SeriesPoolIn(PoolIn):
    """A series pool: the usual pool body, over the runs of the chosen campaigns of the series (`run_ids` may name
    runs of any of them, `depths` only topics of the set, `verification` a model assessor of the host)."""

    campaign_ids: list[Id] = Field(
        min_length=1, max_length=1000, description="The series' campaigns whose runs are pooled; the newest is the host"
    )
    reuse: bool | None = Field(
        default=None,
        description="Top-up: an item an earlier pool of the series judged for the set keeps that settled verdict and "
        "gets no judging task (the default, except for a model-assisted pool: true with `verification` is a 422)",
    )


class SeriesPoolOut(BaseModel):
    """A series pool on its host campaign: judge, cut and evaluate it there as any pool."""

    id: int
    campaign_id: int = Field(description="The host campaign (the newest chosen)")
    kind: str
    seed: int
    params: dict[str, object]
    topics: list[dict[str, object]]
    reused: int = Field(description="Sampled items given an earlier pool's verdict instead of a judging task")


@router.post("/series", status_code=201, response_model=service.SeriesView)
def create_series(body: SeriesIn, session: SessionDep, principal: Organiser) -> service.SeriesView:
    """Create a campaign series (organiser tokens not bound to a campaign)."""
    view = service.series_view(session, service.create_series(session, principal, body.name, body.description))
    session.commit()
    return view


@router.get("/series", response_model=list[service.SeriesView])
def list_series(session: SessionDep, principal: Organiser) -> list[service.SeriesView]:
    """Every series with its campaigns and progress sets."""
    return service.list_series(session, principal)


@router.get("/series/{series_id}", response_model=service.SeriesView)
def get_series(series_id: Id, session: SessionDep, principal: Organiser) -> service.SeriesView:
    """A series with its campaigns and progress sets (each set's topics and release)."""
    return service.get_series(session, principal, series_id)


@router.post("/series/{series_id}/campaigns", response_model=service.SeriesView)
def add_campaign(series_id: Id, body: MemberIn, session: SessionDep, principal: Organiser) -> service.SeriesView:
    """Put a campaign in the series: it takes the series' progress topics (409 if it has closed submissions and
    lacks some)."""
    view = service.add_campaign(session, principal, series_id, body.campaign_id)
    session.commit()
    return view


@router.post("/series/{series_id}/topics", status_code=201, response_model=service.SeriesView)
def add_topics(series_id: Id, body: ProgressTopicsIn, session: SessionDep, principal: Organiser) -> service.SeriesView:
    """Add progress topics in named sets: copied into each campaign of the series; sealed until their set is
    released."""
    topics = [service.ProgressTopic(t.number, t.title, t.description, t.set) for t in body.topics]
    view = service.add_progress_topics(session, principal, series_id, topics)
    session.commit()
    return view


@router.post("/series/{series_id}/sets/{name}/release", response_model=service.SeriesView)
def release(series_id: Id, name: SetName, session: SessionDep, principal: Organiser) -> service.SeriesView:
    """Release a progress set: its judgements, scores and board reach teams and the public from now on."""
    view = service.release_set(session, principal, series_id, name)
    session.commit()
    return view


@router.post("/series/{series_id}/sets/{name}/pools", status_code=201, response_model=SeriesPoolOut)
def build_series_pool(
    series_id: Id, name: SetName, body: SeriesPoolIn, request: Request, session: SessionDep, principal: Organiser
) -> SeriesPoolOut:
    """Build one pool of a progress set over the runs of the chosen campaigns (top-up: earlier verdicts reused);
    judge it, cut its qrels and evaluate them on the host campaign as any pool."""
    pool = service.create_series_pool(
        session,
        principal,
        series_id,
        name,
        body.campaign_ids,
        pool_spec(body),
        reuse=body.reuse,
        memory_mb=request.app.state.settings.job_memory_mb,
    )
    session.commit()
    reused = pool.params.get("reused") or {}
    return SeriesPoolOut(
        id=pool.id,
        campaign_id=pool.campaign_id,
        kind=pool.kind,
        seed=pool.seed,
        params=pool.params,
        topics=pools.topic_counts(session, pool),
        reused=int(reused.get("items", 0)),
    )


@router.get("/series/{series_id}/pools/{pool_id}/reused")
def pool_reuse(series_id: Id, pool_id: Id, session: SessionDep, principal: Organiser) -> dict[str, object]:
    """A series pool's verdicts reused from earlier pools of the series: counted by origin, and item by item with
    where each was originally given (pool, campaign, assessor and whether a person, a model or an adjudication)."""
    return service.pool_reuse(session, principal, series_id, pool_id)


@router.get("/series/{series_id}/sets/{name}/board", response_model=None)
def board(
    series_id: Id,
    name: SetName,
    session: SessionDep,
    principal: Organiser,
    filters: RunTypes,
    measure: MeasureQuery = None,
    evaluation_id: Id | None = None,
) -> Response:
    """The set's board over every year's runs: each run with its campaign and team, mean and interval, rank interval
    and tier; per topic the best and median (organisers: sealed or not)."""
    return json_response(
        service.series_board(
            session, principal, series_id, name, measure=measure, evaluation_id=evaluation_id, filters=filters
        )
    )


@router.get("/public/series/{series_id}/sets/{name}/board", response_model=None, dependencies=[public()])
def public_board(
    series_id: Id, name: SetName, session: SessionDep, filters: RunTypes, measure: MeasureQuery = None
) -> Response:
    """A released set's board (no token needed); 403 while the set is sealed."""
    return json_response(service.series_board(session, None, series_id, name, measure=measure, filters=filters))
