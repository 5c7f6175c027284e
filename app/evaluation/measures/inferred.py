"""Inferred measures over incomplete judgements: trec_eval's infAP and NIST sample_eval.pl's stratified estimates.

The sample_eval.pl measures follow the script's arithmetic step for step, not only its formulas: the strata are
visited in the script's order (labels sorted as strings), every sum is taken in its order, each quotient is formed
as it forms it and its constants are its literals, so the values are the script's own doubles (its 12-decimal
output is reproduced byte for byte, output/sample_eval.py). Logarithms come from the C library (`math.log`, as
Perl's `log`), never numpy's, whose vectorised log differs from it in the last bit for some arguments.
"""

from __future__ import annotations

import functools
import math
from functools import cached_property

import numpy as np

from app.evaluation.errors import MeasureError
from app.evaluation.measures.trec import RELEVANCE_LEVEL, RankedLists, _safe_divide

INFAP_EPSILON = 1e-5  # trec_eval's and sample_eval.pl's smoothing of the relevant fraction above a rank
SAMPLED_EPSILON = 3e-5  # sample_eval.pl's literal 0.00003 in the denominator (3 * 1e-5 is one ulp larger)


class _Strata:
    """Per-position stratum counts of a GradeMatrix built from sample_eval qrels, shared by the measures."""

    def __init__(self, lists: RankedLists) -> None:
        matrix = lists.matrix
        judged = matrix.judged
        if matrix.strata is None or judged.pooled is None or judged.judged is None or judged.relevant is None:
            raise MeasureError("xinfAP, infNDCG and iP@k need stratified (sample_eval, 5-column) qrels")
        self.lists = lists
        self.matrix = matrix
        self.pooled_total = judged.pooled.astype(np.float64)  # N_c [topic, c]
        self.judged_total = judged.judged.astype(np.float64)  # n_c
        self.relevant_total = judged.relevant.astype(np.float64)  # r_c
        self.n_strata = self.pooled_total.shape[1]
        labels = [] if judged.strata is None else [str(label) for label in judged.strata.tolist()]
        self.order = sorted(range(self.n_strata), key=labels.__getitem__)  # sample_eval.pl's `sort keys`

    def estimate(self, count: np.ndarray) -> np.ndarray:
        """sum_c count_c N_c / n_c over the strata with judged docs, per topic [topic] (counts [topic, c])."""
        total = np.zeros(self.pooled_total.shape[0])
        for c in self.order:
            total = total + _safe_divide(count[:, c] * self.pooled_total[:, c], self.judged_total[:, c])
        return total

    @cached_property
    def r_hat(self) -> np.ndarray:
        """Estimated relevant docs per topic: sum_c r_c N_c / n_c. [1, topic]"""
        return self.estimate(self.relevant_total)[None, :]

    @cached_property
    def own(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Each position's own (pooled, judged, relevant) flags per stratum, each bool [c, run, topic, position]."""
        strata = self.matrix.strata
        grades = self.matrix.grades
        pooled = np.stack([strata == c for c in range(self.n_strata)])
        return pooled, pooled & (grades >= 0), pooled & (grades >= RELEVANCE_LEVEL)

    @cached_property
    def relevant_entries(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per stratum, its relevant docs as (run * n_topic + topic, position), in rank order within each list."""
        _, _, relevant = self.own
        n_cells = relevant.shape[1] * relevant.shape[2]
        entries = []
        for c in range(self.n_strata):
            cell, position = np.nonzero(relevant[c].reshape(n_cells, -1))
            entries.append((cell, position))
        return entries

    @cached_property
    def counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Inclusive cumulative (pooled d_c, judged s_c, relevant rho_c), each float [c, run, topic, position]."""
        pooled, judged, relevant = (np.cumsum(a, axis=3, dtype=np.int64).astype(np.float64) for a in self.own)
        return pooled, judged, relevant

    def estimated_relevant(self, d: np.ndarray, s: np.ndarray, rho: np.ndarray) -> np.ndarray:
        """sum_c d_c (rho_c + eps) / (s_c + 3 eps): the inferred number of relevant docs among d pooled ones."""
        total = np.zeros(d.shape[1:])
        for c in self.order:
            total = total + d[c] * (rho[c] + INFAP_EPSILON) / (s[c] + SAMPLED_EPSILON)
        return total

    @cached_property
    def estimated_relevant_at(self) -> np.ndarray:
        """Inferred relevant docs at or above each position [run, topic, position]."""
        return self.estimated_relevant(*self.counts)

    @cached_property
    def precision(self) -> np.ndarray:
        """iP@k's precision at each rank of the list, 0 past its end [run, topic, position]."""
        inside = np.arange(self.lists.depth)[None, None, :] < self.matrix.lengths[..., None]
        return np.where(inside, self.estimated_relevant_at / self.lists.ranks, 0.0)

    @cached_property
    def best_precision_from(self) -> np.ndarray:
        """The best precision from each rank to the end of the list [run, topic, position]."""
        return np.maximum.accumulate(self.precision[..., ::-1], axis=2)[..., ::-1]

    def estimated_relevant_in_top(self, k: int) -> np.ndarray:
        """Inferred relevant docs in the top k [run, topic]."""
        depth = self.lists.depth
        if depth == 0:
            return np.zeros(self.matrix.lengths.shape)
        return self.estimated_relevant_at[:, :, min(k, depth) - 1]

    def last_of_list(self, values: np.ndarray) -> np.ndarray:
        """values [..., run, topic, position] at each list's last position (0 for an empty list)."""
        index = np.clip(self.matrix.lengths - 1, 0, None)
        index = np.broadcast_to(index, values.shape[:-1])[..., None]
        taken = np.take_along_axis(values, index, axis=-1)[..., 0]
        return np.where(self.matrix.lengths > 0, taken, 0.0)

    @cached_property
    def recall_levels(self) -> np.ndarray:
        """iprec@rec at sample_eval.pl's eleven levels 0.0, 0.1, ..., 1.0 [level, run, topic] (see _iprec_walk)."""
        return _iprec_walk(self, [i / 10 for i in range(11)])


def _strata(lists: RankedLists) -> _Strata:
    """The shared stratum counts of `lists` (computed once)."""
    cached = lists.cache.get("strata")
    if not isinstance(cached, _Strata):
        cached = _Strata(lists)
        lists.cache["strata"] = cached
    return cached


def _stratum_sums(st: _Strata, values: np.ndarray) -> list[np.ndarray]:
    """Per stratum c, the sum down each list of `values` at the relevant docs of c [run, topic] (0 for none).

    The terms are added one at a time in rank order, as the script does (np.sum would pair them): a bincount over
    c's relevant entries in rank order, the bits of a running sum's last value (adding the zeros between them
    changes nothing: the terms are positive)."""
    shape = values.shape[:2]
    cells = values.reshape(shape[0] * shape[1], -1)
    return [
        np.bincount(cell, weights=cells[cell, position], minlength=len(cells)).reshape(shape)
        for cell, position in st.relevant_entries
    ]


def _sap(st: _Strata, ranks: np.ndarray, cell: np.ndarray, position: np.ndarray) -> np.ndarray:
    """Per list [run, topic], the sum of P_k (`xinf_ap`) over the relevant docs at (cell, position) (one stratum's,
    in rank order within each list): P_k worked out at those docs alone, by the same elementwise operations as over
    every rank, then added one at a time in rank order (`_stratum_sums`)."""
    n_cells = st.matrix.lengths.size
    at = cell * st.lists.depth + position  # flat index of each doc in a stratum's [run, topic, position] array
    # the pooled, judged and relevant docs of each stratum above each of these docs [c, doc]
    d, s, rho = (
        np.take(count.reshape(st.n_strata, -1), at, axis=1) - np.take(own.reshape(st.n_strata, -1), at, axis=1)
        for count, own in zip(st.counts, st.own, strict=True)
    )
    pooled_above = np.sum(d, axis=0)  # whole numbers: exact in any order
    above = np.zeros(len(cell))
    for c in st.order:
        share = _safe_divide(d[c], pooled_above)
        above = above + share * (rho[c] + INFAP_EPSILON) / (s[c] + SAMPLED_EPSILON)
    rank = ranks[position]
    precision = 1.0 / rank + (pooled_above / rank) * above
    return np.bincount(cell, weights=precision, minlength=n_cells).reshape(st.matrix.lengths.shape)


def xinf_ap(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """sample_eval.pl's stratified infAP (printed there as `infAP`), with its R_hat > max_results adjustment.

    At a relevant doc at rank k with D pooled docs above it, d_c of stratum c (s_c judged, rho_c relevant):
    `P_k = 1/k + (D/k) * sum_c (d_c/D) (rho_c + eps) / (s_c + 3 eps)`. Per stratum, the mean of P_k over its
    relevant docs is weighted by the stratum's share of R_hat: `sum_c (r_c N_c / n_c / R_hat) * SAP_c / r_c`.
    """
    st = _strata(lists)
    shape = lists.matrix.lengths.shape
    if lists.depth == 0:
        return np.zeros(shape)
    sums = [_sap(st, lists.ranks, cell, position) for cell, position in st.relevant_entries]  # SAP_c [run, topic]
    r_hat = st.r_hat
    value = np.zeros(shape)
    for c in st.order:
        relevant = st.relevant_total[None, :, c]
        estimate = _safe_divide(relevant * st.pooled_total[None, :, c], st.judged_total[None, :, c])
        term = _safe_divide(estimate, r_hat) * _safe_divide(sums[c], relevant)
        value = value + np.where((st.judged_total[None, :, c] != 0) & (r_hat != 0), term, 0.0)
    limit = float(lists.matrix.max_results)
    return np.where(r_hat > limit, value * r_hat / limit, value)


def inferred_precision_at(lists: RankedLists, k: int | None) -> np.ndarray:
    """sample_eval.pl's iP@k: inferred relevant docs in the top k, over k."""
    assert k is not None
    return _strata(lists).estimated_relevant_in_top(k) / float(k)


def interpolated_precision_at_recall(lists: RankedLists, level: float | None) -> np.ndarray:
    """sample_eval.pl's `iprec@rec<level>`: interpolated inferred precision at an inferred recall level.

    The eleven levels 0.0, 0.1, ..., 1.0 are computed together, as the script does (see _iprec_walk); any other level
    (the registry takes steps of 0.01) is walked alone.
    """
    assert level is not None
    st = _strata(lists)
    if lists.depth == 0:
        return np.zeros(lists.matrix.lengths.shape)
    tenths = round(level * 10)
    if abs(level * 10 - tenths) < 1e-9:
        precision: np.ndarray = st.recall_levels[tenths]
    else:
        precision = _iprec_walk(st, [level])[0]
    return precision


def _iprec_walk(st: _Strata, levels: list[float]) -> np.ndarray:
    """Interpolated precision at ascending recall `levels`, as sample_eval.pl assigns them [level, run, topic].

    The script compares the inferred relevant docs at each rank, e(k), with the cutoffs `level * R_hat`. A level
    whose cutoff exceeds e at the end of the list gets 0. The others, from the highest down, are handed out walking
    the list from its end upwards, at most one per rank: the current level goes to the first rank (upwards, above
    the rank the previous level went to) with e(k) below its cutoff, and gets the best precision e(j)/j over
    j >= k. Levels left when the top of the list is reached get the best precision over the whole list. Inferred
    recall is not monotone, so this is not trec_eval's "best precision at any recall >= level".
    """
    shape = st.matrix.lengths.shape
    lengths = st.matrix.lengths
    estimated = st.estimated_relevant_at
    best = st.best_precision_from
    best_overall = best[..., 0]
    at_end = st.last_of_list(estimated)
    positions = np.arange(st.lists.depth)[None, None, :]
    inside = positions < lengths[..., None]
    below = lengths.copy()  # the next level is looked for above this position
    out = np.zeros((len(levels), *shape))
    for index in range(len(levels) - 1, -1, -1):
        cutoff = levels[index] * st.r_hat[0][None, :]  # [1, topic]
        skipped = cutoff > at_end
        candidates = inside & (positions < below[..., None]) & (cutoff[..., None] > estimated)
        found = candidates.any(axis=2)
        where = st.lists.depth - 1 - np.argmax(candidates[..., ::-1], axis=2)
        value = np.where(found, np.take_along_axis(best, where[..., None], axis=2)[..., 0], best_overall)
        out[index] = np.where(skipped | (lengths == 0), 0.0, value)
        below = np.where(skipped, below, np.where(found, where, 0))
    return out


def inum_rel_ret(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """sample_eval.pl's inferred number of relevant docs retrieved."""
    return _strata(lists).estimated_relevant_in_top(lists.depth)


def inum_rel(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """sample_eval.pl's estimated number of relevant docs, R_hat = sum_c r_c N_c / n_c."""
    return np.broadcast_to(_strata(lists).r_hat, lists.matrix.lengths.shape).astype(np.float64)


def inf_ndcg(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """sample_eval.pl's infNDCG: the run's DCG with each stratum's judged gains scaled up by that run's own rate.

    A judged relevant doc of stratum c at rank k adds `grade / log2(k + 1)` to its stratum's gain G_c; the DCG is
    `sum_c d_c G_c / s_c`, where d_c is the number of the ranked list's docs pooled in stratum c and s_c how many of
    them were judged (not the pool's N_c / n_c); unjudged and unpooled docs add nothing. The ideal is built from the
    estimated number of docs of each grade (`sum_c count_c N_c / n_c`), see `_ideal_dcg`.
    """
    st = _strata(lists)
    shape = lists.matrix.lengths.shape
    if lists.depth == 0:
        return np.zeros(shape)
    gains = np.clip(lists.matrix.grades, 0, None) / _log2_table(lists.depth)[None, None, :]
    gain = _stratum_sums(st, gains)  # G_c [run, topic]
    d, s, _ = (st.last_of_list(count) for count in st.counts)  # d_c, s_c over the whole list [c, run, topic]
    pooled = np.sum(d, axis=0)  # D, whole numbers
    dcg = np.zeros(shape)
    for c in st.order:
        share = _safe_divide(d[c], pooled)
        dcg = dcg + _safe_divide(share * gain[c], s[c])
    ideal = _ideal_dcg(st)[None, :]
    return _safe_divide(pooled * dcg, ideal)


@functools.lru_cache(maxsize=4)
def _log2_table(depth: int) -> np.ndarray:
    """log(k + 1) / log(2) for ranks k = 1..depth, by the C library's log as sample_eval.pl (read-only, cached)."""
    log2 = math.log(2)
    table = np.array([math.log(k + 1) / log2 for k in range(1, depth + 1)], dtype=np.float64)
    table.flags.writeable = False
    return table


def _ideal_dcg(st: _Strata) -> np.ndarray:
    """sample_eval.pl's ideal DCG per topic [topic], from the estimated number of docs of each grade.

    Grades are taken from the highest down (as strings: grade 9 before 10, like the script's `reverse sort`). A grade
    with E estimated docs fills ranks start+1, start+2, ... while <= start + E, each adding grade / log2(rank + 1),
    and stops after a rank >= max_results; start then grows by E, so the next grade's ranks are fractional when E
    is. With grades 0/1 this is floor(R_hat) gains of 1, capped at max_results.
    """
    by_grade = st.matrix.judged.relevant_by_grade
    if by_grade is None:  # qrels summarised without grades: every relevant doc has grade 1
        by_grade = {1: st.relevant_total}
    grades = sorted(by_grade, key=str, reverse=True)
    estimates = {g: st.estimate(by_grade[g].astype(np.float64)).tolist() for g in grades}
    limit = st.matrix.max_results
    log2 = math.log(2)
    table = _log2_table(limit)
    out = []
    for topic in range(st.pooled_total.shape[0]):
        total = 0.0
        start: float = 0
        for g in grades:
            count = estimates[g][topic]
            if count == 0:  # the script has no entry for a grade its topic lacks
                continue
            if float(start).is_integer() and start < limit:  # whole ranks start+1 .. last: from the table
                first, last = int(start) + 1, min(math.floor(start + count), limit)
                terms = g / table[first - 1 : last]
                total = float(np.cumsum(np.concatenate(([total], terms)))[-1])  # one term at a time, as `+=`
            else:  # fractional ranks (r += 1 from start + 1, as the script steps), or past the limit: one term
                rank = start + 1
                while rank <= start + count:
                    total += g / (math.log(rank + 1) / log2)
                    if rank >= limit:
                        break
                    rank += 1
            start += count
        out.append(total)
    return np.array(out, dtype=np.float64)
