"""The depth a pool was built with, read from imported qrels: how deep the judgements cover the pooled runs.

A depth-k pool judges every document in the top k of every pooled run, so the share of judged entries at rank d
(over the pooled runs' ranked lists of the qrels' topics) is 1 for d <= k and falls after it. The inferred depth is
the deepest d such that every rank 1..d is judged in at least `COVERAGE` (99%) of those lists: a few gaps (a
document dropped from the collection, a judging slip) do not hide the depth. On TREC-COVID round 1 the share is 1.0
for ranks 1-6, 0.997 at rank 7 and 0.657 at rank 8: depth 7. Stratified qrels count their `-1` lines (pooled, not
sampled) as judged, since they mark pool membership.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from app.evaluation.analyses.lines import LineIndex

COVERAGE = 0.99


@dataclass(frozen=True)
class DepthEstimate:
    """The inferred pool depth and the judged share per rank it was read from."""

    depth: int
    share: np.ndarray  # float64 [max depth]: judged share of the pooled runs' entries at rank 1, 2, ...

    def to_dict(self) -> dict:
        """Plain data for JSON: the depth and the shares at ranks depth and depth + 1."""
        after = float(self.share[self.depth]) if self.depth < len(self.share) else None
        return {"depth": self.depth, "share_at_depth": float(self.share[self.depth - 1]), "share_after": after}


def judged_share(index: LineIndex, pooled: np.ndarray) -> np.ndarray:
    """[depth] share of the pooled runs' entries at each rank that the qrels judge (qrels topics only)."""
    prepared = index.prepared
    block = prepared.pairs[np.asarray(pooled, dtype=bool)]  # [n_pooled, n_topic, depth]
    in_qrels = np.isin(np.asarray(prepared.topics), np.asarray(index.topics))
    valid = (block >= 0) & in_qrels[None, :, None]
    judged = (index.pair_line[np.where(block >= 0, block, -1)] >= 0) & valid  # pair_line[-1] is -1 (padding)
    entries = valid.sum(axis=(0, 1))
    return np.divide(judged.sum(axis=(0, 1)), entries, out=np.zeros(len(entries)), where=entries > 0)


def infer_pool_depth(index: LineIndex, pooled: np.ndarray, coverage: float = COVERAGE) -> DepthEstimate:
    """The deepest d with every rank 1..d judged in >= `coverage` of the pooled runs' lists (ValueError if none)."""
    share = judged_share(index, pooled)
    below = np.flatnonzero(share < coverage)
    depth = int(below[0]) if len(below) else len(share)
    if depth < 1:
        first = float(share[0]) if len(share) else 0.0
        raise ValueError(
            f"cannot infer the pool depth: only {first:.1%} of the pooled runs' first results are judged "
            "(give the depth, and check which runs were pooled)"
        )
    return DepthEstimate(depth=depth, share=share)
