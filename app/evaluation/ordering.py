"""trec_eval's ranking rule, written once: within each ranked list, score descending, ties by docno descending.

Evaluation (`run_order`, `prepare_runs`), pooling (`rank_rows`) and the analyses built on prepared runs all order
rows with `ranked_order` (`ranked_changes` gives the same order as the few changes it makes to the file's, which
is all most files need). The rank column of a run file is never used. Most files already list each topic's rows
together in score order, so the function checks that first and sorts only what is out of order: whole chunks
(e.g. one run) whose lists are split or whose scores rise, then only the blocks of tied scores in the wrong docno
order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def ranked_order(
    groups: np.ndarray, scores: np.ndarray, docs: np.ndarray, chunks: Sequence[int] | None = None
) -> np.ndarray | None:
    """Row order keeping each group's rows together, ranked by score desc then docno desc; None if already so.

    `groups` is an integer list id per row (e.g. a topic id, or run * n_topic + topic); `docs` any per-row array
    whose `>` and `np.unique` order is docno order (unicode or object arrays of str, or integer ids numbered in
    docno order, i.e. code-point order). `chunks` are the offsets [0, ..., n] of row ranges that no group crosses
    (runs laid end to end): each chunk is re-sorted on its own, only if it needs it, its groups then in order of
    first appearance. Without `chunks` the rows form one chunk.
    """
    rows, places, moved = ranked_changes(groups, scores, docs, chunks)
    if len(places) == 0:
        return rows
    out = np.arange(len(groups), dtype=np.int64) if rows is None else rows.copy()
    out[places] = moved
    return out


def ranked_changes(
    groups: np.ndarray, scores: np.ndarray, docs: np.ndarray, chunks: Sequence[int] | None = None
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """`ranked_order` as (rows, places, moved): the order is `rows` (None: file order) with order[places] = moved.

    Files already in score order need only their tied rows put in docno order: the changes then stay as small as
    the ties, and a caller that looks up a few rows' ranked positions never builds an array over all rows.
    """
    groups = np.asarray(groups)
    if len(groups) == 0:
        none = np.zeros(0, dtype=np.int64)
        return None, none, none
    same = groups[1:] == groups[:-1]  # rows i and i + 1 are in one segment
    starts = np.concatenate(([0], np.flatnonzero(~same) + 1))
    return _ranked(same, groups[starts], scores, docs, chunks, groups)


def segment_changes(
    same: np.ndarray, segment_groups: np.ndarray, scores: np.ndarray, docs: np.ndarray
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """`ranked_changes` of rows given as segments (one chunk): `same[i]` says rows i and i + 1 are in one segment,
    `segment_groups` is each segment's group; no per-row group array is built unless rows must be sorted."""
    return _ranked(np.asarray(same, dtype=bool), np.asarray(segment_groups), scores, docs, None, None)


def _ranked(
    same: np.ndarray,
    segment_groups: np.ndarray,
    scores: np.ndarray,
    docs: np.ndarray,
    chunks: Sequence[int] | None,
    groups: np.ndarray | None,
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """`ranked_changes` from the segments (`same`, each segment's group) and, if the caller has it, a group per row."""
    n = len(same) + 1 if len(scores) else 0
    none = np.zeros(0, dtype=np.int64)
    if n == 0:
        return None, none, none
    scores = np.asarray(scores, dtype=np.float64)
    bounds = np.asarray([0, n] if chunks is None else chunks, dtype=np.int64)
    bad_rows = np.flatnonzero(same & (scores[1:] > scores[:-1])) + 1
    starts = np.concatenate(([0], np.flatnonzero(~same) + 1))
    by_group = np.argsort(segment_groups, kind="stable")
    split = np.flatnonzero(segment_groups[by_group][1:] == segment_groups[by_group][:-1])
    if len(split):  # a group in two segments: its chunk is sorted whole
        bad_rows = np.concatenate((bad_rows, starts[by_group[split + 1]]))
    rows: np.ndarray | None = None
    if len(bad_rows):
        if groups is None:
            groups = np.repeat(segment_groups, np.diff(np.append(starts, n)))
        rows = np.arange(n, dtype=np.int64)
        for chunk in np.unique(np.searchsorted(bounds, bad_rows, side="right") - 1).tolist():
            lo, hi = int(bounds[chunk]), int(bounds[chunk + 1])
            _, first, inverse = np.unique(groups[lo:hi], return_index=True, return_inverse=True)
            seen = np.empty(len(first), dtype=np.int64)
            seen[np.argsort(first, kind="stable")] = np.arange(len(first))  # groups in order of first appearance
            rows[lo:hi] = lo + np.lexsort((-scores[lo:hi], seen[inverse.reshape(-1)]))
        groups, scores = groups[rows], scores[rows]
        same = groups[1:] == groups[:-1]
    places, moved = _docno_ties_descending(rows, docs, scores, same)
    return rows, places, moved


def _docno_ties_descending(
    rows: np.ndarray | None, docs: np.ndarray, scores: np.ndarray, same: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(places, moved): putting `moved` at `places` of `rows` (None: file order) sorts every block of equal scores
    (in one segment) by docno desc; `scores` are in `rows` order.

    Most blocks are two rows: those are swapped where out of order; only longer blocks are sorted.
    """
    none = np.zeros(0, dtype=np.int64)
    pairs = np.flatnonzero(scores[1:] == scores[:-1])  # row i ties with row i + 1 ...
    pairs = pairs[same[pairs]]  # ... in the same segment
    if len(pairs) == 0:
        return none, none
    # np.take, not docs[...]: numpy's fancy indexing copies wide (unicode) items about twice as slowly
    below, above = (pairs + 1, pairs) if rows is None else (rows[pairs + 1], rows[pairs])
    rising = np.take(docs, below) > np.take(docs, above)
    if not rising.any():
        return none, none
    # blocks: runs of consecutive tie pairs; a block of k pairs holds k + 1 rows
    starts = np.flatnonzero(np.concatenate(([True], pairs[1:] != pairs[:-1] + 1)))
    n_pairs = np.diff(np.append(starts, len(pairs)))
    single = n_pairs == 1
    swap = pairs[starts[single]][rising[starts[single]]]
    places = [swap, swap + 1]
    moved = [swap + 1, swap] if rows is None else [rows[swap + 1], rows[swap]]
    if not single.all():
        first = pairs[starts[~single]]
        size = n_pairs[~single] + 1
        members = np.repeat(first, size) + np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size)
        block = np.repeat(np.arange(len(first)), size)
        held = members if rows is None else rows[members]
        _, rank = np.unique(np.take(docs, held), return_inverse=True)
        places.append(members)
        moved.append(held[np.lexsort((-rank.reshape(-1), block))])
    return np.concatenate(places).astype(np.int64), np.concatenate(moved).astype(np.int64)
