"""Figures of the campaign analyses (judged fraction per depth, run vs median vs best, unique hits, efficiency,
inferred relevant, strata, swap rates, qrels versions, AxIoU Fig. 5), each from its analysis's JSON form (`to_dict`).

One function a figure, returning a `matplotlib.figure.Figure` drawn with the object-oriented API (never pyplot);
`svg` turns one into an inline SVG element for the report page, `analyses.render` into PNG or SVG bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from app.figures.report import svg_element

Data = Mapping[str, Any]
RUN_COLOUR, MEDIAN_COLOUR, BEST_COLOUR = "#1f5fbf", "#b3261e", "#1e7a3c"
MAX_LABELS = 60  # more x labels than this: every k-th only


def _floats(values: Sequence[float | None]) -> np.ndarray:
    """A float array of JSON numbers (None becomes NaN)."""
    return np.array([np.nan if v is None else v for v in values], dtype=np.float64)


def _tidy(axes: Any) -> None:
    """No top and right spines, a light grid."""
    axes.spines[["top", "right"]].set_visible(False)
    axes.grid(alpha=0.3)


def _labels(axes: Any, labels: Sequence[str]) -> None:
    """Category labels on the x axis, thinned when there are many."""
    step = max(1, -(-len(labels) // MAX_LABELS))
    ticks = list(range(0, len(labels), step))
    axes.set_xticks(ticks, [str(labels[i]) for i in ticks], rotation=60, ha="right", fontsize=7)


def svg(figure: Figure) -> str:
    """The figure as an inline SVG element."""
    return svg_element(figure)


def judged_fraction(data: Data) -> Figure:
    """Westerveld: the judged share of each run's top d against d, with the range over runs' lists."""
    levels = data["depths"]
    depths = [level["depth"] for level in levels]
    figure = Figure(figsize=(9, 3.6))
    axes = figure.subplots()
    for run in data["runs"]:
        axes.plot(depths, _floats([level["share"][run] for level in levels]), color="#999", lw=0.6, alpha=0.6)
    low, high = _floats([lv["list_min"] for lv in levels]), _floats([lv["list_max"] for lv in levels])
    axes.fill_between(depths, low, high, color=RUN_COLOUR, alpha=0.12, label="range over run x topic lists")
    axes.plot(depths, _floats([lv["overall"] for lv in levels]), color=RUN_COLOUR, lw=2, marker="o", label="all runs")
    axes.plot([], [], color="#999", lw=0.6, label="one run")
    if len(depths) > 1 and depths[-1] / max(depths[0], 1) > 20:
        axes.set_xscale("log")
    axes.set_ylim(0, 1.02)
    axes.set_xlabel("depth d (top d of each run)")
    axes.set_ylabel("share judged")
    axes.set_title("Judged fraction per depth")
    axes.legend(fontsize=7)
    _tidy(axes)
    return figure


def run_vs_median_best(data: Data) -> Figure:
    """The chart NIST sends each team: a run's score per topic (bars) against the median and best of all runs."""
    rows = data["topics"]
    topics = [row["topic"] for row in rows]
    x = np.arange(len(rows))
    figure = Figure(figsize=(max(9.0, 0.28 * len(rows) + 2), 3.6))
    axes = figure.subplots()
    axes.bar(x, np.nan_to_num(_floats([r["score"] for r in rows])), color=RUN_COLOUR, label=str(data["run"]))
    axes.plot(
        x,
        _floats([r["median"] for r in rows]),
        ls="none",
        marker="_",
        ms=12,
        mew=2,
        color=MEDIAN_COLOUR,
        label="median of all runs",
    )
    axes.plot(
        x, _floats([r["best"] for r in rows]), ls="none", marker="v", ms=5, color=BEST_COLOUR, label="best of all runs"
    )
    _labels(axes, topics)
    axes.set_xlabel("topic")
    axes.set_ylabel(str(data.get("measure") or "score"))
    axes.set_title(f"{data['run']}: per topic against the median and best of {data.get('n_runs', '')} runs")
    axes.legend(fontsize=7)
    _tidy(axes)
    return figure


def unique_hits(data: Data) -> Figure:
    """Sorted unique hits by team (the overview's chart): relevant shots only that team found, most first."""
    teams = data["teams"]
    figure = Figure(figsize=(max(9.0, 0.45 * len(teams) + 2), 3.2))
    axes = figure.subplots()
    axes.bar(range(len(teams)), [t["unique"] for t in teams], color=BEST_COLOUR)
    _labels(axes, [t["team"] for t in teams])
    axes.set_ylabel("unique relevant shots")
    share = data.get("unique_share")
    axes.set_title(
        f"{data.get('unique', '')} unique of {data.get('found', '')} relevant shots found"
        + (f" ({100 * share:.0f} %)" if share is not None else "")
    )
    _tidy(axes)
    return figure


