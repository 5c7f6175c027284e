"""Swap rates and the minimum detectable difference (Voorhees & Buckley, SIGIR 2002; Sanderson & Zobel, SIGIR 2005).

For each topic-set size s (2s <= n topics) and each of `trials` seeded trials, two disjoint random sets of s topics
are drawn; every pair of runs is compared on both. The difference of the pair's mean scores on the first set,
|d_A|, puts the comparison in a bin of width `bin_width` (absolute, or relative to the larger of the two means with
`relative`, as Sanderson & Zobel); it is a *swap* when the second set orders the pair the other way (d_A * d_B < 0).
Pairs tied on the first set (d_A = 0) order nothing and are not counted; a tie on the second set is not a swap.
Means are rounded to 12 decimals so that equal sums added in another order tie.

The swap rate of a bin is its swaps over its comparisons. The minimum detectable difference at size s is the lower
edge of the first bin from which every bin with at least `min_comparisons` comparisons has a swap rate below
`threshold` (5 %): 0 when no bin reaches the threshold, NaN when the last such bin does. By default a bin needs
10 comparisons to count: on TREC-COVID round 1 (AP, 1,000 trials) a far bin of 3-topic sets with one swap in two
comparisons would otherwise put the difference at 0.58 instead of 0.21.

Cost: one trial's two sets are the s and next s smallest of n uniform keys (`np.argpartition`); a block of trials'
means is one selection-matrix product and the pair differences one fancy-indexing pass, binned with `np.bincount`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.evaluation.analyses.lines import GM_FLOOR

Progress = Callable[[float], None]
DEFAULT_TRIALS = 1000
MIN_COMPARISONS = 10  # a bin with fewer comparisons cannot tell 5 % (one swap in 9 is 11 %): not trusted
_BATCH_CELLS = 2_000_000  # trials x max(topics, run pairs) per block


@dataclass(frozen=True)
class SwapRateResult:
    """Comparisons and swaps per topic-set size and difference bin, and the minimum detectable difference."""

    measure: str
    runs: list[str]
    trials: int
    seed: int
    n_topics: int
    bin_width: float
    relative: bool
    threshold: float
    min_comparisons: int
    sizes: np.ndarray  # int64 [n_size]
    comparisons: np.ndarray  # int64 [n_size, n_bin]
    swaps: np.ndarray  # int64 [n_size, n_bin]
    mdd: np.ndarray  # float64 [n_size]

    @property
    def edges(self) -> np.ndarray:
        """Lower edge of each bin [n_bin]."""
        return np.arange(self.comparisons.shape[1]) * self.bin_width

    @property
    def rate(self) -> np.ndarray:
        """Swap rate per size and bin (NaN for an empty bin)."""
        rate: np.ndarray = np.divide(
            self.swaps, self.comparisons, out=np.full(self.swaps.shape, np.nan), where=self.comparisons > 0
        )
        return rate

    def to_dict(self) -> dict[str, Any]:
        """Plain data for JSON: per size, the non-empty bins and the minimum detectable difference."""
        rate, edges = self.rate, self.edges
        return {
            "measure": self.measure,
            "runs": self.runs,
            "trials": self.trials,
            "seed": self.seed,
            "n_topics": self.n_topics,
            "bin_width": self.bin_width,
            "relative": self.relative,
            "threshold": self.threshold,
            "min_comparisons": self.min_comparisons,
            "sizes": [
                {
                    "size": int(s),
                    "mdd": None if np.isnan(self.mdd[i]) else float(self.mdd[i]),
                    "comparisons": int(self.comparisons[i].sum()),
                    "swaps": int(self.swaps[i].sum()),
                    "bins": [
                        {
                            "difference": round(float(edges[b]), 12),
                            "comparisons": int(self.comparisons[i, b]),
                            "swaps": int(self.swaps[i, b]),
                            "rate": float(rate[i, b]),
                        }
                        for b in np.flatnonzero(self.comparisons[i] > 0).tolist()
                    ],
                }
                for i, s in enumerate(self.sizes.tolist())
            ],
        }


def minimum_detectable_difference(
    comparisons: np.ndarray, swaps: np.ndarray, bin_width: float, threshold: float = 0.05, min_comparisons: int = 1
) -> float:
    """Lower edge of the first bin after the last bin (with >= min_comparisons) whose swap rate is >= threshold."""
    comparisons, swaps = np.asarray(comparisons), np.asarray(swaps)
    counted = comparisons >= max(min_comparisons, 1)
    if not counted.any():
        return float("nan")
    rate = np.divide(swaps, comparisons, out=np.zeros(len(comparisons)), where=counted)
    failing = np.flatnonzero(counted & (rate >= threshold))
    if len(failing) == 0:
        return 0.0
    last = int(failing[-1])
    if not counted[last + 1 :].any():
        return float("nan")
    return round((last + 1) * bin_width, 12)


def split_means(matrix: np.ndarray, rng: np.random.Generator, trials: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Means [n_run, trials] of matrix [n_run, n] over two disjoint random sets of `size` topics per trial."""
    n = matrix.shape[1]
    keys = rng.random((trials, n))
    kth = [size - 1, 2 * size - 1] if 2 * size < n else [size - 1]
    part = np.argpartition(keys, kth, axis=1)
    out = []
    for chosen in (part[:, :size], part[:, size : 2 * size]):
        selection = np.zeros((trials, n))
        selection[np.repeat(np.arange(trials), size), chosen.reshape(-1)] = 1.0
        out.append(np.round(matrix @ selection.T / size, 12))
    return out[0], out[1]


