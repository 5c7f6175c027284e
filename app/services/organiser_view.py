"""The organiser's view of a campaign: judging progress per topic and assessor, time left, QC and adjudication
queues, and the campaign's jobs. Read-only: it never writes or flushes.

Time left is working time: an assessor's remaining items times the median seconds of their last `RECENT` timed
judgements (a verdict left open overnight does not move a median). An assessor's remaining items are the open tasks
they may take: round 1 of their topics, and later rounds of their topics they did not judge first. A topic shared by
two assessors counts for both, so the campaign's time left (the slowest assessor's, as they work side by side) is an
upper bound there.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field, computed_field
from pydantic import dataclasses as pydantic_dataclasses
from sqlalchemy import Row, text
from sqlalchemy.orm import Session

from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.pools import current_pool

RECENT = 50  # judgements an assessor's recent pace is measured over
LISTED = 100  # queue items listed (the counts are always whole)
JOBS_LISTED = 50  # jobs listed per kind: unfinished first, then the newest
ACTIVE = ("queued", "running")

JobType = Literal["evaluation", "analysis"]


# The view's classes are pydantic dataclasses: the organiser page reads them and the REST endpoint returns them as
# they are (its response model), so each field is declared, and described, here only.


@pydantic_dataclasses.dataclass(frozen=True)
class RoundProgress:
    """Judging tasks of one round of a topic (1 = first, 2 = quality-control second opinion)."""

    round: int
    total: int
    done: int


@pydantic_dataclasses.dataclass(frozen=True)
class TopicProgress:
    """One topic's judging: round-1 tasks done of total, relevant so far, awaiting adjudication, its assessors."""

    topic: str
    title: str
    pooled: Annotated[int, Field(description="Pooled items, sampled or not")]
    total: Annotated[int, Field(description="Round-1 tasks: the sampled items")]
    judged: Annotated[int, Field(description="Round-1 tasks done")]
    relevant: Annotated[
        int, Field(description="Items whose settled verdict (adjudication, else first round) is relevant")
    ]
    awaiting_adjudication: int
    rounds: list[RoundProgress]
    assessors: list[str]


@pydantic_dataclasses.dataclass(frozen=True)
class AssessorProgress:
    """One assessor's pace and the working time their open tasks should take."""

    assessor_id: int
    assessor: str
    topics: list[str]
    judged: Annotated[int, Field(description="Judgements made in the pool, all rounds")]
    mean_seconds: Annotated[float | None, Field(description="Mean seconds per judgement")]
    recent_seconds: Annotated[
        float | None, Field(description=f"Median seconds of the last {RECENT} judgements: the recent pace")
    ]
    remaining: Annotated[int, Field(description="Open tasks this assessor may take")]
    eta_seconds: Annotated[float | None, Field(description="remaining x recent_seconds; null until there is a pace")]
    last_judged_at: datetime | None


@pydantic_dataclasses.dataclass(frozen=True)
class JudgingSummary:
    """The pool's judging as a whole: tasks, done, open, open in topics no assessor has, and the time left."""

    total: int
    done: int
    remaining: int
    unassigned: Annotated[int, Field(description="Open tasks of topics no assessor is assigned")]
    eta_seconds: Annotated[
        float | None,
        Field(
            description="The slowest assessor's time left (they judge side by side); null while someone with work "
            "has no pace"
        ),
    ]


@pydantic_dataclasses.dataclass(frozen=True)
class SecondOpinion:
    """An open quality-control task: an item to be judged again by another assessor."""

    task_id: int
    topic: str
    shot_id: str
    reason: str
    leased_to: str | None


@pydantic_dataclasses.dataclass(frozen=True)
class SecondOpinions:
    """The quality-control queue: open (of which leased now) and done tasks, and the first open ones (items)."""

    open: int
    leased: int
    done: int
    items: list[SecondOpinion]


