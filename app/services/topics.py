"""Topics of a campaign: created from JSON or from a topics file."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.errors import FormatError
from app.evaluation.formats.topics_file import TopicDef, parse_topics
from app.services.auth import Principal
from app.services.campaigns import get_campaign, get_organised
from app.services.errors import Conflict, Forbidden, InvalidInput
from app.services.validation import from_format_error
from app.storage.models import CampaignStatus, Topic

MAX_LISTED = 50  # topic numbers named in one error


def add_topics(session: Session, principal: Principal, campaign_id: int, topics: Sequence[TopicDef]) -> list[Topic]:
    """Add topics to a campaign that has not closed submissions; numbers must be new."""
    campaign = get_organised(session, principal, campaign_id)
    if campaign.status not in (CampaignStatus.draft, CampaignStatus.open):
        raise Forbidden("topics are fixed once submissions have closed")
    if not topics:
        raise InvalidInput("no topics given", [{"field": "topics", "message": "empty list"}])
    duplicates = sorted(n for n, count in Counter(t.number for t in topics).items() if count > 1)
    if duplicates:
        raise InvalidInput(
            f"{len(duplicates)} duplicate topic number(s)",
            [{"field": "number", "message": f"{n} given more than once"} for n in duplicates[:MAX_LISTED]],
        )
    stored = set(session.scalars(select(Topic.number).where(Topic.campaign_id == campaign_id)))
    existing = sorted(t.number for t in topics if t.number in stored)
    if existing:
        more = f" and {len(existing) - MAX_LISTED} more" if len(existing) > MAX_LISTED else ""
        raise Conflict(f"topics already registered: {', '.join(existing[:MAX_LISTED])}{more}")
    rows = [Topic(campaign_id=campaign_id, number=t.number, title=t.title, description=t.description) for t in topics]
    session.add_all(rows)
    session.flush()  # the ORM inserts in pages of 1,000 rows: under PostgreSQL's 65,535 bind parameters
    return rows


def add_topics_file(
    session: Session, principal: Principal, campaign_id: int, data: bytes, *, max_errors: int
) -> list[Topic]:
    """Add the topics of an uploaded topics file."""
    get_organised(session, principal, campaign_id)
    try:
        defs = parse_topics(data, source="topics file")
    except FormatError as exc:
        raise from_format_error("topics file", exc, max_errors) from None
    return add_topics(session, principal, campaign_id, defs)


def list_topics(session: Session, principal: Principal, campaign_id: int) -> list[Topic]:
    """A campaign's topics in number order (numeric where they are numbers)."""
    get_campaign(session, principal, campaign_id)
    topics = list(session.scalars(select(Topic).where(Topic.campaign_id == campaign_id)))
    return sorted(topics, key=lambda t: (0, int(t.number), "") if t.number.isdigit() else (1, 0, t.number))


def topic_ids_by_number(session: Session, campaign_id: int) -> dict[str, int]:
    """Map from topic number to topic row id."""
    rows = session.execute(select(Topic.number, Topic.id).where(Topic.campaign_id == campaign_id))
    return {number: topic_id for number, topic_id in rows}
