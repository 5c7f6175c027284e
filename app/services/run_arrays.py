"""Loading stored runs into the numeric core's tables with one COPY per batch, for pooling and evaluation."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from psycopg import sql
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.evaluation.moments import MomentRunTable
from app.evaluation.records import RunTable
from app.evaluation.trec_files import parse_trec_run
from app.storage.bulk import copy_out


def _fetch(session: Session, query: sql.Composable, width: int) -> np.ndarray:
    """All rows of a query as a [n, width] string array (values have no white space)."""
    raw = b"".join(copy_out(session, query, delimiter="\t"))
    return np.array(raw.decode().split(), dtype=str).reshape(-1, width) if raw else np.empty((0, width), dtype=str)


def _split(fields: np.ndarray, run_ids: Sequence[int]) -> dict[int, np.ndarray]:
    """Rows per run id, for rows sorted by run id in column 0."""
    run_col = fields[:, 0].astype(np.int64)
    ids = np.array(sorted(run_ids))
    starts, ends = np.searchsorted(run_col, ids, side="left"), np.searchsorted(run_col, ids, side="right")
    return {int(r): fields[s:e] for r, s, e in zip(ids.tolist(), starts.tolist(), ends.tolist(), strict=True)}


_RUN_TEXTS = text(
    """
    SELECT e.run_id, string_agg(t.number || ' Q0 ' || e.docno || ' ' || e.rank || ' ' || e.score || ' ' || e.run_id,
                                E'\\n' ORDER BY e.seq)
    FROM run_entries e JOIN topics t ON t.id = e.topic_id
    WHERE e.run_id = ANY(:ids) GROUP BY e.run_id
    """
)


def load_runs(session: Session, run_ids: Sequence[int]) -> list[RunTable]:
    """The rows of the given shot runs in file order, in the order of `run_ids` (tag = run id).

    PostgreSQL writes each run back as TREC text in one value (float8 text is exact since PostgreSQL 12) and the
    numeric core's parser reads it: much faster than one Python object per cell, and the tables carry the
    parser's docno hashes that make preparing runs fast.
    """
    texts = {rid: body for rid, body in session.execute(_RUN_TEXTS, {"ids": list(run_ids)})} if run_ids else {}
    return [
        parse_trec_run(texts[run_id], source=f"run {run_id}") if run_id in texts else _empty_run(run_id)
        for run_id in run_ids
    ]


def _empty_run(run_id: int) -> RunTable:
    """A run with no rows."""
    empty = np.array([], dtype=str)
    return RunTable(tag=str(run_id), topics=empty, docs=empty, ranks=np.array([], dtype=np.int64),
                    scores=np.array([], dtype=np.float64), lines=np.array([], dtype=np.int64))


def load_moment_runs(session: Session, run_ids: Sequence[int]) -> list[MomentRunTable]:
    """The rows of the given moment runs in file order (tag = run id)."""
    if not run_ids:
        return []
    query = sql.SQL(
        "SELECT e.run_id, t.number, e.video_id, e.start, e.end, e.score FROM moment_entries e "
        "JOIN topics t ON t.id = e.topic_id WHERE e.run_id = ANY({}) ORDER BY e.run_id, e.seq"
    ).format(sql.Literal(list(run_ids)))
    by_id = _split(_fetch(session, query, 6), run_ids)
    return [
        MomentRunTable(
            tag=str(run_id),
            topics=by_id[run_id][:, 1],
            videos=by_id[run_id][:, 2],
            starts=by_id[run_id][:, 3].astype(np.float64),
            ends=by_id[run_id][:, 4].astype(np.float64),
            scores=by_id[run_id][:, 5].astype(np.float64),
            lines=np.arange(1, len(by_id[run_id]) + 1),
        )
        for run_id in run_ids
    ]
