"""Assessor agreement and judgement quality rules (pure)."""

from __future__ import annotations

import numpy as np


def cohen_kappa(first: np.ndarray, second: np.ndarray) -> float:
    """Cohen's kappa of two raters' labels on the same items (nan for no items; 1.0 if both constant and equal)."""
    first, second = np.asarray(first), np.asarray(second)
    if first.shape != second.shape:
        raise ValueError(f"label arrays differ in shape: {first.shape} vs {second.shape}")
    if first.size == 0:
        return float("nan")
    labels, codes = np.unique(np.concatenate([first, second]), return_inverse=True)
    a, b = codes[: first.size], codes[first.size :]
    k = len(labels)
    table = np.zeros((k, k))
    np.add.at(table, (a, b), 1)
    table /= first.size
    observed = np.trace(table)
    expected = float(table.sum(axis=1) @ table.sum(axis=0))
    if expected == 1.0:
        return 1.0 if observed == 1.0 else 0.0
    return float((observed - expected) / (1.0 - expected))


def neighbour_disagreements(
    groups: np.ndarray, positions: np.ndarray, labels: np.ndarray, window: int = 5
) -> np.ndarray:
    """Mask of items with a neighbour in the same group within `window` positions that has another label.

    `groups` identifies a (topic, video) pair, `positions` is the shot's index in its video (unique per group).
    """
    groups, positions, labels = np.asarray(groups), np.asarray(positions), np.asarray(labels)
    order = np.lexsort((positions, groups))
    g, p, lab = groups[order], positions[order], labels[order]
    flagged = np.zeros(len(order), dtype=bool)
    for offset in range(1, window + 1):
        near = (g[offset:] == g[:-offset]) & (p[offset:] - p[:-offset] <= window) & (lab[offset:] != lab[:-offset])
        flagged[offset:] |= near
        flagged[:-offset] |= near
    mask = np.zeros(len(order), dtype=bool)
    mask[order] = flagged
    return mask


def confusion_matrix(first: np.ndarray, second: np.ndarray, n_categories: int) -> np.ndarray:
    """Counts [first label, second label] of two raters' labels 0..n_categories-1 on the same items (int64)."""
    first, second = np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64)
    if first.shape != second.shape or first.ndim != 1:
        raise ValueError(f"label arrays differ in shape: {first.shape} vs {second.shape}")
    for labels in (first, second):
        if labels.size and (labels.min() < 0 or labels.max() >= n_categories):
            raise ValueError(f"labels must lie in 0..{n_categories - 1}, got {labels.min()}..{labels.max()}")
    table = np.zeros((n_categories, n_categories), dtype=np.int64)
    np.add.at(table, (first, second), 1)
    return table


def weighted_kappa(table: np.ndarray, weights: str = "linear") -> float:
    """Cohen's weighted kappa (Cohen 1968) of a square confusion matrix over ordered grades 0..k.

    kappa_w = 1 - sum(w * observed) / sum(w * expected), expected the product of the margins over n and the
    disagreement weight w_ij = |i - j| / k ("linear") or ((i - j) / k)^2 ("quadratic"); "none" weighs every
    disagreement 1 (Cohen's kappa). With two grades all three are Cohen's kappa. NaN for no items; 1.0 when both raters
    give every item one and the same grade (no disagreement is possible), 0.0 when they give different constants.
    """
    counts = np.asarray(table, dtype=np.float64)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError(f"a confusion matrix is square, got shape {counts.shape}")
    n = counts.sum()
    if n == 0:
        return float("nan")
    k = counts.shape[0]
    i, j = np.indices((k, k))
    if weights == "linear":
        w = np.abs(i - j) / max(k - 1, 1)
    elif weights == "quadratic":
        w = ((i - j) / max(k - 1, 1)) ** 2
    elif weights == "none":
        w = (i != j).astype(np.float64)
    else:
        raise ValueError(f"weights must be 'linear', 'quadratic' or 'none', got {weights!r}")
    observed = counts / n
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    disagreement_expected = float((w * expected).sum())
    disagreement_observed = float((w * observed).sum())
    if disagreement_expected == 0.0:
        return 1.0 if disagreement_observed == 0.0 else 0.0
    return 1.0 - disagreement_observed / disagreement_expected
