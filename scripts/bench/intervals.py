"""Benchmark: every run's bootstrap interval at once (`statistics.intervals.mean_intervals`) against
scipy.stats.bootstrap called run by run, the same draws and the same numbers, in one process.

    .venv/bin/python scripts/bench/intervals.py [--runs 150] [--topics 50] [--resamples 10000] [--method percentile]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.stats

from app.evaluation.statistics.intervals import mean_intervals


def main() -> None:
    """Time both sides on the same seeded scores, check they agree, print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--method", choices=["percentile", "BCa"], default="percentile")
    args = parser.parse_args()
    scores = np.random.default_rng(0).random((args.runs, args.topics)) ** 2
    start = time.perf_counter()
    ours = mean_intervals(scores, method=args.method, n_resamples=args.resamples, seed=1)
    ours_s = time.perf_counter() - start
    start = time.perf_counter()
    low, high = np.empty(args.runs), np.empty(args.runs)
    for run in range(args.runs):
        rng = np.random.default_rng(1)
        method = args.method.lower()
        found = scipy.stats.bootstrap((scores[run],), np.mean, n_resamples=args.resamples, rng=rng, method=method)
        low[run], high[run] = found.confidence_interval
    scipy_s = time.perf_counter() - start
    gap = max(np.abs(ours.low - low).max(), np.abs(ours.high - high).max())
    print(f"{args.runs} runs x {args.topics} topics, B = {args.resamples}, {args.method}; largest difference {gap:.1e}")
    print(f"intervals: ours {ours_s * 1000:.0f} ms, scipy.stats.bootstrap per run {scipy_s * 1000:.0f} ms, "
          f"ratio {ours_s / scipy_s:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
