"""Pool use cases: build a reproducible pool of a closed campaign, assign topics, report pool statistics."""

from __future__ import annotations

import secrets
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from sqlalchemy import delete, func, insert, literal, select, text
from sqlalchemy.orm import Session

from app.evaluation.errors import FormatError
from app.evaluation.pools.builders import (
    TRECVID_STRATA,
    PoolCandidates,
    PoolStatsTally,
    PoolTable,
    Stratum,
    merge_candidates,
    parse_strata,
    pool_candidates,
    pool_strata,
    sample_pool,
)
from app.evaluation.pools.queues import joined_lists, planned_orders, topic_lists
from app.evaluation.records import RunTable
from app.services import judging_orders, reused_verdicts, topic_depths
from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.errors import Conflict, Forbidden, InvalidInput, NotFound
from app.services.run_blocks import DEFAULT_MEMORY_MB, POOL_BYTES_PER_RUN_LINE, reduced_blocks
from app.services.run_files import topic_id_column
from app.services.topics import topic_ids_by_number
from app.storage.bulk import copy_rows
from app.storage.models import (
    Assessor,
    AssessorKind,
    Assignment,
    Campaign,
    CampaignStatus,
    Judgement,
    JudgingTask,
    ModelVerdict,
    Pool,
    PoolItem,
    PoolRun,
    Run,
    TaskKind,
    Team,
    Topic,
)

STRATIFY = ("none", "confidence")
_ITEM_CHUNK = 50_000  # pool items fetched at a time for statistics


@dataclass(frozen=True)
class VerificationSpec:
    """A model-assisted pool: a model assessor judges every sampled item, people a seeded sample of its verdicts."""

    human_share: float  # the expected share of each topic's items people verify, in (0, 1]
    stratify: str = "none"  # none | confidence: items the model is unsure of are drawn more often
    model_assessor_id: int | None = None  # the model whose verdicts are verified; the campaign's only one if None


@dataclass(frozen=True)
class PoolSpec:
    """How to build a pool: depth-k or strata, which runs, and the seed (random when omitted)."""

    kind: str = "stratified"  # depth | stratified
    depth: int | None = None
    strata: str | None = None  # e.g. "1-300:1.0, 301-1000:0.25"; TRECVID's when omitted
    seed: int | None = None
    max_priority: int | None = None  # only runs with priority <= this
    system_types: tuple[str, ...] | None = None  # only these run types
    run_ids: tuple[int, ...] | None = None  # only these runs
    order: str = "shuffled"  # judging order per topic: one of `orders.ORDERS` (shuffled, mtc_hedge, ...)
    verification: VerificationSpec | None = None  # a model-assisted pool (services/verification.py)
    depths: Mapping[str, int] | None = None  # a depth pool's per-topic depths {topic: k}; `depth` for the others


def _strata_of(spec: PoolSpec) -> tuple[Stratum, ...]:
    """The strata a spec asks for, validated."""
    if spec.kind == "depth":
        if spec.depth is None or spec.depth < 1:
            raise InvalidInput("a depth pool needs depth >= 1", [{"field": "depth", "message": "required, >= 1"}])
        return (Stratum(1, spec.depth, 1.0),)
    if spec.kind != "stratified":
        raise InvalidInput("unknown pool kind", [{"field": "kind", "message": "depth or stratified"}])
    if spec.strata is None:
        return TRECVID_STRATA
    try:
        return parse_strata(spec.strata)
    except FormatError as exc:
        raise InvalidInput("invalid strata", [{"field": "strata", "message": m} for _, m in exc.errors]) from None


