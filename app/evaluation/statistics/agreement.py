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