@pydantic_dataclasses.dataclass(frozen=True)
class AdjudicationItem:
    """An item awaiting the organiser's decision (its judgements disagree or say unsure), with each round's
    verdict."""

    pool_item_id: int
    topic: str
    shot_id: str
    verdicts: dict[str, str]


@pydantic_dataclasses.dataclass(frozen=True)
class Adjudication:
    """The adjudication queue: its size and its first items; decide with POST /api/pools/{pool_id}/adjudication."""

    size: int
    items: list[AdjudicationItem]


@pydantic_dataclasses.dataclass(frozen=True)
class JobView:
    """An evaluation or analysis job and its state; cancel a queued or running one with POST `cancel_url`."""

    type: JobType
    id: int
    kind: Annotated[str, Field(description='"evaluation", or the analysis kind')]
    label: str
    status: str
    progress: float
    attempts: int
    cancel_requested: bool
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None

    @computed_field  # type: ignore[prop-decorator]  # mypy refuses decorators over @property; pydantic's own form
    @property
    def cancellable(self) -> bool:
        """Whether a cancel would still change something."""
        return self.status in ACTIVE and not self.cancel_requested

    @computed_field  # type: ignore[prop-decorator]  # mypy refuses decorators over @property; pydantic's own form
    @property
    def url(self) -> str:
        """Where the job's status (and an analysis's result) is read."""
        return f"/api/{'evaluations' if self.type == 'evaluation' else 'analyses'}/{self.id}"

    @computed_field  # type: ignore[prop-decorator]  # mypy refuses decorators over @property; pydantic's own form
    @property
    def cancel_url(self) -> str:
        """Where to POST to cancel the job."""
        return f"{self.url}/cancel"


@pydantic_dataclasses.dataclass(frozen=True)
class CampaignView:
    """Everything the organiser page shows of a campaign, as of `as_of`."""

    campaign_id: int
    name: str
    status: str
    task_kind: str
    as_of: datetime
    pool_id: int | None
    pool_kind: str | None
    judging: JudgingSummary
    topics: list[TopicProgress] = field(default_factory=list)
    assessors: list[AssessorProgress] = field(default_factory=list)
    second_opinions: SecondOpinions = field(default_factory=lambda: SecondOpinions(0, 0, 0, []))
    adjudication: Adjudication = field(default_factory=lambda: Adjudication(0, []))
    jobs: list[JobView] = field(default_factory=list)


