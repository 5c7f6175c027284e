"""Significance within each run type (the TRECVID overview's "top 10 automatic runs - randomization test"): the runs
of one type (system type F/M/R, training type, or any label) compared pairwise, never across types.

Methods, all from `significance`: `pairwise` (paired randomization test, no correction), `holm` and `bonferroni`
(the same p-values adjusted over the group's run pairs: Holm's step-down and Bonferroni), and `tukey` (Carterette's
randomised Tukey HSD, which controls the family-wise error over all pairs of the group itself). A pair is different
when its (adjusted) p-value is below alpha; `better` lists (better run, worse run) pairs, the overview's "run 3 is
better than run 1" statements. Groups of runs with no significant difference come from `significance_groups`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.analyses.lines import GM_FLOOR
from app.evaluation.statistics import significance

METHODS = ("pairwise", "holm", "bonferroni", "tukey")


def holm(pvalues: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment of a symmetric p-value matrix over its i < j pairs (diagonal stays 1)."""
    p = np.asarray(pvalues, dtype=np.float64)
    n = p.shape[0]
    i, j = np.triu_indices(n, k=1)
    raw = p[i, j]
    m = len(raw)
    order = np.argsort(raw, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * raw[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    out = np.ones_like(p)
    out[i, j] = out[j, i] = adjusted
    return out


def bonferroni(pvalues: np.ndarray) -> np.ndarray:
    """Bonferroni's adjustment over the i < j pairs of a symmetric p-value matrix (diagonal stays 1)."""
    p = np.asarray(pvalues, dtype=np.float64)
    n = p.shape[0]
    out: np.ndarray = np.minimum(p * (n * (n - 1) // 2), 1.0)
    np.fill_diagonal(out, 1.0)
    return out


@dataclass(frozen=True)
class TypeGroup:
    """One run type's test: its runs best first, their means, the (adjusted) p-values and what they tell apart."""

    label: str
    runs: list[str]
    means: np.ndarray  # float64 [n]
    pvalues: np.ndarray  # float64 [n, n]
    groups: list[list[str]]
    better: list[tuple[str, str]]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "type": self.label,
            "runs": self.runs,
            "means": self.means.tolist(),
            "pvalues": self.pvalues.tolist(),
            "groups": self.groups,
            "better": [list(pair) for pair in self.better],
        }


@dataclass(frozen=True)
class TypeSignificanceResult:
    """Significance tests within each run type."""

    method: str
    alpha: float
    n_resamples: int
    seed: int
    top: int | None
    types: list[TypeGroup]

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "method": self.method,
            "alpha": self.alpha,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "top": self.top,
            "types": [group.to_dict() for group in self.types],
        }


def group_pvalues(scores: np.ndarray, method: str, n_resamples: int, seed: int) -> np.ndarray:
    """P-values [n, n] among the rows of scores [n, n_topic] by `method` (one of METHODS)."""
    if method == "tukey":
        return significance.randomised_tukey_hsd(scores, n_resamples=n_resamples, seed=seed)
    raw = significance.pairwise_randomization(scores, n_resamples=n_resamples, seed=seed)
    if method == "holm":
        return holm(raw)
    if method == "bonferroni":
        return bonferroni(raw)
    return raw


def significance_by_type(
    runs: Sequence[str],
    types: Sequence[str],
    scores: np.ndarray,
    *,
    method: str = "pairwise",
    top: int | None = 10,
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 0,
    aggregate: str = "mean",
    progress: Callable[[float], None] | None = None,
) -> TypeSignificanceResult:
    """Within each run type, the `top` runs by mean (all when None) tested pairwise; scores [n_run, n_topic],
    NaN counting 0 (as in the means). Types in order of first appearance; a type with one run has no test.

    `aggregate` "gm" (gm_map, gm_bpref) ranks by geometric means and tests the logs of the values (floored at
    1e-5, as trec_eval does): a difference in mean log is a ratio of geometric means. `progress` is called with the
    share of the types tested."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}")
    scores = np.nan_to_num(np.asarray(scores, dtype=np.float64))
    if scores.ndim != 2 or scores.shape[0] != len(runs) or len(types) != len(runs):
        raise ValueError("scores must be [n_run, n_topic] with one type per run")
    if top is not None and top < 2:
        raise ValueError("top must be at least 2")
    if aggregate == "gm":
        scores = np.log(np.maximum(scores, GM_FLOOR))
    means = scores.mean(axis=1) if scores.shape[1] else np.zeros(len(runs))
    reported = np.exp(means) if aggregate == "gm" and scores.shape[1] else means
    names = list(runs)
    out = []
    labels = list(dict.fromkeys(types))
    for k, label in enumerate(labels):
        if progress is not None and k:
            progress(k / len(labels))
        members = [i for i, t in enumerate(types) if t == label]
        members.sort(key=lambda i: (-means[i], names[i]))
        if top is not None:
            members = members[:top]
        chosen = [names[i] for i in members]
        group_means = reported[members]
        if len(members) < 2:
            out.append(TypeGroup(str(label), chosen, group_means, np.ones((1, 1)), [chosen], []))
            continue
        p = group_pvalues(scores[members], method, n_resamples, seed)
        better = [
            (chosen[a], chosen[b]) if group_means[a] > group_means[b] else (chosen[b], chosen[a])
            for a in range(len(members))
            for b in range(a + 1, len(members))
            if min(p[a, b], p[b, a]) < alpha and group_means[a] != group_means[b]
        ]
        groups = significance.significance_groups(chosen, group_means, p, alpha)
        out.append(TypeGroup(str(label), chosen, group_means, p, groups, better))
    if progress is not None:
        progress(1.0)
    return TypeSignificanceResult(method, alpha, n_resamples, seed, top, out)
