"""Pools deeper for some topics than for others: each topic's depth inferred (or given), leave-out and pool depth
using it, and the qrels lines outside every pooled run's top counted; checked against brute force on hand-made
qrels whose depth differs by topic."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from app.evaluation.analyses import index_lines, leave_out, pool_depth, pool_depths
from app.evaluation.analyses.lines import run_mask
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.records import Qrels, RunTable
from tests.evaluation.analyses.brute import mean_over_topics, random_collection, trec_order

POOLED = ["run0", "run1", "run3", "run4"]
DESIGN = {"t0": 2, "t1": 5, "t2": 9, "t3": 3}  # the depth each topic was pooled to


def _qrels(lines: dict[tuple[str, str], int]) -> Qrels:
    keys = sorted(lines)
    return Qrels(
        topics=np.array([t for t, _ in keys]),
        docs=np.array([d for _, d in keys]),
        grades=np.array([lines[k] for k in keys], dtype=np.int64),
    )


@pytest.fixture()
def per_topic_pool():
    """Runs, and qrels of a pool of the POOLED runs cut at DESIGN's depth per topic, plus residual judgements: a doc
    only an unpooled run ranks (at 12) and a doc no run retrieved, per topic."""
    runs, _ = random_collection(3, n_run=6, n_topic=4, n_doc=60, length=30)
    order = {run.tag: trec_order(run) for run in runs}
    rng = np.random.default_rng(3)
    lines: dict[tuple[str, str], int] = {}
    for name in POOLED:
        for topic, docs in order[name].items():
            for doc in docs[: DESIGN[topic]]:
                lines[(topic, doc)] = int(rng.integers(0, 3))
    residual = set()
    for topic in DESIGN:
        pooled_docs = {d for n in POOLED for d in order[n].get(topic, [])[: DESIGN[topic]]}
        unpooled = next(order[n][topic] for n in ("run2", "run5") if topic in order[n])
        deep = next(d for d in unpooled[11:] if d not in pooled_docs)
        for doc in (deep, "nobody"):
            lines[(topic, doc)] = 1
            residual.add((topic, doc))
    return runs, order, _qrels(lines), residual


def _strict_depths(order, qrels: Qrels) -> dict[str, int]:
    """Brute force: per topic the largest d such that every pooled run's top d for it is judged."""
    judged = set(zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True))
    out = {}
    for topic in DESIGN:
        lists = [order[n].get(topic, []) for n in POOLED]
        d = 0
        while any(len(x) > d for x in lists) and all((topic, x[d]) in judged for x in lists if len(x) > d):
            d += 1
        out[topic] = d
    return out


def _contributors(order, depth: dict[str, int], units: dict[str, str]) -> dict[tuple[str, str], set[str]]:
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for name in POOLED:
        for topic, docs in order[name].items():
            for doc in docs[: depth.get(topic, 0)]:
                found[(topic, doc)].add(units[name])
    return found


def test_each_topic_has_its_own_depth(per_topic_pool):
    runs, order, qrels, residual = per_topic_pool
    assert _strict_depths(order, qrels) == DESIGN  # the hand-made pool is what it says
    prepared = prepare_runs(runs)
    pool = pool_depths(index_lines(prepared, qrels), run_mask(prepared.names, POOLED))
    assert dict(zip(pool.topics, pool.depths.tolist(), strict=True)) == DESIGN
    assert pool.sources == ["inferred"] * 4 and pool.source == "inferred"
    assert pool.uniform is None and pool.describe() == "2-9 per topic"
    facts = pool.inference()
    assert facts["share_at_depth"] == 1.0 and facts["gaps"] == 0 and facts["unpooled"] == []
    assert facts["share_after"] < 1.0
    data = pool.to_dict()
    assert data["depth"] is None and (data["min"], data["max"]) == (2, 9)
    assert data["topics"] == [{"topic": t, "depth": d, "source": "inferred"} for t, d in DESIGN.items()]


def test_leave_out_counts_each_topic_to_its_own_depth(per_topic_pool):
    runs, order, qrels, residual = per_topic_pool
    units = {r.tag: r.tag for r in runs}
    result = leave_out(qrels, runs, pooled=POOLED)
    assert result.depth is None and result.depth_source == "inferred"
    contributors = _contributors(order, DESIGN, units)
    keys = list(zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True))
    for u, unit in enumerate(result.units):
        keep = np.array([contributors.get(k, set()) != {unit} for k in keys])
        assert result.removed_lines[u] == (~keep).sum()
        assert result.unit_scores[u] == pytest.approx(mean_over_topics(qrels, runs, keep, "AP"), abs=1e-12)
    assert result.residual_lines == len(residual) == 8
    grade = dict(zip(keys, qrels.grades.tolist(), strict=True))
    assert result.residual_relevant == sum(grade[k] > 0 for k in residual)
    data = result.to_dict()
    assert data["residual_lines"] == 8 and data["pool_depths"]["max"] == 9 and data["depth_inference"]["gaps"] == 0
    # the same depths given per topic: the same result, said to be given
    given = leave_out(qrels, runs, pooled=POOLED, depth=DESIGN)
    assert given.depth_source == "given" and given.unit_scores.tolist() == result.unit_scores.tolist()
    # a file giving only some topics: those given, the rest inferred
    partly = leave_out(qrels, runs, pooled=POOLED, depth={"t2": 9})
    assert partly.pool.sources == ["inferred", "inferred", "given", "inferred"]
    assert partly.depth_source == "given, inferred" and partly.removed_lines.tolist() == result.removed_lines.tolist()
    # one depth for every topic (the deepest) counts contributions no pool made: other lines go
    uniform = leave_out(qrels, runs, pooled=POOLED, depth=9)
    deeper = _contributors(order, dict.fromkeys(DESIGN, 9), units)
    for u, unit in enumerate(uniform.units):
        assert uniform.removed_lines[u] == sum(deeper.get(k, set()) == {unit} for k in keys)
    assert uniform.removed_lines.tolist() != result.removed_lines.tolist()


