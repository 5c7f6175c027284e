"""Campaign series and progress topics (TRECVID's Progress task, SPEC section 10).

A series groups campaigns of several years. Its progress topics, in named sets (A, B, ...), are copied into every
campaign of the series (`topics.progress_set`), so teams answer them every year. A set's judgements are sealed until
the organiser releases it (`sealing`). The organiser evaluates a set over the runs of several campaigns at once: one
series pool (`pools.series_set_id`) on the newest of them (the host), built at the usual depth or strata from their
runs' rows on the set's topics (matched by topic number), judged once, cut and evaluated by the host's usual flow
(`evaluations.evaluated_runs` scores the pool's runs, of every campaign); `series_board` ranks them with their
campaign and team, means and intervals. A series pool is a top-up pool: an item judged in an earlier pool of the series
for the same set and topic number gets that earlier settled verdict (a round-1 judgement without an assessor whose
`reused_from` says where it was originally given: `reused_verdicts`) and no judging task; the pool's `params.reused`
counts them, by topic and by origin.

Organisers with a token not bound to a campaign organise series; the public sees a set's board once it is released,
with teams named as each campaign's published board names them (`anonymise_teams`).
"""

from __future__ import annotations

import secrets
from collections import defaultdict
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import numpy as np
from pydantic import dataclasses as pydantic_dataclasses
from sqlalchemy import delete, func, insert, select, text
from sqlalchemy.orm import Session

from app.evaluation.pools.builders import Stratum, pool_strata
from app.evaluation.records import RunTable
from app.services import judging_orders, reused_verdicts, sealing, topic_depths
from app.services.auth import Principal
from app.services.errors import Conflict, Forbidden, InvalidInput, NotFound
from app.services.leaderboards import Filters, board_document
from app.services.pools import (
    PoolSpec,
    _on_topics,
    _select_runs,
    _store_items,
    _strata_of,
    _verification_params,
    blocked_orders,
    blocked_pool,
    current_pool,
    has_judgements,
)
from app.services.qrels import UNJUDGED, final_grade
from app.services.quality import needs_adjudication
from app.services.run_blocks import DEFAULT_MEMORY_MB
from app.services.scores import (
    RunInfo,
    ScoreTable,
    _fill,
    default_measure,
    measure_name,
    team_aliases,
    topic_key,
)
from app.services.topics import topic_ids_by_number
from app.storage.models import (
    Assessor,
    Campaign,
    CampaignStatus,
    Evaluation,
    Judgement,
    JudgingTask,
    Pool,
    PoolItem,
    PoolRun,
    QrelsVersion,
    Role,
    Series,
    SeriesTopicSet,
    TaskKind,
    Topic,
    Verdict,
)

OPEN_FOR_TOPICS = (CampaignStatus.draft, CampaignStatus.open)


@pydantic_dataclasses.dataclass(frozen=True)
class SeriesCampaign:
    """A campaign of a series."""

    id: int
    name: str
    status: str


@pydantic_dataclasses.dataclass(frozen=True)
class TopicSet:
    """A set of progress topics: its topic numbers and when it was released (null: sealed)."""

    name: str
    topics: list[str]
    released_at: datetime | None
    sealed: bool


@pydantic_dataclasses.dataclass(frozen=True)
class SeriesView:
    """A series: its campaigns (oldest first) and progress topic sets."""

    id: int
    name: str
    description: str
    created_at: datetime
    campaigns: list[SeriesCampaign]
    sets: list[TopicSet]


@pydantic_dataclasses.dataclass(frozen=True)
class ProgressTopic:
    """A progress topic as a series defines it."""

    number: str
    title: str
    description: str
    set: str


def _organiser(principal: Principal) -> None:
    """Forbidden unless an organiser token not bound to one campaign: a series spans campaigns."""
    if principal.role is not Role.organiser or principal.campaign_id is not None:
        raise Forbidden("series are organised with an organiser token not bound to a campaign")


def _series(session: Session, principal: Principal, series_id: int) -> Series:
    """The series, for its organisers."""
    _organiser(principal)
    series = session.get(Series, series_id)
    if series is None:
        raise NotFound(f"series {series_id} not found")
    return series


