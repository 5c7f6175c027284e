"""The assessor's queue: lease the next item, record verdicts (every change kept), report progress."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import Field
from pydantic import dataclasses as pydantic_dataclasses
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from app.services import judging_orders
from app.services.auth import Principal
from app.services.collection import format_media_url
from app.services.errors import Conflict, Forbidden, InvalidInput, NotFound
from app.services.pools import current_pool, get_pool
from app.services.topics import TopicExample
from app.storage.models import (
    Assessor,
    AssessorKind,
    Judgement,
    JudgementChange,
    JudgingTask,
    PoolItem,
    Role,
    Topic,
    Verdict,
)

GRADES = {Verdict.relevant: 1, Verdict.not_relevant: 0, Verdict.unsure: None}
MODEL_ON_PAGE = "this is the judging page of people: a model assessor judges through the batch API (/api/judging/batch)"

# Claiming the next tasks, cheapest first (later rounds only of topics assigned to the caller, never the caller's own
# first-round items); each query walks an index in judging order and stops at the first free tasks (SKIP LOCKED lets
# concurrent assessors pass over each other's candidates).
# The first query also finds the campaign's current pool (the newest), in the same round trip, with the caller's own
# leases, oldest first: the page leases one item ahead (it preloads its media), so an assessor may hold two.
# A task put off for later ("skip") is released with `leased_at` kept: a free task with a `leased_at` and no
# `leased_to` waits at the end of the queue (oldest first), after every other task the caller may take.
# Interleaving, within the current topic (that of the caller's newest lease): the first query also finds one task
# due there (`due`): an item put off once the caller has given the campaign's `interleave_every` first-round verdicts
# in the topic since it was put off, or a second opinion once as many came since the caller's last later-round verdict
# there (one at a time); with 0, or when the topic's first round has no free task left, any of them, before the next
# topic. A second opinion of a topic the caller has left waits for the end of the queue, as before.
_POOL_AND_OWN_LEASES = text(
    """
    WITH head AS (
        SELECT
          (SELECT a.kind FROM assessors a WHERE a.id = :me) AS kind,
          (SELECT c.max_grade FROM campaigns c WHERE c.id = :campaign) AS max_grade,
          (SELECT c.interleave_every FROM campaigns c WHERE c.id = :campaign) AS every,
          (SELECT c.audio_on FROM campaigns c WHERE c.id = :campaign) AS audio_on,
          (SELECT p.id FROM pools p WHERE p.campaign_id = :campaign ORDER BY p.id DESC LIMIT 1) AS pool
    ), held AS (
        SELECT t.id, t.leased_at, t.round, i.pool_id, i.topic_id FROM judging_tasks t
        JOIN pool_items i ON i.id = t.pool_item_id
        WHERE t.leased_to = :me AND t.done_at IS NULL
        ORDER BY t.leased_at, t.id LIMIT :n FOR UPDATE OF t SKIP LOCKED
    ), cur AS (
        SELECT held.topic_id FROM held, head WHERE held.pool_id = head.pool ORDER BY held.leased_at DESC, held.id DESC
        LIMIT 1
    ), mine AS (
        SELECT j.round, j.created_at FROM cur, head
        JOIN pool_items i ON i.pool_id = head.pool
        JOIN judgements j ON j.pool_item_id = i.id AND j.assessor_id = :me
        WHERE i.topic_id = cur.topic_id
    ), state AS (
        SELECT NOT EXISTS (
                 SELECT 1 FROM cur, head
                 JOIN pool_items i ON i.pool_id = head.pool
                 JOIN judging_tasks t ON t.pool_item_id = i.id AND t.round = 1
                 WHERE i.topic_id = cur.topic_id AND i.sampled AND t.done_at IS NULL
                   AND ((t.leased_to IS NULL AND t.leased_at IS NULL) OR t.lease_expires_at < now())
                   AND t.id NOT IN (SELECT id FROM held)
               ) AS topic_done,
               (SELECT count(*) FROM mine WHERE round = 1 AND created_at > coalesce(
                  (SELECT max(created_at) FROM mine WHERE round > 1), '-infinity')) AS streak
    )
    SELECT head.kind, head.max_grade, head.audio_on, head.pool,
      ARRAY(SELECT id FROM held ORDER BY leased_at, id) AS tasks,
      ARRAY(
        SELECT t.id FROM cur, head, state, judging_tasks t
        JOIN pool_items i ON i.id = t.pool_item_id
        WHERE i.pool_id = head.pool AND i.topic_id = cur.topic_id AND t.done_at IS NULL
          AND t.id NOT IN (SELECT id FROM held)
          AND ((t.round = 1 AND i.sampled) OR (t.round > 1 AND t.excluded_assessor_id IS DISTINCT FROM :me))
          AND (
            (t.leased_to IS NULL AND t.leased_at IS NOT NULL AND (
               state.topic_done
               OR (head.every > 0 AND (SELECT count(*) FROM mine m WHERE m.round = 1 AND m.created_at > t.leased_at)
                                      >= head.every)))
            OR (t.round > 1 AND ((t.leased_to IS NULL AND t.leased_at IS NULL) OR t.lease_expires_at < now())
                AND NOT EXISTS (SELECT 1 FROM held WHERE held.round > 1)
                AND (state.topic_done OR (head.every > 0 AND state.streak >= head.every)))
          )
        ORDER BY t.leased_at NULLS LAST, t.round, i.judging_order, t.id
        LIMIT 1
      ) AS due
    FROM head
    """
)
# Claiming the tasks found due (interleaved), in the order found, those still free.
_DUE = text(
    """
    SELECT t.id FROM judging_tasks t
    WHERE t.id = ANY(CAST(:due AS bigint[])) AND t.done_at IS NULL
      AND (t.leased_to IS NULL OR t.lease_expires_at < now())
    ORDER BY array_position(CAST(:due AS bigint[]), t.id)
    LIMIT :n FOR UPDATE OF t SKIP LOCKED
    """
)
_FREE = "((t.leased_to IS NULL AND t.leased_at IS NULL) OR t.lease_expires_at < now())"
_FIRST_ROUND = text(
    f"""
    SELECT t.id FROM assignments a
    JOIN pool_items i ON i.pool_id = a.pool_id AND i.topic_id = a.topic_id
    JOIN judging_tasks t ON t.pool_item_id = i.id AND t.round = 1
    WHERE a.pool_id = :pool AND a.assessor_id = :me AND i.sampled AND t.done_at IS NULL
      AND {_FREE} AND t.id <> ALL(CAST(:held AS bigint[]))
    ORDER BY i.topic_id, i.judging_order
    LIMIT :n FOR UPDATE OF t SKIP LOCKED
    """
)
_LATER_ROUNDS = text(
    f"""
    SELECT t.id FROM judging_tasks t
    JOIN pool_items i ON i.id = t.pool_item_id
    WHERE i.pool_id = :pool AND t.round > 1 AND t.done_at IS NULL
      AND {_FREE} AND t.id <> ALL(CAST(:held AS bigint[]))
      AND (t.excluded_assessor_id IS NULL OR t.excluded_assessor_id <> :me)
      AND EXISTS (
        SELECT 1 FROM assignments a WHERE a.pool_id = :pool AND a.topic_id = i.topic_id AND a.assessor_id = :me
      )
    ORDER BY t.round, i.topic_id, i.judging_order
    LIMIT :n FOR UPDATE OF t SKIP LOCKED
    """
)
# Tasks put off for later, of any round the caller may take, in the order they were put off (asked only when the
# rest of the queue is empty).
_PUT_OFF = text(
    """
    SELECT t.id FROM judging_tasks t
    JOIN pool_items i ON i.id = t.pool_item_id
    WHERE i.pool_id = :pool AND t.done_at IS NULL AND t.leased_to IS NULL AND t.leased_at IS NOT NULL
      AND ((t.round = 1 AND i.sampled) OR (t.round > 1 AND t.excluded_assessor_id IS DISTINCT FROM :me))
      AND EXISTS (
        SELECT 1 FROM assignments a WHERE a.pool_id = :pool AND a.topic_id = i.topic_id AND a.assessor_id = :me
      )
    ORDER BY t.leased_at, t.id
    LIMIT :n FOR UPDATE OF t SKIP LOCKED
    """
)
# Putting a leased task off for later: its lease released, `leased_at` set to now (its place at the queue's end).
_PUT_OFF_TASK = text(
    """
    UPDATE judging_tasks SET leased_to = NULL, lease_expires_at = NULL, leased_at = now()
    WHERE id = :task AND leased_to = :me AND done_at IS NULL
    RETURNING id
    """
)
# A break: the caller's unanswered leases released as free tasks (no `leased_at`: back in their place in the queue,
# not at its end as an item put off).
_RELEASE = text(
    """
    UPDATE judging_tasks SET leased_to = NULL, lease_expires_at = NULL, leased_at = NULL
    WHERE leased_to = :me AND done_at IS NULL
    RETURNING id
    """
)
# The caller's counts, per assigned topic of the pool: round-1 tasks, those not done yet (by anyone), and the
# caller's own judgements (any round); one round trip.
_PROGRESS = text(
    """
    SELECT tp.number AS topic, count(DISTINCT t.id) AS total,
           count(DISTINCT t.id) FILTER (WHERE t.done_at IS NULL) AS left, count(DISTINCT j.id) AS mine
    FROM assignments a
    JOIN topics tp ON tp.id = a.topic_id
    JOIN pool_items i ON i.pool_id = a.pool_id AND i.topic_id = a.topic_id
    LEFT JOIN judging_tasks t ON t.pool_item_id = i.id AND t.round = 1
    LEFT JOIN judgements j ON j.pool_item_id = i.id AND j.assessor_id = a.assessor_id
    WHERE a.pool_id = :pool AND a.assessor_id = :me
    GROUP BY tp.id, tp.number
    ORDER BY tp.id
    """
)


# A pydantic dataclass: the REST endpoints return it as it is (their response model), so its fields are declared
# and described here only.
@pydantic_dataclasses.dataclass(frozen=True)
class TaskView:
    """A shot to judge for a topic: nothing about runs, ranks, counts or others' verdicts."""

    task_id: int
    topic: str
    topic_title: str
    topic_description: Annotated[str, Field(description="The topic's description, shown beside the video")]
    topic_guidelines: Annotated[str, Field(description="The organiser's judging guidelines for the topic")]
    topic_examples: Annotated[
        list[TopicExample], Field(description="Example images of the topic (http(s) URLs), with captions")
    ]
    shot_id: str
    video_id: str | None
    start: float | None
    end: float | None
    media_url: str | None
    verdict: Annotated[Verdict | None, Field(description="Your own verdict, when you go back to an item")] = None
    grade: Annotated[
        int | None, Field(description="Your own grade on the campaign's scale (0..max_grade), with your verdict")
    ] = None


