"""Tests for the significance tests: exact enumeration, Monte Carlo, Tukey HSD, groups, discriminative power."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from app.evaluation.statistics import significance as sig
from app.evaluation.statistics.significance import (
    RandomizationResult,
    discriminative_power,
    paired_randomization_test,
    pairwise_randomization,
    randomised_tukey_hsd,
    significance_groups,
)

# --- plain reference implementations ---------------------------------------------------------------------------


def brute_force_p(x: np.ndarray, y: np.ndarray, alternative: str = "two-sided") -> float:
    """Exact sign-flip p-value by looping over every sign vector."""
    d = [float(a) - float(b) for a, b in zip(x, y, strict=True)]
    n = len(d)
    observed = sum(d) / n
    tol = 1e-12 * sum(abs(v) for v in d) / n
    count = 0
    for signs in itertools.product((1.0, -1.0), repeat=n):
        value = sum(s * v for s, v in zip(signs, d, strict=True)) / n
        if alternative == "two-sided":
            count += abs(value) >= abs(observed) - tol
        elif alternative == "greater":
            count += value >= observed - tol
        else:
            count += value <= observed + tol
    return count / 2**n


def reference_tukey_hsd(scores: np.ndarray, n_resamples: int, seed: int) -> np.ndarray:
    """Randomised Tukey HSD with plain loops in exact arithmetic on the scores' shortest decimal forms."""
    n_run, n_topic = scores.shape
    exact = [[Fraction(repr(float(v))) for v in row] for row in scores]  # 0.1 means 1/10, so decimal ties are ties
    keys = np.random.default_rng(seed).random((n_resamples, n_topic, n_run))
    ranges = []
    for b in range(n_resamples):
        totals = [Fraction(0)] * n_run
        for t in range(n_topic):
            order = np.argsort(keys[b, t])
            for r in range(n_run):
                totals[r] += exact[order[r]][t]
        ranges.append((max(totals) - min(totals)) / n_topic)
    means = [sum(row) / n_topic for row in exact]
    p = np.empty((n_run, n_run))
    for i in range(n_run):
        for j in range(n_run):
            observed = abs(means[i] - means[j])
            count = sum(1 for value in ranges if value >= observed)
            p[i, j] = (count + 1) / (n_resamples + 1)
    return p


def runs_with_spread(n_run: int, n_topic: int, seed: int) -> np.ndarray:
    """Scores of runs whose true means spread from 0.3 to 0.6, with per-topic difficulty and noise."""
    rng = np.random.default_rng(seed)
    topic = rng.normal(0.0, 0.1, n_topic)
    level = np.linspace(0.6, 0.3, n_run)
    return np.clip(level[:, None] + topic[None, :] + rng.normal(0.0, 0.1, (n_run, n_topic)), 0.0, 1.0)


# --- (a) exact enumeration ------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", range(3, 11))
@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_exact_enumeration_matches_brute_force(n: int, alternative: str) -> None:
    rng = np.random.default_rng(100 + n)
    for _ in range(3):
        x, y = rng.random(n), rng.random(n) * 0.8
        result = paired_randomization_test(x, y, alternative=alternative)
        assert result.exact is True
        assert result.n_resamples == 2**n
        assert result.statistic == pytest.approx(float(np.mean(x - y)), abs=1e-15)
        assert result.pvalue == pytest.approx(brute_force_p(x, y, alternative), abs=1e-12)


def test_exact_enumeration_matches_scipy_exact() -> None:
    rng = np.random.default_rng(7)
    for n in (5, 8, 11):
        x, y = rng.random(n), rng.random(n)
        ours = paired_randomization_test(x, y, n_resamples=2**n)
        theirs = stats.permutation_test(
            (x, y),
            lambda a, b, axis: np.abs(np.mean(a - b, axis=axis)),
            permutation_type="samples",
            vectorized=True,
            n_resamples=2**n,
            alternative="greater",
        )
        assert ours.exact
        assert ours.pvalue == pytest.approx(theirs.pvalue, abs=1e-12)


