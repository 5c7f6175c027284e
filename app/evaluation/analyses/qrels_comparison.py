"""Rankings and judgements compared across qrels versions (Voorhees 1998; Westerveld 4.3): round 1 vs round 2 vs
adjudicated, or one assessor against another.

* Rankings: the runs' mean scores under each version, and between every two versions Kendall's tau_b (scipy) and
  tau_AP (`kendall.tau_ap`, Yilmaz, Aslam & Robertson 2008). tau_AP is not symmetric: entry [a, b] takes version a's
  ranking as the truth and b's as the estimate. Ties: tau_b counts them as scipy's variant "b"; tau_AP breaks ties
  in the estimate by run order (input order) and treats runs tied in the truth as correctly ordered either way.
* Judgements, per topic both versions judge: the overlap of the relevant sets |A & B| / |A | B| (Voorhees 1998's
  overlap, the Jaccard index), how much of A the other version also found (|A & B| / |A|), and Cohen's kappa of the
  relevant / not relevant labels on the docs both versions judged (grade >= 0 in both; `agreement.cohen_kappa`).
  Overall values pool every topic's docs (sums of intersections over sums of unions; kappa over all common docs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from app.evaluation.analyses.kendall import tau_ap, tau_b
from app.evaluation.analyses.pooled_lines import RunBlocks, as_blocks
from app.evaluation.grading.prepared_runs import PreparedRuns
from app.evaluation.measures.evaluate import evaluate_prepared
from app.evaluation.pools.keys import pair_keys
from app.evaluation.records import Qrels, RunTable
from app.evaluation.statistics.agreement import cohen_kappa


def _num(value: float | None) -> float | None:
    """A JSON number (None for NaN)."""
    return None if value is None or not np.isfinite(value) else float(value)


@dataclass(frozen=True)
class RankingComparison:
    """System rankings under several qrels versions and their rank correlations."""

    labels: list[str]  # the qrels versions
    runs: list[str]
    scores: np.ndarray  # float64 [n_version, n_run] mean scores
    ranks: np.ndarray  # int64 [n_version, n_run] rank of each run under each version (1 = best, ties share the best)
    tau_b: np.ndarray  # float64 [n_version, n_version]
    tau_ap: np.ndarray  # float64 [n_version, n_version]: truth = row, estimate = column

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "labels": self.labels,
            "runs": self.runs,
            "scores": {v: [_num(x) for x in row] for v, row in zip(self.labels, self.scores.tolist(), strict=True)},
            "ranks": {v: row for v, row in zip(self.labels, self.ranks.tolist(), strict=True)},
            "tau_b": [[_num(x) for x in row] for row in self.tau_b.tolist()],
            "tau_ap": [[_num(x) for x in row] for row in self.tau_ap.tolist()],
        }


def compare_rankings(labels: Sequence[str], runs: Sequence[str], scores: np.ndarray) -> RankingComparison:
    """tau_b and tau_AP between the rankings of `runs` by scores [n_version, n_run] (one row per qrels version)."""
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape != (len(labels), len(runs)):
        raise ValueError("scores must be [n_version, n_run], matching the labels and the runs")
    if len(labels) < 2:
        raise ValueError("compare at least two qrels versions")
    n = len(labels)
    taus_b = np.ones((n, n))
    taus_ap = np.ones((n, n))
    for a in range(n):
        for b in range(n):
            if a != b:
                taus_b[a, b] = tau_b(scores[a], scores[b])
                taus_ap[a, b] = tau_ap(scores[a], scores[b])
            elif len(runs) < 2:
                taus_b[a, b] = taus_ap[a, b] = np.nan
    ranks = np.array([stats.rankdata(-row, method="min") for row in scores], dtype=np.int64).reshape(n, len(runs))
    return RankingComparison(list(labels), list(runs), scores, ranks, taus_b, taus_ap)


@dataclass(frozen=True)
class JudgementAgreement:
    """Agreement of the judgements of every two qrels versions, per topic and overall."""

    labels: list[str]
    pairs: list[tuple[int, int]]  # (a, b) with a < b
    topics: list[str]  # topics judged by both sides of some pair (sorted)
    intersection: np.ndarray  # int64 [n_pair, n_topic] docs relevant in both
    union: np.ndarray  # int64 [n_pair, n_topic] docs relevant in either
    relevant_a: np.ndarray  # int64 [n_pair, n_topic] relevant in a
    relevant_b: np.ndarray  # int64 [n_pair, n_topic]
    common: np.ndarray  # int64 [n_pair, n_topic] docs judged (grade >= 0) in both
    kappa: np.ndarray  # float64 [n_pair, n_topic] over the common docs (NaN with none)
    overall_kappa: np.ndarray  # float64 [n_pair]

    @property
    def overlap(self) -> np.ndarray:
        """|A & B| / |A | B| per pair and topic (NaN when neither has a relevant doc)."""
        overlap: np.ndarray = np.divide(
            self.intersection, self.union, out=np.full(self.union.shape, np.nan), where=self.union > 0
        )
        return overlap

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: per pair, overall values and one row per topic."""
        overlap = self.overlap
        out = []
        for p, (a, b) in enumerate(self.pairs):
            inter, union = int(self.intersection[p].sum()), int(self.union[p].sum())
            rel_a, rel_b = int(self.relevant_a[p].sum()), int(self.relevant_b[p].sum())
            out.append(
                {
                    "a": self.labels[a],
                    "b": self.labels[b],
                    "overlap": inter / union if union else None,
                    "a_found_by_b": inter / rel_a if rel_a else None,
                    "b_found_by_a": inter / rel_b if rel_b else None,
                    "kappa": _num(self.overall_kappa[p]),
                    "mean_topic_overlap": _num(float(np.nanmean(overlap[p])))
                    if np.isfinite(overlap[p]).any()
                    else None,
                    "topics": [
                        {
                            "topic": topic,
                            "relevant_a": int(self.relevant_a[p, t]),
                            "relevant_b": int(self.relevant_b[p, t]),
                            "both": int(self.intersection[p, t]),
                            "overlap": _num(overlap[p, t]),
                            "common_judged": int(self.common[p, t]),
                            "kappa": _num(self.kappa[p, t]),
                        }
                        for t, topic in enumerate(self.topics)
                    ],
                }
            )
        return {"labels": self.labels, "pairs": out}


