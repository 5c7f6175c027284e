"""CSV exports never start a cell with a formula character; download names survive quotes and non-ASCII."""

from __future__ import annotations

import csv
import io

import pytest

from app.services.tables import attachment, leaderboard_csv, per_topic_csv, safe_cell


@pytest.mark.parametrize("text", ['=HYPERLINK("http://x","y")', "+1", "-cmd", "@SUM(A1)", "\tx", "\rx"])
def test_text_starting_like_a_formula_is_neutralised(text):
    assert safe_cell(text) == "'" + text


@pytest.mark.parametrize("value", ["run1", "a=b", "", None, -0.5, 3, 0.25])
def test_other_cells_pass_unchanged(value):
    assert safe_cell(value) == value


def _board() -> dict[str, object]:
    row = {
        "rank": 1,
        "run": '=HYPERLINK("http://evil","x")',
        "team": "@team",
        "system_type": "F",
        "training_type": "D",
        "novelty": False,
        "priority": 1,
        "score": -0.25,
        "scores": {"AP": -0.25},
    }
    return {
        "measures": ["AP"],
        "rows": [row],
        "per_topic": [{"topic": "1", "best_run": "+r", "best": 1.0, "median": 0.5}],
    }


def test_leaderboard_and_per_topic_csv_cells_are_safe():
    board = _board()
    rows = list(csv.reader(io.StringIO(leaderboard_csv(board))))
    assert rows[1][1] == '\'=HYPERLINK("http://evil","x")' and rows[1][2] == "'@team"
    assert rows[1][7] == "-0.25" and rows[1][8] == "-0.25"  # negative numbers stay numbers
    topics = list(csv.reader(io.StringIO(per_topic_csv(board))))
    assert topics[1] == ["1", "'+r", "1.0", "0.5"]
    for row in rows[1:] + topics[1:]:
        for cell in row:
            assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell


def test_attachment_quotes_the_name_per_rfc_6266():
    assert attachment("run1.txt") == "attachment; filename=\"run1.txt\"; filename*=UTF-8''run1.txt"
    header = attachment('a"b\\c é.txt')
    plain = header.split("filename=", 1)[1].split(";", 1)[0]
    assert plain == '"a_b_c _.txt"'
    assert header.endswith("filename*=UTF-8''a%22b%5Cc%20%C3%A9.txt")


def test_leaderboard_csv_carries_the_intervals_and_leaves_missing_ones_empty():
    """The board measure's interval, rank interval and tier after the measures, then each measure's interval; a row
    without them (published before intervals, a team's own view) has empty cells there."""
    board = _board()
    board["measures"] = ["AP", "P@5"]
    with_ci = {
        **board["rows"][0],
        "scores": {"AP": 0.3, "P@5": 0.4},
        "ci_low": 0.2, "ci_high": 0.45, "level": 0.95, "rank_low": 1, "rank_high": 2, "tier": 1,
        "intervals": {"AP": {"ci_low": 0.2, "ci_high": 0.45}, "P@5": None},
    }  # fmt: skip
    board["rows"] = [with_ci, {**board["rows"][0], "scores": {"AP": 0.1, "P@5": 0.2}}]
    header, first, second = list(csv.reader(io.StringIO(leaderboard_csv(board))))
    assert header[8:] == ["AP", "P@5", "ci_low", "ci_high", "level", "rank_low", "rank_high", "tier",
                          "AP ci_low", "AP ci_high", "P@5 ci_low", "P@5 ci_high"]  # fmt: skip
    assert first[8:] == ["0.3", "0.4", "0.2", "0.45", "0.95", "1", "2", "1", "0.2", "0.45", "", ""]
    assert second[8:] == ["0.1", "0.2"] + [""] * 10
