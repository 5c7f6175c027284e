"""Stability of system rankings under topic sampling (AxIoU paper, Fig. 6; Voorhees & Buckley 2002).

For each subset size s, `trials` seeded random topic subsets:
- *subset vs full*: tau_b between the ranking by the mean over s random topics and the ranking by all n topics
  (s = n gives 1 unless the full ranking is constant), and tau_AP of the subset's ranking against the full one;
- *split halves*: two disjoint random sets of s topics each, tau_b between their rankings (only sizes with 2s <= n),
  and the symmetric tau_AP (neither half is the reference).
Trials whose ranking is constant (tau_b undefined) are left out of tau_b's mean and variance and counted; tau_AP is
always defined (ties broken as `kendall.tau_ap` says).

Sampling: trial t draws one uniformly random order of the n topics (`trial_orders`); its subset of size s is the
first s topics of that order and its other half the next s. Each size's subsets are therefore uniformly random and
the two halves disjoint, exactly as with fresh draws per size; what the sizes share is the trial's order (common
random numbers), so neighbouring sizes' curves move together instead of each carrying its own sampling noise.

Cost: per block of trials, the per-topic score matrix is gathered in each trial's order and summed cumulatively
once ([trials, n, measures x runs]); the sums over the first s (and the next s) topics of every size are then
read off those prefix sums, and tau_b is computed for all sizes and trials at once (`tau_b_batch`). The work is
O(trials x n x measures x runs) for all sizes together: Charades-STA's 3,720 topics with 6 systems, 4 measures
and the paper's 5,000 trials take seconds (scripts/bench/analyses.py). Means are rounded to 12 decimals so that
equal sums added in another order tie (0/1 measures sum exactly).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.analyses.kendall import tau_ap_batch, tau_ap_symmetric_batch, tau_b_batch
from app.evaluation.results import Results

Progress = Callable[[float], None]
_BLOCK_CELLS = 4_000_000  # trials x topics x (measures x runs) gathered per block (32 MB of float64)
_TAU_CELLS = 2_000_000  # measures x sizes x trials x run pairs compared at once
DEFAULT_TRIALS = 5000  # the AxIoU paper's trials per subset size
MAX_DEFAULT_SIZES = 100  # more topics than this: 100 evenly spaced sizes by default, not all of 1..n


@dataclass(frozen=True)
class StabilityResult:
    """Mean and variance of tau_b per subset size and measure."""

    measures: list[str]
    trials: int
    seed: int
    n_topics: int
    sizes: np.ndarray  # int64 [n_size] (subset vs full)
    full_mean: np.ndarray  # [n_measure, n_size]
    full_var: np.ndarray
    full_undefined: np.ndarray  # int64 [n_measure, n_size] trials with a constant ranking
    split_sizes: np.ndarray  # int64 [n_split]: the sizes with 2s <= n
    split_mean: np.ndarray  # [n_measure, n_split]
    split_var: np.ndarray
    split_undefined: np.ndarray
    full_tau_ap_mean: np.ndarray  # [n_measure, n_size]: tau_AP of the subset's ranking against the full one
    full_tau_ap_var: np.ndarray
    split_tau_ap_mean: np.ndarray  # [n_measure, n_split]: symmetric tau_AP between the halves
    split_tau_ap_var: np.ndarray

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON."""

        def rows(
            sizes: np.ndarray,
            mean: np.ndarray,
            var: np.ndarray,
            undefined: np.ndarray,
            ap_mean: np.ndarray,
            ap_var: np.ndarray,
        ) -> dict[str, Any]:
            return {
                m: [
                    {
                        "size": int(s),
                        "mean": float(mean[i, j]),
                        "var": float(var[i, j]),
                        "undefined": int(undefined[i, j]),
                        "tau_ap_mean": float(ap_mean[i, j]),
                        "tau_ap_var": float(ap_var[i, j]),
                    }
                    for j, s in enumerate(sizes.tolist())
                ]
                for i, m in enumerate(self.measures)
            }

        return {
            "trials": self.trials,
            "seed": self.seed,
            "n_topics": self.n_topics,
            "sizes": self.sizes.tolist(),
            "subset_vs_full": rows(
                self.sizes,
                self.full_mean,
                self.full_var,
                self.full_undefined,
                self.full_tau_ap_mean,
                self.full_tau_ap_var,
            ),
            "split_halves": rows(
                self.split_sizes,
                self.split_mean,
                self.split_var,
                self.split_undefined,
                self.split_tau_ap_mean,
                self.split_tau_ap_var,
            ),
        }