def score_vs_time(data: Data) -> Figure:
    """Efficiency: each timed run's mean score against its processing time; the good-and-fast runs marked."""
    rows = [r for r in data["runs"] if r["seconds"] is not None and r["score"] is not None]
    front = set(data.get("front", []))
    figure = Figure(figsize=(9, 3.8))
    axes = figure.subplots()
    if rows:
        seconds, scores = _floats([r["seconds"] for r in rows]), _floats([r["score"] for r in rows])
        marked = np.array([r["run"] in front for r in rows])
        axes.scatter(seconds[~marked], scores[~marked], s=22, color="#777", label="run")
        axes.scatter(seconds[marked], scores[marked], s=34, color=MEDIAN_COLOUR, label="no run faster and better")
        for r in rows:
            if r["run"] in front:
                axes.annotate(
                    r["run"], (r["seconds"], r["score"]), fontsize=6, xytext=(3, 3), textcoords="offset points"
                )
        if (seconds > 0).all() and seconds.max() / max(seconds.min(), 1e-9) > 50:
            axes.set_xscale("log")
        axes.legend(fontsize=7)
    rho = data.get("spearman")
    axes.set_title("Score vs processing time" + (f" (Spearman rho = {rho:.2f})" if rho is not None else ""))
    axes.set_xlabel("elapsed seconds (mean per topic)")
    axes.set_ylabel(str(data.get("measure") or "mean score"))
    _tidy(axes)
    return figure


def inferred_relevant(data: Data) -> Figure:
    """Per topic: relevant shots judged, stacked by stratum, and the inferred number of relevant shots."""
    rows = data["topics"]
    strata = [s["stratum"] for s in data["strata"]]
    x = np.arange(len(rows))
    figure = Figure(figsize=(max(9.0, 0.3 * len(rows) + 2), 3.6))
    axes = figure.subplots()
    bottom = np.zeros(len(rows))
    colours = ["#1f5fbf", "#6f9bd8", "#b7cdea", "#dde7f4"]
    for c, stratum in enumerate(strata):
        counts = np.array([r["relevant"][c] for r in rows], dtype=np.float64)
        label = f"judged relevant, stratum {stratum}" if data.get("stratified") else "judged relevant"
        axes.bar(x, counts, bottom=bottom, color=colours[c % len(colours)], label=label)
        bottom += counts
    if data.get("stratified"):
        axes.plot(
            x,
            _floats([r["inferred_relevant"] for r in rows]),
            ls="none",
            marker="D",
            ms=4,
            color=MEDIAN_COLOUR,
            label="inferred relevant (R_hat)",
        )
    _labels(axes, [r["topic"] for r in rows])
    axes.set_xlabel("topic")
    axes.set_ylabel("relevant shots")
    axes.set_title("Relevant shots per topic")
    axes.legend(fontsize=7)
    _tidy(axes)
    return figure


def judged_share_per_stratum(data: Data) -> Figure:
    """Per stratum: the share of its pooled shots that were judged, and the share of those that are relevant."""
    strata = data["strata"]
    x = np.arange(len(strata))
    figure = Figure(figsize=(9, 3.2))
    axes = figure.subplots()
    axes.bar(x - 0.2, _floats([s["judged_share"] for s in strata]), width=0.4, color=RUN_COLOUR, label="judged")
    axes.bar(
        x + 0.2,
        _floats([s["relevant_share"] for s in strata]),
        width=0.4,
        color=BEST_COLOUR,
        label="relevant among judged",
    )
    for i, s in enumerate(strata):
        axes.annotate(
            f"{s['judged']:,} / {s['pooled']:,}",
            (i - 0.2, s["judged_share"] or 0),
            fontsize=6,
            ha="center",
            xytext=(0, 2),
            textcoords="offset points",
        )
    axes.set_xticks(x, [f"stratum {s['stratum']}" for s in strata])
    axes.set_ylim(0, 1.1)
    axes.set_ylabel("share")
    axes.set_title("Judged share per stratum")
    axes.legend(fontsize=7)
    _tidy(axes)
    return figure