@pytest.mark.parametrize(
    "decimals",
    [
        ["0.1", "0.8", "-0.4", "0.6", "0.3", "-0.9"],
        ["0.0", "0.2", "0.9", "0.4", "0.3", "0.1"],
        ["-0.8", "-0.9", "-0.6", "0.6", "0.3", "0.8"],
        ["0.1", "0.2", "-0.3", "0.5", "0.7"],
    ],
)
def test_floating_point_ties_count_as_extreme(decimals: list[str]) -> None:
    # Sums such as 0.1 + 0.2 - 0.3 are tied in exact arithmetic but not in floats; without the tolerance these
    # cases undercount (the second even loses the identity vector). The truth is counted with fractions.
    exact_d = [Fraction(v) for v in decimals]
    observed = abs(sum(exact_d))
    count = sum(
        abs(sum(s * v for s, v in zip(signs, exact_d, strict=True))) >= observed
        for signs in itertools.product((1, -1), repeat=len(exact_d))
    )
    d = np.array([float(v) for v in decimals])
    result = paired_randomization_test(d, np.zeros_like(d))
    assert result.exact
    assert result.pvalue == count / 2 ** len(d)


def test_exact_only_when_all_sign_vectors_fit() -> None:
    x, y = np.arange(10.0), np.zeros(10)
    assert paired_randomization_test(x, y, n_resamples=1024).exact
    small = paired_randomization_test(x, y, n_resamples=1023)
    assert not small.exact and small.n_resamples == 1023
    # all differences positive: only the identity (and the full flip, two-sided) are as extreme
    assert paired_randomization_test(x[1:], y[1:], n_resamples=512).pvalue == pytest.approx(2 / 512)


# --- (b) Monte Carlo --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_monte_carlo_close_to_exact_and_reproducible(alternative: str) -> None:
    # n = 14 topics so that B = 10,000 < 2**14 is Monte Carlo; the exact p uses all 16,384 sign vectors.
    rng = np.random.default_rng(3)
    errors = []
    for _ in range(4):
        x = rng.random(14)
        y = x - rng.normal(0.05, 0.15, 14)
        exact = paired_randomization_test(x, y, n_resamples=2**14, alternative=alternative)
        assert exact.exact
        for seed in (0, 1):
            mc = paired_randomization_test(x, y, n_resamples=10_000, seed=seed, alternative=alternative)
            assert not mc.exact and mc.n_resamples == 10_000
            assert abs(mc.pvalue - exact.pvalue) < 0.015
            errors.append(mc.pvalue - exact.pvalue)
            again = paired_randomization_test(x, y, n_resamples=10_000, seed=seed, alternative=alternative)
            assert again == mc
    assert abs(np.mean(errors)) < 0.006


def test_monte_carlo_p_has_plus_one_floor() -> None:
    x, y = np.full(40, 0.9), np.full(40, 0.1)
    result = paired_randomization_test(x, y, n_resamples=999)
    assert result.pvalue == pytest.approx(1 / 1000)
    assert paired_randomization_test(x, y, n_resamples=999, alternative="less").pvalue == 1.0


def test_generator_seed_is_accepted() -> None:
    x, y = runs_with_spread(2, 30, 4)
    a = paired_randomization_test(x, y, n_resamples=2000, seed=np.random.default_rng(5))
    b = paired_randomization_test(x, y, n_resamples=2000, seed=5)
    assert a == b


def test_results_do_not_depend_on_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    scores = runs_with_spread(5, 25, 9)
    base_pair = pairwise_randomization(scores, n_resamples=3000, seed=2)
    base_hsd = randomised_tukey_hsd(scores, n_resamples=600, seed=2)
    monkeypatch.setattr(sig, "_CHUNK_ELEMENTS", 257)
    np.testing.assert_array_equal(pairwise_randomization(scores, n_resamples=3000, seed=2), base_pair)
    np.testing.assert_array_equal(randomised_tukey_hsd(scores, n_resamples=600, seed=2), base_hsd)
    # exact enumeration in chunks, too
    x, y = scores[0, :12], scores[3, :12]
    assert paired_randomization_test(x, y).pvalue == pytest.approx(brute_force_p(x, y), abs=1e-12)


