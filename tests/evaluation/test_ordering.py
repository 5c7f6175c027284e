"""`ranked_order` (trec_eval's rule: score desc, docno desc, lists kept together) against one plain lexsort."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.grading.run_order import run_order
from app.evaluation.ordering import ranked_order
from app.evaluation.records import RunTable


def reference(groups: np.ndarray, scores: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Groups in order of first appearance, then score desc, then docno desc: one lexsort."""
    _, first, inverse = np.unique(groups, return_index=True, return_inverse=True)
    seen = np.argsort(np.argsort(first))[inverse.reshape(-1)]
    _, doc_rank = np.unique(docs, return_inverse=True)
    return np.lexsort((-doc_rank.reshape(-1), -scores, seen))


def random_rows(rng: np.random.Generator, n_chunks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[int]]:
    """Chunks of rows (each its own groups), some sorted already, some split or with ties; docnos unique per group."""
    groups, scores, docs, bounds = [], [], [], [0]
    for chunk in range(n_chunks):
        n_group = int(rng.integers(1, 5))
        rows = []
        for g in range(n_group):
            size = int(rng.integers(1, 12))
            values = np.round(rng.random(size) * 3) if rng.random() < 0.7 else rng.random(size)
            if rng.random() < 0.5:
                values = np.sort(values)[::-1]
            names = rng.choice(40, size, replace=False)
            rows += [(chunk * 10 + g, float(v), f"d{int(d)}") for v, d in zip(values, names, strict=True)]
        if rng.random() < 0.3:
            rows = [rows[i] for i in rng.permutation(len(rows))]  # split groups
        groups += [r[0] for r in rows]
        scores += [r[1] for r in rows]
        docs += [r[2] for r in rows]
        bounds.append(len(groups))
    return np.array(groups, np.int64), np.array(scores), np.array(docs), bounds


@pytest.mark.parametrize("seed", range(60))
def test_ranked_order_is_the_lexsort_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    groups, scores, docs, bounds = random_rows(rng, int(rng.integers(1, 6)))
    expected = reference(groups, scores, docs)
    for chunks in (None, bounds):
        for doc_values in (docs, docs.astype(object), np.unique(docs, return_inverse=True)[1].reshape(-1)):
            order = ranked_order(groups, scores, doc_values, chunks)
            got = np.arange(len(groups)) if order is None else order
            assert got.tolist() == expected.tolist()


def test_ranked_order_none_only_when_already_ranked() -> None:
    groups = np.array([3, 3, 1, 1])
    assert ranked_order(groups, np.array([2.0, 1.0, 5.0, 5.0]), np.array(["b", "a", "z", "y"])) is None
    swapped = ranked_order(groups, np.array([2.0, 1.0, 5.0, 5.0]), np.array(["b", "a", "y", "z"]))
    assert swapped is not None and swapped.tolist() == [0, 1, 3, 2]
    split = ranked_order(np.array([1, 2, 1]), np.array([1.0, 1.0, 0.0]), np.array(["a", "b", "c"]))
    assert split is not None and split.tolist() == [0, 2, 1]
    assert ranked_order(np.zeros(0, np.int64), np.zeros(0), np.zeros(0, str)) is None


@pytest.mark.parametrize("seed", range(30))
def test_a_run_order_places_rows_as_the_full_order_does(seed: int) -> None:
    """RunOrder keeps a tie-only order as its changes: rows, positions and positions_of agree with the reference."""
    rng = np.random.default_rng(seed)
    groups, scores, docs, _ = random_rows(rng, 1)
    table = RunTable("r", np.array([f"t{g}" for g in groups]), docs, np.zeros(len(docs), np.int64), scores,
                     np.arange(1, len(docs) + 1))  # fmt: skip
    order = run_order(table)
    expected = reference(groups, scores, docs)
    rows = np.arange(len(docs)) if order.rows is None else order.rows
    assert rows.tolist() == expected.tolist()
    inverse = np.empty(len(docs), np.int64)
    inverse[expected] = np.arange(len(docs))
    assert order.positions.tolist() == inverse.tolist()
    asked = rng.choice(len(docs), size=min(len(docs), 7), replace=False)
    asked.sort()
    assert order.positions_of(asked).tolist() == inverse[asked].tolist()
    assert order.in_file_order == (expected.tolist() == list(range(len(docs))))