def _select_runs(
    session: Session, campaign_ids: Sequence[int], spec: PoolSpec, scope: str = "this campaign"
) -> list[Run]:
    """The runs of the campaigns (one, or a series' chosen ones: `scope` names them in errors) the spec selects."""
    query = select(Run).where(Run.campaign_id.in_(campaign_ids)).order_by(Run.id)
    if spec.max_priority is not None:
        query = query.where(Run.priority <= spec.max_priority)
    if spec.system_types:
        query = query.where(Run.system_type.in_(spec.system_types))
    if spec.run_ids:
        query = query.where(Run.id.in_(spec.run_ids))
    runs = list(session.scalars(query))
    if spec.run_ids and len(runs) != len(set(spec.run_ids)):
        missing = sorted(set(spec.run_ids) - {r.id for r in runs})
        raise InvalidInput("unknown runs", [{"field": "run_ids", "message": f"not in {scope}: {missing}"}])
    if not runs:
        raise InvalidInput("no runs match the selection", [{"field": "runs", "message": "selection is empty"}])
    return runs


def _verification_params(session: Session, campaign_id: int, spec: VerificationSpec) -> dict[str, object]:
    """The stored `verification` parameters of a model-assisted pool, validated (the model assessor resolved)."""
    errors = []
    if not (0.0 < spec.human_share <= 1.0):
        errors.append({"field": "verification.human_share", "message": "a share in (0, 1]"})
    if spec.stratify not in STRATIFY:
        errors.append({"field": "verification.stratify", "message": "none or confidence"})
    models = list(
        session.scalars(
            select(Assessor.id)
            .where(Assessor.campaign_id == campaign_id, Assessor.kind == AssessorKind.model.value)
            .order_by(Assessor.id)
        )
    )
    model = spec.model_assessor_id
    field = "verification.model_assessor_id"
    if model is not None and model not in models:
        errors.append({"field": field, "message": f"{model} is not a model assessor of this campaign"})
    elif model is None and len(models) != 1:
        found = "no model assessor" if not models else f"{len(models)} model assessors ({models})"
        errors.append({"field": field, "message": f"the campaign has {found}: name the one to verify"})
    if errors:
        raise InvalidInput("invalid verification", errors)
    return {
        "human_share": float(spec.human_share),
        "stratify": spec.stratify,
        "model_assessor_id": model if model is not None else models[0],
    }


def verification_of(pool: Pool) -> VerificationSpec | None:
    """A model-assisted pool's stored `verification` parameters, its model assessor resolved (None for pools people
    judge in full)."""
    found = (pool.params or {}).get("verification")
    if not isinstance(found, dict):
        return None
    return VerificationSpec(
        human_share=float(found["human_share"]),
        stratify=str(found.get("stratify", "none")),
        model_assessor_id=int(found["model_assessor_id"]),
    )


def current_pool(session: Session, campaign_id: int) -> Pool | None:
    """The campaign's pool (the newest), if any."""
    return session.scalar(select(Pool).where(Pool.campaign_id == campaign_id).order_by(Pool.id.desc()).limit(1))


@dataclass(frozen=True)
class _Plan:
    """A pool checked against its campaign and built in memory, nothing stored yet."""

    campaign: Campaign
    strata: tuple[Stratum, ...]
    runs: list[Run]
    seed: int
    table: PoolTable
    verification: dict[str, object] | None
    previous: Pool | None  # the campaign's pool without judgements, which a build replaces
    depths: dict[str, int] | None = None  # per-topic depths, checked (services/topic_depths.py)


def has_judgements(session: Session, pool_id: int) -> bool:
    """Whether a shot pool has any verdict: a person's judgement or a model's."""
    judged = session.scalar(
        select(func.count()).select_from(Judgement).join(PoolItem).where(PoolItem.pool_id == pool_id)
    )
    judged = judged or session.scalar(
        select(func.count()).select_from(ModelVerdict).join(PoolItem).where(PoolItem.pool_id == pool_id)
    )
    return bool(judged)


