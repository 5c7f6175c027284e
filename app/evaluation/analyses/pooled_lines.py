"""What pool-depth and leave-out need of the runs, gathered a block of prepared runs at a time.

Both analyses re-score every run under cuts of one qrels. A cut depends on the runs only through each qrels line's
best rank over the pooled runs, the unit (run, team, type) of that rank and the best rank of any other unit, and the
pooled runs' judged entries at each rank per topic (from which the pool depths are inferred): `pooled_lines` gathers
those in one pass over the blocks (arrays over the qrels lines, not the runs). `cut_scores` then scores each block of
runs under every cut in a second pass. A run's score under a cut reads only that run and the qrels, so the scores do
not depend on how the runs are split into blocks (a test compares blocks of one run with one block, bit for bit), and
a caller holds one block of prepared runs at a time: memory bounded by the block and the qrels, not by the runs.

A line's best rank within a pool depth k is its best rank if that is at most k, else none; the unit that alone
contributed it within k is the best rank's unit when that rank is within k and every other unit's best rank is not.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from app.evaluation.analyses.depth_inference import PoolDepths, counted_depths, topic_judged
from app.evaluation.analyses.lines import NEVER, APKernel, SubsetScorer, aggregate_topics, fast_ap, index_lines
from app.evaluation.grading.grade_matrix import summarise_qrels
from app.evaluation.grading.prepared_runs import PreparedRuns, prepare_runs
from app.evaluation.measures.registry import resolve
from app.evaluation.records import Qrels, RunTable


class RunBlocks(Protocol):
    """Runs prepared a block at a time: iterating gives the blocks afresh, consecutive runs in `names` order."""

    @property
    def names(self) -> list[str]:
        """Every run's name, in block order."""

    def __iter__(self) -> Iterator[PreparedRuns]:
        """The blocks, each `prepare_runs` of its runs."""

    def only(self, keep: np.ndarray) -> RunBlocks:
        """The blocks of the runs where `keep` (bool per run) holds, in the same order."""


@dataclass(frozen=True)
class OneBlock:
    """Runs already prepared together, as a single block."""

    prepared: PreparedRuns

    @property
    def names(self) -> list[str]:
        """The runs' names."""
        return list(self.prepared.names)

    def __iter__(self) -> Iterator[PreparedRuns]:
        """The one block."""
        yield self.prepared

    def only(self, keep: np.ndarray) -> OneBlock:
        """The runs where `keep` holds (their rows of the pair ids; the pair and doc lists stay whole)."""
        keep = np.asarray(keep, dtype=bool)
        if keep.all():
            return self
        names = [name for name, kept in zip(self.prepared.names, keep.tolist(), strict=True) if kept]
        pairs, lengths = self.prepared.pairs[keep], self.prepared.lengths[keep]
        return OneBlock(dataclasses.replace(self.prepared, names=names, pairs=pairs, lengths=lengths))


class BlockTally(Protocol):
    """What one pass over blocks of runs feeds: each block of prepared runs, in the runs' order."""

    def add(self, block: PreparedRuns) -> None:
        """Take one block's runs into account."""


def tally_blocks(blocks: RunBlocks, *tallies: BlockTally) -> None:
    """Feed every block of one pass to each tally: several analyses of the same runs read each block once."""
    for block in blocks:
        for tally in tallies:
            tally.add(block)
        del block


def as_blocks(runs: Sequence[RunTable] | PreparedRuns | RunBlocks, max_results: int) -> RunBlocks:
    """Parsed runs (prepared here, cut at `max_results`), prepared runs or blocks of them, as blocks."""
    if isinstance(runs, PreparedRuns):
        return OneBlock(runs)
    if isinstance(runs, Sequence):
        return OneBlock(prepare_runs(list(runs), max_results))
    return runs


