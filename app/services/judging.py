"""The assessor's queue: lease the next item, record verdicts (every change kept), report progress."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from app.services.auth import Principal
from app.services.collection import media_url
from app.services.errors import Conflict, Forbidden, NotFound
from app.services.pools import current_pool, get_pool
from app.storage.models import (
    Assessor,
    Assignment,
    Campaign,
    CollectionItem,
    Judgement,
    JudgementChange,
    JudgingTask,
    PoolItem,
    Role,
    Topic,
    Verdict,
)

GRADES = {Verdict.relevant: 1, Verdict.not_relevant: 0, Verdict.unsure: None}

# Claiming the next task, cheapest first (later rounds only of topics assigned to the caller, never the caller's own
# first-round items); each query walks an index in judging order and stops at the first
# free task (SKIP LOCKED lets concurrent assessors pass over each other's candidates).
_OWN_LEASE = text(
    """
    SELECT t.id FROM judging_tasks t
    WHERE t.leased_to = :me AND t.done_at IS NULL
    ORDER BY t.id LIMIT 1 FOR UPDATE SKIP LOCKED
    """
)
_FIRST_ROUND = text(
    """
    SELECT t.id FROM assignments a
    JOIN pool_items i ON i.pool_id = a.pool_id AND i.topic_id = a.topic_id
    JOIN judging_tasks t ON t.pool_item_id = i.id AND t.round = 1
    WHERE a.pool_id = :pool AND a.assessor_id = :me AND i.sampled AND t.done_at IS NULL
      AND (t.leased_to IS NULL OR t.lease_expires_at < now())
    ORDER BY i.topic_id, i.judging_order
    LIMIT 1 FOR UPDATE OF t SKIP LOCKED
    """
)
_LATER_ROUNDS = text(
    """
    SELECT t.id FROM judging_tasks t
    JOIN pool_items i ON i.id = t.pool_item_id
    WHERE i.pool_id = :pool AND t.round > 1 AND t.done_at IS NULL
      AND (t.leased_to IS NULL OR t.lease_expires_at < now())
      AND (t.excluded_assessor_id IS NULL OR t.excluded_assessor_id <> :me)
      AND EXISTS (
        SELECT 1 FROM assignments a WHERE a.pool_id = :pool AND a.topic_id = i.topic_id AND a.assessor_id = :me
      )
    ORDER BY t.round, i.topic_id, i.judging_order
    LIMIT 1 FOR UPDATE OF t SKIP LOCKED
    """
)
_LEASE = text(
    """
    UPDATE judging_tasks
    SET leased_to = :me, leased_at = now(), lease_expires_at = now() + make_interval(secs => :lease)
    WHERE id = :task
    """
)


@dataclass(frozen=True)
class TaskView:
    """What an assessor is shown: the topic and the shot, nothing about runs, ranks or other verdicts."""

    task_id: int
    topic: str
    topic_title: str
    shot_id: str
    video_id: str | None
    start: float | None
    end: float | None
    media_url: str | None
    verdict: Verdict | None = None


def _assessor(principal: Principal) -> int:
    """The caller's assessor id (Forbidden for other roles)."""
    if principal.role is not Role.assessor or principal.assessor_id is None:
        raise Forbidden("only assessors judge")
    return principal.assessor_id


def _view(session: Session, task: JudgingTask, verdict: Verdict | None = None) -> TaskView:
    """The blind view of a task."""
    item = session.get(PoolItem, task.pool_item_id)
    assert item is not None
    topic = session.get(Topic, item.topic_id)
    assert topic is not None
    campaign = session.get(Campaign, topic.campaign_id)
    assert campaign is not None
    shot = session.get(CollectionItem, (campaign.id, item.docno))
    return TaskView(
        task_id=task.id,
        topic=topic.number,
        topic_title=topic.title,
        shot_id=item.docno,
        video_id=shot.video_id if shot else None,
        start=shot.start if shot else None,
        end=shot.end if shot else None,
        media_url=media_url(campaign, shot) if shot else None,
        verdict=verdict,
    )


def next_task(session: Session, principal: Principal, *, lease_seconds: float) -> TaskView | None:
    """Lease the assessor's next item (its current lease first); None when nothing is left."""
    me = _assessor(principal)
    assert principal.campaign_id is not None
    pool = current_pool(session, principal.campaign_id)
    if pool is None:
        return None
    params = {"pool": pool.id, "me": me}
    task_id = None
    for query in (_OWN_LEASE, _FIRST_ROUND, _LATER_ROUNDS):
        task_id = session.execute(query, params).scalar()
        if task_id is not None:
            break
    if task_id is None:
        return None
    session.execute(_LEASE, {"me": me, "task": task_id, "lease": lease_seconds})
    task = session.get(JudgingTask, task_id)
    assert task is not None
    return _view(session, task)


def _now() -> datetime:
    """The current time, timezone-aware."""
    return datetime.now(UTC)


