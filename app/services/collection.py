"""The master shot reference of a campaign and its media URLs."""

from __future__ import annotations

from pydantic import dataclasses as pydantic_dataclasses
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.evaluation.errors import FormatError
from app.evaluation.formats.shot_reference import parse_shot_reference
from app.services.auth import Principal
from app.services.campaigns import check_url_template, get_campaign, get_organised
from app.services.validation import from_format_error
from app.storage.bulk import copy_rows
from app.storage.models import Campaign, CollectionItem


# A pydantic dataclass: the REST endpoints return it as it is (their response model), so its fields are declared
# and described here only.
@pydantic_dataclasses.dataclass(frozen=True)
class CollectionSummary:
    """Size of a campaign's collection and its media URL template."""

    campaign_id: int
    n_shots: int
    n_videos: int
    media_url_template: str | None


def replace_collection(
    session: Session,
    principal: Principal,
    campaign_id: int,
    data: bytes,
    *,
    media_url_template: str | None,
    max_errors: int,
) -> CollectionSummary:
    """Replace the campaign's master shot reference with the uploaded TSV, in one transaction."""
    campaign = get_organised(session, principal, campaign_id)
    if media_url_template is not None:
        check_url_template(media_url_template)
        campaign.media_url_template = media_url_template
    try:
        reference = parse_shot_reference(data, max_errors=max_errors, source="collection")
    except FormatError as exc:
        raise from_format_error("collection file", exc, max_errors) from None
    session.execute(delete(CollectionItem).where(CollectionItem.campaign_id == campaign_id))
    n = len(reference.shot_ids)
    copy_rows(
        session,
        "collection_items",
        ("campaign_id", "shot_id", "video_id", "start", "end"),
        [[campaign_id] * n, reference.shot_ids, reference.video_ids, reference.starts, reference.ends],
    )
    session.flush()
    return summarise(session, campaign)


def summarise(session: Session, campaign: Campaign) -> CollectionSummary:
    """Counts of shots and videos of a campaign's collection."""
    n_shots, n_videos = session.execute(
        select(func.count(), func.count(func.distinct(CollectionItem.video_id))).where(
            CollectionItem.campaign_id == campaign.id
        )
    ).one()
    return CollectionSummary(campaign.id, n_shots, n_videos, campaign.media_url_template)


def collection_summary(session: Session, principal: Principal, campaign_id: int) -> CollectionSummary:
    """Counts of a campaign's collection, for anyone in the campaign."""
    return summarise(session, get_campaign(session, principal, campaign_id))


def has_collection(session: Session, campaign_id: int) -> bool:
    """Whether a master shot reference is registered."""
    query = select(CollectionItem.shot_id).where(CollectionItem.campaign_id == campaign_id).limit(1)
    return session.scalar(query) is not None


def media_url(campaign: Campaign, item: CollectionItem) -> str | None:
    """The media URL of a shot from the campaign's template."""
    return format_media_url(campaign.media_url_template, item.shot_id, item.video_id, item.start, item.end)


def format_media_url(template: str | None, shot_id: str, video_id: str, start: float, end: float) -> str | None:
    """A media URL template filled in for one shot (None without a template)."""
    if not template:
        return None
    return template.format(shot_id=shot_id, video_id=video_id, start=start, end=end)
