"""Figures for `trecpool analyse` (matplotlib, Agg backend): PNG or SVG chosen by the file's suffix."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

FORMATS = {".png": "png", ".svg": "svg"}


def check_path(path: Path) -> str:
    """The format of a plot path (.png or .svg), or ValueError."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"plot file must end in .png or .svg: {path}")
    return fmt


def _save(fig: Figure, path: Path) -> None:
    fmt = check_path(path)
    fig.tight_layout()
    fig.savefig(path, format=fmt, dpi=120)
    plt.close(fig)


def _sorted_runs(runs: Sequence[str], scores: np.ndarray) -> tuple[list[str], np.ndarray]:
    order = np.argsort(-scores, kind="stable")
    return [runs[i] for i in order], order


def pool_depth_plot(path: Path, result) -> None:
    """Westerveld Fig. 2 (score per run, full pool vs each depth) and Fig. 3 (tau vs depth)."""
    names, order = _sorted_runs(result.runs, result.full)
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    x = np.arange(len(names))
    for i in range(len(result.depths)):
        left.scatter(x, result.scores[i, order], s=4, color="tab:gray", alpha=0.35, linewidths=0)
    left.scatter(x, result.full[order], s=36, facecolors="none", edgecolors="tab:red", label="full qrels")
    left.scatter([], [], s=8, color="tab:gray", label=f"pool depth {result.depths[0]}..{result.depths[-1]}")
    left.set_xticks(x, names, rotation=70, ha="right", fontsize=7)
    left.set_ylabel(result.measure)
    left.set_title(f"{result.measure} per run (sorted by full-qrels score)")
    left.legend(fontsize=8)
    right.plot(result.depths, result.tau_b, label="Kendall tau_b", color="tab:blue")
    right.plot(result.depths, result.tau_ap, label="tau_AP", color="tab:orange", linestyle="--")
    right.set_xlabel("pool depth")
    right.set_ylabel("correlation with the full-qrels ranking")
    right.set_title("Ranking correlation vs pool depth")
    if len(result.depths) > 1 and result.depths[-1] / max(result.depths[0], 1) > 50:
        right.set_xscale("log")
    right.grid(alpha=0.3)
    right.legend(fontsize=8)
    _save(fig, path)


def leave_out_plot(path: Path, result) -> None:
    """Westerveld Fig. 4: each run's original score and its score with its run/group/type left out."""
    names, order = _sorted_runs(result.runs, result.original)
    fig, ax = plt.subplots(figsize=(11, 4.8))
    x = np.arange(len(names))
    ax.scatter(x, result.original[order], s=36, facecolors="none", edgecolors="tab:red", label="original")
    ax.scatter(x, result.reduced[order], s=22, marker="x", color="tab:blue", label=f"one {result.by} left out")
    ax.set_xticks(x, names, rotation=70, ha="right", fontsize=7)
    ax.set_ylabel(result.measure)
    ax.set_title(
        f"Leave one {result.by} out (pool depth {result.depth}): tau_b = {result.tau_b:.3f}, "
        f"max drop = {result.max_drop:.4f} ({result.max_percent_drop:.1f}%)"
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    _save(fig, path)


def agreement_plot(path: Path, measures: list[str], matrix: np.ndarray) -> None:
    """AxIoU paper Fig. 4: heat map of tau_b between measures."""
    n = len(measures)
    fig, ax = plt.subplots(figsize=(1.2 + 0.7 * n, 0.9 + 0.6 * n))
    image = ax.imshow(matrix, vmin=-1, vmax=1, cmap="RdBu_r")
    ax.set_xticks(range(n), measures, rotation=60, ha="right")
    ax.set_yticks(range(n), measures)
    for i in range(n):
        for j in range(n):
            value = matrix[i, j]
            ax.text(j, i, "nan" if np.isnan(value) else f"{value:.2f}", ha="center", va="center", fontsize=8)
    fig.colorbar(image, ax=ax, label="Kendall tau_b")
    ax.set_title("Measure agreement")
    _save(fig, path)


def stability_plot(path: Path, result) -> None:
    """AxIoU paper Fig. 6: mean and variance of tau_b vs topic subset size, subset-vs-full and split halves."""
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex="col")
    for i, measure in enumerate(result.measures):
        axes[0, 0].plot(result.sizes, result.full_mean[i], label=measure)
        axes[1, 0].plot(result.sizes, result.full_var[i], label=measure)
        axes[0, 1].plot(result.split_sizes, result.split_mean[i], label=measure)
        axes[1, 1].plot(result.split_sizes, result.split_var[i], label=measure)
    axes[0, 0].set_title("subset vs full set")
    axes[0, 1].set_title("disjoint split halves")
    for ax in axes[0]:
        ax.set_ylabel("mean tau_b")
    for ax in axes[1]:
        ax.set_ylabel("variance of tau_b")
        ax.set_xlabel("topics per subset")
    for ax in axes.ravel():
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"Stability ({result.trials} trials per size, seed {result.seed})")
    _save(fig, path)


def label_noise_plot(path: Path, result) -> None:
    """AxIoU paper Fig. 7: RMSE (mean over systems) vs noise level, one line per measure."""
    fig, ax = plt.subplots(figsize=(7, 4.8))
    for i, measure in enumerate(result.measures):
        ax.plot(result.sigmas, result.mean_rmse[:, i], marker="o", label=measure)
    ax.set_xlabel("noise level sigma (s)")
    ax.set_ylabel("mean RMSE over systems")
    ax.set_title(f"Label noise ({result.trials} trials, {result.raters} raters, length: {result.length})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    _save(fig, path)


def ties_plot(path: Path, ratios: dict[str, float]) -> None:
    """Bar chart of the all-tied topic ratio per measure."""
    fig, ax = plt.subplots(figsize=(1.5 + 0.6 * len(ratios), 4))
    ax.bar(list(ratios), list(ratios.values()), color="tab:blue")
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of topics where all runs tie")
    ax.tick_params(axis="x", rotation=60)
    _save(fig, path)
