"""Run vs median vs best per topic: hand-worked values, numpy's own median/max, and nothing named but the run."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.evaluation.analyses.topic_comparison import topic_comparison


def test_hand_worked():
    # topic t1: 0.2, 0.4, 0.9 -> median 0.4, best 0.9; t2: 0.5, NaN (not scored), 0.1 -> median 0.3, best 0.5;
    # t3: nobody scored -> no median, no best
    scores = np.array([[0.2, 0.5, np.nan], [0.4, np.nan, np.nan], [0.9, 0.1, np.nan]])
    result = topic_comparison(["a", "b", "c"], ["t1", "t2", "t3"], scores, measure="AP")
    assert result.median[:2] == pytest.approx([0.4, 0.3]) and result.best[:2] == pytest.approx([0.9, 0.5])
    assert np.isnan(result.median[2]) and np.isnan(result.best[2])
    assert result.n_scored.tolist() == [3, 2, 0]
    chart = result.run("a")
    assert chart["topics"] == [
        {"topic": "t1", "score": 0.2, "median": pytest.approx(0.4), "best": 0.9},
        {"topic": "t2", "score": 0.5, "median": pytest.approx(0.3), "best": 0.5},
        {"topic": "t3", "score": None, "median": None, "best": None},
    ]
    assert chart["above_median"] == 1 and chart["at_best"] == 1 and chart["n_runs"] == 3
    text = json.dumps(chart)
    assert '"b"' not in text and '"c"' not in text  # no other run is named in a run's chart


def test_against_numpy_on_random_scores():
    rng = np.random.default_rng(1)
    scores = rng.random((9, 12))
    scores[rng.random(scores.shape) < 0.1] = np.nan
    result = topic_comparison([f"r{i}" for i in range(9)], [f"t{j}" for j in range(12)], scores)
    for j in range(12):
        column = scores[:, j][~np.isnan(scores[:, j])]
        assert result.median[j] == pytest.approx(float(np.median(column)))
        assert result.best[j] == column.max()
    assert len(result.to_dict()["runs"]) == 9
    with pytest.raises(ValueError):
        topic_comparison(["a"], ["t"], np.zeros((2, 1)))