def _plan(session: Session, principal: Principal, campaign_id: int, spec: PoolSpec, memory_mb: float) -> _Plan:
    """Check a spec against the campaign (kind, status, strata, order, verification, an earlier pool's judgements,
    the runs selected) and build its pool in memory, reading the runs in blocks of about `memory_mb`: what
    `create_pool` stores and `preview_pool` counts."""
    campaign = get_organised(session, principal, campaign_id)
    if campaign.task_kind is not TaskKind.shots:
        raise Forbidden("moment campaigns take moment pools: POST /api/campaigns/{id}/moment-pools")
    if campaign.status not in (CampaignStatus.closed, CampaignStatus.pooled, CampaignStatus.judging):
        raise Conflict(f"close submissions before pooling (campaign is {campaign.status.value})")
    strata = _strata_of(spec)
    depths = _depths_of(session, campaign_id, spec)
    if depths:
        strata = (Stratum(1, max(strata[-1].last, *depths.values()), 1.0),)
    try:
        judging_orders.check_order(spec.order)
    except ValueError as exc:
        raise InvalidInput("unknown judging order", [{"field": "order", "message": str(exc)}]) from None
    verification = _verification_params(session, campaign_id, spec.verification) if spec.verification else None
    previous = _own_previous(session, campaign_id)
    if previous is not None and has_judgements(session, previous.id):
        raise Conflict("the campaign's pool already has judgements; it cannot be rebuilt")
    runs = _select_runs(session, [campaign.id], spec)
    seed = spec.seed if spec.seed is not None else secrets.randbits(48)
    checked = pool_strata(depth=spec.depth, depths=depths) if depths else pool_strata(strata=strata)
    progress = _progress_numbers(session, campaign_id)
    table = blocked_pool(
        session, runs, memory_mb, lambda tables: _without(tables, progress), checked, spec.depth, depths, seed
    )
    return _Plan(campaign, strata, runs, seed, table, verification, previous, depths)


def blocked_pool(
    session: Session,
    runs: Sequence[Run],
    memory_mb: float,
    rows: Callable[[list[RunTable]], list[RunTable]],
    strata: Sequence[Stratum],
    depth: int | None,
    depths: Mapping[str, int] | None,
    seed: int,
) -> PoolTable:
    """The pool of `rows` of the runs (the rows a pool takes of each block's tables) with checked `strata` (a depth
    pool's `depth` and per-topic `depths`), the runs read in blocks of about `memory_mb`, each kept only to its
    candidates (the candidates found so far count against the budget): the pool `build_pool` gives of all the runs at
    once."""
    merged: list[PoolCandidates] = []  # the candidates so far (none before the first block)
    for part in reduced_blocks(
        session,
        runs,
        memory_mb,
        lambda _, tables: pool_candidates(rows(tables), strata, depth=depth, depths=depths),
        POOL_BYTES_PER_RUN_LINE,
        held=lambda: 2 * sum(c.nbytes for c in merged),  # held, and twice that while a block is merged in
    ):
        merged[:] = [merge_candidates([*merged, part])]
    assert merged  # _select_runs refuses an empty selection
    return sample_pool(merged[0], strata, seed=seed)


def blocked_orders(
    session: Session,
    runs: Sequence[Run],
    memory_mb: float,
    rows: Callable[[list[RunTable]], list[RunTable]],
    table: PoolTable,
    order: str,
    seed: int,
    depth: int,
) -> tuple[np.ndarray, dict[str, list[list[str]]]]:
    """The pool's judging_order column with each topic's first plan at the head (the shuffle when `order` is), and
    {topic number: the runs' lists} the plans come from ({} for the shuffle), as `judging_orders.initial_orders`
    gives them, the runs' `rows` read again a block at a time."""
    if judging_orders.is_random(order):
        return np.asarray(table.judging_order), {}
    sampled = np.asarray(table.sampled, dtype=bool)
    topics, docs = np.asarray(table.topics)[sampled], np.asarray(table.docs)[sampled]
    lists = joined_lists(
        reduced_blocks(
            session,
            runs,
            memory_mb,
            lambda _, tables: topic_lists(rows(tables), topics, docs, depth),
            POOL_BYTES_PER_RUN_LINE,
        )
    )
    return planned_orders(table, lists, order, seed, judging_orders.AHEAD), lists