def _set(session: Session, series_id: int, name: str) -> SeriesTopicSet:
    """A topic set of the series by name."""
    found = session.scalar(
        select(SeriesTopicSet).where(SeriesTopicSet.series_id == series_id, SeriesTopicSet.name == name)
    )
    if found is None:
        raise NotFound(f"series {series_id} has no progress set {name!r}")
    return found


def _members(session: Session, series_id: int) -> list[Campaign]:
    """The series' campaigns, oldest first."""
    return list(session.scalars(select(Campaign).where(Campaign.series_id == series_id).order_by(Campaign.id)))


def create_series(session: Session, principal: Principal, name: str, description: str = "") -> Series:
    """A new, empty series with a unique name."""
    _organiser(principal)
    if session.scalar(select(Series.id).where(Series.name == name)) is not None:
        raise Conflict(f"a series named {name!r} exists already")
    series = Series(name=name, description=description)
    session.add(series)
    session.flush()
    return series


def series_view(session: Session, series: Series) -> SeriesView:
    """The series with its campaigns and sets (a set's topics as its campaigns carry them)."""
    numbers: dict[str, set[str]] = defaultdict(set)
    rows = session.execute(
        select(Topic.progress_set, Topic.number)
        .join(Campaign, Campaign.id == Topic.campaign_id)
        .where(Campaign.series_id == series.id, Topic.progress_set.is_not(None))
        .distinct()
    )
    for name, number in rows:
        numbers[str(name)].add(number)
    sets = list(
        session.scalars(
            select(SeriesTopicSet).where(SeriesTopicSet.series_id == series.id).order_by(SeriesTopicSet.name)
        )
    )
    return SeriesView(
        id=series.id,
        name=series.name,
        description=series.description,
        created_at=series.created_at,
        campaigns=[SeriesCampaign(c.id, c.name, c.status.value) for c in _members(session, series.id)],
        sets=[
            TopicSet(s.name, sorted(numbers[s.name], key=topic_key), s.released_at, s.released_at is None) for s in sets
        ],
    )


def get_series(session: Session, principal: Principal, series_id: int) -> SeriesView:
    """A series the caller organises."""
    return series_view(session, _series(session, principal, series_id))


def list_series(session: Session, principal: Principal) -> list[SeriesView]:
    """Every series, oldest first."""
    _organiser(principal)
    return [series_view(session, s) for s in session.scalars(select(Series).order_by(Series.id))]


def progress_topics(session: Session, series_id: int) -> list[ProgressTopic]:
    """The series' progress topics, each as its oldest campaign defines it."""
    rows = session.execute(
        select(Topic.number, Topic.title, Topic.description, Topic.progress_set)
        .join(Campaign, Campaign.id == Topic.campaign_id)
        .where(Campaign.series_id == series_id, Topic.progress_set.is_not(None))
        .order_by(Campaign.id)
    )
    found: dict[str, ProgressTopic] = {}
    for number, title, description, name in rows:
        found.setdefault(number, ProgressTopic(number, title, description, str(name)))
    return sorted(found.values(), key=lambda t: topic_key(t.number))


def _copy_topics(session: Session, campaign: Campaign, topics: list[ProgressTopic]) -> int:
    """Give a campaign the progress topics: a topic of the same number becomes the set's (unless another set's); a
    missing one is added while the campaign takes topics. Returns the topics added."""
    have = {t.number: t for t in session.scalars(select(Topic).where(Topic.campaign_id == campaign.id))}
    clashes = [t.number for t in topics if t.number in have and have[t.number].progress_set not in (None, t.set)]
    if clashes:
        raise Conflict(f"campaign {campaign.name!r} has topics {', '.join(clashes)} in another progress set")
    missing = [t for t in topics if t.number not in have]
    if missing and campaign.status not in OPEN_FOR_TOPICS:
        numbers = ", ".join(t.number for t in missing)
        raise Conflict(
            f"campaign {campaign.name!r} has closed submissions: it cannot take progress topics {numbers} any more"
        )
    for topic in topics:
        if topic.number in have:
            have[topic.number].progress_set = topic.set
    session.add_all(
        Topic(campaign_id=campaign.id, number=t.number, title=t.title, description=t.description, progress_set=t.set)
        for t in missing
    )
    session.flush()
    return len(missing)