def _assessor(principal: Principal) -> int:
    """The caller's assessor id (Forbidden for other roles)."""
    if principal.role is not Role.assessor or principal.assessor_id is None:
        raise Forbidden("only assessors judge")
    return principal.assessor_id


def _refuse_models(kind: str | None) -> None:
    """Forbidden for a model assessor: the judging page and its endpoints are for people."""
    if kind == AssessorKind.model.value:
        raise Forbidden(MODEL_ON_PAGE)


def _check_person(session: Session, me: int) -> None:
    """Forbidden unless the assessor is a person."""
    _refuse_models(session.scalar(select(Assessor.kind).where(Assessor.id == me)))


def verdict_grade(verdict: Verdict, grade: int | None, max_grade: int) -> int | None:
    """The grade stored with a verdict on a 0..max_grade scale: relevant is `grade` (1 when not given) in
    1..max_grade, not_relevant is 0, unsure has none; InvalidInput naming `grade` when it contradicts the verdict."""
    if verdict is Verdict.relevant:
        chosen = 1 if grade is None else grade
        if not 1 <= chosen <= max_grade:
            scale = "1 (the campaign is binary)" if max_grade == 1 else f"from 1 to {max_grade}"
            raise InvalidInput("grade off the scale", [{"field": "grade", "message": f"a relevant grade is {scale}"}])
        return chosen
    if verdict is Verdict.not_relevant:
        if grade not in (None, 0):
            raise InvalidInput("grade contradicts the verdict", [{"field": "grade", "message": "not_relevant is 0"}])
        return 0
    if grade is not None:
        raise InvalidInput("grade contradicts the verdict", [{"field": "grade", "message": "unsure takes no grade"}])
    return None


