"""Figures readable at real sizes: the agreement heat maps of `trecpool eval`'s 31 default measures fit a screen (they
were 5,496 x 2,340 pixels), and a leave-out figure says a pool depth that differs by topic."""

from __future__ import annotations

import struct

import numpy as np

from app.evaluation.measures.registry import default_measures
from app.figures.analyses import FIGURES, render


def _png_size(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


def _agreement(n: int) -> dict:
    measures = default_measures(stratified=False)[:n]
    matrix = np.random.default_rng(1).uniform(-1, 1, (n, n))
    matrix[1, :] = np.nan  # num_rel: the same for every run
    rows = [[None if np.isnan(v) else float(v) for v in row] for row in matrix]
    return {"measures": measures, "tau_b": rows, "tau_ap": rows}


def test_agreement_of_31_measures_fits_a_screen():
    width, height = _png_size(render(FIGURES["agreement"](_agreement(31)), "png"))
    assert width <= 2200 and height <= 1100


def test_agreement_names_the_measures_without_a_ranking_and_writes_values_when_few():
    data = _agreement(6)
    svg = render(FIGURES["agreement"](data), "svg").decode()
    assert "no ranking: num_rel" in svg
    assert f"{data['tau_b'][0][2]:.2f}" in svg  # values in the cells
    many = render(FIGURES["agreement"](_agreement(31)), "svg").decode()
    assert f"{_agreement(31)['tau_b'][0][2]:.2f}" not in many  # 31 x 31 cells: the colour bar reads them


def test_leave_out_with_depths_per_topic():
    data = {
        "measure": "AP",
        "by": "team",
        "depth": None,
        "depth_source": "inferred",
        "pool_depths": {"min": 6, "max": 7},
        "tau_b": 0.9,
        "max_drop": 0.05,
        "max_percent_drop": 22.6,
        "runs": [{"run": "a", "original": 0.5, "reduced": 0.45}],
    }
    assert "pool depth 6-7 per topic, inferred" in render(FIGURES["leave-out"](data), "svg").decode()
