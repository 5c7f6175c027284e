"""Runs graded straight against one qrels: every ranked doc's grade by a hashed (topic, docno) look-up.

The path `evaluate` takes from parsed tables. Unlike `prepare_runs` it builds no vocabulary of the runs' docs (the
costly part: grouping millions of (topic, docno) rows); it needs only the qrels' keys in a hash table, so its cost
is a few passes over the rows. Hashes only propose matches: each is checked against the strings, so the grades are
exactly those of `grade_matrix(prepare_runs(...))`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.evaluation.interning import KeyTable, hash_strings, matrix_hashable, mix
from app.evaluation.ranking import NOT_POOLED, PADDING, GradeMatrix, summarise_qrels
from app.evaluation.records import Qrels, RunTable
from app.evaluation.run_order import RunOrder, run_order


def grade_runs(runs: Sequence[RunTable], qrels: Qrels, max_results: int = 1000) -> GradeMatrix | None:
    """Grades at each rank of every run x qrels topic (trec_eval order and cut); None if qrels docnos collide.

    A None (two different qrels docnos with one 64-bit hash) tells the caller to take the `prepare_runs` path.
    """
    judged, q_topic, q_stratum = summarise_qrels(qrels)
    n_run, n_topic = len(runs), len(judged.topics)
    q_docs = np.asarray(qrels.docs)
    if q_docs.dtype.kind != "U":
        q_docs = q_docs.astype(str)
    by_matrix = matrix_hashable(q_docs) and all(
        run.doc_hashes is not None or matrix_hashable(np.asarray(run.docs)) for run in runs
    )
    index = QrelsIndex.build(q_docs, q_topic, n_topic, by_matrix=by_matrix)
    if index is None:
        return None

    # every run's rows in ranked order, laid end to end: one segment per (run, topic)
    orders = [run_order(run) for run in runs]
    topic_index = {name: i for i, name in enumerate(judged.topics)}
    seg_topic = np.array([topic_index.get(name, -1) for o in orders for name in o.topics], dtype=np.int64)
    seg_run = np.repeat(np.arange(n_run, dtype=np.int64), [len(o.topics) for o in orders])
    seg_len = np.concatenate([np.diff(o.bounds) for o in orders] or [np.zeros(0, np.int64)])
    seg_end = np.cumsum(seg_len)
    kept_len = np.where(seg_topic >= 0, np.minimum(seg_len, max_results), 0)  # topics the qrels lack count nothing
    depth = int(kept_len.max()) if len(kept_len) else 0

    # rows whose docno the qrels hold (by hash), within the cut, judged for their topic, and equal as strings
    hit, doc = index.docs.hits([_ranked_hashes(run, by_matrix) for run in runs])
    segment = np.searchsorted(seg_end, hit, side="right")
    position = hit - (seg_end - seg_len)[segment]
    inside = position < kept_len[segment]
    hit, segment, position, doc = hit[inside], segment[inside], position[inside], doc[inside]
    q_row = index.row_of(doc, seg_topic[segment])
    judged_here = np.flatnonzero(q_row >= 0)
    hit, segment, position, q_row = hit[judged_here], segment[judged_here], position[judged_here], q_row[judged_here]
    same = _ranked_docs(runs, orders, hit) == q_docs[q_row]
    segment, position, q_row = segment[same], position[same], q_row[same]

    lengths = np.zeros((n_run, n_topic), dtype=np.int64)
    valid = seg_topic >= 0
    lengths[seg_run[valid], seg_topic[valid]] = kept_len[valid]
    cell = (seg_run * n_topic + seg_topic)[segment] * depth + position
    grades = np.full((n_run, n_topic, depth), NOT_POOLED, dtype=np.int64)
    short = np.nonzero(lengths < depth)
    if len(short[0]):
        grades[short] = np.where(np.arange(depth) < lengths[short][:, None], NOT_POOLED, PADDING)
    grades = grades.reshape(-1)
    grades[cell] = np.asarray(qrels.grades, dtype=np.int64)[q_row]
    strata = None
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
    )


@dataclass(frozen=True)
class QrelsIndex:
    """The qrels' distinct docnos in a hash table, and the qrels row of each judged (docno, topic)."""

    docs: KeyTable  # docno hashes; index = the docno's number
    pairs: KeyTable  # mixed docno number * n_topic + topic
    rows: np.ndarray  # int64 qrels row of each pair (the last, if a pair is judged twice)
    n_topic: int

    @classmethod
    def build(cls, docs: np.ndarray, topics: np.ndarray, n_topic: int, *, by_matrix: bool) -> QrelsIndex | None:
        """The index of qrels rows (docnos, topic indices); None if two different docnos share a hash."""
        hashes = hash_strings(docs, matrix=by_matrix)
        distinct, members, number = np.unique(hashes, return_index=True, return_inverse=True)
        number = number.reshape(-1)
        if np.any(docs[members][number] != docs):
            return None
        key = number * n_topic + topics
        order = np.argsort(key, kind="stable")
        last = order[np.flatnonzero(np.append(key[order][1:] != key[order][:-1], True))] if len(key) else order
        return cls(KeyTable(distinct), KeyTable(mix(key[last].astype(np.uint64))), last, n_topic)

    def row_of(self, docs: np.ndarray, topics: np.ndarray) -> np.ndarray:
        """The qrels row judging each (docno number, topic index), -1 where there is none."""
        where, index = self.pairs.hits([mix((docs * self.n_topic + topics).astype(np.uint64))])
        out = np.full(len(docs), -1, dtype=np.int64)
        out[where] = self.rows[index]
        return out


def _ranked_hashes(run: RunTable, by_matrix: bool) -> np.ndarray:
    """The run's doc hashes (of the kind asked for) in ranked order, kept on the table."""

    def compute(table: RunTable) -> np.ndarray:
        hashes = table.doc_hashes if by_matrix else None
        if hashes is None:
            hashes = hash_strings(np.asarray(table.docs), matrix=by_matrix)
        return run_order(table).ranked(hashes)

    return run.cached(f"ranked_doc_hashes:{by_matrix}", compute)


def _ranked_docs(runs: Sequence[RunTable], orders: list[RunOrder], at: np.ndarray) -> np.ndarray:
    """The docnos at positions `at` (ascending) of all runs' ranked rows laid end to end."""
    bounds = np.concatenate(([0], np.cumsum([len(run) for run in runs])))
    cuts = np.searchsorted(at, bounds)
    parts = []
    for r, (run, o) in enumerate(zip(runs, orders, strict=True)):
        local = at[cuts[r] : cuts[r + 1]] - bounds[r]
        parts.append(np.asarray(run.docs)[local if o.rows is None else o.rows[local]])
    if not parts:
        return np.zeros(0, dtype=str)
    if all(part.dtype.kind == "U" for part in parts):
        return np.concatenate(parts)
    return np.concatenate([part.astype(object) for part in parts])
