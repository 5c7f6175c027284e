"""Evaluating moment runs against moment ground truth: per-topic scores and their mean over all topics."""

from __future__ import annotations

import gzip
import os
from collections.abc import Sequence

import numpy as np

from app.evaluation.errors import MeasureError
from app.evaluation.moments.measures import moment_scores, parse_moment_measure
from app.evaluation.moments.parse import (
    MomentGroundTruth,
    MomentRunTable,
    parse_moment_ground_truth,
    parse_moment_run,
)
from app.evaluation.moments.relevance import ground_truth_segments, moment_relevance, rank_moments

DEFAULT_MOMENT_MEASURES: tuple[str, ...] = (
    "AxIoU@1",
    "AxIoU@5",
    "AxIoU@10",
    *(f"R@{k},{t}" for k in (1, 5, 10) for t in ("0.3", "0.5", "0.7")),
    "mAP",
)


def _run_name(run: MomentRunTable, i: int, run_names: Sequence[str] | None) -> str:
    """The run's tag, else the given name, else run{i}."""
    if run.tag:
        return run.tag
    if run_names is not None and i < len(run_names):
        return run_names[i]
    return f"run{i}"


def evaluate_moments(
    ground_truth: MomentGroundTruth,
    runs: Sequence[MomentRunTable],
    measures: Sequence[str],
    *,
    run_names: Sequence[str] | None = None,
    run_topics_only: bool = False,
) -> dict[str, dict[str, dict[str, float]]]:
    """{run: {measure: {topic: value, ..., "all": mean over every ground-truth topic}}}; missing topics score 0.

    With `run_topics_only`, only the ground-truth topics the run answers are listed and averaged.
    """
    specs = [parse_moment_measure(m) for m in measures]
    if not specs:
        raise MeasureError("no moment measures given")
    names = [_run_name(run, i, run_names) for i, run in enumerate(runs)]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"several runs are named {', '.join(map(repr, duplicates))}")
    segments = ground_truth_segments(ground_truth)
    topics = segments.topics.tolist()
    depth = max(spec.k for spec in specs)
    result: dict[str, dict[str, dict[str, float]]] = {}
    for name, run in zip(names, runs, strict=True):
        ranked = rank_moments(segments, [run], depth)
        scores = moment_scores(moment_relevance(ranked, segments), specs)
        keep = ranked.valid[0, :, 0] if run_topics_only else np.ones(len(topics), dtype=bool)
        kept = [t for t, k in zip(topics, keep.tolist(), strict=True) if k]
        per_run: dict[str, dict[str, float]] = {}
        for spec in specs:
            values = scores[spec.name][0][keep]
            per_topic = dict(zip(kept, values.tolist(), strict=True))
            per_topic["all"] = float(np.mean(values)) if len(values) else 0.0
            per_run[spec.name] = per_topic
        result[name] = per_run
    return result


def _read(path: str) -> bytes:
    """The bytes of a file, gunzipped when it is gzip-compressed."""
    with open(path, "rb") as handle:
        data = handle.read()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def evaluate_moment_files(
    ground_truth_path: str, run_paths: list[str], measures: list[str] | None
) -> dict[str, dict[str, dict[str, float]]]:
    """Evaluate moment run files (plain or .gz) against a ground-truth file; runs named by tag, else basename."""
    ground_truth = parse_moment_ground_truth(_read(ground_truth_path), source=ground_truth_path)
    runs = [parse_moment_run(_read(path), source=path) for path in run_paths]
    names = [os.path.basename(path) for path in run_paths]
    chosen = list(measures) if measures else list(DEFAULT_MOMENT_MEASURES)
    return evaluate_moments(ground_truth, runs, chosen, run_names=names)
