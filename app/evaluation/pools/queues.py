"""Per-topic judging queues for a built pool: the pooled runs' ranked lists over its sampled docs, and the first
docs each topic's judging order puts at the head of the queue."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from app.evaluation.pools.builders import PoolTable, RankedRun, rank_rows
from app.evaluation.pools.orders import make_order

_CHUNK = 65_536  # rows turned into Python objects at a time


def topic_lists(
    runs: Sequence[RankedRun], topics: np.ndarray, docs: np.ndarray, depth: int
) -> dict[str, list[list[str]]]:
    """{topic: each run's top `depth` (`ordering.ranked_order`) restricted to the given (topic, doc) pairs}: the
    part of its ranking that the run itself put in the pool; every run has a (maybe empty) list for every topic.

    Every list names a doc by one shared string per (topic, doc) pair, so the lists of many runs cost a pointer an
    entry; the runs' rows become Python objects `_CHUNK` at a time."""
    wanted = {
        (str(t), str(d)): str(d) for t, d in zip(np.asarray(topics).tolist(), np.asarray(docs).tolist(), strict=True)
    }
    by_topic: dict[str, list[list[str]]] = {
        str(t): [[] for _ in runs] for t in dict.fromkeys(np.asarray(topics).tolist())
    }
    if not runs or not wanted:
        return by_topic
    run_index, run_topics, run_docs, ranks = rank_rows(runs)
    order = np.lexsort((ranks, run_index))
    order = order[ranks[order] <= depth]
    for lo in range(0, len(order), _CHUNK):
        rows = order[lo : lo + _CHUNK]
        for r, t, d in zip(run_index[rows].tolist(), run_topics[rows].tolist(), run_docs[rows].tolist(), strict=True):
            doc = wanted.get((t, d))
            if doc is not None:
                by_topic[t][r].append(doc)
    return by_topic


def joined_lists(parts: Iterable[dict[str, list[list[str]]]]) -> dict[str, list[list[str]]]:
    """The `topic_lists` of consecutive blocks of runs as those of all the runs: each topic's run lists in order."""
    lists: dict[str, list[list[str]]] = {}
    for part in parts:
        for topic, per_run in part.items():
            lists.setdefault(topic, []).extend(per_run)
    return lists


def planned_orders(
    table: PoolTable, lists: dict[str, list[list[str]]], order: str, seed: int, ahead: int
) -> np.ndarray:
    """The pool's `judging_order` with each topic's first `ahead` docs of `order` put at the head of its queue
    (`queue_position` with nothing judged yet), ahead of the seeded shuffle (0, 1, ...) that stays behind them as a
    fallback; unsampled docs keep -1."""
    out = np.asarray(table.judging_order, dtype=np.int64).copy()
    if order == "shuffled":
        return out
    sampled = np.asarray(table.sampled, dtype=bool)
    topics = np.asarray(table.topics).astype(str)
    docs = np.asarray(table.docs).astype(str)
    for topic, ranked in lists.items():
        in_topic = np.flatnonzero((topics == topic) & sampled)
        position = {d: int(i) for d, i in zip(docs[in_topic].tolist(), in_topic.tolist(), strict=True)}
        plan = make_order(order, ranked, seed=seed, topic=topic).plan(ahead)  # as the service rebuilds it
        for k, doc in enumerate(plan):
            out[position[doc]] = queue_position(0, k, ahead)
    return out


def queue_position(judged: int, k: int, ahead: int) -> int:
    """The `judging_order` of the k-th doc (0-based) of a plan of `ahead` docs made after `judged` verdicts: below
    every earlier plan's positions, the shuffle's (>= 0) and the unsampled marker (-1)."""
    return -(judged + 1) * ahead - 1 + k
