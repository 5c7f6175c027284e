"""Adaptive judging orders live: after each first-round verdict, the topic's policy (move-to-front, MM-NS) is fed
the verdicts so far and the docs it asks for next are moved to the head of the topic's queue.

The judging queue itself does not change: it leases free tasks of a topic in `pool_items.judging_order`. A pool
built with an adaptive order has each topic's first planned docs at the head (`queues.planned_orders`); after
every verdict the plan (`JudgingOrder.plan`: the proposed doc, then the docs the policy would ask next if it were
relevant) gets positions below every earlier one. The seeded shuffle stays behind as the fallback, for example when
several assessors share a topic and the plan's docs are leased.

Each server process keeps the topic's policy in memory with the id of the last judgement it was fed, and catches
up from the database on every verdict (verdicts of other processes included), so a restart or a second process
rebuilds the same policy from the verdicts in the order they were given (`orders.replay`). A verdict on an
adaptive pool takes a transaction-scoped advisory lock on its topic before it is written: judgement ids of a topic
are then given in commit order, which makes "fed up to id N" exact. A rolled-back transaction drops the policies
it touched, so they are rebuilt from what was committed. Changing an earlier verdict does not move a live policy,
which saw the first one (a policy rebuilt later reads the verdict as it stands then); `unsure` counts as not
relevant.

A pool with the `lara` order gives its policy the model's probabilities of the topic's items (`model_probabilities`:
the verified model assessor's, `params["verification"]["model_assessor_id"]`, when the pool names one, else every
model assessor's averaged), read again at each verdict: probabilities that arrived since (a model judging alongside
people) recalibrate the cached policy into the one a rebuild would make.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy import event, text
from sqlalchemy.orm import Session

from app.evaluation.pools.builders import PoolTable
from app.evaluation.pools.orders import ORDERS, JudgingOrder, LlmAssisted, make_order
from app.evaluation.pools.queues import joined_lists, planned_orders, queue_position, topic_lists
from app.services.run_blocks import DEFAULT_MEMORY_MB, POOL_BYTES_PER_RUN_LINE, counted_runs, reduced_blocks
from app.storage.models import Pool

AHEAD = 4  # docs of each plan put at the head of a topic's queue: the page leases the shown item and one ahead
RANDOM_ORDERS = frozenset({"shuffled"})
_TOUCHED = "judging_orders_touched"


def order_of(pool: Pool) -> str:
    """The pool's judging order (pools built before orders existed are shuffled)."""
    return str((pool.params or {}).get("order", "shuffled"))


def is_random(order: str | None) -> bool:
    """Whether every prefix of the order is a random sample of the pool (estimates from a prefix are unbiased)."""
    return order is None or order in RANDOM_ORDERS


def check_order(order: str) -> str:
    """The order's name if known (ValueError naming the known ones otherwise)."""
    if order not in ORDERS:
        raise ValueError(f"unknown judging order {order!r}; known: {', '.join(ORDERS)}")
    return order


def initial_orders(
    runs: list[Any], table: PoolTable, order: str, seed: int, depth: int
) -> tuple[np.ndarray, dict[str, list[list[str]]]]:
    """The pool's judging_order column with each topic's first plan at the head (the shuffle when `order` is), and
    {topic number: the runs' lists} the plans come from ({} for the shuffle)."""
    if is_random(order):
        return np.asarray(table.judging_order), {}
    sampled = np.asarray(table.sampled, dtype=bool)
    lists = topic_lists(runs, np.asarray(table.topics)[sampled], np.asarray(table.docs)[sampled], depth)
    return planned_orders(table, lists, order, seed, AHEAD), lists


@dataclass
class _TopicPolicy:
    """A topic's policy and the last judgement id it was fed."""

    policy: JudgingOrder
    last_id: int = 0
    probabilities: dict[str, float] | None = None  # the model's, as the policy has them (`lara` only)


_lock = threading.Lock()
_policies: OrderedDict[tuple[int, int], _TopicPolicy] = OrderedDict()
_lists: OrderedDict[int, dict[int, list[list[str]]]] = OrderedDict()
_topic_locks: dict[tuple[int, int], threading.Lock] = {}
MAX_POLICIES = 4096
MAX_POOLS = 8