# --- pairwise ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_pairwise_equals_single_tests_with_same_seed(alternative: str) -> None:
    scores = runs_with_spread(6, 30, 11)
    p = pairwise_randomization(scores, n_resamples=4000, seed=8, alternative=alternative)
    assert p.shape == (6, 6)
    np.testing.assert_array_equal(np.diag(p), 1.0)
    for i in range(6):
        for j in range(6):
            if i != j:
                single = paired_randomization_test(
                    scores[i], scores[j], n_resamples=4000, seed=8, alternative=alternative
                )
                assert p[i, j] == single.pvalue
    # run 0 (mean ~0.6) is better than run 5 (~0.3)
    if alternative == "two-sided":
        assert p[0, 5] < 0.01
        np.testing.assert_array_equal(p, p.T)
    elif alternative == "greater":
        assert p[0, 5] < 0.01 and p[5, 0] > 0.99
    else:
        assert p[5, 0] < 0.01 and p[0, 5] > 0.99


def test_pairwise_exact_small_topic_count() -> None:
    scores = np.random.default_rng(12).random((4, 7))
    p = pairwise_randomization(scores, n_resamples=10_000)
    for i, j in itertools.combinations(range(4), 2):
        assert p[i, j] == pytest.approx(brute_force_p(scores[i], scores[j]), abs=1e-12)


def test_pairwise_single_run_is_trivial() -> None:
    np.testing.assert_array_equal(pairwise_randomization(np.array([[0.1, 0.2]])), [[1.0]])


# --- (c) randomised Tukey HSD ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n_run", "n_topic", "seed"), [(3, 5, 0), (4, 6, 1), (5, 4, 2)])
@pytest.mark.parametrize("decimals", [False, True])
def test_tukey_hsd_matches_plain_loop_reference(n_run: int, n_topic: int, seed: int, decimals: bool) -> None:
    scores = np.random.default_rng(50 + seed).random((n_run, n_topic))
    if decimals:  # one-decimal scores: many resampled ranges tie with observed differences
        scores = np.round(scores, 1)
    ours = randomised_tukey_hsd(scores, n_resamples=300, seed=seed)
    ref = reference_tukey_hsd(scores, n_resamples=300, seed=seed)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(ours, ours.T)
    np.testing.assert_array_equal(np.diag(ours), 1.0)


def test_tukey_hsd_is_more_conservative_than_pairwise() -> None:
    scores = runs_with_spread(8, 40, 21)
    iu = np.triu_indices(8, k=1)
    hsd = randomised_tukey_hsd(scores, n_resamples=5000, seed=1)[iu]
    pair = pairwise_randomization(scores, n_resamples=5000, seed=1)[iu]
    assert hsd.mean() > pair.mean() + 0.05
    assert np.mean(hsd >= pair - 0.01) >= 0.95
    assert discriminative_power(randomised_tukey_hsd(scores, n_resamples=5000, seed=1)) < discriminative_power(
        pairwise_randomization(scores, n_resamples=5000, seed=1)
    )


def test_tukey_hsd_with_two_runs_is_the_sign_flip_test() -> None:
    # With two runs, permuting within a topic is a sign flip of the difference and the range is |mean diff|.
    rng = np.random.default_rng(31)
    for _ in range(3):
        scores = rng.random((2, 16))
        scores[0] += 0.1
        exact = paired_randomization_test(scores[0], scores[1], n_resamples=2**16).pvalue
        hsd = randomised_tukey_hsd(scores, n_resamples=10_000, seed=4)[0, 1]
        assert abs(hsd - exact) < 0.015


# --- (d) groups and discriminative power on a constructed case ---------------------------------------------------


def two_tier_scores() -> tuple[list[str], np.ndarray]:
    """Runs A, B, C near 0.8 and D, E, F near 0.2; within a tier the differences are zero-mean noise."""
    rng = np.random.default_rng(0)
    noise = rng.normal(0.0, 0.02, 30)
    tiers = []
    for level in (0.8, 0.2):
        # same noise in different topic orders: within-tier mean differences are just the small offsets
        tiers += [level + 0.002 + noise, level + 0.001 + np.roll(noise, 7), level + noise[::-1]]
    return ["A", "B", "C", "D", "E", "F"], np.array(tiers)


