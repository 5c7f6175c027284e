"""Confidence intervals over topics: each run's mean, pairwise differences, ranks, and tiers of runs.

Conventions (SPEC section 6; every board, report and `trecpool eval --ci` uses these):

* **Paired bootstrap over topics**, seeded. Replicate b draws n topic indices with replacement,
  ``np.random.default_rng(seed).integers(0, n, (B, n))`` (one draw for all runs, so replicates are paired: every run
  sees the same resampled topics), exactly as ``scipy.stats.bootstrap`` draws them; a run's replicate mean is then
  identical (to rounding) to scipy's for the same seed, and so are the intervals (tests compare them).
* **Percentile** interval (default): the (1 - level)/2 and (1 + level)/2 quantiles (linear interpolation) of the
  replicate means. **BCa** (Efron & Tibshirani, *An Introduction to the Bootstrap*, 14.3): bias correction z0 from
  the share of replicates below the estimate (ties, within 1e-12 of the largest score, count half) and acceleration
  from the jackknife over topics, as scipy computes them; a run whose jackknife has no spread (constant scores) gets
  a = 0 where scipy gives NaN.
* **Sampled or incomplete qrels** add the judgement sampling variance: given ``sampling_variance`` [run, topic] (for
  xinfAP/infAP the stratified jackknife of `analyses.budget`), the variance of a run's mean from sampling is
  ``sum_t v_rt / n^2`` (topics judged independently), and each side of the bootstrap interval is widened in
  quadrature: ``mean - sqrt((mean - low)^2 + (z s)^2)``, z the normal quantile of the level, s that standard error.
  For ranks the replicate means get a normal draw with that standard error added; for a difference the two runs'
  sampling variances are summed (they share one sample, whose covariance is mostly positive, so the sum is
  conservative).
* **Pairwise**: every difference mean_i - mean_j with its bootstrap interval, the paired effect size
  d_z = mean(d) / sd(d) over topics (Cohen's d for paired samples; 0 when sd is 0 and the mean is 0, infinite
  otherwise), a two-sided p-value, and p-values adjusted across all pairs by Holm (family-wise error) or
  Benjamini-Hochberg (false discovery rate). The p-value is the paired t-test's by default (`paired_t_pvalues`,
  scipy.stats.ttest_rel's): Urbano, Lima & Hanjalic (SIGIR 2019) found its error rates on IR score data as good as
  the randomization test's, and unlike a Monte Carlo p-value, which cannot go below 1 / (B + 1), it has no floor: with
  B = 10,000 and Holm over 528 pairs (33 runs) no Monte Carlo p-value could reach 0.05 and every run would share one
  tier. `test="randomization"` takes the paired randomization test (`significance.pairwise_randomization`).
* **Tiers** (best first): a run joins the current tier unless its adjusted p-value against the tier's first (best)
  run is below alpha, in which case it opens the next tier; so every run of a tier is not separable from the run
  that leads it, and a tier's leader is separable from the one before.
* **Rank intervals**: each replicate ranks the runs by mean (competition ranking, 1 + the number of runs with a
  strictly larger replicate mean); a run's interval is the lower and upper quantile of its replicate ranks, taken as
  ranks ('lower' and 'higher' interpolation), so it always holds whole ranks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np
import scipy.stats
from scipy.special import ndtr, ndtri

from app.evaluation.statistics.significance import pairwise_randomization

Method = Literal["percentile", "BCa"]
Correction = Literal["holm", "bh"]
METHODS: tuple[Method, ...] = ("percentile", "BCa")
CORRECTIONS: tuple[Correction, ...] = ("holm", "bh")
DEFAULT_RESAMPLES = 10_000
_CHUNK_ELEMENTS = 1 << 22  # float64 elements of a replicate block (32 MiB)


@dataclass(frozen=True)
class MeanIntervals:
    """Each run's mean over topics with its confidence interval (module docstring)."""

    mean: np.ndarray  # [run]
    low: np.ndarray  # [run]
    high: np.ndarray  # [run]
    level: float
    method: str
    n_resamples: int
    seed: int
    sampling_se: np.ndarray | None  # [run] standard error of the mean from sampled judgements, added; None if none

    def rows(self) -> list[dict[str, float | None]]:
        """One plain dict per run: mean, ci_low, ci_high, level (None for a value that is not finite)."""
        return [
            {"mean": _finite(m), "ci_low": _finite(lo), "ci_high": _finite(hi), "level": self.level}
            for m, lo, hi in zip(self.mean.tolist(), self.low.tolist(), self.high.tolist(), strict=True)
        ]

    def describe(self) -> dict[str, object]:
        """How the intervals were computed, for provenance."""
        return describe(self.level, self.method, self.n_resamples, self.seed, self.sampling_se is not None)