def lock_topic(session: Session, pool_id: int, topic_id: int) -> None:
    """Take the topic's advisory lock until the transaction ends (verdicts of a topic then commit in id order)."""
    session.execute(text("SELECT pg_advisory_xact_lock(:pool, :topic)"), {"pool": pool_id, "topic": topic_id})


_SINCE = text(
    """
    SELECT j.id, i.docno, j.verdict = 'relevant' AS relevant
    FROM judgements j JOIN pool_items i ON i.id = j.pool_item_id
    WHERE i.pool_id = :pool AND i.topic_id = :topic AND j.round = 1 AND j.id > :after
    ORDER BY j.id
    """
)
_MODEL_PROBABILITIES = text(
    """
    SELECT i.docno, avg(v.probability) AS probability
    FROM model_verdicts v
    JOIN pool_items i ON i.id = v.pool_item_id
    JOIN assessors a ON a.id = v.assessor_id
    WHERE i.pool_id = :pool AND i.topic_id = :topic AND a.kind = 'model' AND v.probability IS NOT NULL
      AND (CAST(:assessor AS integer) IS NULL OR v.assessor_id = :assessor)
    GROUP BY i.docno
    """
)
# The plan goes below every position the topic's queue holds: at `queue_position(judged)` as a rule, lower when a plan
# was made between verdicts (a `lara` topic re-planned when its model verdicts arrived before any person's).
_MOVE_TO_HEAD = text(
    """
    UPDATE pool_items SET judging_order = least(
        :base,
        (SELECT min(q.judging_order) FROM pool_items q WHERE q.pool_id = :pool AND q.topic_id = :topic AND q.sampled)
        - :ahead
    ) + array_position(CAST(:docs AS text[]), docno) - 1
    WHERE pool_id = :pool AND topic_id = :topic AND docno = ANY(CAST(:docs AS text[]))
    """
)
# The `lara` pools' topics of newly model-judged items that no person has judged in yet.
_UNSTARTED_LARA_TOPICS = text(
    """
    SELECT DISTINCT i.pool_id, i.topic_id, p.seed
    FROM pool_items i JOIN pools p ON p.id = i.pool_id
    WHERE i.id = ANY(CAST(:items AS bigint[])) AND p.params->>'order' = 'lara'
      AND NOT EXISTS (
        SELECT 1 FROM judgements j JOIN pool_items q ON q.id = j.pool_item_id
        WHERE q.pool_id = i.pool_id AND q.topic_id = i.topic_id AND j.round = 1
      )
    ORDER BY i.pool_id, i.topic_id
    """
)


def advance(session: Session, pool_id: int, order: str, seed: int, topic_id: int) -> list[str]:
    """Feed the topic's policy the verdicts it has not seen and put its plan at the head of the queue; the plan."""
    key = (pool_id, topic_id)
    with _lock:
        topic_lock = _topic_locks.setdefault(key, threading.Lock())
    with topic_lock:
        entry = _policies.get(key)
        probabilities = model_probabilities(session, pool_id, topic_id) if order == "lara" else None
        if entry is None:
            lists = _pool_lists(session, pool_id).get(topic_id, [])
            number = _topic_number(session, topic_id)
            entry = _TopicPolicy(make_order(order, lists, seed=seed, topic=number, probabilities=probabilities))
            entry.probabilities = probabilities
        elif probabilities != entry.probabilities and isinstance(entry.policy, LlmAssisted):
            entry.policy.set_probabilities(probabilities)
            entry.probabilities = probabilities
        for judgement_id, docno, relevant in session.execute(
            _SINCE, {"pool": pool_id, "topic": topic_id, "after": entry.last_id}
        ):
            entry.policy.next()
            entry.policy.record(docno, bool(relevant))
            entry.last_id = judgement_id
        plan = entry.policy.plan(AHEAD)
        if plan:
            base = queue_position(entry.policy.judged, 0, AHEAD)
            params = {"base": base, "ahead": AHEAD, "docs": plan, "pool": pool_id, "topic": topic_id}
            session.execute(_MOVE_TO_HEAD, params)
        with _lock:
            _policies[key] = entry
            _policies.move_to_end(key)
            while len(_policies) > MAX_POLICIES:
                _policies.popitem(last=False)
        session.info.setdefault(_TOUCHED, set()).add(key)
    return plan


