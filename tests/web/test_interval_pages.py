"""The leaderboard and report pages print each run's mean with its interval, its rank interval and its tier, the
interval's provenance, pairwise differences with adjusted p-values, and the marks of biased or incomplete numbers
next to the interval; documents published before intervals still render, without them. The report's overall figure
draws the intervals as error bars."""

from __future__ import annotations

import copy
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from app.figures import report as plots
from app.web.pages import templates
from tests.web.interval_documents import body_rows, render_board, text

TEXT = "95% paired bootstrap percentile interval over topics (1000 resamples, seed 7)"
INTERVAL = {"level": 0.95, "method": "percentile", "n_resamples": 1000, "seed": 7, "sampled": False, "text": TEXT}


def _row(
    rank: int, run: str, system_type: str, score: float, low: float, high: float, ranks: tuple[int, int], tier: int
):
    """A board row as the services write it (with intervals)."""
    return {
        "rank": rank,
        "run_id": rank,
        "run": run,
        "team": f"team{rank}",
        "system_type": system_type,
        "training_type": "D",
        "novelty": False,
        "priority": rank,
        "score": score,
        "scores": {"AP": score, "P@10": 0.5},
        "ci_low": low,
        "ci_high": high,
        "level": 0.95,
        "rank_low": ranks[0],
        "rank_high": ranks[1],
        "tier": tier,
        "intervals": {"AP": {"ci_low": low, "ci_high": high}, "P@10": {"ci_low": 0.4, "ci_high": 0.6}},
    }


ROWS = [
    _row(1, "alpha", "F", 0.5, 0.45, 0.55, (1, 1), 1),
    _row(2, "bravo", "F", 0.4123, 0.381, 0.4431, (2, 4), 2),
    _row(3, "charlie", "M", 0.4, 0.35, 0.45, (2, 4), 2),
    _row(4, "delta", "F", 0.3, 0.2, 0.39, (3, 4), 3),
]
PAIRS = [
    {
        "run_a": "alpha",
        "run_b": "bravo",
        "difference": 0.0877,
        "ci_low": 0.02,
        "ci_high": 0.15,
        "effect_size": 1.25,
        "pvalue": 0.004,
        "adjusted_pvalue": 0.024,
        "significant": True,
    },
    {
        "run_a": "bravo",
        "run_b": "charlie",
        "difference": 0.0123,
        "ci_low": -0.03,
        "ci_high": 0.05,
        "effect_size": float("inf"),
        "pvalue": 0.6,
        "adjusted_pvalue": 1.0,
        "significant": False,
    },
]


def _board(*, intervals: bool = True, biased: bool = False, warning: str | None = None) -> dict[str, Any]:
    """A published board document, with or without the interval keys."""
    rows = copy.deepcopy(ROWS)
    if not intervals:
        for row in rows:
            for key in ("ci_low", "ci_high", "level", "rank_low", "rank_high", "tier", "intervals"):
                del row[key]
    board: dict[str, Any] = {
        "campaign": {"id": 1, "name": "c"},
        "measure": "AP",
        "measures": ["AP", "P@10"],
        "filters": {"system_type": None},
        "rows": rows,
        "by_system_type": {t: [r for r in rows if r["system_type"] == t] for t in ("F", "M")},
        "per_topic": [],
        "judging_order": {"biased": True, "note": "judged in the non-random order mm_ns"} if biased else None,
        "warning": warning,
    }
    if intervals:
        board["interval"] = dict(INTERVAL)
    return board


def _significance(*, intervals: bool = True) -> dict[str, Any]:
    """A significance document of the board's measure, with or without pairs, tiers and rank intervals."""
    sig: dict[str, Any] = {
        "measure": "AP",
        "method": "pairwise",
        "alpha": 0.05,
        "n_resamples": 1000,
        "seed": 7,
        "runs": [r["run"] for r in ROWS],
        "groups": [["alpha"], ["bravo", "charlie"], ["delta"]],
        "tested": True,
        "note": None,
    }
    if intervals:
        sig["correction"] = "holm"
        sig["pairs"] = PAIRS
        sig["tiers"] = {r["run"]: r["tier"] for r in ROWS}
        sig["rank_intervals"] = {r["run"]: [r["rank_low"], r["rank_high"]] for r in ROWS}
    return sig


def _report(*, intervals: bool = True, biased: bool = False) -> dict[str, Any]:
    """A report document: the board's overall rows and the sections the template needs."""
    board = _board(intervals=intervals, biased=biased)
    report: dict[str, Any] = {
        "campaign": {"id": 1, "name": "c", "description": None},
        "measure": "AP",
        "overall": board["by_system_type"],
        "judging_order": board["judging_order"],
        "warning": None,
        "easy_hard": {"threshold": None, "easy": [], "hard": []},
        "top_runs_per_topic": {},
    }
    if intervals:
        report["interval"] = dict(INTERVAL)
    return report


