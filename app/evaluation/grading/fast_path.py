"""The fast path of the one grader: parsed runs graded straight against one qrels by a hashed docno look-up.

The grader is `grade_matrix.grade_matrix(prepare_runs(runs), qrels)`; `grade_runs` gives exactly its GradeMatrix
(tests/evaluation/test_grading.py compares them on random runs and forced hash collisions) or declines with None.
It is the path `evaluate` takes from parsed tables: unlike `prepare_runs` it builds no vocabulary of the runs' docs
(the costly part: grouping millions of (topic, docno) rows). The qrels' distinct docnos go into a `KeyTable` once;
every run row's docno hash (the parser's) is looked up there in file order, a few numpy passes over the rows with no
per-row Python; only the rows found (a fraction) are then placed: their ranked position and topic from the run's
order, their judgement from a sorted (docno, topic) code of the qrels.

Invariants: hashes only propose matches, each is checked against the docno strings (topics come from the run's
topic names, exactly); one grading uses one kind of docno hash on both sides (code points when every side is a
moderate-width unicode array, else Python's hash()); None (two qrels docnos sharing a 64-bit hash) sends the caller
to the grader itself. Grades are stored in `grade_matrix.grade_dtype` of the qrels' grades (int8 usually).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.evaluation.fast.hashing import KeyTable, hash_strings, matrix_hashable
from app.evaluation.grading.grade_matrix import (
    NOT_POOLED,
    PADDING,
    GradeMatrix,
    JudgedTopics,
    grade_dtype,
    summarise_qrels,
)
from app.evaluation.grading.run_order import RunOrder, run_order
from app.evaluation.records import Qrels, RunTable


def grade_runs(runs: Sequence[RunTable], qrels: Qrels, max_results: int = 1000) -> GradeMatrix | None:
    """Grades at each rank of every run x qrels topic (trec_eval order and cut); None if qrels docno hashes collide.

    A None (two different qrels docnos with one 64-bit hash) tells the caller to take the `prepare_runs` path.
    """
    q_docs = np.asarray(qrels.docs)
    by_matrix = matrix_hashable(q_docs if q_docs.dtype.kind == "U" else q_docs.astype(str)) and all(
        run.doc_hashes is not None or matrix_hashable(np.asarray(run.docs)) for run in runs
    )
    side = qrels.cached(f"fast_path:{by_matrix}", lambda q: _QrelsSide.of(q, by_matrix))
    if side.judgements is None:
        return None
    judged, q_stratum, q_docs, judgements, q_grades = side.judged, side.strata, side.docs, side.judgements, side.grades
    n_run, n_topic = len(runs), len(judged.topics)
    dtype = grade_dtype(q_grades)

    # the (run, topic) lists: one segment per topic of each run, in ranked order, runs laid end to end
    orders = [run_order(run) for run in runs]
    topic_index = {name: i for i, name in enumerate(judged.topics)}
    seg_topic = np.array([topic_index.get(name, -1) for o in orders for name in o.topics], dtype=np.int64)
    seg_run = np.repeat(np.arange(n_run, dtype=np.int64), [len(o.topics) for o in orders])
    seg_len = np.concatenate([np.diff(o.bounds) for o in orders] or [np.zeros(0, np.int64)])
    seg_end = np.cumsum(seg_len)
    kept_len = np.where(seg_topic >= 0, np.minimum(seg_len, max_results), 0)  # topics the qrels lack count nothing
    depth = int(kept_len.max()) if len(kept_len) else 0

    # rows whose docno hash the qrels hold (file order), then their ranked position, list and place in it
    row, doc = judgements.table.hits([_row_hashes(run, by_matrix) for run in runs])
    offsets = np.concatenate(([0], np.cumsum([len(run) for run in runs], dtype=np.int64)))
    ranked, segment = _placed(orders, offsets, seg_end - seg_len, row)
    position = ranked - (seg_end - seg_len)[segment]
    topic = seg_topic[segment]
    row, doc, segment, position, topic = _where(
        (topic >= 0) & (position < kept_len[segment]), row, doc, segment, position, topic
    )
    q_row = judgements.row_of(doc, topic)
    same = q_row >= 0
    row, segment, position, q_row = _where(same, row, segment, position, q_row)
    same = _docs_equal(runs, offsets, row, np.take(q_docs, q_row))
    segment, position, q_row = _where(same, segment, position, q_row)

    lengths = np.zeros((n_run, n_topic), dtype=np.int64)
    valid = seg_topic >= 0
    lengths[seg_run[valid], seg_topic[valid]] = kept_len[valid]
    cell = (seg_run * n_topic + seg_topic)[segment] * depth + position
    grades = np.full((n_run, n_topic, depth), NOT_POOLED, dtype=dtype)
    short = np.nonzero(lengths < depth)
    if len(short[0]):
        grades[short] = np.where(np.arange(depth) < lengths[short][:, None], NOT_POOLED, PADDING).astype(dtype)
    flat = grades.reshape(-1)
    flat[cell] = q_grades[q_row]
    judged_at = np.flatnonzero(flat >= 0)  # the judged docs, grouped by list in rank order
    strata: np.ndarray | None = None
    if qrels.strata is not None:
        strata = np.full(n_run * n_topic * depth, -1, dtype=np.int64)
        strata[cell] = q_stratum[q_row]
        strata = strata.reshape(n_run, n_topic, depth)
    return GradeMatrix(
        grades=grades,
        strata=strata,
        lengths=lengths,
        answered=lengths > 0,
        judged=judged,
        max_results=max_results,
        judged_cells=(judged_at, flat[judged_at]),
    )


@dataclass(frozen=True)
class _QrelsSide:
    """What grading needs of one qrels whatever the runs, worked out once per qrels (and kind of docno hash)."""

    judged: JudgedTopics
    strata: np.ndarray  # int64 stratum index per qrels row
    docs: np.ndarray  # the qrels docnos as a unicode array
    grades: np.ndarray
    judgements: _Judgements | None  # None when two qrels docnos share a hash

    @classmethod
    def of(cls, qrels: Qrels, by_matrix: bool) -> _QrelsSide:
        """The qrels' summary and judgement look-up, docnos hashed by code points (`by_matrix`) or by hash()."""
        judged, q_topic, q_stratum = summarise_qrels(qrels)
        docs = np.asarray(qrels.docs)
        if docs.dtype.kind != "U":
            docs = docs.astype(str)
        judgements = _Judgements.of(docs, _doc_hashes(docs, by_matrix), q_topic, len(judged.topics))
        return cls(judged, q_stratum, docs, np.asarray(qrels.grades), judgements)


