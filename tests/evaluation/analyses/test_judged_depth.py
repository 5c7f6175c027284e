"""Judged fraction per depth against a hand-worked case, a plain-Python loop, and TREC-COVID's depth-7 pool."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.analyses.groups import read_run_groups
from app.evaluation.analyses.judged_depth import judged_fraction
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.records import Qrels, RunTable
from tests.evaluation.analyses.brute import random_collection, trec_order


def _run(tag: str, topic: str, docs: list[str], scores: list[float]) -> RunTable:
    n = len(docs)
    return RunTable(
        tag=tag,
        topics=np.array([topic] * n),
        docs=np.array(docs),
        ranks=np.arange(1, n + 1),
        scores=np.array(scores, dtype=np.float64),
        lines=np.arange(1, n + 1),
    )


def test_hand_worked_single_list():
    # ranked d1, d2, d3, d4; judged: d1 (relevant), d3 (not relevant); d4 is pooled but unjudged (-1); d9 only in qrels
    run = _run("r", "1", ["d1", "d2", "d3", "d4"], [4, 3, 2, 1])
    qrels = Qrels(np.array(["1"] * 4), np.array(["d1", "d3", "d4", "d9"]), np.array([1, 0, -1, 1]))
    result = judged_fraction(qrels, [run], depths=[1, 2, 3, 4, 10])
    assert result.judged[:, 0].tolist() == [1, 1, 2, 2, 2]
    assert result.retrieved[:, 0].tolist() == [1, 2, 3, 4, 4]  # a list shorter than d counts what it has
    assert result.share[:, 0] == pytest.approx([1, 1 / 2, 2 / 3, 2 / 4, 2 / 4])
    assert result.overall == pytest.approx(result.share[:, 0])
    data = result.to_dict()
    assert data["depths"][2] == {
        "depth": 3,
        "overall": pytest.approx(2 / 3),
        "list_min": pytest.approx(2 / 3),
        "list_max": pytest.approx(2 / 3),
        "list_mean": pytest.approx(2 / 3),
        "share": {"r": pytest.approx(2 / 3)},
        "judged": {"r": 2},
        "retrieved": {"r": 3},
    }


def test_topics_outside_the_qrels_do_not_count_and_lists_are_per_topic():
    a = _run("a", "1", ["x", "y"], [2, 1])
    b = RunTable(
        tag="b",
        topics=np.array(["1", "2", "2"]),
        docs=np.array(["y", "x", "z"]),
        ranks=np.array([1, 1, 2]),
        scores=np.array([1.0, 2.0, 1.0]),
        lines=np.array([1, 2, 3]),
    )
    qrels = Qrels(np.array(["1", "1"]), np.array(["x", "y"]), np.array([0, 1]))  # topic 2 has no judgements
    result = judged_fraction(qrels, [a, b], depths=[1, 2])
    assert result.retrieved.tolist() == [[1, 1], [2, 1]]
    assert result.share.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert result.list_min.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("seed", [0, 3])
def test_equals_a_plain_python_loop(seed):
    runs, qrels = random_collection(seed, n_run=5, n_topic=4)
    grades = qrels.grades.copy()
    grades[::7] = -1  # some pooled, unjudged lines: not judged
    qrels = Qrels(qrels.topics, qrels.docs, grades)
    judged = {
        (t, d) for t, d, g in zip(qrels.topics.tolist(), qrels.docs.tolist(), grades.tolist(), strict=True) if g >= 0
    }
    topics = set(qrels.topics.tolist())
    depths = [1, 2, 5, 10, 25, 40]
    result = judged_fraction(qrels, runs, depths=depths, max_results=30)
    all_lists = []
    for r, run in enumerate(runs):
        order = {t: docs for t, docs in trec_order(run, 30).items() if t in topics}
        for i, d in enumerate(depths):
            top = {t: docs[:d] for t, docs in order.items()}
            hit = sum((t, doc) in judged for t, docs in top.items() for doc in docs)
            seen = sum(len(docs) for docs in top.values())
            assert result.judged[i, r] == hit and result.retrieved[i, r] == seen
            assert result.share[i, r] == pytest.approx(hit / seen)
        all_lists.append(order)
    for i, d in enumerate(depths):
        shares = [
            sum((t, doc) in judged for doc in docs[:d]) / len(docs[:d])
            for order in all_lists
            for t, docs in order.items()
            if docs
        ]
        assert result.list_min[i] == pytest.approx(min(shares))
        assert result.list_max[i] == pytest.approx(max(shares))
        assert result.list_mean[i] == pytest.approx(np.mean(shares))
        assert result.overall[i] == pytest.approx(result.judged[i].sum() / result.retrieved[i].sum())


def test_trec_covid_pooled_runs_are_judged_to_their_pool_depth(shared_data):
    base = shared_data / "trec-covid-round1"
    qrels = read_qrels(base / "qrels.txt")
    runs = [read_run(p) for p in sorted((base / "runs").glob("*.gz"))]
    groups = read_run_groups(base / "run_groups.tsv")
    pooled = np.array([bool(groups.pooled and groups.pooled[run.tag]) for run in runs])
    result = judged_fraction(qrels, runs, depths=[1, 5, 6, 7, 8, 100])
    # a depth-7 pool (depth_inference: every rank 1-6 of the pooled runs judged, 99.7 % of rank 7)
    assert result.share[:3, pooled].min() == 1.0
    assert 0.99 < result.share[3, pooled].min() < 1.0
    assert result.share[4, pooled].min() < 0.99
    assert (result.share[:, ~pooled] < 1.0).any()  # runs that built no pool are not fully judged
    # the share only falls with depth for these runs, and the overall share is the entries' ratio
    assert np.all(np.diff(result.overall) <= 1e-12)
    judged_top7 = 0
    entries_top7 = 0
    judged = {(t, d) for t, d in zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True)}
    qrels_topics = set(qrels.topics.tolist())
    for run in runs:
        for topic, docs in trec_order(run).items():
            if topic in qrels_topics:
                judged_top7 += sum((topic, d) in judged for d in docs[:7])
                entries_top7 += len(docs[:7])
    assert result.overall[3] == pytest.approx(judged_top7 / entries_top7, abs=1e-15)
