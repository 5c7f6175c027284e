"""Teams and assessors of a campaign, with their tokens."""

from __future__ import annotations

from fastapi import APIRouter, Request
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


class AssessorWithToken(MemberWithToken):
    """A new assessor with its token and the judging link to send it, shown this once."""

    judge_url: str


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


@router.post("/campaigns/{campaign_id}/assessors", status_code=201, response_model=AssessorWithToken)
def create_assessor(
    campaign_id: Id, body: NameIn, request: Request, session: SessionDep, principal: Organiser
) -> AssessorWithToken:
    """Register an assessor; the response carries its token and the judging link (`judge_url`) to send it."""
    assessor, token = service.create_assessor(session, principal, campaign_id, body.name)
    session.commit()
    return AssessorWithToken(
        id=assessor.id,
        campaign_id=assessor.campaign_id,
        name=assessor.name,
        token=token,
        judge_url=str(request.url_for("judge_page").include_query_params(token=token)),
    )


@router.get("/campaigns/{campaign_id}/assessors", response_model=list[MemberOut])
def list_assessors(campaign_id: Id, session: SessionDep, principal: Organiser) -> list[MemberOut]:
    """The campaign's assessors."""
    return [MemberOut.model_validate(a) for a in service.list_assessors(session, principal, campaign_id)]