def after_model_verdicts(session: Session, pool_item_ids: list[int]) -> None:
    """Re-plan the `lara` topics of newly model-judged items before anyone judges in them: the pool was built before
    the model's probabilities existed, so its first plan was the seeded order's; now the most uncertain items lead."""
    for pool_id, topic_id, seed in session.execute(_UNSTARTED_LARA_TOPICS, {"items": pool_item_ids}).all():
        lock_topic(session, pool_id, topic_id)
        advance(session, pool_id, "lara", seed, topic_id)


def model_probabilities(session: Session, pool_id: int, topic_id: int) -> dict[str, float]:
    """{docno: the model's probability of relevance} for the topic's items: the pool's verified model assessor's if
    `params["verification"]["model_assessor_id"]` is set, else the mean over every model assessor's verdicts."""
    pool = session.get(Pool, pool_id)
    verification = ((pool.params if pool is not None else None) or {}).get("verification") or {}
    assessor = verification.get("model_assessor_id")
    rows = session.execute(
        _MODEL_PROBABILITIES,
        {"pool": pool_id, "topic": topic_id, "assessor": None if assessor is None else int(assessor)},
    )
    return {str(docno): float(probability) for docno, probability in rows}


def remember_lists(pool_id: int, lists_by_topic: dict[int, list[list[str]]]) -> None:
    """Keep a new pool's per-topic lists (its builder has them at hand)."""
    with _lock:
        _lists[pool_id] = lists_by_topic
        while len(_lists) > MAX_POOLS:
            _lists.popitem(last=False)


def _pool_lists(session: Session, pool_id: int) -> dict[int, list[list[str]]]:
    """{topic id: the pooled runs' ranked lists over the topic's sampled docs}, loaded once per process and pool
    (the runs read in blocks of the default job memory budget)."""
    with _lock:
        cached = _lists.get(pool_id)
    if cached is not None:
        return cached
    pool = session.get(Pool, pool_id)
    assert pool is not None
    runs = counted_runs(session, [int(i) for i in pool.params["run_ids"]])
    rows = session.execute(
        text("SELECT topic_id, docno FROM pool_items WHERE pool_id = :pool AND sampled"), {"pool": pool_id}
    ).all()
    topic_ids = np.array([str(r.topic_id) for r in rows], dtype=object)
    numbers = _numbers(session, {r.topic_id for r in rows})
    topics = np.array([numbers[r.topic_id] for r in rows], dtype=str)
    docs = np.array([r.docno for r in rows], dtype=str)
    depth = int(pool.params["strata"][-1][1])
    by_number = joined_lists(  # the runs read a block at a time, as the pool build read them
        reduced_blocks(
            session,
            runs,
            DEFAULT_MEMORY_MB,
            lambda _, tables: topic_lists(tables, topics, docs, depth),
            POOL_BYTES_PER_RUN_LINE,
        )
    )
    lists = {int(t): by_number[numbers[int(t)]] for t in dict.fromkeys(topic_ids.tolist())}
    remember_lists(pool_id, lists)
    return lists


def _numbers(session: Session, topic_ids: set[int]) -> dict[int, str]:
    """{topic id: topic number}."""
    rows = session.execute(
        text("SELECT id, number FROM topics WHERE id = ANY(CAST(:ids AS bigint[]))"), {"ids": sorted(topic_ids)}
    )
    return {int(i): str(n) for i, n in rows}


def _topic_number(session: Session, topic_id: int) -> str:
    """A topic's number (the policy's seeded tie order depends on it, as the pool builder's shuffle does)."""
    return _numbers(session, {topic_id}).get(topic_id, "")


@event.listens_for(Session, "after_commit")
def _committed(session: Session) -> None:
    """The policies fed in the transaction hold committed verdicts only."""
    session.info.pop(_TOUCHED, None)


@event.listens_for(Session, "after_rollback")
def _rolled_back(session: Session) -> None:
    """Forget the policies fed in a rolled-back transaction: they are rebuilt from committed verdicts."""
    touched = session.info.pop(_TOUCHED, None)
    if touched:
        with _lock:
            for key in touched:
                _policies.pop(key, None)
