"""Measure agreement (AxIoU paper, Fig. 4): tau_b between the system rankings of every pair of measures, and tau_AP
(Yilmaz et al. 2008: swaps near the top cost more), which is not symmetric: row = the reference measure's ranking,
column = the ranking compared with it.

Counts (`num_ret`, `num_rel`, `num_rel_ret`, `inum_rel`, ...: the measures the registry totals over topics instead
of averaging) are left out of agreement and ties unless asked for by name: they do not rank systems by quality (the
number of relevant documents is the same for every run, a NaN row in the matrix; every topic ties on it), and
`trecpool eval`'s 31 default measures would give a 31 x 31 matrix, three of its rows counts."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.evaluation.analyses.kendall import tau_ap_batch, tau_b_batch
from app.evaluation.measures.registry import aggregate_of
from app.evaluation.results import Results

COUNT_AGGREGATES = ("sum", "sum_all")  # the registry's aggregates of counts: `all` is their total


def is_count(measure: str) -> bool:
    """Whether `measure` is a count (the registry totals it over topics: num_ret, num_rel, inum_rel, ...)."""
    return aggregate_of(measure) in COUNT_AGGREGATES


def readable_measures(measures: Sequence[str]) -> list[str]:
    """The measures agreement and ties use when none are named: all of `measures` but the counts."""
    return [m for m in measures if not is_count(m)]


def agreement_matrix(means: np.ndarray) -> np.ndarray:
    """[n_measure, n_measure] tau_b between the columns of `means` [n_run, n_measure] (diagonal 1 unless constant)."""
    means = np.asarray(means, dtype=np.float64)
    if means.ndim != 2:
        raise ValueError("means must be [n_run, n_measure]")
    columns = means.T
    return tau_b_batch(columns[:, None, :], columns[None, :, :])


def agreement_tau_ap(means: np.ndarray) -> np.ndarray:
    """[n_measure, n_measure] tau_AP of the ranking by column j (estimate) against the one by column i (reference)."""
    means = np.asarray(means, dtype=np.float64)
    if means.ndim != 2:
        raise ValueError("means must be [n_run, n_measure]")
    columns = means.T
    return tau_ap_batch(columns[:, None, :], columns[None, :, :])


def measure_agreement(results: Results, measures: Sequence[str] | None = None) -> tuple[list[str], np.ndarray]:
    """The measures and their pairwise tau_b matrix from evaluation results (means over topics)."""
    names = list(results.measures) if measures is None else list(measures)
    columns = [results.measures.index(m) for m in names]
    return names, agreement_matrix(results.mean()[:, columns])


def agreement_result(measures: Sequence[str], means: np.ndarray) -> dict[str, object]:
    """The agreement analysis as plain data (CLI and REST alike): means [n_run, n_measure] -> the tau_b matrix and
    the tau_AP matrix (row = reference)."""
    return {
        "measures": list(measures),
        "tau_b": agreement_matrix(means).tolist(),
        "tau_ap": agreement_tau_ap(means).tolist(),
    }
