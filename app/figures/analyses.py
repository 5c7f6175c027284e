"""Analysis figures from an analysis's JSON form (what `to_dict` gives, what a job stores): one function a figure.

The CLI draws them from the results it computes, the REST API from the results its jobs stored; both hold the same
plain data, so one drawing serves both. Each analysis record (app/services/analysis_registry.py) names its figure, a
key of `LOOKUP`; `draw` draws it. Figures follow Westerveld's TRECVID study (Fig. 2-4) and the AxIoU paper
(Fig. 4, 6, 7).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from app.figures.axiou_figures import FIGURES as AXIOU_FIGURES
from app.figures.campaign_analyses import FIGURES as CAMPAIGN_FIGURES
from app.figures.campaign_analyses import machine_agreement, type_significance

FORMATS = {".png": "png", ".svg": "svg"}
Data = Mapping[str, Any]


def render(figure: Figure, fmt: str) -> bytes:
    """The figure as PNG or SVG bytes."""
    buffer = io.BytesIO()
    figure.tight_layout()
    figure.savefig(buffer, format=fmt, dpi=120)
    return buffer.getvalue()


def _floats(values: Sequence[float | None] | np.ndarray) -> np.ndarray:
    """A float array of JSON numbers (None, how stored results spell NaN, becomes nan)."""
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def _fmt(value: float | None, digits: int) -> str:
    """A stored number for a title (nan for None)."""
    return "nan" if value is None else f"{value:.{digits}f}"


def _by_score(scores: Sequence[float | None] | np.ndarray) -> np.ndarray:
    """Run order by score, best first."""
    return np.argsort(-np.nan_to_num(_floats(scores), nan=-np.inf), kind="stable")


def pool_depth(data: Data) -> Figure:
    """Westerveld Fig. 2 (score per run, full pool vs each depth) and Fig. 3 (tau vs depth)."""
    runs, levels, measure = list(data["runs"]), data["depths"], data["measure"]
    full = _floats([data["full"][run] for run in runs])
    order = _by_score(full)
    depths = [level["depth"] for level in levels]
    fig = Figure(figsize=(13, 4.8))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    x = np.arange(len(runs))
    for level in levels:
        scores = _floats([level["scores"][runs[i]] for i in order])
        left.scatter(x, scores, s=4, color="tab:gray", alpha=0.35, linewidths=0)
    left.scatter(x, full[order], s=36, facecolors="none", edgecolors="tab:red", label="full qrels")
    if depths:
        left.scatter([], [], s=8, color="tab:gray", label=f"pool depth {depths[0]}..{depths[-1]}")
    left.set_xticks(x, [runs[i] for i in order], rotation=70, ha="right", fontsize=7)
    left.set_ylabel(measure)
    left.set_title(f"{measure} per run (sorted by full-qrels score)")
    left.legend(fontsize=8)
    right.plot(depths, _floats([level["tau_b"] for level in levels]), label="Kendall tau_b", color="tab:blue")
    tau_ap = _floats([level["tau_ap"] for level in levels])
    right.plot(depths, tau_ap, label="tau_AP", color="tab:orange", linestyle="--")
    right.set_xlabel("pool depth")
    right.set_ylabel("correlation with the full-qrels ranking")
    outside = data.get("outside")
    right.set_title("Ranking correlation vs pool depth" + (f" (unpooled lines: {outside})" if outside else ""))
    if len(depths) > 1 and depths[-1] / max(depths[0], 1) > 50:
        right.set_xscale("log")
    right.grid(alpha=0.3)
    right.legend(fontsize=8)
    return fig


def _depth_words(data: Data) -> str:
    """The pool depth of a leave-out result: "7", or "5-7 per topic" when the topics' depths differ."""
    if data.get("depth") is not None:
        return str(data["depth"])
    depths = data.get("pool_depths") or {}
    return f"{depths.get('min', '?')}-{depths.get('max', '?')} per topic"


def leave_out(data: Data) -> Figure:
    """Westerveld Fig. 4: each run's original score and its score with its run/group/type left out."""
    rows = data["runs"]
    original = _floats([row["original"] for row in rows])
    reduced = _floats([row["reduced"] for row in rows])
    order = _by_score(original)
    fig = Figure(figsize=(11, 4.8))
    ax = fig.subplots()
    x = np.arange(len(rows))
    ax.scatter(x, original[order], s=36, facecolors="none", edgecolors="tab:red", label="original")
    ax.scatter(x, reduced[order], s=22, marker="x", color="tab:blue", label=f"one {data['by']} left out")
    ax.set_xticks(x, [rows[i]["run"] for i in order], rotation=70, ha="right", fontsize=7)
    ax.set_ylabel(data["measure"])
    depth = f"pool depth {_depth_words(data)}" + (f", {data['depth_source']}" if data.get("depth_source") else "")
    ax.set_title(
        f"Leave one {data['by']} out ({depth}): tau_b = {_fmt(data['tau_b'], 3)}, "
        f"max drop = {_fmt(data['max_drop'], 4)} ({_fmt(data['max_percent_drop'], 1)}%)"
    )
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


