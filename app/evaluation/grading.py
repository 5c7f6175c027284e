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
    hit, segment, position, doc = _where(position < kept_len[segment], hit, segment, position, doc)
    q_row = index.row_of(doc, seg_topic[segment])
    hit, segment, position, q_row = _where(q_row >= 0, hit, segment, position, q_row)
    same = _docs_equal(runs, orders, hit, q_docs[q_row])
    segment, position, q_row = _where(same, segment, position, q_row)

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
    """The qrels' distinct docnos in a hash table, and the qrels row of each judged (docno, topic).

    Most docnos are judged for one topic: each docno's first (topic, row) sits in plain arrays, and only the pairs
    of docnos judged for more topics go to a second table.
    """

    docs: KeyTable  # docno hashes; index = the docno's number
    first_topic: np.ndarray  # int64 [n_docno]: the lowest topic index judging the docno
    first_row: np.ndarray  # int64 [n_docno]: its qrels row
    more_topics: np.ndarray  # bool [n_docno]: other topics judge the docno too
    pairs: KeyTable  # the other (docno, topic) pairs, as mixed docno number * n_topic + topic
    pair_rows: np.ndarray  # int64 qrels row of each of those pairs
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
        # one row per pair, the last if a pair is judged twice; in (docno, topic) order
        rows = order[np.flatnonzero(np.append(key[order][1:] != key[order][:-1], True))] if len(key) else order
        doc_of = number[rows]
        first = np.flatnonzero(np.append(True, doc_of[1:] != doc_of[:-1])) if len(rows) else rows
        first_topic = np.full(len(distinct), -1, dtype=np.int64)
        first_row = np.full(len(distinct), -1, dtype=np.int64)
        first_topic[doc_of[first]] = topics[rows[first]]
        first_row[doc_of[first]] = rows[first]
        rest = np.ones(len(rows), dtype=bool)
        rest[first] = False
        more_topics = np.zeros(len(distinct), dtype=bool)
        more_topics[doc_of[rest]] = True
        pairs = KeyTable(mix(key[rows[rest]].astype(np.uint64)))
        return cls(KeyTable(distinct), first_topic, first_row, more_topics, pairs, rows[rest], n_topic)

    def row_of(self, docs: np.ndarray, topics: np.ndarray) -> np.ndarray:
        """The qrels row judging each (docno number, topic index), -1 where there is none."""
        out = np.where(self.first_topic[docs] == topics, self.first_row[docs], -1)
        other = np.flatnonzero(self.more_topics[docs])
        if len(other):
            where, index = self.pairs.hits([mix((docs[other] * self.n_topic + topics[other]).astype(np.uint64))])
            out[other[where]] = self.pair_rows[index]
        return out


def _ranked_hashes(run: RunTable, by_matrix: bool) -> np.ndarray:
    """The run's doc hashes (of the kind asked for) in ranked order, kept on the table."""

    def compute(table: RunTable) -> np.ndarray:
        hashes = table.doc_hashes if by_matrix else None
        if hashes is None:
            hashes = hash_strings(np.asarray(table.docs), matrix=by_matrix)
        return run_order(table).ranked(hashes)

    return run.cached(f"ranked_doc_hashes:{by_matrix}", compute)


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