def swap_rate(data: Data, *, max_lines: int = 6) -> Figure:
    """Voorhees & Buckley: swap rate against the score difference for a few topic-set sizes, and the minimum
    detectable difference (swap rate below the threshold) against the size."""
    sizes = data["sizes"]
    shown = sizes if len(sizes) <= max_lines else [sizes[int(i)] for i in np.linspace(0, len(sizes) - 1, max_lines)]
    figure = Figure(figsize=(11, 4))
    left, right = figure.subplots(1, 2, gridspec_kw={"width_ratios": [3, 2]})
    for entry in shown:
        bins = entry["bins"]
        left.plot(
            [b["difference"] for b in bins],
            [b["rate"] for b in bins],
            marker=".",
            lw=1,
            label=f"{entry['size']} topics",
        )
    left.axhline(data["threshold"], color=MEDIAN_COLOUR, ls="--", lw=1, label=f"{100 * data['threshold']:g} %")
    kind = "relative difference" if data.get("relative") else "absolute difference"
    left.set_xlabel(f"{kind} in {data.get('measure') or 'score'} (bins of {data['bin_width']:g})")
    left.set_ylabel("swap rate")
    left.set_title(f"Swap rate ({data['trials']} trials per size, seed {data['seed']})")
    left.legend(fontsize=7)
    _tidy(left)
    right.plot([s["size"] for s in sizes], _floats([s["mdd"] for s in sizes]), marker="o", color=RUN_COLOUR)
    right.set_xlabel("topics per set")
    right.set_ylabel("minimum detectable difference")
    right.set_title(f"Difference needed for < {100 * data['threshold']:g} % swaps")
    _tidy(right)
    return figure


def qrels_versions(data: Data) -> Figure:
    """Rankings under several qrels versions (Voorhees 1998): each run's score per version, sorted by the first."""
    labels, runs = list(data["labels"]), list(data["runs"])
    first = _floats(data["scores"][labels[0]])
    order = np.argsort(-np.nan_to_num(first, nan=-np.inf), kind="stable")
    figure = Figure(figsize=(max(6.0, 0.3 * len(runs) + 2), 4))
    axes = figure.subplots()
    x = np.arange(len(runs))
    markers = ["o", "x", "s", "^", "D", "v"]
    for k, label in enumerate(labels):
        values = _floats(data["scores"][label])[order]
        axes.plot(
            x, values, ls="none", marker=markers[k % len(markers)], ms=5, label=label, mfc="none" if k == 0 else None
        )
    _labels(axes, [runs[i] for i in order])
    tau = data["tau_b"][0][1] if len(labels) > 1 else None
    tau_ap = data["tau_ap"][0][1] if len(labels) > 1 else None
    title = f"{data.get('measure', '')} per run under each qrels version"
    if tau is not None:
        title += f": tau_b({labels[0]}, {labels[1]}) = {tau:.3f}"
        if tau_ap is not None:
            title += f", tau_AP = {tau_ap:.3f}"
    axes.set_title(title, fontsize=9)
    axes.set_ylabel(str(data.get("measure") or "score"))
    axes.legend(fontsize=7)
    _tidy(axes)
    return figure


def moment_effectiveness(data: Data) -> Figure:
    """AxIoU paper Fig. 5: each system's score under every measure, systems sorted; colour = K, marker = theta."""
    runs = data["runs"]
    measures = data["measures"]
    cutoffs = sorted({m["k"] for m in measures})
    thetas = sorted({m["theta"] for m in measures if m["theta"] is not None})
    palette = ["#1f5fbf", "#b3261e", "#1e7a3c", "#8a5a00", "#6a3d9a", "#333333"]
    marks = ["o", "s", "^", "D", "v", "P"]
    figure = Figure(figsize=(max(6.0, 0.8 * len(runs) + 3), 4.2))
    axes = figure.subplots()
    x = np.arange(len(runs))
    for m in measures:
        colour = palette[cutoffs.index(m["k"]) % len(palette)]
        axiou = m["theta"] is None
        marker = "*" if axiou else marks[thetas.index(m["theta"]) % len(marks)]
        axes.plot(
            x,
            _floats(m["scores"]),
            color=colour,
            marker=marker,
            ls="-" if axiou else ":",
            lw=1.8 if axiou else 1,
            ms=7 if axiou else 4,
            label=m["measure"],
        )
    axes.set_xticks(x, runs, rotation=30, ha="right", fontsize=8)
    axes.set_ylabel("score")
    axes.set_ylim(0, 1.02)
    axes.set_title(f"Systems by measure (sorted by {data['sort_by']})")
    axes.legend(fontsize=6, ncol=2)
    _tidy(axes)
    return figure