def add_campaign(session: Session, principal: Principal, series_id: int, campaign_id: int) -> SeriesView:
    """Put a campaign in the series; it takes the series' progress topics (a topic it has of the same number becomes
    the progress topic)."""
    series = _series(session, principal, series_id)
    campaign = session.get(Campaign, campaign_id)
    if campaign is None:
        raise NotFound(f"campaign {campaign_id} not found")
    if campaign.series_id not in (None, series.id):
        raise Conflict(f"campaign {campaign.name!r} belongs to another series ({campaign.series_id})")
    if campaign.task_kind is not TaskKind.shots:
        raise InvalidInput("only shots campaigns", [{"field": "campaign_id", "message": "a moment campaign"}])
    _copy_topics(session, campaign, progress_topics(session, series.id))
    campaign.series_id = series.id
    session.flush()
    return series_view(session, series)


def add_progress_topics(
    session: Session, principal: Principal, series_id: int, topics: list[ProgressTopic]
) -> SeriesView:
    """Add progress topics (each in a named set) to the series: copied into each of its campaigns."""
    series = _series(session, principal, series_id)
    if not topics:
        raise InvalidInput("no topics given", [{"field": "topics", "message": "empty list"}])
    numbers = [t.number for t in topics]
    twice = sorted({n for n in numbers if numbers.count(n) > 1})
    if twice:
        raise InvalidInput(
            "duplicate topic numbers", [{"field": "topics", "message": f"{n} given twice"} for n in twice]
        )
    known = {t.number: t.set for t in progress_topics(session, series.id)}
    moved = [t.number for t in topics if t.number in known and known[t.number] != t.set]
    if moved:
        raise Conflict(f"topics {', '.join(moved)} are progress topics of another set")
    campaigns = _members(session, series.id)
    if not campaigns:
        raise Conflict("the series has no campaign yet: add one first (its topics carry the progress topics)")
    existing = set(session.scalars(select(SeriesTopicSet.name).where(SeriesTopicSet.series_id == series.id)))
    for name in sorted({t.set for t in topics} - existing):
        session.add(SeriesTopicSet(series_id=series.id, name=name))
    for campaign in campaigns:
        _copy_topics(session, campaign, topics)
    session.flush()
    return series_view(session, series)


def release_set(session: Session, principal: Principal, series_id: int, name: str) -> SeriesView:
    """Release a progress set: its judgements and every score of them may reach teams and the public from now on
    (releasing twice keeps the first time)."""
    series = _series(session, principal, series_id)
    found = _set(session, series.id, name)
    if found.released_at is None:
        found.released_at = datetime.now(UTC)
        session.flush()
    return series_view(session, series)


def _check_host(session: Session, host: Campaign, topic_set: SeriesTopicSet) -> Pool | None:
    """The host's current pool a series pool replaces (an unjudged series pool of the same set), else None; Conflict
    while the host's current pool is being judged (judging goes to a campaign's newest pool)."""
    previous = current_pool(session, host.id)
    if previous is None:
        return None
    if previous.series_set_id == topic_set.id and not has_judgements(session, previous.id):
        return previous
    open_tasks = session.scalar(
        select(func.count())
        .select_from(JudgingTask)
        .join(PoolItem, PoolItem.id == JudgingTask.pool_item_id)
        .where(PoolItem.pool_id == previous.id, JudgingTask.done_at.is_(None))
    )
    if open_tasks:
        raise Conflict(
            f"campaign {host.name!r} is judging its pool {previous.id} ({open_tasks} open tasks): judging goes to a "
            "campaign's newest pool, so finish that one first"
        )
    return None


