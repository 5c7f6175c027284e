"""Live judging statistics: counts and estimates per verdict against direct computation; the leave-one-team-out
view over the qrels so far against `leave_out` on the same qrels."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.analyses.budget import relevant_estimate
from app.evaluation.analyses.leave_out import leave_out
from app.evaluation.analyses.live import LiveBoard
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.pools.builders import Stratum, build_pool
from app.evaluation.records import Qrels, RunTable


def make_runs(seed: int, n_run: int = 6, n_topic: int = 3, n_doc: int = 40) -> list[RunTable]:
    """Random runs over a small collection."""
    rng = np.random.default_rng(seed)
    runs = []
    for r in range(n_run):
        topics, docs = [], []
        for t in range(n_topic):
            chosen = rng.choice(n_doc, size=25, replace=False)
            topics += [f"t{t}"] * 25
            docs += [f"d{d:02d}" for d in chosen]
        n = len(docs)
        runs.append(RunTable(f"run{r}", np.array(topics), np.array(docs), np.arange(n), -np.arange(n, dtype=float),
                             np.arange(1, n + 1)))  # fmt: skip
    return runs


@pytest.mark.parametrize("seed", range(3))
def test_live_view_matches_direct_computation(seed):
    runs = make_runs(seed)
    teams = ["a", "a", "b", "b", "c", "d"]
    pool = build_pool(runs, strata=(Stratum(1, 5, 1.0), Stratum(6, 15, 0.5)), seed=seed)
    board = LiveBoard(prepare_runs(runs), pool.topics, pool.docs, strata=pool.strata, teams=teams, depth=15)
    rng = np.random.default_rng(seed)
    truth = rng.random(len(pool.docs)) < 0.3
    sampled = np.flatnonzero(pool.sampled)
    order = rng.permutation(sampled)
    for step, line in enumerate(order[: len(order) * 2 // 3]):
        board.record(pool.topics[line], pool.docs[line], int(truth[line]))
        if step == 3:
            board.record(pool.topics[line], pool.docs[line], int(truth[line]))  # a regrade replaces, never adds
    judged = np.zeros(len(pool.docs), dtype=bool)
    judged[order[: len(order) * 2 // 3]] = True
    stats = board.topic_stats()
    for t, topic in enumerate(sorted(set(pool.topics.tolist()))):
        mine = pool.topics == topic
        cells = [(pool.strata == s) & mine for s in (1, 2)]
        n = [int(np.sum(judged & c)) for c in cells]
        r = [int(np.sum(judged & truth & c)) for c in cells]
        expected = relevant_estimate([[int(c.sum()) for c in cells]], [n], [r])
        assert stats[t]["judged"] == sum(n) and stats[t]["relevant"] == sum(r)
        assert stats[t]["estimated_relevant"] == pytest.approx(expected.estimate[0])
        assert stats[t]["high"] == pytest.approx(expected.high[0])
    # leave-one-team-out over the qrels so far = leave_out on those qrels with the same depth and teams
    so_far = Qrels(pool.topics[judged], pool.docs[judged], truth[judged].astype(np.int64))
    reference = leave_out(so_far, runs, units=teams, by="team", depth=15)
    live = board.reusability()
    assert live["max_drop"] == pytest.approx(reference.max_drop)
    assert [u["tau_b"] for u in live["teams"]] == pytest.approx(reference.unit_tau_b.tolist(), nan_ok=True)
    assert [r["map"] for r in live["runs"]] == pytest.approx(reference.original.tolist())
    assert board.reusability() is live  # cached until the next verdict


def test_saturation_advice_for_a_biased_order():
    runs = make_runs(7, n_topic=1)
    pool = build_pool(runs, depth=20, seed=1)
    board = LiveBoard(prepare_runs(runs), pool.topics, pool.docs, depth=20, random=False, window=10, min_rate=5)
    for i, doc in enumerate(pool.docs[:10].tolist()):
        board.record(pool.topics[0], doc, 1 if i == 0 else 0)
    stats = board.topic_stats()[0]
    assert stats["recent_relevant_per_100"] == pytest.approx(10.0) and stats["advice"] == "continue"
    assert stats["estimate_biased"]
    board.record(pool.topics[0], pool.docs[10], 0)  # window now holds 0 relevant of 10
    assert board.topic_stats()[0]["advice"] == "stop"
