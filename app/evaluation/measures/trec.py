"""trec_eval's measures as reductions over the grade matrix of all runs x topics.

Every function here computes one trec_eval 10.0 measure for every run x topic at once and follows trec_eval's own
arithmetic: each quotient is formed as its C code forms it, every sum is taken in rank order (sequentially, with
`np.cumsum` or `np.bincount`, never numpy's pairwise `np.sum`), powers of p are repeated products and logarithms
come from the C library (`math.log2`), so `trecpool trec_eval` prints trec_eval's bytes. A doc is relevant when its
grade reaches the lists' relevance level (trec_eval -l, default 1); grades below 0 in the qrels are pooled but not
judged (trec_eval's -2); docs missing from the qrels are not pooled (-1).

Speed: no measure builds a float array over the full depth of every list. Measures that add up over judged or
relevant docs read them sparsely (`ListCells`: the few docs in the qrels, with per-list running sums and counts
shared by the measures of one call through `RankedLists`); a cut-off measure reads the top k ranks only; only the
residuals over unjudged docs (rbp_resid, RBP_resid) still walk the whole lists.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cached_property

import numpy as np

from app.evaluation.grading.grade_matrix import NOT_POOLED, PADDING, GradeMatrix

RELEVANCE_LEVEL = 1
MIN_GEO_MEAN = 1e-5  # trec_eval's floor for the logarithm of gm_map and gm_bpref
INFAP_EPSILON = 1e-5  # trec_eval's smoothing in infAP
RBP_RESIDUAL_P = 0.9  # trec_eval's rbp_resid persistence (fixed in its code)
ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
NONPOOL_LEVEL = -1  # trec_eval's relevance value of a retrieved doc missing from the qrels
UNJUDGED_LEVEL = -2  # trec_eval's relevance value of a doc in the qrels with a grade below 0

Gains = Mapping[int, float]  # relevance level -> gain (trec_eval's `-m ndcg.1=3,2=9`); other levels gain the level


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


def sequential_sum(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """The sum along `axis` taken element after element from 0.0, as a C loop adds (numpy's sum is pairwise)."""
    if values.shape[axis] == 0:
        return np.zeros(np.delete(values.shape, axis % values.ndim))
    total: np.ndarray = np.cumsum(values, axis=axis).take(-1, axis=axis) + 0.0
    return total


def _lround(values: np.ndarray) -> np.ndarray:
    """C's lround: the nearest integer, halves away from zero (int64)."""
    low = np.floor(np.abs(values))
    rounded = low + (np.abs(values) - low >= 0.5)
    return np.asarray(np.sign(values) * rounded, dtype=np.int64)


def _log2(values: np.ndarray) -> np.ndarray:
    """log2 of each value by the C library (numpy's vectorised log2 may differ from it in the last bit).

    Many whole numbers in a short range (ranks, counts) are looked up in a table of the library's values of those
    numbers, the same values a call per element gives.
    """
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    if len(flat) > 256 and np.isfinite(flat).all():
        low, high = float(flat.min()), float(flat.max())
        if low >= 1.0 and high - low <= 4 * len(flat) and (flat == np.floor(flat)).all():
            table = np.fromiter(map(math.log2, range(int(low), int(high) + 1)), np.float64, int(high - low) + 1)
            return table[flat.astype(np.int64) - int(low)].reshape(np.shape(values))
    return np.fromiter(map(math.log2, flat.tolist()), np.float64, len(flat)).reshape(np.shape(values))


def _log(values: np.ndarray) -> np.ndarray:
    """Natural logarithm of each value by the C library."""
    flat = np.asarray(values, dtype=np.float64).reshape(-1)
    return np.fromiter(map(math.log, flat.tolist()), np.float64, len(flat)).reshape(np.shape(values))


class ListCells:
    """Some docs of the ranked lists, the sparse form of a [run, topic, position] array that is 0 elsewhere: each doc's
    list (run x topic cell, ascending) and 0-based position (ascending within its list).

    Measures that only add up over judged or relevant docs read these instead of full-depth arrays: every sum still
    runs in rank order (a list's docs in order, from 0.0), so the values are those of the dense arrays.
    """

    def __init__(self, cell: np.ndarray, position: np.ndarray, n_lists: int, depth: int) -> None:
        self.cell = cell
        self.position = position
        self.n_lists = n_lists
        self.depth = max(depth, 1)
        self.starts = np.searchsorted(cell, np.arange(n_lists + 1))  # list i's docs are starts[i]:starts[i + 1]

    @cached_property
    def counts(self) -> np.ndarray:
        """int [list]: docs of each list."""
        counts: np.ndarray = np.diff(self.starts)
        return counts

    @cached_property
    def count(self) -> np.ndarray:
        """int [doc]: 1-based count of each doc in its list (docs of the list at or above it)."""
        count: np.ndarray = np.arange(1, len(self.cell) + 1) - self.starts[self.cell]
        return count

    @cached_property
    def keys(self) -> np.ndarray:
        """int [doc]: list x depth + position, ascending."""
        keys: np.ndarray = self.cell * self.depth + self.position
        return keys

    def before(self, cutoffs: np.ndarray | int) -> np.ndarray:
        """int [list]: docs of each list at a position below its cutoff (a number, or one per list)."""
        keys = self.keys
        limit = np.clip(np.broadcast_to(np.asarray(cutoffs).reshape(-1), (self.n_lists,)), 0, self.depth)
        found: np.ndarray = np.searchsorted(keys, np.arange(self.n_lists) * self.depth + limit) - self.starts[:-1]
        return found

    def nth(self, values: np.ndarray, n: np.ndarray) -> np.ndarray:
        """float [list]: `values` (per doc) at each list's n-th doc (1-based), 0 where n < 1 or past the list."""
        n = np.broadcast_to(np.asarray(n).reshape(-1), (self.n_lists,))
        if len(values) == 0:
            return np.zeros(self.n_lists)
        where = np.clip(self.starts[:-1] + n - 1, 0, len(values) - 1)
        return np.where((n >= 1) & (n <= self.counts), values[where], 0.0)

    def total(self, values: np.ndarray) -> np.ndarray:
        """float [list]: `values` (per doc) summed per list in rank order."""
        return np.bincount(self.cell, weights=values, minlength=self.n_lists)

    def running_sum(self, values: np.ndarray) -> np.ndarray:
        """float [doc]: `values` summed down each list to each doc, in rank order from 0.0 (as np.cumsum per list)."""
        if len(values) == 0:
            return np.zeros(0)
        column = self.count - 1
        padded = np.zeros((self.n_lists, int(self.counts.max())))
        padded[self.cell, column] = values
        summed: np.ndarray = np.cumsum(padded, axis=1)[self.cell, column]
        return summed

    def best_below(self, values: np.ndarray) -> np.ndarray:
        """float [doc]: the largest of `values` at each doc and the docs below it in its list (values >= 0)."""
        best = np.array(values, dtype=np.float64)
        longest = int(self.counts.max(initial=0))
        step = 1
        while step < longest:  # doubling: after a step, each doc holds the best of the next 2 * step docs of its list
            same = self.cell[step:] == self.cell[:-step]
            np.maximum(best[:-step], np.where(same, best[step:], 0.0), out=best[:-step])
            step *= 2
        return best


class RankedLists:
    """Cached views of a GradeMatrix that several measures share, at one relevance level (trec_eval -l)."""

    def __init__(self, matrix: GradeMatrix, relevance_level: int = RELEVANCE_LEVEL) -> None:
        if relevance_level < 0:
            raise ValueError("the relevance level must be at least 0")
        self.matrix = matrix
        self.relevance_level = relevance_level
        self.cache: dict[object, object] = {}  # per-parameter views (gain tables, powers of p)

    @property
    def depth(self) -> int:
        """Width of the position axis."""
        return int(self.matrix.grades.shape[2])

    @property
    def shape(self) -> tuple[int, int]:
        """(runs, topics)."""
        return self.matrix.lengths.shape

    @property
    def lengths(self) -> np.ndarray:
        """int [run, topic]: docs retrieved (num_ret)."""
        return self.matrix.lengths

    @property
    def n_lists(self) -> int:
        """runs x topics."""
        return int(self.matrix.lengths.size)

    def inside(self, width: int) -> np.ndarray:
        """bool [run, topic, position < width]: the position holds a retrieved doc."""
        return np.arange(min(width, self.depth))[None, None, :] < self.matrix.lengths[..., None]

    def unjudged(self, width: int) -> np.ndarray:
        """bool [run, topic, position < width]: a retrieved doc without a judgement (not in the qrels, grade < 0)."""
        return self.inside(width) & (self.matrix.grades[:, :, :width] < 0)

    @cached_property
    def ranks(self) -> np.ndarray:
        """float [position]: 1-based rank of each position."""
        return np.arange(1, self.depth + 1, dtype=np.float64)

    @cached_property
    def rel_levels(self) -> np.ndarray:
        """int [topic, level]: qrels docs of each grade 0, 1, ... per topic (trec_eval's rel_levels)."""
        grades = self.matrix.judged.grades
        sizes = np.array([len(g) for g in grades], dtype=np.int64)
        flat = np.concatenate(grades).astype(np.int64) if len(grades) else np.zeros(0, np.int64)
        topic = np.repeat(np.arange(len(grades)), sizes)
        keep = flat >= 0
        width = int(flat[keep].max()) + 1 if keep.any() else 1
        width = max(width, self.relevance_level + 1)
        cells = np.bincount(topic[keep] * width + flat[keep], minlength=len(grades) * width)
        return cells.reshape(len(grades), width).astype(np.int64)

    @cached_property
    def num_rel(self) -> np.ndarray:
        """int [1, topic]: relevant docs in the qrels."""
        counts: np.ndarray = self.rel_levels[:, self.relevance_level :].sum(axis=1)[None, :]
        return counts

    @cached_property
    def num_nonrel(self) -> np.ndarray:
        """int [1, topic]: judged docs below the relevance level in the qrels."""
        counts: np.ndarray = self.rel_levels[:, : self.relevance_level].sum(axis=1)[None, :]
        return counts

    @cached_property
    def num_rel_ret(self) -> np.ndarray:
        """int [run, topic]: relevant docs retrieved."""
        return self.relevant.counts.reshape(self.shape).astype(np.int64)

    def log2_of_rank_plus_one(self, size: int) -> np.ndarray:
        """float [size]: log2(rank + 1) for ranks 1..size, from the C library (trec_eval's DCG discounts)."""
        table = self.cache.get("log2")
        if not isinstance(table, np.ndarray) or len(table) < size:
            table = _log2(np.arange(2, max(size, self.depth) + 2, dtype=np.float64))
            self.cache["log2"] = table
        return table[:size]

    @cached_property
    def judged_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """(flat index into grades, grade) of every judged doc in the lists (grade >= 0), ascending (so grouped by
        list, each list's in rank order).

        Judged docs are few, so measures that only sum over them are cheapest on these.
        """
        if self.matrix.judged_cells is None:
            flat = np.flatnonzero(self.matrix.grades >= 0)
            return flat, self.matrix.grades.reshape(-1)[flat]
        flat, grades = self.matrix.judged_cells
        if len(flat) > 1 and bool(np.any(flat[1:] < flat[:-1])):  # lists grouped in another order than the matrix's
            order = np.argsort(flat, kind="stable")
            flat, grades = flat[order], grades[order]
        return flat, grades

    @cached_property
    def pooled_cells(self) -> tuple[np.ndarray, np.ndarray]:
        """(flat index, grade) of every retrieved doc in the qrels (judged, or pooled: grade below 0), ascending."""
        if not any(bool((grades < 0).any()) for grades in self.matrix.judged.grades):
            return self.judged_cells  # no grade below 0 in the qrels: the pooled docs are the judged ones
        grades = self.matrix.grades.reshape(-1)
        flat = np.flatnonzero((grades != NOT_POOLED) & (grades != PADDING))
        return flat, grades[flat]

    def cells(self, flat: np.ndarray) -> ListCells:
        """The docs at these ascending flat indices into grades, as ListCells."""
        cell, position = np.divmod(flat, max(self.depth, 1))
        return ListCells(cell, position, self.n_lists, self.depth)

    @cached_property
    def relevant(self) -> ListCells:
        """The relevant docs of the lists."""
        flat, grades = self.judged_cells
        return self.cells(flat[grades >= self.relevance_level])

    @cached_property
    def relevant_cells(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Where the relevant docs are: (run x topic cell, 0-based position, 1-based count in its list), each [n]."""
        relevant = self.relevant
        return relevant.cell, relevant.position, relevant.count

    def sum_per_list(self, cell: np.ndarray, values: np.ndarray) -> np.ndarray:
        """float [run, topic]: `values` summed per run x topic cell, in the order given (sequentially)."""
        shape = self.shape
        return np.bincount(cell, weights=values, minlength=shape[0] * shape[1]).reshape(shape)

    def relevant_at(self, k: int) -> np.ndarray:
        """int [run, topic]: relevant docs in the top k."""
        if self.depth == 0 or k <= 0:
            return np.zeros(self.shape, dtype=np.int64)
        if k >= self.depth:
            return self.num_rel_ret
        return self.relevant.before(k).reshape(self.shape).astype(np.int64)

    def relevant_at_each(self, cutoffs: np.ndarray) -> np.ndarray:
        """int [run, topic]: relevant docs in the top cutoffs (per topic or per list; 0 at 0)."""
        cutoffs = np.broadcast_to(cutoffs, self.shape)
        return self.relevant.before(cutoffs).reshape(self.shape).astype(np.int64)

    def powers(self, p: float, size: int) -> np.ndarray:
        """float [size + 1]: 1, p, p*p, ... formed by repeated multiplication, as trec_eval's rbp loop forms them."""
        key = ("powers", p)
        table = self.cache.get(key)
        if not isinstance(table, np.ndarray) or len(table) < size + 1:
            table = np.cumprod(np.concatenate(([1.0], np.full(max(size, self.depth), p))))
            self.cache[key] = table
        return table[: size + 1]

    def gain_table(self, gains: Gains | None = None) -> GainTable:
        """trec_eval's gains of every level (the level itself unless `gains` says otherwise), computed once."""
        key = ("gains", tuple(sorted((gains or {}).items())))
        table = self.cache.get(key)
        if not isinstance(table, GainTable):
            table = GainTable(self, dict(gains or {}))
            self.cache[key] = table
        return table


class GainTable:
    """trec_eval's `setup_gains` for every topic: each level's gain, the gain at each rank, and the ideal ranking.

    A level's gain is the level unless given (levels -1 and -2 are trec_eval's not-pooled and unjudged docs); the
    levels of a topic are 0 up to its highest judged grade, plus the given ones. The ideal ranking holds each level's
    judged docs in order of decreasing gain while the gain is above 0.
    """

    def __init__(self, lists: RankedLists, gains: dict[int, float]) -> None:
        self.lists = lists
        levels = lists.rel_levels
        present = levels > 0
        width = levels.shape[1]
        self.num_levels = np.where(present.any(axis=1), width - np.argmax(present[:, ::-1], axis=1), 0)
        self.gains = gains
        ideal = []
        extremes = []
        for topic, count in enumerate(levels.tolist()):
            own = {level: float(level) for level in range(int(self.num_levels[topic]))}
            own.update(gains)
            pairs = sorted(((gain, count[level] if 0 <= level < width else 0) for level, gain in own.items()))
            ideal.append([gain for gain, n in reversed(pairs) if gain > 0.0 for _ in range(n)])
            values = list(own.values())
            extremes.append((min(values, default=0.0), max(values, default=0.0)))
        self.ideal_count = np.array([len(g) for g in ideal], dtype=np.int64)  # K: docs with a positive ideal gain
        self.ideal = np.zeros((len(ideal), int(self.ideal_count.max(initial=0))))
        for topic, values in enumerate(ideal):
            self.ideal[topic, : len(values)] = values
        self.extremes = np.array(extremes, dtype=np.float64).reshape(-1, 2)

    def _level_gain(self, trec_levels: np.ndarray, topic: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(gain, whether the level is one of the topic's gain levels) of trec_eval relevance values."""
        gain = np.where(trec_levels >= 0, trec_levels, 0).astype(np.float64)
        listed = (trec_levels >= 0) & (trec_levels < self.num_levels[topic])
        for level, value in self.gains.items():
            hit = trec_levels == level
            gain = np.where(hit, value, gain)
            listed = listed | hit
        return np.where(listed, gain, 0.0), listed

    def _dense_gains(self, width: int) -> np.ndarray:
        """float [run, topic, position < width]: the gain of the doc at each rank of the top `width` (0 past ends)."""
        grades = self.lists.matrix.grades[:, :, :width]
        inside = self.lists.inside(width)
        levels = np.where(grades == NOT_POOLED, NONPOOL_LEVEL, np.where(grades < 0, UNJUDGED_LEVEL, grades))
        topic = np.arange(self.lists.shape[1])[None, :, None]
        gain, _ = self._level_gain(np.where(inside, levels, np.int64(-1000)), topic)
        return np.where(inside, gain, 0.0)

    @cached_property
    def source(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(flat index, trec_eval level, topic) of every retrieved doc whose level may have a gain, ascending.

        Those are the docs in the qrels; every retrieved doc when the gains give not-pooled docs (level -1) one.
        """
        lists = self.lists
        if NONPOOL_LEVEL in self.gains:
            flat = np.flatnonzero(lists.inside(lists.depth))
            grade = lists.matrix.grades.reshape(-1)[flat]
        else:
            flat, grade = lists.pooled_cells
        level = np.where(grade == NOT_POOLED, NONPOOL_LEVEL, np.where(grade < 0, UNJUDGED_LEVEL, grade))
        topic = (flat // max(lists.depth, 1)) % lists.shape[1]
        return flat, level, topic

    @cached_property
    def gained(self) -> tuple[ListCells, np.ndarray]:
        """The docs with a gain other than 0, and their gains [doc] (trec_eval's gain at their rank)."""
        flat, level, topic = self.source
        gain, _ = self._level_gain(level, topic)
        keep = gain != 0
        return self.lists.cells(flat[keep]), gain[keep]

    @cached_property
    def dcg_running(self) -> np.ndarray:
        """float [doc of `gained`]: the DCG down to each doc with a gain, summed in rank order."""
        cells, gain = self.gained
        discount = self.lists.log2_of_rank_plus_one(self.lists.depth)
        return cells.running_sum(gain / discount[cells.position])

    @cached_property
    def normalised(self) -> tuple[ListCells, np.ndarray]:
        """The docs with an rbp gain other than 0, and their gains, scaled to 0..1 per topic when some gain lies outside
        it (trec_eval's rbp)."""
        flat, level, topic = self.source
        gain, listed = self._level_gain(level, topic)
        low, high = self.extremes[:, 0][topic], self.extremes[:, 1][topic]
        scale = (low < 0) | (high > 1)
        with np.errstate(divide="ignore", invalid="ignore"):
            scaled = (gain - low) / (high - low)
        value = np.where(listed, np.where(scale, scaled, gain), 0.0)
        keep = value != 0
        return self.lists.cells(flat[keep]), value[keep]

    @cached_property
    def ideal_cumulative(self) -> np.ndarray:
        """float [topic, K]: the ideal DCG down to each rank of the ideal ranking, summed in rank order."""
        width = self.ideal.shape[1]
        terms = self.ideal / self.lists.log2_of_rank_plus_one(width)[None, :]
        return np.cumsum(terms, axis=1)

    def ideal_at(self, k: np.ndarray | int) -> np.ndarray:
        """float [1, topic] or [run, topic]: the ideal DCG of the top k (k a number, per topic or per list)."""
        cut = np.minimum(np.asarray(k), self.ideal_count[None, :])
        if self.ideal.shape[1] == 0:
            return np.zeros(cut.shape)
        topic = np.broadcast_to(np.arange(self.ideal.shape[0])[None, :], cut.shape)
        taken = self.ideal_cumulative[topic, np.maximum(cut, 1) - 1]
        return np.where(cut > 0, taken, 0.0)

    def ideal_by_rank(self, position: np.ndarray, topic: np.ndarray) -> np.ndarray:
        """float [doc]: the ideal DCG down to each 0-based rank of its topic, frozen once the ideal ends."""
        count = self.ideal_count[topic]
        if self.ideal.shape[1] == 0:
            return np.zeros(len(position))
        reached = self.ideal_cumulative[topic, np.clip(position, 0, np.maximum(count, 1) - 1)]
        return np.where(count > 0, reached, 0.0)

    @cached_property
    def ideal_total(self) -> np.ndarray:
        """float [1, topic]: the ideal DCG of the whole ideal ranking."""
        return self.ideal_at(self.ideal_count[None, :])

    def dcg_at(self, k: np.ndarray | int) -> np.ndarray:
        """float [run, topic]: the DCG of the top k of each list (k a number or per list).

        A cutoff that reaches fewer ranks than there are docs with a gain is summed over the top k ranks themselves.
        """
        lists = self.lists
        if np.ndim(k) == 0 and (int(k) * lists.n_lists <= len(lists.judged_cells[0]) or NONPOOL_LEVEL in self.gains):
            width = max(min(int(k), lists.depth), 0)
            terms = self._dense_gains(width)
            discount = lists.log2_of_rank_plus_one(width)
            terms = np.where(terms != 0, terms / np.where(terms != 0, discount, 1.0), 0.0)
            return sequential_sum(terms, axis=2)
        cells, _ = self.gained
        found = cells.before(np.broadcast_to(np.minimum(k, lists.lengths), lists.shape))
        return cells.nth(self.dcg_running, found).reshape(lists.shape)


# ----------------------------------------------------------------------------------------------------- counts


def num_q(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """Topics evaluated: 1 per topic (`all` is the total, trec_eval's num_q)."""
    return np.ones(lists.shape)


def num_ret(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """Number of retrieved docs (after the max_results cut)."""
    return lists.lengths.astype(np.float64)


def num_rel(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """Number of relevant docs in the qrels."""
    return np.broadcast_to(lists.num_rel, lists.shape).astype(np.float64)


def num_rel_ret(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """Number of relevant docs retrieved."""
    return lists.num_rel_ret.astype(np.float64)


def num_nonrel_judged_ret(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """Number of judged non-relevant docs retrieved."""
    flat, grades = lists.judged_cells
    nonrel = flat[grades < lists.relevance_level] // max(lists.depth, 1)
    return np.bincount(nonrel, minlength=lists.n_lists).reshape(lists.shape).astype(np.float64)


# ------------------------------------------------------------------------------------------ precision family


def average_precision(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """AP: mean over the relevant docs of the precision at their rank (unretrieved count 0); @k cuts the list."""
    cell, position, count = lists.relevant_cells
    inside = slice(None) if k is None else position < k
    return ap_per_list(cell[inside], position[inside] + 1.0, count[inside], lists.num_rel, lists.shape)


def ap_per_list(
    cell: np.ndarray, rank: np.ndarray, count: np.ndarray, num_rel: np.ndarray, shape: tuple[int, int]
) -> np.ndarray:
    """AP of every list (run x topic cell), the one AP formula of the core (analyses' subset AP uses it too).

    Each relevant retrieved doc adds `count / rank` (count: relevant docs at or above it, 0 to leave it out) to its
    list, in rank order; the sum is divided by the topic's `num_rel` (broadcast over the runs), 0 where that is 0.
    """
    total = np.bincount(cell, weights=count / rank, minlength=shape[0] * shape[1]).reshape(shape)
    return _safe_divide(total, num_rel)


def _precision_sum(lists: RankedLists) -> np.ndarray:
    """[run, topic]: the sum over retrieved relevant docs of the precision at their rank (AP before dividing)."""
    cell, position, count = lists.relevant_cells
    return lists.sum_per_list(cell, count / (position + 1.0))


def yaap(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """trec_eval's yaap (Robertson's smoothed AP): log((1 + S) / (1 + R - S)), S the sum of precisions at rel docs."""
    total = _precision_sum(lists)
    return _log((1.0 + total) / ((1.0 + lists.num_rel) - total))


def precision_at(lists: RankedLists, k: int | None) -> np.ndarray:
    """P@k: relevant docs in the top k, over k."""
    assert k is not None
    return lists.relevant_at(k) / float(k)


def recall_at(lists: RankedLists, k: int | None) -> np.ndarray:
    """R@k: relevant docs in the top k, over all relevant docs."""
    assert k is not None
    return _safe_divide(lists.relevant_at(k).astype(np.float64), lists.num_rel)


def relative_precision_at(lists: RankedLists, k: int | None) -> np.ndarray:
    """relative_P@k: relevant docs in the top k over min(k, R) (0 when R is 0)."""
    assert k is not None
    return _safe_divide(lists.relevant_at(k).astype(np.float64), np.minimum(lists.num_rel, k))


def success_at(lists: RankedLists, k: int | None) -> np.ndarray:
    """success@k: 1 if a relevant doc is in the top k, else 0."""
    assert k is not None
    return (lists.relevant_at(k) > 0).astype(np.float64)


def r_precision(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """Rprec: precision at rank R, R the number of relevant docs."""
    return _safe_divide(lists.relevant_at_each(lists.num_rel).astype(np.float64), lists.num_rel)


def r_precision_multiple(lists: RankedLists, multiple: float | None) -> np.ndarray:
    """Rprec_mult: precision at rank (long)(multiple * R + 0.9), 0 when that rank is 0."""
    assert multiple is not None
    cutoff = np.broadcast_to(np.trunc(multiple * lists.num_rel + 0.9).astype(np.int64), lists.shape)
    found = lists.relevant_at_each(cutoff).astype(np.float64)
    return np.where(cutoff > 0, found / np.maximum(cutoff, 1), 0.0)


def reciprocal_rank(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """RR: 1 / rank of the first relevant doc (0 if none); @k looks at the top k only."""
    relevant = lists.relevant
    depth = lists.depth if k is None else min(k, lists.depth)
    first = relevant.nth(relevant.position.astype(np.float64), np.ones(lists.n_lists, dtype=np.int64))
    hit = (relevant.counts > 0) & (first < depth)
    return np.where(hit, 1.0 / (first + 1.0), 0.0).reshape(lists.shape)


def bpref(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """bpref as trec_eval: each retrieved relevant doc loses min(nonrel above, R) / min(R, N)."""
    cached = lists.cache.get("bpref")  # gm_bpref asks again
    if isinstance(cached, np.ndarray):
        return cached.copy()
    flat, grades = lists.judged_cells
    nonrel = grades < lists.relevance_level
    seen = np.cumsum(nonrel)  # judged non-relevant docs at or above each judged doc, counted over all lists
    cell = flat // max(lists.depth, 1)
    first = _group_starts(cell)  # each list's first judged doc
    relevant = np.flatnonzero(~nonrel)
    nonrel_above: np.ndarray = seen[relevant] - (seen - nonrel)[first[relevant]]  # a relevant doc does not count itself
    cell = cell[relevant]
    n_topic = lists.shape[1]
    r = lists.num_rel[0][cell % n_topic]
    n = lists.num_nonrel[0][cell % n_topic]
    penalty = _safe_divide(np.minimum(nonrel_above, r).astype(np.float64), np.minimum(r, n))
    value = _safe_divide(lists.sum_per_list(cell, 1.0 - penalty), lists.num_rel)
    lists.cache["bpref"] = value
    return value.copy()


def inf_ap(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """trec_eval's infAP (Yilmaz & Aslam 2006): grade < 0 = pooled, unjudged; docs not in the qrels are not pooled.

    A relevant doc at 0-based rank j > 0 adds 1/(j+1) + (j/(j+1)) * ((rel + nonrel + unjudged above) / j) *
    ((rel above + eps) / (rel + nonrel above + 2 eps)); the first rank adds 1; the sum is divided by R.
    """
    flat, grades = lists.pooled_cells
    first = lists.cells(flat).starts[flat // max(lists.depth, 1)]  # each doc's list's first doc
    judged_nonrel = (grades >= 0) & (grades < lists.relevance_level)
    unjudged = grades < 0
    nonrel_seen: np.ndarray = np.cumsum(judged_nonrel) - judged_nonrel  # docs before each, over all lists
    unjudged_seen: np.ndarray = np.cumsum(unjudged) - unjudged
    relevant = np.flatnonzero(grades >= lists.relevance_level)  # the docs of relevant_cells, in their order
    nonrel = nonrel_seen[relevant] - nonrel_seen[first[relevant]]  # judged non-relevant docs above it in its list
    pooled = unjudged_seen[relevant] - unjudged_seen[first[relevant]]  # pooled unjudged docs above it
    cell, position, count = lists.relevant_cells
    rel_above = (count - 1).astype(np.int64)
    j = position.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        fraction = (rel_above + INFAP_EPSILON) / ((rel_above + nonrel) + 2 * INFAP_EPSILON)
        term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rel_above + nonrel + pooled) / j) * fraction
    term = np.where(position == 0, 1.0, term)
    return _safe_divide(lists.sum_per_list(cell, term), lists.num_rel)


# ------------------------------------------------------------------------------- interpolated precision


def _interpolation(lists: RankedLists) -> tuple[np.ndarray, np.ndarray]:
    """(best precision at or below each relevant doc's rank, over relevant ranks [relevant doc]; the value of a recall
    cutoff of 0 and of cutoffs trec_eval's loop does not reach [run, topic])."""
    cached = lists.cache.get("interpolation")
    if isinstance(cached, tuple):
        return cached
    relevant = lists.relevant
    best = relevant.best_below(relevant.count / (relevant.position + 1.0))
    relret = lists.num_rel_ret
    with np.errstate(divide="ignore", invalid="ignore"):
        empty = relret / lists.lengths.astype(np.float64)  # trec_eval: num_rel_ret / num_ret (0/0 is NaN)
    first = relevant.nth(best, np.ones(lists.n_lists, dtype=np.int64)).reshape(lists.shape)  # best over all
    final = np.where(relret > 0, first, empty)
    lists.cache["interpolation"] = (best, final)
    return best, final


def _interpolated_at(lists: RankedLists, count: np.ndarray) -> np.ndarray:
    """[run, topic]: the best precision at or below the rank of the count-th relevant doc (count >= 1, <= rel ret)."""
    best, _ = _interpolation(lists)
    need = np.broadcast_to(np.maximum(count, 1), lists.shape)
    return lists.relevant.nth(best, need).reshape(lists.shape)


def interpolated_precision(lists: RankedLists, level: float | None) -> np.ndarray:
    """iprec_at_recall: the best precision at any rank whose recall reaches the level (lround(level R) rel docs)."""
    assert level is not None
    count = _lround(level * lists.num_rel)
    _, final = _interpolation(lists)
    relret = lists.num_rel_ret
    value = np.where(count >= 1, _interpolated_at(lists, count), final)
    return np.where(count > relret, 0.0, value)


def eleven_point_average(
    lists: RankedLists, k: int | None = None, levels: Sequence[float] = ELEVEN_POINTS
) -> np.ndarray:
    """11pt_avg: the mean of the interpolated precisions at the recall levels, summed as trec_eval's loop sums them.

    trec_eval walks the levels from the last to the first and stops matching once a level's relevant-doc count
    rises again or falls to 0 (it expects them ascending): such levels take the precision at the first relevant
    doc, as its loop leaves them.
    """
    counts = [np.broadcast_to(_lround(level * lists.num_rel), lists.shape) for level in levels]
    _, final = _interpolation(lists)
    relret = lists.num_rel_ret
    total = np.zeros(lists.shape)
    skipping = np.ones(lists.shape, dtype=bool)  # still in the leading run of counts above num_rel_ret
    stalled = np.zeros(lists.shape, dtype=bool)
    previous = np.broadcast_to(relret, lists.shape)
    for count in reversed(counts):
        skip = skipping & (count > relret)
        skipping = skip
        matched = ~skip & ~stalled & (count >= 1) & (count <= previous)
        stalled = stalled | (~skip & ~matched)
        value = np.where(matched, _interpolated_at(lists, count), final)
        total = total + np.where(skip, 0.0, value)
        previous = np.where(matched, count, previous)
    return total / float(len(levels))


# ------------------------------------------------------------------------------------------- set measures


def set_precision(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """set_P: relevant retrieved over retrieved."""
    return _safe_divide(lists.num_rel_ret.astype(np.float64), lists.lengths)


def set_recall(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """set_recall: relevant retrieved over relevant."""
    return _safe_divide(lists.num_rel_ret.astype(np.float64), lists.num_rel)


def set_relative_precision(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """set_relative_P: relevant retrieved over min(retrieved, relevant)."""
    return _safe_divide(lists.num_rel_ret.astype(np.float64), np.minimum(lists.lengths, lists.num_rel))


def set_map(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """set_map: set precision times set recall, as (relret * relret) / (ret * R)."""
    relret = lists.num_rel_ret.astype(np.float64)
    return _safe_divide(relret * relret, lists.lengths.astype(np.float64) * lists.num_rel)


def set_f(lists: RankedLists, k: int | None = None, beta: float = 1.0) -> np.ndarray:
    """set_F: (beta + 1) P R / (beta P + R) over the retrieved set (trec_eval's weighting; 0 without rel ret)."""
    relret = lists.num_rel_ret.astype(np.float64)
    p = _safe_divide(relret, lists.lengths)
    r = _safe_divide(relret, lists.num_rel)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (beta + 1.0) * p * r / (beta * p + r)
    return np.where(relret > 0, value, 0.0)


def utility(
    lists: RankedLists, k: int | None = None, coefficients: Sequence[float] = (1.0, -1.0, 0.0, 0.0), num_docs: int = 0
) -> np.ndarray:
    """utility: a * relret + b * nonrel ret + c * rel not ret + d * nonrel not ret (-N gives the collection size)."""
    a, b, c, d = coefficients
    relret = lists.num_rel_ret
    ret = lists.lengths
    rel = np.broadcast_to(lists.num_rel, lists.shape)
    value: np.ndarray = a * relret + b * (ret - relret) + c * (rel - relret) + d * (num_docs + relret - ret - rel)
    return value


# ------------------------------------------------------------------------------------------ gain measures


def _dcg_value(lists: RankedLists, k: int | None, gains: Gains | None) -> tuple[np.ndarray, np.ndarray]:
    """(DCG, ideal DCG) of each list, over the whole list or its top k."""
    table = lists.gain_table(gains)
    if k is None:
        return table.dcg_at(lists.lengths), np.broadcast_to(table.ideal_total, lists.shape)
    return table.dcg_at(k), np.broadcast_to(table.ideal_at(k), lists.shape)


def ndcg(lists: RankedLists, k: int | None = None, gains: Gains | None = None) -> np.ndarray:
    """nDCG (gain = grade, discount log2(rank + 1)) as trec_eval's ndcg, or at a cutoff as its ndcg_cut."""
    dcg, ideal = _dcg_value(lists, k, gains)
    ratio = _safe_divide(dcg, ideal)
    if k is None:
        return ratio
    return np.where(ideal > 0.0, ratio, dcg)  # ndcg_cut leaves the DCG undivided when the ideal is 0


def dcg(lists: RankedLists, k: int | None = None, gains: Gains | None = None) -> np.ndarray:
    """trec_eval's dcg: the discounted cumulative gain of the list."""
    return _dcg_value(lists, k, gains)[0]


def ideal_dcg(lists: RankedLists, k: int | None = None, gains: Gains | None = None) -> np.ndarray:
    """trec_eval's ideal_dcg: the DCG of the qrels' docs in order of decreasing gain."""
    return np.array(_dcg_value(lists, k, gains)[1])


def ndcg_rel(lists: RankedLists, k: int | None = None, gains: Gains | None = None) -> np.ndarray:
    """trec_eval's ndcg_rel: nDCG averaged over the relevant (positive gain) docs, an unretrieved one counting the
    nDCG at the end of the list."""
    table = lists.gain_table(gains)
    count = table.ideal_count[None, :]
    cells, gain = table.gained
    positive = np.flatnonzero(gain > 0)
    cell = cells.cell[positive]
    with np.errstate(divide="ignore", invalid="ignore"):
        ideal = table.ideal_by_rank(cells.position[positive], cell % lists.shape[1])
        ratio = table.dcg_running[positive] / ideal
        total = lists.sum_per_list(cell, ratio)
        found = np.bincount(cell, minlength=lists.n_lists).reshape(lists.shape)
        end_ideal = np.broadcast_to(table.ideal_total, lists.shape)
        total = total + ((count - found).astype(np.float64) * table.dcg_at(lists.lengths)) / end_ideal
    value = np.where(total > 0.0, total / np.maximum(count, 1), 0.0)
    return np.where(count > 0, value, 0.0)


def rndcg(lists: RankedLists, k: int | None = None, gains: Gains | None = None) -> np.ndarray:
    """trec_eval's Rndcg: nDCG averaged over the ranks where the ideal gain changes (R-levels), plus the end of the
    list when it runs on past the ideal ranking by more than one doc."""
    table = lists.gain_table(gains)
    count = table.ideal_count
    ideal = np.concatenate([table.ideal, np.zeros((len(count), 1))], axis=1)
    changes = [np.flatnonzero(ideal[t, 1 : count[t] + 1] != ideal[t, : count[t]]) + 1 for t in range(len(count))]
    width = max((len(c) for c in changes), default=0)
    positions = np.zeros((len(count), width), dtype=np.int64)
    valid = np.zeros((len(count), width), dtype=bool)
    for t, where in enumerate(changes):
        positions[t, : len(where)] = where
        valid[t, : len(where)] = True
    total = np.zeros(lists.shape)
    used = np.zeros(lists.shape, dtype=np.int64)
    lengths = lists.lengths
    for column in range(width):
        at = positions[:, column][None, :]
        ok = valid[:, column][None, :]
        ideal_before = table.ideal_at(at)
        reached = table.dcg_at(np.minimum(at, lengths))
        with np.errstate(divide="ignore", invalid="ignore"):
            term = reached / ideal_before
        take = ok & (ideal_before > 0.0)
        total = total + np.where(take, term, 0.0)
        used = used + take
    tail = lengths >= count[None, :] + 2
    end_ideal = np.broadcast_to(table.ideal_total, lists.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = total + np.where(tail & (end_ideal > 0.0), table.dcg_at(lengths) / end_ideal, 0.0)
        used = used + (tail & (end_ideal > 0.0))
        value = total / used
    return np.where(lists.num_rel > 0, value, 0.0)


def bin_g(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """trec_eval's binG: the mean over the relevant docs of 1 / log2(2 + non-relevant docs at or above it)."""
    cell, position, count = lists.relevant_cells
    term = 1.0 / _log2((3 + position - count).astype(np.float64))  # whole numbers: a table of their logarithms
    total = lists.sum_per_list(cell, term)
    return np.where(lists.num_rel_ret > 0, _safe_divide(total, lists.num_rel), 0.0)


def g_measure(lists: RankedLists, k: int | None = None, gains: Gains | None = None) -> np.ndarray:
    """trec_eval's G: each doc's gain over log2(2 + the ideal cost so far - the gain so far), over the ideal gain."""
    table = lists.gain_table(gains)
    cells, gain = table.gained
    depth = lists.depth
    ideal = np.zeros((len(table.ideal_count), depth))
    width = min(depth, table.ideal.shape[1])
    ideal[:, :width] = table.ideal[:, :width]
    cost = np.cumsum(np.where(ideal >= 1.0, ideal, 1.0), axis=1)  # the ideal gain, at least 1 per rank
    so_far = cells.running_sum(gain)
    topic = cells.cell % lists.shape[1]
    base = (2 + cost[topic, cells.position]) - so_far
    total = lists.sum_per_list(cells.cell, gain / _log2(base))
    ideal_sum = sequential_sum(table.ideal, axis=1)[None, :]
    return _safe_divide(total, ideal_sum)


def rank_biased_precision(lists: RankedLists, p: float | None = 0.9, gains: Gains | None = None) -> np.ndarray:
    """trec_eval's rbp: (1 - p) * sum of gain * p^(rank - 1), gains scaled to 0..1 per topic when they leave it."""
    p = 0.9 if p is None else p
    cells, gain = lists.gain_table(gains).normalised
    powers = lists.powers(p, lists.depth)
    total = lists.sum_per_list(cells.cell, gain * powers[cells.position])
    return (1.0 - p) * total


def rbp_residual(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """trec_eval's rbp_resid (p = 0.9): p^n + (1 - p) * sum of p^(rank - 1) over unjudged docs; 0 without any."""
    p = RBP_RESIDUAL_P
    powers = lists.powers(p, lists.depth)
    unjudged = lists.unjudged(lists.depth)
    total = sequential_sum(np.where(unjudged, powers[: lists.depth], 0.0), axis=2)
    value = powers[lists.lengths] + (1 - p) * total
    return np.where(unjudged.any(axis=2), value, 0.0)


def binary_rbp(lists: RankedLists, p: float | None) -> np.ndarray:
    """RBP(p) with binary gains: (1 - p) * sum over relevant docs of p^(rank - 1) (ir_measures' RBP(rel=1, p))."""
    assert p is not None
    cell, position, _ = lists.relevant_cells
    return (1.0 - p) * lists.sum_per_list(cell, lists.powers(p, lists.depth)[position])


def binary_rbp_residual(lists: RankedLists, p: float | None) -> np.ndarray:
    """RBP(p)'s residual: the most unjudged docs and those past the end of the list could add,
    (1 - p) * sum over unjudged docs of p^(rank - 1) + p^n."""
    assert p is not None
    powers = lists.powers(p, lists.depth)
    total = sequential_sum(np.where(lists.unjudged(lists.depth), powers[: lists.depth], 0.0), axis=2)
    residual: np.ndarray = (1.0 - p) * total + powers[lists.lengths]
    return residual


# ------------------------------------------------------------------------------------ judgement coverage


def unjudged_at(lists: RankedLists, k: int | None) -> np.ndarray:
    """trec_eval's unj@k: unjudged docs (not in the qrels, or grade < 0) in the top k, over k."""
    assert k is not None
    share: np.ndarray = np.count_nonzero(lists.unjudged(k), axis=2) / float(k)
    return share


def judged_at(lists: RankedLists, k: int | None) -> np.ndarray:
    """ir_measures' Judged@k: docs of the top k that are in the qrels (any grade), over min(k, docs retrieved)."""
    assert k is not None
    judged = lists.inside(k) & (lists.matrix.grades[:, :, :k] != NOT_POOLED)
    return _safe_divide(np.count_nonzero(judged, axis=2).astype(np.float64), np.minimum(lists.lengths, k))


def geometric_log(values: np.ndarray) -> np.ndarray:
    """log(max(value, MIN_GEO_MEAN)) by the C library: what trec_eval's gm_map and gm_bpref add up per topic."""
    return _log(np.maximum(values, MIN_GEO_MEAN))
