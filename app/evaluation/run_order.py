"""A run's rows in trec_eval's ranking order (per topic: score desc, then docno desc), worked out once per table."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.evaluation.records import RunTable


@dataclass(frozen=True)
class RunOrder:
    """The rows of one run grouped by topic and ranked as trec_eval ranks them (before any max_results cut)."""

    rows: np.ndarray | None  # int64 row indices in ranked order; None when the file is in that order already
    topics: list[str]  # the topic of each segment, each topic once
    bounds: np.ndarray  # int64 [len(topics) + 1]: segment i is ranked rows bounds[i]:bounds[i + 1]

    def ranked(self, values: np.ndarray) -> np.ndarray:
        """A per-row array of the run in ranked order."""
        return values if self.rows is None else values[self.rows]


def run_order(run: RunTable) -> RunOrder:
    """The run's ranking order (cached on the table, whose arrays are read-only, so it cannot go stale)."""
    return run.cached("order", _compute_order)


def _compute_order(run: RunTable) -> RunOrder:
    """Order the rows: topics kept together in first-seen order, then score desc, then docno desc."""
    topics, docs = np.asarray(run.topics), np.asarray(run.docs)
    scores = np.asarray(run.scores, dtype=np.float64)
    n = len(topics)
    if n == 0:
        return RunOrder(None, [], np.zeros(1, np.int64))
    starts = np.concatenate(([0], np.flatnonzero(_changes(topics)) + 1))
    names = [str(name) for name in topics[starts].tolist()]
    rows: np.ndarray | None = None
    same = np.ones(n - 1, dtype=bool)
    same[starts[1:] - 1] = False  # same[i]: rows i and i + 1 are in one segment
    if len(set(names)) < len(names) or np.any(same & (scores[1:] > scores[:-1])):
        first_seen: dict[str, int] = {}
        segment_topic = np.array([first_seen.setdefault(name, len(first_seen)) for name in names], dtype=np.int64)
        topic_id = np.repeat(segment_topic, np.diff(np.append(starts, n)))
        rows = np.lexsort((-scores, topic_id))  # stable: tied scores keep file order, fixed below
        names = list(first_seen)
        topic_id, scores = topic_id[rows], scores[rows]
        starts = np.concatenate(([0], np.flatnonzero(topic_id[1:] != topic_id[:-1]) + 1))
        same = topic_id[1:] == topic_id[:-1]
    rows = _docno_ties_descending(rows, docs, scores, same)
    return RunOrder(rows, names, np.append(starts, n).astype(np.int64))


def _changes(values: np.ndarray) -> np.ndarray:
    """bool [n - 1]: value i + 1 differs from value i (unicode arrays compared as code-point integers: faster)."""
    if values.dtype.kind != "U" or values.dtype.itemsize == 0:
        return values[1:] != values[:-1]
    values = np.ascontiguousarray(values)
    if values.dtype.itemsize in (4, 8):  # one or two code points: a single integer each
        codes = values.view(np.uint32 if values.dtype.itemsize == 4 else np.uint64)
        return codes[1:] != codes[:-1]
    codes = values.view(np.uint32).reshape(len(values), -1)
    return np.any(codes[1:] != codes[:-1], axis=1)


def _docno_ties_descending(
    rows: np.ndarray | None, docs: np.ndarray, scores: np.ndarray, same: np.ndarray
) -> np.ndarray | None:
    """`rows` with every block of equal scores (in one segment) sorted by docno desc; scores are in `rows` order.

    Most blocks are two rows: those are swapped where out of order; only longer blocks are sorted.
    """
    pairs = np.flatnonzero(scores[1:] == scores[:-1])  # row i ties with row i + 1 ...
    pairs = pairs[same[pairs]]  # ... in the same segment
    if len(pairs) == 0:
        return rows
    rising = docs[pairs + 1] > docs[pairs] if rows is None else docs[rows[pairs + 1]] > docs[rows[pairs]]
    if not rising.any():
        return rows
    at = rows if rows is not None else np.arange(len(docs), dtype=np.int64)
    out = at.copy()
    # blocks: runs of consecutive tie pairs; a block of k pairs holds k + 1 rows
    starts = np.flatnonzero(np.concatenate(([True], pairs[1:] != pairs[:-1] + 1)))
    n_pairs = np.diff(np.append(starts, len(pairs)))
    single = n_pairs == 1
    swap = pairs[starts[single]][rising[starts[single]]]
    out[swap], out[swap + 1] = at[swap + 1], at[swap]
    if not single.all():
        first = pairs[starts[~single]]
        size = n_pairs[~single] + 1
        members = np.repeat(first, size) + np.arange(int(size.sum())) - np.repeat(np.cumsum(size) - size, size)
        block = np.repeat(np.arange(len(first)), size)
        _, rank = np.unique(docs[at[members]], return_inverse=True)
        out[members] = at[members[np.lexsort((-rank.reshape(-1), block))]]
    return out
