"""A board ranks each run type 1..n within it, carries each run's baseline mark and submission time, and anonymous
team names run Team A .. Z, AA, AB, ..."""

from __future__ import annotations

import numpy as np

from app.services.leaderboards import Filters, anonymised, board_document
from app.services.scores import RunInfo, ScoreTable, alias


def _table() -> ScoreTable:
    """Four runs of two types and two teams, one measure, two topics (no intervals)."""
    types = ["F", "M", "F", "M"]
    runs = [RunInfo(i + 1, f"run{i}", 10 + i % 2, types[i], "D", False, 1) for i in range(4)]
    means = np.array([[0.4], [0.3], [0.2], [0.1]])
    values = np.repeat(means[:, :, None], 2, axis=2)
    return ScoreTable(runs, {10: "ten", 11: "eleven"}, ["AP"], ["1", "2"], values, means)


def test_each_run_type_is_ranked_from_one_and_rows_carry_their_marks() -> None:
    marks = {2: {"baseline": True, "submitted_at": "2026-01-02T03:04:05+00:00"}}
    board = board_document({}, _table(), "AP", Filters(), marks=marks)
    assert [(r["run"], r["rank"]) for r in board["rows"]] == [("run0", 1), ("run1", 2), ("run2", 3), ("run3", 4)]
    grouped = {t: [(r["run"], r["rank"]) for r in rows] for t, rows in board["by_system_type"].items()}
    assert grouped == {"F": [("run0", 1), ("run2", 2)], "M": [("run1", 1), ("run3", 2)]}
    assert [r["baseline"] for r in board["rows"]] == [False, True, False, False]
    assert board["rows"][1]["submitted_at"] == "2026-01-02T03:04:05+00:00" and board["rows"][0]["submitted_at"] is None


def test_anonymised_boards_name_teams_by_their_aliases() -> None:
    board = board_document({}, _table(), "AP", Filters())
    hidden = anonymised(board, {1: 10, 2: 11, 3: 10, 4: 11}, {11: "Team A", 10: "Team B"})
    assert hidden["anonymised"] is True and board["anonymised"] is False
    assert [r["team"] for r in hidden["rows"]] == ["Team B", "Team A", "Team B", "Team A"]
    assert [r["team"] for r in hidden["by_system_type"]["M"]] == ["Team A", "Team A"]
    assert [r["team"] for r in board["rows"]] == ["ten", "eleven", "ten", "eleven"]  # the original is untouched


def test_aliases_run_from_a_to_z_then_two_letters() -> None:
    assert [alias(k) for k in (0, 1, 25, 26, 27, 51, 52)] == [
        "Team A",
        "Team B",
        "Team Z",
        "Team AA",
        "Team AB",
        "Team AZ",
        "Team BA",
    ]
