"""The moment part of a campaign archive: uploaded ground truth, moment pools' proposals and assessors' marks, moment
ground-truth versions; exported as `rows` records, imported under new ids, and verified (a moment pool rebuilt from
its runs, depth, IoU threshold and seed; a cut ground-truth version cut again from the marks)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.evaluation.pools.moments import DEFAULT_IOU, build_moment_pool
from app.services.archive_format import Difference, ImportContext, Verification, same_float
from app.services.moment_judging import truth_from_marks
from app.services.run_arrays import load_moment_runs
from app.storage.models import Pool, QrelsVersion

MOMENTS = "moments"

# table: its archive columns and export query (`:c` the campaign, `:v` the pool or ground-truth version)
TABLES: dict[str, tuple[tuple[str, ...], str]] = {
    "ground_truth": (
        ("topic", "video_id", "start", "end", "assessor_id", "created_at"),
        'SELECT t.number, g.video_id, g.start, g."end", g.assessor_id, g.created_at FROM ground_truth_segments g '
        "JOIN topics t ON t.id = g.topic_id WHERE t.campaign_id = :c ORDER BY g.id",
    ),
    "moment_pool_items": (
        tuple("id pool_id topic video_id start end best_rank n_runs judging_order".split()),
        'SELECT i.id, i.pool_id, t.number, i.video_id, i.start, i."end", i.best_rank, i.n_runs, i.judging_order '
        "FROM moment_pool_items i JOIN topics t ON t.id = i.topic_id WHERE i.pool_id = :v ORDER BY i.id",
    ),
    "moment_judgements": (
        tuple("item_id assessor_id segments seconds_spent created_at updated_at".split()),
        "SELECT j.item_id, j.assessor_id, j.segments, j.seconds_spent, j.created_at, j.updated_at "
        "FROM moment_judgements j JOIN moment_pool_items i ON i.id = j.item_id WHERE i.pool_id = :v ORDER BY j.id",
    ),
    "moment_truth_segments": (
        ("qrels_version_id", "topic", "video_id", "start", "end"),
        'SELECT s.qrels_version_id, t.number, s.video_id, s.start, s."end" FROM moment_truth_segments s '
        "JOIN topics t ON t.id = s.topic_id WHERE s.qrels_version_id = :v ORDER BY s.id",
    ),
}
POOL_TABLES = ("moment_pool_items", "moment_judgements")  # exported after each pool's record
VERSION_TABLES = ("moment_truth_segments",)  # after each qrels version's record


# ------------------------------------------------------------------------------------------------------- import


def rows_ground_truth(ctx: ImportContext, line: int, c: Sequence[Sequence[object]]) -> None:
    """Uploaded ground-truth segments."""
    columns = [ctx.topic_ids(c[0], line), c[1], c[2], c[3], ctx.refs("assessor", c[4], line, optional=True), c[5]]
    ctx.copy("ground_truth_segments", ("topic_id", "video_id", "start", "end", "assessor_id", "created_at"), columns)


def rows_moment_pool_items(ctx: ImportContext, line: int, c: Sequence[Sequence[object]]) -> None:
    """A moment pool's proposals."""
    new = ctx.new_ids("moment_pool_items", len(c[0]))
    for old, made in zip(c[0], new, strict=True):
        ctx.remember("moment_item", old, made)
    columns: list[Sequence[object]] = [new, ctx.refs("pool", c[1], line), ctx.topic_ids(c[2], line), *c[3:]]
    names = ("id", "pool_id", "topic_id", "video_id", "start", "end", "best_rank", "n_runs", "judging_order")
    ctx.copy("moment_pool_items", names, columns)


def rows_moment_judgements(ctx: ImportContext, line: int, c: Sequence[Sequence[object]]) -> None:
    """Assessors' marks (segments as JSON)."""
    segments = [json.dumps(s) for s in c[2]]
    columns: list[Sequence[object]] = [
        ctx.refs("moment_item", c[0], line),
        ctx.refs("assessor", c[1], line),
        segments,
        *c[3:],
    ]
    names = ("item_id", "assessor_id", "segments", "seconds_spent", "created_at", "updated_at")
    ctx.copy("moment_judgements", names, columns)


def rows_moment_truth_segments(ctx: ImportContext, line: int, c: Sequence[Sequence[object]]) -> None:
    """A moment ground-truth version's segments."""
    columns: list[Sequence[object]] = [ctx.refs("qrels_version", c[0], line), ctx.topic_ids(c[1], line), *c[2:]]
    ctx.copy("moment_truth_segments", ("qrels_version_id", "topic_id", "video_id", "start", "end"), columns)


ROWS = {
    "ground_truth": rows_ground_truth,
    "moment_pool_items": rows_moment_pool_items,
    "moment_judgements": rows_moment_judgements,
    "moment_truth_segments": rows_moment_truth_segments,
}


