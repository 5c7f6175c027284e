"""Runs for pool-builder tests: random runs with ties, missing topics and short lists, and their brute-force ranking."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FakeRun:
    topics: np.ndarray
    docs: np.ndarray
    scores: np.ndarray


def random_runs(rng: np.random.Generator, n_runs: int = 6, n_topics: int = 4, n_docs: int = 60) -> list[FakeRun]:
    """Runs with ties in scores, missing topics and short lists."""
    runs = []
    for _ in range(n_runs):
        topics, docs, scores = [], [], []
        for t in range(n_topics):
            if rng.random() < 0.15:
                continue
            k = int(rng.integers(1, n_docs))
            chosen = rng.choice(n_docs, size=k, replace=False)
            topics += [f"t{t}"] * k
            docs += [f"d{d:03d}" for d in chosen]
            scores += rng.integers(0, 6, size=k).astype(float).tolist()  # many ties
        runs.append(FakeRun(np.array(topics, dtype=str), np.array(docs, dtype=str), np.array(scores)))
    return runs


def brute_ranked(run: FakeRun) -> dict[str, list[str]]:
    """Each topic's docs in trec order: score descending, then docno descending."""
    out: dict[str, list[tuple[float, str]]] = {}
    for t, d, s in zip(run.topics.tolist(), run.docs.tolist(), run.scores.tolist(), strict=True):
        out.setdefault(t, []).append((s, d))
    return {t: [d for s, d in sorted(rows, key=lambda x: (x[0], x[1]), reverse=True)] for t, rows in out.items()}
