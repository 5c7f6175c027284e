"""Significance within run types: Holm and Bonferroni by hand, p-values against scipy's exact permutation test, and
groups that never see each other's runs."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from app.evaluation.analyses.type_significance import bonferroni, holm, significance_by_type
from app.evaluation.statistics import significance


def _matrix(p01: float, p02: float, p12: float) -> np.ndarray:
    return np.array([[1.0, p01, p02], [p01, 1.0, p12], [p02, p12, 1.0]])


def test_holm_and_bonferroni_hand_worked():
    # three pairs with p = 0.01 (0-1), 0.04 (0-2), 0.03 (1-2). Holm, smallest first: 3 * 0.01 = 0.03,
    # max(0.03, 2 * 0.03) = 0.06, max(0.06, 1 * 0.04) = 0.06. Bonferroni: 3 p, capped at 1.
    adjusted = holm(_matrix(0.01, 0.04, 0.03))
    assert adjusted[0, 1] == pytest.approx(0.03) and adjusted[1, 0] == pytest.approx(0.03)
    assert adjusted[1, 2] == pytest.approx(0.06) and adjusted[0, 2] == pytest.approx(0.06)
    assert np.diag(adjusted).tolist() == [1.0, 1.0, 1.0]
    assert bonferroni(_matrix(0.01, 0.04, 0.5)) == pytest.approx(_matrix(0.03, 0.12, 1.0))
    assert holm(_matrix(0.5, 0.6, 0.7)) == pytest.approx(_matrix(1.0, 1.0, 1.0))  # 3*0.5, 2*0.6 capped


def _exact_p(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided paired sign-flip p-value by scipy's exact enumeration."""
    return stats.permutation_test(
        (x, y),
        lambda a, b, axis: np.abs(np.mean(a - b, axis=axis)),
        permutation_type="samples",
        vectorized=True,
        n_resamples=2 ** len(x),
        alternative="greater",
    ).pvalue


def _scores() -> tuple[list[str], list[str], np.ndarray]:
    rng = np.random.default_rng(3)
    names = ["f1", "m1", "f2", "f3", "m2", "m3", "r1"]
    types = ["F", "M", "F", "F", "M", "M", "R"]
    base = np.array([0.50, 0.30, 0.45, 0.20, 0.31, 0.10, 0.40])
    return names, types, np.clip(base[:, None] + 0.05 * rng.standard_normal((7, 8)), 0, 1)


def test_pairwise_pvalues_equal_scipy_within_each_type():
    names, types, scores = _scores()
    result = significance_by_type(names, types, scores, method="pairwise", n_resamples=10_000)
    assert [g.label for g in result.types] == ["F", "M", "R"]
    f, m, r = result.types
    means = dict(zip(names, scores.mean(axis=1).tolist(), strict=True))
    assert f.runs == ["f1", "f2", "f3"] and r.runs == ["r1"]
    assert m.runs == sorted(["m1", "m2", "m3"], key=lambda run: -means[run])
    for group in (f, m):
        rows = [names.index(run) for run in group.runs]
        better = set()
        for a in range(3):
            for b in range(a + 1, 3):
                expected = _exact_p(scores[rows[a]], scores[rows[b]])
                assert group.pvalues[a, b] == pytest.approx(expected, abs=1e-12)
                if expected < 0.05:
                    better.add((group.runs[a], group.runs[b]))  # runs are best first
        assert set(group.better) == better
    assert r.groups == [["r1"]] and r.better == []
    # f1 (0.50) vs f3 (0.20) differ on every topic: exact p = 2 / 2^8; m1 (0.30) vs m2 (0.31) do not differ
    assert f.pvalues[0, 2] == pytest.approx(2 / 256)
    assert ("f1", "f3") in f.better and not {("m2", "m1"), ("m1", "m2")} & set(m.better)


def test_holm_and_tukey_are_the_significance_module_on_the_group_only():
    names, types, scores = _scores()
    holm_result = significance_by_type(names, types, scores, method="holm")
    rows = [names.index(run) for run in holm_result.types[0].runs]
    raw = significance.pairwise_randomization(scores[rows], n_resamples=10_000, seed=0)
    assert holm_result.types[0].pvalues == pytest.approx(holm(raw))
    tukey = significance_by_type(names, types, scores, method="tukey", n_resamples=2000, seed=5)
    expected = significance.randomised_tukey_hsd(scores[rows], n_resamples=2000, seed=5)
    assert tukey.types[0].pvalues == pytest.approx(expected)
    # a run of another type changes nothing inside a group
    more = significance_by_type(
        names + ["f9"], types + ["X"], np.vstack([scores, np.ones(8)]), method="tukey", n_resamples=2000, seed=5
    )
    assert more.types[0].pvalues == pytest.approx(expected)


def test_top_keeps_the_best_runs_of_each_type_and_to_dict():
    names, types, scores = _scores()
    result = significance_by_type(names, types, scores, top=2, n_resamples=1000)
    means = dict(zip(names, scores.mean(axis=1).tolist(), strict=True))
    best_m = sorted(["m1", "m2", "m3"], key=lambda run: -means[run])[:2]
    assert [g.runs for g in result.types] == [["f1", "f2"], best_m, ["r1"]]
    data = result.to_dict()
    assert data["top"] == 2 and data["types"][0]["type"] == "F" and len(data["types"][0]["pvalues"]) == 2
    with pytest.raises(ValueError, match="method"):
        significance_by_type(names, types, scores, method="anova")


def test_gm_measures_rank_by_geometric_means_and_test_the_logs():
    # x is better on 7 topics but 0 on one; y is steady: x has the larger arithmetic mean, y the larger geometric one
    x = np.array([0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.0])
    y = np.array([0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4, 0.4])
    scores = np.stack([x, y])
    arithmetic = significance_by_type(["x", "y"], ["F", "F"], scores, n_resamples=10_000)
    assert arithmetic.types[0].runs == ["x", "y"]
    gm = significance_by_type(["x", "y"], ["F", "F"], scores, n_resamples=10_000, aggregate="gm")
    group = gm.types[0]
    assert group.runs == ["y", "x"]
    assert group.means.tolist() == pytest.approx([0.4, np.exp((7 * np.log(0.6) + np.log(1e-5)) / 8)])
    logs = np.log(np.maximum(scores, 1e-5))
    assert group.pvalues[0, 1] == pytest.approx(_exact_p(logs[1], logs[0]), abs=1e-12)