# The blind view of one task, in one round trip: the task's topic and shot, with the campaign's media template.
_VIEW_COLUMNS = """
    t.id AS task_id, tp.number AS topic, tp.title AS topic_title, tp.description AS topic_description,
    tp.guidelines AS topic_guidelines, tp.examples AS topic_examples, i.docno AS shot_id,
    ci.video_id, ci.start, ci."end", c.media_url_template
"""
_VIEW_JOINS = """
    JOIN pool_items i ON i.id = t.pool_item_id
    JOIN topics tp ON tp.id = i.topic_id
    JOIN campaigns c ON c.id = tp.campaign_id
    LEFT JOIN collection_items ci ON ci.campaign_id = c.id AND ci.shot_id = i.docno
"""
_VIEW = text(f"SELECT {_VIEW_COLUMNS} FROM judging_tasks t {_VIEW_JOINS} WHERE t.id = :task")
# Leasing tasks (renewing the caller's own leases, whose `leased_at` stays while they hold) and reading their
# views, in the order asked, in one round trip.
_LEASE_AND_VIEW = text(
    f"""
    WITH t AS (
        UPDATE judging_tasks
        SET leased_to = :me,
            leased_at = CASE WHEN leased_to = :me AND lease_expires_at >= now() THEN leased_at ELSE now() END,
            lease_expires_at = now() + make_interval(secs => :lease)
        WHERE id = ANY(CAST(:tasks AS bigint[]))
        RETURNING id, pool_item_id
    )
    SELECT {_VIEW_COLUMNS} FROM t {_VIEW_JOINS}
    ORDER BY array_position(CAST(:tasks AS bigint[]), t.id)
    """
)
# A task, locked, with the judgement already made in its round (if any).
# With the item's pool, topic and the pool's judging order (an adaptive order is moved on by every first verdict).
_TASK_FOR_VERDICT = text(
    """
    SELECT t.id, t.pool_item_id, t.round, t.leased_to, t.leased_at, j.id AS judgement_id, j.assessor_id,
           i.pool_id, i.topic_id, coalesce(p.params->>'order', 'shuffled') AS judging_order, p.seed, c.max_grade,
           (SELECT a.kind FROM assessors a WHERE a.id = :me) AS my_kind,
           (t.leased_to IS NULL OR t.lease_expires_at < now()) AS free,
           (t.round = 1 AND i.sampled OR t.round > 1 AND t.excluded_assessor_id IS DISTINCT FROM :me)
             AND EXISTS (SELECT 1 FROM assignments a
                         WHERE a.pool_id = i.pool_id AND a.topic_id = i.topic_id AND a.assessor_id = :me)
             AND c.id = :campaign
             AS mine_to_take
    FROM judging_tasks t
    JOIN pool_items i ON i.id = t.pool_item_id
    JOIN pools p ON p.id = i.pool_id
    JOIN campaigns c ON c.id = p.campaign_id
    LEFT JOIN judgements j ON j.pool_item_id = t.pool_item_id AND j.round = t.round
    WHERE t.id = :task
    FOR UPDATE OF t
    """
)
# A first verdict: the judgement, its change record and the finished task, then the view, in one round trip.
_FIRST_VERDICT = text(
    f"""
    WITH j AS (
        INSERT INTO judgements (pool_item_id, assessor_id, round, verdict, grade, seconds_spent, created_at, updated_at)
        VALUES (:item, :me, :round, CAST(:verdict AS verdict), :grade, :seconds, now(), now())
        RETURNING id
    ), c AS (
        INSERT INTO judgement_changes (judgement_id, changed_by, old_verdict, new_verdict)
        SELECT id, :me, NULL, CAST(:verdict AS verdict) FROM j
    ), t AS (
        UPDATE judging_tasks SET done_at = now(), leased_to = NULL, lease_expires_at = NULL
        WHERE id = :task
        RETURNING id, pool_item_id
    )
    SELECT {_VIEW_COLUMNS} FROM t {_VIEW_JOINS}
    """
)


