"""Blocks of runs within a memory budget (the `job_memory_mb` setting): how evaluation, pooling and the analyses
that read runs hold only a block of parsed runs at a time, so a job's peak memory does not grow with the runs."""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.analyses.pooled_lines import OneBlock, RunBlocks
from app.evaluation.grading.prepared_runs import PreparedRuns, prepare_runs
from app.evaluation.records import RunTable
from app.services.run_arrays import load_runs
from app.storage.models import Run

DEFAULT_MEMORY_MB = 512.0  # the job_memory_mb setting's default
# a block's peak memory per run line held: scripts/bench/campaign_evaluation.py --lines 1000000 measured one
# evaluation block of 10^6 lines (12-character shot ids) allocating at most 148 bytes a line (tracemalloc) and its
# RSS peak rising 161, rounded up for longer docnos (a run's docnos take 4 bytes a character of the longest); one run
# of 10^6 lines alone (decompressed, parsed, evaluated; tracemalloc) 315 bytes a line when its text was parsed as one
# block, 193 since a stored run over `streams.BLOCK_BYTES` is parsed a block of lines at a time
BYTES_PER_RUN_LINE = 200
# a pool build's block (pool candidates: the block's rows concatenated, ranked and keyed as `topic<US>doc` strings,
# then made unique): scripts/bench/campaign_pooling.py --lines 1000000 --tasks pool saw its RSS peak rise 393 MiB
# above the idle process for 10^6 lines
POOL_BYTES_PER_RUN_LINE = 420
# a block of runs prepared for the analyses (`prepare_runs`: the parsed rows, then their sorted (topic, doc) pair ids):
# scripts/bench/campaign_pooling.py --lines 1000000 --tasks pool-depth saw its RSS peak rise 325 MiB above the idle
# process for one block of 10^6 lines (tracemalloc: 261 bytes a line at the peak of `prepare_runs`, 88 of them the
# parsed rows)
PREPARED_BYTES_PER_RUN_LINE = 340
# a block of an evaluation whose judgements add sampling variance (`evaluations.evaluate_in_job`: the parsed rows, their
# scores, then the rows prepared, the imputations' evaluations and xinfAP's jackknife over the located lines):
# scripts/bench/campaign_evaluation.py --lines 1000000 --sampled saw one block of 10^6 lines allocate at most 335 bytes
# a line (tracemalloc) and its RSS peak rise 386-397 (a 5-run block: 424 and 507-513), rounded up; after the sparse
# sampling parts: 265 and 274-275 (5 runs: 371 and 362-425; one run: 570 and 533); with the docnos the block's runs
# hold of the qrels kept for the block's second look-up (`DocIndex.ids`): one run 573 and 498-507
SAMPLED_BYTES_PER_RUN_LINE = 600
# a docno's str header (49), list slot (8) and `doc_index` entry in prepared runs (a `DocIndex`: object slot, hash,
# table slots): tracemalloc saw 20 synthetic runs' prepared runs with their doc_index take 94.9 bytes a docno beyond
# the arrays and characters (632,388 docnos; 124.4 when the index was a dict)
DOCNO_OVERHEAD_BYTES = 95
T = TypeVar("T")
_LIBC = ctypes.util.find_library("c")
_TRIM = getattr(ctypes.CDLL(_LIBC), "malloc_trim", None) if _LIBC else None  # glibc's; None elsewhere


def release_freed() -> None:
    """Give the memory a finished block freed back to the system: glibc keeps it in the arena of the thread that
    ran the block, and a worker runs its blocks in several threads, so untrimmed each would keep a block's peak."""
    if _TRIM is not None:
        _TRIM(0)


class CountedRun(Protocol):
    """What planning needs of a run: its id and its number of lines (`runs.n_entries`)."""

    @property
    def id(self) -> int:
        """The run's id."""

    @property
    def n_entries(self) -> int:
        """The run's lines."""