# Each query below reads one thing once: the pool's tasks, its judgements (twice: by item and by assessor), its
# items per topic; the queues' first items and the jobs are read by index.
_TOPICS = text(
    """
    SELECT tp.id, tp.number, tp.title,
           (SELECT count(*) FROM pool_items i WHERE i.pool_id = :pool AND i.topic_id = tp.id) AS pooled
    FROM topics tp WHERE tp.campaign_id = :campaign ORDER BY tp.id
    """
)
# Tasks by topic, round and the assessor a later round excludes: totals, done, leased now.
_TASKS = text(
    """
    SELECT i.topic_id, t.round, t.excluded_assessor_id, count(*) AS total, count(t.done_at) AS done,
           count(*) FILTER (WHERE t.done_at IS NULL AND t.lease_expires_at > now()) AS leased
    FROM judging_tasks t JOIN pool_items i ON i.id = t.pool_item_id
    WHERE i.pool_id = :pool
    GROUP BY i.topic_id, t.round, t.excluded_assessor_id
    """
)
# Per topic: items whose judgements settle on relevant (qrels.final_grade's rule: adjudication, else the first round,
# else the second) and items awaiting adjudication (quality.needs_adjudication's rule: no adjudication, and an unsure
# verdict or rounds that disagree). An item judged in round 1 only settles on its verdict; the few judged in later
# rounds are settled one by one.
_PENDING_ITEM = "NOT bool_or(j.round = 3) AND (bool_or(j.verdict = 'unsure') OR min(j.verdict) <> max(j.verdict))"
_LATER_ITEMS = """
    SELECT k.pool_item_id FROM judgements k JOIN pool_items ki ON ki.id = k.pool_item_id
    WHERE ki.pool_id = :pool AND k.round > 1
"""
_VERDICTS = text(
    f"""
    WITH later AS (
        SELECT i.topic_id, j.pool_item_id,
          CASE WHEN bool_or(j.round = 3) THEN bool_or(j.round = 3 AND j.verdict = 'relevant')
               WHEN bool_or(j.round = 1) THEN bool_or(j.round = 1 AND j.verdict = 'relevant')
               ELSE bool_or(j.round = 2 AND j.verdict = 'relevant') END AS relevant,
          {_PENDING_ITEM} AS pending
        FROM judgements j JOIN pool_items i ON i.id = j.pool_item_id
        WHERE j.pool_item_id IN ({_LATER_ITEMS})
        GROUP BY i.topic_id, j.pool_item_id
    )
    SELECT topic_id, count(*) FILTER (WHERE relevant) AS relevant, count(*) FILTER (WHERE pending) AS pending
    FROM (
        SELECT i.topic_id, j.verdict = 'relevant' AS relevant, j.verdict = 'unsure' AS pending
        FROM judgements j JOIN pool_items i ON i.id = j.pool_item_id
        WHERE i.pool_id = :pool AND j.round = 1
          AND NOT EXISTS (SELECT 1 FROM later l WHERE l.pool_item_id = j.pool_item_id)
        UNION ALL
        SELECT topic_id, relevant, pending FROM later
    ) settled
    GROUP BY topic_id
    """
)
_ASSIGNMENTS = text(
    """
    SELECT a.topic_id, a.assessor_id, tp.number
    FROM assignments a JOIN topics tp ON tp.id = a.topic_id
    WHERE a.pool_id = :pool
    ORDER BY tp.id, a.assessor_id
    """
)
# Per assessor of the campaign: judgements in the pool, mean seconds, last time, and the seconds of the last
# `recent` timed ones.
_ASSESSORS_OF = """
    WITH mine AS (
        SELECT j.assessor_id, count(*) AS judged, avg(j.seconds_spent) AS mean_seconds, max(j.created_at) AS last,
               (array_agg(j.seconds_spent ORDER BY j.created_at DESC, j.id DESC)
                   FILTER (WHERE j.seconds_spent IS NOT NULL))[1:CAST(:recent AS integer)] AS recent
        FROM {judgements}
        WHERE i.pool_id = :pool AND j.assessor_id IS NOT NULL
        GROUP BY j.assessor_id
    )
    SELECT a.id, a.name, coalesce(m.judged, 0), m.mean_seconds, m.recent, m.last
    FROM assessors a LEFT JOIN mine m ON m.assessor_id = a.id
    WHERE a.campaign_id = :campaign
    ORDER BY a.id
"""
_ASSESSORS = text(_ASSESSORS_OF.format(judgements="judgements j JOIN pool_items i ON i.id = j.pool_item_id"))
# A moment pool's counterparts: an item is a proposed segment, done once an assessor has marked it (marks on it,
# or none); relevant when some assessor marked a segment on it; nothing is leased, nothing awaits adjudication.
_MOMENT_TOPICS = text(
    """
    SELECT tp.id, tp.number, tp.title,
           (SELECT count(*) FROM moment_pool_items i WHERE i.pool_id = :pool AND i.topic_id = tp.id) AS pooled
    FROM topics tp WHERE tp.campaign_id = :campaign ORDER BY tp.id
    """
)
_MOMENT_TASKS = text(
    """
    SELECT i.topic_id, 1 AS round, NULL AS excluded, count(*) AS total,
           count(*) FILTER (WHERE EXISTS (SELECT 1 FROM moment_judgements j WHERE j.item_id = i.id)) AS done,
           0 AS leased
    FROM moment_pool_items i WHERE i.pool_id = :pool
    GROUP BY i.topic_id
    """
)
_MOMENT_VERDICTS = text(
    """
    SELECT i.topic_id, count(DISTINCT i.id) FILTER (WHERE jsonb_array_length(j.segments) > 0) AS relevant,
           0 AS pending
    FROM moment_judgements j JOIN moment_pool_items i ON i.id = j.item_id
    WHERE i.pool_id = :pool
    GROUP BY i.topic_id
    """
)
_MOMENT_ASSESSORS = text(
    _ASSESSORS_OF.format(judgements="moment_judgements j JOIN moment_pool_items i ON i.id = j.item_id")
)


