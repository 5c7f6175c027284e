"""Loading stored runs into numpy arrays in one COPY per batch, for pooling and evaluation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from psycopg import sql
from sqlalchemy.orm import Session

from app.storage.bulk import copy_out


@dataclass(frozen=True)
class StoredRun:
    """One stored run's rows as arrays (file order)."""

    run_id: int
    topics: np.ndarray
    docs: np.ndarray
    ranks: np.ndarray
    scores: np.ndarray


def load_runs(session: Session, run_ids: Sequence[int]) -> list[StoredRun]:
    """The rows of the given shot runs, in the order of `run_ids`."""
    if not run_ids:
        return []
    query = sql.SQL(
        "SELECT e.run_id, t.number, e.docno, e.rank, e.score FROM run_entries e JOIN topics t ON t.id = e.topic_id "
        "WHERE e.run_id = ANY({}) ORDER BY e.run_id, e.seq"
    ).format(sql.Literal(list(run_ids)))
    raw = b"".join(copy_out(session, query, delimiter="\t"))
    fields = np.array(raw.decode().split(), dtype=str).reshape(-1, 5) if raw else np.empty((0, 5), dtype=str)
    run_col = fields[:, 0].astype(np.int64)
    bounds = np.searchsorted(run_col, np.array(sorted(run_ids)), side="left")
    ends = np.searchsorted(run_col, np.array(sorted(run_ids)), side="right")
    by_id = {}
    for run_id, start, end in zip(sorted(run_ids), bounds.tolist(), ends.tolist(), strict=True):
        rows = fields[start:end]
        by_id[run_id] = StoredRun(
            run_id=run_id,
            topics=rows[:, 1],
            docs=rows[:, 2],
            ranks=rows[:, 3].astype(np.int64),
            scores=rows[:, 4].astype(np.float64),
        )
    return [by_id[r] for r in run_ids]
