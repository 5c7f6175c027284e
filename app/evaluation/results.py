"""Evaluation results of several runs: a [run, measure, topic] array with names, means and nested-dict views."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ALL = "all"


@dataclass(frozen=True)
class Results:
    """Per run, measure and topic values; NaN where a run lacks a topic and only its own topics are averaged."""

    runs: list[str]
    measures: list[str]
    topics: list[str]  # the qrels' topics (every topic with judgements)
    values: np.ndarray  # float64 [run, measure, topic]
    aggregates: list[str]  # per measure: "mean", "gm", "sum" or "sum_all" (see registry.MeasureSpec)
    answered: np.ndarray  # bool [run, topic]: the run ranks something for the topic
    run_topics_only: bool = False

    def mean(self) -> np.ndarray:
        """The `all` value of each run and measure [run, measure]: mean (or total for counts) over topics."""
        values = self.values
        counted = ~np.isnan(values)
        total = np.sum(values, axis=2, where=counted)
        n = np.sum(counted, axis=2)
        mean = np.divide(total, n, out=np.zeros_like(total), where=n > 0)
        is_sum = np.array([a in ("sum", "sum_all") for a in self.aggregates], dtype=bool)[None, :]
        is_gm = np.array([a == "gm" for a in self.aggregates], dtype=bool)
        if is_gm.any():  # geometric mean, each value floored at 1e-5 (trec_eval's gm_map, gm_bpref)
            logs = np.log(np.maximum(values[:, is_gm], 1e-5))
            mean_log = np.sum(logs, axis=2, where=counted[:, is_gm]) / np.maximum(n[:, is_gm], 1)
            mean[:, is_gm] = np.where(n[:, is_gm] > 0, np.exp(mean_log), 0.0)
        means: np.ndarray = np.where(is_sum, total, mean)
        return means

    def value(self, run: str, measure: str, topic: str = ALL) -> float:
        """One value, by names (`all` for the mean)."""
        r, m = self.runs.index(run), self.measures.index(measure)
        if topic == ALL:
            return float(self.mean()[r, m])
        return float(self.values[r, m, self.topics.index(topic)])

    def to_dict(self) -> dict[str, dict[str, dict[str, float]]]:
        """{run: {measure: {topic or "all": value}}}; topics a run lacks are left out when run_topics_only."""
        means = self.mean()
        out: dict[str, dict[str, dict[str, float]]] = {}
        for r, run in enumerate(self.runs):
            per_measure: dict[str, dict[str, float]] = {}
            for m, measure in enumerate(self.measures):
                row = self.values[r, m].tolist()
                shown = self.answered[r] if self.run_topics_only else np.ones(len(self.topics), dtype=bool)
                entry = {t: v for t, v, s in zip(self.topics, row, shown.tolist(), strict=True) if s and v == v}
                entry[ALL] = float(means[r, m])
                per_measure[measure] = entry
            out[run] = per_measure
        return out