# Settled verdicts of the series' earlier pools on items of the set's topics, newest pool first, with the campaign
# each pool is on.
_EARLIER = text(
    """
    SELECT t.number, i.docno, i.id, i.pool_id, c.id, c.name FROM pool_items i
    JOIN topics t ON t.id = i.topic_id JOIN campaigns c ON c.id = t.campaign_id
    WHERE c.series_id = :series AND t.progress_set = :set AND i.pool_id <> :pool
      AND EXISTS (SELECT 1 FROM judgements j WHERE j.pool_item_id = i.id)
    ORDER BY i.pool_id DESC, i.id
    """
)


def settling(rounds: dict[int, Judgement]) -> Judgement | None:
    """The judgement whose verdict `qrels.final_grade` settles on: adjudication, else an agreeing round 2, else the
    first round."""
    for round_ in (3, 2, 1):
        judgement = rounds.get(round_)
        if judgement is None:
            continue
        if round_ == 2 and 1 in rounds and rounds[1].verdict is not judgement.verdict:
            continue
        return judgement
    return None


def _origin(judgement: Judgement, pool_id: int, campaign: tuple[int, str], assessor: Assessor | None) -> dict[str, Any]:
    """Where a settled verdict was given: the judgement, its round, pool and campaign, and who gave it (a person, a
    model with its provenance, or an organiser's adjudication); a copied verdict names its original."""
    if judgement.reused_from is not None:
        return dict(judgement.reused_from)
    if assessor is not None:
        kind: str | None = assessor.kind
    else:
        kind = "adjudication" if judgement.round == 3 else None  # None: the assessor was deleted since
    return {
        "judgement_id": judgement.id,
        "round": judgement.round,
        "pool_id": pool_id,
        "campaign_id": campaign[0],
        "campaign": campaign[1],
        "assessor_id": judgement.assessor_id,
        "assessor": assessor.name if assessor is not None else None,
        "kind": kind,
        "provenance": assessor.provenance if assessor is not None else None,
        "judged_at": judgement.updated_at.isoformat(),
    }


def earlier_verdicts(
    session: Session, series_id: int, set_name: str, pool_id: int
) -> dict[tuple[str, str], tuple[int, dict[str, Any]]]:
    """(topic number, docno) -> the settled grade of the newest earlier pool of the series that judged it (items
    awaiting adjudication are not settled) and where that verdict was originally given (`_origin`)."""
    rows = session.execute(_EARLIER, {"series": series_id, "set": set_name, "pool": pool_id}).all()
    rounds: dict[int, dict[int, Judgement]] = defaultdict(dict)
    for start in range(0, len(rows), 10_000):
        chunk = [row[2] for row in rows[start : start + 10_000]]
        for judgement in session.scalars(select(Judgement).where(Judgement.pool_item_id.in_(chunk))):
            rounds[judgement.pool_item_id][judgement.round] = judgement
    assessor_ids = {j.assessor_id for by_round in rounds.values() for j in by_round.values() if j.assessor_id}
    assessors = {a.id: a for a in session.scalars(select(Assessor).where(Assessor.id.in_(assessor_ids)))}
    found: dict[tuple[str, str], tuple[int, dict[str, Any]]] = {}
    for number, docno, item, earlier_pool, campaign_id, campaign_name in rows:  # newest pool first: its verdict wins
        key = (number, docno)
        if key in found or needs_adjudication(rounds[item]):
            continue
        grade = final_grade(rounds[item])
        settled = settling(rounds[item])
        if grade == UNJUDGED or settled is None:
            continue
        assessor = assessors.get(settled.assessor_id) if settled.assessor_id is not None else None
        found[key] = (grade, _origin(settled, earlier_pool, (campaign_id, campaign_name), assessor))
    return found


def earlier_grades(session: Session, series_id: int, set_name: str, pool_id: int) -> dict[tuple[str, str], int]:
    """(topic number, docno) -> the settled grade of the newest earlier pool of the series that judged it."""
    return {key: grade for key, (grade, _) in earlier_verdicts(session, series_id, set_name, pool_id).items()}


