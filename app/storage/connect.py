"""Opening the configured database the same way for every entry point (CLI, ASGI factory, workers)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine

from app.storage import migrations
from app.storage.database import DatabaseUnavailable, check_connection, checked_url, make_engine, start_embedded

log = logging.getLogger("trecpool.storage")


@dataclass(frozen=True)
class OpenedDatabase:
    """A usable database: its URL, an engine on it, and whether it is the embedded one."""

    url: str
    engine: Engine
    embedded: bool


def open_engine(
    database_url: str | None, data_dir: Path, *, upgrade_embedded: bool = True, check: bool = True
) -> OpenedDatabase:
    """Connect to `database_url`, or start the embedded PostgreSQL in `data_dir/pgdata` when it is None.

    An embedded database is migrated to the newest schema; an external one must already be (SchemaOutOfDate
    otherwise). Raises DatabaseUnavailable with a one-line reason when the database cannot be used.
    """
    embedded = not database_url
    if embedded:
        pgdata = data_dir / "pgdata"
        log.debug("DATABASE_URL is unset: using an embedded PostgreSQL with its data in %s", pgdata.resolve())
        database_url = start_embedded(pgdata)
    url = checked_url(database_url or "")
    engine = make_engine(url)
    check_connection(engine)
    if embedded and upgrade_embedded:
        migrations.upgrade(url)
    if check:
        migrations.check_schema(engine)
    return OpenedDatabase(url=url, engine=engine, embedded=embedded)


RETRY_SECONDS = 1.0  # between attempts while waiting for the database


def wait_for_database(
    database_url: str,
    wait_seconds: float,
    say: Callable[[str], None],
    *,
    schema: bool = False,
    retry_seconds: float = RETRY_SECONDS,
) -> None:
    """Wait up to `wait_seconds` for the database to answer (with `schema`, to be at head), saying why meanwhile.

    `say` gets one line per failed attempt, about every `retry_seconds`. Errors that do not pass by themselves
    (wrong credentials, a missing database, a malformed URL) are raised at once; when time is up, the last
    DatabaseUnavailable or SchemaOutOfDate is raised, saying how long it waited. Each attempt is bounded by the
    connect timeout, so the whole wait is at most `wait_seconds` plus one of it.
    """
    engine = make_engine(checked_url(database_url))
    started = time.monotonic()
    try:
        while True:
            try:
                check_connection(engine)
                if schema:
                    migrations.check_schema(engine)
                return
            except (DatabaseUnavailable, migrations.SchemaOutOfDate) as exc:
                retryable = isinstance(exc, migrations.SchemaOutOfDate) or exc.retryable
                waited = time.monotonic() - started
                left = wait_seconds - waited
                if not retryable:
                    raise
                if left <= 0:
                    if wait_seconds <= 0:
                        raise
                    raise type(exc)(f"{exc} (gave up after waiting {waited:.0f} s)") from None
                say(f"waiting for the database ({left:.0f} s left): {exc}")
                time.sleep(min(retry_seconds, left))
    finally:
        engine.dispose()
