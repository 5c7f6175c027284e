"""Bootstrap intervals, pairwise differences, multiplicity corrections, tiers and rank intervals."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest
import scipy.stats

from app.evaluation.statistics import intervals


@pytest.fixture(scope="module")
def scores() -> np.ndarray:
    """Four runs on 30 topics, skewed as AP is."""
    return np.random.default_rng(5).random((4, 30)) ** 2


@pytest.mark.parametrize("method", ["percentile", "BCa"])
def test_mean_intervals_equal_scipy_bootstrap(scores: np.ndarray, method: str) -> None:
    """Same seed, same resamples: each run's interval is scipy.stats.bootstrap's, to rounding."""
    ours = intervals.mean_intervals(scores, method=method, n_resamples=2000, seed=7)
    for run in range(len(scores)):
        theirs = scipy.stats.bootstrap(
            (scores[run],), np.mean, n_resamples=2000, rng=np.random.default_rng(7), method=method.lower()
        ).confidence_interval
        assert ours.low[run] == pytest.approx(theirs.low, abs=1e-12)
        assert ours.high[run] == pytest.approx(theirs.high, abs=1e-12)
    assert ours.mean == pytest.approx(scores.mean(axis=1))


def test_difference_interval_equals_scipy_paired_bootstrap(scores: np.ndarray) -> None:
    """The interval of mean_0 - mean_1 is scipy's paired bootstrap of the difference of means."""
    ours = intervals.pairwise(scores, n_resamples=2000, seed=3, test_resamples=500)
    theirs = scipy.stats.bootstrap(
        (scores[0], scores[1]),
        lambda a, b, axis=-1: a.mean(axis=axis) - b.mean(axis=axis),
        paired=True,
        n_resamples=2000,
        rng=np.random.default_rng(3),
        method="percentile",
    ).confidence_interval
    assert (ours.first[0], ours.second[0]) == (0, 1)
    assert ours.low[0] == pytest.approx(theirs.low, abs=1e-12)
    assert ours.high[0] == pytest.approx(theirs.high, abs=1e-12)


def test_two_topics_by_hand() -> None:
    """Scores 0 and 1: replicate means are 0, 0.5, 1 with chances 1/4, 1/2, 1/4, so the 95 % interval is [0, 1] and
    the 40 % interval [0.5, 0.5]."""
    wide = intervals.mean_intervals([[0.0, 1.0]], n_resamples=4000, seed=1)
    assert (wide.mean[0], wide.low[0], wide.high[0]) == (0.5, 0.0, 1.0)
    narrow = intervals.mean_intervals([[0.0, 1.0]], level=0.4, n_resamples=4000, seed=1)
    assert (narrow.low[0], narrow.high[0]) == (0.5, 0.5)


def test_constant_run_has_a_point_interval_for_both_methods() -> None:
    """No spread over topics, no interval width (BCa takes acceleration 0 where scipy gives NaN)."""
    for method in ("percentile", "BCa"):
        result = intervals.mean_intervals([[0.3] * 5], method=method, n_resamples=200)
        assert result.low[0] == pytest.approx(0.3) and result.high[0] == pytest.approx(0.3)


def test_sampling_variance_widens_in_quadrature() -> None:
    """A constant run whose topics each have sampling variance v: s = sqrt(n v) / n, the interval is mean +- z s."""
    n, v = 4, 0.01
    result = intervals.mean_intervals([[0.5] * n], n_resamples=100, sampling_variance=[[v] * n])
    z = NormalDist().inv_cdf(0.975)
    s = np.sqrt(n * v) / n
    assert result.sampling_se is not None and result.sampling_se[0] == pytest.approx(s)
    assert result.low[0] == pytest.approx(0.5 - z * s) and result.high[0] == pytest.approx(0.5 + z * s)
    assert result.describe()["sampled"] is True


def test_no_topics_gives_nan_and_rows_give_none() -> None:
    """An empty score table has no mean and no interval; rows() prints None, not NaN."""
    result = intervals.mean_intervals(np.zeros((2, 0)))
    assert np.isnan(result.mean).all()
    assert result.rows()[0] == {"mean": None, "ci_low": None, "ci_high": None, "level": 0.95}


def test_coverage_of_the_percentile_interval_by_simulation() -> None:
    """400 independent campaigns of 50 topics from a skewed distribution with known mean 1/3 (Beta(1, 2)): the 95 %
    interval covers the mean in 95 % of them, within about 3 binomial standard errors (0.925 - 0.975)."""
    rng = np.random.default_rng(11)
    campaigns = rng.beta(1.0, 2.0, size=(400, 50))
    result = intervals.mean_intervals(campaigns, n_resamples=2000, seed=2)
    covered = np.mean((result.low <= 1 / 3) & (1 / 3 <= result.high))
    assert 0.92 <= covered <= 0.975


