"""Stability of system rankings under topic sampling (AxIoU paper, Fig. 6; Voorhees & Buckley 2002).

For each subset size s, `trials` seeded random topic subsets:
- *subset vs full*: tau_b between the ranking by the mean over s random topics and the ranking by all n topics
  (s = n gives 1 unless the full ranking is constant);
- *split halves*: two disjoint random sets of s topics each, tau_b between their rankings (only sizes with 2s <= n).
Trials whose ranking is constant (tau undefined) are left out of the mean and variance and counted.

Cost: one trial's subsets are the s (and next s) smallest of n uniform keys (`np.argpartition`, a uniformly random
subset and a disjoint one), its means one row of a 0/1 selection matrix times the per-topic score matrix (a BLAS
product for a block of trials at once), and tau_b is computed for the whole block (`tau_b_batch`). The work per
size is O(trials x n) whatever s is: Charades-STA's 3,720 topics with the paper's 5,000 trials take seconds a
size (scripts/bench/analyses.py). Means are rounded to 12 decimals so that equal sums added in another order tie.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from app.evaluation.analyses.kendall import tau_b_batch
from app.evaluation.results import Results

Progress = Callable[[float], None]
_BATCH_CELLS = 2_000_000  # trials x topics (and trials x measures x run pairs) handled per block
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
            "n_topics": self.n_topics,
            "sizes": self.sizes.tolist(),
            "subset_vs_full": rows(self.sizes, self.full_mean, self.full_var, self.full_undefined),
            "split_halves": rows(self.split_sizes, self.split_mean, self.split_var, self.split_undefined),
        }


def default_sizes(n: int) -> list[int]:
    """Subset sizes when none are given: 1..n (SPEC 6); above 100 topics, 100 evenly spaced from 1 to n and n // 2."""
    if n <= MAX_DEFAULT_SIZES:
        return list(range(1, n + 1))
    return sorted({int(round(x)) for x in np.linspace(1, n, MAX_DEFAULT_SIZES)} | {n // 2})


def _summary(taus: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per row of taus [n_measure, trials]: mean and variance of the defined values, count of NaN."""
    defined = ~np.isnan(taus)
    count = defined.sum(axis=1)
    undefined = taus.shape[1] - count
    total = np.where(defined, taus, 0.0).sum(axis=1)
    mean = np.divide(total, count, out=np.full(len(count), np.nan), where=count > 0)
    squares = np.where(defined, (taus - mean[:, None]) ** 2, 0.0).sum(axis=1)
    var = np.divide(squares, count, out=np.full(len(count), np.nan), where=count > 0)
    return mean, var, undefined.astype(np.int64)


def subset_keys(rng: np.random.Generator, trials: int, n: int, size: int, split: bool) -> tuple[np.ndarray, ...]:
    """Random topic subsets of `size` for `trials` trials: the indices of the `size` smallest of n uniform keys
    (and, when `split`, of the next `size`): [trials, size] each, in no particular order."""
    keys = rng.random((trials, n))
    kth = [size - 1, 2 * size - 1] if split and 2 * size - 1 < n else [size - 1]
    part = np.argpartition(keys, kth, axis=1)
    if split:
        return part[:, :size], part[:, size : 2 * size]
    return (part[:, :size],)


def _subset_means(matrix: np.ndarray, chosen: np.ndarray, n: int) -> np.ndarray:
    """Means [rows, trials] of matrix [rows, n] over each trial's chosen topics (chosen [trials, s])."""
    trials, size = chosen.shape
    selection = np.zeros((trials, n))
    selection[np.repeat(np.arange(trials), size), chosen.reshape(-1)] = 1.0
    return np.round(matrix @ selection.T / size, 12)


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
    matrix = np.transpose(values, (1, 0, 2)).reshape(n_measure * n_run, n)  # rows: measure-major, then run
    full_means = np.round(matrix.mean(axis=1), 12).reshape(n_measure, 1, n_run)
    pairs = n_run * (n_run - 1) // 2
    batch = max(1, _BATCH_CELLS // max(n, n_measure * pairs, 1))
    shape_full = (n_measure, len(full_sizes))
    full_mean, full_var = np.full(shape_full, np.nan), np.full(shape_full, np.nan)
    full_undefined = np.zeros(shape_full, dtype=np.int64)
    shape_split = (n_measure, len(split_sizes))
    split_mean, split_var = np.full(shape_split, np.nan), np.full(shape_split, np.nan)
    split_undefined = np.zeros(shape_split, dtype=np.int64)
    split_index = {int(s): k for k, s in enumerate(split_sizes.tolist())}
    total_work, done_work = len(full_sizes) * trials, 0
    for j, s in enumerate(full_sizes.tolist()):
        split = s in split_index
        full_taus, split_taus = [], []
        done = 0
        while done < trials:
            m = min(batch, trials - done)
            subsets = subset_keys(rng, m, n, s, split)
            first = _subset_means(matrix, subsets[0], n).reshape(n_measure, n_run, m).transpose(0, 2, 1)
            full_taus.append(tau_b_batch(first, full_means))  # [n_measure, m]
            if split:
                second = _subset_means(matrix, subsets[1], n).reshape(n_measure, n_run, m).transpose(0, 2, 1)
                split_taus.append(tau_b_batch(first, second))
            done += m
            done_work += m
            if progress is not None:
                progress(done_work / total_work)
        full_mean[:, j], full_var[:, j], full_undefined[:, j] = _summary(np.concatenate(full_taus, axis=1))
        if split:
            k = split_index[s]
            split_mean[:, k], split_var[:, k], split_undefined[:, k] = _summary(np.concatenate(split_taus, axis=1))
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
    )


def results_stability(results: Results, **options: object) -> StabilityResult:
    """`stability` of evaluation results (every measure in them)."""
    return stability(results.values, results.measures, **options)  # type: ignore[arg-type]
