"""A run's rows in trec_eval's ranking order (per topic: score desc, then docno desc), worked out once per table."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from app.evaluation.ordering import segment_changes
from app.evaluation.records import RunTable


@dataclass(frozen=True)
class RunOrder:
    """The rows of one run grouped by topic and ranked as trec_eval ranks them (before any max_results cut).

    The order is `sorted` (None: the file order) with `moved` rows put at `places`: a file already in score order
    only swaps rows of tied scores, so its order is a few changes, not an array over all rows.
    """

    sorted: np.ndarray | None  # int64 row indices after a sort; None when the file's rows needed none
    places: np.ndarray  # int64 ranked positions whose row is `moved` instead (ties put in docno order)
    moved: np.ndarray  # int64 row indices
    topics: list[str]  # the topic of each segment, each topic once
    bounds: np.ndarray  # int64 [len(topics) + 1]: segment i is ranked rows bounds[i]:bounds[i + 1]
    contiguous: bool = True  # the file lists each topic's rows together: segment i holds file rows bounds[i]:... too

    @property
    def in_file_order(self) -> bool:
        """Whether the ranked order is the file's order."""
        return self.sorted is None and len(self.places) == 0

    @cached_property
    def rows(self) -> np.ndarray | None:
        """int64 row indices in ranked order; None when the file is in that order already."""
        if self.in_file_order:
            return None
        rows = np.arange(int(self.bounds[-1]), dtype=np.int64) if self.sorted is None else self.sorted.copy()
        rows[self.places] = self.moved
        return rows

    def ranked(self, values: np.ndarray) -> np.ndarray:
        """A per-row array of the run in ranked order."""
        return values if self.rows is None else values[self.rows]

    def positions_of(self, rows: np.ndarray) -> np.ndarray:
        """int64: the ranked position of each of `rows` (file row indices)."""
        ranked: np.ndarray = np.take(self.positions, rows).astype(np.int64)
        return ranked

    @cached_property
    def positions(self) -> np.ndarray:
        """int [n]: the ranked position of each row in file order (the inverse of `rows`; int32 below 2**31 rows)."""
        n = int(self.bounds[-1])
        dtype = np.int32 if n < 2**31 else np.int64
        out = np.arange(n, dtype=dtype)
        if self.sorted is not None:
            out[self.sorted] = np.arange(n, dtype=dtype)
        out[self.moved] = self.places  # the moved rows are those the places held: the rest keep their position
        return out


def run_order(run: RunTable) -> RunOrder:
    """The run's ranking order (cached on the table, whose arrays are read-only, so it cannot go stale)."""
    return run.cached("order", _compute_order)


def _compute_order(run: RunTable) -> RunOrder:
    """Order the rows (`ordering.ranked_order`): topics kept together in first-seen order, each ranked."""
    topics = np.asarray(run.topics)
    n = len(topics)
    if n == 0:
        none = np.zeros(0, np.int64)
        return RunOrder(None, none, none, [], np.zeros(1, np.int64))
    changes = _changes(topics)
    starts = np.concatenate(([0], np.flatnonzero(changes) + 1))
    first_seen: dict[str, int] = {}
    segment_topic = [first_seen.setdefault(str(name), len(first_seen)) for name in topics[starts].tolist()]
    topic_of = np.array(segment_topic, dtype=np.int64)  # each segment's topic id
    rows, places, moved = segment_changes(~changes, topic_of, run.scores, np.asarray(run.docs))
    contiguous = len(starts) == len(first_seen)  # one segment per topic: ranking moves rows within segments only
    if rows is not None and not contiguous:
        topic_id = np.repeat(topic_of, np.diff(np.append(starts, n)))[rows]
        starts = np.concatenate(([0], np.flatnonzero(topic_id[1:] != topic_id[:-1]) + 1))
        topic_of = topic_id[starts]
    names = list(first_seen)
    bounds = np.append(starts, n).astype(np.int64)
    return RunOrder(rows, places, moved, [names[i] for i in topic_of.tolist()], bounds, contiguous)


def _changes(values: np.ndarray) -> np.ndarray:
    """bool [n - 1]: value i + 1 differs from value i (unicode arrays compared as code-point integers: faster)."""
    changes: np.ndarray
    if values.dtype.kind != "U" or values.dtype.itemsize == 0:
        changes = values[1:] != values[:-1]
        return changes
    values = np.ascontiguousarray(values)
    if values.dtype.itemsize in (4, 8):  # one or two code points: a single integer each
        codes = values.view(np.uint32 if values.dtype.itemsize == 4 else np.uint64)
        changes = codes[1:] != codes[:-1]
        return changes
    codes = values.view(np.uint32).reshape(len(values), -1)
    changes = np.any(codes[1:] != codes[:-1], axis=1)
    return changes
