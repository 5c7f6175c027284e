"""Campaign-analysis figures draw from the analyses' JSON forms (None included) and show the numbers they are given."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.evaluation.analyses.efficiency import score_vs_time
from app.evaluation.analyses.judged_depth import judged_fraction
from app.evaluation.analyses.moment_effectiveness import moment_effectiveness
from app.evaluation.analyses.novelty import unique_relevant
from app.evaluation.analyses.qrels_comparison import compare_qrels
from app.evaluation.analyses.strata import stratum_summary
from app.evaluation.analyses.swap_rate import swap_rates
from app.evaluation.analyses.topic_comparison import topic_comparison
from app.evaluation.records import Qrels
from app.figures import campaign_analyses as figures
from app.figures.analyses import render
from tests.evaluation.analyses.brute import random_collection


def _json(data: dict) -> dict:
    """What a stored result reads back as (NaN as None)."""
    return json.loads(json.dumps(data))


@pytest.fixture(scope="module")
def stored() -> dict[str, dict]:
    runs, qrels = random_collection(2, n_run=5, n_topic=4)
    names = [r.tag for r in runs]
    rng = np.random.default_rng(0)
    scores = rng.random((5, 6))
    scores[1, 2] = np.nan
    strata = Qrels(
        qrels.topics,
        qrels.docs,
        np.where(rng.random(len(qrels)) < 0.3, -1, qrels.grades),
        strata=np.where(rng.random(len(qrels)) < 0.5, 1, 2),
    )
    second = Qrels(
        qrels.topics, qrels.docs, np.where(rng.random(len(qrels)) < 0.2, 1 - (qrels.grades >= 1), qrels.grades)
    )
    return {
        "judged-fraction": judged_fraction(strata, runs, depths=[1, 5, 10, 25]).to_dict(),
        "run-vs-median-best": topic_comparison(names, [f"t{i}" for i in range(6)], scores, measure="AP").run("run1"),
        "unique-hits": unique_relevant(qrels, runs, ["A", "A", "B", "C", "C"]).to_dict(),
        "efficiency": score_vs_time(names, scores.mean(axis=1), np.array([1.0, 30.0, np.nan, 400.0, 9.0])).to_dict(),
        "inferred-relevant": stratum_summary(strata).to_dict(),
        "strata": stratum_summary(strata).to_dict(),
        "swap-rate": swap_rates(scores, names, trials=30, seed=1, bin_width=0.05).to_dict(),
        "qrels-versions": compare_qrels(["r1", "r2"], [qrels, second], runs).to_dict(),
        "moment-effectiveness": moment_effectiveness(
            ["blind", "2dtan"], ["R@1,0.5", "R@5,0.7", "AxIoU@5"], np.array([[0.2, 0.4, 0.9], [0.5, 0.3, 0.1]])
        ).to_dict(),
    }


@pytest.mark.parametrize("kind", sorted(figures.FIGURES))
def test_each_figure_draws_svg_and_png_from_stored_json(kind: str, stored: dict) -> None:
    data = _json(stored[kind])
    svg = figures.svg(figures.FIGURES[kind](data))
    assert svg.startswith("<svg")
    assert render(figures.FIGURES[kind](data), "png")[:4] == b"\x89PNG"


def test_run_chart_bars_are_the_runs_scores_and_markers_the_median_and_best(stored: dict) -> None:
    data = _json(stored["run-vs-median-best"])
    axes = figures.run_vs_median_best(data).axes[0]
    heights = [p.get_height() for p in axes.patches]
    assert heights == pytest.approx([row["score"] or 0.0 for row in data["topics"]])
    median, best = axes.lines[0].get_ydata(), axes.lines[1].get_ydata()
    assert list(median) == pytest.approx([row["median"] for row in data["topics"]])
    assert list(best) == pytest.approx([row["best"] for row in data["topics"]])
    text = figures.svg(figures.run_vs_median_best(data))
    assert "run1" in text and "run0" not in text and "run2" not in text  # no other run named


def test_unique_hits_bars_are_sorted_descending(stored: dict) -> None:
    data = _json(stored["unique-hits"])
    heights = [p.get_height() for p in figures.unique_hits(data).axes[0].patches]
    assert heights == [t["unique"] for t in data["teams"]] and heights == sorted(heights, reverse=True)


def test_swap_rate_figure_plots_the_mdd_per_size(stored: dict) -> None:
    data = _json(stored["swap-rate"])
    right = figures.swap_rate(data).axes[1]
    expected = [np.nan if s["mdd"] is None else s["mdd"] for s in data["sizes"]]
    assert np.allclose(right.lines[0].get_ydata(), expected, equal_nan=True)


def test_empty_efficiency_data_still_draws() -> None:
    empty = {"measure": "AP", "runs": [{"run": "a", "score": 0.1, "seconds": None}], "front": [], "spearman": None}
    assert figures.svg(figures.score_vs_time(empty)).startswith("<svg")
