"""Inferred measures over incomplete judgements: trec_eval's infAP and NIST sample_eval.pl's stratified estimates."""

from __future__ import annotations

from functools import cached_property

import numpy as np

from app.evaluation.errors import MeasureError
from app.evaluation.measures.trec import RELEVANCE_LEVEL, RankedLists, _safe_divide

INFAP_EPSILON = 1e-5  # trec_eval's and sample_eval.pl's smoothing of the relevant fraction above a rank
UNJUDGED = -1  # qrels grade of a pooled doc that was not judged


def inf_ap(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """trec_eval's infAP (Yilmaz & Aslam 2006): grade -1 = pooled, unjudged; docs not in the qrels are not pooled."""
    grades = lists.matrix.grades
    relevant = lists.relevant
    judged_nonrel = (grades >= 0) & (grades < RELEVANCE_LEVEL)
    pooled = (grades >= 0) | (grades == UNJUDGED)
    rel_above = lists.cum_relevant - relevant
    nonrel_above = np.cumsum(judged_nonrel, axis=2, dtype=np.int64) - judged_nonrel
    pooled_above = np.cumsum(pooled, axis=2, dtype=np.int64) - pooled
    ranks = lists.ranks
    fraction = (rel_above + INFAP_EPSILON) / (rel_above + nonrel_above + 2 * INFAP_EPSILON)
    precision = 1.0 / ranks + (pooled_above / ranks) * fraction
    precision[:, :, :1] = 1.0
    total = np.sum(precision, axis=2, where=relevant)
    return _safe_divide(total, lists.num_rel)


class _Strata:
    """Per-position stratum counts of a GradeMatrix built from sample_eval qrels, shared by the measures."""

    def __init__(self, lists: RankedLists) -> None:
        matrix = lists.matrix
        if matrix.strata is None or matrix.judged.pooled is None:
            raise MeasureError("xinfAP, infNDCG and iP@k need stratified (sample_eval, 5-column) qrels")
        self.lists = lists
        self.matrix = matrix
        judged = matrix.judged
        self.pooled_total = judged.pooled.astype(np.float64)  # N_c [topic, c]
        self.judged_total = judged.judged.astype(np.float64)  # n_c
        self.relevant_total = judged.relevant.astype(np.float64)  # r_c
        self.n_strata = self.pooled_total.shape[1]

    @cached_property
    def inverse_rate(self) -> np.ndarray:
        """N_c / n_c [topic, c] (0 where nothing was judged)."""
        return _safe_divide(self.pooled_total, self.judged_total)

    @cached_property
    def r_hat(self) -> np.ndarray:
        """Estimated relevant docs per topic: sum_c r_c N_c / n_c. [1, topic]"""
        return np.sum(self.relevant_total * self.inverse_rate, axis=1)[None, :]

    @cached_property
    def counts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Inclusive cumulative (pooled d_c, judged s_c, relevant rho_c), each float [c, run, topic, position]."""
        strata = self.matrix.strata
        grades = self.matrix.grades
        pooled = np.stack([strata == c for c in range(self.n_strata)])
        judged = pooled & (grades >= 0)
        relevant = pooled & (grades >= RELEVANCE_LEVEL)
        return tuple(np.cumsum(a, axis=3, dtype=np.int64).astype(np.float64) for a in (pooled, judged, relevant))

    def estimated_relevant(self, d: np.ndarray, s: np.ndarray, rho: np.ndarray) -> np.ndarray:
        """sum_c d_c (rho_c + eps) / (s_c + 3 eps): the inferred number of relevant docs among d pooled ones."""
        return np.sum(d * (rho + INFAP_EPSILON) / (s + 3 * INFAP_EPSILON), axis=0)

    @cached_property
    def estimated_relevant_at(self) -> np.ndarray:
        """Inferred relevant docs at or above each position [run, topic, position]."""
        return self.estimated_relevant(*self.counts)

    @cached_property
    def precision_recall(self) -> tuple[np.ndarray, np.ndarray]:
        """The inferred precision-recall curve of each list, for iprec@rec.

        Returns (best precision from each rank to the end of the list [run, topic, position + 1], with a closing 0;
        recall at each rank [run, topic, position], +inf past the end of the list). Precision at rank k is iP@k's
        (inferred relevant docs in the top k, over k); recall is those docs over R_hat (no R_hat > max_results
        adjustment here, unlike xinfAP).
        """
        shape = self.matrix.lengths.shape
        inside = np.arange(self.lists.depth)[None, None, :] < self.matrix.lengths[..., None]
        estimated = self.estimated_relevant_at
        precision = np.where(inside, estimated / self.lists.ranks, 0.0)
        best_from = np.maximum.accumulate(precision[..., ::-1], axis=2)[..., ::-1]
        best_from = np.concatenate([best_from, np.zeros((*shape, 1))], axis=2)
        recall = np.where(inside, _safe_divide(estimated, self.r_hat[..., None]), np.inf)
        return best_from, recall

    def estimated_relevant_in_top(self, k: int) -> np.ndarray:
        """Inferred relevant docs in the top k [run, topic]."""
        depth = self.lists.depth
        if depth == 0:
            return np.zeros(self.matrix.lengths.shape)
        return self.estimated_relevant_at[:, :, min(k, depth) - 1]


def _strata(lists: RankedLists) -> _Strata:
    """The shared stratum counts of `lists` (computed once)."""
    cached = getattr(lists, "_strata", None)
    if cached is None:
        cached = _Strata(lists)
        lists._strata = cached  # type: ignore[attr-defined]
    return cached


def xinf_ap(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """sample_eval.pl's stratified infAP (printed there as `infAP`), with its R_hat > max_results adjustment."""
    st = _strata(lists)
    d, s, rho = st.counts
    relevant = lists.relevant
    above = [a - c for a, c in zip((d, s, rho), _own_stratum_masks(st), strict=True)]
    ranks = lists.ranks
    precision = (1.0 + st.estimated_relevant(*above)) / ranks
    topic_rate = np.broadcast_to(st.inverse_rate[None, :, :], (*lists.matrix.lengths.shape, st.n_strata))
    own = np.clip(lists.matrix.strata, 0, None)
    weight = np.take_along_axis(topic_rate, own, axis=2)
    total = np.sum(precision * weight, axis=2, where=relevant)
    r_hat = st.r_hat
    value = _safe_divide(total, r_hat)
    limit = float(lists.matrix.max_results)
    return np.where(r_hat > limit, value * r_hat / limit, value)


def _own_stratum_masks(st: _Strata) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each position's own contribution to the inclusive counts (so that counts - own = counts above)."""
    strata = st.matrix.strata
    grades = st.matrix.grades
    pooled = np.stack([strata == c for c in range(st.n_strata)])
    return pooled, pooled & (grades >= 0), pooled & (grades >= RELEVANCE_LEVEL)


def inferred_precision_at(lists: RankedLists, k: int | None) -> np.ndarray:
    """sample_eval.pl's iP@k: inferred relevant docs in the top k, over k."""
    assert k is not None
    return _strata(lists).estimated_relevant_in_top(k) / float(k)


def interpolated_precision_at_recall(lists: RankedLists, level: float | None) -> np.ndarray:
    """sample_eval.pl's `iprec@rec<level>`: interpolated inferred precision at an inferred recall level.

    At every rank k of the list, precision is iP@k's estimate and recall the inferred relevant docs in the top k over
    R_hat. Walking back from the end of the list, the value is the best precision from the last rank whose recall is
    still below `level` (that rank included) to the end, or 0 if the recall at the end is below `level` (any rank
    when no rank is below, as for level 0). Inferred recall is not monotone (a judged non-relevant doc of a sampled
    stratum lowers the stratum's relevant fraction), so this is not trec_eval's "best precision at any recall >=
    level": that rule misses 6 of the 44 `all` values of the reference files by up to 6e-4; this one matches all.
    """
    assert level is not None
    st = _strata(lists)
    shape = lists.matrix.lengths.shape
    if lists.depth == 0:
        return np.zeros(shape)
    best_from, recall = st.precision_recall
    below = recall < level
    any_below = below.any(axis=2)
    last_below = lists.depth - 1 - np.argmax(below[..., ::-1], axis=2)
    start = np.where(any_below, last_below, 0)
    value = np.take_along_axis(best_from, start[..., None], axis=2)[..., 0]
    never_reached = any_below & (last_below == lists.matrix.lengths - 1)
    return np.where(never_reached, 0.0, value)


def inum_rel_ret(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """sample_eval.pl's inferred number of relevant docs retrieved."""
    return _strata(lists).estimated_relevant_in_top(lists.depth)


def inum_rel(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """sample_eval.pl's estimated number of relevant docs, R_hat = sum_c r_c N_c / n_c."""
    return np.broadcast_to(_strata(lists).r_hat, lists.matrix.lengths.shape).astype(np.float64)


def inf_ndcg(lists: RankedLists, k: int | None = None) -> np.ndarray:
    """sample_eval.pl's infNDCG: the run's DCG with each stratum's judged gains scaled up by that run's own rate.

    A judged relevant doc of stratum c at rank k adds `grade / log2(k + 1) * d_c / s_c`, where d_c is the number of
    the ranked list's docs pooled in stratum c and s_c how many of them were judged (not the pool's N_c / n_c);
    unjudged and unpooled docs add nothing. The ideal is `floor(R_hat)` docs of gain 1, capped at max_results.
    """
    st = _strata(lists)
    shape = lists.matrix.lengths.shape
    if lists.depth == 0:
        return np.zeros(shape)
    d, s, _ = st.counts
    run_rate = _safe_divide(d[:, :, :, -1], s[:, :, :, -1])  # d_c / s_c over the whole list [c, run, topic]
    own = np.clip(lists.matrix.strata, 0, None)
    weight = np.take_along_axis(np.moveaxis(run_rate, 0, -1), own, axis=2)
    gains = np.clip(lists.matrix.grades, 0, None) * weight
    dcg = np.sum(gains * lists.discounts, axis=2, where=lists.relevant)
    ideal_count = np.minimum(np.floor(st.r_hat[0]), lists.matrix.max_results).astype(np.int64)
    cumulative = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(np.arange(2, ideal_count.max(initial=0) + 2)))))
    return _safe_divide(dcg, cumulative[ideal_count][None, :])
