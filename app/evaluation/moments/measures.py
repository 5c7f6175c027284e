"""Moment retrieval measures: names, and their reductions of relevance/IoU tensors to per-topic scores.

Relevance r(j) of the moment at rank j is its max temporal IoU over the topic's ground-truth segments; a list
shorter than the cut-off K is padded with r = 0. Every reduction maps [..., depth] (or [..., depth, G]) arrays
to [...] per-topic scores, so any number of runs and topics is scored at once.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.evaluation.errors import MeasureError
from app.evaluation.moments.relevance import MomentRelevance

MAP_DEPTH = 10  # predictions per topic used by mAP (Moment-DETR's max_pred_windows)
MAP_STEP = 0.05  # step of an mAP@lo:hi threshold range


@dataclass(frozen=True)
class MomentMeasure:
    """A parsed moment measure: family, cut-off and IoU threshold(s)."""

    name: str
    family: str  # "AxIoU", "R", "AP", "DCG" or "mAP"
    k: int  # cut-off; for mAP the number of predictions used
    theta: float = 0.0
    strict: bool = False  # r > theta instead of r >= theta
    thresholds: tuple[float, ...] = ()  # mAP only


_NUM = r"(\d+(?:\.\d*)?|\.\d+)"
_CUTOFF = re.compile(r"(AxIoU|DCG)@(\d+)")
_THRESHOLD = re.compile(rf"(R|AP)@(\d+),(>?){_NUM}")
_MAP = re.compile(rf"mAP(?:@{_NUM}(?::{_NUM})?)?")


def _cutoff(text: str, name: str) -> int:
    """A positive integer cut-off."""
    k = int(text)
    if k < 1:
        raise MeasureError(f"{name}: the cut-off must be at least 1")
    return k


def _map_thresholds(lo: str | None, hi: str | None, name: str) -> tuple[float, ...]:
    """Thresholds of mAP: 0.5:0.95 by default, one value, or lo:hi in steps of 0.05."""
    low = float(lo) if lo is not None else 0.5
    high = float(hi) if hi is not None else (low if lo is not None else 0.95)
    if not (0 < low <= high <= 1):
        raise MeasureError(f"{name}: thresholds must satisfy 0 < low <= high <= 1")
    steps = (high - low) / MAP_STEP
    if abs(steps - round(steps)) > 1e-9:
        raise MeasureError(f"{name}: the range {low:g}:{high:g} is not a whole number of {MAP_STEP:g} steps")
    return tuple(round(low + i * MAP_STEP, 10) for i in range(int(round(steps)) + 1))


def parse_moment_measure(name: str) -> MomentMeasure:
    """Parse a measure name such as `AxIoU@10`, `R@5,0.5`, `R@5,>0.5`, `AP@10,0.5`, `DCG@10`, `mAP@0.5:0.95`."""
    text = name.strip()
    if m := _CUTOFF.fullmatch(text):
        return MomentMeasure(name=text, family=m[1], k=_cutoff(m[2], text))
    if m := _THRESHOLD.fullmatch(text):
        k, strict, theta = _cutoff(m[2], text), m[3] == ">", float(m[4])
        if strict and not 0 <= theta < 1:
            raise MeasureError(f"{text}: a strict threshold must be in [0, 1)")
        if not strict and not 0 < theta <= 1:
            raise MeasureError(f"{text}: a threshold must be in (0, 1]")
        return MomentMeasure(name=text, family=m[1], k=k, theta=theta, strict=strict)
    if m := _MAP.fullmatch(text):
        return MomentMeasure(name=text, family="mAP", k=MAP_DEPTH, thresholds=_map_thresholds(m[1], m[2], text))
    raise MeasureError(
        f"unknown moment measure {name!r}: expected AxIoU@K, R@K,theta, R@K,>theta, AP@K,theta, AP@K,>theta, "
        "DCG@K, mAP, mAP@theta or mAP@lo:hi"
    )


def _top(r: np.ndarray, k: int) -> np.ndarray:
    """The first k ranks of r along the last axis, padded with 0."""
    if r.shape[-1] >= k:
        return r[..., :k]
    pad = np.zeros(r.shape[:-1] + (k - r.shape[-1],))
    return np.concatenate([r, pad], axis=-1)


def _hits(r: np.ndarray, theta: float, strict: bool) -> np.ndarray:
    """1{r > theta} if strict else 1{r >= theta}."""
    return r > theta if strict else r >= theta


def axiou(r: np.ndarray, k: int) -> np.ndarray:
    """AxIoU@K = (1/K) sum_{k=1..K} max_{j<=k} r(j) (AxIoU paper, Eq. 5 / supplementary Eq. 10)."""
    value: np.ndarray = np.maximum.accumulate(_top(r, k), axis=-1).mean(axis=-1)
    return value


def recall_at(r: np.ndarray, k: int, theta: float, strict: bool = False) -> np.ndarray:
    """R@K,theta = 1 if some r(j), j <= K, has r >= theta (r > theta when strict, as supplementary Eq. 1)."""
    return np.asarray(_hits(_top(r, k), theta, strict).any(axis=-1), dtype=np.float64)


def ap_at(r: np.ndarray, k: int, theta: float, strict: bool = False) -> np.ndarray:
    """AP@K,theta = (1/K) sum_{k=1..K} (1/k) sum_{j<=k} 1{r(j) >= theta} (supplementary A.3, Eq. 4).

    The paper writes r > theta; that is the strict name `AP@K,>theta`, as for R@K,theta.
    """
    hits = _hits(_top(r, k), theta, strict).astype(np.float64)
    precision = np.cumsum(hits, axis=-1) / np.arange(1, k + 1)
    value: np.ndarray = precision.mean(axis=-1)
    return value


def dcg_at(r: np.ndarray, k: int) -> np.ndarray:
    """DCG@K = sum_{k=1..K} g(r(k)) / d(k) with g(r) = r, d(k) = log2(k + 1) (supplementary A.4, Eq. 7)."""
    value: np.ndarray = (_top(r, k) / np.log2(np.arange(2, k + 2))).sum(axis=-1)
    return value


def detection_map(
    iou: np.ndarray, gt_mask: np.ndarray, thresholds: Sequence[float], depth: int = MAP_DEPTH
) -> np.ndarray:
    """Moment-DETR / QVHighlights MR-mAP per topic: detection AP at each IoU threshold, averaged over thresholds.

    iou is [..., D, G] (ranked predictions x ground-truth segments, rank order = score order), gt_mask [..., G].
    Only the first `depth` predictions count. At threshold t, predictions are taken in rank order; each one
    matches the unmatched segment with the highest IoU among those with IoU >= t (lowest index on ties), which
    becomes matched (true positive); otherwise it is a false positive. With precision p_i = TP_i / i at rank i,
    npos = number of segments, AP_t = (1/npos) sum_{i: TP at i} max_{j >= i} p_j (the all-point interpolated
    VOC / ActivityNet AP). The result is mean_t AP_t; mean over topics is left to the caller.
    Differences from Moment-DETR's standalone_eval: values are in [0, 1] (not percent, not rounded); the list is
    sorted by score before the cut at `depth` (Moment-DETR cuts the submitted order, then sorts); a topic without
    predictions scores 0 instead of being required to be present.
    """
    thr = np.asarray(thresholds, dtype=np.float64)
    if thr.size == 0 or np.any(thr <= 0):
        raise MeasureError("mAP thresholds must be positive")
    depth = min(depth, iou.shape[-2])  # trailing padding would only add false positives: AP unchanged
    iou = iou[..., :depth, :]
    lead = iou.shape[:-2]
    n_gt = iou.shape[-1]
    mask = np.broadcast_to(gt_mask, lead + (n_gt,))
    free = np.broadcast_to(mask[..., None, :], lead + (len(thr), n_gt)).copy()  # [..., T, G]
    tp = np.zeros(lead + (len(thr), depth), dtype=bool)
    for i in range(depth):
        row = iou[..., None, i, :]  # [..., 1, G]
        if n_gt == 0:
            break
        cand = np.where(free & (row >= thr[:, None]), row, -1.0)
        best = cand.argmax(axis=-1)[..., None]
        hit = np.take_along_axis(cand, best, axis=-1) >= 0
        tp[..., i] = hit[..., 0]
        np.put_along_axis(free, best, np.take_along_axis(free, best, axis=-1) & ~hit, axis=-1)
    precision = np.cumsum(tp, axis=-1) / np.arange(1, depth + 1)
    envelope = np.flip(np.maximum.accumulate(np.flip(precision, axis=-1), axis=-1), axis=-1)
    npos = mask.sum(axis=-1)[..., None]
    ap = np.divide((tp * envelope).sum(axis=-1), npos, out=np.zeros(lead + (len(thr),)), where=npos > 0)
    value: np.ndarray = ap.mean(axis=-1)
    return value


def moment_scores(
    relevance: MomentRelevance | np.ndarray, measures: Sequence[str | MomentMeasure]
) -> dict[str, np.ndarray]:
    """Per-topic scores {measure name: [n_run, n_topic] (leading shape of the input)} for many runs at once.

    `relevance` is a MomentRelevance, or a bare relevance array r [..., depth] for measures other than mAP.
    """
    specs = [m if isinstance(m, MomentMeasure) else parse_moment_measure(m) for m in measures]
    r = relevance.relevance if isinstance(relevance, MomentRelevance) else np.asarray(relevance, np.float64)
    out: dict[str, np.ndarray] = {}
    for spec in specs:
        if spec.family == "AxIoU":
            out[spec.name] = axiou(r, spec.k)
        elif spec.family == "R":
            out[spec.name] = recall_at(r, spec.k, spec.theta, spec.strict)
        elif spec.family == "AP":
            out[spec.name] = ap_at(r, spec.k, spec.theta, spec.strict)
        elif spec.family == "DCG":
            out[spec.name] = dcg_at(r, spec.k)
        else:
            if not isinstance(relevance, MomentRelevance):
                raise MeasureError(f"{spec.name} needs the IoU with every segment: pass a MomentRelevance")
            out[spec.name] = detection_map(relevance.iou, relevance.gt_mask, spec.thresholds, spec.k)
    return out
