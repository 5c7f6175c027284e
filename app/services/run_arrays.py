"""Loading stored runs into the numeric core's tables, for pooling, evaluation and analyses."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.moments import MomentRunTable
from app.evaluation.records import RunTable
from app.services import run_files
from app.storage.models import Run


def load_runs(session: Session, run_ids: Sequence[int]) -> list[RunTable]:
    """The given shot runs as the numeric core's tables, in the order of `run_ids`.

    Each run is re-read from its stored, validated upload (a run's only record of its rows) by the core's
    vectorised parser: faster than reassembling rows from a table (PostgreSQL spent ~1.2 us a row writing them back
    as text), and the tables carry the parser's docno hashes that make preparing runs fast. Tags are the files';
    callers name runs themselves.
    """
    return [parsed.trec for parsed in _parsed(session, run_ids)]


def load_moment_runs(session: Session, run_ids: Sequence[int]) -> list[MomentRunTable]:
    """The given moment runs, re-read from their stored uploads (untagged, so callers name them)."""
    return [replace(table, tag=None) for table in (t.moments for t in _parsed(session, run_ids))]


def _parsed(session: Session, run_ids: Sequence[int]) -> list[run_files.ParsedRun]:
    """The stored uploads of the given runs, parsed, in the order of `run_ids`."""
    rows = session.execute(select(Run.id, Run.format, Run.content).where(Run.id.in_(list(run_ids)))).all()
    by_id = {run_id: (fmt, content) for run_id, fmt, content in rows}
    return [run_files.parse(zlib.decompress(by_id[r][1]), by_id[r][0], max_errors=1) for r in run_ids]