def _reuse(
    session: Session, series_id: int, topic_set: SeriesTopicSet, pool: Pool
) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """Give the pool's sampled items judged in an earlier pool of the series that verdict, with its origin in
    `judgements.reused_from`, dropping their judging tasks; per topic number how many, and the origins counted."""
    verdicts = earlier_verdicts(session, series_id, topic_set.name, pool.id)
    if not verdicts:
        return {}, []
    items = session.execute(
        select(PoolItem.id, Topic.number, PoolItem.docno)
        .join(Topic, Topic.id == PoolItem.topic_id)
        .where(PoolItem.pool_id == pool.id, PoolItem.sampled)
    ).all()
    reused = [
        (item, number, *verdicts[(number, docno)]) for item, number, docno in items if (number, docno) in verdicts
    ]
    if not reused:
        return {}, []
    now = datetime.now(UTC)
    session.execute(
        insert(Judgement),
        [
            {
                "pool_item_id": item,
                "assessor_id": None,
                "round": 1,
                "verdict": Verdict.relevant if grade >= 1 else Verdict.not_relevant,
                "grade": grade,
                "reused_from": origin,
                "created_at": now,
                "updated_at": now,
            }
            for item, _, grade, origin in reused
        ],
    )
    ids = [item for item, *_ in reused]
    for start in range(0, len(ids), 10_000):
        session.execute(delete(JudgingTask).where(JudgingTask.pool_item_id.in_(ids[start : start + 10_000])))
    per_topic: dict[str, int] = defaultdict(int)
    for _, number, *_ in reused:
        per_topic[number] += 1
    topics = dict(sorted(per_topic.items(), key=lambda kv: topic_key(kv[0])))
    return topics, reused_verdicts.origins_summary([origin for *_, origin in reused])


def _set_depths(
    session: Session, host_id: int, set_name: str, numbers: set[str], spec: PoolSpec
) -> dict[str, int] | None:
    """A series pool's per-topic depths, checked as a campaign pool's (a depth pool's only, every depth 1..100000)
    and every topic one of the set's (InvalidInput naming `depths`)."""
    if not spec.depths:
        return None
    if spec.kind != "depth":
        raise InvalidInput("per-topic depths are for depth pools", [{"field": "depths", "message": "kind depth"}])
    outside = sorted((t for t in spec.depths if t not in numbers), key=topic_key)
    if outside:
        message = f"not topics of progress set {set_name!r}: {', '.join(outside)}"
        raise InvalidInput("per-topic depths outside the set", [{"field": "depths", "message": message}])
    return topic_depths.check_depths(session, host_id, spec.depths)


