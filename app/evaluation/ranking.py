"""Runs sorted and cut once (trec_eval order), as integer doc ids, and their grade matrices against any qrels."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.evaluation.records import Qrels, RunTable

NOT_POOLED = -9  # grade of a retrieved doc absent from the qrels
PADDING = -10  # grade past the end of a ranked list


def intern(values: np.ndarray, vocabulary: dict[str, int]) -> np.ndarray:
    """Integer ids of `values`, adding unseen strings to `vocabulary` (insertion-ordered ids)."""
    if len(values) == 0:
        return np.zeros(0, dtype=np.int64)
    items = values.tolist()
    if vocabulary:
        new = [key for key in dict.fromkeys(items) if key not in vocabulary]
        vocabulary.update(zip(new, range(len(vocabulary), len(vocabulary) + len(new)), strict=True))
    else:  # first fill: no membership tests needed
        unique = dict.fromkeys(items)
        vocabulary.update(zip(unique, range(len(unique)), strict=True))
    return np.fromiter(map(vocabulary.__getitem__, items), np.int64, len(items))


def lookup(values: np.ndarray, vocabulary: dict[str, int]) -> np.ndarray:
    """Integer ids of `values` in `vocabulary`, -1 for strings it lacks."""
    get = vocabulary.get
    return np.fromiter((get(v, -1) for v in values.tolist()), np.int64, len(values))


@dataclass(frozen=True)
class PreparedRuns:
    """Several runs sorted by score desc / docno desc and cut at max_results, ready for any qrels.

    `pairs[run, topic, position]` is the id of the (topic, doc) pair ranked there (-1 past the list's end); a pair
    id p stands for topic `pair_topic[p]` and doc `pair_doc[p]` (indices into `topics` / `docs`).
    """

    names: list[str]
    topics: list[str]  # every topic some run answers
    docs: list[str]  # every retrieved doc
    pairs: np.ndarray  # int64 [n_run, n_topic, depth]
    lengths: np.ndarray  # int64 [n_run, n_topic], ranked list length after the cut
    pair_topic: np.ndarray  # int64 [n_pair]
    pair_doc: np.ndarray  # int64 [n_pair]
    max_results: int

    @property
    def depth(self) -> int:
        """Width of the position axis."""
        return self.pairs.shape[2]


def prepare_runs(runs: Sequence[RunTable], max_results: int = 1000, names: Sequence[str] | None = None) -> PreparedRuns:
    """Sort every run's topics by score desc then docno desc, cut at max_results, as pair ids in one array."""
    names = list(names) if names is not None else [r.tag for r in runs]
    topic_vocab: dict[str, int] = {}
    doc_vocab: dict[str, int] = {}
    run_ids, topic_ids, scores = [], [], []
    for index, run in enumerate(runs):
        run_ids.append(np.full(len(run), index, dtype=np.int64))
        topic_ids.append(intern(np.asarray(run.topics), topic_vocab))
        scores.append(np.asarray(run.scores, dtype=np.float64))
    run_id = np.concatenate(run_ids) if run_ids else np.zeros(0, np.int64)
    topic_id = np.concatenate(topic_ids) if topic_ids else np.zeros(0, np.int64)
    all_docs = np.concatenate([np.asarray(run.docs, dtype=object) for run in runs]) if runs else np.zeros(0, object)
    doc_id = intern(all_docs, doc_vocab)  # one pass over every run's docs
    score = np.concatenate(scores) if scores else np.zeros(0, np.float64)

    # Renumber topics and docs in sorted order, so that doc id order is docno order (code points = UTF-8 bytes).
    topic_names = list(topic_vocab)
    doc_names = list(doc_vocab)
    topic_order = np.argsort(np.array(topic_names, dtype=str), kind="stable") if topic_names else np.zeros(0, int)
    doc_order = np.argsort(np.array(doc_names, dtype=str), kind="stable") if doc_names else np.zeros(0, int)
    topic_rank = np.empty(len(topic_names), np.int64)
    topic_rank[topic_order] = np.arange(len(topic_names))
    doc_rank = np.empty(len(doc_names), np.int64)
    doc_rank[doc_order] = np.arange(len(doc_names))
    topic_id = topic_rank[topic_id]
    doc_id = doc_rank[doc_id]
    topics_sorted = [topic_names[i] for i in topic_order.tolist()]
    docs_sorted = [doc_names[i] for i in doc_order.tolist()]

    n_run, n_topic = len(runs), len(topics_sorted)
    order = np.lexsort((-doc_id, -score, topic_id, run_id))
    group = run_id[order] * n_topic + topic_id[order]
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if len(group) else np.zeros(0, np.int64)
    sizes = np.diff(np.r_[starts, len(group)])
    position = np.arange(len(group)) - np.repeat(starts, sizes)
    keep = position < max_results
    order, group, position = order[keep], group[keep], position[keep]

    # Pair ids: one per distinct (topic, doc) retrieved by any run.
    n_doc = max(len(docs_sorted), 1)
    key = topic_id[order] * n_doc + doc_id[order]
    pair_keys, pair_of_row = np.unique(key, return_inverse=True)
    depth = int(min(max_results, sizes.max())) if len(sizes) else 0
    pairs = np.full((n_run * n_topic, depth), -1, dtype=np.int64)
    pairs[group, position] = pair_of_row.reshape(-1)
    lengths = np.bincount(group, minlength=n_run * n_topic).astype(np.int64)
    return PreparedRuns(
        names=names,
        topics=topics_sorted,
        docs=docs_sorted,
        pairs=pairs.reshape(n_run, n_topic, depth),
        lengths=lengths.reshape(n_run, n_topic),
        pair_topic=pair_keys // n_doc,
        pair_doc=pair_keys % n_doc,
        max_results=max_results,
    )


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


@dataclass(frozen=True)
class GradeMatrix:
    """Grades (and strata) at each rank of every run x topic, against one qrels."""

    grades: np.ndarray  # int64 [n_run, n_topic, depth]; NOT_POOLED if not in qrels, PADDING past the end
    strata: np.ndarray | None  # int64 [n_run, n_topic, depth]; stratum index (0..) or -1 if not pooled
    lengths: np.ndarray  # int64 [n_run, n_topic]
    answered: np.ndarray  # bool [n_run, n_topic], the run has the topic
    judged: JudgedTopics
    max_results: int


def summarise_qrels(qrels: Qrels) -> tuple[JudgedTopics, np.ndarray, np.ndarray]:
    """Per-topic qrels counts, plus each row's topic index and stratum index."""
    topics, topic_index = np.unique(qrels.topics.astype(str), return_inverse=True)
    topic_index = topic_index.reshape(-1)
    n_topic = len(topics)
    grades = np.asarray(qrels.grades, dtype=np.int64)
    num_rel = np.bincount(topic_index, weights=grades >= 1, minlength=n_topic).astype(np.int64)
    num_nonrel = np.bincount(topic_index, weights=(grades >= 0) & (grades < 1), minlength=n_topic).astype(np.int64)
    order = np.argsort(topic_index, kind="stable")
    split = np.cumsum(np.bincount(topic_index, minlength=n_topic))[:-1]
    per_topic = np.split(grades[order], split)
    strata_labels = pooled = judged = relevant = None
    stratum_index = np.full(len(grades), -1, dtype=np.int64)
    if qrels.strata is not None:
        strata_labels, stratum_index = np.unique(np.asarray(qrels.strata, dtype=np.int64), return_inverse=True)
        stratum_index = stratum_index.reshape(-1)
        cell = topic_index * len(strata_labels) + stratum_index
        size = n_topic * len(strata_labels)
        shape = (n_topic, len(strata_labels))
        pooled = np.bincount(cell, minlength=size).reshape(shape)
        judged = np.bincount(cell, weights=grades >= 0, minlength=size).astype(np.int64).reshape(shape)
        relevant = np.bincount(cell, weights=grades >= 1, minlength=size).astype(np.int64).reshape(shape)
    summary = JudgedTopics(
        topics=topics.tolist(),
        grades=per_topic,
        num_rel=num_rel,
        num_nonrel=num_nonrel,
        strata=strata_labels,
        pooled=pooled,
        judged=judged,
        relevant=relevant,
    )
    return summary, topic_index, stratum_index


def grade_matrix(prepared: PreparedRuns, qrels: Qrels) -> GradeMatrix:
    """Look every ranked doc up in the qrels: the matrices all measures reduce over (topics = the qrels' topics)."""
    judged, topic_index, stratum_index = summarise_qrels(qrels)
    n_topic = len(judged.topics)
    n_run = len(prepared.names)
    # Map the qrels' topics onto the prepared topics (-1: no run answers it).
    prepared_topic = {name: i for i, name in enumerate(prepared.topics)}
    column = np.array([prepared_topic.get(name, -1) for name in judged.topics], dtype=np.int64)

    # Grade (and stratum) of each pair id: find each qrels row's pair by (topic, doc) key.
    n_pair = len(prepared.pair_topic)
    pair_grade = np.full(n_pair + 1, NOT_POOLED, dtype=np.int64)  # last slot: padding lookups
    pair_grade[n_pair] = PADDING
    pair_stratum = np.full(n_pair + 1, -1, dtype=np.int64)
    if n_pair:
        doc_index = {name: i for i, name in enumerate(prepared.docs)}
        q_doc = lookup(np.asarray(qrels.docs), doc_index)
        q_topic = column[topic_index]
        usable = (q_doc >= 0) & (q_topic >= 0)
        n_doc = max(len(prepared.docs), 1)
        q_key = q_topic[usable] * n_doc + q_doc[usable]
        pair_key = prepared.pair_topic * n_doc + prepared.pair_doc
        where = np.searchsorted(pair_key, q_key)
        where = np.minimum(where, n_pair - 1)
        found = pair_key[where] == q_key
        pair_grade[where[found]] = np.asarray(qrels.grades, dtype=np.int64)[usable][found]
        pair_stratum[where[found]] = stratum_index[usable][found]

    depth = prepared.depth
    pairs = np.full((n_run, n_topic, depth), n_pair, dtype=np.int64)
    lengths = np.zeros((n_run, n_topic), dtype=np.int64)
    present = column >= 0
    if present.any():
        block = prepared.pairs[:, column[present], :]
        pairs[:, present, :] = np.where(block >= 0, block, n_pair)
        lengths[:, present] = prepared.lengths[:, column[present]]
    grades = pair_grade[pairs]
    strata = pair_stratum[pairs] if qrels.strata is not None else None
    return GradeMatrix(
        grades=grades,
        strata=strata,
        lengths=lengths,
        answered=lengths > 0,
        judged=judged,
        max_results=prepared.max_results,
    )
