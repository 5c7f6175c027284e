"""Topics of a campaign: created from JSON or from a topics file."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from pydantic import dataclasses as pydantic_dataclasses
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
MAX_EXAMPLES = 20  # example images per topic


@pydantic_dataclasses.dataclass(frozen=True)
class TopicExample:
    """An example image of a topic, with its caption (the REST response model too)."""

    url: str
    caption: str = ""


@dataclass(frozen=True)
class TopicGuidance:
    """What the judging page shows beside the video besides the description: guidelines and example images."""

    guidelines: str = ""
    examples: tuple[tuple[str, str], ...] = ()  # (http(s) URL, caption)


def _check_guidance(number: str, guidance: TopicGuidance) -> None:
    """InvalidInput naming the topic unless its examples are at most MAX_EXAMPLES http(s) URLs."""
    if len(guidance.examples) > MAX_EXAMPLES:
        raise InvalidInput(
            "too many examples", [{"field": "examples", "message": f"topic {number}: at most {MAX_EXAMPLES}"}]
        )
    for url, _ in guidance.examples:
        if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).netloc:
            raise InvalidInput(
                "invalid example URL", [{"field": "examples", "message": f"topic {number}: {url!r} is not http(s)"}]
            )


def add_topics(
    session: Session,
    principal: Principal,
    campaign_id: int,
    topics: Sequence[TopicDef],
    guidance: Sequence[TopicGuidance] | None = None,
) -> list[Topic]:
    """Add topics to a campaign that has not closed submissions, with their guidance (one per topic, in order, when
    given); numbers must be new."""
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
    given = list(guidance) if guidance is not None else [TopicGuidance()] * len(topics)
    for topic, guide in zip(topics, given, strict=True):
        _check_guidance(topic.number, guide)
    rows = [
        Topic(
            campaign_id=campaign_id,
            number=t.number,
            title=t.title,
            description=t.description,
            guidelines=g.guidelines,
            examples=[{"url": url, "caption": caption} for url, caption in g.examples] or None,
        )
        for t, g in zip(topics, given, strict=True)
    ]
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