@dataclass(frozen=True)
class PooledLines:
    """Each qrels line's best pooled ranks and the pooled runs' judged entries per topic and rank."""

    topics: list[str]  # the qrels' topics, in evaluation order
    line_topic: np.ndarray  # int64 [n_line] index into topics
    relevant: np.ndarray  # bool [n_line] grade >= 1
    best: np.ndarray  # int64 [n_line] best (1-based) rank over the pooled runs, NEVER if none ranks it
    best_unit: np.ndarray  # int64 [n_line] the unit of a run ranking it at `best` (-1 if none)
    other: np.ndarray  # int64 [n_line] best rank over the pooled runs of every other unit, NEVER if none
    owned: np.ndarray  # bool [n_line] the line a (topic, doc) pair's unit counts for (the last of repeated lines)
    judged: np.ndarray  # int64 [n_topic, depth] judged entries of the pooled runs at each rank
    entries: np.ndarray  # int64 [n_topic, depth] entries of the pooled runs at each rank
    kernel: APKernel | None = None  # every run's relevant retrieved entries, when asked and every run is pooled

    @property
    def n_lines(self) -> int:
        """Number of qrels lines."""
        return len(self.line_topic)

    def within(self, caps: np.ndarray | None) -> np.ndarray:
        """[n_line] best pooled rank within each topic's depth (`caps`, int64 per qrels topic; None: any), or NEVER."""
        if caps is None:
            return self.best
        cap = np.asarray(caps, dtype=np.int64)[self.line_topic]
        return np.where(self.best <= cap, self.best, NEVER)

    def owner(self, caps: np.ndarray) -> np.ndarray:
        """[n_line] the unit whose pooled runs alone rank each line within its topic's depth (`caps`), else -1."""
        cap = np.asarray(caps, dtype=np.int64)[self.line_topic]
        alone = self.owned & (self.best <= cap) & (self.other > cap)
        return np.where(alone, self.best_unit, -1)

    def pool_depths(self, given: int | Mapping[str, int] | None = None, *, given_source: str = "given") -> PoolDepths:
        """Each topic's pool depth, given or inferred from the judged entries (`depth_inference.pool_depths`)."""
        return counted_depths(self.topics, self.judged, self.entries, given, given_source=given_source)


def pooled_lines(
    blocks: RunBlocks, qrels: Qrels, pooled: np.ndarray, units: np.ndarray | None = None, *, kernel: bool = False
) -> PooledLines:
    """`PooledLines` of the qrels over the blocks' pooled runs (`pooled`: bool per run, `units`: int unit code per
    run, all in one unit when None), in one pass over the pooled runs' blocks (`RunBlocks.only`). With `kernel`
    and every run pooled, the same pass keeps each run's relevant retrieved entries (`lines.APKernel`): AP under
    any cut is then scored from them (`cut_scores`), without reading the runs again."""
    judged_topics, line_topic, _ = summarise_qrels(qrels)
    n_line, n_topic = len(line_topic), len(judged_topics.topics)
    pooled = np.asarray(pooled, dtype=bool)
    if len(pooled) != len(blocks.names):
        raise ValueError("give one pooled flag per run")
    codes = np.zeros(len(pooled), dtype=np.int64) if units is None else np.asarray(units, dtype=np.int64)
    codes = codes[pooled]
    best = np.full(n_line, NEVER, dtype=np.int64)
    best_unit = np.full(n_line, -1, dtype=np.int64)
    other = np.full(n_line, NEVER, dtype=np.int64)
    owned = np.zeros(n_line, dtype=bool)
    judged = np.zeros((n_topic, 0), dtype=np.int64)
    entries = np.zeros((n_topic, 0), dtype=np.int64)
    start = 0
    kernels: list[APKernel] | None = [] if kernel and pooled.all() else None
    for block in blocks.only(pooled):
        n_run = len(block.names)
        mask, block_units = np.ones(n_run, dtype=bool), codes[start : start + n_run]
        start += n_run
        index = index_lines(block, qrels)
        if kernels is not None:
            kernels.append(APKernel(index))
        counts = topic_judged(index, mask)
        judged, entries = _added(judged, counts[0]), _added(entries, counts[1])
        lines, first, first_unit, second = _block_ranks(block, index.line_pair, index.pair_line, mask, block_units)
        owned[lines[index.pair_line[index.line_pair[lines]] == lines]] = True
        _merge(best, best_unit, other, lines, first, first_unit, second)
        del block, index
    if start != len(codes):
        raise ValueError("the blocks hold a different number of pooled runs than the mask")
    return PooledLines(
        topics=list(judged_topics.topics),
        line_topic=np.asarray(line_topic, dtype=np.int64),
        relevant=np.asarray(qrels.grades, dtype=np.int64) >= 1,
        best=best,
        best_unit=best_unit,
        other=other,
        owned=owned,
        judged=judged,
        entries=entries,
        kernel=None if kernels is None else APKernel.joined(kernels, qrels),
    )


def _added(total: np.ndarray, part: np.ndarray) -> np.ndarray:
    """total + part, [n_topic, depth] arrays of possibly different depths (the wider one's)."""
    if part.shape[1] > total.shape[1]:
        total, part = part, total
    out = total.copy()
    out[:, : part.shape[1]] += part
    return out


