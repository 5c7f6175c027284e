"""Discriminative power: the share of run pairs a paired randomization test finds significantly different."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from app.evaluation.statistics import significance


def discriminative_power(
    scores: np.ndarray,
    *,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: significance.SeedLike = 0,
    alternative: significance.Alternative = "two-sided",
) -> float:
    """Share of the n(n-1)/2 run pairs with p < alpha; scores [n_run, n_topic] (paired by topic)."""
    pvalues = significance.pairwise_randomization(
        np.asarray(scores, dtype=np.float64), n_resamples=n_resamples, seed=seed, alternative=alternative
    )
    return significance.discriminative_power(pvalues, alpha)


def power_result(
    runs: Sequence[str],
    measures: Sequence[str],
    values: np.ndarray,
    *,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
) -> dict[str, object]:
    """The power analysis as plain data (CLI and REST alike): values [run, measure, topic] (NaN counts 0) -> the
    discriminative power of each measure; `progress` is called after each measure."""
    values = np.nan_to_num(np.asarray(values, dtype=np.float64))
    power = {}
    for i, m in enumerate(measures):
        power[m] = discriminative_power(values[:, i, :], alpha=alpha, n_resamples=n_resamples, seed=seed)
        if progress is not None:
            progress((i + 1) / len(measures))
    return {
        "measure": measures[0],
        "discriminative_power": power[measures[0]],
        "measures": list(measures),
        "power": power,
        "alpha": alpha,
        "n_resamples": n_resamples,
        "seed": seed,
        "runs": list(runs),
    }
