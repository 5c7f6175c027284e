"""Score against processing time (the TRECVID overview's "Efficiency" slide: "few automatic systems are good and
fast"): each run's mean score next to its elapsed time (a TRECVID XML run's elapsedTime), with Pearson's and
Spearman's correlation (scipy) over the runs that state a time, and the runs no other run beats on both (the
Pareto front: no run at least as fast and at least as good, and better in one).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats


def _num(value: float) -> float | None:
    """A JSON number (None for NaN)."""
    return None if not np.isfinite(value) else float(value)


@dataclass(frozen=True)
class EfficiencyResult:
    """(score, time) per run, their correlations and the Pareto front."""

    measure: str
    runs: list[str]
    scores: np.ndarray  # float64 [n_run]
    seconds: np.ndarray  # float64 [n_run], NaN when the run states no time
    pearson: float
    pearson_p: float
    spearman: float
    spearman_p: float
    front: list[str]  # good and fast: no other timed run is at least as good and as fast, and better in one

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        timed = np.isfinite(self.seconds)
        return {
            "measure": self.measure,
            "runs": [
                {"run": r, "score": _num(s), "seconds": _num(t)}
                for r, s, t in zip(self.runs, self.scores.tolist(), self.seconds.tolist(), strict=True)
            ],
            "n_timed": int(timed.sum()),
            "pearson": _num(self.pearson),
            "pearson_p": _num(self.pearson_p),
            "spearman": _num(self.spearman),
            "spearman_p": _num(self.spearman_p),
            "front": self.front,
        }


def mean_seconds(per_topic: Mapping[str, float] | None) -> float:
    """Mean elapsed seconds over a run's topics ({topic: seconds}, as stored); NaN when it states none."""
    if not per_topic:
        return float("nan")
    values = np.array([float(v) for v in per_topic.values()], dtype=np.float64)
    values = values[np.isfinite(values)]
    return float(values.mean()) if len(values) else float("nan")


def pareto_front(scores: np.ndarray, seconds: np.ndarray) -> np.ndarray:
    """bool [n]: the timed runs that no other timed run dominates (score >= and seconds <=, one strictly)."""
    scores, seconds = np.asarray(scores, dtype=np.float64), np.asarray(seconds, dtype=np.float64)
    timed = np.isfinite(seconds) & np.isfinite(scores)
    s, t = scores[:, None], seconds[:, None]
    dominated_by = (scores[None, :] >= s) & (seconds[None, :] <= t) & ((scores[None, :] > s) | (seconds[None, :] < t))
    dominated_by &= timed[None, :]
    front: np.ndarray = timed & ~dominated_by.any(axis=1)
    return front


def score_vs_time(
    runs: Sequence[str], scores: np.ndarray, seconds: np.ndarray, *, measure: str = ""
) -> EfficiencyResult:
    """Correlations of mean scores with elapsed seconds (per run; NaN = no time) and the good-and-fast front."""
    scores = np.asarray(scores, dtype=np.float64)
    seconds = np.asarray(seconds, dtype=np.float64)
    if scores.shape != (len(runs),) or seconds.shape != (len(runs),):
        raise ValueError("give one score and one time (NaN: none) per run")
    if (seconds[np.isfinite(seconds)] < 0).any():
        raise ValueError("elapsed times must not be negative")
    timed = np.isfinite(seconds) & np.isfinite(scores)
    x, y = scores[timed], seconds[timed]
    pearson = pearson_p = spearman = spearman_p = float("nan")
    if len(x) >= 3 and np.ptp(x) > 0 and np.ptp(y) > 0:
        pearson, pearson_p = (float(v) for v in stats.pearsonr(x, y))
        spearman, spearman_p = (float(v) for v in stats.spearmanr(x, y))
    front = [r for r, keep in zip(runs, pareto_front(scores, seconds).tolist(), strict=True) if keep]
    return EfficiencyResult(measure, list(runs), scores, seconds, pearson, pearson_p, spearman, spearman_p, front)
