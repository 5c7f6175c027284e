"""Moment pools: each run's top-k predicted segments per topic, segments of one video merged when their temporal IoU
reaches a threshold, in a seeded judging order; and the agreement of two assessors' marked segments (IoU of sets)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from app.evaluation.fast.distinct import distinct
from app.evaluation.moments.parse import MomentRunTable
from app.evaluation.moments.relevance import temporal_iou
from app.evaluation.pools.seeding import topic_rng

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


def _ranked_top(runs: Sequence[MomentRunTable], depth: int) -> dict[str, np.ndarray]:
    """Every run's top `depth` moments per topic (score descending, ties by file order): run, topic and video codes
    (into `topic_names`, `video_names`), start, end, 1-based rank."""
    kept: list[tuple[np.ndarray, ...]] = []
    for index, run in enumerate(runs):
        codes = np.unique(np.asarray(run.topics, dtype=str), return_inverse=True)[1].reshape(-1)
        order = np.lexsort((run.lines, -np.asarray(run.scores, dtype=np.float64), codes))
        group = codes[order]
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]]) if len(order) else order
        rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)])) + 1
        rows = order[rank <= depth]
        kept.append(
            (
                np.full(len(rows), index, dtype=np.int64),
                np.asarray(run.topics, dtype=str)[rows],
                np.asarray(run.videos, dtype=str)[rows],
                np.asarray(run.starts, dtype=np.float64)[rows],
                np.asarray(run.ends, dtype=np.float64)[rows],
                rank[rank <= depth].astype(np.int64),
            )
        )
    if kept:
        run_index, topics, videos, begins, ends, ranks = (np.concatenate(c) for c in zip(*kept, strict=True))
    else:
        run_index, ranks = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        topics = videos = np.zeros(0, dtype=str)
        begins = ends = np.zeros(0)
    topic_names, topic_code = np.unique(topics, return_inverse=True)
    video_names, video_code = np.unique(videos, return_inverse=True)
    return {
        "run": run_index,
        "topic": topic_code.reshape(-1).astype(np.int64),
        "video": video_code.reshape(-1).astype(np.int64),
        "start": begins,
        "end": ends,
        "rank": ranks,
        "topic_names": topic_names,
        "video_names": video_names,
    }


PAIR_CHUNK = 2_000_000  # candidate pairs examined at once, to bound memory on heavily overlapping pools


def _merge_groups(keys: np.ndarray, starts: np.ndarray, ends: np.ndarray, iou: float) -> np.ndarray:
    """Cluster label of each segment: segments with the same key linked when their IoU >= `iou`, clusters being the
    connected components of those links (so the result does not depend on the order of the rows).

    Only overlapping pairs can reach a positive threshold: with the rows sorted by (key, start), row i's candidates are
    the rows after it up to the first that starts at or after its end, found for all rows at once by a binary search
    on exact integer ranks of the times."""
    n = len(keys)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    code = np.unique(keys, return_inverse=True)[1].reshape(-1).astype(np.int64)
    order = np.lexsort((starts, code))
    c, s, e = code[order], starts[order], ends[order]
    times = np.unique(np.concatenate([s, e]))
    width = len(times) + 1
    key = c * width + np.searchsorted(times, s)
    limit = np.searchsorted(key, c * width + np.searchsorted(times, e), side="left")
    counts = np.maximum(limit - np.arange(n) - 1, 0)
    total = np.cumsum(counts)
    rows, cols = [], []
    first = 0
    while first < n:
        done = int(total[first - 1]) if first else 0
        last = min(max(int(np.searchsorted(total, done + PAIR_CHUNK, side="right")), first + 1), n)
        count = counts[first:last]
        i = np.repeat(np.arange(first, last), count)
        j = i + 1 + np.arange(len(i)) - np.repeat(np.cumsum(count) - count, count)
        linked = temporal_iou(s[i], e[i], s[j], e[j]) >= iou
        rows.append(order[i[linked]])
        cols.append(order[j[linked]])
        first = last
    r, k = np.concatenate(rows), np.concatenate(cols)
    graph = coo_matrix((np.ones(len(r)), (r, k)), shape=(n, n))
    return connected_components(graph, directed=False)[1].astype(np.int64)


def build_moment_pool(
    runs: Sequence[MomentRunTable], *, depth: int, iou: float = DEFAULT_IOU, seed: int = 0
) -> MomentPoolTable:
    """The union of each run's top `depth` moments per topic; moments of one topic and video whose temporal IoU is
    at least `iou` are merged (transitively) into their span; each topic's segments shuffled with `seed`."""
    if depth < 1:
        raise ValueError(f"depth must be >= 1, got {depth}")
    if not 0.0 < iou <= 1.0:
        raise ValueError(f"the IoU threshold must be in (0, 1], got {iou}")
    top = _ranked_top(runs, depth)
    run_index, starts, ends, ranks = top["run"], top["start"], top["end"], top["rank"]
    label = _merge_groups(top["topic"] * (len(top["video_names"]) + 1) + top["video"], starts, ends, iou)
    n = int(label.max()) + 1 if len(label) else 0
    first = np.full(n, -1, dtype=np.int64)
    first[label[::-1]] = np.arange(len(label))[::-1]
    seg_start = np.full(n, np.inf)
    seg_end = np.full(n, -np.inf)
    best = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(seg_start, label, starts)
    np.maximum.at(seg_end, label, ends)
    np.minimum.at(best, label, ranks)
    pairs = distinct(label * max(len(runs), 1) + run_index)
    n_runs = np.bincount(pairs // max(len(runs), 1), minlength=n).astype(np.int64)
    topic_code, video_code = top["topic"][first], top["video"][first]  # codes sort as the names do
    seg_topics, seg_videos = top["topic_names"][topic_code], top["video_names"][video_code]
    judging_order = np.zeros(n, dtype=np.int64)
    # a fixed order inside each topic before shuffling, so the result depends only on the segments and the seed
    canonical = np.lexsort((seg_end, seg_start, video_code, topic_code))
    sorted_topics = topic_code[canonical]
    bounds = np.flatnonzero(np.r_[True, sorted_topics[1:] != sorted_topics[:-1], True]) if n else np.array([0])
    for lo, hi in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        topic = str(top["topic_names"][sorted_topics[lo]])
        judging_order[canonical[lo:hi]] = topic_rng(seed, topic).permutation(hi - lo)
    order = np.lexsort((judging_order, topic_code))
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


def covered_by(segment_sets: Sequence[Sequence[Sequence[float]]], at_least: int) -> tuple[np.ndarray, np.ndarray]:
    """The spans covered by the segments of at least `at_least` of the sets (each set's own overlaps count once):
    1 gives their union, len(segment_sets) the part all agree on; merged and sorted by start."""
    if at_least < 1:
        raise ValueError(f"at_least must be >= 1, got {at_least}")
    merged = [merge_intervals(*np.asarray(s, dtype=np.float64).reshape(-1, 2).T) for s in segment_sets if len(s)]
    if len(merged) < at_least:
        return np.array([], dtype=np.float64), np.array([], dtype=np.float64)
    points = np.concatenate([np.concatenate([s, e]) for s, e in merged])
    delta = np.concatenate([np.r_[np.ones(len(s)), -np.ones(len(e))] for s, e in merged])
    order = np.lexsort((delta, points))  # at a shared point ends come first: touching segments do not overlap
    points, count = points[order], np.cumsum(delta[order])
    inside = (count[:-1] >= at_least) & (points[1:] > points[:-1])  # covered on [points[i], points[i + 1])
    return merge_intervals(points[:-1][inside], points[1:][inside])


def segment_set_iou(a_starts: np.ndarray, a_ends: np.ndarray, b_starts: np.ndarray, b_ends: np.ndarray) -> float:
    """Temporal IoU of two sets of segments of one video: covered by both / covered by either; 1 when both are
    empty (both said none relevant), 0 when only one is."""
    len_a = union_length(a_starts, a_ends)
    len_b = union_length(b_starts, b_ends)
    if len_a == 0.0 and len_b == 0.0:
        return 1.0
    both = union_length(np.r_[a_starts, b_starts], np.r_[a_ends, b_ends])
    return (len_a + len_b - both) / both
