"""Moving run files from store to store (`trecpool storage migrate`), one file at a time, idempotently.

Each file (a store and a key, shared by every run addressing it there) is moved in its own transaction: read from
its store and checked against its SHA-256, written to the target, read back and checked again, its runs' rows
pointed at the target (a file leaving PostgreSQL is emptied from the rows in that same UPDATE), committed; only then
is it deleted from the source store, when no run there addresses it any more. A stopped migration is resumed by
running it again: files already at the target are not touched, and a file copied but not yet recorded is copied
again (stores are content-addressed, so that changes nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from sqlalchemy import text
from sqlalchemy.orm import Session, sessionmaker

from app.config import check_location
from app.storage.audit import actor_of, set_actor
from app.storage.run_store import POSTGRES, RunStoreError, hold_file, key_of, open_store


@dataclass
class Moved:
    """What a migration did: files and runs moved, bytes copied, files that could not be moved (and why)."""

    target: str
    files: int = 0
    runs: int = 0
    bytes: int = 0
    failed: list[tuple[str, str, str]] = field(default_factory=list)  # (store, key, why)


def pending(session: Session, target: str) -> list[tuple[str, str, int]]:
    """The files not at `target`: (store, key, runs addressing it there), in a stable order."""
    rows = session.execute(
        text(
            "SELECT storage, storage_key, count(*) FROM runs WHERE storage <> :target "
            "GROUP BY storage, storage_key ORDER BY storage, storage_key"
        ),
        {"target": target},
    )
    return [(storage, key, int(n)) for storage, key, n in rows]


def by_store(session: Session) -> list[tuple[str, int, int]]:
    """Runs and distinct files per store."""
    rows = session.execute(
        text("SELECT storage, count(*), count(DISTINCT storage_key) FROM runs GROUP BY storage ORDER BY storage")
    )
    return [(storage, int(runs), int(files)) for storage, runs, files in rows]


def move_file(session: Session, source: str, key: str, target: str) -> int:
    """Copy one file from `source` to `target`, checked by SHA-256 at both ends, and point its runs at the target
    (flushed, not committed); the bytes copied. RunStoreError when it cannot be read, written or checked."""
    data = open_store(source, session).get(key)
    if key_of(data) != key:
        raise RunStoreError(f"the run file {key} in {source} does not match its SHA-256 (damaged): not moved")
    destination = open_store(target, session)
    if target != POSTGRES:
        hold_file(session, key)  # gc leaves the copy alone until its rows are committed
    destination.put(key, data)  # PostgreSQL: fills the rows addressing the key (and moves them there)
    if key_of(destination.get(key)) != key:
        raise RunStoreError(f"the run file {key} read back from {target} does not match its SHA-256: not moved")
    if target != POSTGRES:
        session.execute(
            text("UPDATE runs SET storage = :target, content = NULL WHERE storage = :source AND storage_key = :key"),
            {"target": target, "source": source, "key": key},
        )
    return len(data)


def drop_source(session: Session, source: str, key: str) -> bool:
    """Delete a moved file from its old store once no run there addresses it; whether it was deleted."""
    still = session.execute(
        text("SELECT 1 FROM runs WHERE storage = :source AND storage_key = :key LIMIT 1"),
        {"source": source, "key": key},
    ).first()
    if still is not None:
        return False
    open_store(source, session).delete(key)
    return True


def migrate(sessions: sessionmaker[Session], target: str, say: Callable[[str], None] = lambda line: None) -> Moved:
    """Move every run file not at `target` there (see the module's docstring); a file that fails is reported and
    left where it was, the others are moved."""
    target = check_location(target)
    with sessions() as session:
        open_store(target, session)  # a store that cannot be opened (boto3 missing) stops before anything moves
        todo = pending(session, target)
    moved = Moved(target)
    for index, (source, key, runs) in enumerate(todo, 1):
        with sessions() as session:
            set_actor(session, actor_of("cli", command="storage migrate"))
            try:
                size = move_file(session, source, key, target)
                session.commit()
            except RunStoreError as exc:
                session.rollback()
                moved.failed.append((source, key, str(exc)))
                say(f"not moved: {exc}")
                continue
            try:
                drop_source(session, source, key)
                session.commit()
            except RunStoreError as exc:  # moved and recorded; the old copy stays behind
                session.rollback()
                say(f"moved, but not deleted from {source}: {exc}")
        moved.files += 1
        moved.runs += runs
        moved.bytes += size
        say(f"{index}/{len(todo)} {key} {source} -> {target} ({runs} run(s), {size} bytes)")
    return moved
