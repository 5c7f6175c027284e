"""Report figures are SVG elements with their data in them, and can be drawn from many threads at once."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

from app.figures import report
from app.figures.analyses import FIGURES, render

SVG = "{http://www.w3.org/2000/svg}svg"


def _texts(svg: str) -> set[str]:
    """The texts drawn in an SVG (matplotlib writes each one as a comment before its glyphs)."""
    return set(re.findall(r"<!-- (.*?) -->", svg))


def _by_type(prefix: str) -> dict[str, list[dict[str, object]]]:
    """Three runs named after `prefix`, two system types, one without a score."""
    return {
        "F": [
            {"run": f"{prefix}-a", "score": 0.5, "system_type": "F"},
            {"run": f"{prefix}-b", "score": None, "system_type": "F"},
        ],
        "M": [{"run": f"{prefix}-c", "score": 0.7, "system_type": "M"}],
    }


def _per_topic(topic: str) -> list[dict[str, object]]:
    """One topic with box statistics and one with no scores (left out of the plot)."""
    return [
        {"topic": topic, "n": 3, "min": 0.1, "q1": 0.2, "median": 0.3, "q3": 0.4, "max": 0.9},
        {"topic": "empty-topic", "n": 0},
    ]


def test_report_figures_are_svg_elements_with_their_labels() -> None:
    overall = report.overall_scores(_by_type("run"), "AP")
    assert overall.startswith("<svg") and ET.fromstring(overall).tag == SVG
    assert all(name in overall for name in ("run-a", "run-b", "run-c", "mean AP", "system type"))
    boxes = report.topic_boxes(_per_topic("t-42"), "P@10")
    assert "t-42" in boxes and "empty-topic" not in boxes and "P@10" in boxes
    bars = report.bars(["team-x", "team-y"], [3, 1], "unique relevant shots", colour="#1e7a3c")
    assert "team-x" in bars and "unique relevant shots" in bars and "#1e7a3c" in bars


def _draw(i: int) -> tuple[str, str, bytes]:
    """Figures of thread `i`'s own data: an overall chart, a box plot and an analysis figure."""
    ratios = {f"M{i}": 0.5}
    return (
        report.overall_scores(_by_type(f"thread{i}"), f"measure{i}"),
        report.topic_boxes(_per_topic(f"topic{i}"), f"measure{i}"),
        render(FIGURES["ties"]({"ratios": ratios}), "svg"),
    )


def test_figures_drawn_from_many_threads_at_once_are_valid_and_their_own() -> None:
    n = 12
    with ThreadPoolExecutor(max_workers=6) as pool:
        drawn = list(pool.map(_draw, range(n)))
    for i, (overall, boxes, ties) in enumerate(drawn):
        for svg in (overall, boxes, ties.decode()):
            assert ET.fromstring(svg[svg.index("<svg") :]).tag == SVG
        assert {f"thread{i}-a", f"thread{i}-b", f"thread{i}-c", f"mean measure{i}"} <= _texts(overall)
        assert {f"topic{i}", f"measure{i}"} <= _texts(boxes)
        assert f"M{i}" in _texts(ties.decode())
        others = {f"{name}{j}" for j in range(n) if j != i for name in ("topic", "measure", "M")}
        assert not others & (_texts(overall) | _texts(boxes) | _texts(ties.decode()))
        assert not any(f"thread{j}-" in overall for j in range(n) if j != i)
    assert len({svg for row in drawn for svg in row[:2]}) == 2 * n
