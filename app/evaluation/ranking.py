"""Runs sorted and cut once (trec_eval order), as integer doc ids, and their grade matrices against any qrels."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from app.evaluation.fast.hashing import group_hashes, hash_strings, matrix_hashable, mix
from app.evaluation.ordering import ranked_order
from app.evaluation.records import Qrels, RunTable

NOT_POOLED = -9  # grade of a retrieved doc absent from the qrels
PADDING = -10  # grade past the end of a ranked list
_TOPIC_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)


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

    @cached_property
    def doc_index(self) -> dict[str, int]:
        """Each doc's index in `docs`: built on first use and kept, so grading against many qrels builds it once."""
        return {name: i for i, name in enumerate(self.docs)}


def prepare_runs(runs: Sequence[RunTable], max_results: int = 1000, names: Sequence[str] | None = None) -> PreparedRuns:
    """Sort every run's topics by score desc then docno desc, cut at max_results, as pair ids in one array.

    No Python object per row: (topic, doc) pairs and docnos get ids from vectorised hashes grouped by one sort and
    checked against the strings (see fast.hashing); topics come from each run's contiguous topic segments; the order
    is `ordering.ranked_order` (tests compare all of it with a plain dict-and-lexsort reference).
    """
    names = list(names) if names is not None else [r.tag for r in runs]
    n_run = len(runs)
    sizes = np.array([len(run) for run in runs], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    n_rows = int(offsets[-1])
    if n_rows == 0:
        empty = np.zeros(0, np.int64)
        return PreparedRuns(names, [], [], np.zeros((n_run, 0, 0), np.int64), np.zeros((n_run, 0), np.int64),
                            empty, empty, max_results)  # fmt: skip
    docs = [np.asarray(run.docs) for run in runs]
    topic_seen, topic_vocab = _topic_ids(runs)
    pair_group, pair_rows, doc_of_pair, doc_names = _group_pairs(runs, docs, offsets, topic_seen)

    # Topic and doc ids in name order (code points, i.e. UTF-8 byte order).
    topic_names = sorted(topic_vocab)
    topic_rank = np.empty(len(topic_names), np.int64)
    topic_rank[[topic_vocab[name] for name in topic_names]] = np.arange(len(topic_names))
    doc_order = np.argsort(doc_names, kind="stable")
    doc_rank = np.empty(len(doc_names), np.int64)
    doc_rank[doc_order] = np.arange(len(doc_names))
    docs_sorted = [str(v) for v in doc_names[doc_order].tolist()]
    n_doc, n_topic = max(len(docs_sorted), 1), len(topic_names)
    pair_topic_all = topic_rank[topic_seen[pair_rows]]
    pair_doc_all = doc_rank[doc_of_pair]

    # Order: score desc, then docno desc, within each (run, topic).
    score = np.concatenate([np.asarray(run.scores, dtype=np.float64) for run in runs])
    run_id = np.repeat(np.arange(n_run, dtype=np.int64), sizes)
    group = run_id * n_topic + topic_rank[topic_seen]
    order = ranked_order(group, score, pair_doc_all[pair_group], offsets.tolist())
    g = group if order is None else group[order]
    starts = np.flatnonzero(np.concatenate(([True], g[1:] != g[:-1])))
    group_sizes = np.diff(np.append(starts, n_rows))
    position = np.arange(n_rows) - np.repeat(starts, group_sizes)
    if int(group_sizes.max()) > max_results:
        keep = position < max_results
        order = np.flatnonzero(keep) if order is None else order[keep]
        g, position = g[keep], position[keep]

    # Pair ids: the retrieved (topic, doc) pairs within the cut, numbered in (topic, doc) order.
    row_pair = pair_group if order is None else pair_group[order]
    used = np.zeros(len(pair_rows), dtype=bool)
    used[row_pair] = True
    used_pairs = np.flatnonzero(used)
    pair_keys = pair_topic_all[used_pairs] * n_doc + pair_doc_all[used_pairs]
    by_key = np.argsort(pair_keys, kind="stable")
    new_id = np.empty(len(pair_rows), dtype=np.int64)
    new_id[used_pairs[by_key]] = np.arange(len(used_pairs))
    depth = int(min(max_results, group_sizes.max()))
    pairs = np.full((n_run * n_topic, depth), -1, dtype=np.int64)
    pairs[g, position] = new_id[row_pair]
    lengths = np.bincount(g, minlength=n_run * n_topic).astype(np.int64)
    pair_keys = pair_keys[by_key]
    return PreparedRuns(
        names=names,
        topics=topic_names,
        docs=docs_sorted,
        pairs=pairs.reshape(n_run, n_topic, depth),
        lengths=lengths.reshape(n_run, n_topic),
        pair_topic=pair_keys // n_doc,
        pair_doc=pair_keys % n_doc,
        max_results=max_results,
    )


def _topic_ids(runs: Sequence[RunTable]) -> tuple[np.ndarray, dict[str, int]]:
    """Each row's topic id (first-seen order) and the vocabulary.

    One dict look-up per segment of equal consecutive topics (a run file usually has one segment per topic).
    """
    vocabulary: dict[str, int] = {}
    parts = []
    for run in runs:
        topics = np.asarray(run.topics)
        if len(topics) == 0:
            parts.append(np.zeros(0, np.int64))
            continue
        starts = np.concatenate(([0], np.flatnonzero(topics[1:] != topics[:-1]) + 1))
        ids = [vocabulary.setdefault(str(name), len(vocabulary)) for name in topics[starts].tolist()]
        parts.append(np.repeat(np.array(ids, np.int64), np.diff(np.append(starts, len(topics)))))
    return np.concatenate(parts), vocabulary


def _group_pairs(
    runs: Sequence[RunTable], docs: list[np.ndarray], offsets: np.ndarray, topic: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Group the rows (all runs concatenated) by (topic, docno), and the pairs by docno.

    Returns each row's pair group, a member row of each pair group, each pair group's doc group, and each doc
    group's docno. Groups come from hashes (the parser's, or computed here); every row is compared with its
    group's member, and groups that turn out to mix values (hash collisions) are split exactly.
    """
    by_matrix = all(run.doc_hashes is not None or matrix_hashable(d) for run, d in zip(runs, docs, strict=True))
    doc_hash = np.concatenate(
        [
            run.doc_hashes if by_matrix and run.doc_hashes is not None else hash_strings(d, matrix=by_matrix)
            for run, d in zip(runs, docs, strict=True)
        ]
    )
    row_hash = mix(doc_hash + (topic.astype(np.uint64) + np.uint64(1)) * _TOPIC_MULTIPLIER)
    pair_group, pair_rows = group_hashes(row_hash)
    pair_docs = _strings_at(docs, offsets, pair_rows)
    bad = topic != topic[pair_rows][pair_group]
    for r, d in enumerate(docs):
        lo, hi = int(offsets[r]), int(offsets[r + 1])
        bad[lo:hi] |= d != pair_docs[pair_group[lo:hi]]
    if bad.any():

        def pair_keys(rows: np.ndarray) -> list[tuple[int, str]]:
            strings = _strings_at(docs, offsets, rows).tolist()
            return list(zip(topic[rows].tolist(), map(str, strings), strict=True))

        pair_group, pair_rows = _split_groups(pair_group, pair_rows, bad, pair_keys)
        pair_docs = _strings_at(docs, offsets, pair_rows)

    doc_of_pair, doc_members = group_hashes(doc_hash[pair_rows])
    doc_names = pair_docs[doc_members]
    bad = pair_docs != doc_names[doc_of_pair]
    if bad.any():
        doc_of_pair, doc_members = _split_groups(
            doc_of_pair, doc_members, bad, lambda rows: [str(v) for v in pair_docs[rows].tolist()]
        )
        doc_names = pair_docs[doc_members]
    return pair_group, pair_rows, doc_of_pair, doc_names


def _split_groups(
    group: np.ndarray, members: np.ndarray, bad: np.ndarray, keys_of: Callable[[np.ndarray], list[Hashable]]
) -> tuple[np.ndarray, np.ndarray]:
    """Regroup exactly (by `keys_of(rows)`) the rows of every group holding a `bad` row; other groups keep theirs."""
    suspect = np.unique(group[bad])
    rows = np.flatnonzero(np.isin(group, suspect))
    ids: dict[Hashable, int] = {}
    new = np.array([ids.setdefault(key, len(ids)) for key in keys_of(rows)], dtype=np.int64)
    keep = np.ones(len(members), dtype=bool)
    keep[suspect] = False
    group = (np.cumsum(keep) - 1)[group]
    group[rows] = int(keep.sum()) + new
    first = np.unique(new, return_index=True)[1]
    return group, np.concatenate((members[keep], rows[first]))


def _strings_at(docs: list[np.ndarray], offsets: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The docnos at global row indices `rows` (rows of all runs concatenated), as one array."""
    run_of = np.searchsorted(offsets, rows, side="right") - 1
    parts = [
        (where, docs[r][rows[where] - offsets[r]])
        for r in range(len(docs))
        if len(where := np.flatnonzero(run_of == r))
    ]
    dtypes = [values.dtype for _, values in parts]
    unicode = all(dtype.kind == "U" for dtype in dtypes)
    out = np.empty(len(rows), dtype=max(dtypes, key=lambda dt: dt.itemsize) if unicode and dtypes else object)
    for where, values in parts:
        out[where] = values
    return out


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
    # (flat index into grades, grade) of every judged doc (grade >= 0), grouped by list in rank order, when the
    # builder has them at hand; else RankedLists finds them
    judged_cells: tuple[np.ndarray, np.ndarray] | None = None


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
        q_doc = lookup(np.asarray(qrels.docs), prepared.doc_index)
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
