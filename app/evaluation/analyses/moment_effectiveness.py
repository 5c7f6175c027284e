"""System effectiveness under every moment measure, systems sorted (AxIoU paper, Fig. 5).

The paper's Fig. 5 plots each system's score under each R@K,theta and AxIoU@K, the systems sorted by their mean
R@K,theta. Here the systems are sorted by the mean over the R@K,theta measures given (or over one named measure, or
over all measures when there is no R@K,theta), best first, ties by name; each measure's K and theta go with it so
that a figure can style its line without parsing names (figures import nothing from the numeric core).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.moments import parse_moment_measure


@dataclass(frozen=True)
class MomentEffectiveness:
    """Mean scores of the systems under each measure, in the figure's system order."""

    runs: list[str]  # sorted, best first
    measures: list[str]
    families: list[str]  # AxIoU, R, ...
    cutoffs: list[int]  # K
    thresholds: list[float | None]  # theta (None for measures without one)
    sort_by: str  # what the systems are sorted by
    key: np.ndarray  # float64 [n_run] the sort key, in order
    scores: np.ndarray  # float64 [n_run, n_measure], in order

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "runs": self.runs,
            "sort_by": self.sort_by,
            "key": self.key.tolist(),
            "measures": [
                {"measure": m, "family": f, "k": k, "theta": t, "scores": self.scores[:, i].tolist()}
                for i, (m, f, k, t) in enumerate(
                    zip(self.measures, self.families, self.cutoffs, self.thresholds, strict=True)
                )
            ],
        }


def moment_effectiveness(
    runs: Sequence[str], measures: Sequence[str], means: np.ndarray, *, sort_by: str | None = None
) -> MomentEffectiveness:
    """Fig. 5 data from means [n_run, n_measure] (NaN counts 0): systems sorted by the mean R@K,theta or `sort_by`."""
    means = np.nan_to_num(np.asarray(means, dtype=np.float64))
    if means.shape != (len(runs), len(measures)) or not len(measures):
        raise ValueError("means must be [n_run, n_measure], matching the runs and at least one measure")
    specs = [parse_moment_measure(m) for m in measures]
    if sort_by is not None:
        if sort_by not in measures:
            raise ValueError(f"sort_by {sort_by!r} is not one of the measures")
        key, label = means[:, list(measures).index(sort_by)], sort_by
    else:
        recall = [i for i, spec in enumerate(specs) if spec.family == "R"]
        columns = recall or list(range(len(measures)))
        key = means[:, columns].mean(axis=1)
        label = "mean R@K,theta" if recall else "mean of all measures"
    names = list(runs)
    order = sorted(range(len(names)), key=lambda i: (-key[i], names[i]))
    return MomentEffectiveness(
        runs=[names[i] for i in order],
        measures=[spec.name for spec in specs],
        families=[spec.family for spec in specs],
        cutoffs=[int(spec.k) for spec in specs],
        thresholds=[float(spec.theta) if spec.family in ("R", "AP") else None for spec in specs],
        sort_by=label,
        key=key[order],
        scores=means[order],
    )