def create_series_pool(
    session: Session,
    principal: Principal,
    series_id: int,
    set_name: str,
    campaign_ids: list[int],
    spec: PoolSpec,
    *,
    reuse: bool | None = None,
    memory_mb: float = DEFAULT_MEMORY_MB,
) -> Pool:
    """One pool of a progress set over the runs of several campaigns of the series, on the newest of them (the host),
    at the spec's depth, per-topic depths (`depths`, the set's topics only) or strata; model-assisted with the spec's
    `verification` (the host's model assessor judges every item, people a verification sample). With `reuse` (the
    default, except for a model-assisted pool, whose human sample is drawn from the model's verdicts on every item and
    cannot take earlier ones: InvalidInput naming `reuse` when asked for both), items an earlier pool of the series
    judged for the set keep that verdict and are not judged again (`params.reused`). The runs are read in blocks of
    about `memory_mb` (`run_blocks`), each kept only to its pooled ranks on the set's topics."""
    series = _series(session, principal, series_id)
    topic_set = _set(session, series.id, set_name)
    if not campaign_ids:
        raise InvalidInput("no campaigns chosen", [{"field": "campaign_ids", "message": "name at least one"}])
    members = {c.id: c for c in _members(session, series.id)}
    strangers = sorted(set(campaign_ids) - set(members))
    if strangers:
        raise InvalidInput(
            "campaigns outside the series", [{"field": "campaign_ids", "message": f"not in this series: {strangers}"}]
        )
    chosen = sorted(set(campaign_ids))
    still_open = [members[c].name for c in chosen if members[c].status in OPEN_FOR_TOPICS]
    if still_open:
        raise Conflict(f"close submissions before pooling: {', '.join(still_open)}")
    if spec.verification is not None and reuse:
        raise InvalidInput(
            "a model-assisted pool cannot reuse earlier verdicts",
            [
                {
                    "field": "reuse",
                    "message": "a model-assisted pool draws its human sample from the model's verdicts on every item: "
                    "set reuse to false (or leave it out) with verification",
                }
            ],
        )
    reuse = spec.verification is None if reuse is None else reuse
    host = members[chosen[-1]]
    strata = _strata_of(spec)
    try:
        judging_orders.check_order(spec.order)
    except ValueError as exc:
        raise InvalidInput("unknown judging order", [{"field": "order", "message": str(exc)}]) from None
    previous = _check_host(session, host, topic_set)
    numbers = set(
        session.scalars(select(Topic.number).where(Topic.campaign_id == host.id, Topic.progress_set == set_name))
    )
    if not numbers:
        raise Conflict(f"campaign {host.name!r} has no topics of progress set {set_name!r}")
    depths = _set_depths(session, host.id, set_name, numbers, spec)
    if depths:
        strata = (Stratum(1, max(strata[-1].last, *depths.values()), 1.0),)
    verification = _verification_params(session, host.id, spec.verification) if spec.verification else None
    runs = _select_runs(session, chosen, spec, "the chosen campaigns")
    seed = spec.seed if spec.seed is not None else secrets.randbits(48)
    checked = pool_strata(depth=spec.depth, depths=depths) if depths else pool_strata(strata=strata)
    depth = spec.depth if depths else None

    def on_set(tables: list[RunTable]) -> list[RunTable]:
        """A block's runs on the set's topics."""
        return [_on_topics(t, numbers) for t in tables]

    table = blocked_pool(session, runs, memory_mb, on_set, checked, depth, depths, seed)
    if previous is not None:
        session.execute(delete(Pool).where(Pool.id == previous.id))
    planned, lists = blocked_orders(session, runs, memory_mb, on_set, table, spec.order, seed, strata[-1].last)
    table = replace(table, judging_order=planned)
    params: dict[str, Any] = {
        "strata": [[s.first, s.last, s.rate] for s in strata],
        "depth": spec.depth,
        "max_priority": spec.max_priority,
        "system_types": list(spec.system_types or []),
        "run_ids": [r.id for r in runs],
        "order": spec.order,
        "series": {
            "series_id": series.id,
            "set": set_name,
            "campaign_ids": chosen,
            "topics": sorted(numbers, key=topic_key),
        },
    }
    if verification is not None:  # before the items are stored: a model-assisted pool gives people no tasks yet
        params["verification"] = verification
    if depths:
        params["depths"] = depths
    pool = Pool(campaign_id=host.id, kind=spec.kind, params=params, seed=seed, series_set_id=topic_set.id)
    session.add(pool)
    session.flush()
    session.execute(insert(PoolRun), [{"pool_id": pool.id, "run_id": r.id} for r in runs])
    topic_ids = topic_ids_by_number(session, host.id)
    _store_items(session, pool, table, topic_ids)
    if lists:
        judging_orders.remember_lists(pool.id, {topic_ids[number]: ranked for number, ranked in lists.items()})
    per_topic, origins = _reuse(session, series.id, topic_set, pool) if reuse else ({}, [])
    pool.params = {
        **params,
        "reused": {"items": sum(per_topic.values()), "topics": per_topic, "origins": origins, "enabled": reuse},
    }
    session.flush()
    session.execute(text("ANALYZE pool_items"))
    session.execute(text("ANALYZE judging_tasks"))
    return pool


