"""Temporal IoU, ranked moment arrays and the IoU/relevance tensors that the moment measures reduce."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.evaluation.moments.parse import MomentGroundTruth, MomentRunTable

PAD = -2  # video code of a padding slot (rank beyond the end of a list)
UNKNOWN = -1  # video code of a moment whose video has no ground-truth segment


def temporal_iou(s1: np.ndarray, e1: np.ndarray, s2: np.ndarray, e2: np.ndarray) -> np.ndarray:
    """Elementwise (broadcasting) IoU of [s1, e1] and [s2, e2]: overlap / union, 0 where the union is 0."""
    s1, e1, s2, e2 = (np.asarray(a, dtype=np.float64) for a in (s1, e1, s2, e2))
    inter = np.clip(np.minimum(e1, e2) - np.maximum(s1, s2), 0.0, None)
    union = np.clip(e1 - s1, 0.0, None) + np.clip(e2 - s2, 0.0, None) - inter
    out = np.zeros(np.broadcast(inter, union).shape, dtype=np.float64)
    np.divide(inter, union, out=out, where=union > 0)
    return out


def _topic_key(topic: str) -> tuple[int, int, str]:
    """Sort key putting numeric topic ids in numeric order before the others."""
    return (0, int(topic), "") if topic.isdigit() else (1, 0, topic)


def _rank_within(groups: np.ndarray) -> np.ndarray:
    """0-based position of each element inside its run of equal values in a sorted group array."""
    n = len(groups)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.concatenate(([0], np.flatnonzero(groups[1:] != groups[:-1]) + 1))
    within: np.ndarray = np.arange(n, dtype=np.int64) - np.repeat(starts, np.diff(np.append(starts, n)))
    return within


def _lookup(sorted_names: np.ndarray, names: np.ndarray) -> np.ndarray:
    """Index of each name in a sorted vocabulary, -1 where absent."""
    if len(sorted_names) == 0:
        return np.full(len(names), -1, dtype=np.int64)
    pos = np.searchsorted(sorted_names, names)
    pos = np.minimum(pos, len(sorted_names) - 1)
    return np.where(sorted_names[pos] == names, pos, -1).astype(np.int64)


@dataclass(frozen=True)
class GroundTruthSegments:
    """Ground truth padded to [n_topic, G] arrays (G = most segments of any topic); video -1 marks padding."""

    topics: np.ndarray  # [n_topic] str, evaluation order (numeric ids numerically, then the others)
    video_names: np.ndarray  # [n_video] str, sorted; video codes index it
    video: np.ndarray  # [n_topic, G] int64
    start: np.ndarray  # [n_topic, G] float64
    end: np.ndarray  # [n_topic, G] float64

    @property
    def mask(self) -> np.ndarray:
        """[n_topic, G] True for real segments."""
        return self.video >= 0


def ground_truth_segments(ground_truth: MomentGroundTruth) -> GroundTruthSegments:
    """Pad the ground truth into per-topic segment matrices."""
    names = sorted(set(ground_truth.topics.tolist()), key=_topic_key)
    topics = np.array(names, dtype=str)
    order_of = np.argsort(topics, kind="stable")
    tidx = order_of[_lookup(topics[order_of], ground_truth.topics)]
    video_names = np.unique(ground_truth.videos)
    vidx = _lookup(video_names, ground_truth.videos)
    order = np.argsort(tidx, kind="stable")
    pos = _rank_within(tidx[order])
    width = int(pos.max()) + 1 if len(pos) else 0
    video = np.full((len(topics), width), -1, dtype=np.int64)
    start = np.zeros((len(topics), width))
    end = np.zeros((len(topics), width))
    rows = tidx[order]
    video[rows, pos] = vidx[order]
    start[rows, pos] = ground_truth.starts[order]
    end[rows, pos] = ground_truth.ends[order]
    return GroundTruthSegments(topics=topics, video_names=video_names, video=video, start=start, end=end)


@dataclass(frozen=True)
class RankedMoments:
    """The top `depth` moments of each run and ground-truth topic, as [n_run, n_topic, depth] arrays."""

    video: np.ndarray  # int64 code into GroundTruthSegments.video_names; UNKNOWN, or PAD past a list's end
    start: np.ndarray  # float64
    end: np.ndarray  # float64

    @property
    def valid(self) -> np.ndarray:
        """True where a moment was returned at that rank."""
        valid: np.ndarray = self.video != PAD
        return valid


def rank_moments(segments: GroundTruthSegments, runs: Sequence[MomentRunTable], depth: int) -> RankedMoments:
    """Order each run's moments per topic (score descending, ties by file order) and keep the top `depth`.

    Topics absent from the ground truth are ignored; ground-truth topics a run lacks are all padding.
    """
    shape = (len(runs), len(segments.topics), depth)
    video = np.full(shape, PAD, dtype=np.int64)
    start = np.zeros(shape)
    end = np.zeros(shape)
    order_of = np.argsort(segments.topics, kind="stable")
    sorted_topics = segments.topics[order_of]
    for i, run in enumerate(runs):
        found = _lookup(sorted_topics, run.topics)
        keep = found >= 0
        tidx = order_of[found[keep]]
        order = np.lexsort((run.lines[keep], -run.scores[keep], tidx))
        rank = _rank_within(tidx[order])
        top = rank < depth
        sel = np.flatnonzero(keep)[order[top]]
        t, r = tidx[order[top]], rank[top]
        video[i, t, r] = _lookup(segments.video_names, run.videos[sel])
        start[i, t, r] = run.starts[sel]
        end[i, t, r] = run.ends[sel]
    return RankedMoments(video=video, start=start, end=end)


@dataclass(frozen=True)
class MomentRelevance:
    """IoU of every ranked moment with every ground-truth segment of its topic."""

    iou: np.ndarray  # [n_run, n_topic, depth, G] float64; 0 for other videos, padding and padded segments
    gt_mask: np.ndarray  # [n_topic, G] bool, True for real segments

    @property
    def relevance(self) -> np.ndarray:
        """[n_run, n_topic, depth] relevance r: max IoU over the topic's segments (0 for padding)."""
        if self.iou.shape[-1] == 0:
            return np.zeros(self.iou.shape[:-1])
        relevance: np.ndarray = self.iou.max(axis=-1)
        return relevance


def moment_relevance(ranked: RankedMoments, segments: GroundTruthSegments) -> MomentRelevance:
    """IoU tensors of ranked moments against (possibly perturbed) ground-truth segments."""
    gv = segments.video[None, :, None, :]
    same = (ranked.video[..., None] == gv) & (gv >= 0)
    iou = temporal_iou(
        ranked.start[..., None], ranked.end[..., None], segments.start[None, :, None, :], segments.end[None, :, None, :]
    )
    return MomentRelevance(iou=np.where(same, iou, 0.0), gt_mask=segments.mask)
