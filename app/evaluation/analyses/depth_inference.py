"""The depth a pool was built with, read from imported qrels: how deep the judgements cover the pooled runs.

A depth-k pool judges every document in the top k of every pooled run, so the share of judged entries at rank d
(over the pooled runs' ranked lists of the qrels' topics) is 1 for d <= k and falls after it. Stratified qrels count
their `-1` lines (pooled, not sampled) as judged, since they mark pool membership.

Per topic (`pool_depths`, what leave-out and pool-depth use): real pools are often deeper for some topics than for
others (depth 7 for some, 15-50 for others), so each topic has its own depth: the largest d such that every pooled
run's top d for that topic is judged. A rank counts as judged for a topic when at least `TOPIC_COVERAGE` (95%) of
the pooled runs' lists that reach it have it judged: one unjudged entry among 20 or more lists is a slip (a document
dropped from the collection, a judging gap), not the pool's end; with fewer lists every entry must be judged. On
TREC-COVID round 1 (56 pooled runs) every topic reads 7, with 6 such slips; below a depth-7 pool the share falls to
30-75%. A topic none of whose pooled runs' first results is judged has depth 0: its judgements came from elsewhere.
A depth may also be given, for every topic or per topic (the topics it lacks are inferred), or stored with a pool.

Over all topics at once (`infer_pool_depth`, the older single depth): the deepest d such that every rank 1..d is
judged in at least `COVERAGE` (99%) of the pooled lists. On TREC-COVID round 1 the share is 1.0 for ranks 1-6, 0.997
at rank 7 and 0.657 at rank 8: depth 7.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.analyses.lines import LineIndex
from app.evaluation.analyses.topic_order import natural_order

COVERAGE = 0.99
TOPIC_COVERAGE = 0.95
SOURCES = ("given", "pool", "inferred")  # where a topic's depth came from, in the order they are named


@dataclass(frozen=True)
class DepthEstimate:
    """The inferred pool depth and the judged share per rank it was read from."""

    depth: int
    share: np.ndarray  # float64 [max depth]: judged share of the pooled runs' entries at rank 1, 2, ...

    def to_dict(self) -> dict[str, Any]:
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
    share: np.ndarray = np.divide(judged.sum(axis=(0, 1)), entries, out=np.zeros(len(entries)), where=entries > 0)
    return share


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


def topic_judged(index: LineIndex, pooled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """[n_topic, depth] judged entries and entries of the pooled runs at each rank, per qrels topic (`index.topics`)."""
    prepared = index.prepared
    block = prepared.pairs[np.asarray(pooled, dtype=bool)]  # [n_pooled, n_prepared_topic, depth]
    valid = block >= 0
    judged = (index.pair_line[np.where(valid, block, -1)] >= 0) & valid  # pair_line[-1] is -1 (padding)
    column = {name: i for i, name in enumerate(prepared.topics)}
    columns = np.array([column.get(t, -1) for t in index.topics], dtype=np.int64)
    have = columns >= 0
    out_judged = np.zeros((len(index.topics), prepared.depth), dtype=np.int64)
    out_entries = np.zeros_like(out_judged)
    out_judged[have] = judged.sum(axis=0)[columns[have]]
    out_entries[have] = valid.sum(axis=0)[columns[have]]
    return out_judged, out_entries


def _leading(covered: np.ndarray) -> np.ndarray:
    """[n_topic] how many leading ranks of each row of covered [n_topic, depth] are true."""
    if covered.shape[1] == 0:
        return np.zeros(covered.shape[0], dtype=np.int64)
    first_gap = np.argmin(covered, axis=1)
    return np.asarray(np.where(covered.all(axis=1), covered.shape[1], first_gap), dtype=np.int64)


@dataclass(frozen=True)
class PoolDepths:
    """The depth of the pool for each qrels topic, where each came from, and the judged entries the inferred ones
    were read from."""

    topics: list[str]  # the qrels topics, in evaluation order
    depths: np.ndarray  # int64 [n_topic]: every pooled run's top `depth` is judged; 0 = not even the first results
    sources: list[str]  # per topic: "given", "pool" or "inferred"
    judged: np.ndarray  # int64 [n_topic, max rank]: judged entries of the pooled runs at each rank
    entries: np.ndarray  # int64 [n_topic, max rank]: entries of the pooled runs at each rank
    coverage: float = TOPIC_COVERAGE

    def of(self, topics: Sequence[str]) -> np.ndarray:
        """int64 [len(topics)] the depth of each of `topics` (0 for a topic the qrels lack)."""
        depth_of = dict(zip(self.topics, self.depths.tolist(), strict=True))
        return np.array([depth_of.get(t, 0) for t in topics], dtype=np.int64)

    @property
    def uniform(self) -> int | None:
        """The depth when every topic has the same one, else None."""
        distinct = set(self.depths.tolist())
        return distinct.pop() if len(distinct) == 1 else None

    @property
    def source(self) -> str:
        """Where the depths came from: one of SOURCES, or several joined by commas (e.g. "given, inferred")."""
        return ", ".join(s for s in SOURCES if s in self.sources) or "inferred"

    def describe(self) -> str:
        """The depth in words: "7", or "5-7 per topic"."""
        if self.uniform is not None or not len(self.depths):
            return str(self.uniform if self.uniform is not None else 0)
        return f"{int(self.depths.min())}-{int(self.depths.max())} per topic"

    def inference(self) -> dict[str, Any] | None:
        """What the inferred depths were read from (None when none was inferred): the judged share of the pooled
        runs' entries at each inferred topic's depth and one rank deeper (over those topics), the unjudged entries
        within the depths (slips), and the topics with depth 0."""
        inferred = np.array([s == "inferred" for s in self.sources], dtype=bool)
        if not inferred.any():
            return None
        width = self.judged.shape[1]
        rows = np.flatnonzero(inferred & (self.depths >= 1))
        at = self.depths[rows] - 1
        deeper = rows[self.depths[rows] < width]
        after_at = self.depths[deeper]
        after_entries = int(self.entries[deeper, after_at].sum())
        within = np.arange(width)[None, :] < self.depths[rows, None]
        gaps = int(((self.entries[rows] - self.judged[rows]) * within).sum())
        at_entries = int(self.entries[rows, at].sum())
        return {
            "coverage": self.coverage,
            "share_at_depth": float(self.judged[rows, at].sum() / at_entries) if at_entries else None,
            "share_after": float(self.judged[deeper, after_at].sum() / after_entries) if after_entries else None,
            "gaps": gaps,
            "unpooled": [self.topics[i] for i in np.flatnonzero(inferred & (self.depths == 0)).tolist()],
        }

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: the depth (None when it varies), where it came from, each topic's depth in natural
        topic order, and what the inferred ones were read from."""
        return {
            "depth": self.uniform,
            "source": self.source,
            "min": int(self.depths.min()) if len(self.depths) else 0,
            "max": int(self.depths.max()) if len(self.depths) else 0,
            "topics": [
                {"topic": self.topics[i], "depth": int(self.depths[i]), "source": self.sources[i]}
                for i in natural_order(self.topics)
            ],
            "inference": self.inference(),
        }