def describe(level: float, method: str, n_resamples: int, seed: int, sampled: bool) -> dict[str, object]:
    """The interval's provenance as boards and reports print it."""
    kind = "BCa" if method == "BCa" else "percentile"
    text = f"{level:.0%} paired bootstrap {kind} interval over topics ({n_resamples} resamples, seed {seed})"
    if sampled:
        text += ", widened by the sampling variance of the judged sample"
    return {"level": level, "method": method, "n_resamples": n_resamples, "seed": seed, "sampled": sampled,
            "text": text}  # fmt: skip


def _finite(value: float) -> float | None:
    """The value, or None when it is NaN or infinite."""
    return float(value) if np.isfinite(value) else None


# --- validation -------------------------------------------------------------------------------------------------------


def _scores(scores: object) -> np.ndarray:
    """Finite float64 [run, topic] (a single run's [topic] becomes [1, topic])."""
    array = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    if array.ndim != 2:
        raise ValueError(f"scores must be [run, topic], got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError("scores must be finite (a topic a run lacks scores 0)")
    return array


def _level(level: float) -> float:
    """A confidence level in (0, 1)."""
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    return float(level)


def _resamples(n_resamples: object) -> int:
    """A positive number of resamples."""
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int | np.integer) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    return int(n_resamples)


def _method(method: str) -> Method:
    """'percentile' or 'BCa' (any case)."""
    for known in METHODS:
        if method.lower() == known.lower():
            return known
    raise ValueError(f"method must be one of {METHODS}, got {method!r}")


def _sampling_se(sampling_variance: object | None, shape: tuple[int, int]) -> np.ndarray | None:
    """Standard error of each run's mean from per-topic sampling variances [run, topic] (None when not given)."""
    if sampling_variance is None:
        return None
    variance = np.atleast_2d(np.asarray(sampling_variance, dtype=np.float64))
    if variance.shape != shape:
        raise ValueError(f"sampling_variance must have the scores' shape {shape}, got {variance.shape}")
    if np.any(~np.isfinite(variance)) or np.any(variance < 0):
        raise ValueError("sampling_variance must be finite and non-negative")
    n = max(shape[1], 1)
    se: np.ndarray = np.sqrt(variance.sum(axis=1)) / n
    return se


# --- the bootstrap ----------------------------------------------------------------------------------------------------


def topic_draws(n_topic: int, n_resamples: int, seed: int) -> np.ndarray:
    """The replicates' topic indices [B, n] (scipy.stats.bootstrap's draw for the same seed)."""
    rng = np.random.default_rng(seed)
    draws: np.ndarray = rng.integers(0, n_topic, (n_resamples, n_topic))
    return draws


