"""Engines and sessions, and the embedded PostgreSQL used when no DATABASE_URL is given."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Engine, create_engine
from sqlalchemy.orm import Session, sessionmaker

log = logging.getLogger("trecpool.storage")


def normalise_url(url: str) -> str:
    """Make a PostgreSQL URL use the psycopg 3 driver."""
    for prefix in ("postgresql+psycopg2://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def start_embedded(data_dir: Path) -> str:
    """Start (or reuse) an embedded PostgreSQL in `data_dir` and return its URL."""
    import pgserver  # imported lazily: only needed without DATABASE_URL

    data_dir = data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    server = pgserver.get_server(data_dir, cleanup_mode="stop")
    log.info("embedded PostgreSQL running with its data in %s", data_dir)
    return normalise_url(server.get_uri())


def make_engine(url: str) -> Engine:
    """An engine for `url` with sane pool settings."""
    return create_engine(normalise_url(url), pool_pre_ping=True, pool_size=10, max_overflow=20)


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    """A session factory whose objects stay readable after commit."""
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    """A unit of work: commit on success, roll back on error."""
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()
