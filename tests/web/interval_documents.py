"""Plain helpers of the interval page tests (fixtures are in the conftest.py files): a page's text and the cells of its
tables. Import them from here, never from another test module."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html import unescape
from typing import Any

from app.evaluation.measures.registry import describe
from app.web.pages import templates


def text(html: str) -> str:
    """The page's text, tags removed and spaces collapsed."""
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", html)))


def body_rows(html: str, table_class: str) -> list[list[str]]:
    """The text of each body row's cells of the tables with the class."""
    rows = []
    for table in re.findall(rf'<table class="[^"]*\b{table_class}\b[^"]*">(.*?)</table>', html, re.S):
        body = table.split("<tbody>")[1]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S):
            rows.append([text(c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)])
    return rows


def render_board(board: dict[str, Any], significance: dict[str, Any] | None = None) -> str:
    """The leaderboard page's HTML for a board document."""
    return templates.get_template("leaderboard.html").render(
        board=board,
        significance=significance,
        campaign_id=1,
        json_url="j",
        csv_url="c",
        topics_csv_url="t",
        published_at=datetime(2026, 1, 1, tzinfo=UTC),
        describe=describe,
        version="0",
        request=None,
    )