# ------------------------------------------------------------------------------------------------------- verify

_ITEMS = text(
    'SELECT t.number, i.judging_order, i.video_id, i.start, i."end", i.best_rank, i.n_runs FROM moment_pool_items i '
    "JOIN topics t ON t.id = i.topic_id WHERE i.pool_id = :pool"
)
ITEM_FIELDS = ("video_id", "start", "end", "best_rank", "n_runs")


def compare_pool(session: Session, pool: Pool, archive_id: int, found: Verification) -> None:
    """Rebuild a moment pool from its runs, depth, IoU threshold and seed (as `moment_judging.create_moment_pool`
    builds it) and compare it proposal by proposal (by topic and judging order), floats bit for bit."""
    params = pool.params
    runs = load_moment_runs(session, [int(r) for r in params["run_ids"]])
    table = build_moment_pool(
        runs, depth=int(params["depth"]), iou=float(params.get("iou", DEFAULT_IOU)), seed=int(pool.seed)
    )
    rebuilt = {
        (str(t), int(o)): (str(v), s, e, int(b), int(n))
        for t, o, v, s, e, b, n in zip(
            table.topics.tolist(),
            table.judging_order.tolist(),
            table.videos.tolist(),
            table.starts.tolist(),
            table.ends.tolist(),
            table.best_ranks.tolist(),
            table.n_runs.tolist(),
            strict=True,
        )
    }
    stored = 0
    for topic, order, *values in session.execute(_ITEMS, {"pool": pool.id}):
        stored += 1
        where = f"moment pool {archive_id}, topic {topic}, proposal {order}"
        again = rebuilt.pop((str(topic), int(order)), None)
        if again is None:
            found.differ(Difference("moment_item", where, "proposed", "not proposed"))
            continue
        for name, a, b in zip(ITEM_FIELDS, values, again, strict=True):
            same = same_float(a, b) if name in ("start", "end") else a == b
            if not same:
                found.differ(Difference("moment_item", f"{where}: {name}", a, b))
    for topic, order in sorted(rebuilt):
        where = f"moment pool {archive_id}, topic {topic}, proposal {order}"
        found.differ(Difference("moment_item", where, "not proposed", "proposed"))
    found.count("moment_pool_items", stored)
    found.count("pools")


_MARKS = text(
    "SELECT i.id, t.number, i.video_id, j.assessor_id, j.segments FROM moment_judgements j "
    "JOIN moment_pool_items i ON i.id = j.item_id JOIN topics t ON t.id = i.topic_id WHERE i.pool_id = :pool "
    "ORDER BY j.id"
)
_LATER_MARKS = text(
    "SELECT count(*) FROM moment_judgements j JOIN moment_pool_items i ON i.id = j.item_id "
    "WHERE i.pool_id = :pool AND j.updated_at > :cut"
)
_TRUTH = text(
    'SELECT t.number, s.video_id, s.start, s."end" FROM moment_truth_segments s JOIN topics t ON t.id = s.topic_id '
    "WHERE s.qrels_version_id = :v ORDER BY s.id"
)


def compare_truth(session: Session, version: QrelsVersion, archive_id: int, found: Verification) -> None:
    """A ground-truth version cut from a moment pool's marks, cut again from them by its combine rule and compared
    segment by segment (not recomputed when a mark changed after the cut, or for an uploaded version)."""
    what = f"moment ground truth {archive_id} ({version.label!r})"
    if version.pool_id is None or version.source != "cut":
        found.not_recomputed("qrels", what, "imported, not cut from marks: nothing to recompute it from")
        return
    later = session.scalar(_LATER_MARKS, {"pool": version.pool_id, "cut": version.created_at})
    if later:
        why = f"{later} mark(s) changed after the cut: the ones it was cut from are gone"
        found.not_recomputed("qrels", what, why)
        return
    marks: list[tuple[int, str, str, int, list[list[float]]]] = [
        (int(i), str(t), str(v), int(a), s) for i, t, v, a, s in session.execute(_MARKS, {"pool": version.pool_id})
    ]
    topics, videos, starts, ends = truth_from_marks(marks, version.combine or "first")
    again = list(zip(topics, videos, np.asarray(starts).tolist(), np.asarray(ends).tolist(), strict=True))
    stored: list[Any] = [tuple(row) for row in session.execute(_TRUTH, {"v": version.id})]
    with found.checking("qrels"):
        for i in range(max(len(stored), len(again))):
            a = stored[i] if i < len(stored) else None
            b = again[i] if i < len(again) else None
            if a is None or b is None or a[:2] != b[:2] or not (same_float(a[2], b[2]) and same_float(a[3], b[3])):
                found.differ(Difference("qrels", f"{what}, segment {i + 1}", a, b))
        found.count("moment_truth_segments", len(stored))
