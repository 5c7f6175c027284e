"""Pool depth (Westerveld, TRECVID 2003 reusability): how run scores and the run ranking change with shallower pools.

For d = 1..D the qrels are cut to the lines whose doc some *pooled* run ranks in its top d (its trec_eval order,
after the max_results cut); the other lines are removed, i.e. unjudged = not relevant. For stratified
(sample_eval) qrels the `-1` lines are cut the same way. Every run is re-evaluated and its ranking compared with
the full qrels' ranking (tau_b, tau_AP).

Lines that no pooled run retrieved at all came from outside the simulated pool (other runs, manual search,
a deeper pool of another campaign). `outside="drop"` (default; SPEC section 6) applies Westerveld's rule and
removes them at every depth: on TREC-COVID round 1 depth 1 keeps 243 lines, as his procedure does, not 1,900.
`outside="keep"` keeps them at every depth, so that the deepest depth, max_results, reproduces the full qrels.

With the depth the pool was built with (`pool`: one for every topic or per topic, see `depth_inference`), a pool
cut at depth d holds, for topic t, the lines some pooled run ranks within min(d, t's depth): a line pooled runs rank
only deeper than its topic's pool was judged from outside the pool (a residual collection) and is treated like a line
no pooled run retrieved (`outside`). Without it any rank counts.

Cost: each line's best pooled rank is computed once (`pooled_lines`, a pass over the pooled runs, a block at a time
when the runs come in blocks), and depth d keeps the lines with best rank <= d; each block of runs is then scored
under every *distinct* cut of the qrels: for AP a few array passes over its relevant retrieved entries, other
measures (xinfAP, nDCG@10, ...) re-evaluate the block's prepared runs once per cut.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.analyses.depth_inference import PoolDepths
from app.evaluation.analyses.kendall import tau_ap, tau_b
from app.evaluation.analyses.lines import NEVER, fast_ap, index_lines, line_min_rank, run_mask
from app.evaluation.analyses.pooled_lines import (
    PooledLines,
    RunBlocks,
    as_blocks,
    cut_scores,
    pooled_lines,
)
from app.evaluation.grading.prepared_runs import PreparedRuns
from app.evaluation.measures.registry import resolve
from app.evaluation.records import Qrels, RunTable

OUTSIDE = ("drop", "keep")


@dataclass(frozen=True)
class PoolDepthResult:
    """Scores and rank correlations per pool depth."""

    measure: str
    outside: str  # drop | keep: lines no pooled run retrieved
    runs: list[str]
    pooled: list[str]  # runs whose top d form the pool
    depths: np.ndarray  # int64 [n_depth]
    scores: np.ndarray  # float64 [n_depth, n_run], mean over the full qrels' topics
    full: np.ndarray  # float64 [n_run], with the full qrels
    tau_b: np.ndarray  # float64 [n_depth], against the full ranking
    tau_ap: np.ndarray  # float64 [n_depth], tau_AP(full ranking, ranking at depth d)
    lines: np.ndarray  # int64 [n_depth] qrels lines kept
    relevant: np.ndarray  # int64 [n_depth] relevant lines kept
    total_lines: int
    total_relevant: int
    residual_lines: int = 0  # qrels lines outside every pooled run's top (its topic's pool depth, else max_results)
    residual_relevant: int = 0
    pool: PoolDepths | None = None  # the depth each topic was pooled to, when known

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "measure": self.measure,
            "outside": self.outside,
            "runs": self.runs,
            "pooled": self.pooled,
            "total_lines": self.total_lines,
            "total_relevant": self.total_relevant,
            "residual_lines": self.residual_lines,
            "residual_relevant": self.residual_relevant,
            "pool_depths": None if self.pool is None else self.pool.to_dict(),
            "full": dict(zip(self.runs, self.full.tolist(), strict=True)),
            "depths": [
                {
                    "depth": int(d),
                    "tau_b": float(self.tau_b[i]),
                    "tau_ap": float(self.tau_ap[i]),
                    "lines": int(self.lines[i]),
                    "relevant": int(self.relevant[i]),
                    "scores": dict(zip(self.runs, self.scores[i].tolist(), strict=True)),
                }
                for i, d in enumerate(self.depths.tolist())
            ],
        }


def line_depths(
    prepared: PreparedRuns, qrels: Qrels, pooled: Sequence[str] | None = None, *, outside: str = "drop"
) -> np.ndarray:
    """[n_line] the shallowest pool depth at which each qrels line is in the pool (0: always; NEVER: never)."""
    index = index_lines(prepared, qrels)
    return _admitted(line_min_rank(index, run_mask(prepared.names, pooled)), outside)


def _admitted(best: np.ndarray, outside: str) -> np.ndarray:
    """[n_line] the depth at which each line enters the pool, from its best pooled rank (NEVER: outside the pool)."""
    if outside not in OUTSIDE:
        raise ValueError("outside must be 'drop' or 'keep'")
    if outside == "keep":  # not retrieved by any pooled run: judged from outside this pool, kept at every depth
        return np.where(best == NEVER, 0, best)
    return best


def pool_depth(
    qrels: Qrels,
    runs: Sequence[RunTable] | PreparedRuns | RunBlocks,
    *,
    measure: str = "AP",
    pooled: Sequence[str] | None = None,
    max_depth: int | None = None,
    depths: Sequence[int] | None = None,
    max_results: int = 1000,
    outside: str = "drop",
    pool: PoolDepths | int | Mapping[str, int] | None = None,
    lines: PooledLines | None = None,
    progress: Callable[[float], None] | None = None,
) -> PoolDepthResult:
    """Scores of every run and tau_b / tau_AP against the full qrels for pool depths 1..max_depth.

    `runs` may be blocks of prepared runs (`pooled_lines.RunBlocks`), read twice: once for each line's best pooled
    rank, once to score each block under every cut. `pooled` names the runs that built the pool (all runs when
    None); `depths` overrides 1..max_depth (max_depth defaults to max_results); `pool` the depth the pool was built
    with (one, per topic, or `PoolDepths`; None: any rank); `lines` the first pass, if the caller made it
    (`pooled_lines` of these runs, qrels and pooled runs). `progress` is called with the share of the scoring done.
    """
    source = as_blocks(runs, max_results)
    names = source.names
    mask = run_mask(names, pooled)
    if not mask.any():
        raise ValueError("no pooled runs")
    if depths is None:
        deepest = runs.max_results if isinstance(runs, PreparedRuns) else max_results
        top = deepest if max_depth is None else max_depth
        if top < 1:
            raise ValueError("max_depth must be at least 1")
        depths = range(1, top + 1)
    depth_list = np.array(sorted(set(int(d) for d in depths)), dtype=np.int64)
    if len(depth_list) == 0 or depth_list[0] < 1:
        raise ValueError("depths must be positive")

    if lines is None:  # AP with every run pooled: one pass, the cuts scored from the runs' relevant entries
        lines = pooled_lines(source, qrels, mask, kernel=fast_ap(measure))
    if pool is not None and not isinstance(pool, PoolDepths):
        pool = lines.pool_depths(pool)
    best = lines.within(None if pool is None else pool.of(lines.topics))
    residual = best == NEVER
    admitted = _admitted(best, outside)

    n_depth = len(depth_list)
    counts = np.searchsorted(np.sort(admitted), depth_list, side="right").astype(np.int64)
    # nested cuts: a depth keeping as many lines as the one before keeps the same lines; all of them is the full qrels
    new = np.ones(n_depth, dtype=bool)
    new[1:] = counts[1:] != counts[:-1]
    scored = np.flatnonzero(new & (counts != lines.n_lines)).tolist()
    cuts: list[Callable[[], np.ndarray | None]] = [lambda: None]
    cuts += [functools.partial(np.less_equal, admitted, int(depth_list[i])) for i in scored]
    values = cut_scores(source, qrels, measure, cuts, progress, lines.kernel)
    full = values[0]
    scores = np.empty((n_depth, len(names)))
    which = np.where(counts == lines.n_lines, 0, -1)
    which[scored] = np.arange(1, len(scored) + 1)
    for i in range(n_depth):
        scores[i] = values[which[i]] if which[i] >= 0 else scores[i - 1]
    relevant = np.array([int(np.count_nonzero((admitted <= d) & lines.relevant)) for d in depth_list.tolist()],
                        dtype=np.int64)  # fmt: skip
    taus_b = np.array([tau_b(full, s) for s in scores])
    taus_ap = np.array([tau_ap(full, s) for s in scores])
    return PoolDepthResult(
        measure=resolve(measure).name,
        outside=outside,
        runs=names,
        pooled=[n for n, m in zip(names, mask.tolist(), strict=True) if m],
        depths=depth_list,
        scores=scores,
        full=full,
        tau_b=taus_b,
        tau_ap=taus_ap,
        lines=counts,
        relevant=relevant,
        total_lines=lines.n_lines,
        total_relevant=int(lines.relevant.sum()),
        residual_lines=int(residual.sum()),
        residual_relevant=int((residual & lines.relevant).sum()),
        pool=pool,
    )
