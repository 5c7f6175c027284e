"""Teams and assessors of a campaign, with their tokens."""

from __future__ import annotations

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from app.api.security import Organiser, SessionDep
from app.services import teams as service
from app.services.inputs import Id, Text

router = APIRouter(prefix="/api", tags=["teams"])


class NameIn(BaseModel):
    """A name for a new team or assessor."""

    name: Text = Field(min_length=1, max_length=200)


class MemberOut(BaseModel):
    """A team or assessor."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    campaign_id: int
    name: str


class MemberWithToken(MemberOut):
    """A new team or assessor with its token, shown this once."""

    token: str


class TokenOut(BaseModel):
    """A new token, shown this once."""

    token: str


@router.post("/campaigns/{campaign_id}/teams", status_code=201, response_model=MemberWithToken)
def create_team(campaign_id: Id, body: NameIn, session: SessionDep, principal: Organiser) -> MemberWithToken:
    """Register a team; the response carries its token."""
    team, token = service.create_team(session, principal, campaign_id, body.name)
    session.commit()
    return MemberWithToken(id=team.id, campaign_id=team.campaign_id, name=team.name, token=token)


@router.get("/campaigns/{campaign_id}/teams", response_model=list[MemberOut])
def list_teams(campaign_id: Id, session: SessionDep, principal: Organiser) -> list[MemberOut]:
    """The campaign's teams."""
    return [MemberOut.model_validate(t) for t in service.list_teams(session, principal, campaign_id)]


@router.post("/teams/{team_id}/tokens", status_code=201, response_model=TokenOut)
def issue_team_token(team_id: Id, session: SessionDep, principal: Organiser) -> TokenOut:
    """Issue another token for a team."""
    token = service.issue_team_token(session, principal, team_id)
    session.commit()
    return TokenOut(token=token)


@router.post("/campaigns/{campaign_id}/assessors", status_code=201, response_model=MemberWithToken)
def create_assessor(campaign_id: Id, body: NameIn, session: SessionDep, principal: Organiser) -> MemberWithToken:
    """Register an assessor; the response carries its token."""
    assessor, token = service.create_assessor(session, principal, campaign_id, body.name)
    session.commit()
    return MemberWithToken(id=assessor.id, campaign_id=assessor.campaign_id, name=assessor.name, token=token)


@router.get("/campaigns/{campaign_id}/assessors", response_model=list[MemberOut])
def list_assessors(campaign_id: Id, session: SessionDep, principal: Organiser) -> list[MemberOut]:
    """The campaign's assessors."""
    return [MemberOut.model_validate(a) for a in service.list_assessors(session, principal, campaign_id)]