def _own_previous(session: Session, campaign_id: int) -> Pool | None:
    """The campaign's newest own pool, which a build replaces unless judged (a series pool, services/series.py,
    stays; Conflict while the newest is one being judged, as judging goes to a campaign's newest pool)."""
    newest = current_pool(session, campaign_id)
    if newest is None or newest.series_set_id is None:
        return newest
    open_tasks = session.scalar(
        select(func.count())
        .select_from(JudgingTask)
        .join(PoolItem, PoolItem.id == JudgingTask.pool_item_id)
        .where(PoolItem.pool_id == newest.id, JudgingTask.done_at.is_(None))
    )
    if open_tasks:
        raise Conflict(f"the campaign's series pool {newest.id} is being judged ({open_tasks} open tasks): finish it")
    own = select(Pool).where(Pool.campaign_id == campaign_id, Pool.series_set_id.is_(None))
    return session.scalar(own.order_by(Pool.id.desc()).limit(1))


def _without_progress_topics(session: Session, campaign_id: int, tables: list[RunTable]) -> list[RunTable]:
    """The runs without their rows on the campaign's progress topics: only series pools pool those."""
    return _without(tables, _progress_numbers(session, campaign_id))


def _progress_numbers(session: Session, campaign_id: int) -> set[str]:
    """The numbers of the campaign's progress topics."""
    return set(
        session.scalars(select(Topic.number).where(Topic.campaign_id == campaign_id, Topic.progress_set.is_not(None)))
    )


def _without(tables: list[RunTable], numbers: set[str]) -> list[RunTable]:
    """The runs without their rows on the given topics (the tables themselves when there are none)."""
    if not numbers:
        return tables
    return [_on_topics(t, numbers, keep=False) for t in tables]


def _on_topics(table: RunTable, numbers: set[str], *, keep: bool = True) -> RunTable:
    """A run's rows on the given topics (`keep`), or on the others; the table itself when that is every row."""
    inside = np.isin(table.topics.astype(str), sorted(numbers))
    chosen = inside if keep else ~inside
    if chosen.all():
        return table
    columns = (table.topics, table.docs, table.ranks, table.scores, table.lines)
    return RunTable(table.tag, *(column[chosen] for column in columns))


def _depths_of(session: Session, campaign_id: int, spec: PoolSpec) -> dict[str, int] | None:
    """A spec's per-topic depths, checked (a depth pool's only; every topic the campaign's, every depth >= 1)."""
    if not spec.depths:
        return None
    if spec.kind != "depth":
        raise InvalidInput("per-topic depths are for depth pools", [{"field": "depths", "message": "kind depth"}])
    return topic_depths.check_depths(session, campaign_id, spec.depths)


def create_pool(
    session: Session, principal: Principal, campaign_id: int, spec: PoolSpec, *, memory_mb: float = DEFAULT_MEMORY_MB
) -> Pool:
    """Build and store the pool of a closed shots campaign; replaces an earlier pool with no judgements yet. The
    runs are read in blocks of about `memory_mb` (the `job_memory_mb` setting), each kept only to its pooled ranks."""
    plan = _plan(session, principal, campaign_id, spec, memory_mb)
    campaign, strata, runs, seed, table = plan.campaign, plan.strata, plan.runs, plan.seed, plan.table
    if plan.previous is not None:
        session.execute(delete(Pool).where(Pool.id == plan.previous.id))
    progress = _progress_numbers(session, campaign_id)
    planned, lists = blocked_orders(
        session, runs, memory_mb, lambda tables: _without(tables, progress), table, spec.order, seed, strata[-1].last
    )
    table = replace(table, judging_order=planned)
    params: dict[str, object] = {
        "strata": [[s.first, s.last, s.rate] for s in strata],
        "depth": spec.depth,
        "max_priority": spec.max_priority,
        "system_types": list(spec.system_types or []),
        "run_ids": [r.id for r in runs],
        "order": spec.order,
    }
    if plan.verification is not None:
        params["verification"] = plan.verification
    if plan.depths:
        params["depths"] = plan.depths
    pool = Pool(campaign_id=campaign_id, kind=spec.kind, params=params, seed=seed)
    session.add(pool)
    session.flush()
    session.execute(insert(PoolRun), [{"pool_id": pool.id, "run_id": r.id} for r in runs])
    topic_ids = topic_ids_by_number(session, campaign_id)
    _store_items(session, pool, table, topic_ids)
    if lists:  # the first verdicts need not load the runs again
        judging_orders.remember_lists(pool.id, {topic_ids[number]: ranked for number, ranked in lists.items()})
    campaign.status = CampaignStatus.pooled
    session.flush()
    # fresh statistics, so the judging queue's queries use their indexes from the first item on
    session.execute(text("ANALYZE pool_items"))
    session.execute(text("ANALYZE judging_tasks"))
    return pool


