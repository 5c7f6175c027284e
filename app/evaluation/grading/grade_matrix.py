"""Grade matrices: the grade (and stratum) at each rank of every run x topic against one qrels, and qrels summaries.

Every measure reduces over a `GradeMatrix`. `grade_matrix` here is the grader: it grades `PreparedRuns` (analyses
grade one prepared set against many qrels). `evaluate` takes its fast path from parsed tables, `fast_path`,
which gives exactly the same matrix or declines.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from app.evaluation.grading.prepared_runs import PreparedRuns
from app.evaluation.records import ROWS_ONLY, Qrels

NOT_POOLED = -9  # grade of a retrieved doc absent from the qrels
PADDING = -10  # grade past the end of a ranked list
_GRADE_DTYPES = (np.int8, np.int16, np.int32, np.int64)


def grade_dtype(grades: np.ndarray) -> np.dtype:
    """The smallest signed integer dtype holding these qrels grades and the sentinels (int8 for usual grades)."""
    low = min(int(grades.min(initial=0)), NOT_POOLED, PADDING)
    high = int(grades.max(initial=0))
    for dtype in _GRADE_DTYPES:
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


@dataclass(frozen=True)
class JudgedTopics:
    """Per-topic qrels summaries, in the order of the evaluated topics."""

    topics: list[str]
    grades: list[np.ndarray]  # all judged grades of each topic (for ideal DCG), any order
    num_rel: np.ndarray  # int64 [n_topic], grade >= 1
    num_nonrel: np.ndarray  # int64 [n_topic], 0 <= grade < 1
    strata: np.ndarray | None  # int64 [n_strata] stratum labels (sample_eval qrels)
    pooled: np.ndarray | None  # int64 [n_topic, n_strata] N_c
    judged: np.ndarray | None  # int64 [n_topic, n_strata] n_c
    relevant: np.ndarray | None  # int64 [n_topic, n_strata] r_c
    relevant_by_grade: dict[int, np.ndarray] | None = None  # grade >= 1 -> int64 [n_topic, n_strata] (sample_eval)


@dataclass(frozen=True)
class GradeMatrix:
    """Grades (and strata) at each rank of every run x topic, against one qrels."""

    grades: np.ndarray  # grade_dtype [n_run, n_topic, depth]; NOT_POOLED if not in qrels, PADDING past the end
    strata: np.ndarray | None  # int64 [n_run, n_topic, depth]; stratum index (0..) or -1 if not pooled
    lengths: np.ndarray  # int64 [n_run, n_topic]
    answered: np.ndarray  # bool [n_run, n_topic], the run has the topic
    judged: JudgedTopics
    max_results: int
    # (flat index into grades, grade) of every judged doc (grade >= 0), grouped by list in rank order, when the
    # builder has them at hand; else RankedLists finds them
    judged_cells: tuple[np.ndarray, np.ndarray] | None = None


@dataclass(frozen=True)
class _RowGroups:
    """What a qrels summary needs of the rows alone (kept on the qrels and shared by `Qrels.regraded` copies)."""

    topics: np.ndarray  # the distinct topics, sorted
    topic_index: np.ndarray  # int64 per row (read-only, as every array here)
    order: np.ndarray  # the rows grouped by topic (stable)
    split: np.ndarray  # where each topic's rows start in `order`, past the first
    strata: np.ndarray | None  # the distinct stratum labels (sample_eval qrels)
    stratum_index: np.ndarray  # int64 per row (-1 without strata)

    @classmethod
    def of(cls, qrels: Qrels) -> _RowGroups:
        """Group the rows by topic (and stratum)."""
        topics, topic_index = np.unique(qrels.topics.astype(str), return_inverse=True)
        topic_index = topic_index.reshape(-1)
        order = np.argsort(topic_index, kind="stable")
        split = np.cumsum(np.bincount(topic_index, minlength=len(topics)))[:-1]
        labels = None
        stratum_index = np.full(len(topic_index), -1, dtype=np.int64)
        if qrels.strata is not None:
            labels, stratum_index = np.unique(np.asarray(qrels.strata, dtype=np.int64), return_inverse=True)
            stratum_index = stratum_index.reshape(-1)
        for values in (topic_index, order, split, stratum_index, *([] if labels is None else [labels])):
            values.flags.writeable = False
        return cls(topics, topic_index, order, split, labels, stratum_index)

    @cached_property
    def cells(self) -> np.ndarray:
        """int64 per row: topic index * strata + stratum index (qrels with strata)."""
        n_strata = 1 if self.strata is None else len(self.strata)
        cells: np.ndarray = self.topic_index * n_strata + self.stratum_index
        cells.flags.writeable = False
        return cells


def summarise_qrels(qrels: Qrels) -> tuple[JudgedTopics, np.ndarray, np.ndarray]:
    """Per-topic qrels counts, plus each row's topic index and stratum index (read-only arrays)."""
    rows = qrels.cached(ROWS_ONLY + "groups", _RowGroups.of)
    topic_index, stratum_index = rows.topic_index, rows.stratum_index
    n_topic = len(rows.topics)
    grades = np.asarray(qrels.grades, dtype=np.int64)
    relevant_rows = np.flatnonzero(grades >= 1)
    num_rel = np.bincount(topic_index[relevant_rows], minlength=n_topic).astype(np.int64)
    num_nonrel = np.bincount(topic_index[(grades >= 0) & (grades < 1)], minlength=n_topic).astype(np.int64)
    per_topic = np.split(grades[rows.order], rows.split)
    strata_labels = pooled = judged = relevant = by_grade = None
    if rows.strata is not None:
        strata_labels = rows.strata
        cell = rows.cells
        size = n_topic * len(strata_labels)
        shape = (n_topic, len(strata_labels))
        pooled = np.bincount(cell, minlength=size).astype(np.int64).reshape(shape)
        judged = np.bincount(cell[grades >= 0], minlength=size).astype(np.int64).reshape(shape)
        relevant_cell, relevant_grade = cell[relevant_rows], grades[relevant_rows]
        relevant = np.bincount(relevant_cell, minlength=size).astype(np.int64).reshape(shape)
        by_grade = {
            int(g): np.bincount(relevant_cell[relevant_grade == g], minlength=size).astype(np.int64).reshape(shape)
            for g in np.unique(relevant_grade)
        }
    summary = JudgedTopics(
        topics=rows.topics.tolist(),
        grades=per_topic,
        num_rel=num_rel,
        num_nonrel=num_nonrel,
        strata=strata_labels,
        pooled=pooled,
        judged=judged,
        relevant=relevant,
        relevant_by_grade=by_grade,
    )
    return summary, topic_index, stratum_index


