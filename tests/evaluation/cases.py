"""Generated cases shared by the evaluation and command-line tests (import them from here, never from a test
module): pytrec_eval's dicts and our tables of the same runs and qrels, random runs with ties and odd docnos,
sample_eval.pl's synthetic edge cases, and which recall levels trec_eval 9 and 10 round alike."""

from __future__ import annotations

import math

import numpy as np

from app.evaluation.formats.trec_files import parse_trec_run
from app.evaluation.records import Qrels, RunTable


def objects(values: list[str]) -> np.ndarray:
    """An object array of strings."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def to_qrels(qrels: dict[str, dict[str, int]]) -> Qrels:
    """Our Qrels from pytrec_eval's dict."""
    rows = [(t, d, g) for t, docs in qrels.items() for d, g in docs.items()]
    return Qrels(
        objects([r[0] for r in rows]), objects([r[1] for r in rows]), np.array([r[2] for r in rows], dtype=np.int64)
    )


def to_run(tag: str, run: dict[str, dict[str, float]]) -> RunTable:
    """Our RunTable from pytrec_eval's dict (rows in dict order)."""
    rows = [(t, d, s) for t, docs in run.items() for d, s in docs.items()]
    n = len(rows)
    return RunTable(
        tag=tag,
        topics=objects([r[0] for r in rows]),
        docs=objects([r[1] for r in rows]),
        ranks=np.arange(1, n + 1, dtype=np.int64),
        scores=np.array([r[2] for r in rows], dtype=np.float64),
        lines=np.arange(1, n + 1, dtype=np.int64),
    )


def random_case(rng: np.random.Generator, unjudged: bool) -> tuple[dict, dict]:
    """Graded qrels (some topics without relevant docs) and 3 runs with tied scores, missing and extra topics."""
    n_topic = int(rng.integers(1, 6))
    n_doc = int(rng.integers(3, 60))
    grades = [-1, 0, 0, 1, 2, 3] if unjudged else [0, 0, 0, 1, 2, 3]
    qrels: dict[str, dict[str, int]] = {}
    for t in range(n_topic):
        docs = rng.choice(n_doc, int(rng.integers(1, n_doc + 1)), replace=False)
        qrels[f"q{t}"] = {f"d{d:03d}": int(rng.choice(grades)) for d in docs}
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for r in range(3):
        run: dict[str, dict[str, float]] = {}
        for t in range(n_topic + 1):  # q{n_topic} is in the run only
            if rng.random() < 0.2:
                continue  # the run lacks this topic
            size = int(rng.integers(1, n_doc + 8))
            docs = rng.choice(n_doc + 10, size, replace=False)
            ties = int(rng.integers(1, 8))  # few distinct scores: many ties, broken by docno
            run[f"q{t}"] = {f"d{d:03d}": float(rng.integers(0, ties)) / 2 for d in docs}
        runs[f"run{r}"] = run
    return qrels, runs


def random_runs(seed: int, n_runs: int = 6) -> list[RunTable]:
    """Runs with shared and unicode docnos, heavy score ties, and some unsorted or topic-interleaved files."""
    rng = np.random.default_rng(seed)
    vocabulary = [f"d{i}" for i in range(40)] + ["caf\u00e9", "\u65e5\u672c", "D\U0001f600", "z" * 40, "a", "b"]
    runs = []
    for r in range(n_runs):
        lines = []
        for topic in rng.choice(["1", "2", "10", "t\u00e9", "3"], size=int(rng.integers(1, 5)), replace=False).tolist():
            docs = rng.choice(vocabulary, size=int(rng.integers(1, 30)), replace=False).tolist()
            scores = np.round(rng.random(len(docs)) * 3) / 2  # few distinct values: many ties
            if rng.random() < 0.7:
                scores = np.sort(scores)[::-1]
            rows = enumerate(zip(docs, scores.tolist(), strict=True))
            lines += [f"{topic} Q0 {d} {k + 1} {s!r} run{r}" for k, (d, s) in rows]
        if rng.random() < 0.2:
            rng.shuffle(lines)  # topics interleaved
        table = parse_trec_run("\n".join(lines) + "\n")
        if rng.random() < 0.3:  # tables built elsewhere: object arrays, no cached hashes
            table = RunTable(
                table.tag,
                table.topics.astype(object),
                table.docs.astype(object),
                table.ranks,
                table.scores,
                table.lines,
            )
        runs.append(table)
    return runs


def graded_copy(qrels_text: str, share: float = 0.4, seed: int = 16) -> str:
    """The qrels with a seeded `share` of the relevant lines made grade 2."""
    rng = np.random.default_rng(seed)
    lines = qrels_text.splitlines()
    out = []
    for line in lines:
        parts = line.split()
        if parts and parts[4] == "1" and rng.random() < share:
            parts[4] = "2"
        out.append(" ".join(parts))
    return "\n".join(out) + "\n"


def synthetic(seed: int, *, n_topics: int = 6, grades: tuple[int, ...] = (0, 1, 2)) -> tuple[str, str]:
    """Seeded stratified qrels and a run with the script's edge cases.

    A qrels topic the run lacks, a run topic the qrels lack, a topic with no relevant doc, a topic of 1500 results,
    tied scores, unjudged (-1) and unpooled docs, a topic with R_hat > 1000, strata labelled 1, 2 and 10.
    """
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for t in range(1, n_topics + 1):
        topic = str(100 + t) if t != 3 else "99"  # numeric and string orders differ
        docs = [f"s{t}_{i:05d}" for i in range(2500)]
        pooled = rng.choice(len(docs), 1800 if t == 2 else 400, replace=False)
        for i, index in enumerate(pooled.tolist()):
            stratum = ("1", "2", "10")[min(i * 3 // len(pooled), 2)]
            sampled = stratum == "1" or rng.random() < 0.3
            grade = int(rng.choice(grades)) if sampled else -1
            if t == 4 and grade > 0:
                grade = 0  # no relevant doc at all
            if t == 2 and sampled and stratum != "10":
                grade = int(rng.choice(grades[1:]))  # many relevant: R_hat > 1000
            qrels.append(f"{topic} 0 {docs[index]} {stratum} {grade}")
        if t == 5:
            continue  # judged, not answered
        length = 1500 if t == 1 else int(rng.integers(20, 900))
        ranked = rng.choice(len(docs), length, replace=False)
        scores = np.round(rng.random(length) * 20) / 2  # few distinct values: many ties
        run += [f"{topic} Q0 {docs[d]} 1 {s} syn" for d, s in zip(ranked.tolist(), scores.tolist(), strict=True)]
    run += [f"777 Q0 s1_{i:05d} 1 {i} syn" for i in range(30)]  # a topic the qrels lack
    return "\n".join(qrels) + "\n", "\n".join(run) + "\n"


def v9_rounding_agrees(num_rel: int) -> bool:
    """Whether trec_eval 10's lround(x R) and 9's (long)(x R + 0.9) give the same recall cutoffs for this R.

    pytrec_eval bundles trec_eval 9's rounding of iprec_at_recall and 11pt_avg cutoffs; 10.0 (whose outputs the
    reference tests check) rounds; the two agree only for some R.
    """
    levels = [i / 10 for i in range(11)]
    return all(int(x * num_rel + 0.9) == math.floor(x * num_rel + 0.5) for x in levels)