def render_report(report: dict[str, Any], significance: dict[str, Any] | None = None) -> str:
    """The report page's HTML for a report document (figures as placeholders)."""
    return templates.get_template("report.html").render(
        report=report,
        figures={"overall": "<svg></svg>", "topics": "<svg></svg>"},
        campaign_id=1,
        significance=significance,
        published_at=datetime(2026, 1, 1, tzinfo=UTC),
        json_url="j",
        version="0",
        request=None,
    )


def test_the_board_shows_each_mean_with_its_interval_rank_interval_and_tier() -> None:
    html = render_board(_board(), _significance())
    rows = body_rows(html, "intervals")
    assert [r[1] for r in rows] == ["alpha", "bravo", "delta", "charlie"]  # by system type: F then M
    assert rows[1][0] == "2 (2–4)" and rows[1][2] == "0.4123 [0.3810, 0.4431]" and rows[1][3] == "2"
    assert rows[0][0] == "1 (1–1)" and rows[0][2] == "0.5000 [0.4500, 0.5500]" and rows[0][3] == "1"
    assert f"Intervals: {TEXT}." in text(html)
    assert "[95 % interval]" in text(html) and '<th scope="col" class="num" data-sort="number">Tier</th>' in html
    # a line above the first row of each new tier within a section (bravo opens tier 2, delta tier 3)
    assert len(re.findall(r'<tr class="tier-start">\s*<td class="rank" data-value="(?:2|4)">', html)) == 2
    assert html.count('class="tier-start"') == 2


def test_the_significance_section_lists_tiers_and_pairs_with_intervals_and_adjusted_p() -> None:
    html = render_board(_board(), _significance())
    section = text(html)
    assert "Tier 1: alpha" in section and "Tier 2: bravo, charlie" in section and "Tier 3: delta" in section
    assert "Pairwise differences (2 pairs, p-values adjusted by Holm)" in section
    pairs = body_rows(html, "pairs")
    assert pairs[0] == ["alpha", "bravo", "0.0877 [0.0200, 0.1500]", "1.25", "0.0040", "0.0240", "yes"]
    assert pairs[1] == ["bravo", "charlie", "0.0123 [-0.0300, 0.0500]", "∞", "0.6000", "1.0000", "no"]
    assert "A − B [95 % interval]" in section


@pytest.mark.parametrize("biased, warning", [(True, None), (False, "2 of 3 topic(s) have no judgements"), (True, "x")])
def test_a_marked_number_shows_its_mark_next_to_its_interval(biased: bool, warning: str | None) -> None:
    html = render_board(_board(biased=biased, warning=warning), _significance())
    rows = body_rows(html, "intervals")
    marks = ("†" if biased else "") + ("‡" if warning else "")
    assert rows[1][2].replace(" ", "") == f"0.4123[0.3810,0.4431]{marks}"
    assert all(r[2].replace(" ", "").endswith(marks) and r[7].replace(" ", "").endswith(marks) for r in rows)
    if biased:
        assert 'id="note-order"' in html and 'href="#note-order"' in html
        assert "Biased: judged in the non-random order mm_ns." in text(html)
    if warning:
        assert 'id="note-unjudged"' in html and 'href="#note-unjudged"' in html
        assert f"Incomplete judgements: {warning}." in text(html)


def test_a_board_published_before_intervals_renders_without_them() -> None:
    html = render_board(_board(intervals=False, biased=True), _significance(intervals=False))
    shown = text(html)
    assert "Intervals:" not in shown and "Tier" not in shown and "Pairwise differences" not in shown
    assert "[" not in "".join(c for row in body_rows(html, "board") for c in row)
    ranks = re.findall(r'<td class="rank" data-value="\d+">(\d+)</td>\s*<td class="run">([^<]+)</td>', html)
    assert ranks == [("1", "alpha"), ("2", "bravo"), ("4", "delta"), ("3", "charlie")]
    assert "0.4123 †" in shown  # the mark still follows the number
    assert "alpha, bravo" not in shown and "bravo, charlie" in shown  # the groups as before


def test_the_report_shows_the_overall_table_with_intervals_and_pairs() -> None:
    html = render_report(_report(biased=True), _significance())
    rows = body_rows(html, "overall")
    assert [r[1] for r in rows] == ["alpha", "bravo", "charlie", "delta"]  # all types, by rank
    assert rows[1] == ["2 (2–4)", "bravo", "team2", "F", "0.4123 [0.3810, 0.4431] †", "2"]
    assert f"Intervals: {TEXT}." in text(html) and "lines: its 95 % interval" in text(html)
    assert "Tier 2: bravo, charlie" in text(html) and len(body_rows(html, "pairs")) == 2
    old = render_report(_report(intervals=False), _significance(intervals=False))
    assert "Intervals:" not in text(old) and not body_rows(old, "overall") and "Pairwise differences" not in old


