"""The master shot reference of a campaign, its media URLs, and its ids kept in memory for checking run uploads."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Literal

import numpy as np
from psycopg import sql
from pydantic import dataclasses as pydantic_dataclasses
from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from app.evaluation.errors import FormatError
from app.evaluation.fast.columns import split_columns
from app.evaluation.fast.hashing import code_matrix
from app.evaluation.formats.shot_reference import parse_shot_reference
from app.services.auth import Principal
from app.services.campaigns import check_url_template, get_campaign, get_organised
from app.services.run_files import KnownIds
from app.services.validation import from_format_error
from app.storage.bulk import copy_out, copy_rows
from app.storage.models import Campaign, CollectionItem

IdKind = Literal["shot", "video"]
# Collections whose ids a process keeps (the most recently used): about 8 + the longest id's length bytes per shot (an
# ASCII id; 20 for ids like shot4999_199), 20 MB for a million shots.
CACHED_COLLECTIONS = 3
_cache: OrderedDict[tuple[int, str, int], KnownIds] = OrderedDict()
_cache_lock = threading.Lock()


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


def collection_version(session: Session, campaign_id: int) -> int:
    """The campaign's collection version: drawn anew by a trigger whenever its collection's rows change (0017)."""
    version = session.scalar(select(Campaign.collection_version).where(Campaign.id == campaign_id))
    if version is None:
        raise ValueError(f"campaign {campaign_id} does not exist")
    return version


def known_ids(session: Session, campaign_id: int, kind: IdKind) -> KnownIds:
    """The distinct shot (or video) ids of the campaign's collection as the session sees it, read from the database
    once per collection version and kept for the next uploads (CACHED_COLLECTIONS of them per process)."""
    version = collection_version(session, campaign_id)
    key = (campaign_id, kind, version)
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    known = KnownIds.of_codes(_id_codes(session, campaign_id, kind))
    # kept only when no change was committed while reading (under READ COMMITTED each statement sees the latest
    # commits): every change draws a new version, so an equal one means the ids read are those of `version`
    if collection_version(session, campaign_id) == version:
        with _cache_lock:
            _cache[key] = known
            while len(_cache) > CACHED_COLLECTIONS:
                _cache.popitem(last=False)
    return known


def cached_collections() -> list[tuple[int, str, int]]:
    """The (campaign, id kind, version) of each collection whose ids this process keeps, least recently used first."""
    with _cache_lock:
        return list(_cache)


def _id_codes(session: Session, campaign_id: int, kind: IdKind) -> np.ndarray:
    """The collection's distinct shot (or video) ids as a zero-padded code-point matrix, one row each: read with COPY
    into one buffer, without a Python string per id (by a plain query if an id has white space or a backslash)."""
    column = CollectionItem.shot_id if kind == "shot" else CollectionItem.video_id
    name = sql.Identifier(column.key)
    query = sql.SQL("SELECT {}{} FROM collection_items WHERE campaign_id = {}").format(
        sql.SQL("DISTINCT ") if kind == "video" else sql.SQL(""), name, sql.Literal(campaign_id)
    )
    data = b"".join(copy_out(session, query))
    columns = split_columns(data, 1, source="collection") if data and b"\\" not in data else None
    codes = columns.matrix(0) if columns is not None and len(columns) == data.count(b"\n") else None
    if codes is not None or not data:
        return codes if codes is not None else np.zeros((0, 0), dtype=np.uint8)
    values = np.array(list(session.scalars(select(column).distinct().where(CollectionItem.campaign_id == campaign_id))))
    found = code_matrix(values.astype(str))
    assert found is not None
    return found
