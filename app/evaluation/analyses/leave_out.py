"""Leave-one-run-out / leave-one-group-out / leave-one-run-type-out (Zobel 1998; Westerveld, TRECVID 2003).

A unit (a run, a team's runs, or all runs of a type) *uniquely contributed* a qrels line when some pooled run of
that unit ranks the line's doc within the pool depth k and no pooled run of another unit does. Leaving the unit
out removes those lines, relevant or not (for stratified qrels also the `-1` lines), and re-evaluates every run.
Only pooled runs contribute (the `contributed_judgments` flag; all runs when unknown), so a unit without pooled
runs removes nothing.

The pool depth k is the depth the pool was built with (SPEC section 6), per topic: the stored one for a campaign's
pool, else given (one for every topic, or per topic), else inferred from the qrels (`depth_inference.pool_depths`:
for each topic, the deepest rank to which the pooled runs' results are all judged; 7 on every topic of TREC-COVID
round 1). A run's contribution is "the qrels lines whose doc it ranks within its topic's k" (trec_eval order, after
the max_results cut). A deeper k than the pool's counts judged docs the run ranks below the pool as its contribution
although other runs put them in the pool: on TREC-COVID round 1, leaving one group out at k = 7 gives tau_b 0.908
and a largest drop of 0.050 AP, at k = 1000 tau_b 0.991 and 0.0009, which hides the pool bias the analysis exists to
show. Lines no pooled run ranks within its topic's k (a *residual* collection: judgements from other runs, manual
search or another campaign) are never removed, and are counted in the result.

Per unit: the scores of all runs on its reduced qrels (tau_b against the full ranking). Per run: original score,
reduced score (with its own unit left out), delta, % delta, and rank change (its rank when only its own score is
replaced by the reduced one, minus its original rank; positive = it drops). Overall: tau_b / tau_AP between the
original scores and each run's reduced score, and the largest drop.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.analyses.depth_inference import PoolDepths
from app.evaluation.analyses.kendall import tau_ap, tau_b
from app.evaluation.analyses.lines import NEVER, fast_ap, run_mask
from app.evaluation.analyses.pooled_lines import RunBlocks, as_blocks, cut_scores, pooled_lines
from app.evaluation.grading.prepared_runs import PreparedRuns
from app.evaluation.measures.registry import resolve
from app.evaluation.records import Qrels, RunTable


@dataclass(frozen=True)
class LeaveOutResult:
    """Scores with each unit's unique contributions removed."""

    measure: str
    by: str
    pool: PoolDepths  # each topic's pool depth and where it came from
    runs: list[str]
    pooled: list[str]
    unit_of_run: list[str]
    units: list[str]  # distinct units, first-appearance order
    removed_lines: np.ndarray  # int64 [n_unit]
    removed_relevant: np.ndarray  # int64 [n_unit]
    unit_scores: np.ndarray  # float64 [n_unit, n_run]: every run on the unit's reduced qrels
    unit_tau_b: np.ndarray  # float64 [n_unit]: ranking on the unit's reduced qrels vs the full ranking
    original: np.ndarray  # float64 [n_run]
    reduced: np.ndarray  # float64 [n_run]: with its own unit left out
    rank_change: np.ndarray  # int64 [n_run]
    tau_b: float
    tau_ap: float
    residual_lines: int = 0  # qrels lines no pooled run ranks within its topic's depth: never removed
    residual_relevant: int = 0

    @property
    def depth(self) -> int | None:
        """The pool depth when every topic has the same one, else None (see `pool`)."""
        return self.pool.uniform

    @property
    def depth_source(self) -> str:
        """Where the depths came from: given, pool or inferred (several joined by commas)."""
        return self.pool.source

    @property
    def delta(self) -> np.ndarray:
        """reduced - original, per run."""
        delta: np.ndarray = self.reduced - self.original
        return delta

    @property
    def percent_delta(self) -> np.ndarray:
        """100 * delta / original (0 where the original is 0)."""
        out = np.zeros_like(self.original)
        np.divide(100.0 * self.delta, self.original, out=out, where=self.original != 0)
        return out

    @property
    def max_drop(self) -> float:
        """Largest original - reduced over runs (0 if none drops)."""
        return float(max(0.0, np.max(-self.delta, initial=0.0)))

    @property
    def max_percent_drop(self) -> float:
        """Largest percentage drop over runs."""
        return float(max(0.0, np.max(-self.percent_delta, initial=0.0)))

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""
        return {
            "measure": self.measure,
            "by": self.by,
            "depth": self.depth,
            "depth_source": self.depth_source,
            "depth_inference": self.pool.inference(),
            "pool_depths": self.pool.to_dict(),
            "residual_lines": self.residual_lines,
            "residual_relevant": self.residual_relevant,
            "pooled": self.pooled,
            "tau_b": self.tau_b,
            "tau_ap": self.tau_ap,
            "max_drop": self.max_drop,
            "max_percent_drop": self.max_percent_drop,
            "units": [
                {
                    "unit": u,
                    "removed_lines": int(self.removed_lines[i]),
                    "removed_relevant": int(self.removed_relevant[i]),
                    "tau_b": float(self.unit_tau_b[i]),
                }
                for i, u in enumerate(self.units)
            ],
            "runs": [
                {
                    "run": r,
                    "unit": self.unit_of_run[i],
                    "original": float(self.original[i]),
                    "reduced": float(self.reduced[i]),
                    "delta": float(self.delta[i]),
                    "percent_delta": float(self.percent_delta[i]),
                    "rank_change": int(self.rank_change[i]),
                }
                for i, r in enumerate(self.runs)
            ],
        }