@dataclass(frozen=True)
class _PoolQueries:
    """The queries that read a pool's topics, tasks, settled verdicts and assessors: shot or moment pools."""

    topics: Any
    tasks: Any
    verdicts: Any
    assessors: Any


SHOT_QUERIES = _PoolQueries(_TOPICS, _TASKS, _VERDICTS, _ASSESSORS)
MOMENT_QUERIES = _PoolQueries(_MOMENT_TOPICS, _MOMENT_TASKS, _MOMENT_VERDICTS, _MOMENT_ASSESSORS)


_SECOND_OPINION_ITEMS = text(
    """
    SELECT t.id, tp.number, i.docno, t.reason,
           CASE WHEN t.lease_expires_at > now() THEN a.name END AS leased_to
    FROM judging_tasks t
    JOIN pool_items i ON i.id = t.pool_item_id
    JOIN topics tp ON tp.id = i.topic_id
    LEFT JOIN assessors a ON a.id = t.leased_to
    WHERE i.pool_id = :pool AND t.round > 1 AND t.done_at IS NULL
    ORDER BY t.round, tp.id, i.judging_order, t.id
    LIMIT :limit
    """
)
_ADJUDICATION_ITEMS = text(
    f"""
    WITH pending AS (
        SELECT j.pool_item_id FROM judgements j JOIN pool_items i ON i.id = j.pool_item_id
        WHERE i.pool_id = :pool AND j.pool_item_id IN (
            SELECT c.pool_item_id FROM judgements c JOIN pool_items ci ON ci.id = c.pool_item_id
            WHERE ci.pool_id = :pool AND (c.verdict = 'unsure' OR c.round > 1)
        )
        GROUP BY j.pool_item_id
        HAVING {_PENDING_ITEM}
        ORDER BY j.pool_item_id
        LIMIT :limit
    )
    SELECT p.pool_item_id, tp.number, i.docno,
           (SELECT jsonb_object_agg(v.round::text, v.verdict::text) FROM judgements v
            WHERE v.pool_item_id = p.pool_item_id) AS verdicts
    FROM pending p JOIN pool_items i ON i.id = p.pool_item_id JOIN topics tp ON tp.id = i.topic_id
    ORDER BY p.pool_item_id
    """
)
_JOBS = text(
    """
    (SELECT 'evaluation' AS type, e.id, 'evaluation' AS kind, coalesce(q.label, '') AS label, e.status, e.progress,
            e.attempts, e.cancel_requested, e.error, e.created_at, e.started_at, e.finished_at
     FROM evaluations e LEFT JOIN qrels_versions q ON q.id = e.qrels_version_id
     WHERE e.campaign_id = :campaign
     ORDER BY e.status IN ('queued', 'running') DESC, e.id DESC
     LIMIT :limit)
    UNION ALL
    (SELECT 'analysis', a.id, a.kind, '', a.status, a.progress, a.attempts, a.cancel_requested, a.error,
            a.created_at, a.started_at, a.finished_at
     FROM analysis_jobs a
     WHERE a.campaign_id = :campaign
     ORDER BY a.status IN ('queued', 'running') DESC, a.id DESC
     LIMIT :limit)
    """
)


