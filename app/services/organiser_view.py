"""The organiser's view of a campaign: judging progress per topic and assessor, time left, QC and adjudication
queues, and the campaign's jobs. Read-only: it never writes or flushes.

Time left is working time: an assessor's remaining items times the median seconds of their last `RECENT`
judgements (a verdict left open overnight does not move a median). An assessor's remaining items are the open tasks
they may take: round 1 of their topics, and later rounds of their topics they did not judge first. A topic shared by
two assessors counts for both, so the campaign's time left (the slowest assessor's, as they work side by side) is an
upper bound there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from sqlalchemy import text
from sqlalchemy.orm import Session

from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.pools import current_pool

RECENT = 50  # judgements an assessor's recent pace is measured over
LISTED = 100  # queue items listed (the counts are always whole)
JOBS_LISTED = 50  # jobs listed per kind: unfinished first, then the newest
ACTIVE = ("queued", "running")

JobType = Literal["evaluation", "analysis"]


@dataclass(frozen=True)
class RoundProgress:
    """Judging tasks of one round of a topic: how many, how many done."""

    round: int
    total: int
    done: int


@dataclass(frozen=True)
class TopicProgress:
    """One topic: pooled items, tasks per round, what the judgements say so far, who judges it."""

    topic: str
    title: str
    pooled: int
    total: int  # round-1 tasks (the sampled items)
    judged: int  # round-1 tasks done
    relevant: int  # items whose settled verdict is relevant (adjudication, else the first round)
    awaiting_adjudication: int
    rounds: list[RoundProgress]
    assessors: list[str]


@dataclass(frozen=True)
class AssessorProgress:
    """One assessor: topics, judgements made, pace, and the time their open work should take."""

    assessor_id: int
    assessor: str
    topics: list[str]
    judged: int
    mean_seconds: float | None  # over all their judgements with a time
    recent_seconds: float | None  # median over their last RECENT judgements with a time
    remaining: int
    eta_seconds: float | None  # remaining x recent_seconds; None until they have a pace
    last_judged_at: datetime | None


@dataclass(frozen=True)
class JudgingSummary:
    """The whole pool's judging: tasks, done, open, open in topics no assessor has, and the time left."""

    total: int
    done: int
    remaining: int
    unassigned: int
    eta_seconds: float | None  # the slowest assessor's time left; None while someone with work has no pace


@dataclass(frozen=True)
class SecondOpinion:
    """An open quality-control task: an item to be judged again by another assessor."""

    task_id: int
    topic: str
    shot_id: str
    reason: str
    leased_to: str | None


@dataclass(frozen=True)
class SecondOpinions:
    """The quality-control queue: open (of which leased now) and done tasks, the first `LISTED` open ones."""

    open: int
    leased: int
    done: int
    items: list[SecondOpinion]


@dataclass(frozen=True)
class AdjudicationItem:
    """An item whose judgements disagree or say unsure, with each round's verdict."""

    pool_item_id: int
    topic: str
    shot_id: str
    verdicts: dict[str, str]


@dataclass(frozen=True)
class Adjudication:
    """The adjudication queue: its size and its first `LISTED` items."""

    size: int
    items: list[AdjudicationItem]


@dataclass(frozen=True)
class JobView:
    """An evaluation or analysis job and its state."""

    type: JobType
    id: int
    kind: str  # "evaluation", or the analysis kind
    label: str
    status: str
    progress: float
    attempts: int
    cancel_requested: bool
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None

    @property
    def cancellable(self) -> bool:
        """Whether a cancel would still change something."""
        return self.status in ACTIVE and not self.cancel_requested


@dataclass(frozen=True)
class CampaignView:
    """Everything the organiser page shows of one campaign, as of one moment."""

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