def _judged(qrels: Qrels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sorted unique keys of the judged lines (grade >= 0), their relevance, and their topics."""
    grades = np.asarray(qrels.grades, dtype=np.int64)
    keep = grades >= 0
    keys = pair_keys(qrels.topics[keep], qrels.docs[keep])
    keys, first = np.unique(keys, return_index=True)
    return keys, grades[keep][first] >= 1, np.asarray(qrels.topics[keep]).astype(str)[first]


def judgement_agreement(labels: Sequence[str], versions: Sequence[Qrels]) -> JudgementAgreement:
    """Per topic and overall: relevant-set overlap and Cohen's kappa between every two qrels versions."""
    if len(labels) != len(versions) or len(labels) < 2:
        raise ValueError("give at least two qrels versions, one label each")
    judged = [_judged(q) for q in versions]
    topic_sets = [set(j[2].tolist()) for j in judged]
    pairs = [(a, b) for a in range(len(versions)) for b in range(a + 1, len(versions))]
    topics = sorted(set().union(*(topic_sets[a] & topic_sets[b] for a, b in pairs)))
    topic_array = np.array(topics, dtype=str)
    shape = (len(pairs), len(topics))
    counts = {k: np.zeros(shape, dtype=np.int64) for k in ("inter", "union", "rel_a", "rel_b", "common")}
    kappa = np.full(shape, np.nan)
    overall_kappa = np.full(len(pairs), np.nan)
    for p, (a, b) in enumerate(pairs):
        keys_a, rel_a, topic_a = judged[a]
        keys_b, rel_b, topic_b = judged[b]
        shared_topics = topic_sets[a] & topic_sets[b]
        in_a = np.isin(topic_a, list(shared_topics))
        in_b = np.isin(topic_b, list(shared_topics))

        def tally(name: str, topic_names: np.ndarray, p: int = p) -> None:
            codes = np.searchsorted(topic_array, topic_names)
            counts[name][p] = np.bincount(codes, minlength=len(topics))

        tally("rel_a", topic_a[in_a & rel_a])
        tally("rel_b", topic_b[in_b & rel_b])
        both, at_a, at_b = np.intersect1d(keys_a, keys_b, assume_unique=True, return_indices=True)
        common_topic = topic_a[at_a]
        shared = np.isin(common_topic, list(shared_topics))
        label_a, label_b = rel_a[at_a][shared], rel_b[at_b][shared]
        tally("common", common_topic[shared])
        tally("inter", common_topic[shared][label_a & label_b])
        counts["union"][p] = counts["rel_a"][p] + counts["rel_b"][p] - counts["inter"][p]
        codes = np.searchsorted(topic_array, common_topic[shared])
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(topics) + 1))
        for t in range(len(topics)):
            rows = order[bounds[t] : bounds[t + 1]]
            if len(rows):
                kappa[p, t] = cohen_kappa(label_a[rows], label_b[rows])
        if len(label_a):
            overall_kappa[p] = cohen_kappa(label_a, label_b)
    return JudgementAgreement(
        labels=list(labels),
        pairs=pairs,
        topics=topics,
        intersection=counts["inter"],
        union=counts["union"],
        relevant_a=counts["rel_a"],
        relevant_b=counts["rel_b"],
        common=counts["common"],
        kappa=kappa,
        overall_kappa=overall_kappa,
    )


@dataclass(frozen=True)
class QrelsComparisonResult:
    """Rankings and judgements of several qrels versions compared."""

    measure: str
    rankings: RankingComparison
    judgements: JudgementAgreement

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {"measure": self.measure, **self.rankings.to_dict(), "judgements": self.judgements.to_dict()}


def compare_qrels(
    labels: Sequence[str],
    versions: Sequence[Qrels],
    runs: Sequence[RunTable] | PreparedRuns | RunBlocks,
    *,
    measure: str = "AP",
    max_results: int = 1000,
    progress: Callable[[float], None] | None = None,
) -> QrelsComparisonResult:
    """Evaluate every run under each qrels version (means over each version's topics, trec_eval -c) and compare.
    `runs` may be blocks of prepared runs (`pooled_lines.RunBlocks`; a run's scores are its own). `progress` is
    called with the share of the evaluations done."""
    source = as_blocks(runs, max_results)
    names = source.names
    scores = np.empty((len(versions), len(names)))
    name = measure
    start = 0
    for block in source:
        n_run = len(block.names)
        for k, qrels in enumerate(versions):
            results = evaluate_prepared(block, qrels, [measure])
            name = results.measures[0]
            scores[k, start : start + n_run] = results.mean()[:, 0]
            if progress is not None:
                progress((start + n_run * (k + 1) / len(versions)) / max(len(names), 1))
        start += n_run
        del block
    rankings = compare_rankings(labels, names, scores)
    return QrelsComparisonResult(name, rankings, judgement_agreement(labels, versions))
