"""Topic-set design (Sakai): the variance estimates by hand, each size against scipy.stats at n and n - 1, published
sizes (Cohen's and G*Power's tables, Sakai's EVIA 2014 table) and seeded simulations of the tests at the returned n."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from app.evaluation.analyses.topic_set_design import (
    anova_power,
    ci_expected_width,
    detectable_difference,
    expected_sd_factor,
    pooled_variance,
    residual_variance,
    smallest_n,
    t_test_power,
    topic_set_design,
    topics_for_anova,
    topics_for_ci,
    topics_for_t_test,
)

# ---------------------------------------------------------------------------------------------------------------------
# The variance


def test_variances_hand_worked():
    # runs [1, 2, 3] and [3, 4, 8]: grand mean 3.5, run means 2 and 5, topic means 2, 3, 5.5; residuals
    # x - run mean - topic mean + grand mean = [0.5, 0.5, -1] and [-0.5, -0.5, 1]: SS_E = 3 over (2-1)(3-1) = 2 df
    x = np.array([[1.0, 2.0, 3.0], [3.0, 4.0, 8.0]])
    assert residual_variance(x) == pytest.approx(1.5)
    # with two runs V_E is half the variance of the per-topic differences [2, 2, 5] (variance 3): sigma_d^2 = 2 V_E
    assert residual_variance(x) == pytest.approx(np.var(x[1] - x[0], ddof=1) / 2)
    # within-run squares 1 + 0 + 1 and 4 + 1 + 9 = 16 over 2 (3 - 1) = 4 df
    assert pooled_variance(x) == pytest.approx(4.0)


def test_residual_variance_is_the_two_way_anova_error_term():
    x = np.random.default_rng(3).uniform(size=(6, 9))
    grand = x.mean()
    total = ((x - grand) ** 2).sum()
    runs = 9 * ((x.mean(axis=1) - grand) ** 2).sum()
    topics = 6 * ((x.mean(axis=0) - grand) ** 2).sum()
    assert residual_variance(x) == pytest.approx((total - runs - topics) / (5 * 8))
    # the one-way pooled variance is scipy's within-group variance of a one-way ANOVA: SS_within / (R (T - 1))
    within = sum(np.var(row, ddof=1) * 8 for row in x)
    assert pooled_variance(x) == pytest.approx(within / (6 * 8))
    with pytest.raises(ValueError):
        residual_variance(x[:1])


def test_residual_variance_is_unbiased_under_the_additive_model():
    # x[r, t] = run effect + topic effect + N(0, sigma^2): E[V_E] = sigma^2 whatever the effects
    rng = np.random.default_rng(11)
    sigma2, sims = 0.02, 2000
    run = rng.uniform(0.2, 0.4, size=(sims, 8, 1))
    topic = rng.uniform(0.0, 0.5, size=(sims, 1, 25))
    x = run + topic + rng.normal(0, math.sqrt(sigma2), size=(sims, 8, 25))
    estimates = np.array([residual_variance(one) for one in x])
    # V_E (R-1)(T-1) / sigma^2 is chi^2 with 168 df: sd of one estimate sigma^2 sqrt(2 / 168)
    tolerance = 4 * sigma2 * math.sqrt(2 / 168) / math.sqrt(sims)
    assert abs(estimates.mean() - sigma2) < tolerance
    # the pooled within-run variance takes the topic effect in: sigma^2 + Var(U(0, 0.5)) = 0.02 + 0.25 / 12
    assert np.mean([pooled_variance(one) for one in x[:200]]) == pytest.approx(sigma2 + 0.25 / 12, rel=0.03)


# ---------------------------------------------------------------------------------------------------------------------
# Sizes against scipy.stats: power reached at n, not at n - 1


@pytest.mark.parametrize("sigma2", [0.005, 0.02, 0.05])
@pytest.mark.parametrize("min_difference", [0.02, 0.05, 0.1, 0.2])
@pytest.mark.parametrize(("alpha", "beta"), [(0.05, 0.2), (0.01, 0.1)])
def test_t_test_size_is_the_smallest_with_the_power(sigma2, min_difference, alpha, beta):
    n = topics_for_t_test(min_difference, sigma2, alpha, beta)
    assert n is not None

    def power(k: int) -> float:  # scipy directly: P(|T'| > c), T' ~ nct(k - 1, sqrt(k) minD / sqrt(2 sigma^2))
        c = stats.t.ppf(1 - alpha / 2, k - 1)
        nc = math.sqrt(k) * min_difference / math.sqrt(2 * sigma2)
        return 1 - (stats.nct.cdf(c, k - 1, nc) - stats.nct.cdf(-c, k - 1, nc))

    assert power(n) >= 1 - beta
    assert n == 2 or power(n - 1) < 1 - beta
    assert t_test_power(n, min_difference, sigma2, alpha) == pytest.approx(power(n), abs=1e-9)


@pytest.mark.parametrize("systems", [2, 5, 30])
@pytest.mark.parametrize("min_difference", [0.05, 0.1, 0.2])
@pytest.mark.parametrize("sigma2", [0.01, 0.05])
def test_anova_size_is_the_smallest_with_the_power(systems, min_difference, sigma2):
    n = topics_for_anova(min_difference, sigma2, systems)
    assert n is not None

    def power(k: int) -> float:  # scipy directly, with the noncentrality of the extreme means minD apart
        means = np.zeros(systems)
        means[0], means[1] = min_difference / 2, -min_difference / 2
        lam = k * ((means - means.mean()) ** 2).sum() / sigma2
        dfn, dfd = systems - 1, systems * (k - 1)
        return stats.ncf.sf(stats.f.ppf(0.95, dfn, dfd), dfn, dfd, lam)

    assert power(n) >= 0.8
    assert n == 2 or power(n - 1) < 0.8
    assert anova_power(n, min_difference, sigma2, systems) == pytest.approx(power(n), abs=1e-12)


@pytest.mark.parametrize("sigma2", [0.005, 0.05])
@pytest.mark.parametrize("width", [0.02, 0.05, 0.1])
def test_ci_size_is_the_smallest_with_the_expected_width(sigma2, width):
    n = topics_for_ci(width, sigma2)
    assert n is not None and n > 2
    assert ci_expected_width(n, sigma2) <= width < ci_expected_width(n - 1, sigma2)


def test_ci_width_hand_worked():
    # E[s] / sigma: n = 2: sqrt(2) Gamma(1) / Gamma(1/2) = sqrt(2 / pi); n = 3: Gamma(3/2) / Gamma(1) = sqrt(pi) / 2
    assert expected_sd_factor(2) == pytest.approx(math.sqrt(2 / math.pi))
    assert expected_sd_factor(3) == pytest.approx(math.sqrt(math.pi) / 2)
    # sigma^2 = 0.5 (sigma_t = 1), n = 2: 2 t_{0.975}(1) sqrt(2 / pi) / sqrt(2) = 2 x 12.7062 x 0.56419
    assert ci_expected_width(2, 0.5) == pytest.approx(2 * 12.706205 * 0.5641896, rel=1e-6)
    # large n: the factor tends to 1 and the width to 2 z sigma_t / sqrt(n)
    assert ci_expected_width(10_000, 0.5) == pytest.approx(2 * 1.959964 / 100, rel=1e-3)


def test_expected_sd_factor_against_a_seeded_simulation():
    rng = np.random.default_rng(5)
    for n in (2, 5, 20):
        sd = rng.normal(size=(200_000, n)).std(axis=1, ddof=1)
        assert abs(sd.mean() - expected_sd_factor(n)) < 4 * sd.std() / math.sqrt(200_000)


def test_smallest_n_searches_a_rising_condition():
    assert smallest_n(lambda n: n >= 37) == 37
    assert smallest_n(lambda n: n >= 2) == 2
    assert smallest_n(lambda n: n >= 1_000_001) == 1_000_001
    assert smallest_n(lambda n: False, n_max=100) is None
    assert topics_for_t_test(1e-5, 0.05) is None  # about 3.9e8 topics: beyond N_MAX


def test_powers_stay_finite_for_large_effects():
    # scipy's nct.cdf(-c) is NaN beyond noncentrality ~7.5: the lower tail is taken as nct.sf(c, -nc)
    for n in (2, 5, 30, 1000):
        for d in (0.2, 0.5, 1.0, 5.0):
            assert 0.0 <= t_test_power(n, d, 0.001) <= 1.0
    assert t_test_power(30, 0.2, 0.007) == pytest.approx(1.0, abs=1e-3)
    assert t_test_power(30, 0.05, 0.0) == 1.0 and topics_for_anova(0.05, 0.0, 5) == 2


# ---------------------------------------------------------------------------------------------------------------------
# Published sizes


@pytest.mark.parametrize(("dz", "expected"), [(0.2, 199), (0.5, 34), (0.8, 15)])
def test_paired_t_test_sizes_of_g_power(dz, expected):
    # G*Power 3 (Faul et al. 2007), t-test "means: difference between two dependent means (matched pairs)", a priori,
    # two tails, alpha 0.05, power 0.80: effect size dz 0.2 -> 199, 0.5 -> 34, 0.8 -> 15 pairs. Sakai's minDt is
    # dz = minD / sigma_t; sigma^2 = 0.5 makes sigma_t = 1
    assert topics_for_t_test(dz, 0.5) == expected


@pytest.mark.parametrize(("systems", "expected"), [(2, 64), (4, 45)])
def test_anova_sizes_of_cohens_tables(systems, expected):
    # Cohen, Statistical Power Analysis for the Behavioral Sciences (1988), ch. 8 table of n per group for the F test
    # at a = .05, power .80, f = .25: n = 64 for u = 1 (2 groups), 45 for u = 3 (4 groups). Cohen's f^2 =
    # sum (mu_i - mu)^2 / (k sigma^2); with the extreme means minD apart and the others midway that is
    # minD^2 / (2 k sigma^2), so f = .25 is minD = sqrt(2 k) / 4 at sigma^2 = 1
    assert topics_for_anova(math.sqrt(2 * systems) / 4, 1.0, systems) == expected


def test_anova_sizes_of_sakais_evia_2014_table():
    # Sakai, "Topic Set Size Design with Variance Estimates from Two-Way ANOVA", EVIA 2014: for TREC adhoc/news AP
    # (pool depth 1000), alpha 0.05, beta 0.20, m = 10 systems, the ANOVA-based sizes are 166, 42 and 27 topics for
    # minD 0.10, 0.20, 0.25. Its variance is not in the table we have: take the sigma^2 that gives 166 and check the
    # other two follow within one topic (his tool approximates the noncentral F, ours is exact)
    candidates = [s for s in np.arange(0.050, 0.056, 0.00005) if topics_for_anova(0.10, s, 10) == 166]
    assert candidates
    sigma2 = float(np.median(candidates))
    assert abs(topics_for_anova(0.20, sigma2, 10) - 42) <= 1
    assert abs(topics_for_anova(0.25, sigma2, 10) - 27) <= 1


# ---------------------------------------------------------------------------------------------------------------------
# Seeded simulations of the tests at the returned n


SIMULATIONS = 4000


def _near(empirical: float, expected: float) -> bool:
    """Whether a rejection rate over SIMULATIONS draws is within 4 binomial standard errors of `expected`."""
    return abs(empirical - expected) < 4 * math.sqrt(expected * (1 - expected) / SIMULATIONS)


def test_paired_t_test_at_the_returned_n_has_the_power():
    rng = np.random.default_rng(2024)
    sigma2, min_difference = 0.007, 0.05  # TREC-COVID round 1 AP's residual variance, about
    n = topics_for_t_test(min_difference, sigma2)
    assert n is not None
    topic = rng.uniform(0, 0.6, size=(SIMULATIONS, n))  # a topic effect both systems share: pairing removes it
    a = topic + rng.normal(0, math.sqrt(sigma2), size=(SIMULATIONS, n))
    b = topic + min_difference + rng.normal(0, math.sqrt(sigma2), size=(SIMULATIONS, n))
    rejected = (stats.ttest_rel(b, a, axis=1).pvalue < 0.05).mean()
    assert _near(rejected, t_test_power(n, min_difference, sigma2)) and _near(rejected, 0.8)
    # and one topic fewer falls short of 0.8 by the same count
    assert t_test_power(n - 1, min_difference, sigma2) < 0.8


def test_one_way_anova_at_the_returned_n_has_the_power():
    rng = np.random.default_rng(7)
    sigma2, min_difference, systems = 0.02, 0.1, 5
    n = topics_for_anova(min_difference, sigma2, systems)
    assert n is not None
    means = np.array([min_difference / 2, -min_difference / 2, 0.0, 0.0, 0.0])
    scores = means[None, :, None] + rng.normal(0, math.sqrt(sigma2), size=(SIMULATIONS, systems, n))
    pvalues = stats.f_oneway(*[scores[:, i, :] for i in range(systems)], axis=1).pvalue
    rejected = (pvalues < 0.05).mean()
    assert _near(rejected, anova_power(n, min_difference, sigma2, systems)) and _near(rejected, 0.8)


def test_ci_at_the_returned_n_has_the_expected_width():
    rng = np.random.default_rng(9)
    sigma2, width = 0.01, 0.05
    n = topics_for_ci(width, sigma2)
    assert n is not None
    differences = rng.normal(0.03, math.sqrt(2 * sigma2), size=(SIMULATIONS, n))
    widths = 2 * stats.t.ppf(0.975, n - 1) * differences.std(axis=1, ddof=1) / math.sqrt(n)
    assert abs(widths.mean() - ci_expected_width(n, sigma2)) < 4 * widths.std() / math.sqrt(SIMULATIONS)
    assert widths.mean() <= width + 4 * widths.std() / math.sqrt(SIMULATIONS)
    covered = (np.abs(differences.mean(axis=1) - 0.03) <= widths / 2).mean()
    assert _near(covered, 0.95)


# ---------------------------------------------------------------------------------------------------------------------
# The whole design


def test_topic_set_design_from_a_score_matrix():
    rng = np.random.default_rng(1)
    x = rng.uniform(0.1, 0.5, size=(6, 1)) + rng.uniform(0, 0.4, size=(1, 40)) + rng.normal(0, 0.08, size=(6, 40))
    runs = [f"r{i}" for i in range(6)]
    ticks = []
    result = topic_set_design(x, runs, min_differences=[0.05, 0.1], progress=ticks.append)
    sigma2 = residual_variance(x)
    assert result.sigma2 == result.sigma2_two_way == pytest.approx(sigma2)
    assert result.sigma2_one_way == pytest.approx(pooled_variance(x))
    assert result.systems == 6 and result.ci_widths == [0.05, 0.1]  # m = the runs; delta = the min differences
    assert result.t_test == [topics_for_t_test(d, sigma2) for d in (0.05, 0.1)]
    assert result.anova == [topics_for_anova(d, sigma2, 6) for d in (0.05, 0.1)]
    assert result.ci == [topics_for_ci(w, sigma2) for w in (0.05, 0.1)]
    assert result.t_test[0] > result.t_test[1] and result.anova[0] > result.t_test[0]
    assert ticks[-1] == 1.0 and len(ticks) == len(result.curve) == 30  # 0.05 and 0.1 are on the grid already
    # with this campaign's 40 topics the detectable differences have exactly the power sought
    assert t_test_power(40, result.detectable_t_test, sigma2) == pytest.approx(0.8, abs=1e-6)
    assert anova_power(40, result.detectable_anova, sigma2, 6) == pytest.approx(0.8, abs=1e-6)
    assert result.current_ci_width == pytest.approx(ci_expected_width(40, sigma2))
    data = result.to_dict()
    assert data["designs"][0] == {"min_difference": 0.05, "t_test": result.t_test[0], "anova": result.anova[0]}
    assert data["curve"]["value"][:2] == [0.01, 0.02] and data["n_runs"] == 6 and data["n_topics"] == 40
    one_way = topic_set_design(x, runs, variance="one-way", systems=3, ci_widths=[0.2])
    assert one_way.sigma2 == pytest.approx(pooled_variance(x)) and one_way.systems == 3
    assert one_way.ci == [topics_for_ci(0.2, pooled_variance(x))] and one_way.t_test[0] > result.t_test[0]


def test_topic_set_design_refuses_what_it_cannot_estimate():
    x = np.full((3, 5), 0.5)
    with pytest.raises(ValueError, match="finite"):
        topic_set_design(np.where(np.eye(3, 5) > 0, np.nan, x), ["a", "b", "c"])
    with pytest.raises(ValueError, match="2 runs"):
        topic_set_design(x[:1], ["a"])
    with pytest.raises(ValueError, match="positive"):
        topic_set_design(x, ["a", "b", "c"], min_differences=[0.0])
    with pytest.raises(ValueError, match="2 topics"):
        topic_set_design(x[:, :1], ["a", "b", "c"])
    # one run: the pooled variance still works, with m given
    assert topic_set_design(x[:1] + np.arange(5) / 10, ["a"], variance="one-way", systems=2).sigma2 > 0


def test_detectable_difference_inverts_the_power():
    d = detectable_difference(lambda v: t_test_power(50, v, 0.01), 0.8)
    assert topics_for_t_test(d * 1.0001, 0.01) == 50  # a hair above: 50 topics suffice, 49 do not
    assert topics_for_t_test(d * 0.999, 0.01) == 51
