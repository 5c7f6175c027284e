"""The live view and budget advisor of a shot pool while it is judged (read-only: no flush, no writes).

Per pool the process keeps one `LiveBoard` (what the pool's runs rank at its lines, read a block of runs at a time,
not the runs) and the grades it has been fed. Each request reads one aggregate of the pool's judgements, its state
key (number of judgements, largest judgement id, latest update): while the key is unchanged, the cached result is
returned as it is, so polls between verdicts cost one small query. When it changes, the pool's judgements are
re-read (one query), settled with `qrels.final_grade` as a qrels cut would, and only items whose final grade changed
are fed to the board (in order of their first judgement), so the counts, estimates and the recent window move
incrementally; the leave-one-team-out part is recomputed once per new state (`LiveBoard.reusability`). The cache
holds a few pools per process; each process builds its own.

One answer: the live view's stop/continue is the budget advisor's at its default parameters (`DEFAULTS`: target
tau 0.9, R_hat within 20 %, 95 %, 200 replicates, seed 0), computed once per state and shared (`_budget`), so the
two never contradict; both come from `budget.judging_advice`, which names the topics and strata to judge next. The
xinfAP error model of each topic (`budget.topic_error`: the jackknife and the small-count floor) is cached per topic
and recomputed only for topics whose verdicts changed, so a refresh after one verdict redoes one topic's jackknife.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.evaluation.analyses.budget import (
    TopicError,
    allocation,
    combine,
    relevant_estimate,
    tau_advice,
    topic_error,
)
from app.evaluation.analyses.live import LiveBoard
from app.evaluation.pools.seeding import topic_rng
from app.services import judging_orders, topic_depths
from app.services.auth import Principal
from app.services.errors import InvalidInput
from app.services.pools import get_pool
from app.services.qrels import UNJUDGED, final_grade
from app.services.run_blocks import StoredBlocks
from app.storage.models import Campaign, Judgement, Pool, PoolItem, Run, Team, Topic

MAX_REPLICATES = 2000
MAX_POOLS = 8  # boards kept per process (least recently used dropped)
# the budget advisor's defaults: the live view's advice is the budget's at these
DEFAULTS: dict[str, Any] = {
    "target_width": None,
    "relative_width": 0.2,
    "alpha": 0.05,
    "replicates": 200,
    "seed": 0,
    "target_tau": 0.9,
}


@dataclass
class _Entry:
    """One pool's board, the grades it was fed, and the results computed at the last state."""

    board: LiveBoard
    items: np.ndarray  # pool item ids, in the board's line order
    line_of_item: dict[int, int]
    fed: np.ndarray  # int64 [line] grade fed to the board, UNJUDGED if none
    max_results: int  # the campaign's: where the runs' lists are cut
    state: tuple = ()
    live: dict | None = None
    budgets: dict[tuple, dict] = field(default_factory=dict)
    errors: dict[tuple[int, int], tuple[int, TopicError]] = field(default_factory=dict)  # (topic, seed) -> version
    lock: threading.Lock = field(default_factory=threading.Lock)


_CACHE: OrderedDict[int, _Entry] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def _finite(value: object) -> Any:
    """The value with NaN and infinite floats as None, numpy scalars as Python ones (JSON has neither)."""
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, np.integer | np.bool_):
        return value.item()
    if isinstance(value, float | np.floating):
        return float(value) if np.isfinite(value) else None
    return value


def _state(session: Session, pool: Pool) -> tuple:
    """(judgements, largest id, latest update) of the pool: changes with every verdict, second opinion or regrade."""
    row = session.execute(
        select(func.count(), func.max(Judgement.id), func.max(Judgement.updated_at))
        .join(PoolItem, PoolItem.id == Judgement.pool_item_id)
        .where(PoolItem.pool_id == pool.id)
    ).one()
    return (int(row[0]), row[1], row[2])


