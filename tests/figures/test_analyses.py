"""Every analysis kind draws from its stored JSON form, NaN (stored as None) included."""

from __future__ import annotations

import pytest

from app.figures.analyses import FIGURES, render

STORED = {
    "pool-depth": {
        "measure": "AP",
        "runs": ["a", "b"],
        "full": {"a": 0.5, "b": None},
        "depths": [
            {"depth": 1, "tau_b": None, "tau_ap": None, "scores": {"a": 0.1, "b": 0.1}},
            {"depth": 2, "tau_b": 1.0, "tau_ap": 1.0, "scores": {"a": 0.5, "b": 0.2}},
        ],
    },
    "leave-out": {
        "measure": "AP",
        "by": "team",
        "depth": 10,
        "tau_b": None,
        "max_drop": 0.01,
        "max_percent_drop": 2.0,
        "runs": [{"run": "a", "original": 0.5, "reduced": 0.49}, {"run": "b", "original": 0.3, "reduced": None}],
    },
    "agreement": {"measures": ["AP", "P@10"], "tau_b": [[1.0, None], [None, 1.0]]},
    "stability": {
        "trials": 5,
        "seed": 0,
        "subset_vs_full": {"AP": [{"size": 1, "mean": None, "var": None}, {"size": 2, "mean": 1.0, "var": 0.0}]},
        "split_halves": {"AP": [{"size": 1, "mean": 0.5, "var": 0.1}]},
    },
    "label-noise": {
        "measures": ["AxIoU@1"],
        "trials": 3,
        "raters": 1,
        "length": "keep",
        "levels": [{"sigma": 0.5, "mean_rmse": {"AxIoU@1": 0.01}}, {"sigma": 2.0, "mean_rmse": {"AxIoU@1": None}}],
    },
    "ties": {"ratios": {"AP": 0.0, "P@10": None}},
    "power": {"measure": "AP", "alpha": 0.05, "runs": ["a", "b"], "discriminative_power": 1.0},
    "topic-set-design": {
        "measure": "AP",
        "variance": "two-way",
        "sigma2": 0.007,
        "alpha": 0.05,
        "beta": 0.2,
        "systems": 30,
        "n_topics": 30,
        "designs": [{"min_difference": 0.05, "t_test": 46, "anova": 137}],
        "curve": {"value": [0.01, 0.05], "t_test": [None, 46], "anova": [None, 137], "ci": [2146, 88]},
    },
    "budget": {
        "level": 0.95,
        "target_tau": 0.9,
        "expected_tau": None,
        "advice": {"advice": "continue"},
        "runs": [
            {"run": "a", "mean": 0.2, "ci_low": 0.1, "ci_high": 0.35, "xinfap": 0.22},
            {"run": "b", "mean": None, "ci_low": 0.0, "ci_high": 1.0, "xinfap": None},
        ],
    },
}


@pytest.mark.parametrize("kind", sorted(FIGURES))
def test_each_kind_draws_svg_and_png(kind: str) -> None:
    svg = render(FIGURES[kind](STORED[kind]), "svg")
    assert b"<svg" in svg[:1000]
    assert render(FIGURES[kind](STORED[kind]), "png")[:4] == b"\x89PNG"


def test_leave_out_title_spells_missing_numbers_nan() -> None:
    svg = render(FIGURES["leave-out"](STORED["leave-out"]), "svg").decode()
    assert "tau_b = nan" in svg and "max drop = 0.0100 (2.0%)" in svg
