"""Moment pools and marking: build a pool of proposed segments, let assessors mark the relevant moments of each
proposal's video, cut a versioned moment ground truth from the marks, and measure assessor agreement (mean IoU)."""

from __future__ import annotations

import math
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from itertools import combinations
from typing import Annotated

import numpy as np
from pydantic import Field
from pydantic import dataclasses as pydantic_dataclasses
from sqlalchemy import Select, delete, func, insert, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from app.evaluation.pools.moments import DEFAULT_IOU, build_moment_pool, covered_by, merge_intervals, segment_set_iou
from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.collection import format_media_url
from app.services.errors import Conflict, Forbidden, InvalidInput, NotFound
from app.services.pools import PoolSpec, _select_runs, current_pool, get_pool
from app.services.qrels import _check_label, refuse_incomplete, topics_without
from app.services.run_arrays import load_moment_runs
from app.services.run_files import topic_id_column
from app.services.topics import topic_ids_by_number
from app.storage.bulk import copy_rows
from app.storage.models import (
    Assessor,
    Assignment,
    Campaign,
    CampaignStatus,
    Judgement,
    MomentJudgement,
    MomentPoolItem,
    MomentTruthSegment,
    Pool,
    PoolItem,
    PoolRun,
    QrelsVersion,
    Role,
    TaskKind,
    Topic,
)

MOMENTS = "moments"  # the kind of a moment pool and of a moment ground-truth version
MAX_SEGMENTS = 50
MAX_SECONDS = 10.0**7  # no video is longer than 115 days


@dataclass(frozen=True)
class MomentPoolSpec:
    """How to build a moment pool: depth, merge threshold, which runs, and the seed (random when omitted)."""

    depth: int = 10
    iou: float = DEFAULT_IOU
    seed: int | None = None
    max_priority: int | None = None
    system_types: tuple[str, ...] | None = None
    run_ids: tuple[int, ...] | None = None


def create_moment_pool(session: Session, principal: Principal, campaign_id: int, spec: MomentPoolSpec) -> Pool:
    """Build and store the moment pool of a closed moment campaign; replaces an earlier pool with no marks yet."""
    campaign = get_organised(session, principal, campaign_id)
    if campaign.task_kind is not TaskKind.moments:
        raise InvalidInput("moment pools are built for moment campaigns", [{"field": "task_kind", "message": "shots"}])
    if campaign.status not in (CampaignStatus.closed, CampaignStatus.pooled, CampaignStatus.judging):
        raise Conflict(f"close submissions before pooling (campaign is {campaign.status.value})")
    errors = []
    if not 1 <= spec.depth <= 100_000:
        errors.append({"field": "depth", "message": "between 1 and 100000"})
    if not (math.isfinite(spec.iou) and 0.0 < spec.iou <= 1.0):
        errors.append({"field": "iou", "message": "in (0, 1]"})
    if errors:
        raise InvalidInput("invalid moment pool", errors)
    previous = current_pool(session, campaign_id)
    if previous is not None:
        if _has_marks(session, previous.id):
            raise Conflict("the campaign's pool already has marks; it cannot be rebuilt")
        session.execute(delete(Pool).where(Pool.id == previous.id))
    selection = PoolSpec(max_priority=spec.max_priority, system_types=spec.system_types, run_ids=spec.run_ids)
    runs = _select_runs(session, [campaign.id], selection)
    seed = spec.seed if spec.seed is not None else secrets.randbits(48)
    table = build_moment_pool(
        load_moment_runs(session, [r.id for r in runs]), depth=spec.depth, iou=spec.iou, seed=seed
    )
    params = {
        "depth": spec.depth,
        "iou": spec.iou,
        "max_priority": spec.max_priority,
        "system_types": list(spec.system_types or []),
        "run_ids": [r.id for r in runs],
    }
    pool = Pool(campaign_id=campaign_id, kind=MOMENTS, params=params, seed=seed)
    session.add(pool)
    session.flush()
    session.execute(insert(PoolRun), [{"pool_id": pool.id, "run_id": r.id} for r in runs])
    n = len(table)
    copy_rows(
        session,
        "moment_pool_items",
        ("pool_id", "topic_id", "video_id", "start", "end", "best_rank", "n_runs", "judging_order"),
        [
            np.full(n, pool.id),
            topic_id_column(table.topics, topic_ids_by_number(session, campaign_id)),
            table.videos,
            table.starts,
            table.ends,
            table.best_ranks,
            table.n_runs,
            table.judging_order,
        ],
    )
    campaign.status = CampaignStatus.pooled
    session.flush()
    return pool