@pytest.mark.parametrize("method", ["pairwise", "tukey"])
def test_two_tiers_give_two_groups(method: str) -> None:
    names, scores = two_tier_scores()
    if method == "pairwise":
        p = pairwise_randomization(scores, n_resamples=10_000)
    else:
        p = randomised_tukey_hsd(scores, n_resamples=10_000)
    assert significance_groups(names, scores.mean(axis=1), p) == [["A", "B", "C"], ["D", "E", "F"]]
    assert discriminative_power(p) == pytest.approx(9 / 15)
    assert p[0, 3] == pytest.approx(1 / 10_001)
    assert p[0, 1] > 0.5


def test_groups_given_order_is_by_mean_not_input() -> None:
    names, scores = two_tier_scores()
    order = [4, 1, 3, 0, 5, 2]
    p = pairwise_randomization(scores[order], n_resamples=2000)
    groups = significance_groups([names[k] for k in order], scores[order].mean(axis=1), p)
    assert groups == [["A", "B", "C"], ["D", "E", "F"]]


def test_groups_overlap_and_contained_ranges_are_dropped() -> None:
    names = ["a", "b", "c", "d"]
    means = np.array([0.4, 0.3, 0.2, 0.1])
    p = np.ones((4, 4))
    p[0, 3] = p[3, 0] = 0.01  # only a vs d differ
    assert significance_groups(names, means, p) == [["a", "b", "c"], ["b", "c", "d"]]
    p[0, 2] = p[2, 0] = 0.01  # a vs c too
    assert significance_groups(names, means, p) == [["a", "b"], ["b", "c", "d"]]


def test_groups_extremes() -> None:
    names, means = ["x", "y", "z"], np.array([0.1, 0.3, 0.2])
    assert significance_groups(names, means, np.ones((3, 3))) == [["y", "z", "x"]]
    all_different = np.full((3, 3), 0.001)
    np.fill_diagonal(all_different, 1.0)
    assert significance_groups(names, means, all_different) == [["y"], ["z"], ["x"]]
    # a zero diagonal does not split a run from itself; alpha is the boundary (p >= alpha is not significant)
    at_alpha = np.full((3, 3), 0.05)
    np.fill_diagonal(at_alpha, 0.0)
    assert significance_groups(names, means, at_alpha, alpha=0.05) == [["y", "z", "x"]]
    assert discriminative_power(at_alpha, alpha=0.05) == 0.0
    assert discriminative_power(at_alpha, alpha=0.051) == 1.0


def test_groups_use_either_direction_of_a_one_sided_matrix() -> None:
    names, means = ["p", "q"], np.array([0.6, 0.4])
    p = np.array([[1.0, 0.01], [0.99, 1.0]])
    assert significance_groups(names, means, p) == [["p"], ["q"]]
    assert significance_groups(names, means, p.T) == [["p"], ["q"]]


def test_discriminative_power_counts_upper_triangle() -> None:
    p = np.array([[1.0, 0.01, 0.2, 0.04], [0.01, 1.0, 0.5, 0.9], [0.2, 0.5, 1.0, 0.001], [0.04, 0.9, 0.001, 1.0]])
    assert discriminative_power(p) == pytest.approx(3 / 6)
    assert discriminative_power(p, alpha=0.01) == pytest.approx(1 / 6)


# --- (e) identical runs ------------------------------------------------------------------------------------------


def test_identical_runs_give_p_one() -> None:
    x = np.random.default_rng(2).random(25)
    monte_carlo = paired_randomization_test(x, x.copy(), n_resamples=500)
    exact = paired_randomization_test(x[:12], x[:12].copy(), n_resamples=4096)
    assert (monte_carlo.exact, exact.exact) == (False, True)
    for result in (monte_carlo, exact):
        assert result.statistic == 0.0
        assert result.pvalue == 1.0
    scores = np.vstack([x, x, x])
    np.testing.assert_array_equal(pairwise_randomization(scores, n_resamples=1000), 1.0)
    np.testing.assert_array_equal(randomised_tukey_hsd(scores, n_resamples=1000), 1.0)