def preview_pool(
    session: Session, principal: Principal, campaign_id: int, spec: PoolSpec, *, memory_mb: float = DEFAULT_MEMORY_MB
) -> dict[str, object]:
    """What `create_pool` would build from the spec, counted and not stored: the seed (drawn when the spec has
    none: build with it to get this pool), the strata, the runs, per topic and stratum the pooled and sampled items
    (as `topic_counts` gives them of the stored pool) and the totals. The same checks as a build, the same errors."""
    plan = _plan(session, principal, campaign_id, spec, memory_mb)
    table = plan.table
    pooled: dict[str, Counter[str]] = defaultdict(Counter)
    sampled: dict[str, Counter[str]] = defaultdict(Counter)
    rows = zip(table.topics.tolist(), table.strata.tolist(), table.sampled.tolist(), strict=True)
    for topic, stratum, chosen in rows:
        pooled[str(topic)][str(stratum)] += 1
        sampled[str(topic)][str(stratum)] += int(bool(chosen))
    order = session.scalars(select(Topic.number).where(Topic.campaign_id == campaign_id).order_by(Topic.number))
    topics = [
        {
            "topic": number,
            "pooled": sum(pooled[number].values()),
            "sampled": sum(sampled[number].values()),
            "strata": {
                s: {"pooled": pooled[number][s], "sampled": sampled[number][s]} for s in sorted(pooled[number], key=int)
            },
        }
        for number in order
        if number in pooled
    ]
    return {
        "campaign_id": campaign_id,
        "kind": spec.kind,
        "seed": plan.seed,
        "strata": [[s.first, s.last, s.rate] for s in plan.strata],
        "depths": plan.depths,
        "order": spec.order,
        "run_ids": [r.id for r in plan.runs],
        "topics": topics,
        "totals": totals(topics),
    }