# Per topic: pooled items, and what each item's judgements settle on (qrels.final_grade's rule: adjudication, else
# the first round, else the second) and whether it awaits adjudication (quality.needs_adjudication's rule).
_TOPICS = text(
    """
    WITH settled AS (
        SELECT i.topic_id,
          CASE WHEN bool_or(j.round = 3) THEN bool_or(j.round = 3 AND j.verdict = 'relevant')
               WHEN bool_or(j.round = 1) THEN bool_or(j.round = 1 AND j.verdict = 'relevant')
               ELSE bool_or(j.round = 2 AND j.verdict = 'relevant') END AS relevant,
          NOT bool_or(j.round = 3) AND (bool_or(j.verdict = 'unsure') OR count(DISTINCT j.verdict) > 1) AS pending
        FROM judgements j JOIN pool_items i ON i.id = j.pool_item_id
        WHERE i.pool_id = :pool
        GROUP BY i.id, i.topic_id
    ), pooled AS (
        SELECT topic_id, count(*) AS pooled FROM pool_items WHERE pool_id = :pool GROUP BY topic_id
    ), verdicts AS (
        SELECT topic_id, count(*) FILTER (WHERE relevant) AS relevant, count(*) FILTER (WHERE pending) AS pending
        FROM settled GROUP BY topic_id
    )
    SELECT tp.id, tp.number, tp.title, coalesce(p.pooled, 0) AS pooled,
           coalesce(v.relevant, 0) AS relevant, coalesce(v.pending, 0) AS pending
    FROM topics tp
    LEFT JOIN pooled p ON p.topic_id = tp.id
    LEFT JOIN verdicts v ON v.topic_id = tp.id
    WHERE tp.campaign_id = :campaign
    ORDER BY tp.id
    """
)
_ROUNDS = text(
    """
    SELECT i.topic_id, t.round, count(*) AS total, count(t.done_at) AS done
    FROM judging_tasks t JOIN pool_items i ON i.id = t.pool_item_id
    WHERE i.pool_id = :pool
    GROUP BY i.topic_id, t.round
    ORDER BY i.topic_id, t.round
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
# Per assessor of the campaign: judgements in the pool, mean seconds, the median of the last RECENT timed ones.
_ASSESSORS = text(
    """
    WITH mine AS (
        SELECT j.assessor_id, j.seconds_spent, j.created_at,
               row_number() OVER (
                   PARTITION BY j.assessor_id, j.seconds_spent IS NOT NULL ORDER BY j.created_at DESC, j.id DESC
               ) AS recency
        FROM judgements j JOIN pool_items i ON i.id = j.pool_item_id
        WHERE i.pool_id = :pool AND j.assessor_id IS NOT NULL
    )
    SELECT a.id, a.name, count(m.assessor_id) AS judged, avg(m.seconds_spent) AS mean_seconds,
           percentile_cont(0.5) WITHIN GROUP (ORDER BY m.seconds_spent)
               FILTER (WHERE m.seconds_spent IS NOT NULL AND m.recency <= :recent) AS recent_seconds,
           max(m.created_at) AS last_judged_at
    FROM assessors a LEFT JOIN mine m ON m.assessor_id = a.id
    WHERE a.campaign_id = :campaign
    GROUP BY a.id, a.name
    ORDER BY a.id
    """
)
# Open tasks each assessor may take (as the judging queue hands them out: round 1 of their topics, later rounds of
# their topics unless they judged the first round), and open tasks of topics nobody is assigned.
_REMAINING = text(
    """
    SELECT a.assessor_id, count(*) AS remaining
    FROM assignments a
    JOIN pool_items i ON i.pool_id = a.pool_id AND i.topic_id = a.topic_id
    JOIN judging_tasks t ON t.pool_item_id = i.id
    WHERE a.pool_id = :pool AND t.done_at IS NULL
      AND (t.round = 1 OR t.excluded_assessor_id IS DISTINCT FROM a.assessor_id)
    GROUP BY a.assessor_id
    """
)
_UNASSIGNED = text(
    """
    SELECT count(*) FROM judging_tasks t JOIN pool_items i ON i.id = t.pool_item_id
    WHERE i.pool_id = :pool AND t.done_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM assignments a WHERE a.pool_id = :pool AND a.topic_id = i.topic_id)
    """
)
_SECOND_OPINION_COUNTS = text(
    """
    SELECT count(*) FILTER (WHERE t.done_at IS NULL) AS open,
           count(*) FILTER (WHERE t.done_at IS NULL AND t.leased_to IS NOT NULL AND t.lease_expires_at > now())
               AS leased,
           count(t.done_at) AS done
    FROM judging_tasks t JOIN pool_items i ON i.id = t.pool_item_id
    WHERE i.pool_id = :pool AND t.round > 1
    """
)
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
_ADJUDICATION = text(
    """
    SELECT i.id, tp.number, i.docno, jsonb_object_agg(j.round::text, j.verdict::text) AS verdicts,
           count(*) OVER () AS size
    FROM judgements j
    JOIN pool_items i ON i.id = j.pool_item_id
    JOIN topics tp ON tp.id = i.topic_id
    WHERE i.pool_id = :pool
    GROUP BY i.id, tp.number
    HAVING NOT bool_or(j.round = 3) AND (bool_or(j.verdict = 'unsure') OR count(DISTINCT j.verdict) > 1)
    ORDER BY i.id
    LIMIT :limit
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
    assessors = assessor_progress(session, campaign_id, pool.id, recent=recent)
    topics = topic_progress(session, campaign_id, pool.id, {a.assessor_id: a.assessor for a in assessors})
    total = sum(r.total for t in topics for r in t.rounds)
    done = sum(r.done for t in topics for r in t.rounds)
    unassigned = int(session.scalar(_UNASSIGNED, params) or 0)
    busy = [a for a in assessors if a.remaining]
    eta = None if any(a.eta_seconds is None for a in busy) else max((a.eta_seconds or 0.0 for a in busy), default=0.0)
    return CampaignView(
        **base,
        pool_id=pool.id,
        pool_kind=pool.kind,
        judging=JudgingSummary(total, done, total - done, unassigned, eta),
        topics=topics,
        assessors=assessors,
        second_opinions=second_opinions(session, pool.id, listed=listed),
        adjudication=adjudication(session, pool.id, listed=listed),
    )


