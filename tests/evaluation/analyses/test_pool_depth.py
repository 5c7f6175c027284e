"""Pool depth equals a brute-force loop (filter the qrels per depth, evaluate), on random and real qrels."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.analyses import APKernel, index_lines, pool_depth
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures.evaluate import evaluate_prepared
from tests.evaluation.analyses.brute import mean_over_topics, pooled_ranks, random_collection


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ap_kernel_equals_the_evaluator_on_any_line_subset(seed):
    runs, qrels = random_collection(seed)
    prepared = prepare_runs(runs)
    kernel = APKernel(index_lines(prepared, qrels))
    rng = np.random.default_rng(seed)
    for _ in range(5):
        keep = rng.random(len(qrels)) < 0.6
        expected = mean_over_topics(qrels, runs, keep, "AP")
        assert kernel.mean(keep) == pytest.approx(expected, abs=1e-12)
    full = evaluate_prepared(prepared, qrels, ["AP"]).values[:, 0, :]
    assert np.abs(kernel.per_topic() - full).max() < 1e-12


@pytest.mark.parametrize("measure", ["AP", "P@5", "nDCG@10", "bpref"])
@pytest.mark.parametrize("outside", ["keep", "drop"])
def test_pool_depth_equals_a_brute_force_loop(measure, outside):
    runs, qrels = random_collection(7, n_run=7, n_topic=5)
    pooled = ["run0", "run2", "run5"]
    best = pooled_ranks(runs, pooled)
    result = pool_depth(qrels, runs, measure=measure, pooled=pooled, max_depth=26, outside=outside)
    assert result.depths.tolist() == list(range(1, 27))
    assert result.pooled == pooled
    keys = list(zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True))
    full = mean_over_topics(qrels, runs, np.ones(len(qrels), dtype=bool), measure)
    assert result.full == pytest.approx(full, abs=1e-12)
    changed = False
    for i, d in enumerate(result.depths.tolist()):
        outside_line = np.array([k not in best for k in keys])
        keep = np.array([best.get(k, 10**9) <= d for k in keys]) | (outside_line & (outside == "keep"))
        expected = mean_over_topics(qrels, runs, keep, measure)
        assert result.scores[i] == pytest.approx(expected, abs=1e-12), d
        assert result.lines[i] == keep.sum()
        changed |= not np.allclose(expected, full)
    assert changed  # the cut mattered somewhere
    # runs are cut at 25 docs: at depth 25+ every pooled doc is in, so with outside=keep the qrels are complete
    if outside == "keep":
        assert result.lines[-1] == len(qrels)
        assert result.tau_b[-1] == pytest.approx(1.0)
        assert result.tau_ap[-1] == pytest.approx(1.0)


def test_pool_depth_on_stratified_qrels_cuts_the_unsampled_lines_too(shared_data):
    avs = shared_data / "trecvid-avs-2021"
    qrels = read_qrels(avs / "avs.qrels.main.tv21")
    assert qrels.stratified and (qrels.grades == -1).any()
    runs = [read_run(p) for p in sorted((avs / "runs").iterdir())]
    names = [r.tag for r in runs]
    prepared = prepare_runs(runs)
    depths = [1, 10, 100]
    result = pool_depth(qrels, prepared, measure="xinfAP", pooled=names[:2], depths=depths, outside="drop")
    best = pooled_ranks(runs, names[:2])
    keys = list(zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True))
    for i, d in enumerate(depths):
        keep = np.array([best.get(k, 10**9) <= d for k in keys])
        assert (qrels.grades[~keep] == -1).any()  # unsampled lines are cut as well
        expected = mean_over_topics(qrels, runs, keep, "xinfAP")
        assert result.scores[i] == pytest.approx(expected, abs=1e-12)
    assert result.scores[0].tolist() != result.scores[-1].tolist()


def test_pool_depth_rejects_unknown_pooled_runs():
    runs, qrels = random_collection(3)
    with pytest.raises(ValueError, match="unknown runs"):
        pool_depth(qrels, runs, pooled=["nope"], max_depth=3)