# --- (f) validation ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"x": [0.1, 0.2], "y": [0.1]}, "same length"),
        ({"x": [[0.1, 0.2]], "y": [[0.1, 0.2]]}, "1-D"),
        ({"x": [0.1, np.nan], "y": [0.1, 0.2]}, "NaN"),
        ({"x": [0.1, np.inf], "y": [0.1, 0.2]}, "NaN or infinite"),
        ({"x": ["a", "b"], "y": [0.1, 0.2]}, "numeric"),
        ({"x": [0.1, 0.2], "y": [0.1, 0.2], "n_resamples": 0}, "n_resamples must be >= 1"),
        ({"x": [0.1, 0.2], "y": [0.1, 0.2], "n_resamples": 10.5}, "integer"),
        ({"x": [0.1, 0.2], "y": [0.1, 0.2], "n_resamples": True}, "integer"),
        ({"x": [0.1, 0.2], "y": [0.1, 0.2], "alternative": "two_sided"}, "alternative"),
        ({"x": [0.1, 0.2], "y": [0.1, 0.2], "seed": -1}, "non-negative"),
        ({"x": [0.1, 0.2], "y": [0.1, 0.2], "seed": 1.5}, "seed"),
    ],
)
def test_paired_test_validation(kwargs: dict, message: str) -> None:
    x, y = kwargs.pop("x"), kwargs.pop("y")
    with pytest.raises(ValueError, match=message):
        paired_randomization_test(x, y, **kwargs)


@pytest.mark.parametrize("function", [pairwise_randomization, randomised_tukey_hsd])
def test_matrix_input_validation(function) -> None:
    with pytest.raises(ValueError, match="2-D"):
        function(np.array([0.1, 0.2]))
    with pytest.raises(ValueError, match="NaN"):
        function(np.array([[0.1, np.nan], [0.2, 0.3]]))
    with pytest.raises(ValueError, match="n_resamples"):
        function(np.ones((2, 3)), n_resamples=0)
    with pytest.raises(ValueError, match="seed"):
        function(np.ones((2, 3)), seed="x")


def test_summary_validation() -> None:
    p = np.ones((3, 3))
    names, means = ["a", "b", "c"], np.array([0.3, 0.2, 0.1])
    with pytest.raises(ValueError, match="square"):
        significance_groups(names, means, np.ones((3, 2)))
    with pytest.raises(ValueError, match="number of runs"):
        significance_groups(["a", "b"], means, p)
    with pytest.raises(ValueError, match="number of runs"):
        significance_groups(names, means[:2], p)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        significance_groups(names, means, p * 1.5)
    with pytest.raises(ValueError, match="NaN"):
        significance_groups(names, np.array([0.3, np.nan, 0.1]), p)
    with pytest.raises(ValueError, match="alpha"):
        significance_groups(names, means, p, alpha=0.0)
    with pytest.raises(ValueError, match="alpha"):
        discriminative_power(p, alpha=1.0)
    with pytest.raises(ValueError, match="two runs"):
        discriminative_power(np.ones((1, 1)))
    with pytest.raises(ValueError, match="NaN"):
        discriminative_power(np.full((2, 2), np.nan))


def test_no_topics_is_p_one_exactly_not_an_error() -> None:
    """Qrels with no judged topic give runs with no per-topic scores: nothing differs, p = 1 everywhere."""
    assert paired_randomization_test([], []) == RandomizationResult(0.0, 1.0, 1, True)
    for function in (pairwise_randomization, randomised_tukey_hsd):
        np.testing.assert_array_equal(function(np.zeros((3, 0)), n_resamples=100), np.ones((3, 3)))
    assert significance_groups(["a", "b", "c"], np.zeros(3), np.ones((3, 3))) == [["a", "b", "c"]]


@pytest.mark.parametrize("function", [pairwise_randomization, randomised_tukey_hsd])
def test_one_run_or_none_has_nothing_to_compare(function) -> None:
    np.testing.assert_array_equal(function(np.array([[0.2, 0.4, 0.1]])), np.ones((1, 1)))
    assert function(np.zeros((0, 4))).shape == (0, 0)
    assert function(np.zeros((0, 0))).shape == (0, 0)
    assert significance_groups(["only"], np.array([0.3]), np.ones((1, 1))) == [["only"]]
    assert significance_groups([], np.zeros(0), np.ones((0, 0))) == []


def test_result_is_a_named_tuple() -> None:
    result = paired_randomization_test([0.5, 0.7, 0.9], [0.4, 0.4, 0.4])
    statistic, pvalue, n_resamples, exact = result
    assert isinstance(result, RandomizationResult)
    assert (statistic, pvalue, n_resamples, exact) == pytest.approx((0.3, 0.25, 8, True))