class _Judgements:
    """The qrels' distinct docnos in a KeyTable, and the qrels row judging each (docno, topic) they pair up in."""

    def __init__(self, table: KeyTable, codes: np.ndarray, rows: np.ndarray, n_topic: int) -> None:
        self.table = table
        self.codes = codes  # int64, ascending: docno index * n_topic + topic index of each judged pair
        self.rows = rows  # int64: the qrels row of each code (the last of a repeated judgement)
        self.n_topic = n_topic
        per_doc = np.bincount(codes // max(n_topic, 1), minlength=len(table.keys))
        self.first = np.concatenate(([0], np.cumsum(per_doc)))  # docno d's codes: codes[first[d]:first[d + 1]]
        self.steps = int(per_doc.max(initial=0)).bit_length()  # halvings down to one code

    @classmethod
    def of(cls, docs: np.ndarray, hashes: np.ndarray, topics: np.ndarray, n_topic: int) -> _Judgements | None:
        """The judgements of qrels rows (docno strings, hashes, topic indices); None if two docnos share a hash."""
        distinct, first, doc = np.unique(hashes, return_index=True, return_inverse=True)
        doc = doc.reshape(-1)
        if np.any(docs[first][doc] != docs):
            return None
        codes = doc * n_topic + topics
        order = np.argsort(codes, kind="stable")
        codes = codes[order]
        last = np.ones(len(codes), dtype=bool)  # the last row of each code wins, as in trec_eval
        np.not_equal(codes[1:], codes[:-1], out=last[:-1])
        return cls(KeyTable(distinct), codes[last], order[last], n_topic)

    def row_of(self, doc: np.ndarray, topic: np.ndarray) -> np.ndarray:
        """The qrels row judging each (docno index, topic index), -1 where the qrels do not judge that pair.

        A binary search of each docno's own judged topics (usually one or a few: the codes are sorted by docno, so
        its pairs stand together), all look-ups a step at a time.
        """
        code = doc * self.n_topic + topic
        if len(self.codes) == 0:
            return np.full(len(code), -1, dtype=np.int64)
        lo = np.take(self.first, doc)
        if self.steps <= 1:  # every docno judged for one topic: its one code is the candidate
            lo = np.minimum(lo, len(self.codes) - 1)
            return np.where(np.take(self.codes, lo) == code, np.take(self.rows, lo), -1)
        hi = np.take(self.first, doc + 1)
        for _ in range(self.steps):
            mid = (lo + hi) >> 1
            right = self.codes[np.minimum(mid, len(self.codes) - 1)] < code
            lo = np.where(right, mid + 1, lo)
            hi = np.where(right, hi, mid)
        lo = np.minimum(lo, len(self.codes) - 1)
        return np.where(self.codes[lo] == code, self.rows[lo], -1)


def _doc_hashes(docs: np.ndarray, by_matrix: bool) -> np.ndarray:
    """Hashes of docnos, of the kind that every side of one grading uses (see `fast.hashing.hash_strings`)."""
    return hash_strings(docs, matrix=by_matrix)


def _row_hashes(run: RunTable, by_matrix: bool) -> np.ndarray:
    """The run's docno hashes in file order: the parser's, or worked out once and kept on the table."""
    if by_matrix and run.doc_hashes is not None:
        return run.doc_hashes
    return run.cached(f"doc_hashes:{by_matrix}", lambda table: _doc_hashes(np.asarray(table.docs), by_matrix))


def _placed(
    orders: list[RunOrder], offsets: np.ndarray, seg_start: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(ranked position, segment) of rows given by ascending file positions (runs and their segments end to end).

    A run that lists each topic together ranks rows within their file segment: the segments of ascending rows
    follow from where each segment starts among them. Other runs' rows are placed by their ranked positions.
    """
    cuts = np.searchsorted(rows, seg_start)
    segment = np.repeat(np.arange(len(seg_start), dtype=np.int64), np.diff(np.append(cuts, len(rows))))
    ranked = rows.copy()
    bounds = np.searchsorted(rows, offsets).tolist()
    for r, order in enumerate(orders):
        lo, hi = bounds[r], bounds[r + 1]
        if order.in_file_order or lo == hi:
            continue
        ranked[lo:hi] = order.positions_of(rows[lo:hi] - offsets[r]) + offsets[r]
        if not order.contiguous:
            first = int(np.searchsorted(seg_start, offsets[r]))  # the run's first segment
            segment[lo:hi] = first + np.searchsorted(order.bounds[1:], ranked[lo:hi] - offsets[r], side="right")
    return ranked, segment


def _where(keep: np.ndarray, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arrays at the positions where `keep` holds (the arrays themselves if it holds everywhere)."""
    if keep.all():
        return arrays
    at = np.flatnonzero(keep)
    return tuple(values[at] for values in arrays)


def _docs_equal(runs: Sequence[RunTable], offsets: np.ndarray, rows: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """bool per row: the docno at `rows` (ascending file positions, runs laid end to end) is `expected`."""
    cuts = np.searchsorted(rows, offsets).tolist()
    out = np.empty(len(rows), dtype=bool)
    for r, run in enumerate(runs):
        lo, hi = cuts[r], cuts[r + 1]
        if lo < hi:
            # np.take: numpy's fancy indexing copies wide (unicode) items about twice as slowly
            out[lo:hi] = np.take(np.asarray(run.docs), rows[lo:hi] - offsets[r]) == expected[lo:hi]
    return out