def _shot_pool(session: Session, principal: Principal, pool_id: int) -> Pool:
    """A shot pool of a campaign the caller organises."""
    pool = get_pool(session, principal, pool_id)
    if pool.kind == "moments":
        raise InvalidInput("a moment pool has no live view", [{"field": "pool_id", "message": "moment pool"}])
    return pool


def _build(session: Session, pool: Pool) -> _Entry:
    """The pool's board: what its runs rank at the pool's lines (read a block at a time, not kept), nothing judged
    yet."""
    campaign = session.get(Campaign, pool.campaign_id)
    assert campaign is not None
    run_ids = [int(r) for r in pool.params["run_ids"]]
    rows = session.execute(select(Run.id, Run.name, Team.name).join(Team, Team.id == Run.team_id).where(
        Run.id.in_(run_ids))).all()  # fmt: skip
    by_id = {run_id: (name, team) for run_id, name, team in rows}
    run_ids = [r for r in run_ids if r in by_id]
    blocks = StoredBlocks(session, run_ids, [by_id[r][0] for r in run_ids], campaign.max_results)
    items = session.execute(
        select(PoolItem.id, Topic.number, PoolItem.docno, PoolItem.stratum, PoolItem.sampled)
        .join(Topic, Topic.id == PoolItem.topic_id)
        .where(PoolItem.pool_id == pool.id)
        .order_by(PoolItem.id)
    ).all()
    columns = list(zip(*items, strict=True)) if items else [()] * 5
    board = LiveBoard(
        blocks,
        np.array(columns[1], dtype=str),
        np.array(columns[2], dtype=str),
        strata=np.array(columns[3], dtype=np.int64),
        sampled=np.array(columns[4], dtype=bool),
        teams=[by_id[r][1] for r in run_ids],
        depth=_pool_depth(pool, sorted(set(columns[1]))),
        random=judging_orders.is_random(judging_orders.order_of(pool)),
    )
    ids = np.array(columns[0], dtype=np.int64)
    return _Entry(
        board=board,
        items=ids,
        line_of_item={int(i): k for k, i in enumerate(ids.tolist())},
        fed=np.full(len(ids), UNJUDGED, dtype=np.int64),
        max_results=campaign.max_results,
    )


def _pool_depth(pool: Pool, topics: Sequence[str]) -> int | dict[str, int]:
    """The depth a run contributes within: the pool's deepest rank, or one per topic (per-topic depths)."""
    per_topic = topic_depths.depth_of_topics(pool, list(topics))
    return int(pool.params["strata"][-1][1]) if per_topic is None else per_topic


def _entry(session: Session, pool: Pool) -> _Entry:
    """The cached entry of the pool (built on first use)."""
    with _CACHE_LOCK:
        entry = _CACHE.get(pool.id)
        if entry is not None:
            _CACHE.move_to_end(pool.id)
            return entry
    entry = _build(session, pool)
    with _CACHE_LOCK:
        entry = _CACHE.setdefault(pool.id, entry)
        _CACHE.move_to_end(pool.id)
        while len(_CACHE) > MAX_POOLS:
            _CACHE.popitem(last=False)
    return entry


def _catch_up(session: Session, pool: Pool, entry: _Entry, state: tuple) -> None:
    """Feed the board the items whose final grade changed since the last state (entry.lock held)."""
    rounds: dict[int, dict[int, Judgement]] = {}
    first: dict[int, int] = {}
    for judgement in session.scalars(
        select(Judgement).join(PoolItem).where(PoolItem.pool_id == pool.id).order_by(Judgement.id)
    ):
        rounds.setdefault(judgement.pool_item_id, {})[judgement.round] = judgement
        first.setdefault(judgement.pool_item_id, judgement.id)
    board = entry.board
    for item in sorted(rounds, key=first.__getitem__):
        line = entry.line_of_item.get(item)
        grade = final_grade(rounds[item])
        if line is None or grade == UNJUDGED or entry.fed[line] == grade:
            continue
        board.record(board.lines.topics[line], board.lines.docs[line], grade)
        entry.fed[line] = grade
    entry.state = state
    entry.live = None
    entry.budgets = {}


