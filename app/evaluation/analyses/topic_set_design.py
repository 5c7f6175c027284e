"""Topic-set design for next year: how many topics a collection needs to tell systems apart (Sakai, "Topic set size
design", Information Retrieval Journal 19(3), 2016; "Laboratory Experiments in Information Retrieval", 2018, ch. 6).

The variance sigma^2 of a measure's per-topic scores comes from this campaign's score matrix x[run, topic]:

- "two-way" (default): the residual mean square V_E of a two-way ANOVA without replication (run and topic as
  factors), SS_E / ((R - 1)(T - 1)) with SS_E = sum (x_rt - x_r. - x_.t + x_..)^2: the within-system variance once
  the topic effect is taken out, which is what a paired comparison of two systems over the same topics sees.
- "one-way": the pooled within-run variance, sum_r sum_t (x_rt - x_r.)^2 / (R (T - 1)) (one-way ANOVA's V_E, topic
  effect included: larger, so more topics).

Both are reported; the chosen one drives the three designs. Each gives the smallest topic-set size n >= 2 for which

- t-test: a two-sided paired t-test at `alpha` has power >= 1 - `beta` against a true difference minD between two
  systems. The difference of two systems' scores has variance sigma_t^2 = 2 sigma^2 (Sakai's choice, independent
  errors); power(n) = P(|T'| > t_{1-alpha/2}(n - 1)) with T' noncentral t, n - 1 degrees of freedom and noncentrality
  sqrt(n) minD / sigma_t.
- ANOVA: a one-way ANOVA over m systems with n topics each has power >= 1 - beta when the best and the worst
  system are minD apart (the minimum detectable range; the least favourable configuration puts the others midway,
  so lambda = n minD^2 / (2 sigma^2)); power(n) = P(F' > F_{1-alpha}(m - 1, m(n - 1))), F' noncentral F.
- CI: the expected width of the 100(1 - alpha) % confidence interval of a paired difference, 2 t_{1-alpha/2}(n - 1)
  E[s_d] / sqrt(n), is at most delta; E[s_d] = sigma_t sqrt(2 / (n - 1)) Gamma(n / 2) / Gamma((n - 1) / 2) (the
  expected sample standard deviation of n normal differences).

Sakai's Excel tools (samplesizeTTEST2, samplesizeANOVA2, samplesizeCI2) start from a normal approximation and check
the power with approximations of the noncentral t and F; here the powers are exact (scipy.stats.nct, ncf) and n is
the smallest size whose power reaches 1 - beta (found by doubling, then bisection, over a power that grows with n),
so a size can differ from his tools' by a topic. A size above `N_MAX` is reported as None.

For this campaign's own topic count the result also says what it can detect: the smallest minD each test finds with
power 1 - beta, and the expected CI width.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy import optimize, special, stats

Progress = Callable[[float], None]
Variance = Literal["two-way", "one-way"]
VARIANCES: tuple[str, ...] = ("two-way", "one-way")
N_MAX = 10_000_000  # larger topic sets are reported as None
CURVE = tuple(round(0.01 * k, 2) for k in range(1, 31))  # minD (and delta) values of the figure's curve: 0.01..0.30


def residual_variance(values: np.ndarray) -> float:
    """V_E of a two-way ANOVA without replication over x[run, topic]: SS_E / ((R - 1)(T - 1))."""
    x = np.asarray(values, dtype=np.float64)
    n_run, n_topic = x.shape
    if n_run < 2 or n_topic < 2:
        raise ValueError("the two-way residual variance needs at least 2 runs and 2 topics")
    residual = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + x.mean()
    return float((residual**2).sum() / ((n_run - 1) * (n_topic - 1)))


def pooled_variance(values: np.ndarray) -> float:
    """The pooled within-run variance over x[run, topic] (one-way ANOVA's V_E): sum (x - x_r.)^2 / (R (T - 1))."""
    x = np.asarray(values, dtype=np.float64)
    n_run, n_topic = x.shape
    if n_run < 1 or n_topic < 2:
        raise ValueError("the pooled within-run variance needs at least 2 topics")
    return float(((x - x.mean(axis=1, keepdims=True)) ** 2).sum() / (n_run * (n_topic - 1)))


def t_test_power(n: int, min_difference: float, sigma2: float, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test over n topics against a true difference minD (sigma_t^2 = 2 sigma^2)."""
    if n < 2:
        raise ValueError("a paired t-test needs at least 2 topics")
    if sigma2 == 0:
        return 1.0 if min_difference > 0 else alpha
    df = n - 1
    critical = stats.t.ppf(1 - alpha / 2, df)
    noncentrality = math.sqrt(n) * min_difference / math.sqrt(2 * sigma2)
    # P(T' < -c) as P(T'(-noncentrality) > c): scipy's nct.cdf(-c) is NaN above noncentrality ~7.5 (where it is
    # below 1e-14), its sf is finite everywhere
    return float(stats.nct.sf(critical, df, noncentrality) + stats.nct.sf(critical, df, -noncentrality))


def anova_power(n: int, min_difference: float, sigma2: float, systems: int, alpha: float = 0.05) -> float:
    """Power of one-way ANOVA over `systems` systems of n topics each when the extreme means are minD apart
    (lambda = n minD^2 / (2 sigma^2))."""
    if n < 2 or systems < 2:
        raise ValueError("a one-way ANOVA needs at least 2 systems and 2 topics")
    if sigma2 == 0:
        return 1.0 if min_difference > 0 else alpha
    dfn, dfd = systems - 1, systems * (n - 1)
    critical = stats.f.ppf(1 - alpha, dfn, dfd)
    return float(stats.ncf.sf(critical, dfn, dfd, n * min_difference**2 / (2 * sigma2)))


def expected_sd_factor(n: int) -> float:
    """E[s] / sigma for the sample standard deviation s of n normal values: sqrt(2/(n-1)) Gamma(n/2)/Gamma((n-1)/2)."""
    return math.sqrt(2 / (n - 1)) * math.exp(special.gammaln(n / 2) - special.gammaln((n - 1) / 2))


def ci_expected_width(n: int, sigma2: float, alpha: float = 0.05) -> float:
    """Expected width of the 100(1 - alpha) % t interval of a paired difference over n topics (sigma_t^2 = 2 sigma2)."""
    if n < 2:
        raise ValueError("a confidence interval needs at least 2 topics")
    sigma_t = math.sqrt(2 * sigma2)
    return float(2 * stats.t.ppf(1 - alpha / 2, n - 1) * expected_sd_factor(n) * sigma_t / math.sqrt(n))


def smallest_n(enough: Callable[[int], bool], n_max: int = N_MAX) -> int | None:
    """The smallest n in 2..n_max for which `enough(n)` holds, `enough` being false then true as n grows (None if
    it never holds up to n_max): doubling, then bisection."""
    if enough(2):
        return 2
    low, high = 2, 4  # enough(low) is false
    while not enough(high):
        if high >= n_max:
            return None
        low, high = high, min(2 * high, n_max)
    while high - low > 1:
        middle = (low + high) // 2
        if enough(middle):
            high = middle
        else:
            low = middle
    return high


def topics_for_t_test(min_difference: float, sigma2: float, alpha: float = 0.05, beta: float = 0.2) -> int | None:
    """The smallest n whose paired t-test at alpha has power >= 1 - beta for a difference minD."""
    return smallest_n(lambda n: t_test_power(n, min_difference, sigma2, alpha) >= 1 - beta)


def topics_for_anova(
    min_difference: float, sigma2: float, systems: int, alpha: float = 0.05, beta: float = 0.2
) -> int | None:
    """The smallest n whose one-way ANOVA over `systems` systems has power >= 1 - beta for a range minD."""
    return smallest_n(lambda n: anova_power(n, min_difference, sigma2, systems, alpha) >= 1 - beta)


def topics_for_ci(width: float, sigma2: float, alpha: float = 0.05) -> int | None:
    """The smallest n whose paired-difference CI has expected width <= delta (`width`)."""
    return smallest_n(lambda n: ci_expected_width(n, sigma2, alpha) <= width)


def detectable_difference(power: Callable[[float], float], target: float) -> float:
    """The smallest minD whose `power(minD)` reaches `target` (power grows with minD from alpha at 0)."""
    high = 1.0
    while power(high) < target:
        high *= 2
    return float(optimize.brentq(lambda d: power(d) - target, 0.0, high, xtol=1e-10))


@dataclass(frozen=True)
class TopicSetDesign:
    """Sakai's three topic-set sizes per minimum detectable difference (and CI width), from this campaign's variance."""

    measure: str
    runs: list[str]
    n_topics: int
    variance: str  # which estimate sigma2 is: "two-way" or "one-way"
    sigma2: float
    sigma2_two_way: float
    sigma2_one_way: float
    alpha: float
    beta: float
    systems: int  # m of the ANOVA design
    min_differences: list[float]
    t_test: list[int | None]  # per min difference
    anova: list[int | None]
    ci_widths: list[float]
    ci: list[int | None]  # per CI width
    curve: list[float]  # minD (t-test, ANOVA) and delta (CI) of the figure's curve
    curve_t_test: list[int | None]
    curve_anova: list[int | None]
    curve_ci: list[int | None]
    detectable_t_test: float  # with this campaign's n_topics: the smallest minD found with power 1 - beta
    detectable_anova: float
    current_ci_width: float  # and the expected CI width

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: the variance, one row per minD and per CI width, the curve, this campaign's power."""
        return {
            "measure": self.measure,
            "variance": self.variance,
            "sigma2": self.sigma2,
            "sigma2_two_way": self.sigma2_two_way,
            "sigma2_one_way": self.sigma2_one_way,
            "n_runs": len(self.runs),
            "n_topics": self.n_topics,
            "alpha": self.alpha,
            "beta": self.beta,
            "systems": self.systems,
            "designs": [
                {"min_difference": d, "t_test": t, "anova": a}
                for d, t, a in zip(self.min_differences, self.t_test, self.anova, strict=True)
            ],
            "ci": [{"ci_width": w, "n": n} for w, n in zip(self.ci_widths, self.ci, strict=True)],
            "curve": {
                "value": self.curve,
                "t_test": self.curve_t_test,
                "anova": self.curve_anova,
                "ci": self.curve_ci,
            },
            "current": {
                "n_topics": self.n_topics,
                "t_test_min_difference": self.detectable_t_test,
                "anova_min_difference": self.detectable_anova,
                "ci_width": self.current_ci_width,
            },
            "runs": self.runs,
        }


def topic_set_design(
    values: np.ndarray,
    runs: Sequence[str],
    *,
    measure: str = "AP",
    alpha: float = 0.05,
    beta: float = 0.2,
    min_differences: Sequence[float] = (0.05,),
    systems: int | None = None,
    ci_widths: Sequence[float] | None = None,
    variance: Variance = "two-way",
    progress: Progress | None = None,
) -> TopicSetDesign:
    """Topic-set sizes for next year from this campaign's scores values[run, topic] (complete: no NaN): sigma^2 by
    `variance`, then per minD the t-test and ANOVA sizes (m = `systems`, default the number of runs) and per CI
    width delta (default: the min differences) the CI size; `progress` is called after each point of the curve."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] != len(runs):
        raise ValueError("values must be [run, topic] with one row per run")
    if not np.isfinite(x).all():
        raise ValueError("the scores must be finite (a topic a run lacks counts 0: replace NaN before)")
    if variance not in VARIANCES:
        raise ValueError(f"variance must be one of {', '.join(VARIANCES)}")
    if len(runs) < 2 and variance == "two-way":
        raise ValueError("the two-way residual variance needs at least 2 runs (use variance one-way)")
    if not 0 < alpha < 1 or not 0 < beta < 1:
        raise ValueError("alpha and beta must be in (0, 1)")
    if not min_differences or any(d <= 0 for d in min_differences):
        raise ValueError("min differences must be positive")
    widths = list(min_differences if ci_widths is None else ci_widths)
    if not widths or any(w <= 0 for w in widths):
        raise ValueError("CI widths must be positive")
    m = len(runs) if systems is None else systems
    if m < 2:
        raise ValueError("the ANOVA design needs at least 2 systems")
    two_way = residual_variance(x) if len(runs) >= 2 else math.nan
    one_way = pooled_variance(x)
    sigma2 = two_way if variance == "two-way" else one_way
    differences = [float(d) for d in min_differences]
    t_sizes = [topics_for_t_test(d, sigma2, alpha, beta) for d in differences]
    anova_sizes = [topics_for_anova(d, sigma2, m, alpha, beta) for d in differences]
    ci_sizes = [topics_for_ci(w, sigma2, alpha) for w in widths]
    curve = sorted({*CURVE, *differences})
    curve_t, curve_anova, curve_ci = [], [], []
    for i, d in enumerate(curve):
        curve_t.append(topics_for_t_test(d, sigma2, alpha, beta))
        curve_anova.append(topics_for_anova(d, sigma2, m, alpha, beta))
        curve_ci.append(topics_for_ci(d, sigma2, alpha))
        if progress is not None:
            progress((i + 1) / len(curve))
    n_topics = x.shape[1]  # at least 2: the variances need them
    found_t = detectable_difference(lambda d: t_test_power(n_topics, d, sigma2, alpha), 1 - beta)
    found_anova = detectable_difference(lambda d: anova_power(n_topics, d, sigma2, m, alpha), 1 - beta)
    width_now = ci_expected_width(n_topics, sigma2, alpha)
    return TopicSetDesign(
        measure=measure,
        runs=list(runs),
        n_topics=n_topics,
        variance=variance,
        sigma2=sigma2,
        sigma2_two_way=two_way,
        sigma2_one_way=one_way,
        alpha=alpha,
        beta=beta,
        systems=m,
        min_differences=differences,
        t_test=t_sizes,
        anova=anova_sizes,
        ci_widths=[float(w) for w in widths],
        ci=ci_sizes,
        curve=[float(v) for v in curve],
        curve_t_test=curve_t,
        curve_anova=curve_anova,
        curve_ci=curve_ci,
        detectable_t_test=found_t,
        detectable_anova=found_anova,
        current_ci_width=width_now,
    )