def swap_rates(
    scores: np.ndarray,
    runs: Sequence[str],
    *,
    measure: str = "",
    sizes: Sequence[int] | None = None,
    trials: int = DEFAULT_TRIALS,
    seed: int = 0,
    bin_width: float = 0.01,
    relative: bool = False,
    threshold: float = 0.05,
    min_comparisons: int = MIN_COMPARISONS,
    aggregate: str = "mean",
    progress: Progress | None = None,
) -> SwapRateResult:
    """Swap rate per difference bin and minimum detectable difference for topic-set sizes (default 1..n // 2).

    `scores` is [n_run, n_topic] (NaN counts 0, as in the means). `aggregate` is how the measure averages topics,
    as the registry names it: "gm" compares geometric means (each value floored at 1e-5, as trec_eval's gm_map),
    anything else arithmetic means. Seeded: same seed, same numbers.
    """
    scores = np.nan_to_num(np.asarray(scores, dtype=np.float64))
    if scores.ndim != 2 or scores.shape[0] != len(runs):
        raise ValueError("scores must be [n_run, n_topic], one row per run")
    n_run, n = scores.shape
    if n_run < 2 or n < 2:
        raise ValueError("swap rates need at least two runs and two topics")
    if trials < 1:
        raise ValueError("trials must be at least 1")
    if not bin_width > 0:
        raise ValueError("bin_width must be positive")
    if relative and (scores < 0).any():
        raise ValueError("relative differences need scores >= 0")
    wanted = sorted({int(s) for s in (range(1, n // 2 + 1) if sizes is None else sizes)})
    if not wanted or wanted[0] < 1 or 2 * wanted[-1] > n:
        raise ValueError(f"topic-set sizes must be in 1..{n // 2} (two disjoint sets of n = {n} topics)")
    logs = np.log(np.maximum(scores, GM_FLOOR)) if aggregate == "gm" else scores
    span = 1.0 if relative else float(scores.max() - scores.min())
    n_bin = int(np.floor(span / bin_width + 1e-9)) + 1
    first, second = np.triu_indices(n_run, k=1)
    batch = max(1, _BATCH_CELLS // max(n, len(first)))
    rng = np.random.default_rng(seed)
    comparisons = np.zeros((len(wanted), n_bin), dtype=np.int64)
    swaps = np.zeros((len(wanted), n_bin), dtype=np.int64)
    total, done = len(wanted) * trials, 0
    for k, size in enumerate(wanted):
        left = trials
        while left:
            m = min(batch, left)
            if aggregate == "gm":
                a, b = (np.exp(part) for part in split_means(logs, rng, m, size))
            else:
                a, b = split_means(scores, rng, m, size)
            d_a, d_b = a[first] - a[second], b[first] - b[second]  # [pairs, m]
            difference = np.abs(d_a)
            if relative:
                larger = np.maximum(a[first], a[second])
                difference = np.divide(difference, larger, out=np.zeros(difference.shape), where=larger > 0)
            ordered = d_a != 0
            index = np.minimum(np.floor(difference[ordered] / bin_width + 1e-9).astype(np.int64), n_bin - 1)
            comparisons[k] += np.bincount(index, minlength=n_bin)
            swaps[k] += np.bincount(index, weights=(d_a * d_b < 0)[ordered], minlength=n_bin).astype(np.int64)
            left -= m
            done += m
            if progress is not None:
                progress(done / total)
    mdd = np.array(
        [
            minimum_detectable_difference(comparisons[k], swaps[k], bin_width, threshold, min_comparisons)
            for k in range(len(wanted))
        ]
    )
    return SwapRateResult(
        measure=measure,
        runs=list(runs),
        trials=trials,
        seed=seed,
        n_topics=n,
        bin_width=bin_width,
        relative=relative,
        threshold=threshold,
        min_comparisons=min_comparisons,
        sizes=np.array(wanted, dtype=np.int64),
        comparisons=comparisons,
        swaps=swaps,
        mdd=mdd,
    )