def leave_out(
    qrels: Qrels,
    runs: Sequence[RunTable] | PreparedRuns | RunBlocks,
    *,
    units: Sequence[str] | None = None,
    by: str = "run",
    measure: str = "AP",
    pooled: Sequence[str] | None = None,
    depth: PoolDepths | int | Mapping[str, int] | None = None,
    depth_source: str = "given",
    max_results: int = 1000,
    progress: Callable[[float], None] | None = None,
) -> LeaveOutResult:
    """Leave each unit out in turn. `units[i]` is run i's unit (its own name when None); `pooled` the runs that
    built the pool (all when None); `depth` the pool depth k: one for every topic, per topic ({topic: k}, the topics
    it lacks inferred), ready-made `PoolDepths`, or None to infer every topic's from the qrels (see
    `depth_inference`); `depth_source` names where a given depth came from ("given", "pool"). `runs` may be blocks
    of prepared runs (`pooled_lines.RunBlocks`), read twice: once for each line's pooled ranks, once to score each
    block without each unit's lines. `progress` is called with the share of the scoring done."""
    source = as_blocks(runs, max_results)
    names = source.names
    unit_of_run = list(names) if units is None else [str(u) for u in units]
    if len(unit_of_run) != len(names):
        raise ValueError("one unit per run is needed")
    distinct = list(dict.fromkeys(unit_of_run))
    code_of = {u: i for i, u in enumerate(distinct)}
    codes = np.array([code_of[u] for u in unit_of_run], dtype=np.int64)
    pooled_mask = run_mask(names, pooled)

    if not pooled_mask.any():
        raise ValueError("no pooled runs")
    lines = pooled_lines(source, qrels, pooled_mask, codes, kernel=fast_ap(measure))  # AP, all pooled: one pass
    pool = depth if isinstance(depth, PoolDepths) else lines.pool_depths(depth, given_source=depth_source)
    caps = pool.of(lines.topics)
    owner = lines.owner(caps)
    residual = lines.within(caps) == NEVER

    n_unit, n_run = len(distinct), len(names)
    removed = np.bincount(owner[owner >= 0], minlength=n_unit).astype(np.int64)
    removed_rel = np.bincount(owner[(owner >= 0) & lines.relevant], minlength=n_unit).astype(np.int64)
    left_out = np.flatnonzero(removed > 0).tolist()
    cuts: list[Callable[[], np.ndarray | None]] = [lambda: None]
    cuts += [functools.partial(np.not_equal, owner, u) for u in left_out]
    values = cut_scores(source, qrels, measure, cuts, progress, lines.kernel)
    full = values[0]
    unit_scores = np.repeat(full[None, :], n_unit, axis=0)
    unit_scores[left_out] = values[1:]
    unit_tau = np.array([tau_b(full, s) for s in unit_scores])
    reduced = unit_scores[codes, np.arange(n_run)]
    original_rank = 1 + np.sum(full[None, :] > full[:, None], axis=1)
    others = ~np.eye(n_run, dtype=bool)
    new_rank = 1 + np.sum((full[None, :] > reduced[:, None]) & others, axis=1)
    return LeaveOutResult(
        measure=resolve(measure).name,
        by=by,
        pool=pool,
        runs=names,
        pooled=[n for n, m in zip(names, pooled_mask.tolist(), strict=True) if m],
        unit_of_run=unit_of_run,
        units=distinct,
        removed_lines=removed,
        removed_relevant=removed_rel,
        unit_scores=unit_scores,
        unit_tau_b=unit_tau,
        original=full,
        reduced=reduced,
        rank_change=(new_rank - original_rank).astype(np.int64),
        tau_b=tau_b(full, reduced),
        tau_ap=tau_ap(full, reduced),
        residual_lines=int(residual.sum()),
        residual_relevant=int((residual & lines.relevant).sum()),
    )
