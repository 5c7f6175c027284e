"""Teams and assessors of a campaign, with their tokens."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from app.api.security import Organiser, SessionDep
from app.services import teams as service
from app.services import tokens
from app.services.auth import Principal
from app.services.inputs import Id, Text
from app.storage.models import AssessorKind, Role, TaskKind

MAX_TOKEN_SECONDS = 10 * 365 * 24 * 3600  # ten years: a longer lifetime is no lifetime

router = APIRouter(prefix="/api", tags=["teams"])


class NameIn(BaseModel):
    """A name for a new team or assessor."""

    name: Text = Field(min_length=1, max_length=200)


class ProvenanceIn(BaseModel):
    """Where a model assessor's verdicts come from: the model, its version, its configuration's hash, its parameters."""

    model_config = ConfigDict(extra="forbid")

    model: Text = Field(min_length=1, max_length=200, description="The model's name (its family shows in reports)")
    version: Text | None = Field(default=None, min_length=1, max_length=200)
    config_hash: Text | None = Field(
        default=None, min_length=1, max_length=64, description="A hash of the prompt and configuration"
    )
    parameters: dict[str, Any] | None = Field(
        default=None, description="Sampling parameters and the like (16 KiB of JSON at most, with the rest)"
    )


class AssessorIn(NameIn):
    """A new assessor: a person (the judging page) or a model (the batch judging API, with its provenance)."""

    kind: AssessorKind = AssessorKind.human
    provenance: ProvenanceIn | None = Field(default=None, description="Required for models, refused for people")


class MemberOut(BaseModel):
    """A team or assessor."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    campaign_id: int
    name: str


class MemberWithToken(MemberOut):
    """A new team or assessor with its token, shown this once."""

    token: str


class AssessorOut(MemberOut):
    """An assessor: a person or a model, with the model's provenance."""

    kind: AssessorKind
    provenance: dict[str, Any] | None


class AssessorWithToken(AssessorOut):
    """A new assessor with its token and, for a person, a one-time judging link to send it (valid for a while, used
    once); a model judges through the batch API with its token (no link)."""

    token: str
    judge_url: str | None
    judge_url_expires_at: datetime | None


class TokenIn(BaseModel):
    """Options of a further token: revoke the member's previous tokens (rotation), expire after some seconds."""

    revoke_previous: bool = False
    expires_in_seconds: int | None = Field(default=None, ge=60, le=MAX_TOKEN_SECONDS)


class TokenOut(BaseModel):
    """A new token, shown this once, with its id (to revoke it) and expiry."""

    token: str
    id: int
    expires_at: datetime | None


class JudgeLinkOut(BaseModel):
    """A one-time judging link for an assessor: the page trades it for a session token, so it works once."""

    judge_url: str
    expires_at: datetime


def _judge_url(request: Request, session: SessionDep, assessor_id: int, link: str) -> str:
    """The URL of the assessor's page (judging shots, or marking moments) carrying a one-time link (never a token).

    The link is in the fragment (`#link=...`): browsers never send it, so no request line, access log or proxy sees
    it; the page reads it and POSTs it to /api/judging/session.
    """
    page = "mark_page" if service.assessor_task_kind(session, assessor_id) is TaskKind.moments else "judge_page"
    return f"{request.url_for(page)}#{urlencode({'link': link})}"


def _issue(session: SessionDep, principal: Principal, role: Role, member_id: int, body: TokenIn | None) -> TokenOut:
    """Issue (and commit) a further token for a team or assessor."""
    body = body or TokenIn()
    row, plain = tokens.issue_member_token(
        session,
        principal,
        role,
        member_id,
        revoke_previous=body.revoke_previous,
        expires_in=body.expires_in_seconds,
    )
    session.commit()
    return TokenOut(token=plain, id=row.id, expires_at=row.expires_at)


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
def issue_team_token(team_id: Id, session: SessionDep, principal: Organiser, body: TokenIn | None = None) -> TokenOut:
    """Issue another token for a team; `revoke_previous` revokes its other tokens (rotation)."""
    return _issue(session, principal, Role.team, team_id, body)


@router.post("/assessors/{assessor_id}/tokens", status_code=201, response_model=TokenOut)
def issue_assessor_token(
    assessor_id: Id, session: SessionDep, principal: Organiser, body: TokenIn | None = None
) -> TokenOut:
    """Issue another token for an assessor; `revoke_previous` revokes its other tokens and unused judging links."""
    return _issue(session, principal, Role.assessor, assessor_id, body)


@router.post("/assessors/{assessor_id}/judge-link", status_code=201, response_model=JudgeLinkOut)
def issue_judge_link(assessor_id: Id, request: Request, session: SessionDep, principal: Organiser) -> JudgeLinkOut:
    """A new one-time judging link for an assessor (to send it when the last one expired or was used)."""
    lifetime = request.app.state.settings.judge_link_seconds
    link, expires_at = tokens.issue_judge_link(session, principal, assessor_id, lifetime)
    session.commit()
    return JudgeLinkOut(judge_url=_judge_url(request, session, assessor_id, link), expires_at=expires_at)


@router.post("/campaigns/{campaign_id}/assessors", status_code=201, response_model=AssessorWithToken)
def create_assessor(
    campaign_id: Id, body: AssessorIn, request: Request, session: SessionDep, principal: Organiser
) -> AssessorWithToken:
    """Register an assessor; the response carries its token and, for a person, a one-time judging link
    (`judge_url`) to send it. A model (`kind: model`, with its `provenance`) uses its token on the batch API.

    The link carries no token: the judging page trades it (by POST) for a session token, once, before it expires.
    """
    provenance = body.provenance.model_dump(exclude_none=True) if body.provenance is not None else None
    assessor, token = service.create_assessor(
        session, principal, campaign_id, body.name, kind=body.kind, provenance=provenance
    )
    judge_url, expires_at = None, None
    if body.kind is AssessorKind.human:
        link, expires_at = tokens.issue_judge_link(
            session, None, assessor.id, request.app.state.settings.judge_link_seconds
        )
        judge_url = _judge_url(request, session, assessor.id, link)
    session.commit()
    return AssessorWithToken(
        id=assessor.id,
        campaign_id=assessor.campaign_id,
        name=assessor.name,
        kind=AssessorKind(assessor.kind),
        provenance=assessor.provenance,
        token=token,
        judge_url=judge_url,
        judge_url_expires_at=expires_at,
    )


@router.get("/campaigns/{campaign_id}/assessors", response_model=list[AssessorOut])
def list_assessors(campaign_id: Id, session: SessionDep, principal: Organiser) -> list[AssessorOut]:
    """The campaign's assessors, people and models (with their provenance)."""
    return [AssessorOut.model_validate(a) for a in service.list_assessors(session, principal, campaign_id)]