@dataclass(frozen=True)
class TaskCounts:
    """One row of `_TASKS`: a topic's tasks of one round (and, for later rounds, one excluded assessor)."""

    topic_id: int
    round: int
    excluded: int | None
    total: int
    done: int
    leased: int

    def open_to(self, assessor_id: int) -> int:
        """How many of these open tasks the assessor may take (of a topic assigned to them)."""
        return self.total - self.done if self.round == 1 or self.excluded != assessor_id else 0


def campaign_view(
    session: Session, principal: Principal, campaign_id: int, *, recent: int = RECENT, listed: int = LISTED
) -> CampaignView:
    """The organiser's view of a campaign they organise (NotFound or Forbidden otherwise)."""
    campaign = get_organised(session, principal, campaign_id)
    as_of = session.scalar(text("SELECT now()"))
    assert as_of is not None
    pool = current_pool(session, campaign_id)
    base = {
        "campaign_id": campaign.id,
        "name": campaign.name,
        "status": campaign.status.value,
        "task_kind": campaign.task_kind.value,
        "as_of": as_of,
        "jobs": campaign_jobs(session, campaign_id),
    }
    if pool is None:
        return CampaignView(**base, pool_id=None, pool_kind=None, judging=JudgingSummary(0, 0, 0, 0, None))
    params = {"pool": pool.id, "campaign": campaign_id}
    queries = MOMENT_QUERIES if pool.kind == "moments" else SHOT_QUERIES
    tasks = [TaskCounts(*row) for row in session.execute(queries.tasks, params)]
    assigned = session.execute(_ASSIGNMENTS, params).all()
    assessors = assessor_progress(session, campaign_id, pool.id, tasks, assigned, recent=recent, queries=queries)
    topics = topic_progress(
        session, campaign_id, pool.id, tasks, assigned, {a.assessor_id: a.assessor for a in assessors}, queries
    )
    with_assessor = {topic_id for topic_id, _, _ in assigned}
    total, done = sum(t.total for t in tasks), sum(t.done for t in tasks)
    unassigned = sum(t.total - t.done for t in tasks if t.topic_id not in with_assessor)
    busy = [a for a in assessors if a.remaining]
    eta = None if any(a.eta_seconds is None for a in busy) else max((a.eta_seconds or 0.0 for a in busy), default=0.0)
    later = [t for t in tasks if t.round > 1]
    opinions = SecondOpinions(
        open=sum(t.total - t.done for t in later),
        leased=sum(t.leased for t in later),
        done=sum(t.done for t in later),
        items=second_opinion_items(session, pool.id, listed=listed),
    )
    return CampaignView(
        **base,
        pool_id=pool.id,
        pool_kind=pool.kind,
        judging=JudgingSummary(total, done, total - done, unassigned, eta),
        topics=topics,
        assessors=assessors,
        second_opinions=opinions,
        adjudication=Adjudication(
            size=sum(t.awaiting_adjudication for t in topics), items=adjudication_items(session, pool.id, listed=listed)
        ),
    )


def topic_progress(
    session: Session,
    campaign_id: int,
    pool_id: int,
    tasks: Sequence[TaskCounts],
    assigned: Sequence[Row[int, int, str]],  # topic id, assessor id, topic number
    names: dict[int, str],
    queries: _PoolQueries = SHOT_QUERIES,
) -> list[TopicProgress]:
    """Per topic of the campaign: pooled items, tasks done per round, relevant and awaiting adjudication so far."""
    params = {"pool": pool_id, "campaign": campaign_id}
    rounds: dict[int, dict[int, RoundProgress]] = {}
    for t in tasks:
        got = rounds.setdefault(t.topic_id, {}).get(t.round, RoundProgress(t.round, 0, 0))
        rounds[t.topic_id][t.round] = RoundProgress(t.round, got.total + t.total, got.done + t.done)
    assessors: dict[int, list[str]] = {}
    for topic_id, assessor_id, _ in assigned:
        assessors.setdefault(topic_id, []).append(names.get(assessor_id, str(assessor_id)))
    verdicts = {t: (relevant, pending) for t, relevant, pending in session.execute(queries.verdicts, params)}
    out = []
    for topic_id, number, title, pooled in session.execute(queries.topics, params):
        own = [r for _, r in sorted(rounds.get(topic_id, {}).items())]
        first = next((r for r in own if r.round == 1), RoundProgress(1, 0, 0))
        relevant, pending = verdicts.get(topic_id, (0, 0))
        out.append(
            TopicProgress(
                topic=number,
                title=title,
                pooled=pooled,
                total=first.total,
                judged=first.done,
                relevant=relevant,
                awaiting_adjudication=pending,
                rounds=own,
                assessors=assessors.get(topic_id, []),
            )
        )
    return out


