"""Judged fraction per depth (Westerveld, TRECVID reusability, 4.1): how much of each run's top d the qrels judge.

For each depth d and run, over the qrels' topics: the entries of the run's top d (its trec_eval order, after the
max_results cut) whose (topic, doc) the qrels judge, over the entries in its top d (a list shorter than d counts
what it has). "Judged" is a qrels line with grade >= 0; a stratified qrels' `-1` line (pooled, not sampled) is not
judged. Also per depth: the share over all runs' entries together, and the smallest, largest and mean share over the
(run, topic) lists, which is how the TRECVID overview states it ("at minimum 24.3 % of any run and query results
were sampled and judged"). A run judged at every rank of its top d has share 1 at that depth: on TREC-COVID round 1,
a depth-7 pool, every pooled run's top 6 is judged.

`sampled_share` is the overview's own statistic: "Stats of sampled and judged clips (ranks 301 to 1000) across all
runs and topics: at minimum 24.3 %, at maximum 76.7 %, on average 55 % of any run and query results were sampled and
judged" (TRECVID 2022 AVS overview, Evaluation Methodology): per (run, topic) list, its entries at ranks first..last
(the sampled strata; ranks 1-300 are all judged) that the qrels judge, over its entries there; the smallest, largest
and mean share over the lists with an entry in those ranks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.analyses.lines import index_lines
from app.evaluation.analyses.pooled_lines import RunBlocks, as_blocks, tally_blocks
from app.evaluation.grading.grade_matrix import summarise_qrels
from app.evaluation.grading.prepared_runs import PreparedRuns
from app.evaluation.records import Qrels, RunTable

DEFAULT_DEPTHS = (1, 2, 3, 5, 10, 20, 30, 50, 100, 200, 300, 500, 1000)


@dataclass(frozen=True)
class JudgedFractionResult:
    """Judged entries of each run's top d, per depth."""

    runs: list[str]
    depths: np.ndarray  # int64 [n_depth]
    judged: np.ndarray  # int64 [n_depth, n_run]: judged entries in the top d, over the qrels' topics
    retrieved: np.ndarray  # int64 [n_depth, n_run]: entries in the top d
    share: np.ndarray  # float64 [n_depth, n_run]: judged / retrieved (NaN for a run with no entries)
    overall: np.ndarray  # float64 [n_depth]: all runs' judged entries over all their entries
    list_min: np.ndarray  # float64 [n_depth]: smallest share of any (run, topic) list with entries
    list_max: np.ndarray  # float64 [n_depth]
    list_mean: np.ndarray  # float64 [n_depth]: mean share over those lists

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON (NaN as None)."""
        return {
            "runs": self.runs,
            "depths": [
                {
                    "depth": int(d),
                    "overall": _num(self.overall[i]),
                    "list_min": _num(self.list_min[i]),
                    "list_max": _num(self.list_max[i]),
                    "list_mean": _num(self.list_mean[i]),
                    "share": dict(zip(self.runs, [_num(v) for v in self.share[i]], strict=True)),
                    "judged": dict(zip(self.runs, self.judged[i].tolist(), strict=True)),
                    "retrieved": dict(zip(self.runs, self.retrieved[i].tolist(), strict=True)),
                }
                for i, d in enumerate(self.depths.tolist())
            ],
        }


def _num(value: float) -> float | None:
    """A JSON number (None for NaN)."""
    return None if not np.isfinite(value) else float(value)


def judged_flags(prepared: PreparedRuns, qrels: Qrels) -> tuple[np.ndarray, np.ndarray]:
    """(judged, valid), each bool [n_run, n_qrels_topic, depth]: the entry's (topic, doc) is judged (grade >= 0),
    and the position holds an entry; topics are the qrels' (a topic no run answers has no entries)."""
    index = index_lines(prepared, qrels)
    n_pair = len(prepared.pair_topic)
    grades = np.asarray(qrels.grades, dtype=np.int64)
    line = index.pair_line[:n_pair]
    pair_judged = np.zeros(n_pair + 1, dtype=bool)  # last slot: padding
    pair_judged[:n_pair] = (line >= 0) & (grades[np.maximum(line, 0)] >= 0) if len(grades) else False
    column = {name: i for i, name in enumerate(prepared.topics)}
    columns = np.array([column.get(t, -1) for t in index.topics], dtype=np.int64)
    shape = (len(prepared.names), len(index.topics), prepared.depth)
    block = np.full(shape, -1, dtype=np.int64)
    present = columns >= 0
    if present.any() and prepared.depth:
        block[:, present, :] = prepared.pairs[:, columns[present], :]
    valid = block >= 0
    return pair_judged[np.where(valid, block, n_pair)], valid


