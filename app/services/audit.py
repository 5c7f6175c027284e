"""Reading the audit trail of a campaign (the trail is written by a database trigger, see app/storage/audit.py)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.errors import InvalidInput
from app.storage.audit import AUDITED_TABLES
from app.storage.models import AuditEvent


def campaign_events(
    session: Session,
    principal: Principal,
    campaign_id: int,
    *,
    table: str | None = None,
    since: datetime | None = None,
    after: int | None = None,
    limit: int = 100,
) -> list[AuditEvent]:
    """A campaign's audit events, oldest first: of one table, from a moment, after an event id (a page's cursor)."""
    get_organised(session, principal, campaign_id)
    if table is not None and table not in AUDITED_TABLES:
        raise InvalidInput("unknown table", [{"field": "table", "message": f"one of {', '.join(AUDITED_TABLES)}"}])
    if since is not None and since.tzinfo is None:
        raise InvalidInput("since needs a time zone", [{"field": "since", "message": "e.g. 2026-01-31T12:00:00Z"}])
    query = select(AuditEvent).where(AuditEvent.campaign_id == campaign_id)
    if table is not None:
        query = query.where(AuditEvent.table_name == table)
    if since is not None:
        query = query.where(AuditEvent.at >= since)
    if after is not None:
        query = query.where(AuditEvent.id > after)
    return list(session.scalars(query.order_by(AuditEvent.id).limit(limit)))