def pool_depths(
    index: LineIndex,
    pooled: np.ndarray,
    given: int | Mapping[str, int] | None = None,
    *,
    given_source: str = "given",
    coverage: float = TOPIC_COVERAGE,
) -> PoolDepths:
    """Each qrels topic's pool depth: `given` (one depth for every topic, or per topic, the topics it lacks being
    inferred; `given_source` says where it came from, e.g. "pool"), else inferred from the judged entries of the
    pooled runs (see the module's docstring). ValueError for a depth below 1 (0 per topic), or when no topic has a
    depth to infer."""
    judged, entries = topic_judged(index, pooled)
    return counted_depths(index.topics, judged, entries, given, given_source=given_source, coverage=coverage)


def counted_depths(
    topics: Sequence[str],
    judged: np.ndarray,
    entries: np.ndarray,
    given: int | Mapping[str, int] | None = None,
    *,
    given_source: str = "given",
    coverage: float = TOPIC_COVERAGE,
) -> PoolDepths:
    """`pool_depths` from the pooled runs' judged entries and entries at each rank per qrels topic (`topic_judged`'s
    counts, which blocks of runs add up)."""
    share = np.divide(judged, entries, out=np.zeros(judged.shape), where=entries > 0)
    inferred = _leading((entries > 0) & (share >= coverage))
    n_topic = len(topics)
    if given is None:
        depths, sources = inferred, ["inferred"] * n_topic
    elif isinstance(given, Mapping):
        if any(int(d) < 0 for d in given.values()):
            raise ValueError("a topic's pool depth must be at least 0")
        depths = np.array([int(given.get(t, inferred[i])) for i, t in enumerate(topics)], dtype=np.int64)
        sources = [given_source if t in given else "inferred" for t in topics]
    else:
        if int(given) < 1:
            raise ValueError("the pool depth must be at least 1")
        depths, sources = np.full(n_topic, int(given), dtype=np.int64), [given_source] * n_topic
    asked = [s == "inferred" for s in sources]
    if n_topic and all(asked) and not depths.any():
        first = judged[:, 0].sum() / max(int(entries[:, 0].sum()), 1) if judged.shape[1] else 0.0
        raise ValueError(
            f"cannot infer the pool depth: on no topic are {coverage:.0%} of the pooled runs' first results judged "
            f"({first:.1%} are, over all topics); give the depth, and check which runs were pooled"
        )
    return PoolDepths(list(topics), depths, sources, judged, entries, coverage)