def _task_view(row: Any, verdict: Verdict | None = None, grade: int | None = None) -> TaskView:
    """The blind view of a task from a row of `_VIEW_COLUMNS`, with the caller's verdict and grade when given."""
    has_shot = row.video_id is not None
    return TaskView(
        task_id=row.task_id,
        topic=row.topic,
        topic_title=row.topic_title,
        topic_description=row.topic_description,
        topic_guidelines=row.topic_guidelines,
        topic_examples=[TopicExample(e["url"], e.get("caption", "")) for e in row.topic_examples or []],
        shot_id=row.shot_id,
        video_id=row.video_id,
        start=row.start,
        end=row.end,
        media_url=format_media_url(row.media_url_template, row.shot_id, row.video_id, row.start, row.end)
        if has_shot
        else None,
        verdict=verdict,
        grade=grade,
    )


def _view(session: Session, task_id: int, verdict: Verdict | None = None, grade: int | None = None) -> TaskView:
    """The blind view of a task."""
    return _task_view(session.execute(_VIEW, {"task": task_id}).one(), verdict, grade)


@dataclass(frozen=True)
class Queue:
    """The caller's current pool, its next items (leased), the campaign's grade scale 0..max_grade and whether its
    judging page starts with sound."""

    pool_id: int | None
    views: list[TaskView]
    max_grade: int
    audio_on: bool


