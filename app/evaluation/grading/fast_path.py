"""The fast path of the one grader: parsed runs graded straight against one qrels by a hashed (topic, docno) look-up.

The grader is `grade_matrix.grade_matrix(prepare_runs(runs), qrels)`; `grade_runs` gives exactly its GradeMatrix
(tests/evaluation/test_grading.py compares them on random runs and forced hash collisions) or declines with None.
It is the path `evaluate` takes from parsed tables: unlike `prepare_runs` it builds no vocabulary of the runs' docs
(the costly part: grouping millions of (topic, docno) rows); it needs only the qrels' keys in a `KeyTable`, so its
cost is a few passes over the rows.

Invariants: hashes only propose matches, each is checked against the topic and docno strings; one grading uses one
kind of docno hash on both sides (code points when every side is a moderate-width unicode array, else Python's
hash()); None (two qrels pairs sharing a 64-bit key) sends the caller to the grader itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.evaluation.fast.hashing import KeyTable, hash_strings, matrix_hashable
from app.evaluation.grading.grade_matrix import NOT_POOLED, PADDING, GradeMatrix, summarise_qrels
from app.evaluation.grading.run_order import RunOrder, run_order
from app.evaluation.records import Qrels, RunTable

_TOPIC_MULTIPLIER = np.uint64(0xD6E8FEB86659FD93)


def grade_runs(runs: Sequence[RunTable], qrels: Qrels, max_results: int = 1000) -> GradeMatrix | None:
    """Grades at each rank of every run x qrels topic (trec_eval order and cut); None if qrels keys collide.

    A None (two different qrels (topic, docno) pairs with one 64-bit key) tells the caller to take the
    `prepare_runs` path.
    """
    judged, q_topic, q_stratum = summarise_qrels(qrels)
    n_run, n_topic = len(runs), len(judged.topics)
    q_docs = np.asarray(qrels.docs)
    if q_docs.dtype.kind != "U":
        q_docs = q_docs.astype(str)
    by_matrix = matrix_hashable(q_docs) and all(
        run.doc_hashes is not None or matrix_hashable(np.asarray(run.docs)) for run in runs
    )
    q_keys = _pair_keys(_doc_hashes(q_docs, by_matrix), _topic_hashes(judged.topics)[q_topic])
    table = _distinct_pairs(q_keys, q_topic, q_docs)
    if table is None:
        return None
    q_rows, keys = table

    # every run's rows in ranked order, laid end to end: one segment per (run, topic)
    orders = [run_order(run) for run in runs]
    topic_index = {name: i for i, name in enumerate(judged.topics)}
    seg_topic = np.array([topic_index.get(name, -1) for o in orders for name in o.topics], dtype=np.int64)
    seg_run = np.repeat(np.arange(n_run, dtype=np.int64), [len(o.topics) for o in orders])
    seg_len = np.concatenate([np.diff(o.bounds) for o in orders] or [np.zeros(0, np.int64)])
    seg_end = np.cumsum(seg_len)
    kept_len = np.where(seg_topic >= 0, np.minimum(seg_len, max_results), 0)  # topics the qrels lack count nothing
    depth = int(kept_len.max()) if len(kept_len) else 0

    # rows whose (topic, docno) key the qrels hold, within the cut, and equal to that judgement's strings
    hit, found = keys.hits([_ranked_pair_keys(run, by_matrix) for run in runs])
    q_row = q_rows[found]
    segment = np.searchsorted(seg_end, hit, side="right")
    position = hit - (seg_end - seg_len)[segment]
    hit, segment, position, q_row = _where(position < kept_len[segment], hit, segment, position, q_row)
    same = seg_topic[segment] == q_topic[q_row]
    same &= _docs_equal(runs, orders, hit, q_docs[q_row])
    segment, position, q_row = _where(same, segment, position, q_row)

    lengths = np.zeros((n_run, n_topic), dtype=np.int64)
    valid = seg_topic >= 0
    lengths[seg_run[valid], seg_topic[valid]] = kept_len[valid]
    cell = (seg_run * n_topic + seg_topic)[segment] * depth + position
    grades: np.ndarray = np.full((n_run, n_topic, depth), NOT_POOLED, dtype=np.int64)
    short = np.nonzero(lengths < depth)
    if len(short[0]):
        grades[short] = np.where(np.arange(depth) < lengths[short][:, None], NOT_POOLED, PADDING)
    grades = grades.reshape(-1)
    hit_grades = np.asarray(qrels.grades, dtype=np.int64)[q_row]
    grades[cell] = hit_grades
    judged_hits = np.flatnonzero(hit_grades >= 0)  # hits stand grouped by list, in rank order
    strata: np.ndarray | None = None
    if qrels.strata is not None:
        strata = np.full(n_run * n_topic * depth, -1, dtype=np.int64)
        strata[cell] = q_stratum[q_row]
        strata = strata.reshape(n_run, n_topic, depth)
    return GradeMatrix(
        grades=grades.reshape(n_run, n_topic, depth),
        strata=strata,
        lengths=lengths,
        answered=lengths > 0,
        judged=judged,
        max_results=max_results,
        judged_cells=(cell[judged_hits], hit_grades[judged_hits]),
    )


def _pair_keys(doc_hashes: np.ndarray, topic_hashes: np.ndarray) -> np.ndarray:
    """uint64 key of each (topic, docno) from their hashes: the doc hash offset by an odd multiple of the topic's."""
    return doc_hashes + topic_hashes * _TOPIC_MULTIPLIER


