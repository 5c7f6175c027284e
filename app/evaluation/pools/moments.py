"""Moment pools: each run's top-k predicted segments per topic, segments of one video merged when their temporal IoU
reaches a threshold, in a seeded judging order; and the agreement of two assessors' marked segments (IoU of sets)."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from app.evaluation.moments.parse import MomentRunTable
from app.evaluation.moments.relevance import temporal_iou

DEFAULT_IOU = 0.5


@dataclass(frozen=True)
class MomentPoolTable:
    """A built moment pool: one proposed segment per row, sorted by topic then judging order."""

    topics: np.ndarray  # str
    videos: np.ndarray  # str
    starts: np.ndarray  # float64: the merged segment's start (earliest start of its members)
    ends: np.ndarray  # float64: the merged segment's end (latest end of its members)
    best_ranks: np.ndarray  # int64: best 1-based rank of a member over the pooled runs
    n_runs: np.ndarray  # int64: how many pooled runs returned a member within the depth
    judging_order: np.ndarray  # int64: 0-based position in the topic's shuffled judging queue

    def __len__(self) -> int:
        """Number of proposed segments."""
        return len(self.topics)


def _ranked_top(runs: Sequence[MomentRunTable], depth: int) -> tuple[np.ndarray, ...]:
    """Every run's top `depth` moments per topic (score descending, ties by file order): run, topic, video, start,
    end, rank."""
    parts: list[tuple[np.ndarray, ...]] = []
    for index, run in enumerate(runs):
        topics = np.asarray(run.topics, dtype=str)
        order = np.lexsort((run.lines, -np.asarray(run.scores, dtype=np.float64), topics))
        sorted_topics = topics[order]
        starts = np.flatnonzero(np.r_[True, sorted_topics[1:] != sorted_topics[:-1]]) if len(order) else order
        rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)])) + 1
        keep = order[rank <= depth]
        parts.append(
            (
                np.full(len(keep), index, dtype=np.int64),
                topics[keep],
                np.asarray(run.videos, dtype=str)[keep],
                np.asarray(run.starts, dtype=np.float64)[keep],
                np.asarray(run.ends, dtype=np.float64)[keep],
                rank[rank <= depth].astype(np.int64),
            )
        )
    if not parts:
        empty = np.array([], dtype=str)
        return np.array([], dtype=np.int64), empty, empty, np.array([]), np.array([]), np.array([], dtype=np.int64)
    return tuple(np.concatenate(column) for column in zip(*parts, strict=True))


def _merge_groups(keys: np.ndarray, starts: np.ndarray, ends: np.ndarray, iou: float) -> np.ndarray:
    """Cluster label of each segment: segments with the same key linked when their IoU >= `iou`, clusters being the
    connected components of those links (so the result does not depend on the order of the rows)."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    bounds = np.flatnonzero(np.r_[True, keys[order][1:] != keys[order][:-1], True])
    rows, cols = [], []
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        if hi - lo < 2:
            continue
        members = order[lo:hi]
        i, j = np.triu_indices(len(members), k=1)
        linked = temporal_iou(starts[members[i]], ends[members[i]], starts[members[j]], ends[members[j]]) >= iou
        rows.append(members[i[linked]])
        cols.append(members[j[linked]])
    r = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    c = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    graph = coo_matrix((np.ones(len(r)), (r, c)), shape=(n, n))
    return connected_components(graph, directed=False)[1].astype(np.int64)


def _topic_rng(seed: int, topic: str) -> np.random.Generator:
    """A generator for one topic that does not depend on which other topics exist."""
    return np.random.default_rng([seed, zlib.crc32(topic.encode())])


