"""Loading stored runs into the numeric core's tables, for pooling, evaluation and analyses."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.moments import MomentRunTable
from app.evaluation.records import RunTable
from app.services import run_files
from app.services.errors import Conflict, Unavailable
from app.storage import run_store
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
    return [run_files.parse(data, fmt, max_errors=1) for fmt, data in stored_files(session, run_ids)]


def stored_files(session: Session, run_ids: Sequence[int]) -> Iterator[tuple[str, bytes]]:
    """Each given run's format and file (decompressed), in the order of `run_ids`, read one run at a time from the
    store its row names (Conflict naming the run when its file is missing or damaged, Unavailable when its store
    cannot be reached)."""
    rows = session.execute(select(Run.id, Run.format, Run.storage, Run.storage_key).where(Run.id.in_(list(run_ids))))
    by_id = {run_id: (fmt, storage, key) for run_id, fmt, storage, key in rows}
    for run_id in run_ids:
        fmt, storage, key = by_id[run_id]
        yield fmt, _read(session, run_id, storage, key)


def stored_file(session: Session, run: Run) -> bytes:
    """A run's file (decompressed), from the store its row names (Conflict or Unavailable naming the run)."""
    return _read(session, run.id, run.storage, run.storage_key)


def _read(session: Session, run_id: int, storage: str, key: str) -> bytes:
    """One run's file, its store's errors naming the run: Unavailable when unreachable, else Conflict."""
    try:
        return run_store.load(session, storage, key)
    except run_store.RunStoreUnavailable as exc:
        raise Unavailable(f"run {run_id}: {exc}") from None
    except run_store.RunStoreError as exc:
        raise Conflict(f"run {run_id}: {exc}") from None
