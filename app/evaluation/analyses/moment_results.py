"""Moment runs scored against moment ground truth as `Results`, so that every score-based analysis (agreement,
stability, ties, power) reads moment campaigns offline exactly as it reads TREC runs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from app.evaluation.moments import (
    MomentGroundTruth,
    MomentRunTable,
    ground_truth_segments,
    moment_relevance,
    moment_scores,
    parse_moment_measure,
    rank_moments,
)
from app.evaluation.results import Results


def moment_results(
    ground_truth: MomentGroundTruth, runs: Sequence[MomentRunTable], measures: Sequence[str], names: Sequence[str]
) -> Results:
    """Per-topic scores [run, measure, topic] of moment runs over every ground-truth topic (a missing topic is 0)."""
    specs = [parse_moment_measure(m) for m in measures]
    if not specs:
        raise ValueError("no moment measures given")
    if len(set(names)) != len(names):
        duplicates = sorted({n for n in names if list(names).count(n) > 1})
        raise ValueError(f"several runs are named {', '.join(duplicates)}")
    segments = ground_truth_segments(ground_truth)
    ranked = rank_moments(segments, runs, max(spec.k for spec in specs))
    scores = moment_scores(moment_relevance(ranked, segments), specs)
    values = np.stack([scores[spec.name] for spec in specs], axis=1)  # [run, measure, topic]
    return Results(
        runs=list(names),
        measures=[spec.name for spec in specs],
        topics=segments.topics.tolist(),
        values=values.astype(np.float64),
        aggregates=["mean"] * len(specs),
        answered=ranked.valid[:, :, 0] if ranked.valid.shape[2] else np.zeros(values.shape[::2], dtype=bool),
    )
