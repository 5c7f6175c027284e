"""Live judging statistics: counts and estimates per verdict against direct computation; the leave-one-team-out
view over the qrels so far against `leave_out` on the same qrels; stop/continue is the budget advisor's rule."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.evaluation.analyses.budget import judging_advice, relevant_estimate, topic_samples, variance_of_samples
from app.evaluation.analyses.leave_out import leave_out
from app.evaluation.analyses.lines import index_lines
from app.evaluation.analyses.live import LiveBoard
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.pools.builders import Stratum, build_pool
from app.evaluation.records import Qrels, RunTable
from tests.evaluation.analyses.brute import Blocks


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


def test_the_live_advice_is_the_budget_rule():
    runs = make_runs(3)
    pool = build_pool(runs, strata=(Stratum(1, 5, 1.0), Stratum(6, 15, 0.5)), seed=2)
    board = LiveBoard(prepare_runs(runs), pool.topics, pool.docs, strata=pool.strata, sampled=pool.sampled, depth=15)
    first = pool.topics[0]
    mine = np.flatnonzero((pool.topics == first) & pool.sampled)
    for line in mine:  # one topic judged in full (its sample), the others not at all
        board.record(pool.topics[line], pool.docs[line], int(line % 4 == 0))
    topics = list(board.topics)
    tau = {"target_tau": 0.9, "expected_tau": 0.5, "more": np.ones((len(topics), 2), dtype=np.int64)}
    expected = judging_advice(topics, [1, 2], board.pooled, board.judged, board.relevant, tau=tau,
                              queued=board.queued())  # fmt: skip
    assert board.advice(tau) == expected
    snapshot = board.snapshot(expected)
    assert snapshot["advice"] == {k: v for k, v in expected.items() if k != "topics"}
    assert snapshot["advice"]["advice"] == "continue" and snapshot["advice"]["unestimated_topics"] == topics[1:]
    for row, rule in zip(snapshot["topics"], expected["topics"], strict=True):
        assert row["advice"] == rule["advice"] and row["reasons"] == rule["reasons"]
        assert row["more_per_stratum"] == [rule["more_per_stratum"]["1"], rule["more_per_stratum"]["2"]]
    # the first topic's sample is judged: nothing of it is queued, the unsampled half of stratum 2 is not judged
    t = topics.index(first)
    assert snapshot["topics"][t]["queued_per_stratum"] == [0, 0] and board.judged[t, 1] < board.pooled[t, 1]
    other = topics.index(topics[1] if t == 0 else topics[0])
    assert board.queued()[other].tolist() == [
        float(np.sum((pool.topics == topics[other]) & pool.sampled & (pool.strata == s))) for s in (1, 2)
    ]
    # without the ranking's tau the board applies the same rule to the counts alone
    assert board.topic_stats()[other]["reasons"][0] == "unestimated"


@pytest.mark.parametrize("size", [1, 4])
def test_a_board_over_blocks_of_runs_is_the_board_of_one_block(size):
    """The board keeps each run's entries at the pool's lines, block after block: the same numbers, bit for bit, and
    the jackknife's ranked lists rebuilt from them are those `topic_samples` reads off the prepared runs."""
    runs = make_runs(11, n_run=7)
    teams = ["a", "a", "b", "b", "c", "d", "d"]
    pool = build_pool(runs, strata=(Stratum(1, 5, 1.0), Stratum(6, 15, 0.5)), seed=3)
    depths = {"t0": 15, "t1": 9, "t2": 12}
    whole = LiveBoard(prepare_runs(runs), pool.topics, pool.docs, strata=pool.strata, teams=teams, depth=depths)
    parts = LiveBoard(Blocks(runs, size), pool.topics, pool.docs, strata=pool.strata, teams=teams, depth=depths)
    assert parts.runs == whole.runs and np.array_equal(parts.owner, whole.owner) and (whole.owner >= 0).any()
    truth = np.random.default_rng(5).random(len(pool.docs)) < 0.4
    for line in np.flatnonzero(pool.sampled)[::2]:
        for board in (whole, parts):
            board.record(pool.topics[line], pool.docs[line], int(truth[line]))
    assert json.dumps(parts.snapshot(), sort_keys=True) == json.dumps(whole.snapshot(), sort_keys=True)
    grades = np.where(np.arange(len(pool.docs)) % 3 == 0, -1, truth.astype(np.int64))
    names, samples = parts.samples(grades, np.asarray(pool.strata, dtype=np.int64))
    stratified = Qrels(pool.topics, pool.docs, grades, strata=np.asarray(pool.strata, dtype=np.int64))
    expected_names, expected = topic_samples(index_lines(prepare_runs(runs), stratified))
    assert names == expected_names
    for mine, theirs in zip(samples, expected, strict=True):
        width = mine.ranked.shape[1]  # the board's lists end at its deepest pooled entry
        assert np.array_equal(mine.ranked, theirs.ranked[:, :width]) and (theirs.ranked[:, width:] < 0).all()
        for field in ("stratum", "judged", "relevant", "pooled_total"):
            assert np.array_equal(getattr(mine, field), getattr(theirs, field)), field
    jackknife = variance_of_samples(names, parts.runs, samples, replicates=1).variance
    reference = variance_of_samples(expected_names, whole.runs, expected, replicates=1).variance
    assert jackknife.tobytes() == reference.tobytes() and jackknife.any()
