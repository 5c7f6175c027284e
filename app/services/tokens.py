"""Token lifecycle: listing, revoking, rotating team and assessor tokens, and one-time judging links."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import CursorResult, select, update
from sqlalchemy.orm import Session

from app.services.auth import Principal, hash_token, issue_token, new_secret
from app.services.campaigns import get_organised
from app.services.errors import Conflict, NotFound, Unauthenticated
from app.storage.models import ApiToken, Assessor, JudgeLink, Role, Team


def now() -> datetime:
    """The current time, with its time zone."""
    return datetime.now(UTC)


def expiry(seconds: float | None) -> datetime | None:
    """The moment a lifetime of `seconds` from now ends (None: never)."""
    return None if seconds is None else now() + timedelta(seconds=seconds)


def list_tokens(session: Session, principal: Principal, campaign_id: int) -> list[ApiToken]:
    """The tokens bound to a campaign (its organisers', teams' and assessors'), oldest first; organisers only."""
    get_organised(session, principal, campaign_id)
    return list(session.scalars(select(ApiToken).where(ApiToken.campaign_id == campaign_id).order_by(ApiToken.id)))


def may_revoke(principal: Principal, token: ApiToken) -> bool:
    """Whether the principal may revoke `token`: its own, or one of a campaign it organises (unbound: any)."""
    if principal.token_id == token.id:
        return True
    if principal.role is not Role.organiser:
        return False
    if principal.campaign_id is None:
        return True
    return token.campaign_id == principal.campaign_id


def revoke_token(session: Session, principal: Principal | None, token_id: int) -> ApiToken:
    """Revoke a token (already revoked: left as it was); `principal` None is the command line, which may revoke any."""
    token = session.get(ApiToken, token_id)
    if token is None or (principal is not None and not may_revoke(principal, token)):
        raise NotFound(f"token {token_id} not found")
    if token.revoked_at is None:
        token.revoked_at = now()
        session.flush()
    return token


def revoke_member_tokens(
    session: Session, *, team_id: int | None = None, assessor_id: int | None = None, keep: int | None = None
) -> int:
    """Revoke every live token of a team or an assessor but `keep`, and its unused judging links; returns how many."""
    owner = ApiToken.team_id == team_id if team_id is not None else ApiToken.assessor_id == assessor_id
    moment = now()
    result = session.execute(
        update(ApiToken)
        .where(owner, ApiToken.revoked_at.is_(None), ApiToken.id != (keep or 0))
        .values(revoked_at=moment)
        .execution_options(synchronize_session=False)
    )
    revoked = result.rowcount if isinstance(result, CursorResult) else 0
    if assessor_id is not None:
        session.execute(
            update(JudgeLink)
            .where(JudgeLink.assessor_id == assessor_id, JudgeLink.used_at.is_(None), JudgeLink.expires_at > moment)
            .values(expires_at=moment)
            .execution_options(synchronize_session=False)
        )
    session.expire_all()
    return int(revoked or 0)


def issue_member_token(
    session: Session,
    principal: Principal,
    role: Role,
    member_id: int,
    *,
    revoke_previous: bool = False,
    expires_in: float | None = None,
) -> tuple[ApiToken, str]:
    """A further token for a team or assessor; `revoke_previous` revokes its other tokens (rotation)."""
    member: Team | Assessor | None = (
        session.get(Team, member_id) if role is Role.team else session.get(Assessor, member_id)
    )
    if member is None:
        raise NotFound(f"{role.value} {member_id} not found")
    get_organised(session, principal, member.campaign_id)
    team_id = member.id if role is Role.team else None
    assessor_id = None if role is Role.team else member.id
    row, plain = issue_token(
        session,
        role,
        label=f"{role.value} {member.name}",
        expires_at=expiry(expires_in),
        team_id=team_id,
        assessor_id=assessor_id,
    )
    if revoke_previous:
        revoke_member_tokens(session, keep=row.id, team_id=team_id, assessor_id=assessor_id)
    return row, plain


def issue_judge_link(
    session: Session, principal: Principal | None, assessor_id: int, lifetime_seconds: float
) -> tuple[str, datetime]:
    """A one-time judging link secret for an assessor and when it expires (`principal` None: the caller checked)."""
    assessor = session.get(Assessor, assessor_id)
    if assessor is None:
        raise NotFound(f"assessor {assessor_id} not found")
    if principal is not None:
        get_organised(session, principal, assessor.campaign_id)
    if assessor.kind != "human":
        raise Conflict(f"assessor {assessor_id} is a model: it judges through the batch API with its token, not a link")
    plain = new_secret()
    expires_at = now() + timedelta(seconds=lifetime_seconds)
    session.add(JudgeLink(token_hash=hash_token(plain), assessor_id=assessor.id, expires_at=expires_at))
    session.flush()
    return plain, expires_at


def withdraw_judge_link(session: Session, link: str) -> bool:
    """Expire an unused judging link now (it was exposed: sent in a URL a server saw); whether one was withdrawn."""
    moment = now()
    withdrawn = session.scalar(
        update(JudgeLink)
        .where(JudgeLink.token_hash == hash_token(link), JudgeLink.used_at.is_(None), JudgeLink.expires_at > moment)
        .values(expires_at=moment)
        .returning(JudgeLink.id)
        .execution_options(synchronize_session=False)
    )
    return withdrawn is not None


def exchange_judge_link(session: Session, link: str, session_seconds: float) -> tuple[str, ApiToken]:
    """Trade an unused, unexpired judging link for an assessor session token (the link is spent at once)."""
    digest = hash_token(link)
    moment = now()
    link_id = session.scalar(
        update(JudgeLink)
        .where(JudgeLink.token_hash == digest, JudgeLink.used_at.is_(None), JudgeLink.expires_at > moment)
        .values(used_at=moment)
        .returning(JudgeLink.id)
        .execution_options(synchronize_session=False)
    )
    if link_id is None:
        row = session.scalar(select(JudgeLink).where(JudgeLink.token_hash == digest))
        if row is None:
            raise Unauthenticated("invalid judging link")
        if row.used_at is not None:
            raise Unauthenticated("this judging link was used already: ask the organiser for a new one")
        raise Unauthenticated("this judging link expired: ask the organiser for a new one")
    row = session.get(JudgeLink, link_id)
    assert row is not None
    token, plain = issue_token(
        session,
        Role.assessor,
        assessor_id=row.assessor_id,
        label=f"judging session (link {row.id})",
        expires_at=moment + timedelta(seconds=session_seconds),
    )
    row.session_token_id = token.id
    session.flush()
    return plain, token