AGREEMENT_SIDE = 7.0  # inches: the largest side of one heat map, whatever the number of measures
ANNOTATE_UP_TO = 20  # measures: beyond this the cells are too small for their values (the colour bar reads them)


def agreement(data: Data) -> Figure:
    """AxIoU paper Fig. 4: heat maps of tau_b between measures and, when the result holds it, of tau_AP (row = the
    reference measure's ranking; results stored before tau_AP was added draw tau_b alone).

    Readable at any number of measures: each map is at most `AGREEMENT_SIDE` inches (about 1,000 pixels at the
    render's 120 dpi) with labels that shrink with the measures, values written in the cells up to
    `ANNOTATE_UP_TO` measures, and a NaN cell (a measure constant over the runs) left blank and named in the title."""
    measures = list(data["measures"])
    n = len(measures)
    panels = [("tau_b", "Kendall tau_b")] + ([("tau_ap", "tau_AP (row = reference)")] if "tau_ap" in data else [])
    side = min(AGREEMENT_SIDE, 1.0 + 0.5 * n)
    label_size = max(4.5, min(9.0, 160.0 / max(n, 1)))
    fig = Figure(figsize=(len(panels) * (side + 1.8), side + 1.4))
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (key, label) in zip(axes, panels, strict=True):
        matrix = _floats([v for row in data[key] for v in row]).reshape(n, n)
        image = ax.imshow(np.ma.masked_invalid(matrix), vmin=-1, vmax=1, cmap="RdBu_r")
        ax.set_xticks(range(n), measures, rotation=60, ha="right", fontsize=label_size)
        ax.set_yticks(range(n), measures, fontsize=label_size)
        if n <= ANNOTATE_UP_TO:
            cell_size = max(5.0, min(8.0, 120.0 / max(n, 1)))
            for i in range(n):
                for j in range(n):
                    value = matrix[i, j]
                    text = "nan" if np.isnan(value) else f"{value:.2f}"
                    ax.text(j, i, text, ha="center", va="center", fontsize=cell_size)
        fig.colorbar(image, ax=ax, label=label, shrink=0.8)
        constant = [m for i, m in enumerate(measures) if np.isnan(matrix[i]).all()]
        title = "Measure agreement" + ("" if key == "tau_b" else ": tau_AP")
        ax.set_title(title + (f"\n(no ranking: {', '.join(constant)})" if constant else ""), fontsize=10)
    return fig


def stability(data: Data) -> Figure:
    """AxIoU paper Fig. 6: mean and variance of tau_b (and tau_AP, dashed) vs topic subset size, subset-vs-full and
    split halves."""
    fig = Figure(figsize=(11, 7))
    axes = fig.subplots(2, 2, sharex="col")
    for column, part in enumerate(("subset_vs_full", "split_halves")):
        for measure, rows in data[part].items():
            sizes = [row["size"] for row in rows]
            line = axes[0, column].plot(sizes, _floats([row["mean"] for row in rows]), label=f"{measure} tau_b")[0]
            axes[1, column].plot(sizes, _floats([row["var"] for row in rows]), label=f"{measure} tau_b")
            if rows and "tau_ap_mean" in rows[0]:  # results stored before tau_AP was added have none
                for axis, key in ((axes[0, column], "tau_ap_mean"), (axes[1, column], "tau_ap_var")):
                    axis.plot(
                        sizes,
                        _floats([row[key] for row in rows]),
                        ls="--",
                        color=line.get_color(),
                        label=f"{measure} tau_AP",
                    )
    axes[0, 0].set_title("subset vs full set")
    axes[0, 1].set_title("disjoint split halves")
    for ax in axes[0]:
        ax.set_ylabel("mean tau_b (solid), tau_AP (dashed)")
    for ax in axes[1]:
        ax.set_ylabel("variance")
        ax.set_xlabel("topics per subset")
    for ax in axes.ravel():
        ax.grid(alpha=0.3)
    axes[0, 0].legend(fontsize=8)
    fig.suptitle(f"Stability ({data['trials']} trials per size, seed {data['seed']})")
    return fig


def label_noise(data: Data) -> Figure:
    """AxIoU paper Fig. 7: mean absolute change of a system's score (mean over systems) vs noise level, per measure.

    Results stored before the change to the paper's quantity hold only the RMSE: those are drawn as RMSE, and say so.
    """
    levels = data["levels"]
    fig = Figure(figsize=(7, 4.8))
    ax = fig.subplots()
    sigmas = [level["sigma"] for level in levels]
    key = "mean_abs_change" if all("mean_abs_change" in level for level in levels) else "mean_rmse"
    for measure in data["measures"]:
        ax.plot(sigmas, _floats([level[key][measure] for level in levels]), marker="o", label=measure)
    ax.set_xlabel("noise level sigma (s)")
    ax.set_ylabel("mean absolute change, mean over systems" if key == "mean_abs_change" else "mean RMSE over systems")
    ax.set_title(f"Label noise ({data['trials']} trials, {data['raters']} raters, length: {data['length']})")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def ties(data: Data) -> Figure:
    """Bar chart of the all-tied topic ratio per measure (`{"ratios": {measure: ratio}}`)."""
    ratios = data["ratios"]
    fig = Figure(figsize=(1.5 + 0.6 * len(ratios), 4))
    ax = fig.subplots()
    ax.bar(list(ratios), _floats(list(ratios.values())), color="tab:blue")
    ax.set_ylim(0, 1)
    ax.set_ylabel("share of topics where all runs tie")
    ax.tick_params(axis="x", rotation=60)
    return fig