def live_view(session: Session, principal: Principal, pool_id: int) -> dict:
    """Per topic saturation, R_hat with its interval and advice; leave-one-team-out over the qrels so far; the
    pool's stop/continue and what to judge next, the budget advisor's at its defaults (module docstring).

    Cached per pool and state (module docstring): the same object is returned until a judgement arrives or changes.
    """
    pool = _shot_pool(session, principal, pool_id)
    entry = _entry(session, pool)
    state = _state(session, pool)
    with entry.lock:
        if entry.state != state:
            _catch_up(session, pool, entry, state)
        if entry.live is None:
            board = entry.board
            budget = _budget(pool, entry, state, DEFAULTS)
            rule = ("topic", "advice", "reasons", "more_per_stratum")
            advice = {**budget["advice"], "topics": [{k: row[k] for k in rule} for row in budget["topics"]]}
            entry.live = {
                "pool_id": pool.id,
                "judging_order": judging_orders.order_of(pool),
                "judgements": state[0],
                "window": board.window,
                **board.snapshot(advice),
                "strata": [int(s) for s in board.strata],
            }
            entry.live = _finite(entry.live)
        return entry.live


def budget_advice(
    session: Session,
    principal: Principal,
    pool_id: int,
    *,
    target_width: float | None = None,
    relative_width: float = 0.2,
    alpha: float = 0.05,
    replicates: int = 200,
    seed: int = 0,
    target_tau: float = 0.9,
) -> dict:
    """Per topic: further judgements per stratum for the R_hat interval to reach the target width; per topic and
    run xinfAP with its sampling variance and interval, each run's mean with its interval; the expected tau_b and
    the share of the unjudged docs predicted to bring it to `target_tau`; and the one stop/continue with what to
    judge next (`advice`, the live view's at the defaults). Cached per pool, state and parameters."""
    if not 1 <= replicates <= MAX_REPLICATES:
        raise InvalidInput("replicates out of range", [{"field": "replicates", "message": f"1..{MAX_REPLICATES}"}])
    pool = _shot_pool(session, principal, pool_id)
    entry = _entry(session, pool)
    state = _state(session, pool)
    params = {"target_width": target_width, "relative_width": relative_width, "alpha": alpha,
              "replicates": replicates, "seed": seed, "target_tau": target_tau}  # fmt: skip
    with entry.lock:
        if entry.state != state:
            _catch_up(session, pool, entry, state)
        return _budget(pool, entry, state, params)


def _budget(pool: Pool, entry: _Entry, state: tuple, params: dict[str, Any]) -> dict:
    """The budget advice at `params`, computed once per state (entry.lock held)."""
    key = tuple(params[name] for name in DEFAULTS)
    if key not in entry.budgets:
        entry.budgets[key] = _finite(_advise(pool, entry, state, *key))
    return entry.budgets[key]


def _errors(entry: _Entry, topics: list[str], samples: list, seed: int, max_results: int) -> list[TopicError]:
    """Each topic's xinfAP error model, recomputed only where the topic's verdicts changed (entry.lock held)."""
    board = entry.board
    position = {topic: t for t, topic in enumerate(board.topics)}
    out = []
    for topic, sample in zip(topics, samples, strict=True):
        t = position[topic]
        version = int(board.topic_version[t])
        cached = entry.errors.get((t, seed))
        if cached is None or cached[0] != version:
            cached = (version, topic_error(sample, topic_rng(seed, topic), max_results))
            entry.errors[(t, seed)] = cached
        out.append(cached[1])
    return out