def block_lines(memory_mb: float, bytes_per_line: int = BYTES_PER_RUN_LINE) -> int:
    """Run lines one block may hold within `memory_mb` (at least one), a line taking `bytes_per_line` at the peak."""
    return max(1, int(memory_mb * 2**20 // bytes_per_line))


def split_blocks(runs: Sequence[tuple[int, int]], max_lines: int) -> list[list[int]]:
    """Consecutive (run id, lines) grouped into blocks of at most `max_lines` lines (a larger run alone)."""
    blocks: list[list[int]] = []
    lines = max_lines
    for run_id, count in runs:
        if not blocks or lines + count > max_lines:
            blocks.append([])
            lines = 0
        blocks[-1].append(run_id)
        lines += count
    return blocks


def plan_blocks(
    runs: Sequence[CountedRun], memory_mb: float, bytes_per_line: int = BYTES_PER_RUN_LINE
) -> list[list[int]]:
    """The runs' ids, in their order, in blocks of about `memory_mb` of parsed run data (`bytes_per_line` each)."""
    return split_blocks([(r.id, int(r.n_entries)) for r in runs], block_lines(memory_mb, bytes_per_line))


def reduced_blocks(
    session: Session,
    runs: Sequence[CountedRun],
    memory_mb: float,
    reduce: Callable[[list[int], list[RunTable]], T],
    bytes_per_line: int = BYTES_PER_RUN_LINE,
    held: Callable[[], int] | None = None,
) -> Iterator[T]:
    """`reduce(run ids, tables)` of each block of the runs (`plan_blocks`; `bytes_per_line`: the peak a line of a
    block takes, parsed and reduced) parsed, in their order: a block's tables are dropped as soon as `reduce`
    returns, before the next block is read, so only what `reduce` keeps stays. With `held` (the bytes the caller
    keeps of the blocks so far) each block is planned when it is read, within `memory_mb` less those bytes (one run
    at least); without it the blocks are `plan_blocks`' (planning each when read gives the same blocks)."""
    counted = [(r.id, int(r.n_entries)) for r in runs]
    start = 0
    while start < len(counted):
        budget = memory_mb - (held() / 2**20 if held is not None else 0.0)
        block = split_blocks(counted[start:], block_lines(max(budget, 0.0), bytes_per_line))[0]
        start += len(block)
        kept = reduce(block, load_runs(session, block))
        release_freed()
        yield kept


class StoredBlocks:
    """A job's runs prepared a block of about `memory_mb` at a time (`pooled_lines.RunBlocks`): an analysis that
    reads the runs twice holds one block, never all of them. The first pass keeps its first blocks while they
    take at most half the budget (the later blocks are planned within the budget less what is kept) and the next
    pass reads only the rest again: runs that fit are read once (`memory_mb` None: `DEFAULT_MEMORY_MB`).
    `also(run ids, tables)` is called on each block of the first pass, for a caller that counts something else
    of the parsed runs in the same pass. `keep_as(block)` is what the first pass keeps of a block (the block itself
    when None): an analysis that grades the runs only against subsets of one qrels keeps the pairs it judges
    (`lines.judged_only`, a few bytes a ranked entry), so far more runs are read once."""

    def __init__(
        self,
        session: Session,
        run_ids: Sequence[int],
        names: Sequence[str],
        max_results: int,
        memory_mb: float | None = None,
        also: Callable[[list[int], list[RunTable]], object] | None = None,
        keep_as: Callable[[PreparedRuns], PreparedRuns] | None = None,
    ) -> None:
        memory_mb = DEFAULT_MEMORY_MB if memory_mb is None else memory_mb  # the default read at each call
        self.session, self.run_ids, self.max_results, self.memory_mb = session, list(run_ids), max_results, memory_mb
        self._names = list(names)
        self._also = also
        self._keep_as = keep_as
        self._kept: list[PreparedRuns] = []  # the first blocks, kept from the first pass
        self._kept_runs = 0
        self._kept_bytes = 0
        self._passes = 0
        self._counted: list[CountedRun] | None = None  # the runs' lines, queried once

    @property
    def names(self) -> list[str]:
        """Every run's name, in block order."""
        return list(self._names)

    def __iter__(self) -> Iterator[PreparedRuns]:
        """The blocks in order: those kept, then the others, each read, parsed and prepared when it is reached."""
        yield from list(self._kept)
        keeping = self._passes == 0
        self._passes += 1
        runs = self._runs()[self._kept_runs :]
        limit = self.memory_mb * 2**20 / 2

        def held() -> int:
            """What the kept blocks take."""
            return self._kept_bytes

        blocks = reduced_blocks(self.session, runs, self.memory_mb, self._prepared, PREPARED_BYTES_PER_RUN_LINE, held)
        for block in blocks:
            kept = block if not keeping or self._keep_as is None else self._keep_as(block)
            size = prepared_bytes(kept, vocabulary=all(kept.docs is not other.docs for other in self._kept))
            keeping = keeping and self._kept_bytes + size <= limit
            if keeping:
                self._kept.append(kept)
                self._kept_runs += len(block.names)
                self._kept_bytes += size
            del kept
            yield block

    def only(self, keep: np.ndarray) -> RunBlocks:
        """The runs where `keep` (bool per run) holds: these blocks when it holds for all, cut from the one block
        (read now and kept) when every run fits in one, else read in blocks of their own."""
        keep = np.asarray(keep, dtype=bool)
        if keep.all():
            return self
        if self._passes == 0 and len(plan_blocks(self._runs(), self.memory_mb, PREPARED_BYTES_PER_RUN_LINE)) == 1:
            for _ in self:  # reads the one block, kept
                pass
        if self._kept_runs == len(self.run_ids) and len(self._kept) == 1:
            return OneBlock(self._kept[0]).only(keep)
        chosen = np.flatnonzero(keep).tolist()
        ids, names = [self.run_ids[i] for i in chosen], [self._names[i] for i in chosen]
        return StoredBlocks(self.session, ids, names, self.max_results, self.memory_mb, keep_as=self._keep_as)

    def _runs(self) -> list[CountedRun]:
        """The runs' ids and lines (`counted_runs`, queried on first use)."""
        if self._counted is None:
            self._counted = counted_runs(self.session, self.run_ids)
        return self._counted

    def _prepared(self, ids: list[int], tables: list[RunTable]) -> PreparedRuns:
        """A block's runs prepared and named (after `also`, on the first pass)."""
        if self._also is not None and self._passes == 1:
            self._also(ids, tables)
        name_of = dict(zip(self.run_ids, self._names, strict=True))
        return prepare_runs(tables, self.max_results, names=[name_of[i] for i in ids])


def prepared_bytes(prepared: PreparedRuns, *, vocabulary: bool = True) -> int:
    """About what prepared runs take once their analysis has looked docnos up: the arrays, and (`vocabulary`: not
    counted for blocks that share another kept block's, as `lines.judged_only`'s do) per docno its string, its list
    slot and its entry in `doc_index`."""
    arrays = prepared.pairs.nbytes + prepared.lengths.nbytes + prepared.pair_topic.nbytes + prepared.pair_doc.nbytes
    if not vocabulary:
        return arrays
    return arrays + sum(map(len, prepared.docs)) + DOCNO_OVERHEAD_BYTES * len(prepared.docs)


def counted_runs(session: Session, run_ids: Sequence[int]) -> list[CountedRun]:
    """The runs' ids and lines, in the order of `run_ids` (what `reduced_blocks` plans with), in one query."""
    rows = session.execute(select(Run.id, Run.n_entries).where(Run.id.in_(list(run_ids))))
    counts = {run_id: n_entries for run_id, n_entries in rows}
    return [_Counted(run_id, int(counts[run_id])) for run_id in run_ids]


@dataclass(frozen=True)
class _Counted:
    """A run's id and lines (`CountedRun`)."""

    id: int
    n_entries: int