def judged_fraction(
    qrels: Qrels,
    runs: Sequence[RunTable] | PreparedRuns | RunBlocks,
    *,
    depths: Sequence[int] | None = None,
    max_results: int = 1000,
) -> JudgedFractionResult:
    """The judged share of every run's top d for each depth d (default: 1, 2, 3, 5, 10, ... up to max_results).

    `runs` may be blocks of prepared runs (`pooled_lines.RunBlocks`): each run's counts are its own, and the list
    statistics are kept per run until the end, so blocks give the numbers of one block, bit for bit."""
    limit = runs.max_results if isinstance(runs, PreparedRuns) else max_results
    source = as_blocks(runs, max_results)
    tally = JudgedFractionTally(qrels, source.names, depths=depths, max_results=limit)
    tally_blocks(source, tally)
    return tally.result()


class JudgedFractionTally:
    """`judged_fraction` fed a block of prepared runs at a time (`add`, in the runs' order), for a caller that reads
    the blocks once for several tallies (`pooled_lines.tally_blocks`)."""

    def __init__(
        self, qrels: Qrels, names: Sequence[str], *, depths: Sequence[int] | None = None, max_results: int = 1000
    ) -> None:
        if depths is None:
            depths = [d for d in DEFAULT_DEPTHS if d < max_results] + [max_results]
        self.depths = np.array(sorted({int(d) for d in depths}), dtype=np.int64)
        if len(self.depths) == 0 or self.depths[0] < 1:
            raise ValueError("depths must be positive")
        self.qrels, self.names = qrels, list(names)
        self.parts = [_JudgedCounts.empty(len(self.depths), 0)]

    def add(self, block: PreparedRuns) -> None:
        """Count one block's runs."""
        self.parts.append(_judged_counts(block, self.qrels, self.depths))

    def result(self) -> JudgedFractionResult:
        """The shares of every run added."""
        parts, depth_list = self.parts, self.depths
        judged_run = np.concatenate([p.judged for p in parts], axis=1)  # [depth, run]
        retrieved_run = np.concatenate([p.retrieved for p in parts], axis=1)
        n_depth = len(depth_list)
        share = np.divide(judged_run, retrieved_run, out=np.full(judged_run.shape, np.nan), where=retrieved_run > 0)
        total_retrieved = retrieved_run.sum(axis=1)
        overall = np.divide(
            judged_run.sum(axis=1), total_retrieved, out=np.full(n_depth, np.nan), where=total_retrieved > 0
        )
        count = sum((p.lists for p in parts), np.zeros(n_depth, dtype=np.int64))
        some = count > 0
        list_min = np.where(some, np.min([p.low for p in parts], axis=0), np.nan)
        list_max = np.where(some, np.max([p.high for p in parts], axis=0), np.nan)
        list_sum = np.concatenate([p.sums for p in parts], axis=0).sum(axis=0)  # per run first: blocks change nothing
        list_mean = np.divide(list_sum, count, out=np.full(n_depth, np.nan), where=some)
        return JudgedFractionResult(
            runs=self.names,
            depths=depth_list,
            judged=judged_run,
            retrieved=retrieved_run,
            share=share,
            overall=overall,
            list_min=list_min,
            list_max=list_max,
            list_mean=list_mean,
        )


@dataclass(frozen=True)
class _JudgedCounts:
    """One block of runs' judged and retrieved entries in their top d, and their (run, topic) lists' shares."""

    judged: np.ndarray  # int64 [n_depth, n_run]
    retrieved: np.ndarray  # int64 [n_depth, n_run]
    lists: np.ndarray  # int64 [n_depth]: lists with an entry in the top d
    low: np.ndarray  # float64 [n_depth]: smallest share of those lists (inf if none)
    high: np.ndarray  # float64 [n_depth]: largest (-inf if none)
    sums: np.ndarray  # float64 [n_run, n_depth]: each run's shares summed over its lists

    @classmethod
    def empty(cls, n_depth: int, n_run: int) -> _JudgedCounts:
        """Runs with no entry in any qrels topic (n_run of them): nothing judged, nothing retrieved, no lists."""
        zeros = np.zeros((n_depth, n_run), dtype=np.int64)
        return cls(zeros, zeros, np.zeros(n_depth, dtype=np.int64), np.full(n_depth, np.inf),
                   np.full(n_depth, -np.inf), np.zeros((n_run, n_depth)))  # fmt: skip