def pool_reuse(session: Session, principal: Principal, series_id: int, pool_id: int) -> dict[str, Any]:
    """A series pool's reused verdicts for its organisers: the counts by origin and, item by item, the topic, docno,
    grade and where the verdict was originally given (pool, campaign, assessor and its kind)."""
    series = _series(session, principal, series_id)
    pool = session.get(Pool, pool_id)
    topic_set = session.get(SeriesTopicSet, pool.series_set_id) if pool and pool.series_set_id else None
    if pool is None or topic_set is None or topic_set.series_id != series.id:
        raise NotFound(f"series {series_id} has no pool {pool_id}")
    items = reused_verdicts.reused_items(session, pool.id)
    return {
        "pool_id": pool.id,
        "set": topic_set.name,
        "reused": len(items),
        "origins": reused_verdicts.origins_summary([i["origin"] for i in items]),
        "items": items,
    }


def set_evaluation(session: Session, topic_set: SeriesTopicSet, evaluation_id: int | None) -> Evaluation:
    """The set's finished evaluation: the one given, else the newest of a version cut from one of its series pools."""
    query = (
        select(Evaluation)
        .join(QrelsVersion, QrelsVersion.id == Evaluation.qrels_version_id)
        .join(Pool, Pool.id == QrelsVersion.pool_id)
        .where(Pool.series_set_id == topic_set.id, Evaluation.status == "done")
    )
    if evaluation_id is not None:
        query = query.where(Evaluation.id == evaluation_id)
    found = session.scalar(query.order_by(Evaluation.id.desc()).limit(1))
    if found is None:
        raise NotFound(f"no finished evaluation of progress set {topic_set.name!r} yet")
    return found


_RUNS = text(
    "SELECT r.id, r.name, r.team_id, r.system_type, r.training_type, r.novelty, r.priority, t.name, c.id, c.name "
    "FROM pool_runs p JOIN runs r ON r.id = p.run_id JOIN teams t ON t.id = r.team_id "
    "JOIN campaigns c ON c.id = r.campaign_id WHERE p.pool_id = :pool ORDER BY r.id"
)
_MEANS = text(
    "SELECT run_id, array_agg(measure), array_agg(value), array_agg(ci_low), array_agg(ci_high), "
    "array_agg(sampling_se) FROM run_means WHERE evaluation_id = :evaluation GROUP BY run_id"
)
_PER_TOPIC = text(
    "SELECT run_id, topic, value FROM scores "
    "WHERE evaluation_id = :evaluation AND measure = :measure AND topic <> 'all'"
)


def series_table(
    session: Session, evaluation: Evaluation, pool_id: int, measure: str
) -> tuple[ScoreTable, dict[int, tuple[int, str]]]:
    """The series pool's runs (every campaign's) with their stored means, intervals and one measure's per-topic
    values; and each run's campaign (id, name)."""
    runs: list[RunInfo] = []
    teams: dict[int, str] = {}
    campaigns: dict[int, tuple[int, str]] = {}
    for *fields, team, campaign_id, campaign_name in session.execute(_RUNS, {"pool": pool_id}):
        run = RunInfo(*fields)
        runs.append(run)
        teams[run.team_id] = team
        campaigns[run.id] = (campaign_id, campaign_name)
    measures = list(evaluation.measures["names"])
    run_index = {r.id: i for i, r in enumerate(runs)}
    measure_index = {m: i for i, m in enumerate(measures)}
    means = np.full((len(runs), len(measures)), np.nan)
    rows = session.execute(_MEANS, {"evaluation": evaluation.id}).all()
    for run_id, names, numbers, *_ in rows:
        for name, value in zip(names, numbers, strict=True):
            if run_id in run_index and name in measure_index:
                means[run_index[run_id], measure_index[name]] = value
    info = evaluation.measures.get("interval")
    found = _fill(info, [(r[0], r[1], *r[3:]) for r in rows], run_index, measure_index) if info else None
    cells = session.execute(_PER_TOPIC, {"evaluation": evaluation.id, "measure": measure}).all()
    topics = sorted({topic for _, topic, _ in cells}, key=topic_key)
    topic_index = {t: i for i, t in enumerate(topics)}
    values = np.full((len(runs), len(measures), len(topics)), np.nan)
    if measure in measure_index:
        for run_id, topic, value in cells:
            if run_id in run_index:
                values[run_index[run_id], measure_index[measure], topic_index[topic]] = value
    return ScoreTable(runs, teams, measures, topics, values, means, found), campaigns


