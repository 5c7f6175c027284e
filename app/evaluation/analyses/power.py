"""Discriminative power: the share of run pairs a paired randomization test finds significantly different.

The test itself lives in `app.evaluation.significance` (another module); it is imported when first needed.
"""

from __future__ import annotations

import importlib

import numpy as np


def discriminative_power(scores: np.ndarray, *, alpha: float = 0.05, **test_options: object) -> float:
    """Share of the n(n-1)/2 run pairs with p < alpha; scores [n_run, n_topic] (paired by topic)."""
    significance = importlib.import_module("app.evaluation.significance")
    pvalues = np.asarray(significance.pairwise_randomization(np.asarray(scores, dtype=np.float64), **test_options))
    if hasattr(significance, "discriminative_power"):
        return float(significance.discriminative_power(pvalues, alpha))
    n = pvalues.shape[0]
    i, j = np.triu_indices(n, k=1)
    return float(np.mean(pvalues[i, j] < alpha)) if len(i) else float("nan")