@pytest.mark.parametrize("outside", ["drop", "keep"])
def test_pool_depth_cuts_each_topic_at_its_own_depth(per_topic_pool, outside):
    runs, order, qrels, residual = per_topic_pool
    result = pool_depth(qrels, runs, pooled=POOLED, max_depth=12, outside=outside, pool=DESIGN)
    best: dict[tuple[str, str], int] = {}
    for name in POOLED:
        for topic, docs in order[name].items():
            for rank, doc in enumerate(docs[: DESIGN[topic]], start=1):
                best[(topic, doc)] = min(best.get((topic, doc), rank), rank)
    keys = list(zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True))
    outside_rank = 0 if outside == "keep" else 10**9
    for i, d in enumerate(result.depths.tolist()):
        keep = np.array([best.get(k, outside_rank) <= d for k in keys])
        assert result.lines[i] == keep.sum()
        assert result.scores[i] == pytest.approx(mean_over_topics(qrels, runs, keep, "AP"), abs=1e-12)
    assert result.residual_lines == len(residual)
    assert result.lines[-1] == len(qrels) - (len(residual) if outside == "drop" else 0)
    assert result.lines[8] == result.lines[-1]  # from the deepest topic's depth (9) on, nothing more enters
    assert result.to_dict()["pool_depths"]["topics"][2] == {"topic": "t2", "depth": 9, "source": "given"}


def _one_topic_runs(n_run: int, length: int = 12) -> list[RunTable]:
    """n_run runs of one topic with disjoint documents (run i ranks r{i}d0, r{i}d1, ...)."""
    tables = []
    for i in range(n_run):
        docs = np.array([f"r{i}d{k}" for k in range(length)])
        tables.append(
            RunTable(
                tag=f"r{i}",
                topics=np.array(["1"] * length),
                docs=docs,
                ranks=np.arange(1, length + 1),
                scores=np.arange(length, 0, -1, dtype=np.float64),
                lines=np.arange(1, length + 1),
            )
        )
    return tables


@pytest.mark.parametrize(
    ("n_run", "missing", "expected"),
    [
        (20, [(0, 2)], 5),  # one unjudged entry of 20 (95% judged): a slip, the pool is still 5 deep
        (20, [(0, 2), (1, 2)], 2),  # two of 20 (90%): the pool ends before rank 3
        (10, [(0, 2)], 2),  # with fewer than 20 lists every entry of a rank must be judged
        (20, [(0, 2), (1, 3)], 5),  # slips at different ranks each stay within 5%
    ],
)
def test_a_judging_slip_does_not_end_a_topics_pool(n_run, missing, expected):
    """Qrels = every run's top 5 but the entries (run, position) in `missing`."""
    runs = _one_topic_runs(n_run)
    lines = {("1", f"r{i}d{k}"): 1 for i in range(n_run) for k in range(5) if (i, k) not in missing}
    prepared = prepare_runs(runs)
    pool = pool_depths(index_lines(prepared, _qrels(lines)), run_mask(prepared.names, None))
    assert pool.depths.tolist() == [expected]
    facts = pool.inference()
    assert facts["gaps"] == sum(k < expected for _, k in missing)


def test_a_topic_whose_pooled_first_results_are_unjudged_has_depth_0_and_only_residual_lines():
    runs = _one_topic_runs(3) + [
        RunTable(
            "x", np.array(["2", "2"]), np.array(["a", "b"]), np.arange(1, 3), np.array([2.0, 1.0]), np.arange(1, 3)
        )
    ]
    lines = {("1", f"r{i}d{k}"): 1 for i in range(3) for k in range(4)}
    lines |= {("2", "zz"): 1, ("2", "b"): 0}  # topic 2: judged from elsewhere (x's first result is not judged)
    qrels = _qrels(lines)
    result = leave_out(qrels, runs, pooled=["r0", "r1", "r2", "x"])
    assert dict(zip(result.pool.topics, result.pool.depths.tolist(), strict=True)) == {"1": 4, "2": 0}
    assert result.to_dict()["depth_inference"]["unpooled"] == ["2"]
    assert result.residual_lines == 2 and result.removed_lines.tolist() == [4, 4, 4, 0]


def test_no_topic_to_infer_and_bad_depths_are_errors():
    runs = _one_topic_runs(3)
    qrels = _qrels({("1", "elsewhere"): 1})
    prepared = prepare_runs(runs)
    index, pooled = index_lines(prepared, qrels), run_mask(prepared.names, None)
    with pytest.raises(ValueError, match="cannot infer the pool depth: on no topic are 95% of the pooled runs' first"):
        pool_depths(index, pooled)
    with pytest.raises(ValueError, match="at least 1"):
        pool_depths(index, pooled, 0)
    with pytest.raises(ValueError, match="at least 0"):
        pool_depths(index, pooled, {"1": -1})
    assert pool_depths(index, pooled, {"1": 0}).depths.tolist() == [0]  # given: the topic was not pooled
