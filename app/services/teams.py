"""Teams and assessors of a campaign, and their tokens."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.services.auth import Principal, create_token
from app.services.campaigns import get_organised
from app.services.errors import Conflict, NotFound
from app.services.model_judging import check_provenance
from app.storage.models import Assessor, AssessorKind, Campaign, Role, TaskKind, Team

Member = TypeVar("Member", Team, Assessor)


def _create_member(
    session: Session,
    principal: Principal,
    campaign_id: int,
    model: type[Member],
    role: Role,
    name: str,
    **fields: Any,
) -> tuple[Member, str]:
    """Register a team or assessor (with its other `fields`) and issue its first token (returned in plain text once)."""
    get_organised(session, principal, campaign_id)
    member = model(campaign_id=campaign_id, name=name, **fields)
    session.add(member)
    try:
        with session.begin_nested():
            session.flush()
    except IntegrityError:
        raise Conflict(f"a {role.value} named {name!r} exists already in this campaign") from None
    team_id = member.id if role is Role.team else None
    assessor_id = None if role is Role.team else member.id
    return member, create_token(session, role, label=f"{role.value} {name}", team_id=team_id, assessor_id=assessor_id)


def create_team(session: Session, principal: Principal, campaign_id: int, name: str) -> tuple[Team, str]:
    """Register a team and issue its first token."""
    return _create_member(session, principal, campaign_id, Team, Role.team, name)


def list_teams(session: Session, principal: Principal, campaign_id: int) -> list[Team]:
    """The campaign's teams (organisers only)."""
    get_organised(session, principal, campaign_id)
    return list(session.scalars(select(Team).where(Team.campaign_id == campaign_id).order_by(Team.id)))


def create_assessor(
    session: Session,
    principal: Principal,
    campaign_id: int,
    name: str,
    *,
    kind: AssessorKind = AssessorKind.human,
    provenance: dict[str, Any] | None = None,
) -> tuple[Assessor, str]:
    """Register an assessor, a person or a model (with its provenance: model, version, config_hash, parameters),
    and issue its token."""
    stored = check_provenance(kind, provenance)
    fields = {"kind": kind.value, "provenance": stored}
    return _create_member(session, principal, campaign_id, Assessor, Role.assessor, name, **fields)


def list_assessors(session: Session, principal: Principal, campaign_id: int) -> list[Assessor]:
    """The campaign's assessors (organisers only)."""
    get_organised(session, principal, campaign_id)
    return list(session.scalars(select(Assessor).where(Assessor.campaign_id == campaign_id).order_by(Assessor.id)))


def assessor_task_kind(session: Session, assessor_id: int) -> TaskKind:
    """What the assessor's campaign judges: shots (the judging page) or moments (the marking page)."""
    kind = session.scalar(
        select(Campaign.task_kind).join(Assessor, Assessor.campaign_id == Campaign.id).where(Assessor.id == assessor_id)
    )
    if kind is None:
        raise NotFound(f"assessor {assessor_id} not found")
    return kind
