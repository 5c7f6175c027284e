"""Opening the configured database the same way for every entry point (CLI, ASGI factory, workers)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import Engine

from app.storage import migrations
from app.storage.database import check_connection, checked_url, make_engine, start_embedded

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
