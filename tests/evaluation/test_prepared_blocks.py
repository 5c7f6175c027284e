"""Runs prepared a block at a time and joined: the same `PreparedRuns`, array for array, as all at once."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.grading.prepared_blocks import join_prepared
from app.evaluation.grading.prepared_runs import PreparedRuns, prepare_runs
from app.evaluation.records import RunTable


def random_runs(seed: int) -> list[RunTable]:
    """Runs over overlapping topics and docs, with tied scores, lists longer than the cut and empty runs."""
    rng = np.random.default_rng(seed)
    runs = []
    for i in range(int(rng.integers(1, 9))):
        topics = [t for t in ["1", "2", "10", "3b", "\u00e9"] if rng.random() < 0.7]
        rows = []
        for t in topics:
            n = int(rng.integers(0, 14))
            docs = rng.choice(40, size=n, replace=False)
            scores = rng.integers(0, 5, size=n).astype(float)  # many ties: docno order decides
            rows += [(t, f"d{d:02d}" if d % 3 else f"D{d}", float(s)) for d, s in zip(docs, scores, strict=True)]
        rng.shuffle(rows)  # a file need not be in order
        n = len(rows)
        runs.append(
            RunTable(
                f"tag{i}",
                np.array([r[0] for r in rows], dtype=str),
                np.array([r[1] for r in rows], dtype=str),
                np.arange(1, n + 1, dtype=np.int64),
                np.array([r[2] for r in rows], dtype=np.float64),
                np.arange(1, n + 1, dtype=np.int64),
            )
        )
    return runs


def same(a: PreparedRuns, b: PreparedRuns) -> None:
    """Every field equal, dtypes and shapes included."""
    assert (a.names, a.topics, a.docs, a.max_results) == (b.names, b.topics, b.docs, b.max_results)
    for field in ("pairs", "lengths", "pair_topic", "pair_doc"):
        x, y = getattr(a, field), getattr(b, field)
        assert x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y), field


@pytest.mark.parametrize("seed", range(25))
@pytest.mark.parametrize("max_results", [1, 5, 1000])
def test_blocks_joined_are_all_runs_prepared_at_once(seed: int, max_results: int) -> None:
    runs = random_runs(seed)
    names = [f"run{i}" for i in range(len(runs))]
    whole = prepare_runs(runs, max_results, names=names)
    for size in (1, 2, len(runs)):
        parts = (
            prepare_runs(runs[i : i + size], max_results, names=names[i : i + size]) for i in range(0, len(runs), size)
        )
        same(join_prepared(parts, max_results), whole)


def test_runs_without_rows_join_to_the_empty_preparation() -> None:
    empty = RunTable("e", *(np.zeros(0, dtype=t) for t in (str, str, np.int64, np.float64, np.int64)))
    whole = prepare_runs([empty, empty], 10, names=["a", "b"])
    joined = join_prepared((prepare_runs([empty], 10, names=[n]) for n in "ab"), 10)
    same(joined, whole)
    assert joined.pairs.shape == (2, 0, 0)