def assessor_progress(
    session: Session,
    campaign_id: int,
    pool_id: int,
    tasks: Sequence[TaskCounts],
    assigned: Sequence[Row[int, int, str]],  # topic id, assessor id, topic number
    *,
    recent: int = RECENT,
    queries: _PoolQueries = SHOT_QUERIES,
) -> list[AssessorProgress]:
    """Per assessor of the campaign: topics, judgements in the pool, pace, open tasks and the time they should take."""
    topics: dict[int, list[str]] = {}
    remaining: dict[int, int] = {}
    by_topic: dict[int, list[TaskCounts]] = {}
    for t in tasks:
        by_topic.setdefault(t.topic_id, []).append(t)
    for topic_id, assessor_id, number in assigned:
        topics.setdefault(assessor_id, []).append(number)
        remaining[assessor_id] = remaining.get(assessor_id, 0) + sum(
            t.open_to(assessor_id) for t in by_topic.get(topic_id, [])
        )
    params = {"pool": pool_id, "campaign": campaign_id, "recent": recent}
    out = []
    for assessor_id, name, judged, mean, last_seconds, last in session.execute(queries.assessors, params):
        left = remaining.get(assessor_id, 0)
        pace = float(statistics.median(last_seconds)) if last_seconds else None
        out.append(
            AssessorProgress(
                assessor_id=assessor_id,
                assessor=name,
                topics=topics.get(assessor_id, []),
                judged=judged,
                mean_seconds=float(mean) if mean is not None else None,
                recent_seconds=pace,
                remaining=left,
                eta_seconds=0.0 if left == 0 else (left * pace if pace is not None else None),
                last_judged_at=last,
            )
        )
    return out


def second_opinion_items(session: Session, pool_id: int, *, listed: int = LISTED) -> list[SecondOpinion]:
    """The first `listed` open quality-control tasks of a pool, in queue order."""
    rows = session.execute(_SECOND_OPINION_ITEMS, {"pool": pool_id, "limit": listed})
    return [SecondOpinion(task_id, topic, shot, reason, leased_to) for task_id, topic, shot, reason, leased_to in rows]


def adjudication_items(session: Session, pool_id: int, *, listed: int = LISTED) -> list[AdjudicationItem]:
    """The first `listed` items of a pool awaiting adjudication (quality.adjudication_queue's rule), by item id."""
    rows = session.execute(_ADJUDICATION_ITEMS, {"pool": pool_id, "limit": listed})
    return [
        AdjudicationItem(item_id, topic, shot, dict(sorted(verdicts.items())))
        for item_id, topic, shot, verdicts in rows
    ]


def campaign_jobs(session: Session, campaign_id: int, *, listed: int = JOBS_LISTED) -> list[JobView]:
    """The campaign's evaluation and analysis jobs: unfinished ones first, then the newest."""
    rows = session.execute(_JOBS, {"campaign": campaign_id, "limit": listed}).all()
    jobs = [JobView(*row) for row in rows]
    jobs.sort(key=lambda j: (j.status not in ACTIVE, -j.created_at.timestamp(), j.type, -j.id))
    return jobs