def power(data: Data) -> Figure:
    """Discriminative power: the share of run pairs told apart at the test's alpha, one bar per measure."""
    powers = data.get("power") or {data["measure"]: data["discriminative_power"]}
    fig = Figure(figsize=(2.5 + 0.6 * len(powers), 4))
    ax = fig.subplots()
    ax.bar(list(powers), _floats(list(powers.values())), color="tab:blue")
    ax.tick_params(axis="x", rotation=60)
    ax.set_ylim(0, 1)
    ax.set_ylabel(f"run pairs significantly different (alpha {data['alpha']})")
    ax.set_title(f"{len(data['runs'])} runs")
    return fig


def topic_set_design(data: Data) -> Figure:
    """Sakai's topic set size design: topics needed vs minimum detectable difference (t-test, ANOVA) and vs CI width
    (log scale), with this campaign's topic count and the differences asked for."""
    curve = data["curve"]
    fig = Figure(figsize=(7, 4.8))
    ax = fig.subplots()
    labels = {
        "t_test": "paired t-test (minD)",
        "anova": f"one-way ANOVA, m = {data['systems']} (minD)",
        "ci": f"CI width delta ({100 * (1 - data['alpha']):g} %)",
    }
    for key, label in labels.items():
        ax.plot(curve["value"], _floats(curve[key]), marker=".", label=label)
    ax.axhline(data["n_topics"], color="grey", ls=":", label=f"this campaign: {data['n_topics']} topics")
    for row in data["designs"]:
        ax.axvline(row["min_difference"], color="grey", ls="--", lw=0.8)
    ax.set_yscale("log")
    ax.set_xlabel("minimum detectable difference minD, or CI width delta")
    ax.set_ylabel("topics needed")
    power = 1 - data["beta"]
    ax.set_title(
        f"Topic set size for {data['measure']}: alpha {data['alpha']:g}, power {power:g}, "
        f"sigma^2 {_fmt(data['sigma2'], 4)} ({data['variance']})",
        fontsize=10,
    )
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    return fig


def budget(data: Data) -> Figure:
    """The budget advisor: each run's estimated mean xinfAP with its interval (best first) and the sample's plain
    xinfAP mean, titled with the expected tau_b and the advice."""
    runs = [data["runs"][i] for i in _by_score([r["mean"] for r in data["runs"]])]
    mean, low, high = (_floats([r[k] for r in runs]) for k in ("mean", "ci_low", "ci_high"))
    x = np.arange(len(runs))
    fig = Figure(figsize=(max(5.0, 1.5 + 0.3 * len(runs)), 4.5))
    ax = fig.subplots()
    ax.errorbar(x, mean, yerr=[mean - low, high - mean], fmt="o", color="tab:blue", capsize=3,
                label=f"estimate, {100 * data['level']:g} % interval")  # fmt: skip
    ax.plot(x, _floats([r["xinfap"] for r in runs]), "x", color="tab:gray", label="xinfAP of the sample")
    ax.set_xticks(x, [r["run"] for r in runs], rotation=70, fontsize=7)
    ax.set_ylabel("mean xinfAP")
    advice = data.get("advice") or {}
    tau, target = _fmt(data.get("expected_tau"), 3), _fmt(data.get("target_tau"), 2)
    ax.set_title(f"expected tau_b {tau} (target {target}): {advice.get('advice', '?')}", fontsize=9)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


FIGURES: dict[str, Callable[[Data], Figure]] = {
    "pool-depth": pool_depth,
    "leave-out": leave_out,
    "agreement": agreement,
    "stability": stability,
    "label-noise": label_noise,
    "ties": ties,
    "power": power,
    "topic-set-design": topic_set_design,
    "budget": budget,
}

LOOKUP: dict[str, Callable[[Data], Figure]] = {
    **CAMPAIGN_FIGURES,
    **AXIOU_FIGURES,
    **FIGURES,
    "type-significance": type_significance,
    "machine-agreement": machine_agreement,
}  # every analysis figure by its name: the analysis registry's records name theirs (`Analysis.figure`)


def draw(name: str, data: Data) -> Figure:
    """The figure called `name` (a key of LOOKUP) drawn from an analysis's JSON form (KeyError for an unknown one)."""
    if name not in LOOKUP:
        raise KeyError(f"no figure {name!r}: one of {', '.join(LOOKUP)}")
    return LOOKUP[name](data)
