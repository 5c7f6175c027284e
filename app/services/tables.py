"""Tabular downloads (CSV) of leaderboard documents, shared by the API and the web pages."""

from __future__ import annotations

import csv
import io

FIXED = ("rank", "run", "team", "system_type", "training_type", "novelty", "priority", "score")


def leaderboard_csv(board: dict[str, object]) -> str:
    """A leaderboard's rows as CSV: the fixed columns, then one column per measure."""
    measures = list(board["measures"])  # type: ignore[call-overload]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*FIXED, *measures])
    for row in board["rows"]:  # type: ignore[attr-defined]
        writer.writerow([*(row[k] for k in FIXED), *(row["scores"].get(m) for m in measures)])
    return out.getvalue()


def per_topic_csv(board: dict[str, object]) -> str:
    """A leaderboard's per-topic table as CSV."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["topic", "best_run", "best", "median"])
    for row in board["per_topic"]:  # type: ignore[attr-defined]
        writer.writerow([row["topic"], row["best_run"], row["best"], row["median"]])
    return out.getvalue()