def _has_marks(session: Session, pool_id: int) -> bool:
    """Whether a pool has any verdict or mark."""
    marks = select(MomentJudgement.id).join(MomentPoolItem).where(MomentPoolItem.pool_id == pool_id).limit(1)
    verdicts = select(Judgement.id).join(PoolItem).where(PoolItem.pool_id == pool_id).limit(1)
    return session.scalar(marks) is not None or session.scalar(verdicts) is not None


def get_moment_pool(session: Session, principal: Principal, pool_id: int) -> Pool:
    """A moment pool of a campaign the caller organises."""
    pool = get_pool(session, principal, pool_id)
    if pool.kind != MOMENTS:
        raise InvalidInput("not a moment pool", [{"field": "pool_id", "message": f"pool {pool_id} is {pool.kind}"}])
    return pool


def moment_topic_counts(session: Session, pool: Pool) -> list[dict[str, object]]:
    """Per topic: proposed segments and how many have at least one assessor's marks."""
    judged = select(MomentJudgement.item_id).distinct().subquery()
    rows = session.execute(
        select(Topic.number, func.count(MomentPoolItem.id), func.count(judged.c.item_id))
        .join(Topic, Topic.id == MomentPoolItem.topic_id)
        .outerjoin(judged, judged.c.item_id == MomentPoolItem.id)
        .where(MomentPoolItem.pool_id == pool.id)
        .group_by(Topic.number)
        .order_by(Topic.number)
    )
    return [{"topic": t, "proposed": n, "judged": j} for t, n, j in rows]


# --- the assessor's side: blind, one proposed segment at a time --------------------------------------------------


# A pydantic dataclass: the REST endpoints return it as it is (their response model), so its fields are declared
# and described here only.
@pydantic_dataclasses.dataclass(frozen=True)
class MarkView:
    """A proposed segment to judge: the topic and the video, nothing about runs, ranks, counts or others' marks."""

    item_id: int
    topic: str
    topic_title: str
    topic_description: str
    video_id: str
    start: Annotated[float, Field(description="The proposed segment's start (seconds)")]
    end: Annotated[float, Field(description="The proposed segment's end (seconds)")]
    media_url: str | None
    segments: Annotated[
        list[list[float]] | None, Field(description="Your own marks, when you go back (null before you mark)")
    ] = None
    next_media_url: Annotated[
        str | None, Field(description="The media of your item after this one, for the page to preload (null: none)")
    ] = None


def _assessor(session: Session, principal: Principal) -> int:
    """The caller's assessor id (Forbidden for other roles, and for model assessors: they use the batch API)."""
    if principal.role is not Role.assessor or principal.assessor_id is None:
        raise Forbidden("only assessors mark moments")
    if session.scalar(select(Assessor.kind).where(Assessor.id == principal.assessor_id)) != "human":
        raise Forbidden("model assessors judge through the batch API, not the marking page")
    return principal.assessor_id


def _view(session: Session, item: MomentPoolItem, own: MomentJudgement | None) -> MarkView:
    """The blind view of an item."""
    topic = session.get(Topic, item.topic_id)
    campaign = session.get(Campaign, topic.campaign_id) if topic else None
    assert topic is not None and campaign is not None
    return MarkView(
        item_id=item.id,
        topic=topic.number,
        topic_title=topic.title,
        topic_description=topic.description,
        video_id=item.video_id,
        start=item.start,
        end=item.end,
        media_url=format_media_url(campaign.media_url_template, "", item.video_id, item.start, item.end),
        segments=[list(map(float, s)) for s in own.segments] if own is not None else None,
    )


def _assigned_items(session: Session, principal: Principal, me: int) -> Select[MomentPoolItem]:
    """A query of the moment items of the caller's assigned topics in the campaign's current moment pool."""
    assert principal.campaign_id is not None
    pool = current_pool(session, principal.campaign_id)
    pool_id = pool.id if pool is not None and pool.kind == MOMENTS else -1
    return (
        select(MomentPoolItem)
        .join(
            Assignment,
            (Assignment.pool_id == MomentPoolItem.pool_id)
            & (Assignment.topic_id == MomentPoolItem.topic_id)
            & (Assignment.assessor_id == me),
        )
        .where(MomentPoolItem.pool_id == pool_id)
    )


