"""Slow, independent references for the analyses tests (plain Python over rows, no prepared arrays), and runs served
in blocks."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

import numpy as np

from app.evaluation.grading.prepared_runs import PreparedRuns, prepare_runs
from app.evaluation.measures.evaluate import evaluate
from app.evaluation.records import Qrels, RunTable


def trec_order(run: RunTable, max_results: int = 1000) -> dict[str, list[str]]:
    """{topic: docs in trec_eval order}: score descending, ties by docno descending; cut at max_results."""
    rows: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for topic, doc, score in zip(run.topics.tolist(), run.docs.tolist(), run.scores.tolist(), strict=True):
        rows[topic].append((score, doc))
    out = {}
    for topic, items in rows.items():
        items.sort(key=lambda item: item[1], reverse=True)
        items.sort(key=lambda item: item[0], reverse=True)
        out[topic] = [doc for _, doc in items[:max_results]]
    return out


def pooled_ranks(runs: list[RunTable], pooled: list[str], max_results: int = 1000) -> dict[tuple[str, str], int]:
    """{(topic, doc): best 1-based rank over the pooled runs}."""
    best: dict[tuple[str, str], int] = {}
    for run in runs:
        if run.tag not in pooled:
            continue
        for topic, docs in trec_order(run, max_results).items():
            for rank, doc in enumerate(docs, start=1):
                key = (topic, doc)
                best[key] = min(best.get(key, rank), rank)
    return best


def novelty_counts(
    qrels: Qrels, runs: list[RunTable], teams: list[str], max_results: int = 1000
) -> dict[tuple[str, str], tuple[int, int]]:
    """{(run, topic): (unique true, common false)}: per run's top max_results, the shots judged relevant (the last
    qrels line of a (topic, doc) decides) no other team's run returned, and those judged not relevant another did."""
    grade: dict[tuple[str, str], int] = {}
    for topic, doc, g in zip(qrels.topics.tolist(), qrels.docs.tolist(), qrels.grades.tolist(), strict=True):
        grade[(topic, doc)] = int(g)
    lists = [trec_order(run, max_results) for run in runs]
    returned: dict[tuple[str, str], set[str]] = defaultdict(set)
    for team, ranked in zip(teams, lists, strict=True):
        for topic, docs in ranked.items():
            for doc in docs:
                returned[(topic, doc)].add(team)
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for run, team, ranked in zip(runs, teams, lists, strict=True):
        for topic, docs in ranked.items():
            unique = sum(1 for doc in docs if grade.get((topic, doc), -1) >= 1 and returned[(topic, doc)] == {team})
            common = sum(1 for doc in docs if grade.get((topic, doc), -1) == 0 and len(returned[(topic, doc)]) > 1)
            out[(run.tag, topic)] = (unique, common)
    return out


def mean_over_topics(qrels: Qrels, runs: list[RunTable], keep: np.ndarray, measure: str) -> np.ndarray:
    """[n_run] mean of `measure` over all topics of `qrels`, evaluated on the lines where keep (0 for lost topics)."""
    topics = qrels.topic_names()
    results = evaluate(qrels.subset(keep), runs, [measure])
    total = np.zeros(len(runs))
    for j, topic in enumerate(results.topics):
        assert topic in topics
        total += results.values[:, 0, j]
    return total / len(topics)


def random_collection(seed: int, n_run: int = 6, n_topic: int = 4, n_doc: int = 40, length: int = 25):
    """Small random runs (with tied scores) and graded qrels covering part of what they retrieve."""
    rng = np.random.default_rng(seed)
    runs = []
    for r in range(n_run):
        topics, docs, scores = [], [], []
        for t in range(n_topic):
            if rng.random() < 0.1:
                continue  # a run missing a topic
            chosen = rng.choice(n_doc, size=length, replace=False)
            topics += [f"t{t}"] * length
            docs += [f"d{d:03d}" for d in chosen]
            scores += rng.integers(0, 8, size=length).astype(float).tolist()  # many ties
        n = len(docs)
        runs.append(
            RunTable(
                tag=f"run{r}",
                topics=np.array(topics, dtype=str),
                docs=np.array(docs, dtype=str),
                ranks=np.arange(1, n + 1),
                scores=np.array(scores, dtype=np.float64),
                lines=np.arange(1, n + 1),
            )
        )
    q_topics, q_docs, grades = [], [], []
    for t in range(n_topic):
        judged = rng.choice(n_doc + 5, size=n_doc // 2, replace=False)  # some judged docs nobody retrieved
        q_topics += [f"t{t}"] * len(judged)
        q_docs += [f"d{d:03d}" for d in judged]
        grades += rng.choice([0, 0, 1, 2], size=len(judged)).tolist()
    qrels = Qrels(
        topics=np.array(q_topics, dtype=str), docs=np.array(q_docs, dtype=str), grades=np.array(grades, dtype=np.int64)
    )
    return runs, qrels


class Blocks:
    """Runs prepared `size` at a time, re-prepared on every pass (`pooled_lines.RunBlocks`); counts the passes."""

    def __init__(self, runs: list[RunTable], size: int, max_results: int = 1000) -> None:
        self.runs, self.size, self.max_results, self.passes = runs, size, max_results, 0
        self.children: list[Blocks] = []

    @property
    def names(self) -> list[str]:
        return [run.tag for run in self.runs]

    def __iter__(self) -> Iterator[PreparedRuns]:
        self.passes += 1
        for lo in range(0, len(self.runs), self.size):
            yield prepare_runs(self.runs[lo : lo + self.size], self.max_results)

    def only(self, keep: np.ndarray) -> Blocks:
        chosen = Blocks([run for run, kept in zip(self.runs, keep.tolist(), strict=True) if kept], self.size)
        self.children.append(chosen)
        return chosen