def topic_progress(session: Session, campaign_id: int, pool_id: int, names: dict[int, str]) -> list[TopicProgress]:
    """Per topic of the campaign: pooled items, tasks done per round, relevant and awaiting adjudication so far."""
    params = {"pool": pool_id, "campaign": campaign_id}
    rounds: dict[int, list[RoundProgress]] = {}
    for topic_id, round_, total, done in session.execute(_ROUNDS, params):
        rounds.setdefault(topic_id, []).append(RoundProgress(round_, total, done))
    assigned: dict[int, list[str]] = {}
    for topic_id, assessor_id, _ in session.execute(_ASSIGNMENTS, params):
        assigned.setdefault(topic_id, []).append(names.get(assessor_id, str(assessor_id)))
    out = []
    for topic_id, number, title, pooled, relevant, pending in session.execute(_TOPICS, params):
        own = rounds.get(topic_id, [])
        first = next((r for r in own if r.round == 1), RoundProgress(1, 0, 0))
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
                assessors=assigned.get(topic_id, []),
            )
        )
    return out


def assessor_progress(
    session: Session, campaign_id: int, pool_id: int, *, recent: int = RECENT
) -> list[AssessorProgress]:
    """Per assessor of the campaign: topics, judgements in the pool, pace, open tasks and the time they should take."""
    params = {"pool": pool_id, "campaign": campaign_id, "recent": recent}
    topics: dict[int, list[str]] = {}
    for _, assessor_id, number in session.execute(_ASSIGNMENTS, params):
        topics.setdefault(assessor_id, []).append(number)
    remaining = {assessor_id: n for assessor_id, n in session.execute(_REMAINING, params)}
    out = []
    for assessor_id, name, judged, mean, recent_seconds, last in session.execute(_ASSESSORS, params):
        left = int(remaining.get(assessor_id, 0))
        pace = float(recent_seconds) if recent_seconds is not None else None
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


def second_opinions(session: Session, pool_id: int, *, listed: int = LISTED) -> SecondOpinions:
    """The quality-control queue of a pool: counts, and its first `listed` open tasks in queue order."""
    open_, leased, done = session.execute(_SECOND_OPINION_COUNTS, {"pool": pool_id}).one()
    items = [
        SecondOpinion(task_id, topic, shot, reason, leased_to)
        for task_id, topic, shot, reason, leased_to in session.execute(
            _SECOND_OPINION_ITEMS, {"pool": pool_id, "limit": listed}
        )
    ]
    return SecondOpinions(int(open_), int(leased), int(done), items)


def adjudication(session: Session, pool_id: int, *, listed: int = LISTED) -> Adjudication:
    """The adjudication queue of a pool: its size and first `listed` items (quality.adjudication_queue's rule)."""
    rows = session.execute(_ADJUDICATION, {"pool": pool_id, "limit": listed}).all()
    items = [
        AdjudicationItem(item_id, topic, shot, dict(sorted(verdicts.items())))
        for item_id, topic, shot, verdicts, _ in rows
    ]
    size = rows[0].size if rows else 0
    return Adjudication(int(size), items)


def campaign_jobs(session: Session, campaign_id: int, *, listed: int = JOBS_LISTED) -> list[JobView]:
    """The campaign's evaluation and analysis jobs: unfinished ones first, then the newest."""
    rows = session.execute(_JOBS, {"campaign": campaign_id, "limit": listed}).all()
    jobs = [JobView(*row) for row in rows]
    jobs.sort(key=lambda j: (j.status not in ACTIVE, -j.created_at.timestamp(), j.type, -j.id))
    return jobs