def type_significance(data: Data) -> Figure:
    """Significance within each run type: the tested runs' means, one colour per type, with how many of each
    type's run pairs the test separates at alpha."""
    groups = data["types"]
    colours = [RUN_COLOUR, BEST_COLOUR, MEDIAN_COLOUR, "#8a5a00", "#6a3d9a", "#333333"]
    labels: list[str] = []
    figure = Figure(figsize=(max(6.0, 0.35 * sum(len(g["runs"]) for g in groups) + 2), 3.8))
    axes = figure.subplots()
    for k, group in enumerate(groups):
        x = np.arange(len(labels), len(labels) + len(group["runs"]))
        n = len(group["runs"])
        pairs = n * (n - 1) // 2
        label = f"type {group['type']}: {len(group['better'])} of {pairs} pairs differ"
        axes.bar(x, _floats(group["means"]), color=colours[k % len(colours)], label=label)
        labels.extend(group["runs"])
    _labels(axes, labels)
    axes.set_ylabel(str(data.get("measure") or "mean score"))
    axes.set_title(f"Significance within each run type ({data['method']}, alpha {data['alpha']:g}, top {data['top']})")
    axes.legend(fontsize=7)
    _tidy(axes)
    return figure


def machine_agreement(data: Data) -> Figure:
    """A model judge against people: the confusion matrix (human grade x model grade) as a heat map with its counts,
    and each run's score shift (model - human) with its interval, runs in the human ranking's order."""
    judgements, rankings, shifts = data["judgements"], data["rankings"], data["shifts"]
    rows = shifts["runs"]
    figure = Figure(figsize=(max(8.0, 0.3 * len(rows) + 5), 4.2))
    left, right = figure.subplots(1, 2, gridspec_kw={"width_ratios": [1, max(1.5, len(rows) / 12)]})
    confusion = np.array(judgements["confusion"], dtype=np.float64)
    grades = list(judgements["grades"])
    left.imshow(confusion, cmap="Blues")
    high = confusion.max(initial=0.0)
    for (i, j), count in np.ndenumerate(confusion):
        left.text(j, i, f"{int(count)}", ha="center", va="center", fontsize=8,
                  color="white" if high and count > high / 2 else "black")  # fmt: skip
    left.set_xticks(range(len(grades)), [str(g) for g in grades])
    left.set_yticks(range(len(grades)), [str(g) for g in grades])
    left.set_xlabel(f"model grade ({data['labels']['model']})")
    left.set_ylabel(f"human grade ({data['labels']['human']})")
    kappa = judgements["kappa"]
    left.set_title(f"kappa linear {_fmt(kappa['linear'])}, quadratic {_fmt(kappa['quadratic'])}", fontsize=9)
    human = _floats([row["human"] for row in rows])
    order = np.argsort(-np.nan_to_num(human, nan=-np.inf), kind="stable")
    shift = _floats([row["shift"] for row in rows])[order]
    low = _floats([row["ci_low"] for row in rows])[order]
    upper = _floats([row["ci_high"] for row in rows])[order]
    x = np.arange(len(rows))
    errors = np.nan_to_num(np.vstack([shift - low, upper - shift]))
    right.errorbar(x, shift, yerr=errors, fmt="o", ms=4, color=RUN_COLOUR, ecolor="#999", capsize=2)
    right.axhline(0.0, color=MEDIAN_COLOUR, lw=0.8)
    _labels(right, [rows[i]["run"] for i in order])
    level = shifts.get("interval", {}).get("level", 0.95)
    right.set_ylabel(f"{data.get('measure', 'score')} shift, model - human ({level:.0%} interval)")
    right.set_title(
        f"tau_b {_fmt(rankings['tau_b'])}, tau_AP {_fmt(rankings['tau_ap'])}, top {rankings['top_k']} tau_b "
        f"{_fmt(rankings['tau_b_top'])}",
        fontsize=9,
    )
    _tidy(right)
    figure.tight_layout()
    return figure


def _fmt(value: float | None) -> str:
    """A number to three places, or n/a."""
    return "n/a" if value is None else f"{value:.3f}"


FIGURES: dict[str, Callable[[Data], Figure]] = {
    "judged-fraction": judged_fraction,
    "run-vs-median-best": run_vs_median_best,
    "unique-hits": unique_hits,
    "efficiency": score_vs_time,
    "inferred-relevant": inferred_relevant,
    "strata": judged_share_per_stratum,
    "swap-rate": swap_rate,
    "qrels-versions": qrels_versions,
    "moment-effectiveness": moment_effectiveness,
}
