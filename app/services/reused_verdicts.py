"""Verdicts a top-up pool reused from earlier pools of its campaign series, and where each was given originally.

A series pool (`services/series.py`) copies an earlier pool's settled verdict to an item judged there before; the
copy (`judgements.reused_from`) keeps the original's judgement id, round, pool, campaign, assessor and the assessor's
kind (human, model with its provenance, or an organiser's adjudication). The pool's params count the copies by origin
when built (`params.reused`); its statistics and the qrels versions cut from it say the same from the judgements.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import text
from sqlalchemy.orm import Session

ORIGIN_FIELDS = ("pool_id", "campaign_id", "campaign", "assessor_id", "assessor", "kind")


def origins_summary(origins: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Reused verdicts counted by where they were originally given: pool, campaign, assessor and its kind."""
    counted: dict[tuple[Any, ...], int] = defaultdict(int)
    for origin in origins:
        counted[tuple(origin.get(name) for name in ORIGIN_FIELDS)] += 1
    ordered = sorted(counted.items(), key=lambda kv: tuple((v is None, str(v)) for v in kv[0]))
    return [{**dict(zip(ORIGIN_FIELDS, key, strict=True)), "items": n} for key, n in ordered]


_REUSED_ITEMS = text(
    """
    SELECT t.number, i.docno, j.grade, j.reused_from FROM judgements j
    JOIN pool_items i ON i.id = j.pool_item_id JOIN topics t ON t.id = i.topic_id
    WHERE i.pool_id = :pool AND j.reused_from IS NOT NULL
    ORDER BY length(t.number), t.number, i.docno COLLATE "C"
    """
)


def reused_items(session: Session, pool_id: int) -> list[dict[str, Any]]:
    """A pool's reused verdicts item by item: topic, docno, grade and where the verdict was originally given."""
    rows = session.execute(_REUSED_ITEMS, {"pool": pool_id})
    return [{"topic": n, "docno": d, "grade": g, "origin": o} for n, d, g, o in rows]


def reused_summary(session: Session, pool_id: int) -> dict[str, Any]:
    """How many of a pool's verdicts were reused from earlier series pools, counted by origin (0 and [] for none)."""
    origins = [row["origin"] for row in reused_items(session, pool_id)]
    return {"items": len(origins), "origins": origins_summary(origins)}
