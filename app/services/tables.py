"""Tabular downloads (CSV) of leaderboard documents, shared by the API and the web pages."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

FIXED = ("rank", "run", "team", "system_type", "training_type", "novelty", "priority", "score")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value: object) -> object:
    """A cell a spreadsheet will not run as a formula: text starting with = + - @, tab or CR gets a leading '.

    Numbers pass unchanged (a negative score is a number, not a formula); only text is neutralised, as OWASP
    advises against CSV injection (SPEC section 7).
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _csv(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV text of a header and rows, every cell made safe."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows([safe_cell(v) for v in row] for row in rows)
    return out.getvalue()


INTERVAL = ("ci_low", "ci_high", "level", "rank_low", "rank_high", "tier")


def leaderboard_csv(board: Mapping[str, Any]) -> str:
    """A leaderboard's rows as CSV (a leaderboard's JSON document): the fixed columns, one column per measure, then
    the board measure's interval, rank interval and tier, and each measure's interval (`AP ci_low`, `AP ci_high`);
    cells a document lacks (one published before intervals, a team's view without ranks) are empty."""
    measures = list(board["measures"])
    rows = board["rows"]

    def bounds(row: Mapping[str, Any], measure: str) -> list[object]:
        """The measure's interval ends in a row, None where it has none."""
        found = (row.get("intervals") or {}).get(measure) or {}
        return [found.get("ci_low"), found.get("ci_high")]

    cells = (
        [
            *(r.get(k) for k in FIXED),
            *(r["scores"].get(m) for m in measures),
            *(r.get(k) for k in INTERVAL),
            *(v for m in measures for v in bounds(r, m)),
        ]
        for r in rows
    )
    per_measure = [f"{m} {end}" for m in measures for end in ("ci_low", "ci_high")]
    return _csv([*FIXED, *measures, *INTERVAL, *per_measure], cells)


def per_topic_csv(board: Mapping[str, Any]) -> str:
    """A leaderboard's per-topic table as CSV."""
    rows = board["per_topic"]
    return _csv(
        ["topic", "best_run", "best", "median"], ([r["topic"], r.get("best_run"), r["best"], r["median"]] for r in rows)
    )


def attachment(filename: str) -> str:
    """A Content-Disposition header value for a download named `filename` (RFC 6266, with RFC 5987 for non-ASCII).

    The plain `filename=` keeps printable ASCII other than quotes and backslashes; `filename*=` carries the exact
    name, percent-encoded, for clients that read it.
    """
    from urllib.parse import quote

    fallback = "".join(c if 32 <= ord(c) < 127 and c not in '"\\' else "_" for c in filename) or "download"
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"