def series_board(
    session: Session,
    principal: Principal | None,
    series_id: int,
    set_name: str,
    *,
    measure: str | None = None,
    evaluation_id: int | None = None,
    filters: Filters = Filters(),
) -> dict[str, object]:
    """The board of a progress set's evaluation over the runs of several years: each run with its campaign and team,
    its mean and interval, rank intervals and tiers, per topic the best and median. Organisers see it at any time;
    everyone else (`principal` None) once the set is released (and the version judges no other sealed set), with the
    teams of a campaign that anonymises its published board under that board's names (Team A, B, ...)."""
    if principal is not None:
        series = _series(session, principal, series_id)
    else:
        found = session.get(Series, series_id)
        if found is None:
            raise NotFound(f"series {series_id} not found")
        series = found
    topic_set = _set(session, series.id, set_name)
    if principal is None and topic_set.released_at is None:
        raise Forbidden(sealing.sealed_note([set_name]))
    evaluation = set_evaluation(session, topic_set, evaluation_id)
    version = session.get(QrelsVersion, evaluation.qrels_version_id)
    assert version is not None and version.pool_id is not None
    still_sealed = sealing.sealed_sets_of_version(session, version.id)
    if principal is None and still_sealed:  # a version judging another, unreleased set's topics
        raise Forbidden(sealing.sealed_note(still_sealed))
    pool = session.get(Pool, version.pool_id)
    host = session.get(Campaign, evaluation.campaign_id)
    assert pool is not None and host is not None
    shown = measure_name(measure) or default_measure(host, list(evaluation.measures["names"]))
    table, campaigns = series_table(session, evaluation, pool.id, shown)
    header = {
        "series": {"id": series.id, "name": series.name},
        "set": topic_set.name,
        "released_at": topic_set.released_at.isoformat() if topic_set.released_at else None,
        "sealed": topic_set.released_at is None,
        "host_campaign": {"id": host.id, "name": host.name},
        "campaigns": [{"id": c, "name": n} for c, n in sorted(set(campaigns.values()))],
        "evaluation_id": evaluation.id,
        "qrels_version_id": version.id,
        "pool_id": pool.id,
        "reused": (pool.params.get("reused") or {}).get("items", 0),
    }
    board = board_document(header, table, shown, filters)
    aliases = _public_aliases(session, campaigns) if principal is None else {}
    run_teams = {run.id: run.team_id for run in table.runs}

    def placed(row: dict[str, Any]) -> dict[str, Any]:
        """The row with its run's campaign (and its team's anonymous name where the campaign asks for one)."""
        campaign_id, name = campaigns[row["run_id"]]
        team = aliases[campaign_id].get(run_teams[row["run_id"]], "Team ?") if campaign_id in aliases else row["team"]
        return {**row, "team": team, "campaign_id": campaign_id, "campaign": name}

    by_type: dict[str, list[dict[str, Any]]] = board["by_system_type"]  # type: ignore[assignment]  # board_document types its values as object
    rows: list[dict[str, Any]] = board["rows"]  # type: ignore[assignment]  # as above
    return {
        **board,
        "anonymised": bool(aliases),
        "anonymised_campaigns": sorted(aliases),
        "rows": [placed(r) for r in rows],
        "by_system_type": {k: [placed(r) for r in v] for k, v in by_type.items()},
    }


def _public_aliases(session: Session, campaigns: dict[int, tuple[int, str]]) -> dict[int, dict[int, str]]:
    """Per campaign of the board that anonymises its published board (`anonymise_teams`): team id -> the anonymous
    name its own published board gives (`scores.team_aliases`), so the public series board names teams as they do."""
    ids = sorted({campaign_id for campaign_id, _ in campaigns.values()})
    hidden = session.scalars(select(Campaign.id).where(Campaign.id.in_(ids), Campaign.anonymise_teams.is_(True)))
    return {campaign_id: team_aliases(session, campaign_id) for campaign_id in hidden}