def default_sizes(n: int) -> list[int]:
    """Subset sizes when none are given: 1..n (SPEC 6); above 100 topics, 100 evenly spaced from 1 to n and n // 2."""
    if n <= MAX_DEFAULT_SIZES:
        return list(range(1, n + 1))
    return sorted({int(round(x)) for x in np.linspace(1, n, MAX_DEFAULT_SIZES)} | {n // 2})


def _summary(taus: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Over the last axis of taus [..., trials]: mean and variance of the defined values, count of NaN."""
    defined = ~np.isnan(taus)
    count = defined.sum(axis=-1)
    undefined = taus.shape[-1] - count
    total = np.where(defined, taus, 0.0).sum(axis=-1)
    mean = np.divide(total, count, out=np.full(count.shape, np.nan), where=count > 0)
    squares = np.where(defined, (taus - mean[..., None]) ** 2, 0.0).sum(axis=-1)
    var = np.divide(squares, count, out=np.full(count.shape, np.nan), where=count > 0)
    return mean, var, undefined.astype(np.int64)


def trial_orders(rng: np.random.Generator, trials: int, n: int) -> np.ndarray:
    """[trials, n] one uniformly random order of the n topics per trial (argsort of uniform keys)."""
    return np.argsort(rng.random((trials, n)), axis=1)


def _size_means(
    columns: np.ndarray, orders: np.ndarray, sizes: np.ndarray, split: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Means over each trial's first s topics and over its next s, for every size s.

    columns [n, k] per-topic scores (k = measures x runs), orders [trials, n]; returns first [trials, n_size, k] and
    second [trials, n_split, k] (the sizes where `split`), rounded to 12 decimals.
    """
    halves = sizes[split]
    ends = np.unique(np.concatenate([sizes, 2 * halves]))  # the prefix lengths needed, ascending
    gathered = columns[orders[:, : ends[-1]]]  # [trials, longest prefix, k]
    starts = np.concatenate([[0], ends[:-1]])
    prefix = np.cumsum(np.add.reduceat(gathered, starts, axis=1), axis=1)  # [trials, len(ends), k]: sums to each end
    first_sums = prefix[:, np.searchsorted(ends, sizes), :]
    second_sums = prefix[:, np.searchsorted(ends, 2 * halves), :] - prefix[:, np.searchsorted(ends, halves), :]
    first = np.round(first_sums / sizes[None, :, None], 12)
    second = np.round(second_sums / halves[None, :, None], 12)
    return first, second


def _taus(x: np.ndarray, y: np.ndarray, n_measure: int, *, halves: bool) -> tuple[np.ndarray, np.ndarray]:
    """tau_b and tau_AP [n_measure, n_size, trials]: x [trials, n_size, n_measure * n_run] against y, alike or
    [1, 1, ...]. tau_AP is x's ranking against y's (the reference), or the symmetric one between `halves`."""
    trials, n_size, k = x.shape
    n_run = k // n_measure
    x = x.reshape(trials, n_size, n_measure, n_run).transpose(2, 1, 0, 3)  # [measure, size, trial, run]
    y = y.reshape(y.shape[0], y.shape[1], n_measure, n_run).transpose(2, 1, 0, 3)
    pairs = max(1, n_run * n_run)
    step = max(1, _TAU_CELLS // max(1, n_measure * trials * pairs))
    out = np.empty((n_measure, n_size, trials))
    ap = np.empty((n_measure, n_size, trials))
    for start in range(0, n_size, step):
        part = slice(start, start + step)
        other = y[:, part] if y.shape[1] == n_size else y  # else broadcast
        out[:, part] = tau_b_batch(x[:, part], other)
        ap[:, part] = tau_ap_symmetric_batch(x[:, part], other) if halves else tau_ap_batch(other, x[:, part])
    return out, ap


def stability(
    values: np.ndarray,
    measures: Sequence[str],
    *,
    trials: int = DEFAULT_TRIALS,
    seed: int = 0,
    sizes: Sequence[int] | None = None,
    progress: Progress | None = None,
) -> StabilityResult:
    """Topic-subset stability of `values` [n_run, n_measure, n_topic] (as Results.values; NaN topics count 0).

    `sizes` are the subset sizes (default `default_sizes(n)`); split halves use those with 2s <= n. Seeded: same
    seed, same numbers. `progress` is called with the share of the work done after each block of trials.
    """
    values = np.nan_to_num(np.asarray(values, dtype=np.float64))
    if values.ndim != 3:
        raise ValueError("values must be [n_run, n_measure, n_topic]")
    n_run, n_measure, n = values.shape
    if n < 1 or n_run < 2:
        raise ValueError("stability needs at least two runs and one topic")
    if trials < 1:
        raise ValueError("trials must be at least 1")
    wanted = sorted(set(default_sizes(n) if sizes is None else (int(s) for s in sizes)))
    if not wanted or wanted[0] < 1 or wanted[-1] > n:
        raise ValueError(f"subset sizes must be in 1..{n} (the number of topics)")
    full_sizes = np.array(wanted, dtype=np.int64)
    split_sizes = np.array([s for s in wanted if 2 * s <= n], dtype=np.int64)
    rng = np.random.default_rng(seed)
    columns = np.ascontiguousarray(np.transpose(values, (2, 1, 0)).reshape(n, n_measure * n_run))  # measure-major
    full_means = np.round(columns.mean(axis=0), 12)[None, None, :]
    split = 2 * full_sizes <= n
    block = max(1, _BLOCK_CELLS // max(1, n * n_measure * n_run))
    full_taus = np.empty((n_measure, len(full_sizes), trials))
    split_taus = np.empty((n_measure, len(split_sizes), trials))
    full_aps, split_aps = np.empty_like(full_taus), np.empty_like(split_taus)
    done = 0
    while done < trials:
        m = min(block, trials - done)
        first, second = _size_means(columns, trial_orders(rng, m, n), full_sizes, split)
        block_of = slice(done, done + m)
        full_taus[:, :, block_of], full_aps[:, :, block_of] = _taus(first, full_means, n_measure, halves=False)
        if len(split_sizes):
            split_taus[:, :, block_of], split_aps[:, :, block_of] = _taus(
                first[:, split], second, n_measure, halves=True
            )
        done += m
        if progress is not None:
            progress(done / trials)
    full_mean, full_var, full_undefined = _summary(full_taus)
    split_mean, split_var, split_undefined = _summary(split_taus)
    full_ap_mean, full_ap_var, _ = _summary(full_aps)
    split_ap_mean, split_ap_var, _ = _summary(split_aps)
    return StabilityResult(
        measures=list(measures),
        trials=trials,
        seed=seed,
        n_topics=n,
        sizes=full_sizes,
        full_mean=full_mean,
        full_var=full_var,
        full_undefined=full_undefined,
        split_sizes=split_sizes,
        split_mean=split_mean,
        split_var=split_var,
        split_undefined=split_undefined,
        full_tau_ap_mean=full_ap_mean,
        full_tau_ap_var=full_ap_var,
        split_tau_ap_mean=split_ap_mean,
        split_tau_ap_var=split_ap_var,
    )


def results_stability(
    results: Results,
    *,
    trials: int = DEFAULT_TRIALS,
    seed: int = 0,
    sizes: Sequence[int] | None = None,
    progress: Progress | None = None,
) -> StabilityResult:
    """`stability` of evaluation results (every measure in them)."""
    return stability(results.values, results.measures, trials=trials, seed=seed, sizes=sizes, progress=progress)
