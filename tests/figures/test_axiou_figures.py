"""The model-selection and iou-noise figures draw from their analyses' stored JSON, NaN (None) included, one panel per
family of validation measures as the paper's Fig. 8."""

from __future__ import annotations

import numpy as np

from app.evaluation.analyses.label_noise import iou_noise
from app.evaluation.analyses.model_selection import model_selection
from app.figures.analyses import LOOKUP, render
from app.figures.axiou_figures import model_selection as selection_figure


def _selection() -> dict:
    measures = ["AxIoU@1", "AxIoU@5", "R@1,0.5", "R@1,0.7", "R@5,0.5"]
    values = np.random.default_rng(0).uniform(size=(6, len(measures), 8))
    return model_selection([f"v{i}" for i in range(6)], measures, [f"q{i}" for i in range(8)], values).to_dict()


def test_model_selection_draws_a_panel_per_family_of_validation_measures() -> None:
    data = _selection()
    data["selections"][0]["z"]["R@1,0.5"] = None  # stored NaN
    figure = selection_figure(data)
    titles = [ax.get_title() for ax in figure.axes if ax.get_visible()]
    assert titles == ["validation measure AxIoU@K", "validation measure R@1,theta", "validation measure R@5,theta"]
    svg = render(LOOKUP["model-selection"](data), "svg").decode()
    assert "Model selection among 6 variants (4 validation / 4 test topics)" in svg
    assert render(LOOKUP["model-selection"](data), "png")[:4] == b"\x89PNG"


def test_iou_noise_draws_svg_and_png_with_its_check() -> None:
    data = iou_noise(0.5, gammas=[0.1, 0.2], thetas=[0.25, 0.5, 0.75], simulations=500).to_dict()
    data["levels"][0]["recall"]["mse"]["simulated"][0] = None
    svg = render(LOOKUP["iou-noise"](data), "svg").decode()
    assert "at r = 0.5" in svg and "500 simulated draws" in svg and "standard errors" in svg
    assert render(LOOKUP["iou-noise"](data), "png")[:4] == b"\x89PNG"
