"""The organiser's overview of a campaign: the JSON twin of the organiser page (/organise/campaigns/{id})."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, computed_field

from app.api.security import Organiser, SessionDep, role
from app.services import organiser_view
from app.services.inputs import Id
from app.storage.models import Role

router = APIRouter(prefix="/api", tags=["organiser"])
PANEL_ROLE = role(Role.organiser)
"""The role the organiser page's panel (app/web/organiser_page.py, the HTML twin of this view) declares."""


class _Out(BaseModel):
    """Read from the service's dataclasses."""

    model_config = ConfigDict(from_attributes=True)


class RoundOut(_Out):
    """Judging tasks of one round of a topic (1 = first, 2 = quality-control second opinion)."""

    round: int
    total: int
    done: int


class TopicOut(_Out):
    """One topic's judging: round-1 tasks done of total, relevant so far, awaiting adjudication, its assessors."""

    topic: str
    title: str
    pooled: int = Field(description="Pooled items, sampled or not")
    total: int = Field(description="Round-1 tasks: the sampled items")
    judged: int = Field(description="Round-1 tasks done")
    relevant: int = Field(description="Items whose settled verdict (adjudication, else first round) is relevant")
    awaiting_adjudication: int
    rounds: list[RoundOut]
    assessors: list[str]


class AssessorOut(_Out):
    """One assessor's pace and the working time their open tasks should take."""

    assessor_id: int
    assessor: str
    topics: list[str]
    judged: int = Field(description="Judgements made in the pool, all rounds")
    mean_seconds: float | None = Field(description="Mean seconds per judgement")
    recent_seconds: float | None = Field(description="Median seconds of the last 50 judgements: the recent pace")
    remaining: int = Field(description="Open tasks this assessor may take")
    eta_seconds: float | None = Field(description="remaining x recent_seconds; null until there is a pace")
    last_judged_at: datetime | None


class JudgingOut(_Out):
    """The pool's judging as a whole."""

    total: int
    done: int
    remaining: int
    unassigned: int = Field(description="Open tasks of topics no assessor is assigned")
    eta_seconds: float | None = Field(description="The slowest assessor's time left (they judge side by side)")


class SecondOpinionOut(_Out):
    """An open quality-control task."""

    task_id: int
    topic: str
    shot_id: str
    reason: str
    leased_to: str | None


class SecondOpinionsOut(_Out):
    """The quality-control queue (items: the first 100 open tasks)."""

    open: int
    leased: int
    done: int
    items: list[SecondOpinionOut]


class AdjudicationItemOut(_Out):
    """An item awaiting the organiser's decision, with each round's verdict."""

    pool_item_id: int
    topic: str
    shot_id: str
    verdicts: dict[str, str]


class AdjudicationOut(_Out):
    """The adjudication queue (items: the first 100); decide with POST /api/pools/{pool_id}/adjudication."""

    size: int
    items: list[AdjudicationItemOut]


class JobOut(_Out):
    """An evaluation or analysis job; cancel a queued or running one with POST `cancel_url`."""

    type: Literal["evaluation", "analysis"]
    id: int
    kind: str
    label: str
    status: str
    progress: float
    attempts: int
    cancel_requested: bool
    cancellable: bool
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None

    @computed_field  # type: ignore[prop-decorator]  # mypy refuses decorators over @property; pydantic's own form
    @property
    def url(self) -> str:
        """Where the job's status (and an analysis's result) is read."""
        return f"/api/{'evaluations' if self.type == 'evaluation' else 'analyses'}/{self.id}"

    @computed_field  # type: ignore[prop-decorator]  # mypy refuses decorators over @property; pydantic's own form
    @property
    def cancel_url(self) -> str:
        """Where to POST to cancel the job."""
        return f"{self.url}/cancel"


class OverviewOut(_Out):
    """Everything the organiser page shows of a campaign, as of `as_of`."""

    campaign_id: int
    name: str
    status: str
    task_kind: str
    as_of: datetime
    pool_id: int | None
    pool_kind: str | None
    judging: JudgingOut
    topics: list[TopicOut]
    assessors: list[AssessorOut]
    second_opinions: SecondOpinionsOut
    adjudication: AdjudicationOut
    jobs: list[JobOut]


@router.get("/campaigns/{campaign_id}/overview", response_model=OverviewOut)
def overview(campaign_id: Id, session: SessionDep, principal: Organiser) -> OverviewOut:
    """Judging progress per topic and assessor, time left, QC and adjudication queues, and the campaign's jobs."""
    return OverviewOut.model_validate(organiser_view.campaign_view(session, principal, campaign_id))
