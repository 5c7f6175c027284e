"""trec_eval's measures as reductions over the grade matrix of all runs x topics (relevant: grade >= 1)."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from app.evaluation.grade_matrix import GradeMatrix

RELEVANCE_LEVEL = 1


def _safe_divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0."""
    denominator = np.broadcast_to(denominator, np.shape(numerator))
    out = np.zeros(np.shape(numerator), dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def _group_starts(grouped: np.ndarray) -> np.ndarray:
    """For each element of an array whose equal values stand together, the index of the first of them."""
    index = np.arange(len(grouped))
    new = np.empty(len(grouped), dtype=bool)
    new[:1] = True
    np.not_equal(grouped[1:], grouped[:-1], out=new[1:])
    return np.maximum.accumulate(np.where(new, index, 0)) if len(index) else index


class RankedLists:
    """Cached views of a GradeMatrix that several measures share."""

    def __init__(self, matrix: GradeMatrix) -> None:
        self.matrix = matrix

    @property
    def depth(self) -> int:
        """Width of the position axis."""
        return self.matrix.grades.shape[2]

    @cached_property
    def relevant(self) -> np.ndarray:
        """bool [run, topic, position]: the doc there is relevant."""
        return self.matrix.grades >= RELEVANCE_LEVEL

    @cached_property
    def cum_relevant(self) -> np.ndarray:
        """int [run, topic, position]: relevant docs at or above each position."""
        return np.cumsum(self.relevant, axis=2, dtype=np.int64)

    @cached_property
    def ranks(self) -> np.ndarray:
        """float [position]: 1-based rank of each position."""
        return np.arange(1, self.depth + 1, dtype=np.float64)

    @cached_property
    def num_rel(self) -> np.ndarray:
        """int [1, topic]: relevant docs in the qrels."""
        return self.matrix.judged.num_rel[None, :]

    @cached_property
    def discounts(self) -> np.ndarray:
        """float [position]: 1 / log2(rank + 1)."""
        return 1.0 / np.log2(self.ranks + 1.0)

    @cached_property
    def judged_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """(flat index into grades, grade) of every judged doc in the lists (grade >= 0), grouped by list in rank order.

        Judged docs are few, so measures that only sum over them are cheapest on these.
        """
        if self.matrix.judged_cells is not None:
            return self.matrix.judged_cells
        flat = np.flatnonzero(self.matrix.grades >= 0)
        return flat, self.matrix.grades.reshape(-1)[flat]

    @cached_property
    def relevant_cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where the relevant docs are: (run x topic cell, 0-based position, 1-based count in its list), each [n]."""
        flat, grades = self.judged_cells
        flat = flat[np.flatnonzero(grades >= RELEVANCE_LEVEL)]
        cell, position = np.divmod(flat, max(self.depth, 1))
        return cell, position, np.arange(1, len(flat) + 1) - _group_starts(cell)

    def sum_per_list(self, cell: np.ndarray, values: np.ndarray) -> np.ndarray:
        """float [run, topic]: `values` summed per run x topic cell."""
        shape = self.matrix.lengths.shape
        return np.bincount(cell, weights=values, minlength=shape[0] * shape[1]).reshape(shape)

    def relevant_at(self, k: int) -> np.ndarray:
        """int [run, topic]: relevant docs in the top k."""
        if self.depth == 0 or k <= 0:
            return np.zeros(self.matrix.lengths.shape, dtype=np.int64)
        return np.count_nonzero(self.matrix.grades[:, :, :k] >= RELEVANCE_LEVEL, axis=2).astype(np.int64)

    def relevant_at_each(self, cutoffs: np.ndarray) -> np.ndarray:
        """int [run, topic]: relevant docs in the top cutoffs[topic] (per-topic cutoffs)."""
        if self.depth == 0:
            return np.zeros(self.matrix.lengths.shape, dtype=np.int64)
        index = np.clip(cutoffs, 1, self.depth) - 1
        taken = np.take_along_axis(self.cum_relevant, np.broadcast_to(index, self.matrix.lengths.shape)[..., None], 2)
        return np.where(cutoffs > 0, taken[..., 0], 0)


def num_ret(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """Number of retrieved docs (after the max_results cut)."""
    return lists.matrix.lengths.astype(np.float64)


def num_rel(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """Number of relevant docs in the qrels."""
    return np.broadcast_to(lists.num_rel, lists.matrix.lengths.shape).astype(np.float64)


def num_rel_ret(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """Number of relevant docs retrieved."""
    return lists.relevant_at(lists.depth).astype(np.float64)


def average_precision(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """AP: mean over the relevant docs of the precision at their rank (unretrieved count 0); @k cuts the list."""
    cell, position, count = lists.relevant_cells
    inside = slice(None) if k is None else position < k
    return ap_per_list(cell[inside], position[inside] + 1.0, count[inside], lists.num_rel, lists.matrix.lengths.shape)


def ap_per_list(
    cell: np.ndarray, rank: np.ndarray, count: np.ndarray, num_rel: np.ndarray, shape: tuple[int, int]
) -> np.ndarray:
    """AP of every list (run x topic cell), the one AP formula of the core (analyses' subset AP uses it too).

    Each relevant retrieved doc adds `count / rank` (count: relevant docs at or above it, 0 to leave it out) to its
    list; the sum is divided by the topic's `num_rel` (broadcast over the runs), 0 where that is 0.
    """
    total = np.bincount(cell, weights=count / rank, minlength=shape[0] * shape[1]).reshape(shape)
    return _safe_divide(total, num_rel)


def precision_at(lists: RankedLists, k: int | None) -> np.ndarray:
    """P@k: relevant docs in the top k, over k."""
    assert k is not None
    return lists.relevant_at(k) / float(k)


def recall_at(lists: RankedLists, k: int | None) -> np.ndarray:
    """R@k: relevant docs in the top k, over all relevant docs."""
    assert k is not None
    return _safe_divide(lists.relevant_at(k).astype(np.float64), lists.num_rel)


def r_precision(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """Rprec: precision at rank R, R the number of relevant docs."""
    return _safe_divide(lists.relevant_at_each(lists.num_rel).astype(np.float64), lists.num_rel)


def reciprocal_rank(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """RR: 1 / rank of the first relevant doc (0 if none); @k looks at the top k only."""
    depth = lists.depth if k is None else min(k, lists.depth)
    hit = lists.relevant[:, :, :depth]
    if depth == 0:  # no run answers any judged topic: nothing retrieved, RR 0 (trec_eval prints zeros)
        return np.zeros(hit.shape[:2])
    first = np.argmax(hit, axis=2)
    return np.where(hit.any(axis=2), 1.0 / (first + 1.0), 0.0)


def bpref(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """bpref as trec_eval: each retrieved relevant doc loses min(nonrel above, R) / min(R, N)."""
    flat, grades = lists.judged_cells
    nonrel = grades < RELEVANCE_LEVEL
    seen = np.cumsum(nonrel)  # judged non-relevant docs at or above each judged doc, counted over all lists
    cell = flat // max(lists.depth, 1)
    first = _group_starts(cell)  # each list's first judged doc
    relevant = np.flatnonzero(~nonrel)
    nonrel_above = seen[relevant] - (seen - nonrel)[first[relevant]]  # a relevant doc does not count itself
    cell = cell[relevant]
    n_topic = lists.matrix.lengths.shape[1]
    r = lists.matrix.judged.num_rel[cell % n_topic]
    n = lists.matrix.judged.num_nonrel[cell % n_topic]
    penalty = _safe_divide(np.minimum(nonrel_above, r).astype(np.float64), np.minimum(r, n))
    return _safe_divide(lists.sum_per_list(cell, 1.0 - penalty), lists.num_rel)


def _ideal_dcg(lists: RankedLists, k: int | None) -> np.ndarray:
    """float [1, topic]: DCG of the qrels' grades sorted descending, over the top k (all if None)."""
    values = []
    for grades in lists.matrix.judged.grades:
        gains = np.sort(grades[grades > 0])[::-1].astype(np.float64)
        if k is not None:
            gains = gains[:k]
        values.append(float(np.sum(gains / np.log2(np.arange(2, len(gains) + 2)))))
    return np.array(values, dtype=np.float64)[None, :]


def ndcg(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """nDCG (gain = grade, discount log2(rank + 1)), over the whole list or its top k, as trec_eval."""
    depth = lists.depth if k is None else min(k, lists.depth)
    gains = np.clip(lists.matrix.grades[:, :, :depth], 0, None).astype(np.float64)
    dcg = gains @ lists.discounts[:depth] if depth else np.zeros(lists.matrix.lengths.shape)
    return _safe_divide(dcg, _ideal_dcg(lists, k))