def _pool_and_next(session: Session, principal: Principal, *, lease_seconds: float, n: int) -> Queue:
    """The current pool and the caller's next `n` items, leased: its own leases first (oldest first), then new ones
    (first round, later rounds, then items put off for later); at most 3 round trips of claiming and one of leasing."""
    me = _assessor(principal)
    assert principal.campaign_id is not None
    own = {"campaign": principal.campaign_id, "me": me, "n": n}
    kind, max_grade, audio_on, pool_id, held, due = session.execute(_POOL_AND_OWN_LEASES, own).one()
    _refuse_models(kind)
    if pool_id is None:
        return Queue(None, [], max_grade, audio_on)
    tasks = list(held)
    if due and len(tasks) < n:  # interleaved: a second opinion or an item put off, due in the current topic
        tasks += session.execute(_DUE, {"due": due, "n": n - len(tasks)}).scalars().all()
    for query in (_FIRST_ROUND, _LATER_ROUNDS, _PUT_OFF):
        if len(tasks) >= n:
            break
        params = {"pool": pool_id, "me": me, "n": n - len(tasks), "held": tasks}
        tasks += session.execute(query, params).scalars().all()
    if not tasks:
        return Queue(pool_id, [], max_grade, audio_on)
    rows = session.execute(_LEASE_AND_VIEW, {"me": me, "tasks": tasks, "lease": lease_seconds}).all()
    return Queue(pool_id, [_task_view(row) for row in rows], max_grade, audio_on)


def next_tasks(session: Session, principal: Principal, *, lease_seconds: float, n: int = 1) -> list[TaskView]:
    """Lease the assessor's next `n` items (its current leases first); empty when nothing is left."""
    return _pool_and_next(session, principal, lease_seconds=lease_seconds, n=n).views


