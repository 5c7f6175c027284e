"""OpenAPI descriptions of the answers that are not JSON: CSV tables, text files (runs, qrels)."""

from __future__ import annotations

from typing import Any

TEXT = {"schema": {"type": "string"}}

CSV_OR_JSON: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "JSON by default; with `format=csv` the leaderboard, with `format=topics.csv` the per-topic "
        "table, as text/csv (UTF-8, a header row first)",
        "content": {"text/csv": TEXT},
    }
}

TEXT_FILE: dict[int | str, dict[str, Any]] = {
    200: {"description": "The file, as text (UTF-8), sent as an attachment", "content": {"text/plain": TEXT}}
}
