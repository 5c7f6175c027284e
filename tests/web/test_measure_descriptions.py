"""Leaderboard page and OpenAPI describe measures from the registry (app.evaluation.measures.registry)."""

from __future__ import annotations

from markupsafe import escape

from app.evaluation.measures.registry import describe
from app.server import create_app
from tests.web.interval_documents import render_board


def test_openapi_measure_parameter_lists_the_registry() -> None:
    spec = create_app().openapi()
    for path in ("/api/public/campaigns/{campaign_id}/leaderboard", "/api/campaigns/{campaign_id}/leaderboard"):
        parameters = spec["paths"][path]["get"]["parameters"]
        text = next(p for p in parameters if p["name"] == "measure")["description"]
        assert "AP: Average precision" in text and "xinfAP: Extended inferred AP" in text


def test_leaderboard_page_describes_the_measures() -> None:
    board = {
        "campaign": {"name": "c"},
        "measure": "P@10",
        "measures": ["AP", "P@10"],
        "filters": {"system_type": None},
        "by_system_type": {},
        "per_topic": [],
    }
    html = render_board(board)
    assert f"<strong>P@10</strong>: {escape(describe('P@10'))}" in html
    assert f'title="{escape(describe("AP"))}"' in html