def next_item(session: Session, principal: Principal) -> MarkView | None:
    """The caller's next unmarked proposal (topic by topic, in the seeded judging order); None when done."""
    me = _assessor(session, principal)
    mine = select(MomentJudgement.item_id).where(MomentJudgement.assessor_id == me)
    items = session.scalars(
        _assigned_items(session, principal, me)
        .where(MomentPoolItem.id.not_in(mine))
        .order_by(MomentPoolItem.topic_id, MomentPoolItem.judging_order)
        .limit(2)
    ).all()
    if not items:
        return None
    view = _view(session, items[0], None)
    if len(items) == 2:  # the item after it: only its media, which the page preloads
        view = replace(view, next_media_url=_view(session, items[1], None).media_url)
    return view


def _own_item(session: Session, principal: Principal, item_id: int) -> tuple[int, MomentPoolItem]:
    """An item of one of the caller's topics (NotFound otherwise: others' items are not even confirmed to exist)."""
    me = _assessor(session, principal)
    item = session.scalar(_assigned_items(session, principal, me).where(MomentPoolItem.id == item_id))
    if item is None:
        raise NotFound(f"item {item_id} is not one of your items")
    return me, item


def own_item(session: Session, principal: Principal, item_id: int) -> MarkView:
    """An item of the caller's, with their marks."""
    me, item = _own_item(session, principal, item_id)
    own = session.scalar(
        select(MomentJudgement).where(MomentJudgement.item_id == item.id, MomentJudgement.assessor_id == me)
    )
    return _view(session, item, own)


def check_segments(segments: Sequence[tuple[float, float]]) -> list[list[float]]:
    """Marked segments, validated (InvalidInput naming `segments[i].start|end`) and sorted by start."""
    errors = []
    if len(segments) > MAX_SEGMENTS:
        errors.append({"field": "segments", "message": f"at most {MAX_SEGMENTS} segments per item"})
    for i, (start, end) in enumerate(segments):
        if not (math.isfinite(start) and 0.0 <= start <= MAX_SECONDS):
            errors.append({"field": f"segments[{i}].start", "message": "a number of seconds >= 0"})
        elif not (math.isfinite(end) and start < end <= MAX_SECONDS):
            errors.append({"field": f"segments[{i}].end", "message": "must be after start"})
    if errors:
        raise InvalidInput("invalid segments", errors)
    return sorted([float(s), float(e)] for s, e in segments)


def _marks_text(segments: Sequence[Sequence[float]]) -> str:
    """Stored marks in words: "none relevant", or each moment's span in seconds."""
    return ", ".join(f"{s:.1f}-{e:.1f} s" for s, e in segments) if segments else "none relevant"


def mark(
    session: Session,
    principal: Principal,
    item_id: int,
    segments: Sequence[tuple[float, float]],
    *,
    seconds_spent: float | None = None,
    change: bool = False,
) -> MarkView:
    """Store the caller's first marks on an item (the relevant moments of its video; empty = none relevant) or, with
    `change`, replace the caller's earlier marks on it.

    First marks on an item the caller marked already (two tabs on one item) are a Conflict naming the stored marks:
    they never replace them silently. `change` on an item without marks of the caller's is NotFound.
    """
    clean = check_segments(segments)
    me, item = _own_item(session, principal, item_id)
    mine = (MomentJudgement.item_id == item.id) & (MomentJudgement.assessor_id == me)
    if change:
        changed = session.execute(
            update(MomentJudgement)
            .where(mine)
            .values(
                segments=clean,
                seconds_spent=func.coalesce(seconds_spent, MomentJudgement.seconds_spent),
                updated_at=func.now(),
            )
            .returning(MomentJudgement.id)
            .execution_options(synchronize_session=False)
        ).first()
        if changed is None:
            raise NotFound(f"item {item_id} has no marks of yours to change")
    else:
        # one statement, so a double submit cannot race two first inserts into a unique violation
        first = session.execute(
            pg_insert(MomentJudgement)
            .values(item_id=item.id, assessor_id=me, segments=clean, seconds_spent=seconds_spent)
            .on_conflict_do_nothing(index_elements=[MomentJudgement.item_id, MomentJudgement.assessor_id])
            .returning(MomentJudgement.id)
        ).first()
        if first is None:
            stored = session.scalar(select(MomentJudgement.segments).where(mine)) or []
            raise Conflict(
                f"item {item_id} is marked already: your marks are {_marks_text(stored)} (given in another tab or "
                "window?); marks are changed only by going back to them (change: true)"
            )
    return replace(_view(session, item, None), segments=clean)


