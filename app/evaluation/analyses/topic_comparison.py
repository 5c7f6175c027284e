"""Per topic, a run against all runs: its score, the median and the best (the chart NIST sends each team).

The median and the best of a topic are over the runs that have a score for it (NaN = the run was not scored on
the topic), as the leaderboards' per-topic table takes them; a run's own NaN stays NaN. Only numbers leave this
module for another team's runs, never their names: what a team may see of the others. Topics are in natural order
(1, 2, ..., 10, not 1, 10, 11, ..., 2), as the chart's reader counts them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.analyses.topic_order import natural_order


def _num(value: float) -> float | None:
    """A JSON number (None for NaN)."""
    return None if not np.isfinite(value) else float(value)


@dataclass(frozen=True)
class TopicComparison:
    """Every run's per-topic scores next to each topic's median and best over all runs."""

    measure: str
    runs: list[str]
    topics: list[str]
    scores: np.ndarray  # float64 [n_run, n_topic]
    median: np.ndarray  # float64 [n_topic]
    best: np.ndarray  # float64 [n_topic]
    n_scored: np.ndarray  # int64 [n_topic] runs with a score for the topic

    def run(self, name: str) -> dict[str, Any]:
        """One run's chart data: per topic its score, the median and the best (no other run named)."""
        r = self.runs.index(name)
        row = self.scores[r]
        return {
            "measure": self.measure,
            "run": name,
            "topics": [
                {
                    "topic": topic,
                    "score": _num(row[t]),
                    "median": _num(self.median[t]),
                    "best": _num(self.best[t]),
                }
                for t, topic in enumerate(self.topics)
            ],
            "above_median": int(np.sum(row > self.median)),
            "at_best": int(np.sum(np.isfinite(row) & (row >= self.best))),
            "n_runs": int(np.isfinite(self.scores).any(axis=1).sum()),  # runs with a score
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: the chart data of every run."""
        return {
            "measure": self.measure,
            "topics": self.topics,
            "median": [_num(v) for v in self.median],
            "best": [_num(v) for v in self.best],
            "runs": [self.run(name) for name in self.runs],
        }


def topic_comparison(
    runs: Sequence[str], topics: Sequence[str], scores: np.ndarray, *, measure: str = ""
) -> TopicComparison:
    """Per topic the median and best of scores [n_run, n_topic] over the runs scored on it (NaN: none); topics in
    natural order."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape != (len(runs), len(topics)):
        raise ValueError("scores must be [n_run, n_topic], matching the runs and the topics")
    order = natural_order([str(t) for t in topics])
    topics, scores = [topics[i] for i in order], scores[:, order]
    scored = np.isfinite(scores)
    n_scored = scored.sum(axis=0)
    median = np.full(len(topics), np.nan)
    best = np.full(len(topics), np.nan)
    some = n_scored > 0
    if some.any():
        median[some] = np.nanmedian(scores[:, some], axis=0)
        best[some] = np.nanmax(scores[:, some], axis=0)
    return TopicComparison(measure, list(runs), list(topics), scores, median, best, n_scored.astype(np.int64))