def _judged_counts(prepared: PreparedRuns, qrels: Qrels, depth_list: np.ndarray) -> _JudgedCounts:
    """`_JudgedCounts` of one block of prepared runs at the depths `depth_list`."""
    judged, valid = judged_flags(prepared, qrels)
    n_run, n_topic, width = valid.shape
    n_depth = len(depth_list)
    if width == 0 or n_topic == 0:  # no qrels topic, or no run retrieves anything for one
        return _JudgedCounts.empty(n_depth, n_run)
    column = np.minimum(depth_list, width) - 1
    judged_top = np.cumsum(judged, axis=2, dtype=np.int64)[:, :, column]  # [run, topic, depth]
    retrieved_top = np.cumsum(valid, axis=2, dtype=np.int64)[:, :, column]
    lists = retrieved_top > 0  # [run, topic, depth]
    per_list = np.divide(judged_top, retrieved_top, out=np.zeros(judged_top.shape), where=lists)
    return _JudgedCounts(
        judged=judged_top.sum(axis=1).T,
        retrieved=retrieved_top.sum(axis=1).T,
        lists=lists.sum(axis=(0, 1)).astype(np.int64),
        low=np.min(np.where(lists, per_list, np.inf), axis=(0, 1)),
        high=np.max(np.where(lists, per_list, -np.inf), axis=(0, 1)),
        sums=per_list.sum(axis=1),
    )


@dataclass(frozen=True)
class SampledShareResult:
    """Each (run, topic) list's judged share at ranks first..last, and their smallest, largest and mean."""

    runs: list[str]
    topics: list[str]  # the qrels' topics
    first: int
    last: int
    judged: np.ndarray  # int64 [n_run, n_topic]: judged entries at ranks first..last
    retrieved: np.ndarray  # int64 [n_run, n_topic]: entries at ranks first..last
    share: np.ndarray  # float64 [n_run, n_topic]: judged / retrieved (NaN for a list with none there)

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: the ranks, the min, max and mean over the lists, and each run's (NaN as None)."""
        lists = np.isfinite(self.share)
        values = self.share[lists]
        runs = []
        for i, name in enumerate(self.runs):
            mine = self.share[i][lists[i]]
            runs.append(
                {
                    "run": name,
                    "lists": int(mine.size),
                    "min": float(mine.min()) if mine.size else None,
                    "max": float(mine.max()) if mine.size else None,
                    "mean": float(mine.mean()) if mine.size else None,
                }
            )
        return {
            "first_rank": self.first,
            "last_rank": self.last,
            "lists": int(values.size),
            "min": float(values.min()) if values.size else None,
            "max": float(values.max()) if values.size else None,
            "mean": float(values.mean()) if values.size else None,
            "runs": runs,
        }


def sampled_share(
    qrels: Qrels,
    runs: Sequence[RunTable] | PreparedRuns | RunBlocks,
    *,
    first: int = 1,
    last: int | None = None,
    max_results: int = 1000,
) -> SampledShareResult:
    """The judged share of every (run, topic) list's entries at ranks first..last (last: max_results when None).

    `runs` may be blocks of prepared runs (`pooled_lines.RunBlocks`): each list's counts are its own."""
    last = (runs.max_results if isinstance(runs, PreparedRuns) else max_results) if last is None else last
    source = as_blocks(runs, max_results)
    tally = SampledShareTally(qrels, source.names, first=first, last=last)
    tally_blocks(source, tally)
    return tally.result()


class SampledShareTally:
    """`sampled_share` fed a block of prepared runs at a time (`add`, in the runs' order)."""

    def __init__(self, qrels: Qrels, names: Sequence[str], *, first: int, last: int) -> None:
        if first < 1 or last < first:
            raise ValueError("ranks must satisfy 1 <= first <= last")
        self.qrels, self.names, self.first, self.last = qrels, list(names), first, last
        self.topics = list(summarise_qrels(qrels)[0].topics)
        self.judged = [np.zeros((0, len(self.topics)), dtype=np.int64)]
        self.retrieved = [np.zeros((0, len(self.topics)), dtype=np.int64)]

    def add(self, block: PreparedRuns) -> None:
        """Count one block's lists at the ranks."""
        judged, valid = judged_flags(block, self.qrels)
        window = slice(self.first - 1, self.last)  # positions past a list's width are simply absent
        self.judged.append((judged & valid)[:, :, window].sum(axis=2, dtype=np.int64))
        self.retrieved.append(valid[:, :, window].sum(axis=2, dtype=np.int64))

    def result(self) -> SampledShareResult:
        """The shares of every list added."""
        judged_count, retrieved = np.concatenate(self.judged), np.concatenate(self.retrieved)
        share = np.divide(judged_count, retrieved, out=np.full(retrieved.shape, np.nan), where=retrieved > 0)
        return SampledShareResult(self.names, self.topics, self.first, self.last, judged_count, retrieved, share)
