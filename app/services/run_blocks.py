"""Blocks of runs within a memory budget (the `job_memory_mb` setting): how evaluation, pooling and the analyses
that read runs hold only a block of parsed runs at a time, so a job's peak memory does not grow with the runs."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

from sqlalchemy.orm import Session

from app.evaluation.records import RunTable
from app.services.run_arrays import load_runs

DEFAULT_MEMORY_MB = 512.0  # the job_memory_mb setting's default
BYTES_PER_RUN_LINE = 400  # a block's peak memory per run line held (scripts/bench/campaign_evaluation.py)
T = TypeVar("T")


class CountedRun(Protocol):
    """What planning needs of a run: its id and its number of lines (`runs.n_entries`)."""

    @property
    def id(self) -> int:
        """The run's id."""

    @property
    def n_entries(self) -> int:
        """The run's lines."""


def block_lines(memory_mb: float) -> int:
    """Run lines one block may hold within `memory_mb` (at least one)."""
    return max(1, int(memory_mb * 2**20 // BYTES_PER_RUN_LINE))


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


def plan_blocks(runs: Sequence[CountedRun], memory_mb: float) -> list[list[int]]:
    """The runs' ids, in their order, in blocks of about `memory_mb` of parsed run data."""
    return split_blocks([(r.id, int(r.n_entries)) for r in runs], block_lines(memory_mb))


def reduced_blocks(
    session: Session,
    runs: Sequence[CountedRun],
    memory_mb: float,
    reduce: Callable[[list[int], list[RunTable]], T],
) -> Iterator[T]:
    """`reduce(run ids, tables)` of each block of the runs (`plan_blocks`) parsed, in their order: a block's tables
    are dropped as soon as `reduce` returns, before the next block is read, so only what `reduce` keeps stays."""
    for block in plan_blocks(runs, memory_mb):
        yield reduce(block, load_runs(session, block))
