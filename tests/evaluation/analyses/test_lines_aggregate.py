"""Re-scoring under subsets of the qrels aggregates as the registry says: gm_map is a geometric mean, not MAP."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.analyses.leave_out import leave_out
from app.evaluation.analyses.lines import SubsetScorer, index_lines
from app.evaluation.analyses.pool_depth import pool_depth
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures.evaluate import evaluate
from tests.evaluation.analyses.brute import random_collection


def test_gm_map_is_the_geometric_mean_of_the_per_topic_ap():
    runs, qrels = random_collection(5, n_run=4, n_topic=5)
    prepared = prepare_runs(runs, 1000)
    reference = evaluate(qrels, runs, ["gm_map", "AP"])
    order = [reference.runs.index(name) for name in prepared.names]
    gm, ap = reference.mean()[order, 0], reference.mean()[order, 1]
    per_topic = reference.values[order, 1, :]
    by_hand = np.exp(np.log(np.maximum(per_topic, 1e-5)).mean(axis=1))  # trec_eval's gm_map
    assert gm == pytest.approx(by_hand) and not np.allclose(gm, ap)
    scorer = SubsetScorer(index_lines(prepared, qrels), "gm_map")
    assert scorer.mean() == pytest.approx(gm)
    assert SubsetScorer(index_lines(prepared, qrels), "AP").mean() == pytest.approx(ap)
    # the analyses built on the scorer report gm_map as trec_eval does
    depth = pool_depth(qrels, prepared, measure="gm_map", max_depth=2, max_results=1000, outside="keep")
    assert depth.full == pytest.approx(gm)
    left = leave_out(qrels, prepared, units=list(prepared.names), by="run", measure="gm_map", depth=1000)
    assert left.original == pytest.approx(gm)