def _doc_hashes(docs: np.ndarray, by_matrix: bool) -> np.ndarray:
    """Hashes of docnos, of the kind that every side of one grading uses (see `fast.hashing.hash_strings`)."""
    return hash_strings(docs, matrix=by_matrix)


def _topic_hashes(names: Sequence[str]) -> np.ndarray:
    """Hashes of topic names (Python's: a name of any length; a few per run, so the kind costs nothing)."""
    return hash_strings(np.array(list(names), dtype=object), matrix=False)


def _distinct_pairs(keys: np.ndarray, topics: np.ndarray, docs: np.ndarray) -> tuple[np.ndarray, KeyTable] | None:
    """The qrels row each distinct key stands for (the last of a repeated judgement) and a table of the keys.

    None if one key stands for two different (topic, docno) pairs.
    """
    distinct, first, group = np.unique(keys, return_index=True, return_inverse=True)
    group = group.reshape(-1)
    if np.any(topics[first][group] != topics) or np.any(docs[first][group] != docs):
        return None
    last = np.zeros(len(distinct), dtype=np.int64)
    last[group] = np.arange(len(keys))  # the last write wins: the last row of each key
    return last, KeyTable(distinct)


def _ranked_pair_keys(run: RunTable, by_matrix: bool) -> np.ndarray:
    """The run's (topic, docno) keys in ranked order, kept on the table (they do not depend on the qrels)."""

    def compute(table: RunTable) -> np.ndarray:
        hashes = table.doc_hashes if by_matrix else None
        if hashes is None:
            hashes = _doc_hashes(np.asarray(table.docs), by_matrix)
        order = run_order(table)
        topic = np.repeat(_topic_hashes(order.topics), np.diff(order.bounds))
        return _pair_keys(order.ranked(hashes), topic)

    return run.cached(f"ranked_pair_keys:{by_matrix}", compute)


def _where(keep: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arrays at the positions where `keep` holds (the arrays themselves if it holds everywhere)."""
    if keep.all():
        return arrays
    at = np.flatnonzero(keep)
    return tuple(values[at] for values in arrays)


def _docs_equal(runs: Sequence[RunTable], orders: list[RunOrder], at: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """bool per position: the docno at `at` (ascending) of all runs' ranked rows laid end to end is `expected`."""
    bounds = np.concatenate(([0], np.cumsum([len(run) for run in runs])))
    cuts = np.searchsorted(at, bounds).tolist()
    out = np.empty(len(at), dtype=bool)
    for r, (run, o) in enumerate(zip(runs, orders, strict=True)):
        lo, hi = cuts[r], cuts[r + 1]
        if lo < hi:
            local = at[lo:hi] - bounds[r]
            out[lo:hi] = np.asarray(run.docs)[local if o.rows is None else o.rows[local]] == expected[lo:hi]
    return out
