"""Discriminative power: the share of run pairs a paired randomization test finds significantly different."""

from __future__ import annotations

import numpy as np

from app.evaluation import significance


def discriminative_power(scores: np.ndarray, *, alpha: float = 0.05, **test_options: object) -> float:
    """Share of the n(n-1)/2 run pairs with p < alpha; scores [n_run, n_topic] (paired by topic)."""
    pvalues = significance.pairwise_randomization(np.asarray(scores, dtype=np.float64), **test_options)  # type: ignore[arg-type]
    return significance.discriminative_power(pvalues, alpha)