def judge(
    session: Session, principal: Principal, task_id: int, verdict: Verdict, *, seconds_spent: float | None = None
) -> TaskView:
    """Record a verdict on a leased task, or change the caller's own earlier verdict on it."""
    me = _assessor(principal)
    task = session.get(JudgingTask, task_id, with_for_update=True)
    if task is None:
        raise NotFound(f"item {task_id} not found")
    current = session.scalar(
        select(Judgement).where(Judgement.pool_item_id == task.pool_item_id, Judgement.round == task.round)
    )
    if current is not None:
        if current.assessor_id != me:
            raise NotFound(f"item {task_id} not found")
        if current.verdict is not verdict:
            session.add(
                JudgementChange(
                    judgement_id=current.id, changed_by=me, old_verdict=current.verdict, new_verdict=verdict
                )
            )
            current.verdict, current.grade, current.updated_at = verdict, GRADES[verdict], _now()
        session.flush()
        return _view(session, task, verdict)
    if task.leased_to != me:
        raise Conflict(f"item {task_id} is not leased to you (the lease may have expired); ask for the next item")
    now = _now()
    if seconds_spent is None and task.leased_at is not None:
        seconds_spent = (now - task.leased_at).total_seconds()
    judgement = Judgement(
        pool_item_id=task.pool_item_id,
        assessor_id=me,
        round=task.round,
        verdict=verdict,
        grade=GRADES[verdict],
        seconds_spent=seconds_spent,
        created_at=now,
        updated_at=now,
    )
    session.add(judgement)
    session.flush()
    session.add(JudgementChange(judgement_id=judgement.id, changed_by=me, old_verdict=None, new_verdict=verdict))
    task.done_at, task.leased_to, task.lease_expires_at = now, None, None
    session.flush()
    return _view(session, task, verdict)


def own_task(session: Session, principal: Principal, task_id: int) -> TaskView:
    """A task the caller has judged, with the caller's verdict (for going back)."""
    me = _assessor(principal)
    task = session.get(JudgingTask, task_id)
    judgement = None
    if task is not None:
        judgement = session.scalar(
            select(Judgement).where(Judgement.pool_item_id == task.pool_item_id, Judgement.round == task.round)
        )
    if task is None or judgement is None or judgement.assessor_id != me:
        raise NotFound(f"item {task_id} not found")
    return _view(session, task, judgement.verdict)


def own_history(session: Session, principal: Principal, limit: int = 50) -> list[int]:
    """Task ids the caller judged, newest first."""
    me = _assessor(principal)
    rows = session.execute(
        select(JudgingTask.id)
        .join(Judgement, (Judgement.pool_item_id == JudgingTask.pool_item_id) & (Judgement.round == JudgingTask.round))
        .where(Judgement.assessor_id == me)
        .order_by(Judgement.created_at.desc(), JudgingTask.id.desc())
        .limit(limit)
    )
    return [task_id for (task_id,) in rows]


def own_progress(session: Session, principal: Principal) -> dict[str, int]:
    """How many of the caller's round-1 items are done, of how many."""
    me = _assessor(principal)
    assert principal.campaign_id is not None
    pool = current_pool(session, principal.campaign_id)
    if pool is None:
        return {"done": 0, "total": 0}
    topics = select(Assignment.topic_id).where(Assignment.pool_id == pool.id, Assignment.assessor_id == me)
    total, done = session.execute(
        select(func.count(), func.count(JudgingTask.done_at))
        .select_from(JudgingTask)
        .join(PoolItem, PoolItem.id == JudgingTask.pool_item_id)
        .where(PoolItem.pool_id == pool.id, JudgingTask.round == 1, PoolItem.topic_id.in_(topics))
    ).one()
    mine = session.scalar(
        select(func.count())
        .select_from(Judgement)
        .join(PoolItem)
        .where(PoolItem.pool_id == pool.id, Judgement.assessor_id == me)
    )
    return {"done": int(done), "total": int(total), "judged_by_you": int(mine or 0)}


def pool_progress(session: Session, principal: Principal, pool_id: int) -> dict[str, list[dict[str, object]]]:
    """Organisers' view: per topic done/total by round, per assessor count and time spent."""
    pool = get_pool(session, principal, pool_id)
    per_topic = session.execute(
        select(Topic.number, JudgingTask.round, func.count(), func.count(JudgingTask.done_at))
        .join(PoolItem, PoolItem.id == JudgingTask.pool_item_id)
        .join(Topic, Topic.id == PoolItem.topic_id)
        .where(PoolItem.pool_id == pool.id)
        .group_by(Topic.number, JudgingTask.round)
        .order_by(Topic.number, JudgingTask.round)
    )
    per_assessor = session.execute(
        select(
            Assessor.id,
            Assessor.name,
            Topic.number,
            func.count(),
            func.avg(Judgement.seconds_spent),
            func.sum(Judgement.seconds_spent),
        )
        .join(Judgement, Judgement.assessor_id == Assessor.id)
        .join(PoolItem, PoolItem.id == Judgement.pool_item_id)
        .join(Topic, Topic.id == PoolItem.topic_id)
        .where(PoolItem.pool_id == pool.id)
        .group_by(Assessor.id, Assessor.name, Topic.number)
        .order_by(Assessor.id, Topic.number)
    )
    return {
        "topics": [{"topic": t, "round": r, "total": n, "done": d} for t, r, n, d in per_topic],
        "assessors": [
            {
                "assessor_id": a,
                "assessor": name,
                "topic": t,
                "judged": n,
                "mean_seconds": float(mean) if mean is not None else None,
                "total_seconds": float(total) if total is not None else None,
            }
            for a, name, t, n, mean, total in per_assessor
        ],
    }
