"""The sparse list views of the measures (ListCells) and the two ways of cutting DCG give the dense arrays' values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.evaluation.grading.grade_matrix import NOT_POOLED, PADDING, GradeMatrix, JudgedTopics
from app.evaluation.measures import trec
from app.evaluation.measures.trec import ListCells, RankedLists


def random_matrix(seed: int, n_run: int = 4, n_topic: int = 5, depth: int = 30) -> GradeMatrix:
    """Random grades (-2..3 judged or pooled, else not pooled) in lists of random lengths, with their qrels counts."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, depth + 1, size=(n_run, n_topic))
    grades = np.where(
        rng.random((n_run, n_topic, depth)) < 0.4, rng.integers(-2, 4, (n_run, n_topic, depth)), NOT_POOLED
    )
    grades = np.where(np.arange(depth) < lengths[..., None], grades, PADDING)
    judged = [np.append(rng.integers(-1, 4, size=int(rng.integers(0, 40))), -1) for _ in range(n_topic)]
    topics = JudgedTopics(
        topics=[f"t{t}" for t in range(n_topic)],
        grades=judged,
        num_rel=np.array([(g >= 1).sum() for g in judged], dtype=np.int64),
        num_nonrel=np.array([(g == 0).sum() for g in judged], dtype=np.int64),
        strata=None,
        pooled=None,
        judged=None,
        relevant=None,
    )
    return GradeMatrix(grades, None, lengths, lengths > 0, topics, depth)


@pytest.mark.parametrize("seed", range(5))
def test_list_cells_match_per_list_loops(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_lists, depth = 7, 20
    mask = rng.random((n_lists, depth)) < 0.3
    flat = np.flatnonzero(mask)
    cells = ListCells(flat // depth, flat % depth, n_lists, depth)
    values = rng.random(len(flat))
    running = cells.running_sum(values)
    best = cells.best_below(values)
    cutoffs = rng.integers(0, depth + 2, n_lists)
    nth = rng.integers(-1, depth + 2, n_lists)
    for i in range(n_lists):
        mine = np.flatnonzero(flat // depth == i)
        assert cells.counts[i] == len(mine)
        assert running[mine].tolist() == np.cumsum(values[mine]).tolist()  # bit for bit, from 0.0 per list
        assert best[mine].tolist() == [max(values[mine][j:]) for j in range(len(mine))]
        assert cells.before(cutoffs)[i] == int(np.count_nonzero(flat[mine] % depth < cutoffs[i]))
        expected = values[mine][nth[i] - 1] if 1 <= nth[i] <= len(mine) else 0.0
        assert cells.nth(values, nth)[i] == expected
        assert cells.total(values)[i] == (float(np.cumsum(values[mine])[-1]) if len(mine) else 0.0)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("gains", [None, {1: 3.0, 2: 9.0}, {-1: 0.5, -2: 1.0}, {0: -1.0}])
def test_dcg_on_the_cut_equals_dcg_from_the_sparse_gains(seed: int, gains: dict[int, float] | None) -> None:
    lists = RankedLists(random_matrix(seed))
    table = lists.gain_table(gains)
    for k in (1, 3, 10, 30, 50):
        on_cut = table.dcg_at(k)  # a scalar cutoff this small is summed over the top k ranks
        sparse = table.dcg_at(np.full(lists.shape, k))  # per-list cutoffs read the sparse running sums
        assert on_cut.tolist() == sparse.tolist()


def test_dcg_at_a_cutoff_is_trec_evals_loop() -> None:
    matrix = random_matrix(7)
    lists = RankedLists(matrix)
    value = trec.dcg(lists, None)
    at_five = lists.gain_table().dcg_at(5)
    levels = lists.gain_table().num_levels
    for r in range(matrix.grades.shape[0]):
        for t in range(matrix.grades.shape[1]):
            total = top5 = 0.0
            for i, grade in enumerate(matrix.grades[r, t, : matrix.lengths[r, t]].tolist()):
                if 0 < grade < levels[t]:
                    total += grade / math.log2(i + 2)
                    top5 = total if i < 5 else top5
            assert value[r, t] == total
            assert at_five[r, t] == top5