def next_task(session: Session, principal: Principal, *, lease_seconds: float) -> TaskView | None:
    """Lease the assessor's next item (its current lease first); None when nothing is left."""
    views = next_tasks(session, principal, lease_seconds=lease_seconds, n=1)
    return views[0] if views else None


def put_off(session: Session, principal: Principal, task_id: int) -> None:
    """Release a task leased to the caller, without a verdict, to the end of the queue ("later")."""
    me = _assessor(principal)
    if session.execute(_PUT_OFF_TASK, {"task": task_id, "me": me}).first() is None:
        _check_person(session, me)
        raise Conflict(f"item {task_id} is not leased to you (judged, or its lease expired); ask for the next item")


def release(session: Session, principal: Principal) -> list[int]:
    """Release the caller's unanswered leases (a break): they go back to the queue as free items, for anyone; the
    ids released."""
    me = _assessor(principal)
    _check_person(session, me)
    return sorted(session.execute(_RELEASE, {"me": me}).scalars().all())


def _now() -> datetime:
    """The current time, timezone-aware."""
    return datetime.now(UTC)


def _judged_already(task_id: int, verdict: Verdict) -> Conflict:
    """The 409 of a first verdict on an item the caller has judged already, naming the stored verdict."""
    return Conflict(
        f"item {task_id} is judged already: your verdict is {verdict.value} (given in another tab or window?); "
        "a verdict is changed only by going back to it (change: true)"
    )


def _own_judgement(session: Session, me: int, pool_item_id: int, round_: int) -> Judgement | None:
    """The caller's judgement of an item's round, read afresh (after waiting for the task's lock)."""
    return session.scalar(
        select(Judgement).where(
            Judgement.pool_item_id == pool_item_id, Judgement.round == round_, Judgement.assessor_id == me
        )
    )


def judge(
    session: Session,
    principal: Principal,
    task_id: int,
    verdict: Verdict,
    *,
    seconds_spent: float | None = None,
    change: bool = False,
    grade: int | None = None,
) -> TaskView:
    """Record a first verdict (with its grade, see `verdict_grade`) on a leased task or, with `change`, change the
    caller's own earlier verdict or grade on it.

    A first verdict on an item the caller judged already (two tabs on one item) is a Conflict naming the stored
    verdict: it never replaces it silently. `change` on an item without a verdict of the caller's is NotFound.
    """
    me = _assessor(principal)
    task = session.execute(
        _TASK_FOR_VERDICT, {"task": task_id, "me": me, "campaign": principal.campaign_id}
    ).one_or_none()
    if task is None:
        _check_person(session, me)
        raise NotFound(f"item {task_id} not found")
    _refuse_models(task.my_kind)
    grade = verdict_grade(verdict, grade, task.max_grade)
    if task.judgement_id is not None:
        if task.assessor_id != me:
            raise NotFound(f"item {task_id} not found")
        current = session.get(Judgement, task.judgement_id)
        assert current is not None
        if not change:
            raise _judged_already(task_id, current.verdict)
        if current.verdict is not verdict:
            session.add(
                JudgementChange(
                    judgement_id=current.id, changed_by=me, old_verdict=current.verdict, new_verdict=verdict
                )
            )
        if current.verdict is not verdict or current.grade != grade:  # a grade alone changed: the audit trail keeps it
            current.verdict, current.grade, current.updated_at = verdict, grade, _now()
        session.flush()
        return _view(session, task.id, verdict, grade)
    if change:
        raise NotFound(f"item {task_id} has no verdict of yours to change")
    if task.leased_to != me:
        # judged meanwhile by the caller's other tab, whose transaction held the task's lock while this one waited
        stored = _own_judgement(session, me, task.pool_item_id, task.round)
        if stored is not None:
            raise _judged_already(task_id, stored.verdict)
        if not (task.free and task.mine_to_take):  # a lapsed lease's verdict is kept while nobody else holds it
            raise Conflict(
                f"item {task_id} is reserved by another assessor now (your reservation lapsed): not saved; "
                "ask for the next item"
            )
    if seconds_spent is None and task.leased_at is not None and task.leased_to == me:
        seconds_spent = (_now() - task.leased_at).total_seconds()
    adaptive = task.round == 1 and not judging_orders.is_random(task.judging_order)
    if adaptive:
        judging_orders.lock_topic(session, task.pool_id, task.topic_id)
    params = {
        "task": task.id,
        "item": task.pool_item_id,
        "round": task.round,
        "me": me,
        "verdict": verdict.value,
        "grade": grade,
        "seconds": seconds_spent,
    }
    view = _task_view(session.execute(_FIRST_VERDICT, params).one(), verdict, grade)
    if adaptive:
        judging_orders.advance(session, task.pool_id, task.judging_order, task.seed, task.topic_id)
    return view


