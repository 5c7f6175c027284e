"""Who reads scores imports `scores`; `leaderboards` builds boards only; the team policy and snapshots live apart.

Reading stored scores (`scores`), building boards (`leaderboards`), who sees what (`visibility`) and published
snapshots (`snapshots`) are four modules: a change to one of them is made in one place, and a service that only
reads scores does not depend on board building.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SERVICES = REPO / "app" / "services"
READERS = ("analyses", "publication", "reports", "run_charts")  # services that read stored scores


def _imports(module: str) -> dict[str, set[str]]:
    """What a service module imports: module -> names (a plain `import x` gives x -> {"*"})."""
    found: dict[str, set[str]] = {}
    for node in ast.walk(ast.parse((SERVICES / f"{module}.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.setdefault(node.module, set()).update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found.setdefault(alias.name, set()).add("*")
    return found


def _defined(module: str) -> set[str]:
    """The top-level functions, classes and constants of a service module."""
    names: set[str] = set()
    for node in ast.parse((SERVICES / f"{module}.py").read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_services_that_read_scores_take_them_from_scores_not_from_leaderboards():
    readers_of_scores = {"score_table", "leaderboard_table", "ScoreTable", "finished_evaluation", "default_measure"}
    for module in READERS:
        imported = _imports(module)
        assert not readers_of_scores & imported.get("app.services.leaderboards", set()), module
        assert imported.get("app.services.scores"), f"{module} reads no scores"


def test_leaderboards_builds_boards_and_reads_no_table_itself():
    imported = _imports("leaderboards")
    assert "app.storage.bulk" not in imported and "psycopg" not in imported  # no COPY, no SQL of its own
    assert not {"text", "select"} & imported.get("sqlalchemy", set())
    assert not {"LeaderboardSnapshot", "TeamResults", "Role"} & imported.get("app.storage.models", set())
    assert {"Filters", "ranked", "board_document", "per_topic", "significance"} <= _defined("leaderboards")
    assert not {"team_board", "team_results", "snapshot_content", "published_snapshot"} & _defined("leaderboards")


def test_each_concern_has_one_module():
    assert {"score_table", "leaderboard_table", "run_topic_scores", "finished_evaluation"} <= _defined("scores")
    assert {"leaderboard_for", "team_board", "visible_evaluation"} <= _defined("visibility")
    assert {"snapshot_content", "published_snapshot", "published_table", "published_campaigns"} <= _defined("snapshots")
    assert "app.services.leaderboards" not in _imports("snapshots")  # boards are built on snapshots, not back
    assert "app.services.visibility" not in _imports("leaderboards")  # the policy sits on top of the boards
