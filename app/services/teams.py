"""Teams and assessors of a campaign, and their tokens."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.services.auth import Principal, create_token
from app.services.campaigns import get_organised
from app.services.errors import Conflict, NotFound
from app.storage.models import Assessor, Role, Team


def create_team(session: Session, principal: Principal, campaign_id: int, name: str) -> tuple[Team, str]:
    """Register a team and issue its first token (returned in plain text once)."""
    get_organised(session, principal, campaign_id)
    team = Team(campaign_id=campaign_id, name=name)
    session.add(team)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:
        raise Conflict(f"a team named {name!r} exists already in this campaign") from None
    return team, create_token(session, Role.team, team_id=team.id, label=f"team {name}")


def list_teams(session: Session, principal: Principal, campaign_id: int) -> list[Team]:
    """The campaign's teams (organisers only)."""
    get_organised(session, principal, campaign_id)
    return list(session.scalars(select(Team).where(Team.campaign_id == campaign_id).order_by(Team.id)))


def issue_team_token(session: Session, principal: Principal, team_id: int) -> str:
    """A further token for a team."""
    team = session.get(Team, team_id)
    if team is None:
        raise NotFound(f"team {team_id} not found")
    get_organised(session, principal, team.campaign_id)
    return create_token(session, Role.team, team_id=team.id, label=f"team {team.name}")


def create_assessor(session: Session, principal: Principal, campaign_id: int, name: str) -> tuple[Assessor, str]:
    """Register an assessor and issue its token."""
    get_organised(session, principal, campaign_id)
    assessor = Assessor(campaign_id=campaign_id, name=name)
    session.add(assessor)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:
        raise Conflict(f"an assessor named {name!r} exists already in this campaign") from None
    return assessor, create_token(session, Role.assessor, assessor_id=assessor.id, label=f"assessor {name}")


def list_assessors(session: Session, principal: Principal, campaign_id: int) -> list[Assessor]:
    """The campaign's assessors (organisers only)."""
    get_organised(session, principal, campaign_id)
    return list(session.scalars(select(Assessor).where(Assessor.campaign_id == campaign_id).order_by(Assessor.id)))