def totals(topics: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The pooled and sampled items of every topic of `topic_counts` (or a preview's), summed."""
    return {
        "topics": len(topics),
        "pooled": sum(int(t["pooled"]) for t in topics),
        "sampled": sum(int(t["sampled"]) for t in topics),
    }


def _store_items(session: Session, pool: Pool, table: PoolTable, topic_ids: dict[str, int]) -> None:
    """COPY the pool's items, then create a round-1 judging task for every sampled item (none in a model-assisted
    pool: people judge only its verification sample, queued as each topic's model verdicts are in)."""
    n = len(table)
    copy_rows(
        session,
        "pool_items",
        ("pool_id", "topic_id", "docno", "stratum", "sampled", "best_rank", "n_runs", "judging_order"),
        [
            np.full(n, pool.id),
            topic_id_column(table.topics, topic_ids),
            table.docs,
            table.strata,
            np.where(table.sampled, "t", "f"),
            table.best_ranks,
            table.n_runs,
            table.judging_order,
        ],
    )
    if verification_of(pool) is not None:
        return
    session.execute(
        insert(JudgingTask).from_select(
            ["pool_item_id", "round", "reason"],
            select(PoolItem.id, literal(1), literal("pooled")).where(PoolItem.pool_id == pool.id, PoolItem.sampled),
        )
    )


def get_pool(session: Session, principal: Principal, pool_id: int) -> Pool:
    """A pool of a campaign the caller organises."""
    pool = session.get(Pool, pool_id)
    if pool is None:
        raise NotFound(f"pool {pool_id} not found")
    get_organised(session, principal, pool.campaign_id)
    return pool


def topic_counts(session: Session, pool: Pool) -> list[dict[str, object]]:
    """Per topic and stratum: pooled and sampled items."""
    rows = session.execute(
        select(Topic.number, PoolItem.stratum, func.count(), func.count().filter(PoolItem.sampled))
        .join(Topic, Topic.id == PoolItem.topic_id)
        .where(PoolItem.pool_id == pool.id)
        .group_by(Topic.number, PoolItem.stratum)
        .order_by(Topic.number, PoolItem.stratum)
    )
    pooled_in: dict[str, int] = {}
    sampled_in: dict[str, int] = {}
    strata: dict[str, dict[str, dict[str, int]]] = {}
    for number, stratum, pooled, sampled in rows:
        pooled_in[number] = pooled_in.get(number, 0) + pooled
        sampled_in[number] = sampled_in.get(number, 0) + sampled
        strata.setdefault(number, {})[str(stratum)] = {"pooled": pooled, "sampled": sampled}
    return [{"topic": n, "pooled": pooled_in[n], "sampled": sampled_in[n], "strata": strata[n]} for n in strata]


def statistics(
    session: Session, principal: Principal, pool_id: int, *, memory_mb: float = DEFAULT_MEMORY_MB
) -> dict[str, object]:
    """TRECVID pool statistics of a pool the caller organises, its runs read in blocks of about `memory_mb`."""
    return pool_statistics(session, get_pool(session, principal, pool_id), memory_mb=memory_mb)


def _stored_table(session: Session, pool: Pool) -> PoolTable:
    """A stored pool's items as a PoolTable (judging order left out), fetched `_ITEM_CHUNK` rows at a time into
    columns sized from the start: never a row object per item of the whole pool at once (Core rows, not the ORM's:
    a third faster)."""
    of_pool = (PoolItem.pool_id == pool.id, Topic.id == PoolItem.topic_id)
    count, topic_width, doc_width = session.execute(
        select(func.count(), func.max(func.length(Topic.number)), func.max(func.length(PoolItem.docno))).where(*of_pool)
    ).one()
    columns = (
        np.empty(count, dtype=f"<U{topic_width or 1}"),
        np.empty(count, dtype=f"<U{doc_width or 1}"),
        np.empty(count, dtype=np.int64),
        np.empty(count, dtype=bool),
        np.empty(count, dtype=np.int64),
        np.empty(count, dtype=np.int64),
    )
    query = select(
        Topic.number, PoolItem.docno, PoolItem.stratum, PoolItem.sampled, PoolItem.best_rank, PoolItem.n_runs
    ).where(*of_pool)
    start = 0
    for chunk in session.connection().execute(query.execution_options(yield_per=_ITEM_CHUNK)).partitions():
        for column, values in zip(columns, zip(*chunk, strict=True), strict=True):
            column[start : start + len(chunk)] = values
        start += len(chunk)
    topics, docs, strata, sampled, best_ranks, n_runs = (column[:start] for column in columns)
    return PoolTable(topics, docs, strata, sampled, best_ranks, n_runs, np.zeros(start, dtype=np.int64))


def pool_statistics(session: Session, pool: Pool, *, memory_mb: float = DEFAULT_MEMORY_MB) -> dict[str, object]:
    """TRECVID pool statistics: judged share of each run's results (min/max/mean), unique contributions; and the
    verdicts reused from earlier pools of a series, counted by where they were given (`reused_verdicts`). The runs
    are read in blocks of about `memory_mb` (`run_blocks`), each counted and dropped before the next."""
    if pool.kind == "moments":
        raise InvalidInput("a moment pool has no shot statistics", [{"field": "pool_id", "message": "moment pool"}])
    run_ids = list(pool.params["run_ids"])
    runs = list(session.scalars(select(Run).where(Run.id.in_(run_ids)).order_by(Run.id)))
    teams = {t.id: t.name for t in session.scalars(select(Team).where(Team.id.in_({r.team_id for r in runs})))}
    pooled_topics = select(PoolItem.topic_id).where(PoolItem.pool_id == pool.id).distinct()
    numbers = set(session.scalars(select(Topic.number).where(Topic.id.in_(pooled_topics))))
    table = _stored_table(session, pool)
    depth = int(pool.params["strata"][-1][1])
    per_topic = topic_depths.stored_depths(pool)
    if per_topic:
        depth = topic_depths.default_depth(pool)
    tally = PoolStatsTally(table, depth=depth, groups=[teams[r.team_id] for r in runs], depths=per_topic)
    for _ in reduced_blocks(  # a series pool: only its set's topics
        session, runs, memory_mb, lambda _, tables: tally.add([_on_topics(t, numbers) for t in tables])
    ):
        pass
    result = tally.result()
    share = result.judged_share
    finite = share[np.isfinite(share)]
    return {
        "pool_id": pool.id,
        "topics": topic_counts(session, pool),
        "judged_share": {
            "min": float(finite.min()) if finite.size else None,
            "max": float(finite.max()) if finite.size else None,
            "mean": float(finite.mean()) if finite.size else None,
        },
        "runs": [
            {
                "run_id": r.id,
                "run": r.name,
                "team": teams[r.team_id],
                "unique_contributions": int(result.unique_per_run[i]),
                "judged_share_mean": float(np.nanmean(share[i])) if np.isfinite(share[i]).any() else None,
            }
            for i, r in enumerate(runs)
        ],
        "teams": [{"team": name, "unique_contributions": n} for name, n in result.unique_per_group.items()],
        "reused": reused_verdicts.reused_summary(session, pool.id),  # a series top-up pool's copied verdicts
    }


def assign_topics(
    session: Session, principal: Principal, pool_id: int, pairs: Sequence[tuple[str, int]], *, shared: bool = False
) -> list[Assignment]:
    """Give topics to assessors; a topic has one owner unless `shared` is set."""
    pool = get_pool(session, principal, pool_id)
    topic_ids = topic_ids_by_number(session, pool.campaign_id)
    assessors = {a.id for a in session.scalars(select(Assessor).where(Assessor.campaign_id == pool.campaign_id))}
    errors = [
        {
            "field": f"assignments[{i}]",
            "message": f"unknown topic {t!r}" if t not in topic_ids else f"unknown assessor {a}",
        }
        for i, (t, a) in enumerate(pairs)
        if t not in topic_ids or a not in assessors
    ]
    if errors:
        raise InvalidInput("invalid assignments", errors)
    existing = {
        (a.topic_id, a.assessor_id) for a in session.scalars(select(Assignment).where(Assignment.pool_id == pool.id))
    }
    owned = {t for t, _ in existing}
    made = []
    for number, assessor_id in pairs:
        key = (topic_ids[number], assessor_id)
        if key in existing:
            continue
        if key[0] in owned and not shared:
            raise Conflict(f"topic {number} already has an assessor; pass shared=true to add another")
        row = Assignment(pool_id=pool.id, topic_id=key[0], assessor_id=assessor_id)
        session.add(row)
        existing.add(key)
        made.append(row)
    campaign = session.get(Campaign, pool.campaign_id)
    if made and campaign is not None and campaign.status is CampaignStatus.pooled:
        campaign.status = CampaignStatus.judging  # judging starts with the first assignment: no verdict comes sooner
    session.flush()
    return made


def list_assignments(session: Session, principal: Principal, pool_id: int) -> list[dict[str, object]]:
    """The pool's topics given to assessors: topic number and assessor id, by topic then assessor."""
    pool = get_pool(session, principal, pool_id)
    rows = session.execute(
        select(Topic.number, Assignment.assessor_id)
        .join(Topic, Topic.id == Assignment.topic_id)
        .where(Assignment.pool_id == pool.id)
        .order_by(Topic.number, Assignment.assessor_id)
    )
    return [{"topic": number, "assessor_id": assessor_id} for number, assessor_id in rows]
