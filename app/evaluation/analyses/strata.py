"""Judgements per stratum and the inferred number of relevant shots per topic (the TRECVID overview's evaluation
methodology: "judged 100 % of ranks 1-300 ... sampled 25 % from the rest", and its hits per topic).

Per topic and stratum of sample_eval (stratified) qrels: the pooled shots N_c (every line, `-1` included), the
judged ones n_c (grade >= 0) and the relevant ones r_c. The inferred number of relevant shots of a topic is
sample_eval.pl's estimate R_hat = sum_c r_c N_c / n_c, taken from the xinfAP estimator itself (`inferred.inum_rel`,
the script's arithmetic and stratum order), so it equals sample_eval's `inum_rel` line. Plain TREC qrels are one
stratum, and their inferred number of relevant docs is the count of relevant lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.grading.grade_matrix import GradeMatrix, summarise_qrels
from app.evaluation.measures.inferred import inum_rel
from app.evaluation.measures.trec import RankedLists
from app.evaluation.records import Qrels


def _share(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, NaN where the denominator is 0."""
    share: np.ndarray = np.divide(
        numerator, denominator, out=np.full(np.shape(numerator), np.nan), where=denominator > 0
    )
    return share


def _num(value: float) -> float | None:
    """A JSON number (None for NaN)."""
    return None if not np.isfinite(value) else float(value)


@dataclass(frozen=True)
class StratumSummary:
    """Pooled, judged and relevant shots per topic and stratum, and the inferred relevant shots per topic."""

    topics: list[str]
    strata: list[int]  # stratum labels (one label 0 for plain qrels)
    stratified: bool
    pooled: np.ndarray  # int64 [n_topic, n_stratum] N_c
    judged: np.ndarray  # int64 [n_topic, n_stratum] n_c
    relevant: np.ndarray  # int64 [n_topic, n_stratum] r_c
    inferred: np.ndarray  # float64 [n_topic] R_hat

    @property
    def judged_share(self) -> np.ndarray:
        """n_c / N_c per stratum over all topics [n_stratum]."""
        return _share(self.judged.sum(axis=0), self.pooled.sum(axis=0))

    @property
    def relevant_share(self) -> np.ndarray:
        """r_c / n_c per stratum over all topics: the share of the judged shots that are relevant [n_stratum]."""
        return _share(self.relevant.sum(axis=0), self.judged.sum(axis=0))

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: per stratum totals and shares, per topic counts and the inferred relevant."""
        judged_share, relevant_share = self.judged_share, self.relevant_share
        topic_share = _share(self.judged, self.pooled)
        return {
            "stratified": self.stratified,
            "strata": [
                {
                    "stratum": s,
                    "pooled": int(self.pooled[:, c].sum()),
                    "judged": int(self.judged[:, c].sum()),
                    "relevant": int(self.relevant[:, c].sum()),
                    "judged_share": _num(judged_share[c]),
                    "relevant_share": _num(relevant_share[c]),
                    "topic_share_min": _num(np.nanmin(topic_share[:, c]))
                    if np.isfinite(topic_share[:, c]).any()
                    else None,
                    "topic_share_max": _num(np.nanmax(topic_share[:, c]))
                    if np.isfinite(topic_share[:, c]).any()
                    else None,
                }
                for c, s in enumerate(self.strata)
            ],
            "topics": [
                {
                    "topic": topic,
                    "pooled": self.pooled[t].tolist(),
                    "judged": self.judged[t].tolist(),
                    "relevant": self.relevant[t].tolist(),
                    "relevant_judged": int(self.relevant[t].sum()),
                    "inferred_relevant": float(self.inferred[t]),
                }
                for t, topic in enumerate(self.topics)
            ],
            "inferred_relevant": float(self.inferred.sum()),
        }


def inferred_relevant(qrels: Qrels, max_results: int = 1000) -> tuple[list[str], np.ndarray]:
    """The qrels' topics and sample_eval's R_hat of each (the count of relevant lines for plain qrels)."""
    judged, _, _ = summarise_qrels(qrels)
    n_topic = len(judged.topics)
    if judged.pooled is None:
        return list(judged.topics), judged.num_rel.astype(np.float64)
    empty = np.zeros((1, n_topic, 0), dtype=np.int64)  # no run: the estimate reads the qrels' counts only
    lengths = np.zeros((1, n_topic), dtype=np.int64)
    matrix = GradeMatrix(empty, empty, lengths, lengths > 0, judged, max_results)
    return list(judged.topics), np.asarray(inum_rel(RankedLists(matrix))[0], dtype=np.float64).copy()


def stratum_summary(qrels: Qrels) -> StratumSummary:
    """Per topic and stratum: pooled, judged, relevant; per topic the inferred number of relevant shots."""
    judged, topic_index, _ = summarise_qrels(qrels)
    topics, inferred = inferred_relevant(qrels)
    if judged.pooled is None:
        grades = np.asarray(qrels.grades, dtype=np.int64)
        n_topic = len(topics)
        pooled = np.bincount(topic_index, minlength=n_topic)[:, None]
        judged_count = np.bincount(topic_index, weights=grades >= 0, minlength=n_topic).astype(np.int64)[:, None]
        relevant = judged.num_rel[:, None]
        return StratumSummary(topics, [0], False, pooled.astype(np.int64), judged_count, relevant, inferred)
    assert judged.strata is not None and judged.judged is not None and judged.relevant is not None
    return StratumSummary(
        topics=topics,
        strata=[int(s) for s in judged.strata.tolist()],
        stratified=True,
        pooled=judged.pooled.astype(np.int64),
        judged=judged.judged.astype(np.int64),
        relevant=judged.relevant.astype(np.int64),
        inferred=inferred,
    )
