"""API tokens (stored hashed) and the principal a token speaks for."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.services.errors import Forbidden, NotFound, Unauthenticated
from app.storage.audit import actor_of, actor_setting, remember_actor
from app.storage.models import ApiToken, Assessor, Role, Team

TOKEN_PREFIX = "tp_"


SESSION_COOKIE = "trecpool_session"  # the browser session's cookie (app/web/session.py): a session token


@dataclass(frozen=True)
class Principal:
    """Who is calling: a role plus the team, assessor or campaign the token is bound to."""

    role: Role
    token_id: int
    campaign_id: int | None = None
    team_id: int | None = None
    assessor_id: int | None = None

    def may_organise(self, campaign_id: int) -> bool:
        """Whether this principal organises `campaign_id` (unbound organiser tokens organise all)."""
        return self.role is Role.organiser and self.campaign_id in (None, campaign_id)

    def actor(self) -> dict[str, Any]:
        """The audit trail's record of this principal."""
        return actor_of(
            "token",
            token_id=self.token_id,
            role=self.role.value,
            campaign_id=self.campaign_id,
            team_id=self.team_id,
            assessor_id=self.assessor_id,
        )


def hash_token(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_secret() -> str:
    """A fresh random token or link secret."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def create_token(
    session: Session,
    role: Role,
    *,
    label: str = "",
    campaign_id: int | None = None,
    team_id: int | None = None,
    assessor_id: int | None = None,
    expires_at: datetime | None = None,
) -> str:
    """Store a new token and return its plain text (shown once, never stored)."""
    return issue_token(
        session,
        role,
        label=label,
        campaign_id=campaign_id,
        team_id=team_id,
        assessor_id=assessor_id,
        expires_at=expires_at,
    )[1]


def issue_token(
    session: Session,
    role: Role,
    *,
    label: str = "",
    campaign_id: int | None = None,
    team_id: int | None = None,
    assessor_id: int | None = None,
    expires_at: datetime | None = None,
) -> tuple[ApiToken, str]:
    """Store a new token; return its row and its plain text (shown once, never stored)."""
    if role is Role.team:
        team = session.get(Team, team_id) if team_id is not None else None
        if team is None:
            raise NotFound(f"team {team_id} not found")
        campaign_id = team.campaign_id
    elif role is Role.assessor:
        assessor = session.get(Assessor, assessor_id) if assessor_id is not None else None
        if assessor is None:
            raise NotFound(f"assessor {assessor_id} not found")
        campaign_id = assessor.campaign_id
    if expires_at is not None and expires_at.tzinfo is None:
        raise ValueError("expires_at must carry a time zone")
    plain = new_secret()
    row = ApiToken(
        token_hash=hash_token(plain),
        role=role,
        label=label,
        campaign_id=campaign_id,
        team_id=team_id,
        assessor_id=assessor_id,
        expires_at=expires_at,
    )
    session.add(row)
    session.flush()
    return row, plain


def authenticate(session: Session, token: str | None) -> Principal:
    """The principal of a bearer token, or Unauthenticated."""
    if not token:
        raise Unauthenticated("missing bearer token (Authorization: Bearer <token>)")
    return _principal(session.scalar(select(ApiToken).where(ApiToken.token_hash == hash_token(token))))


def authenticate_actor(session: Session, token: str | None) -> Principal:
    """The principal of a bearer token, made the audit actor of the session's changes, in one round trip."""
    if not token:
        raise Unauthenticated("missing bearer token (Authorization: Bearer <token>)")
    actor = func.jsonb_strip_nulls(
        func.jsonb_build_object(
            "kind", "token",
            "token_id", ApiToken.id,
            "role", ApiToken.role,
            "campaign_id", ApiToken.campaign_id,
            "team_id", ApiToken.team_id,
            "assessor_id", ApiToken.assessor_id,
        )
    )  # fmt: skip
    query = select(ApiToken, actor_setting(actor)).where(ApiToken.token_hash == hash_token(token))
    row = session.execute(query).first()
    principal = _principal(row[0] if row is not None else None)
    remember_actor(session, principal.actor())
    return principal


def _principal(row: ApiToken | None) -> Principal:
    """The principal of a token row, or Unauthenticated if there is none or it is revoked or expired."""
    if row is None:
        raise Unauthenticated("invalid token")
    if row.revoked_at is not None:
        raise Unauthenticated("this token was revoked")
    if row.expires_at is not None and row.expires_at <= datetime.now(UTC):
        raise Unauthenticated("this token expired: ask for a new one")
    return Principal(
        role=row.role,
        token_id=row.id,
        campaign_id=row.campaign_id,
        team_id=row.team_id,
        assessor_id=row.assessor_id,
    )


def require_organiser(principal: Principal, campaign_id: int) -> None:
    """Forbidden unless the principal organises the campaign."""
    if not principal.may_organise(campaign_id):
        raise Forbidden("only the campaign's organisers may do this")
