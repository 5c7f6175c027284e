"""Report and leaderboard figures as inline SVG elements (no files, no JavaScript), drawn from the report's data.

Each figure is a `matplotlib.figure.Figure` of its own (never pyplot's global registry), so pages rendered in the
thread pool can draw at the same time.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

TYPE_COLOURS = {"F": "#1f5fbf", "M": "#b3261e", "R": "#1e7a3c"}


def svg_element(figure: Figure) -> str:
    """The figure as an SVG element, cropped to its drawing, without the XML prologue."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", bbox_inches="tight")
    text = buffer.getvalue()
    return text[text.index("<svg") :]


def _score(row: dict[str, object]) -> float:
    """A leaderboard row's score as a number (0 when it has none)."""
    value = row.get("score")
    return float(value) if isinstance(value, int | float) else 0.0


def error_bars(rows: Sequence[dict[str, object]]) -> list[list[float]] | None:
    """Each row's interval as matplotlib's yerr (distances below and above the score, never negative; 0 where a row
    has no interval), or None when no row has one (documents published before intervals)."""
    below, above, seen = [], [], False
    for row in rows:
        low, high, score = row.get("ci_low"), row.get("ci_high"), _score(row)
        if isinstance(low, int | float) and isinstance(high, int | float) and isinstance(row.get("score"), int | float):
            below.append(max(score - float(low), 0.0))
            above.append(max(float(high) - score, 0.0))
            seen = True
        else:
            below.append(0.0)
            above.append(0.0)
    return [below, above] if seen else None


def overall_axes(by_type: dict[str, list[dict[str, object]]], measure: str) -> Figure:
    """Sorted mean scores of every run, coloured by system type, with each run's interval as an error bar."""
    rows = sorted((r for rows in by_type.values() for r in rows), key=lambda r: -_score(r))
    figure = Figure(figsize=(9, 3.2))
    axes = figure.subplots()
    yerr = error_bars(rows)
    axes.bar(
        range(len(rows)),
        [_score(r) for r in rows],
        color=[TYPE_COLOURS.get(str(r["system_type"]), "#777") for r in rows],
        yerr=yerr,
        error_kw={"ecolor": "#1d232b", "elinewidth": 1, "capsize": 2},
    )
    axes.set_xticks(range(len(rows)), [str(r["run"]) for r in rows], rotation=60, ha="right", fontsize=7)
    level = next((r.get("level") for r in rows if isinstance(r.get("level"), int | float)), None)
    interval = f" ({float(level):.0%} interval)" if yerr is not None and isinstance(level, int | float) else ""
    axes.set_ylabel(f"mean {measure}{interval}")
    handles = [Rectangle((0, 0), 1, 1, color=c) for t, c in TYPE_COLOURS.items() if t in by_type]
    axes.legend(handles, [t for t in TYPE_COLOURS if t in by_type], title="system type", fontsize=7)
    axes.spines[["top", "right"]].set_visible(False)
    return figure


def overall_scores(by_type: dict[str, list[dict[str, object]]], measure: str) -> str:
    """The overall scores figure (`overall_axes`) as an SVG element."""
    return svg_element(overall_axes(by_type, measure))


def topic_boxes(per_topic: Sequence[dict[str, object]], measure: str) -> str:
    """Per-topic box plots of run scores (whiskers min-max), medians marked."""
    stats = [s for s in per_topic if s.get("n")]
    figure = Figure(figsize=(9, 3.2))
    axes = figure.subplots()
    boxes = [
        {
            "label": s["topic"],
            "whislo": s["min"],
            "q1": s["q1"],
            "med": s["median"],
            "q3": s["q3"],
            "whishi": s["max"],
            "fliers": [],
        }
        for s in stats
    ]
    if boxes:
        axes.bxp(boxes, showfliers=False, medianprops={"color": "#b3261e"})
    axes.set_ylabel(measure)
    axes.set_xlabel("topic")
    axes.tick_params(axis="x", labelrotation=60, labelsize=7)
    axes.spines[["top", "right"]].set_visible(False)
    return svg_element(figure)


def bars(labels: Sequence[str], values: Sequence[float], ylabel: str, *, colour: str = "#1f5fbf") -> str:
    """A plain bar chart."""
    figure = Figure(figsize=(9, 2.8))
    axes = figure.subplots()
    axes.bar(range(len(values)), values, color=colour)
    axes.set_xticks(range(len(labels)), labels, rotation=60, ha="right", fontsize=7)
    axes.set_ylabel(ylabel)
    axes.spines[["top", "right"]].set_visible(False)
    return svg_element(figure)