def own_progress(session: Session, principal: Principal) -> dict[str, int]:
    """How many of the caller's proposals are marked, of how many."""
    me = _assessor(session, principal)
    items = _assigned_items(session, principal, me).subquery()
    total = session.scalar(select(func.count()).select_from(items)) or 0
    done = session.scalar(
        select(func.count())
        .select_from(items)
        .join(MomentJudgement, (MomentJudgement.item_id == items.c.id) & (MomentJudgement.assessor_id == me))
    )
    return {"marked": int(done or 0), "total": int(total)}


# --- the organiser's side: ground truth versions and agreement ------------------------------------------------------


def _marks(session: Session, pool: Pool) -> list[tuple[int, str, str, int, list[list[float]]]]:
    """Every mark of a pool: item id, topic number, video, assessor, segments; in the order they were first made."""
    rows = session.execute(
        select(
            MomentPoolItem.id,
            Topic.number,
            MomentPoolItem.video_id,
            MomentJudgement.assessor_id,
            MomentJudgement.segments,
        )
        .join(MomentPoolItem, MomentPoolItem.id == MomentJudgement.item_id)
        .join(Topic, Topic.id == MomentPoolItem.topic_id)
        .where(MomentPoolItem.pool_id == pool.id)
        .order_by(MomentJudgement.id)
    ).all()
    return [(item, topic, video, assessor, segments) for item, topic, video, assessor, segments in rows]


COMBINE = ("first", "union", "majority", "all")