def grade_matrix(prepared: PreparedRuns, qrels: Qrels) -> GradeMatrix:
    """Look every ranked doc up in the qrels: the matrices all measures reduce over (topics = the qrels' topics)."""
    return GradingPlan.of(prepared, qrels).graded(qrels)


@dataclass(frozen=True)
class GradingPlan:
    """What grading prepared runs against a qrels takes of the qrels' rows alone (topics and docs, not grades):
    each ranked position's pair id and the qrels row of every retrieved pair. Copies of the qrels with other grades
    (`Qrels.regraded`: the imputations) are graded from one plan, which lives as long as its caller keeps it."""

    pairs: np.ndarray  # int64 [n_run, n_topic, depth] pair id at each position, n_pair past a list's end
    lengths: np.ndarray  # int64 [n_run, n_topic]
    pair_ids: np.ndarray  # int64: the retrieved pairs that qrels rows judge ...
    lines: np.ndarray  # int64: ... and those rows (a repeated judgement's last row assigned last)
    n_pair: int
    max_results: int
    topics: np.ndarray  # the qrels' topics array the plan was made for
    docs: np.ndarray  # and its docs array

    @classmethod
    def of(cls, prepared: PreparedRuns, qrels: Qrels) -> GradingPlan:
        """The plan of grading `prepared` against qrels with these rows."""
        judged, topic_index, _ = summarise_qrels(qrels)
        n_topic = len(judged.topics)
        n_run = len(prepared.names)
        column = topic_columns(prepared, judged.topics)
        n_pair = len(prepared.pair_topic)
        pair_ids, lines = pair_lines(prepared, qrels, column[topic_index])
        pairs = np.full((n_run, n_topic, prepared.depth), n_pair, dtype=np.int64)
        lengths = np.zeros((n_run, n_topic), dtype=np.int64)
        present = column >= 0
        if present.any():
            block = prepared.pairs[:, column[present], :]
            pairs[:, present, :] = np.where(block >= 0, block, n_pair)
            lengths[:, present] = prepared.lengths[:, column[present]]
        pairs.flags.writeable = lengths.flags.writeable = False  # every matrix graded from the plan shares them
        return cls(pairs, lengths, pair_ids, lines, n_pair, prepared.max_results, qrels.topics, qrels.docs)

    def graded(self, qrels: Qrels) -> GradeMatrix:
        """The grade matrix of qrels with the plan's rows (its own arrays, or a `Qrels.regraded` copy's)."""
        if qrels.topics is not self.topics or qrels.docs is not self.docs:
            raise ValueError("a grading plan grades qrels with the rows it was made for")
        judged, _, stratum_index = summarise_qrels(qrels)
        q_grades = np.asarray(qrels.grades)
        pair_grade = np.full(self.n_pair + 1, NOT_POOLED, dtype=grade_dtype(q_grades))  # last slot: padding lookups
        pair_grade[self.n_pair] = PADDING
        pair_grade[self.pair_ids] = q_grades[self.lines]
        strata = None
        if qrels.strata is not None:
            pair_stratum = np.full(self.n_pair + 1, -1, dtype=np.int64)
            pair_stratum[self.pair_ids] = stratum_index[self.lines]
            strata = pair_stratum[self.pairs]
        return GradeMatrix(
            grades=pair_grade[self.pairs],
            strata=strata,
            lengths=self.lengths,
            answered=self.lengths > 0,
            judged=judged,
            max_results=self.max_results,
        )


def topic_columns(prepared: PreparedRuns, topics: list[str]) -> np.ndarray:
    """int64: each of `topics`' index among the prepared runs' topics (-1: no run answers it)."""
    prepared_topic = {name: i for i, name in enumerate(prepared.topics)}
    return np.array([prepared_topic.get(name, -1) for name in topics], dtype=np.int64)


def pair_lines(prepared: PreparedRuns, qrels: Qrels, q_topic: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(pair id, qrels row) of every qrels row some prepared run retrieves, in row order (a repeated judgement's
    last row is assigned last); `q_topic` is each row's prepared topic (-1: none). One searchsorted of the rows'
    (topic, doc) keys among the pairs' ids, which are in key order."""
    n_pair = len(prepared.pair_topic)
    q_doc = prepared.doc_index.ids(np.asarray(qrels.docs))
    usable = np.flatnonzero((q_doc >= 0) & (q_topic >= 0))
    if n_pair == 0 or len(usable) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    n_doc = max(len(prepared.docs), 1)
    q_key = q_topic[usable] * n_doc + q_doc[usable]
    pair_key = prepared.pair_topic * n_doc + prepared.pair_doc
    where = np.minimum(np.searchsorted(pair_key, q_key), n_pair - 1)
    hit = pair_key[where] == q_key
    return where[hit], usable[hit]
