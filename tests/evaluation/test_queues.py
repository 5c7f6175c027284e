"""Judging queues of a built pool: each run's own pooled part of its ranking, and the first plan at the head."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.pools.builders import build_pool
from app.evaluation.pools.orders import ORDERS, make_order
from app.evaluation.pools.queues import planned_orders, queue_position, topic_lists
from app.evaluation.records import RunTable


def _run(tag: str, rows: list[tuple[str, str, float]]) -> RunTable:
    """A run table from (topic, doc, score) rows."""
    n = len(rows)
    return RunTable(
        tag=tag,
        topics=np.array([r[0] for r in rows]),
        docs=np.array([r[1] for r in rows]),
        ranks=np.arange(1, n + 1),
        scores=np.array([r[2] for r in rows], dtype=np.float64),
        lines=np.arange(1, n + 1),
    )


A = _run("a", [("t", "x", 3.0), ("t", "y", 2.0), ("t", "z", 1.0), ("u", "p", 1.0)])
B = _run("b", [("t", "z", 5.0), ("t", "w", 4.0), ("t", "x", 0.5)])  # x is B's third: outside B's top 2


def test_a_runs_list_is_its_own_top_depth_within_the_given_docs():
    lists = topic_lists([A, B], np.array(["t", "t", "t", "t", "u"]), np.array(["x", "y", "z", "w", "p"]), depth=2)
    assert lists == {"t": [["x", "y"], ["z", "w"]], "u": [["p"], []]}
    lists = topic_lists([A, B], np.array(["t", "t"]), np.array(["x", "z"]), depth=3)  # only x and z sampled
    assert lists["t"] == [["x", "z"], ["z", "x"]]
    assert lists["t"][0][0] is lists["t"][1][1] and lists["t"][0][1] is lists["t"][1][0]  # one string a pair


def test_lists_longer_than_a_chunk_keep_every_runs_ranking(monkeypatch):
    monkeypatch.setattr("app.evaluation.pools.queues._CHUNK", 2)  # rows become Python objects two at a time
    lists = topic_lists([A, B], np.array(["t", "t", "t", "t", "u"]), np.array(["x", "y", "z", "w", "p"]), depth=3)
    assert lists == {"t": [["x", "y", "z"], ["z", "w", "x"]], "u": [["p"], []]}


@pytest.mark.parametrize("order", [o for o in ORDERS if o != "shuffled"])
def test_the_first_plan_heads_each_topic_and_the_shuffle_stays_behind(order):
    table = build_pool([A, B], depth=2, seed=4)
    lists = topic_lists([A, B], table.topics, table.docs, depth=2)
    planned = planned_orders(table, lists, order, seed=4, ahead=2)
    plan = make_order(order, lists["t"], seed=4, topic="t").plan(2)
    assert len(plan) == 2
    in_t = table.topics == "t"
    by_doc = dict(zip(table.docs[in_t].tolist(), planned[in_t].tolist(), strict=True))
    assert [by_doc[d] for d in plan] == [queue_position(0, 0, 2), queue_position(0, 1, 2)] == [-3, -2]
    rest = [d for d in by_doc if d not in plan]
    assert sorted(by_doc[d] for d in rest) == sorted(table.judging_order[in_t][np.isin(table.docs[in_t], rest)])
    assert (planned_orders(table, lists, "shuffled", seed=4, ahead=2) == table.judging_order).all()


def test_later_plans_go_below_every_earlier_position():
    for n in range(6):
        later = max(queue_position(n + 1, k, 4) for k in range(4))
        assert later < min(queue_position(n, k, 4) for k in range(4))
        assert max(queue_position(n, k, 4) for k in range(4)) < -1  # below the unsampled marker and the shuffle