def _advise(
    pool: Pool,
    entry: _Entry,
    state: tuple,
    target_width: float | None,
    relative_width: float,
    alpha: float,
    replicates: int,
    seed: int,
    target_tau: float,
) -> dict:
    """The budget advice at the entry's current grades."""
    board = entry.board
    z = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    est = relevant_estimate(board.pooled, board.judged, board.relevant, z=z, level=1.0 - alpha)
    if target_width is None:
        target = relative_width * np.maximum(np.nan_to_num(est.estimate), 1.0)
    else:
        target = np.full(len(board.topics), float(target_width))
    extra = allocation(board.pooled, board.judged, board.relevant, target_width=target, z=z)
    grades = np.where(entry.fed >= 0, entry.fed, UNJUDGED)
    names, samples = board.samples(grades, np.asarray(board.strata, dtype=np.int64)[board.line_stratum])
    errors = _errors(entry, names, samples, seed, entry.max_results)
    variance = combine(names, list(board.runs), errors, replicates, seed, random=board.random)
    tau = tau_advice(variance, samples, target_tau) if len(variance.runs) > 1 and samples else None
    advice = board.advice(tau, target_width=target_width, relative_width=relative_width, z=z)
    topic_low, topic_high = variance.intervals(z)
    means, mean_low, mean_high = variance.mean_intervals(z)
    centre = variance.centre()
    prior = variance.prior if variance.prior is not None else np.zeros(len(variance.topics), dtype=bool)
    spread = variance.estimate_variance if variance.estimate_variance is not None else variance.variance
    topics = []
    for t, topic in enumerate(board.topics):
        row = advice["topics"][t]
        topics.append(
            {
                "topic": topic,
                "judged": int(board.judged[t].sum()),
                "estimated_relevant": None if np.isnan(est.estimate[t]) else float(est.estimate[t]),
                "estimate_biased": not board.random,
                "low": float(est.low[t]),
                "high": float(est.high[t]),
                "width": float(est.width[t]),
                "target_width": float(target[t]),
                "advice": row["advice"],
                "reasons": row["reasons"],
                "more_per_stratum": row["more_per_stratum"],
                "allocation_per_stratum": {str(s): int(extra[t, c]) for c, s in enumerate(board.strata)},
            }
        )
    if tau is not None:
        tau = {k: v for k, v in tau.items() if k != "more"}  # per topic and stratum: in `advice`
    return {
        "pool_id": pool.id,
        "judgements": state[0],
        "alpha": alpha,
        "z": z,
        "strata": [int(s) for s in board.strata],
        "judging_order": judging_orders.order_of(pool),
        "random_order": board.random,
        "widened": not board.random,
        "advice": {k: v for k, v in advice.items() if k != "topics"},
        "topics": topics,
        "xinfap": {
            "replicates": replicates,
            "seed": seed,
            "level": 1.0 - alpha,
            "topics": variance.topics,
            "prior_topics": [topic for topic, p in zip(variance.topics, prior.tolist(), strict=True) if p],
            "runs": [
                {
                    "run": run,
                    "mean": float(variance.point[i].mean()) if variance.topics else None,
                    "mean_variance": float(variance.mean_variance[i]),
                    "estimate": float(means[i]),
                    "ci_low": float(mean_low[i]),
                    "ci_high": float(mean_high[i]),
                    "level": 1.0 - alpha,
                    "biased": not board.random,
                    "per_topic": [
                        {
                            "topic": topic,
                            "xinfap": float(variance.point[i, t]),
                            "variance": float(variance.variance[i, t]),
                            "estimate": float(centre[i, t]),
                            "estimate_variance": float(spread[i, t]),
                            "ci_low": float(topic_low[i, t]),
                            "ci_high": float(topic_high[i, t]),
                            "prior": bool(prior[t]),
                        }
                        for t, topic in enumerate(variance.topics)
                    ],
                }
                for i, run in enumerate(variance.runs)
            ],
        },
        "tau": tau,
    }
