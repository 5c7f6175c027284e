"""`PreparedRuns` built a block of runs at a time: each block prepared on its own, then joined into the one
`prepare_runs` makes of every run at once (the same topics, docs, pair ids and arrays), so a caller holds the parsed
runs of one block and the prepared pair ids of all, a few bytes per ranked row."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from app.evaluation.grading.prepared_runs import PreparedRuns

_DOC_BITS = np.int64(32)  # a held pair key is topic id << 32 | doc id, both first-seen ids of the blocks so far


@dataclass(frozen=True)
class _Held:
    """One block kept between its preparation and the join: its pairs as first-seen (topic, doc) keys."""

    names: list[str]
    topic_ids: np.ndarray  # int64 [n_topic of the block]: first-seen topic id of each of its topics
    pairs: np.ndarray  # int64 [n_run, n_topic, depth]: first-seen pair keys, -1 past the list's end
    lengths: np.ndarray  # int64 [n_run, n_topic]
    used: np.ndarray  # int64: the block's distinct pair keys, sorted


def join_prepared(blocks: Iterable[PreparedRuns], max_results: int) -> PreparedRuns:
    """The blocks' runs (consecutive blocks of one list of runs, each `prepare_runs` of its own, with `max_results`)
    as `prepare_runs` of all of them at once. Blocks are consumed as they come: of each only its pair keys stay."""
    topic_ids: dict[str, int] = {}
    doc_ids: dict[str, int] = {}
    held: list[_Held] = []
    for block in blocks:
        topics = np.array([topic_ids.setdefault(t, len(topic_ids)) for t in block.topics], dtype=np.int64)
        docs = np.array([doc_ids.setdefault(d, len(doc_ids)) for d in block.docs], dtype=np.int64)
        keys = (topics[block.pair_topic] << _DOC_BITS) | docs[block.pair_doc] if len(block.pair_topic) else docs[:0]
        present = block.pairs >= 0
        pairs = np.full(block.pairs.shape, -1, dtype=np.int64)
        pairs[present] = keys[block.pairs[present]]
        held.append(_Held(list(block.names), topics, pairs, block.lengths, keys))  # pair ids are in key order
    topic_names = sorted(topic_ids)
    doc_names = sorted(doc_ids)
    topic_rank = _ranks(topic_ids, topic_names)
    doc_rank = _ranks(doc_ids, doc_names)
    n_doc = max(len(doc_names), 1)
    used = np.unique(np.concatenate([h.used for h in held])) if held else np.zeros(0, np.int64)
    final_keys = topic_rank[used >> _DOC_BITS] * n_doc + doc_rank[used & ((np.int64(1) << _DOC_BITS) - 1)]
    by_key = np.argsort(final_keys, kind="stable")
    new_id = np.empty(len(used), dtype=np.int64)
    new_id[by_key] = np.arange(len(used))
    n_run = sum(len(h.names) for h in held)
    depth = max((int(h.pairs.shape[2]) for h in held), default=0)
    pairs = np.full((n_run, len(topic_names), depth), -1, dtype=np.int64)
    lengths = np.zeros((n_run, len(topic_names)), dtype=np.int64)
    names: list[str] = []
    held.reverse()
    while held:
        part = held.pop()  # each block's keys are dropped once copied
        rows = slice(len(names), len(names) + len(part.names))
        columns = topic_rank[part.topic_ids]
        present = part.pairs >= 0
        mapped = np.full(part.pairs.shape, -1, dtype=np.int64)
        mapped[present] = new_id[np.searchsorted(used, part.pairs[present])]
        pairs[rows, columns, : part.pairs.shape[2]] = mapped
        lengths[rows, columns] = part.lengths
        names += part.names
    final_keys = final_keys[by_key]
    return PreparedRuns(
        names=names,
        topics=topic_names,
        docs=doc_names,
        pairs=pairs,
        lengths=lengths,
        pair_topic=final_keys // n_doc,
        pair_doc=final_keys % n_doc,
        max_results=max_results,
    )


def _ranks(ids: dict[str, int], names: list[str]) -> np.ndarray:
    """int64 [len(ids)] each first-seen id's position in `names` (the names sorted)."""
    rank = np.empty(len(names), dtype=np.int64)
    rank[[ids[name] for name in names]] = np.arange(len(names))
    return rank
