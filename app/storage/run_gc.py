"""Collecting orphan run files (`trecpool storage gc`): files of a directory or S3 store that no run row names.

A file is an orphan when no run row says it is in that store under that key: its runs were deleted, moved to another
store, or written by an upload or import that rolled back. Keys are content-addressed, so a file shared by several
runs is kept while any of them names it. Two guards keep the file of a row on its way: a file written in the last
`min_age` is never deleted (an upload in flight, a migration copying), and each deletion happens under the file's
advisory lock, taken only when no writer holds it (writers hold it until their row is committed: `hold_file`), after
the rows and the file's age are read again (a batch of files per transaction). Each file deleted is recorded in the
audit trail (table `run_files`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from app.config import check_location
from app.storage.audit import actor_of, set_actor
from app.storage.models import AuditEvent
from app.storage.run_store import (
    POSTGRES,
    DirectoryStore,
    ListedStore,
    RunStoreError,
    S3Store,
    StoredObject,
    file_lock,
    open_store,
)

BATCH = 200  # orphans deleted per transaction: its commit, not the files, is most of a deletion's time
AUDIT_TABLE = "run_files"  # the audit trail's name for files deleted by gc (no table of that name: no trigger)


@dataclass
class Counted:
    """A number of files and their bytes."""

    files: int = 0
    bytes: int = 0

    def add(self, found: StoredObject) -> None:
        """Count one more file."""
        self.files += 1
        self.bytes += found.size

    def as_dict(self) -> dict[str, int]:
        """As JSON output shows it."""
        return {"files": self.files, "bytes": self.bytes}


@dataclass
class Collected:
    """What gc found in one store: every file, those rows name, orphans deleted (or that would be), and orphans kept
    because they are recent or a writer holds them."""

    store: str
    dry_run: bool
    min_age_minutes: float
    listed: Counted
    referenced: Counted
    deleted: Counted
    recent: Counted
    busy: Counted


def referenced_keys(session: Session, location: str) -> set[str]:
    """The keys the run rows of one store name."""
    rows = session.execute(text("SELECT DISTINCT storage_key FROM runs WHERE storage = :here"), {"here": location})
    return {key for (key,) in rows}


def _named(session: Session, location: str, keys: list[str]) -> set[str]:
    """Which of `keys` a run row of the store names now."""
    rows = session.execute(
        text("SELECT DISTINCT storage_key FROM runs WHERE storage = :here AND storage_key = ANY(:keys)"),
        {"here": location, "keys": keys},
    )
    return {key for (key,) in rows}


def _try_locks(session: Session, keys: list[str]) -> set[str]:
    """The files' locks, alone, until the transaction ends: the keys locked (not those a writer holds)."""
    rows = session.execute(
        text(
            "SELECT key FROM unnest(CAST(:keys AS text[]), CAST(:locks AS bigint[])) AS f(key, lock) "
            "WHERE pg_try_advisory_xact_lock(lock)"
        ),
        {"keys": keys, "locks": [file_lock(key) for key in keys]},
    )
    return {key for (key,) in rows}


def _record(session: Session, store: ListedStore, found: StoredObject, actor: dict[str, object]) -> None:
    """Add the deletion of a file to the audit trail (no campaign: a file may have served several)."""
    before: dict[str, object] = {"storage": store.location, "storage_key": found.key, "bytes": found.size}
    before["modified"] = found.modified.isoformat()
    session.add(
        AuditEvent(table_name=AUDIT_TABLE, row_id=found.key, action="delete", actor=actor, before=before, after=None)
    )


def collect(
    sessions: sessionmaker[Session],
    location: str,
    *,
    min_age_minutes: float,
    dry_run: bool,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    say: Callable[[str], None] = lambda line: None,
) -> Collected:
    """List the store's files, and delete (unless `dry_run`) those no run row names that were written at least
    `min_age_minutes` ago, a batch per transaction, each under its lock, recorded in the audit trail. PostgreSQL has
    no orphans (a run's bytes live in its row): nothing to do. RunStoreUnavailable when the store cannot be listed."""
    location = check_location(location)
    age = timedelta(minutes=min_age_minutes)
    empty = Collected(location, dry_run, min_age_minutes, *(Counted() for _ in range(5)))
    if location == POSTGRES:
        return empty
    actor = actor_of("cli", command="storage gc")
    with sessions() as session:
        store = open_store(location, session)
        assert isinstance(store, DirectoryStore | S3Store)  # not PostgreSQL
        listed = list(store.objects())  # listed before the rows are read: a file and row made between are kept
        named = referenced_keys(session, location)
    done = empty
    doomed: list[StoredObject] = []
    for found in listed:
        done.listed.add(found)
        if found.key in named:
            done.referenced.add(found)
        elif found.modified > now() - age:
            done.recent.add(found)
        else:
            doomed.append(found)
    for start in range(0, len(doomed), BATCH):
        batch = doomed[start : start + BATCH]
        if dry_run:
            for found in batch:
                done.deleted.add(found)
                say(f"would delete {found.key} ({found.size} bytes, written {found.modified:%Y-%m-%d %H:%M:%S} UTC)")
            continue
        with sessions() as session:
            _delete_batch(session, store, batch, done, now() - age, actor, say)
    return done


def _delete_batch(
    session: Session,
    store: DirectoryStore | S3Store,
    batch: list[StoredObject],
    done: Collected,
    written_before: datetime,
    actor: dict[str, object],
    say: Callable[[str], None],
) -> None:
    """Delete a batch of orphans in one transaction, each under its lock and checked again (named by a row since,
    written again since, held by a writer: kept), recorded in the audit trail, committed."""
    set_actor(session, actor)
    keys = [found.key for found in batch]
    locked = _try_locks(session, keys)
    named = _named(session, store.location, keys)
    going: list[StoredObject] = []
    for found in batch:
        if found.key not in locked:
            done.busy.add(found)
        elif found.key in named:  # a row committed since the rows were read
            done.referenced.add(found)
        elif (again := store.stat(found.key)) is None:  # deleted meanwhile (another gc)
            continue
        elif again.modified > written_before:  # written again meanwhile
            done.recent.add(again)
        else:
            going.append(again)
    for found in going:
        _record(session, store, found, actor)
    session.flush()  # a trail that cannot be written stops before any file is deleted
    gone: list[StoredObject] = []
    try:
        for found in going:
            store.delete(found.key)
            gone.append(found)
            done.deleted.add(found)
            say(f"deleted {found.key} ({found.size} bytes)")
    except RunStoreError:
        session.rollback()  # the trail keeps the files deleted before the store failed
        set_actor(session, actor)
        for found in gone:
            _record(session, store, found, actor)
        session.commit()
        raise
    session.commit()