def test_holm_and_bh_by_hand() -> None:
    """p = (0.01, 0.04, 0.03, 0.005), m = 4.

    Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04, made monotone: 0.02, 0.03, 0.06,
    0.06. BH: sorted times m / rank = 0.02, 0.02, 0.04, 0.04, minimum from the top: 0.02, 0.02, 0.04, 0.04."""
    p = [0.01, 0.04, 0.03, 0.005]
    assert intervals.adjust_pvalues(p, "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert intervals.adjust_pvalues(p, "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert intervals.adjust_pvalues([0.9, 0.8], "holm") == pytest.approx([1.0, 1.0])
    with pytest.raises(ValueError, match="correction"):
        intervals.adjust_pvalues(p, "bonferroni")


def test_effect_size_is_paired_cohens_d() -> None:
    """d_z = mean / sd (ddof 1) of the differences; 0 / 0 is 0, c / 0 infinite."""
    diffs = np.array([[0.1, 0.3, 0.2], [0.0, 0.0, 0.0], [0.1, 0.1, 0.1]])
    sizes = intervals.effect_sizes(diffs)
    assert sizes[0] == pytest.approx(0.2 / 0.1)
    assert sizes[1] == 0.0 and sizes[2] == np.inf


def test_tiers_follow_the_leader_rule() -> None:
    """Runs a > b > c > d; a vs b and a vs c not separable, a vs d separable, d vs nothing after: tiers 1, 1, 1, 2.
    Then c separable from a: c opens tier 2 and d, not separable from c, joins it."""
    means = [0.4, 0.3, 0.2, 0.1]
    p = np.ones((4, 4))
    p[0, 3] = p[3, 0] = 0.01
    assert intervals.tiers(means, p).tolist() == [1, 1, 1, 2]
    p[0, 2] = p[2, 0] = 0.01
    assert intervals.tiers(means, p).tolist() == [1, 1, 2, 2]


def test_rank_intervals_hold_the_observed_rank_and_separate_clear_runs() -> None:
    """Three runs far apart get point ranks 1, 2, 3; two identical runs share rank 1 in every replicate."""
    rng = np.random.default_rng(0)
    base = rng.random(40) * 0.1
    clear = np.stack([base + 0.8, base + 0.4, base])
    best, worst = intervals.rank_intervals(clear, n_resamples=500)
    assert best.tolist() == [1, 2, 3] and worst.tolist() == [1, 2, 3]
    tied = np.stack([base, base, base - 0.5])
    best, worst = intervals.rank_intervals(tied, n_resamples=500)
    assert best.tolist() == [1, 1, 3] and worst.tolist() == [1, 1, 3]


def test_close_runs_get_overlapping_rank_intervals(scores: np.ndarray) -> None:
    """Runs drawn from one distribution cannot be ranked: each interval spans most ranks."""
    best, worst = intervals.rank_intervals(scores, n_resamples=2000, seed=4)
    assert np.all(worst - best >= 2)


def test_invalid_arguments_are_value_errors() -> None:
    """Bad level, method, resamples, non-finite scores and mis-shaped sampling variances say what is wrong."""
    with pytest.raises(ValueError, match="level"):
        intervals.mean_intervals([[0.1, 0.2]], level=1.0)
    with pytest.raises(ValueError, match="method"):
        intervals.mean_intervals([[0.1, 0.2]], method="basic")
    with pytest.raises(ValueError, match="n_resamples"):
        intervals.mean_intervals([[0.1, 0.2]], n_resamples=0)
    with pytest.raises(ValueError, match="finite"):
        intervals.mean_intervals([[0.1, np.nan]])
    with pytest.raises(ValueError, match="shape"):
        intervals.mean_intervals([[0.1, 0.2]], sampling_variance=[[0.1]])


def test_paired_t_pvalues_equal_scipy_ttest_rel(scores: np.ndarray) -> None:
    """Each pair's p-value is scipy.stats.ttest_rel's; no spread gives 1 (equal runs) or 0 (a constant shift)."""
    matrix = intervals.paired_t_pvalues(scores)
    for i in range(len(scores)):
        for j in range(len(scores)):
            expected = 1.0 if i == j else scipy.stats.ttest_rel(scores[i], scores[j]).pvalue
            assert matrix[i, j] == pytest.approx(expected, rel=1e-9, abs=1e-300)
    shifted = intervals.paired_t_pvalues([[0.2, 0.4, 0.6], [0.2, 0.4, 0.6], [0.1, 0.3, 0.5]])
    assert shifted[0, 1] == 1.0 and shifted[0, 2] == 0.0


def test_tiers_separate_many_clearly_different_runs() -> None:
    """40 runs 0.02 apart on 50 topics with small noise: Holm over 780 pairs still separates them (a Monte Carlo
    p-value at B = 10,000 could not: 780 / 10,001 > 0.05), so there is more than one tier."""
    rng = np.random.default_rng(3)
    runs = np.arange(40)[:, None] * 0.02 + rng.normal(0.0, 0.01, size=(40, 50))
    found = intervals.pairwise(runs, n_resamples=200)
    tier = intervals.tiers(runs.mean(axis=1), found.matrix(40))
    assert tier.max() >= 10
    assert tier[np.argmax(runs.mean(axis=1))] == 1
