"""Plain reference implementations the vectorised core is tested against (dicts, lists and one lexsort).

They were the core's earlier paths; they stay here, slow and obvious, to state what the fast paths must give.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.evaluation.errors import decode_utf8
from app.evaluation.formats.trec_files import (
    _as_bytes,
    _fast_columns,
    _finite_floats,
    _has_duplicates,
    _ints,
    _parse_trec_run_slowly,
    _str_array,
)
from app.evaluation.grading.prepared_runs import PreparedRuns
from app.evaluation.records import RunTable


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


def _parse_trec_run_from_lists(data: bytes | str, *, max_errors: int = 50, source: str = "run") -> RunTable:
    """The list-based run parser: Python lists of tokens, then the line-by-line pass that names every problem."""
    text = decode_utf8(data, source=source)
    raw = _as_bytes(data)
    fast = _fast_columns(text, raw, 6)
    if fast is not None:
        (topics, _, docs, ranks_col, scores_col, tags), lines = fast
        ranks, scores = _ints(ranks_col), _finite_floats(scores_col)
        if ranks is not None and scores is not None and len(set(tags)) == 1 and not _has_duplicates(topics, docs):
            return RunTable(tags[0], _str_array(topics), _str_array(docs), ranks, scores, lines)
    return _parse_trec_run_slowly(text, max_errors=max_errors, source=source)


def prepare_runs_with_dicts(
    runs: Sequence[RunTable], max_results: int = 1000, names: Sequence[str] | None = None
) -> PreparedRuns:
    """`prepare_runs` by Python dicts and one lexsort: the reference the vectorised path is tested against."""
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
