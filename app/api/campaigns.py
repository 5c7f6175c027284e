"""Campaigns: create, list, read, change settings, open and close submissions."""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from app.api.security import Member, Organiser, SessionDep
from app.services import campaigns as service
from app.services.inputs import Id, Text
from app.storage.models import CampaignStatus, TaskKind, TeamResults

router = APIRouter(prefix="/api/campaigns", tags=["campaigns"])
MAX_GRADE = "The grade scale 0..max_grade: 1 is binary (relevant = 1), 2 as TREC-COVID's 0/1/2, at most 10"
AUDIO_ON = "The judging page starts with the video's sound on (the assessor may still mute it)"
INTERLEAVE_EVERY = (
    "Within a topic, a second opinion or an item put off for later comes after every this many first-round verdicts"
    " of the assessor; 0: only when the topic's first round is done"
)
ANONYMISE_TEAMS = (
    'The published board names teams "Team A", "Team B", ... in the order of their first submissions (the JSON and'
    " CSV too); organisers' own boards keep the names"
)


class CampaignIn(BaseModel):
    """A new campaign."""

    name: Text = Field(min_length=1, max_length=200)
    task_kind: TaskKind
    description: Text = Field(default="", max_length=100_000)
    max_results: int = Field(default=1000, gt=0, le=100_000)
    max_runs_per_team: int = Field(default=10, gt=0, le=1000)
    submission_opens_at: datetime | None = None
    submission_closes_at: datetime | None = None
    media_url_template: Text | None = Field(default=None, max_length=2000)
    team_results: TeamResults = Field(
        default=TeamResults.own,
        description="What teams see before publication: `own` (their runs' scores and each topic's best and median "
        "over all runs, no ranks) or `hidden` (nothing)",
    )
    max_grade: int = Field(default=1, ge=1, le=10, description=MAX_GRADE)


class CampaignPatch(BaseModel):
    """Settings to change; omitted fields stay as they are, null clears only the optional ones (dates, media)."""

    model_config = ConfigDict(extra="forbid")

    # Omitted means unchanged; the defaults are never validated, so an explicit null is refused (422).
    # To mypy such a None default lies outside the field's type: those lines' ignores say "omitted".
    description: Text = Field(default=None, max_length=100_000)  # type: ignore[assignment]  # omitted
    max_results: int = Field(default=None, gt=0, le=100_000)  # type: ignore[assignment]  # omitted
    max_runs_per_team: int = Field(default=None, gt=0, le=1000)  # type: ignore[assignment]  # omitted
    submission_opens_at: datetime | None = None
    submission_closes_at: datetime | None = None
    media_url_template: Text | None = Field(default=None, max_length=2000)
    team_results: TeamResults = Field(  # type: ignore[assignment]  # omitted
        default=None, description="`own` or `hidden` (see CampaignIn)"
    )
    max_grade: int = Field(  # type: ignore[assignment]  # omitted
        default=None, ge=1, le=10, description=MAX_GRADE + "; never below a grade stored already"
    )
    audio_on: bool = Field(default=None, description=AUDIO_ON)  # type: ignore[assignment]  # omitted
    interleave_every: int = Field(  # type: ignore[assignment]  # omitted
        default=None, ge=0, le=1000, description=INTERLEAVE_EVERY
    )
    anonymise_teams: bool = Field(default=None, description=ANONYMISE_TEAMS)  # type: ignore[assignment]  # omitted


class CampaignOut(BaseModel):
    """A campaign as the API shows it."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    task_kind: TaskKind
    status: CampaignStatus
    description: str
    max_results: int
    max_runs_per_team: int
    submission_opens_at: datetime | None
    submission_closes_at: datetime | None
    media_url_template: str | None
    team_results: TeamResults
    max_grade: int
    audio_on: bool = Field(description=AUDIO_ON)
    interleave_every: int = Field(description=INTERLEAVE_EVERY)
    anonymise_teams: bool = Field(description=ANONYMISE_TEAMS)
    created_at: datetime


@router.post("", status_code=201, response_model=CampaignOut)
def create_campaign(body: CampaignIn, session: SessionDep, principal: Organiser) -> CampaignOut:
    """Create a campaign in `draft` status."""
    if body.media_url_template:
        from app.services.collection import check_url_template

        check_url_template(body.media_url_template)
    campaign = service.create_campaign(session, principal, service.CampaignSpec(**body.model_dump()))
    session.commit()
    return CampaignOut.model_validate(campaign)


@router.get("", response_model=list[CampaignOut])
def list_campaigns(session: SessionDep, principal: Member) -> list[CampaignOut]:
    """Campaigns the caller belongs to."""
    return [CampaignOut.model_validate(c) for c in service.list_campaigns(session, principal)]


@router.get("/{campaign_id}", response_model=CampaignOut)
def get_campaign(campaign_id: Id, session: SessionDep, principal: Member) -> CampaignOut:
    """One campaign."""
    return CampaignOut.model_validate(service.get_campaign(session, principal, campaign_id))


@router.patch("/{campaign_id}", response_model=CampaignOut)
def update_campaign(campaign_id: Id, body: CampaignPatch, session: SessionDep, principal: Organiser) -> CampaignOut:
    """Change a campaign's settings."""
    campaign = service.update_campaign(session, principal, campaign_id, body.model_dump(exclude_unset=True))
    session.commit()
    return CampaignOut.model_validate(campaign)


@router.post("/{campaign_id}/open", response_model=CampaignOut)
def open_submissions(campaign_id: Id, session: SessionDep, principal: Organiser) -> CampaignOut:
    """Open submissions (from draft, or re-open a closed campaign)."""
    campaign = service.set_status(session, principal, campaign_id, CampaignStatus.open)
    session.commit()
    return CampaignOut.model_validate(campaign)


@router.post("/{campaign_id}/close", response_model=CampaignOut)
def close_submissions(campaign_id: Id, session: SessionDep, principal: Organiser) -> CampaignOut:
    """Close submissions."""
    campaign = service.set_status(session, principal, campaign_id, CampaignStatus.closed)
    session.commit()
    return CampaignOut.model_validate(campaign)
