"""Score vs processing time: correlations against scipy, the good-and-fast front by hand, mean seconds per topic."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from app.evaluation.analyses.efficiency import mean_seconds, pareto_front, score_vs_time


def test_correlations_equal_scipy_over_the_timed_runs():
    scores = np.array([0.30, 0.25, 0.10, 0.28, 0.05, 0.40])
    seconds = np.array([120.0, 8.0, 2.0, np.nan, 1.0, 300.0])  # run d states no time
    result = score_vs_time(list("abcdef"), scores, seconds, measure="xinfAP")
    timed = ~np.isnan(seconds)
    assert result.pearson == pytest.approx(stats.pearsonr(scores[timed], seconds[timed]).statistic)
    assert result.spearman == pytest.approx(stats.spearmanr(scores[timed], seconds[timed]).statistic)
    assert result.spearman == pytest.approx(1.0)  # here the slower the better, in order
    # front by hand: e (fastest), c (better than e, slower), b, a, f: each is better than every faster run
    assert result.front == ["a", "b", "c", "e", "f"]
    data = result.to_dict()
    assert data["n_timed"] == 5 and data["runs"][3] == {"run": "d", "score": 0.28, "seconds": None}


def test_pareto_front_hand_worked_with_dominated_runs_and_ties():
    scores = np.array([0.5, 0.4, 0.5, 0.3, 0.3])
    seconds = np.array([10.0, 10.0, 20.0, 1.0, 1.0])
    # 1 is beaten by 0 (better, as fast); 2 by 0 (as good, faster); 3 and 4 tie with each other: both stay
    assert pareto_front(scores, seconds).tolist() == [True, False, False, True, True]


def test_too_few_timed_runs_give_no_correlation_and_mean_seconds():
    result = score_vs_time(["a", "b"], np.array([0.1, 0.2]), np.array([1.0, 2.0]))
    assert math.isnan(result.pearson) and math.isnan(result.spearman) and result.front == ["a", "b"]
    assert result.to_dict()["pearson"] is None
    assert mean_seconds({"1661": 2.0, "1662": 4.5}) == pytest.approx(3.25)
    assert math.isnan(mean_seconds(None)) and math.isnan(mean_seconds({}))
    with pytest.raises(ValueError, match="negative"):
        score_vs_time(["a"], np.array([0.1]), np.array([-1.0]))
