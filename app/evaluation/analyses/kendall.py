"""Rank correlation of system rankings: Kendall's tau_b (scipy) and tau_AP (Yilmaz, Aslam & Robertson, SIGIR 2008).

Inputs are per-system *scores* (higher = better), not rank positions, so that both functions read the same data.
"""

from __future__ import annotations

import numpy as np
from scipy import stats


def tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's tau_b between the rankings induced by two score vectors (NaN if either is constant)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("tau_b needs two 1-d score vectors of the same length")
    if len(x) < 2:
        return float("nan")
    return float(stats.kendalltau(x, y, variant="b").statistic)


def tau_b_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """tau_b of many score-vector pairs at once: x, y [..., n_system] -> [...] (NaN where a side is constant).

    Same definition as scipy's variant "b": (concordant - discordant) / sqrt((n0 - ties_x) * (n0 - ties_y)),
    counting pairs tied in both on both sides.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    x, y = np.broadcast_arrays(x, y)
    n = x.shape[-1]
    i, j = np.triu_indices(n, k=1)
    sx = np.sign(x[..., i] - x[..., j])
    sy = np.sign(y[..., i] - y[..., j])
    numerator = np.sum(sx * sy, axis=-1)
    untied_x = np.sum(sx != 0, axis=-1)
    untied_y = np.sum(sy != 0, axis=-1)
    denominator = np.sqrt(untied_x.astype(np.float64) * untied_y)
    out = np.full(numerator.shape, np.nan)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def tau_ap(reference: np.ndarray, estimate: np.ndarray) -> float:
    """AP rank correlation of the ranking by `estimate` against the true ranking by `reference` (scores).

    Walk the estimated ranking top-down; for the item at rank i (i = 2..N), C(i) counts the items above it in the
    estimated ranking that are also above it in the reference. tau_AP = 2/(N-1) * sum_i C(i)/(i-1) - 1.
    It is 1 for identical rankings, -1 for reversed ones, and *not symmetric*: swaps near the top of `estimate`
    cost more than swaps near the bottom (the paper's symmetric variant is the mean of both directions,
    `tau_ap_symmetric`). tau_AP assumes no ties; here ties in `estimate` are broken by input order (stable), and
    an item above another counts as correctly ranked unless its reference score is strictly lower (the reference
    expresses no preference within its ties), so identical score vectors give 1 even with ties.
    """
    reference = np.asarray(reference, dtype=np.float64)
    estimate = np.asarray(estimate, dtype=np.float64)
    if reference.shape != estimate.shape or reference.ndim != 1:
        raise ValueError("tau_ap needs two 1-d score vectors of the same length")
    n = len(reference)
    if n < 2:
        return float("nan")
    order = np.argsort(-estimate, kind="stable")
    truth = reference[order]  # reference score of the item at each estimated rank
    above = np.tril(truth[None, :] >= truth[:, None], k=-1)  # [i, j]: j above i (j < i), not truly worse
    correct = above.sum(axis=1)[1:]
    return float(2.0 / (n - 1) * np.sum(correct / np.arange(1, n)) - 1.0)


def tau_ap_symmetric(x: np.ndarray, y: np.ndarray) -> float:
    """The symmetrised tau_AP of the paper: the mean of tau_AP(x, y) and tau_AP(y, x)."""
    return 0.5 * (tau_ap(x, y) + tau_ap(y, x))


def tau_ap_batch(reference: np.ndarray, estimate: np.ndarray) -> np.ndarray:
    """`tau_ap` of many score-vector pairs at once: reference, estimate [..., n_system] -> [...] (NaN below 2).

    The same definition and tie rules as `tau_ap`: the estimate's ties broken by input order, the reference's ties
    counted as correctly ordered.
    """
    reference = np.asarray(reference, dtype=np.float64)
    estimate = np.asarray(estimate, dtype=np.float64)
    reference, estimate = np.broadcast_arrays(reference, estimate)
    n = reference.shape[-1]
    if n < 2:
        return np.full(reference.shape[:-1], np.nan)
    order = np.argsort(-estimate, axis=-1, kind="stable")
    truth = np.take_along_axis(reference, order, axis=-1)  # reference score at each estimated rank
    above = truth[..., None, :] >= truth[..., :, None]  # [..., i, j]: j not truly worse than i
    correct = np.sum(np.tril(above, k=-1), axis=-1)[..., 1:]  # j above i only
    tau: np.ndarray = 2.0 / (n - 1) * np.sum(correct / np.arange(1, n), axis=-1) - 1.0
    return tau


def tau_ap_symmetric_batch(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`tau_ap_symmetric` of many pairs at once: the mean of both directions."""
    tau: np.ndarray = 0.5 * (tau_ap_batch(x, y) + tau_ap_batch(y, x))
    return tau
