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
