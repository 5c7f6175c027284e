"""Token lifecycle over REST (list, revoke), the judging link exchange, and a campaign's audit trail."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict

from app.api.security import (
    LinkCredentials,
    Member,
    Organiser,
    SessionDep,
    checked_credential,
    credential_of,
    public,
)
from app.services import audit, tokens
from app.services.errors import Unauthenticated
from app.services.inputs import Id
from app.storage.audit import AUDITED_TABLES, actor_of, set_actor
from app.storage.models import ApiToken

router = APIRouter(prefix="/api", tags=["tokens"])

if TYPE_CHECKING:
    AuditTable = str  # a Literal built at run time is opaque to a type checker: to it, a table's name
else:
    AuditTable = Literal[AUDITED_TABLES]  # the audited tables, an enum in the OpenAPI schema


class TokenInfo(BaseModel):
    """A token's record: never its secret (only a hash is stored)."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    role: str
    label: str
    campaign_id: int | None
    team_id: int | None
    assessor_id: int | None
    created_at: datetime
    expires_at: datetime | None
    revoked_at: datetime | None


class SessionOut(BaseModel):
    """An assessor session token traded for a judging link, and when it expires."""

    token: str
    expires_at: datetime


class AuditEventOut(BaseModel):
    """One state change: who (`actor`), when, what (table, row, action), and the changed columns before and after."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    at: datetime
    table_name: str
    row_id: str | None
    action: str
    actor: dict[str, Any]
    before: dict[str, Any] | None
    after: dict[str, Any] | None


class AuditPage(BaseModel):
    """A page of audit events; `next` is the `after` of the following page (null on the last one)."""

    events: list[AuditEventOut]
    next: int | None


@router.get("/campaigns/{campaign_id}/tokens", response_model=list[TokenInfo])
def list_tokens(campaign_id: Id, session: SessionDep, principal: Organiser) -> list[TokenInfo]:
    """The campaign's tokens (organisers', teams', assessors'): ids, labels, roles, dates; never the secrets."""
    return [TokenInfo.model_validate(t) for t in tokens.list_tokens(session, principal, campaign_id)]


@router.post("/tokens/{token_id}/revoke", response_model=TokenInfo)
def revoke_token(token_id: Id, session: SessionDep, principal: Member) -> TokenInfo:
    """Revoke a token: one's own, or (organisers) one of a campaign organised; it gets 401 from now on."""
    token = tokens.revoke_token(session, principal, token_id)
    session.commit()
    return TokenInfo.model_validate(token)


@router.post("/judging/session", status_code=201, response_model=SessionOut, dependencies=[public()])
def exchange_judge_link(
    request: Request,
    session: SessionDep,
    link: LinkCredentials,
) -> SessionOut:
    """Trade a one-time judging link (sent as `Authorization: Bearer <link>`) for an assessor session token.

    The link is the secret after `#link=` in a `judge_url` (the judging page reads it from the URL fragment, which
    no server sees, and POSTs it here). It is spent at once; a used, expired or unknown link gets 401 and counts as
    a failed authentication.
    """
    set_actor(session, actor_of("judge_link"))
    lifetime = request.app.state.settings.judge_session_seconds

    def exchange(link: str | None) -> tuple[str, ApiToken]:
        if not link:
            raise Unauthenticated("missing judging link (Authorization: Bearer <link>)")
        return tokens.exchange_judge_link(session, link, lifetime)

    plain, token = checked_credential(request, credential_of(link), exchange)
    session.commit()
    return SessionOut(token=plain, expires_at=token.expires_at)


@router.get("/campaigns/{campaign_id}/audit", response_model=AuditPage)
def campaign_audit(
    campaign_id: Id,
    session: SessionDep,
    principal: Organiser,
    table: Annotated[AuditTable | None, Query(description="Only changes of this table")] = None,
    since: Annotated[
        datetime | None, Query(description="Only changes at or after this moment (with a time zone)")
    ] = None,
    after: Annotated[
        int | None, Query(ge=0, le=2**63 - 1, description="Only events after this id (the cursor)")
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> AuditPage:
    """Every state change of the campaign (organisers): who, when, what, before and after, oldest first."""
    events = audit.campaign_events(session, principal, campaign_id, table=table, since=since, after=after, limit=limit)
    return AuditPage(
        events=[AuditEventOut.model_validate(e) for e in events],
        next=events[-1].id if len(events) == limit else None,
    )