def _block_ranks(
    block: PreparedRuns, line_pair: np.ndarray, pair_line: np.ndarray, pooled: np.ndarray, units: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(lines, best rank, its unit, best rank of another unit) of the qrels lines the block's pooled runs rank."""
    none = np.zeros(0, dtype=np.int64)
    rows = np.flatnonzero(pooled)
    if len(rows) == 0 or block.depth == 0:
        return none, none, none, none
    pairs = block.pairs[rows]  # [n_pooled, n_topic, depth]
    flat = pairs.reshape(-1)
    at = np.flatnonzero(flat >= 0)
    at = at[pair_line[flat[at]] >= 0]  # judged pairs only
    pair = flat[at]
    rank = at % block.depth + 1
    unit = units[rows[at // (pairs.shape[1] * block.depth)]]
    # each (pair, unit)'s best rank, then per pair the best two of those (two different units)
    order = np.lexsort((rank, unit, pair))
    pair, unit, rank = pair[order], unit[order], rank[order]
    first = np.ones(len(pair), dtype=bool)
    first[1:] = (pair[1:] != pair[:-1]) | (unit[1:] != unit[:-1])
    pair, unit, rank = pair[first], unit[first], rank[first]
    order = np.lexsort((rank, pair))
    pair, unit, rank = pair[order], unit[order], rank[order]
    head = np.ones(len(pair), dtype=bool)
    head[1:] = pair[1:] != pair[:-1]
    heads = np.flatnonzero(head)
    n_pair = len(pair_line) - 1
    pair_best = np.full(n_pair + 1, NEVER, dtype=np.int64)
    pair_unit = np.full(n_pair + 1, -1, dtype=np.int64)
    pair_other = np.full(n_pair + 1, NEVER, dtype=np.int64)
    pair_best[pair[heads]], pair_unit[pair[heads]] = rank[heads], unit[heads]
    seconds = heads + 1
    seconds = seconds[seconds < len(pair)]
    seconds = seconds[~head[seconds]]
    pair_other[pair[seconds]] = rank[seconds]
    lines = np.flatnonzero(line_pair >= 0)
    lines = lines[pair_best[line_pair[lines]] < NEVER]
    of = line_pair[lines]
    return lines, pair_best[of], pair_unit[of], pair_other[of]


def _merge(
    best: np.ndarray,
    best_unit: np.ndarray,
    other: np.ndarray,
    lines: np.ndarray,
    rank: np.ndarray,
    unit: np.ndarray,
    second: np.ndarray,
) -> None:
    """Fold one block's (best rank, its unit, another unit's best rank) of `lines` into the running ones, in place."""
    held, held_unit, held_other = best[lines], best_unit[lines], other[lines]
    same = held_unit == unit
    keep = held <= rank  # ties keep the earlier unit: the other unit's rank is then the same
    other[lines] = np.where(
        same, np.minimum(held_other, second), np.where(keep, np.minimum(held_other, rank), np.minimum(second, held))
    )
    best[lines] = np.where(keep, held, rank)
    best_unit[lines] = np.where(keep, held_unit, unit)


def cut_scores(
    blocks: RunBlocks,
    qrels: Qrels,
    measure: str,
    cuts: Sequence[Callable[[], np.ndarray | None]],
    progress: Callable[[float], None] | None = None,
    kernel: APKernel | None = None,
) -> np.ndarray:
    """float64 [len(cuts), n_run] every run's aggregate `measure` under each cut of the qrels (a cut gives the bool
    keep mask over the qrels lines, or None for all of them), a block of runs at a time (`lines.SubsetScorer`), or
    from every run's relevant retrieved entries when the measure is AP and `kernel` holds them (runs not read)."""
    names = blocks.names
    out = np.empty((len(cuts), len(names)))
    if kernel is not None and fast_ap(measure) and kernel.n_run == len(names):
        aggregate = resolve(measure).aggregate
        for i, cut in enumerate(cuts):
            out[i] = aggregate_topics(kernel.per_topic(cut()), aggregate)
            if progress is not None:
                progress((i + 1) / len(cuts))
        return out
    start = 0
    for block in blocks:
        scorer = SubsetScorer(index_lines(block, qrels), measure)
        n_run = len(block.names)
        for i, cut in enumerate(cuts):
            out[i, start : start + n_run] = scorer.mean(cut())
            if progress is not None:
                progress((start + n_run * (i + 1) / max(len(cuts), 1)) / max(len(names), 1))
        start += n_run
        del block, scorer
    return out
