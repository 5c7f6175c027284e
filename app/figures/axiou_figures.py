"""The AxIoU paper's model selection (Fig. 8) and its supplement's label-noise closed forms (Fig. 2 there, the paper's
Fig. 10), drawn from the analyses' JSON forms (`model-selection`, `iou-noise`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

Data = Mapping[str, Any]
STATISTIC_LABELS = {"bias": "squared bias", "variance": "variance", "mse": "MSE"}


def _floats(values: Sequence[float | None]) -> np.ndarray:
    """A float array of JSON numbers (None, how stored results spell NaN, becomes nan)."""
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def _panel_of(measure: str) -> str:
    """The panel a validation measure is drawn in, as the paper's Fig. 8 (a)-(d): R@1,theta, R@5,theta, R@10,theta
    (moment recall at a threshold, by cut-off), AxIoU@K; every other measure in one panel."""
    if "," in measure:
        return measure.split(",", 1)[0] + ",theta"
    if measure.startswith("AxIoU@"):
        return "AxIoU@K"
    return "other"


def model_selection(data: Data) -> Figure:
    """Per test measure (x), the z-score of the model each validation measure selected (one line each), one panel
    per family of validation measures as the paper's Fig. 8 (a)-(d)."""
    tests = list(data["test_measures"])
    panels: dict[str, list[Mapping[str, Any]]] = {}
    for row in data["selections"]:
        panels.setdefault(_panel_of(row["validation_measure"]), []).append(row)
    n = max(len(panels), 1)
    cols = min(n, 2)
    rows = (n + cols - 1) // cols
    fig = Figure(figsize=(max(6.0, 1.2 + 0.55 * len(tests)) * cols, 3.8 * rows))
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    x = np.arange(len(tests))
    for ax, (name, selections) in zip(axes, panels.items(), strict=False):
        for row in selections:
            label = f"{row['validation_measure']}: {row['run']}"
            ax.plot(x, _floats([row["z"].get(t) for t in tests]), marker="o", label=label)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_xticks(x, tests, rotation=60, fontsize=8)
        ax.set_ylabel("z-score of the selected model")
        ax.set_title("validation measures" if name == "other" else f"validation measure {name}", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, title="selected by: variant", title_fontsize=7)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    split = f"{len(data['validation_topics'])} validation / {len(data['test_topics'])} test topics"
    fig.suptitle(f"Model selection among {data['runs']} variants ({split})")
    return fig


def iou_noise(data: Data) -> Figure:
    """Squared bias, variance and MSE of R@1,theta against theta (one colour per noise level gamma: the closed form
    as a line, the simulation as dots) and of AxIoU@1 (dashed: it does not depend on theta), at true IoU r."""
    thetas = _floats(data["thetas"])
    fig = Figure(figsize=(14, 4.4))
    axes = fig.subplots(1, 3)
    for g, level in enumerate(data["levels"]):
        colour = f"C{g % 10}"
        for ax, stat in zip(axes, STATISTIC_LABELS, strict=True):
            power = 2 if stat == "bias" else 1
            exact = _floats(level["recall"][stat]["exact"]) ** power
            simulated = _floats(level["recall"][stat]["simulated"]) ** power
            ax.plot(thetas, exact, color=colour, label=f"R@1,theta, gamma {level['gamma']:g}")
            ax.plot(thetas, simulated, ".", color=colour, ms=4)
            flat = level["axiou"][stat]["exact"]
            ax.axhline(np.nan if flat is None else flat**power, color=colour, ls="--", lw=1,
                       label=f"AxIoU@1, gamma {level['gamma']:g}")  # fmt: skip
    for ax, label in zip(axes, STATISTIC_LABELS.values(), strict=True):
        ax.axvline(data["iou"], color="grey", ls=":", lw=0.8)
        ax.set_xlabel("theta")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    axes[2].legend(fontsize=7)
    z = data.get("largest_z")
    check = "" if z is None else f"; simulation within {z:.1f} standard errors"
    fig.suptitle(
        f"Estimation error under IoU noise N(0, gamma^2) at r = {data['iou']:g}: closed forms (lines), "
        f"{data['simulations']} simulated draws (dots){check}",
        fontsize=10,
    )
    return fig


FIGURES: dict[str, Callable[[Data], Figure]] = {"model-selection": model_selection, "iou-noise": iou_noise}