def build_moment_pool(
    runs: Sequence[MomentRunTable], *, depth: int, iou: float = DEFAULT_IOU, seed: int = 0
) -> MomentPoolTable:
    """The union of each run's top `depth` moments per topic; moments of one topic and video whose temporal IoU is
    at least `iou` are merged (transitively) into their span; each topic's segments shuffled with `seed`."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    if not 0.0 < iou <= 1.0:
        raise ValueError(f"the IoU threshold must be in (0, 1], got {iou}")
    run_index, topics, videos, starts, ends, ranks = _ranked_top(runs, depth)
    keys = np.char.add(np.char.add(topics, "\x1f"), videos) if len(topics) else topics
    label = _merge_groups(keys, starts, ends, iou)
    n = int(label.max()) + 1 if len(label) else 0
    first = np.full(n, -1, dtype=np.int64)
    first[label[::-1]] = np.arange(len(label))[::-1]
    seg_start = np.full(n, np.inf)
    seg_end = np.full(n, -np.inf)
    best = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(seg_start, label, starts)
    np.maximum.at(seg_end, label, ends)
    np.minimum.at(best, label, ranks)
    pairs = np.unique(np.stack([label, run_index]), axis=1) if len(label) else np.zeros((2, 0), dtype=np.int64)
    n_runs = np.bincount(pairs[0], minlength=n).astype(np.int64)
    seg_topics, seg_videos = topics[first], videos[first]
    judging_order = np.zeros(n, dtype=np.int64)
    # a fixed order inside each topic before shuffling, so the result depends only on the segments and the seed
    canonical = np.lexsort((seg_end, seg_start, seg_videos, seg_topics))
    for topic in np.unique(seg_topics).tolist():
        members = canonical[seg_topics[canonical] == topic]
        judging_order[members] = _topic_rng(seed, topic).permutation(len(members))
    order = np.lexsort((judging_order, seg_topics))
    return MomentPoolTable(
        topics=seg_topics[order],
        videos=seg_videos[order],
        starts=seg_start[order],
        ends=seg_end[order],
        best_ranks=best[order],
        n_runs=n_runs[order],
        judging_order=judging_order[order],
    )


def union_length(starts: np.ndarray, ends: np.ndarray) -> float:
    """Total length covered by a set of intervals (overlaps counted once)."""
    if len(starts) == 0:
        return 0.0
    order = np.argsort(starts, kind="stable")
    s, e = np.asarray(starts, dtype=np.float64)[order], np.asarray(ends, dtype=np.float64)[order]
    reach = np.maximum.accumulate(e)
    # a new covered block starts where an interval begins after everything before it has ended
    new_block = np.r_[True, s[1:] > reach[:-1]]
    block = np.cumsum(new_block) - 1
    block_start = s[new_block]
    block_end = np.zeros(int(block[-1]) + 1)
    np.maximum.at(block_end, block, e)
    return float(np.sum(block_end - block_start))


def merge_intervals(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Overlapping or touching intervals merged into their spans, sorted by start."""
    if len(starts) == 0:
        return np.array([], dtype=np.float64), np.array([], dtype=np.float64)
    order = np.argsort(starts, kind="stable")
    s, e = np.asarray(starts, dtype=np.float64)[order], np.asarray(ends, dtype=np.float64)[order]
    reach = np.maximum.accumulate(e)
    new_block = np.r_[True, s[1:] > reach[:-1]]
    block = np.cumsum(new_block) - 1
    block_end = np.zeros(int(block[-1]) + 1)
    np.maximum.at(block_end, block, e)
    return s[new_block], block_end


def segment_set_iou(a_starts: np.ndarray, a_ends: np.ndarray, b_starts: np.ndarray, b_ends: np.ndarray) -> float:
    """Temporal IoU of two sets of segments of one video: covered by both / covered by either; 1 when both are
    empty (both said none relevant), 0 when only one is."""
    len_a = union_length(a_starts, a_ends)
    len_b = union_length(b_starts, b_ends)
    if len_a == 0.0 and len_b == 0.0:
        return 1.0
    both = union_length(np.r_[a_starts, b_starts], np.r_[a_ends, b_ends])
    return (len_a + len_b - both) / both