def test_the_overall_figure_draws_each_interval_as_an_error_bar() -> None:
    board = _board()
    figure = plots.overall_axes(board["by_system_type"], "AP")
    axes = figure.axes[0]
    assert [p.get_height() for p in axes.patches] == pytest.approx([0.5, 0.4123, 0.4, 0.3])
    (segments,) = [c.get_segments() for c in axes.collections]  # one LineCollection: the error bars
    assert [y for s in segments for y in (s[0][1], s[1][1])] == pytest.approx(
        [0.45, 0.55, 0.381, 0.4431, 0.35, 0.45, 0.2, 0.39]
    )
    assert axes.get_ylabel() == "mean AP (95% interval)"
    old = plots.overall_axes(_board(intervals=False)["by_system_type"], "AP").axes[0]
    assert len(old.collections) == 0 and old.get_ylabel() == "mean AP"
    assert "<svg" in plots.overall_scores(board["by_system_type"], "AP")


def test_error_bars_never_go_negative_and_skip_rows_without_an_interval() -> None:
    rows: list[dict[str, object]] = [
        {"score": 0.3, "ci_low": 0.35, "ci_high": 0.5},  # a widened interval need not hold the mean: no bar below
        {"score": 0.2},
        {"score": None, "ci_low": None, "ci_high": None},
    ]
    below, above = plots.error_bars(rows) or ([], [])
    assert below == [0.0, 0.0, 0.0] and above == pytest.approx([0.2, 0.0, 0.0])
    assert plots.error_bars(rows[1:]) is None


def test_the_pages_fit_a_390_px_screen_with_each_interval_in_view(browser) -> None:  # type: ignore[no-untyped-def]
    css = (Path(__file__).resolve().parents[2] / "app/web/static/results.css").read_text()
    script = (Path(__file__).resolve().parents[2] / "app/web/static/results.js").read_text()
    pages = {
        "leaderboard": render_board(_board(biased=True, warning="1 of 3 topic(s) have no judgements"), _significance()),
        "report": render_report(_report(biased=True), _significance()),
    }

    def serve(route) -> None:  # type: ignore[no-untyped-def]
        """The rendered pages and the results stylesheet, from a host of their own."""
        url = route.request.url
        if url.endswith("/static/results.css"):
            route.fulfill(body=css, content_type="text/css")
        elif "/static/results.js" in url:
            route.fulfill(body=script, content_type="text/javascript")
        else:
            route.fulfill(body=pages[url.rsplit("/", 1)[1]], content_type="text/html")

    page = browser.new_page(viewport={"width": 390, "height": 844})
    try:
        page.route("http://pages.test/**", serve)
        for name in pages:
            page.goto(f"http://pages.test/{name}")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390, name
            for cell in page.query_selector_all("table.intervals td.score.ranked, table.overall td.score"):
                # the ranked measure's mean, interval and marks on screen (other measures scroll in their region)
                box = cell.bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, name
                assert re.fullmatch(r"0\.\d{4} \[0\.\d{4}, 0\.\d{4}\] †( ‡)?", cell.inner_text().replace("\n", " "))
    finally:
        page.close()


COMBINED = {
    "judges": "combined",
    "provenance": {
        "model_assessors": [
            {
                "id": 3,
                "name": "umbrela",
                "provenance": {"model": "gpt-4o", "version": "2024-08", "config_hash": "ab" * 32},
            }
        ],
        "human_share": 0.2,
        "stratify": "confidence",
        "human_judgements": 120,
        "model_judgements": 600,
    },
}


@pytest.mark.parametrize(
    ("judges", "expected"),
    [
        (None, None),
        ({"judges": "human", "provenance": None}, None),
        (
            COMBINED,
            "Judged by a model, verified by people: umbrela (gpt-4o 2024-08, configuration abababababab). People judged"
            " a seeded 20 % sample (more often where the model was unsure): 120 human and 600 model judgements; P@k,"
            " AP and nDCG are prediction-powered estimates",
        ),
        (
            {"judges": "model", "provenance": {"model_assessors": [{"id": 3, "name": "m", "provenance": None}]}},
            "Judged by a model only: m. No person checked these judgements",
        ),
    ],
)
def test_the_board_says_whose_judgements_its_scores_rest_on(
    judges: dict[str, Any] | None, expected: str | None
) -> None:
    board = _board()
    board["qrels_judges"] = judges
    page = text(render_board(board, _significance()))
    if expected is None:
        assert "Judged by" not in page
    else:
        assert expected in page
