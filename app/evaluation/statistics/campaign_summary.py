"""Campaign report statistics of the kind the TRECVID overview shows (pure; arrays in, plain data out)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.evaluation.fast.distinct import distinct
from app.evaluation.pools.builders import rank_rows
from app.evaluation.pools.keys import pair_keys, split_key
from app.evaluation.records import Qrels, RunTable


def topic_box_stats(scores: np.ndarray, topics: Sequence[str]) -> list[dict[str, object]]:
    """Per topic: min, quartiles, median, max and mean of the runs' scores (scores is [run, topic])."""
    out = []
    for t, topic in enumerate(topics):
        column = scores[:, t][np.isfinite(scores[:, t])]
        if column.size == 0:
            out.append({"topic": topic, "n": 0})
            continue
        q1, median, q3 = np.percentile(column, [25, 50, 75])
        out.append(
            {
                "topic": topic,
                "n": int(column.size),
                "min": float(column.min()),
                "q1": float(q1),
                "median": float(median),
                "q3": float(q3),
                "max": float(column.max()),
                "mean": float(column.mean()),
            }
        )
    return out


def easy_and_hard(scores: np.ndarray, topics: Sequence[str], n: int = 5) -> dict[str, object]:
    """TRECVID's informal method: threshold at the midpoint of all scores' range; topics by runs above / below it."""
    finite = scores[np.isfinite(scores)]
    if finite.size == 0:
        return {"threshold": None, "easy": [], "hard": []}
    threshold = float((finite.min() + finite.max()) / 2)
    above = np.sum(scores >= threshold, axis=0)
    below = np.sum(scores < threshold, axis=0)
    total_above = np.sum(np.where(scores >= threshold, scores, 0.0), axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_above = total_above / above
    means = [None if np.isnan(mean_above[t]) else float(mean_above[t]) for t in range(len(topics))]
    rows = [
        {"topic": topic, "runs_above": int(above[t]), "runs_below": int(below[t]), "mean_of_runs_above": means[t]}
        for t, topic in enumerate(topics)
    ]
    easy = sorted(range(len(rows)), key=lambda t: (-int(above[t]), -(means[t] or 0.0)))[:n]
    hard = sorted(range(len(rows)), key=lambda t: (-int(below[t]), means[t] or 0.0))[:n]
    return {"threshold": threshold, "easy": [rows[t] for t in easy], "hard": [rows[t] for t in hard], "topics": rows}


def top_runs_per_topic(
    scores: np.ndarray, topics: Sequence[str], names: Sequence[str], n: int = 10
) -> dict[str, list[dict[str, object]]]:
    """Per topic, the n best runs and their scores."""
    out: dict[str, list[dict[str, object]]] = {}
    for t, topic in enumerate(topics):
        column = np.nan_to_num(scores[:, t], nan=-np.inf)
        order = np.argsort(-column, kind="stable")[:n]
        out[topic] = [{"run": names[i], "score": float(scores[i, t])} for i in order if np.isfinite(scores[i, t])]
    return out


def judgement_summary(qrels: Qrels) -> list[dict[str, object]]:
    """Per topic: judged shots, relevant shots (hits) and the share of judged shots that are relevant."""
    topics, inverse = np.unique(qrels.topics.astype(str), return_inverse=True)
    judged = np.bincount(inverse, weights=qrels.grades >= 0, minlength=len(topics))
    relevant = np.bincount(inverse, weights=qrels.grades >= 1, minlength=len(topics))
    return [
        {
            "topic": topic,
            "judged": int(judged[i]),
            "hits": int(relevant[i]),
            "relevant_share": float(relevant[i] / judged[i]) if judged[i] else None,
        }
        for i, topic in enumerate(topics.tolist())
    ]


def _retrieved(runs: Sequence[RunTable], max_results: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (run index, topic, doc) within each run's top max_results."""
    run_index, topics, docs, ranks = rank_rows(runs)
    keep = ranks <= max_results
    return run_index[keep], topics[keep], docs[keep]


class RetrievedTally:
    """What the campaign report counts of the runs' retrieved shots (hits per team, frequent false positives, hard
    true positives), runs added a block at a time: each run is reduced to its hits (as (shot, team) pairs) and its
    counts of the qrels' judged shots, so the tally holds the qrels' size, not the runs'."""

    def __init__(self, qrels: Qrels, max_results: int) -> None:
        self.max_results = max_results
        self.false_keys = pair_keys(qrels.topics[qrels.grades == 0], qrels.docs[qrels.grades == 0])
        self.true_keys = pair_keys(qrels.topics[qrels.grades >= 1], qrels.docs[qrels.grades >= 1])
        self.relevant_keys = distinct(self.true_keys)  # mostly distinct: one sort beats np.unique's hash
        self.false_runs = np.zeros(len(self.false_keys), dtype=np.int64)  # rows returning each (a run's repeats too)
        self.true_runs = np.zeros(len(self.true_keys), dtype=np.int64)
        self.hits: list[np.ndarray] = []  # [2, k] (shot key, team) of each run's hits
        self.teams: set[str] = set()

    def add(self, runs: Sequence[RunTable], teams: Sequence[str]) -> None:
        """Count the next runs (`teams`: each run's team), one run at a time."""
        for run, team in zip(runs, teams, strict=True):
            self.teams.add(str(team))
            _, topics, docs = _retrieved([run], self.max_results)
            keys = pair_keys(topics, docs)
            found, counts = np.unique(keys, return_counts=True)
            self.false_runs += _counts_of(found, counts, self.false_keys)
            self.true_runs += _counts_of(found, counts, self.true_keys)
            hit = found[np.isin(found, self.relevant_keys)]
            self.hits.append(np.stack([hit, np.full(len(hit), str(team))]) if len(hit) else _NO_HITS)

    def hits_by_team(self) -> dict[str, object]:
        """Relevant shots found per team, how many only that team found, and the share of unique hits overall."""
        held = [h for h in self.hits if h.shape[1]]
        pairs = np.unique(np.concatenate(held, axis=1), axis=1) if held else _NO_HITS
        hit_keys, teams_per_hit = np.unique(pairs[0], return_counts=True)
        unique_keys = set(hit_keys[teams_per_hit == 1].tolist())
        per_team = {}
        for team in sorted(self.teams):
            mine = pairs[0][pairs[1] == team]
            per_team[team] = {"hits": int(mine.size), "unique_hits": int(sum(k in unique_keys for k in mine.tolist()))}
        return {
            "teams": per_team,
            "found_hits": int(hit_keys.size),
            "unique_hits": len(unique_keys),
            "unique_share": float(len(unique_keys) / hit_keys.size) if hit_keys.size else None,
        }

    def frequent_false_positives(self, n: int = 10) -> list[dict[str, object]]:
        """Shots judged not relevant that the most runs returned."""
        return _by_run_count(self.false_keys, self.false_runs, n, most=True)

    def hard_true_positives(self, n: int = 10) -> list[dict[str, object]]:
        """Relevant shots that the fewest runs (but at least one) returned."""
        return _by_run_count(self.true_keys, self.true_runs, n, most=False)


_NO_HITS = np.empty((2, 0), dtype=str)


def hits_by_team(qrels: Qrels, runs: Sequence[RunTable], teams: Sequence[str], max_results: int) -> dict[str, object]:
    """Relevant shots found per team, how many only that team found, and the share of unique hits overall."""
    tally = RetrievedTally(qrels, max_results)
    tally.add(runs, teams)
    return tally.hits_by_team()


def frequent_false_positives(
    qrels: Qrels, runs: Sequence[RunTable], max_results: int, n: int = 10
) -> list[dict[str, object]]:
    """Shots judged not relevant that the most runs returned."""
    tally = RetrievedTally(qrels, max_results)
    tally.add(runs, [""] * len(runs))
    return tally.frequent_false_positives(n)


def hard_true_positives(
    qrels: Qrels, runs: Sequence[RunTable], max_results: int, n: int = 10
) -> list[dict[str, object]]:
    """Relevant shots that the fewest runs (but at least one) returned."""
    tally = RetrievedTally(qrels, max_results)
    tally.add(runs, [""] * len(runs))
    return tally.hard_true_positives(n)


def _counts_of(found: np.ndarray, counts: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    """int64 per `chosen` key: its count among the sorted distinct keys `found` (0 where absent)."""
    if len(found) == 0 or len(chosen) == 0:
        return np.zeros(len(chosen), dtype=np.int64)
    position = np.clip(np.searchsorted(found, chosen), 0, len(found) - 1)
    return np.where(found[position] == chosen, counts[position], 0).astype(np.int64)


def _by_run_count(chosen: np.ndarray, n_runs: np.ndarray, n: int, most: bool) -> list[dict[str, object]]:
    """The `chosen` qrels keys that some run returned, ordered by how many runs returned them (`n_runs`)."""
    present = n_runs > 0
    order = np.lexsort((chosen[present], -n_runs[present] if most else n_runs[present]))[:n]
    picked, picked_runs = chosen[present][order], n_runs[present][order]
    return [
        {"topic": split_key(key)[0], "shot": split_key(key)[1], "runs": int(count)}
        for key, count in zip(picked.tolist(), picked_runs.tolist(), strict=True)
    ]