def truth_from_marks(
    marks: Sequence[tuple[int, str, str, int, list[list[float]]]], combine: str = "first"
) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """Ground truth from marks: per item, the marks of the first assessor to mark it (`first`), or the time marked
    by any (`union`), by more than half (`majority`) or by all (`all`) of the assessors who marked it ("none
    relevant" counts as a vote); then per topic and video the segments merged where they overlap; topic, video,
    start, end columns."""
    if combine not in COMBINE:
        raise InvalidInput("unknown combine rule", [{"field": "combine", "message": f"one of {', '.join(COMBINE)}"}])
    by_item: dict[int, tuple[str, str, list[list[list[float]]]]] = {}
    for item_id, topic, video, _, segments in marks:
        by_item.setdefault(item_id, (topic, video, []))[2].append(segments)
    by_video: dict[tuple[str, str], list[list[float]]] = {}
    for topic, video, sets in by_item.values():
        if combine == "first":
            kept = sets[0]
        else:
            at_least = {"union": 1, "majority": len(sets) // 2 + 1, "all": len(sets)}[combine]
            kept = [[s, e] for s, e in zip(*covered_by(sets, at_least), strict=True)]
        by_video.setdefault((topic, video), []).extend(kept)
    topics: list[str] = []
    videos: list[str] = []
    starts, ends = [], []
    for (topic, video), segments in sorted(by_video.items()):
        if not segments:
            continue
        array = np.array(segments, dtype=np.float64)
        s, e = merge_intervals(array[:, 0], array[:, 1])
        topics += [topic] * len(s)
        videos += [video] * len(s)
        starts.append(s)
        ends.append(e)
    return (
        topics,
        videos,
        np.concatenate(starts) if starts else np.zeros(0),
        np.concatenate(ends) if ends else np.zeros(0),
    )


def cut_moment_truth(
    session: Session,
    principal: Principal,
    pool_id: int,
    label: str,
    combine: str = "first",
    *,
    allow_incomplete: bool = False,
) -> QrelsVersion:
    """Freeze the pool's current marks as a new, immutable moment ground-truth version (see `truth_from_marks`).

    Conflict, saying how much is unmarked, when a topic of the campaign has no mark at all ("none relevant" is a
    mark), unless `allow_incomplete`; the version records those topics (`unjudged_topics`).
    """
    pool = get_moment_pool(session, principal, pool_id)
    _check_label(session, pool.campaign_id, label)
    marks = _marks(session, pool)
    unmarked_topics = topics_without(session, pool.campaign_id, {topic for _, topic, *_ in marks})
    if unmarked_topics and not allow_incomplete:
        proposed = session.scalar(
            select(func.count()).select_from(MomentPoolItem).where(MomentPoolItem.pool_id == pool.id)
        )
        unmarked = (proposed or 0) - len({item for item, *_ in marks})
        raise refuse_incomplete(
            f"moment pool {pool.id}", unmarked, proposed or 0, "proposals", unmarked_topics, "unmarked"
        )
    topics, videos, starts, ends = truth_from_marks(marks, combine)
    version = QrelsVersion(
        campaign_id=pool.campaign_id,
        label=label,
        kind=MOMENTS,
        source="cut",
        pool_id=pool.id,
        n_entries=len(topics),
        combine=combine,
        unjudged_topics=unmarked_topics,
    )
    session.add(version)
    session.flush()
    copy_rows(
        session,
        "moment_truth_segments",
        ("qrels_version_id", "topic_id", "video_id", "start", "end"),
        [
            np.full(len(topics), version.id),
            topic_id_column(np.array(topics, dtype=str), topic_ids_by_number(session, pool.campaign_id)),
            np.array(videos, dtype=str),
            starts,
            ends,
        ],
    )
    return version


def get_moment_truth(session: Session, principal: Principal, version_id: int) -> QrelsVersion:
    """A moment ground-truth version of a campaign the caller organises."""
    version = session.get(QrelsVersion, version_id)
    if version is None or version.kind != MOMENTS:
        raise NotFound(f"moment ground-truth version {version_id} not found")
    get_organised(session, principal, version.campaign_id)
    return version


def export_moment_truth(session: Session, principal: Principal, version_id: int) -> Iterator[bytes]:
    """A version as the ground-truth file format: `topic<TAB>video<TAB>start<TAB>end` per line."""
    version = get_moment_truth(session, principal, version_id)
    rows = session.execute(
        select(Topic.number, MomentTruthSegment.video_id, MomentTruthSegment.start, MomentTruthSegment.end)
        .join(Topic, Topic.id == MomentTruthSegment.topic_id)
        .where(MomentTruthSegment.qrels_version_id == version.id)
        .order_by(func.length(Topic.number), Topic.number, MomentTruthSegment.video_id, MomentTruthSegment.start)
    ).all()
    text = "".join(f"{t}\t{v}\t{s:g}\t{e:g}\n" for t, v, s, e in rows)
    return iter([text.encode()])


def agreement(session: Session, principal: Principal, pool_id: int) -> dict[str, object]:
    """Inter-assessor agreement on segments: for every item two assessors marked, the IoU of their marked sets
    (1 when both found none); mean per topic, per assessor pair and overall."""
    pool = get_moment_pool(session, principal, pool_id)
    names = {a.id: a.name for a in session.scalars(select(Assessor).where(Assessor.campaign_id == pool.campaign_id))}
    by_item: dict[int, list[tuple[str, int, list[list[float]]]]] = {}
    for item_id, topic, _, assessor, segments in _marks(session, pool):
        by_item.setdefault(item_id, []).append((topic, assessor, segments))
    topic_iou: dict[str, list[float]] = {}
    pair_iou: dict[tuple[int, int], list[float]] = {}
    for marks in by_item.values():
        for (topic, a, sa), (_, b, sb) in combinations(sorted(marks, key=lambda m: m[1]), 2):
            value = segment_set_iou(*_columns(sa), *_columns(sb))
            topic_iou.setdefault(topic, []).append(value)
            pair_iou.setdefault((a, b), []).append(value)
    every = [v for values in topic_iou.values() for v in values]
    return {
        "pool_id": pool.id,
        "items": len(every),
        "mean_iou": float(np.mean(every)) if every else None,
        "topics": [
            {"topic": t, "items": len(v), "mean_iou": float(np.mean(v))}
            for t, v in sorted(topic_iou.items(), key=lambda x: (len(x[0]), x[0]))
        ],
        "pairs": [
            {"assessors": [names.get(a), names.get(b)], "items": len(v), "mean_iou": float(np.mean(v))}
            for (a, b), v in sorted(pair_iou.items())
        ],
    }


def _columns(segments: list[list[float]]) -> tuple[np.ndarray, np.ndarray]:
    """Start and end columns of a list of [start, end]."""
    array = np.array(segments, dtype=np.float64).reshape(-1, 2)
    return array[:, 0], array[:, 1]