def own_task(session: Session, principal: Principal, task_id: int) -> TaskView:
    """A task the caller has judged, with the caller's verdict and grade (for going back)."""
    me = _assessor(principal)
    _check_person(session, me)
    task = session.get(JudgingTask, task_id)
    judgement = None
    if task is not None:
        judgement = session.scalar(
            select(Judgement).where(Judgement.pool_item_id == task.pool_item_id, Judgement.round == task.round)
        )
    if task is None or judgement is None or judgement.assessor_id != me:
        raise NotFound(f"item {task_id} not found")
    return _view(session, task.id, judgement.verdict, judgement.grade)


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


def _progress(session: Session, me: int, pool_id: int | None) -> dict[str, Any]:
    """The caller's progress in a pool: round-1 items of its topics done (by anyone) and in all, its own judgements,
    and per topic: items, items left, its own judgements."""
    topics = []
    if pool_id is not None:
        topics = [
            {"topic": r.topic, "total": int(r.total), "left": int(r.left), "judged_by_you": int(r.mine)}
            for r in session.execute(_PROGRESS, {"pool": pool_id, "me": me})
        ]
    total = sum(t["total"] for t in topics)
    return {
        "done": total - sum(t["left"] for t in topics),
        "total": total,
        "judged_by_you": sum(t["judged_by_you"] for t in topics),
        "topics": topics,
    }


def own_progress(session: Session, principal: Principal) -> dict[str, Any]:
    """How many of the caller's round-1 items are done (by anyone), of how many; how many it judged, per topic too."""
    me = _assessor(principal)
    assert principal.campaign_id is not None
    pool = current_pool(session, principal.campaign_id)
    return _progress(session, me, pool.id if pool is not None else None)


@dataclass(frozen=True)
class Step:
    """One step through the queue: the item judged (or put off), the next items leased, the caller's progress, the
    campaign's grade scale 0..max_grade and whether its judging page starts with sound."""

    judged: TaskView | None
    put_off: int | None
    next: list[TaskView]
    progress: dict[str, Any]
    max_grade: int
    audio_on: bool


def step(
    session: Session,
    principal: Principal,
    *,
    lease_seconds: float,
    ahead: int,
    task_id: int | None = None,
    verdict: Verdict | None = None,
    later: bool = False,
    seconds_spent: float | None = None,
    change: bool = False,
    grade: int | None = None,
) -> Step:
    """Judge an item (or change a verdict of one's, or put it off for later, or neither), then lease the next
    1 + `ahead` items and count the caller's progress: what a page needs per key press, in one request of a handful
    of round trips."""
    me = _assessor(principal)
    judged = None
    if task_id is not None and verdict is not None:
        judged = judge(session, principal, task_id, verdict, seconds_spent=seconds_spent, change=change, grade=grade)
    elif task_id is not None and later:
        put_off(session, principal, task_id)
    queue = _pool_and_next(session, principal, lease_seconds=lease_seconds, n=1 + ahead)
    progress = _progress(session, me, queue.pool_id)
    return Step(judged, task_id if later else None, queue.views, progress, queue.max_grade, queue.audio_on)


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