def _draw_blocks(draws: np.ndarray, n_run: int) -> Iterator[tuple[int, np.ndarray]]:
    """(first row, topic counts [rows, n]) of the draws, in blocks bounded by _CHUNK_ELEMENTS."""
    n_resamples, n_topic = draws.shape
    rows = max(1, _CHUNK_ELEMENTS // max(n_run, n_topic, 1))
    for start in range(0, n_resamples, rows):
        block = draws[start : start + rows]
        offsets = np.arange(len(block))[:, None] * n_topic
        counts = np.bincount((block + offsets).ravel(), minlength=len(block) * n_topic).reshape(len(block), n_topic)
        yield start, counts.astype(np.float64)


def replicate_means(scores: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """Each run's mean on each replicate [B, run]: topic counts times scores, over n."""
    n_run, n_topic = scores.shape
    out = np.empty((draws.shape[0], n_run))
    for start, counts in _draw_blocks(draws, n_run):
        for run in range(n_run):  # one product per run: its values do not depend on the other runs (or a block's)
            out[start : start + len(counts), run] = counts @ scores[run] / n_topic
    return out


def _quantiles(replicates: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """Per column j of replicates [B, k], its quantile at probabilities[j] (linear), -> [k]."""
    ordered = np.sort(replicates, axis=0)
    position = probabilities * (replicates.shape[0] - 1)
    below = np.clip(np.floor(position).astype(np.int64), 0, replicates.shape[0] - 1)
    above = np.clip(below + 1, 0, replicates.shape[0] - 1)
    columns = np.arange(replicates.shape[1])
    fraction = position - below
    low, high = ordered[below, columns], ordered[above, columns]
    quantile: np.ndarray = low + fraction * (high - low)
    return np.where(fraction == 0, low, quantile)


def _bca_probabilities(scores: np.ndarray, replicates: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """BCa's adjusted lower and upper probabilities per run (Efron & Tibshirani 14.3, as scipy computes them)."""
    n_topic = scores.shape[1]
    estimate = scores.mean(axis=1)
    tolerance = 1e-12 * np.maximum(np.abs(scores).max(axis=1, initial=0.0), 1e-300)  # equal but for rounding: a tie
    below = np.sum(replicates < estimate - tolerance, axis=0)
    at_most = np.sum(replicates <= estimate + tolerance, axis=0)
    z0 = ndtri((below + at_most) / 2.0 / replicates.shape[0])
    total = scores.sum(axis=1, keepdims=True)
    jackknife = (total - scores) / max(n_topic - 1, 1)  # [run, topic]: the mean without each topic
    u = (n_topic - 1) * (jackknife.mean(axis=1, keepdims=True) - jackknife)
    numerator = np.sum(u**3, axis=1) / n_topic**3
    denominator = (np.sum(u**2, axis=1) / n_topic**2) ** 1.5
    accel = np.divide(numerator, 6.0 * denominator, out=np.zeros_like(numerator), where=denominator > 0)
    z_alpha = float(ndtri(alpha))
    sides = []
    for z in (z_alpha, -z_alpha):
        shifted = z0 + z
        sides.append(ndtr(z0 + shifted / (1.0 - accel * shifted)))
    return sides[0], sides[1]


def mean_intervals(
    scores: object,
    *,
    level: float = 0.95,
    method: str = "percentile",
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    sampling_variance: object | None = None,
    draws: np.ndarray | None = None,
) -> MeanIntervals:
    """Each run's mean over topics with its paired bootstrap interval (module docstring); scores [run, topic].

    No topics: mean and interval NaN. One topic: the interval is that topic's score (widened by any sampling
    variance). `draws` reuses topic indices already drawn (`topic_draws`) so several calls stay paired."""
    values = _scores(scores)
    level, chosen, n_resamples = _level(level), _method(method), _resamples(n_resamples)
    n_run, n_topic = values.shape
    se = _sampling_se(sampling_variance, values.shape)
    if n_topic == 0:
        nan = np.full(n_run, np.nan)
        return MeanIntervals(nan, nan, nan, level, chosen, n_resamples, seed, se)
    draws = topic_draws(n_topic, n_resamples, seed) if draws is None else draws
    replicates = replicate_means(values, draws)
    alpha = (1.0 - level) / 2.0
    if chosen == "BCa":
        lower_p, upper_p = _bca_probabilities(values, replicates, alpha)
    else:
        lower_p, upper_p = np.full(n_run, alpha), np.full(n_run, 1.0 - alpha)
    mean = values.mean(axis=1)
    low, high = _quantiles(replicates, lower_p), _quantiles(replicates, upper_p)
    low, high = widen(mean, low, high, se, level)
    return MeanIntervals(mean, low, high, level, chosen, n_resamples, seed, se)


def widen(
    estimate: np.ndarray, low: np.ndarray, high: np.ndarray, se: np.ndarray | None, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Each side of an interval widened in quadrature by z times a standard error (unchanged when se is None)."""
    if se is None:
        return low, high
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    extra = (z * se) ** 2
    return estimate - np.sqrt((estimate - low) ** 2 + extra), estimate + np.sqrt((high - estimate) ** 2 + extra)


# --- pairs, tiers, ranks ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pairwise:
    """Every pair (i < j) of runs: difference of means with its interval, effect size, raw and adjusted p-values."""

    first: np.ndarray  # [pair] run index i
    second: np.ndarray  # [pair] run index j
    difference: np.ndarray  # mean_i - mean_j
    low: np.ndarray
    high: np.ndarray
    effect_size: np.ndarray  # paired d_z
    pvalue: np.ndarray  # paired randomization test, two-sided
    adjusted: np.ndarray  # Holm or Benjamini-Hochberg over all pairs
    correction: str
    level: float

    def matrix(self, n_run: int) -> np.ndarray:
        """The adjusted p-values as a symmetric [run, run] matrix with ones on the diagonal."""
        out = np.ones((n_run, n_run))
        out[self.first, self.second] = self.adjusted
        out[self.second, self.first] = self.adjusted
        return out


def adjust_pvalues(pvalues: object, correction: str = "holm") -> np.ndarray:
    """P-values adjusted for multiple comparisons: Holm's step-down or Benjamini-Hochberg's step-up (monotone, <= 1).

    As statsmodels' multipletests('holm' / 'fdr_bh') define them."""
    p = np.asarray(pvalues, dtype=np.float64).reshape(-1)
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {correction!r}")
    if np.any((p < 0) | (p > 1) | ~np.isfinite(p)):
        raise ValueError("p-values must be in [0, 1]")
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    ranked = p[order]
    if correction == "holm":
        stepped = np.maximum.accumulate((m - np.arange(m)) * ranked)
    else:
        stepped = np.minimum.accumulate(m / np.arange(m, 0, -1) * ranked[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(stepped, 1.0)
    return out


def effect_sizes(differences: np.ndarray) -> np.ndarray:
    """Paired d_z per row of per-topic differences [pair, topic]: mean / sample sd (0 for 0 / 0, +-inf for c / 0;
    an sd below 1e-12 of the largest difference is taken as 0)."""
    mean = differences.mean(axis=1)
    sd = differences.std(axis=1, ddof=1) if differences.shape[1] > 1 else np.zeros(len(differences))
    spread = sd > 1e-12 * np.maximum(np.abs(differences).max(axis=1, initial=0.0), 1e-300)  # not rounding noise
    with np.errstate(divide="ignore", invalid="ignore"):
        size = mean / sd
    flat = np.where(np.abs(mean) > 1e-15, np.copysign(np.inf, mean), 0.0)
    return np.where(spread, size, flat)


def paired_t_pvalues(scores: object) -> np.ndarray:
    """Two-sided paired t-test p-values [run, run] over topics (scipy.stats.ttest_rel's; diagonal 1).

    Differences with no spread: p = 1 when their mean is 0, else 0 (scipy gives NaN); fewer than 2 topics: all 1."""
    values = _scores(scores)
    n_run, n_topic = values.shape
    out = np.ones((n_run, n_run))
    if n_run < 2 or n_topic < 2:
        return out
    first, second = np.triu_indices(n_run, k=1)
    differences = values[first] - values[second]
    size = effect_sizes(differences)  # d_z; t = d_z sqrt(n)
    with np.errstate(invalid="ignore"):
        p = 2.0 * scipy.stats.t.sf(np.abs(size) * np.sqrt(n_topic), n_topic - 1)
    p = np.where(np.isinf(size), 0.0, np.where(size == 0, 1.0, p))
    out[first, second] = out[second, first] = np.clip(p, 0.0, 1.0)
    return out


def pairwise(
    scores: object,
    *,
    level: float = 0.95,
    correction: str = "holm",
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    sampling_variance: object | None = None,
    test: str = "t",
    test_resamples: int = DEFAULT_RESAMPLES,
) -> Pairwise:
    """Every pair of runs: difference with its percentile bootstrap interval, d_z, p (paired t-test, or the
    randomization test with `test_resamples`), adjusted p."""
    values = _scores(scores)
    level, n_resamples = _level(level), _resamples(n_resamples)
    n_run, n_topic = values.shape
    first, second = np.triu_indices(n_run, k=1)
    se = _sampling_se(sampling_variance, values.shape)
    difference = values.mean(axis=1)[first] - values.mean(axis=1)[second] if n_topic else np.zeros(len(first))
    low, high = difference.copy(), difference.copy()
    if n_topic and len(first):
        replicates = replicate_means(values, topic_draws(n_topic, n_resamples, seed))
        alpha = (1.0 - level) / 2.0
        step = max(1, _CHUNK_ELEMENTS // n_resamples)
        for start in range(0, len(first), step):
            i, j = first[start : start + step], second[start : start + step]
            block = replicates[:, i] - replicates[:, j]
            low[start : start + step] = _quantiles(block, np.full(len(i), alpha))
            high[start : start + step] = _quantiles(block, np.full(len(i), 1.0 - alpha))
        pair_se = None if se is None else np.sqrt(se[first] ** 2 + se[second] ** 2)
        low, high = widen(difference, low, high, pair_se, level)
    sizes = effect_sizes(values[first] - values[second]) if n_topic else np.zeros(len(first))
    if test not in ("t", "randomization"):
        raise ValueError(f"test must be 't' or 'randomization', got {test!r}")
    if test == "t":
        matrix = paired_t_pvalues(values)
    else:
        matrix = pairwise_randomization(values, n_resamples=test_resamples, seed=seed)
    raw = matrix[first, second]
    return Pairwise(first, second, difference, low, high, sizes, raw, adjust_pvalues(raw, correction), correction,
                    level)  # fmt: skip


def tiers(means: object, adjusted: np.ndarray, alpha: float = 0.05) -> np.ndarray:
    """Tier of each run, 1 = best (module docstring); `adjusted` is the [run, run] matrix of adjusted p-values."""
    values = np.asarray(means, dtype=np.float64)
    order = sorted(range(len(values)), key=lambda r: (-values[r] if np.isfinite(values[r]) else np.inf, r))
    out = np.zeros(len(values), dtype=np.int64)
    tier, leader = 0, -1
    for run in order:
        if leader < 0 or adjusted[leader, run] < alpha:
            tier, leader = tier + 1, run
        out[run] = tier
    return out


def rank_intervals(
    scores: object,
    *,
    level: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    sampling_variance: object | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Each run's rank interval (best rank, worst rank) over the paired bootstrap replicates [run] each (docstring)."""
    values = _scores(scores)
    level, n_resamples = _level(level), _resamples(n_resamples)
    n_run, n_topic = values.shape
    if n_topic == 0 or n_run == 0:
        ones = np.ones(n_run, dtype=np.int64)
        return ones, np.full(n_run, n_run, dtype=np.int64)
    replicates = replicate_means(values, topic_draws(n_topic, n_resamples, seed))
    se = _sampling_se(sampling_variance, values.shape)
    if se is not None:
        noise = np.random.default_rng([seed, 1]).standard_normal(replicates.shape)
        replicates = replicates + noise * se
    ranks = np.empty(replicates.shape, dtype=np.int64)
    rows = max(1, _CHUNK_ELEMENTS // max(n_run * n_run, 1))
    for start in range(0, len(replicates), rows):
        block = replicates[start : start + rows]  # [rows, run]: 1 + the runs with a strictly larger mean
        ranks[start : start + rows] = 1 + np.sum(block[:, None, :] > block[:, :, None], axis=2)
    alpha = (1.0 - level) / 2.0
    best = np.quantile(ranks, alpha, axis=0, method="lower").astype(np.int64)
    worst = np.quantile(ranks, 1.0 - alpha, axis=0, method="higher").astype(np.int64)
    return best, worst
