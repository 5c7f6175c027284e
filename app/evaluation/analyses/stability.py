"""Stability of system rankings under topic sampling (AxIoU paper, Fig. 6; Voorhees & Buckley 2002).

For each subset size s, `trials` seeded random topic subsets:
- *subset vs full*: tau_b between the ranking by the mean over s random topics and the ranking by all n topics
  (s = 1..n; s = n gives 1 unless the full ranking is constant);
- *split halves*: two disjoint random sets of s topics each, tau_b between their rankings (s = 1..n//2).
Trials whose ranking is constant (tau undefined) are left out of the mean and variance and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from app.evaluation.analyses.kendall import tau_b_batch
from app.evaluation.results import Results

_BATCH_CELLS = 4_000_000  # trials x runs x topics handled per block


@dataclass(frozen=True)
class StabilityResult:
    """Mean and variance of tau_b per subset size and measure."""

    measures: list[str]
    trials: int
    seed: int
    sizes: np.ndarray  # int64 [n_size] 1..n (subset vs full)
    full_mean: np.ndarray  # [n_measure, n_size]
    full_var: np.ndarray
    full_undefined: np.ndarray  # int64 [n_measure, n_size] trials with a constant ranking
    split_sizes: np.ndarray  # int64 [n_split] 1..n//2
    split_mean: np.ndarray  # [n_measure, n_split]
    split_var: np.ndarray
    split_undefined: np.ndarray

    def to_dict(self) -> dict:
        """Plain data for JSON."""

        def rows(sizes: np.ndarray, mean: np.ndarray, var: np.ndarray, undefined: np.ndarray) -> dict:
            return {
                m: [
                    {
                        "size": int(s),
                        "mean": float(mean[i, j]),
                        "var": float(var[i, j]),
                        "undefined": int(undefined[i, j]),
                    }
                    for j, s in enumerate(sizes.tolist())
                ]
                for i, m in enumerate(self.measures)
            }

        return {
            "trials": self.trials,
            "seed": self.seed,
            "subset_vs_full": rows(self.sizes, self.full_mean, self.full_var, self.full_undefined),
            "split_halves": rows(self.split_sizes, self.split_mean, self.split_var, self.split_undefined),
        }


def _summary(taus: np.ndarray) -> tuple[float, float, int]:
    defined = taus[~np.isnan(taus)]
    if len(defined) == 0:
        return float("nan"), float("nan"), len(taus)
    return float(defined.mean()), float(defined.var()), len(taus) - len(defined)


def _random_orders(rng: np.random.Generator, trials: int, n: int) -> np.ndarray:
    """[trials, n] independent random permutations of range(n)."""
    return np.argsort(rng.random((trials, n)), axis=1)


def stability(
    values: np.ndarray,
    measures: Sequence[str],
    *,
    trials: int = 1000,
    seed: int = 0,
    sizes: Sequence[int] | None = None,
) -> StabilityResult:
    """Topic-subset stability of `values` [n_run, n_measure, n_topic] (as Results.values; NaN topics count 0).

    `sizes` restricts the subset sizes (default 1..n and 1..n//2). Seeded: same seed, same numbers.
    """
    values = np.nan_to_num(np.asarray(values, dtype=np.float64))
    if values.ndim != 3:
        raise ValueError("values must be [n_run, n_measure, n_topic]")
    n_run, n_measure, n = values.shape
    if n < 1 or n_run < 2:
        raise ValueError("stability needs at least two runs and one topic")
    if trials < 1:
        raise ValueError("trials must be at least 1")
    wanted = sorted(set(range(1, n + 1) if sizes is None else (int(s) for s in sizes)))
    if any(s < 1 or s > n for s in wanted):
        raise ValueError(f"subset sizes must be in 1..{n}")
    full_sizes = np.array(wanted, dtype=np.int64)
    split_sizes = np.array([s for s in wanted if 2 * s <= n], dtype=np.int64)
    rng = np.random.default_rng(seed)
    full_means = values.mean(axis=2)  # [n_run, n_measure]
    by_measure = np.transpose(values, (1, 0, 2))  # [n_measure, n_run, n_topic]
    out = {key: np.full((n_measure, len(s)), np.nan) for key, s in (("fm", full_sizes), ("fv", full_sizes))}
    out |= {key: np.full((n_measure, len(split_sizes)), np.nan) for key in ("sm", "sv")}
    undefined_full = np.zeros((n_measure, len(full_sizes)), dtype=np.int64)
    undefined_split = np.zeros((n_measure, len(split_sizes)), dtype=np.int64)
    batch = max(1, _BATCH_CELLS // max(1, n_run * n * n_measure))
    split_index = {int(s): j for j, s in enumerate(split_sizes.tolist())}
    for j, s in enumerate(full_sizes.tolist()):
        full_taus, split_taus = [], []
        done = 0
        while done < trials:
            m = min(batch, trials - done)
            orders = _random_orders(rng, m, n)  # one permutation serves both analyses
            first = by_measure[:, :, orders[:, :s]].mean(axis=3)  # [n_measure, n_run, m]
            full_taus.append(tau_b_batch(np.moveaxis(first, 1, 2), full_means.T[:, None, :]))
            if s in split_index:
                second = by_measure[:, :, orders[:, s : 2 * s]].mean(axis=3)
                split_taus.append(tau_b_batch(np.moveaxis(first, 1, 2), np.moveaxis(second, 1, 2)))
            done += m
        taus = np.concatenate(full_taus, axis=1)  # [n_measure, trials]
        for i in range(n_measure):
            out["fm"][i, j], out["fv"][i, j], undefined_full[i, j] = _summary(taus[i])
        if s in split_index:
            taus = np.concatenate(split_taus, axis=1)
            k = split_index[s]
            for i in range(n_measure):
                out["sm"][i, k], out["sv"][i, k], undefined_split[i, k] = _summary(taus[i])
    return StabilityResult(
        measures=list(measures),
        trials=trials,
        seed=seed,
        sizes=full_sizes,
        full_mean=out["fm"],
        full_var=out["fv"],
        full_undefined=undefined_full,
        split_sizes=split_sizes,
        split_mean=out["sm"],
        split_var=out["sv"],
        split_undefined=undefined_split,
    )


def results_stability(results: Results, **options: object) -> StabilityResult:
    """`stability` of evaluation results (every measure in them)."""
    return stability(results.values, results.measures, **options)  # type: ignore[arg-type]
