"""Significance benchmark: seconds for every pair of runs (paired sign-flip randomization) and for the randomised
Tukey HSD, B = 10,000 resamples, at a few campaign sizes.

Scores are synthetic (runs whose means spread from 0.3 to 0.6, per-topic difficulty and noise, seeded). The leaderboard
and report compute both at publication: a campaign of 20 runs x 50 topics should take well under a second each (the
old test's bound was 10 s). The tests check the results (tests/evaluation/test_significance.py), never their time.

    .venv/bin/python scripts/bench/significance.py [--sizes 10x50 20x50 40x50] [--resamples 10000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.evaluation.statistics.significance import pairwise_randomization, randomised_tukey_hsd  # noqa: E402


def runs_with_spread(n_run: int, n_topic: int, seed: int) -> np.ndarray:
    """Scores of runs whose true means spread from 0.3 to 0.6, with per-topic difficulty and noise."""
    rng = np.random.default_rng(seed)
    topic = rng.normal(0.0, 0.1, n_topic)
    level = np.linspace(0.6, 0.3, n_run)
    return np.clip(level[:, None] + topic[None, :] + rng.normal(0.0, 0.1, (n_run, n_topic)), 0.0, 1.0)


def seconds(function, scores: np.ndarray, resamples: int) -> float:  # type: ignore[no-untyped-def]
    """Seconds one call takes."""
    start = time.perf_counter()
    function(scores, n_resamples=resamples)
    return time.perf_counter() - start


def main() -> None:
    """Print the seconds of both at each size."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=["10x50", "20x50", "40x50"], help="RUNSxTOPICS")
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    warm = runs_with_spread(3, 5, 0)  # first calls import and set up what later ones reuse: not timed
    pairwise_randomization(warm, n_resamples=100)
    randomised_tukey_hsd(warm, n_resamples=100)
    print(f"{'runs':>5} {'topics':>7} {'pairwise s':>11} {'tukey s':>8}")
    for size in args.sizes:
        n_run, n_topic = (int(x) for x in size.lower().split("x"))
        scores = runs_with_spread(n_run, n_topic, 5)
        pairwise = seconds(pairwise_randomization, scores, args.resamples)
        tukey = seconds(randomised_tukey_hsd, scores, args.resamples)
        print(f"{n_run:>5} {n_topic:>7} {pairwise:>11.2f} {tukey:>8.2f}")


if __name__ == "__main__":
    main()
