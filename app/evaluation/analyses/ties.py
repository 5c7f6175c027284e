"""All-tied query ratio: the share of topics on which every system scores the same (they cannot be told apart)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.evaluation.results import Results


def all_tied_ratio(values: np.ndarray, *, atol: float = 1e-12) -> float:
    """Share of topics (columns of values [n_run, n_topic]) whose scores are all equal within atol; NaN ignored."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] == 0:
        raise ValueError("values must be [n_run, n_topic] with at least one topic")
    spread = np.nanmax(values, axis=0) - np.nanmin(values, axis=0)
    return float(np.mean(spread <= atol))


def all_tied_ratios(results: Results) -> dict[str, float]:
    """{measure: all-tied topic ratio} over the results' runs and topics."""
    return {m: all_tied_ratio(results.values[:, i, :]) for i, m in enumerate(results.measures)}


def ties_result(measures: Sequence[str], values: np.ndarray) -> dict[str, object]:
    """The ties analysis as plain data (CLI and REST alike): values [run, measure, topic] -> ratio per measure."""
    ratios = {m: all_tied_ratio(values[:, i, :]) for i, m in enumerate(measures)}
    return {"ratios": ratios, "n_topics": int(values.shape[2]), "n_runs": int(values.shape[0])}
