"""Engines and sessions, and the embedded PostgreSQL used when no DATABASE_URL is given."""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, make_url, text
from sqlalchemy.exc import ArgumentError, DisconnectionError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

log = logging.getLogger("trecpool.storage")

CONNECT_TIMEOUT_SECONDS = 5


class DatabaseUnavailable(RuntimeError):
    """The configured database cannot be used; the message says why in one line and names the fix.

    `retryable` when it may pass by itself (PostgreSQL not reachable yet, or still starting), not for wrong
    credentials, a missing database or a malformed URL.
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = retryable


def normalise_url(url: str) -> str:
    """Make a PostgreSQL URL use the psycopg 3 driver."""
    for prefix in ("postgresql+psycopg2://", "postgresql://", "postgres://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


def checked_url(url: str) -> str:
    """The URL with the psycopg 3 driver; DatabaseUnavailable unless it is a well-formed PostgreSQL URL."""
    normal = normalise_url(url)
    try:
        parsed = make_url(normal)
    except ArgumentError:
        raise DatabaseUnavailable(
            "DATABASE_URL is not a database URL: expected postgresql://user:password@host:5432/dbname"
        ) from None
    if parsed.drivername != "postgresql+psycopg":
        raise DatabaseUnavailable(
            f"DATABASE_URL uses {parsed.drivername!r}: trecpool needs PostgreSQL (postgresql://user@host:5432/dbname)"
        )
    return normal


def check_connection(engine: Engine) -> None:
    """Connect once; DatabaseUnavailable with a one-line reason if PostgreSQL cannot be reached or used."""
    url = engine.url
    where = f"{url.host or 'localhost'}:{url.port or 5432}"
    try:
        with engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except OperationalError as exc:
        reason = str(exc.orig or exc).strip().splitlines()[0] if str(exc.orig or exc).strip() else type(exc).__name__
        if "does not exist" in reason and "database" in reason:
            raise DatabaseUnavailable(
                f"database {url.database!r} does not exist on {where}: create it (createdb {url.database}) "
                "or fix DATABASE_URL"
            ) from None
        if "password authentication failed" in reason or "no password supplied" in reason:
            raise DatabaseUnavailable(f"PostgreSQL at {where} refused the credentials in DATABASE_URL") from None
        raise DatabaseUnavailable(
            f"cannot reach PostgreSQL at {where} ({reason.removeprefix('connection failed: ')}): "
            "is it running, and is DATABASE_URL right?",
            retryable=True,
        ) from None


def start_embedded(data_dir: Path) -> str:
    """Start (or reuse) an embedded PostgreSQL in `data_dir` and return its URL."""
    import pgserver  # imported lazily: only needed without DATABASE_URL

    data_dir = data_dir.resolve()
    data_dir.mkdir(parents=True, exist_ok=True)
    _forget_dead_handles(data_dir)
    server = pgserver.get_server(data_dir, cleanup_mode="stop")
    log.info("embedded PostgreSQL running with its data in %s", data_dir)
    return normalise_url(server.get_uri())


def _forget_dead_handles(data_dir: Path) -> None:
    """Drop the processes that died without letting go of the embedded server (kill -9) from pgserver's list.

    pgserver stops the server when its last handle exits; a handle left by a killed process would keep it running
    after every later clean shutdown.
    """
    handles = data_dir / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text())
    except (OSError, ValueError):
        return
    alive = [pid for pid in pids if isinstance(pid, int) and _is_alive(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))


def _is_alive(pid: int) -> bool:
    """Whether a process with this id exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


IDLE_PING_SECONDS = 5.0  # a pooled connection idle this long is pinged before use


def make_engine(url: str) -> Engine:
    """An engine for `url` with sane pool settings; connections idle a while are checked before use."""
    engine = create_engine(
        normalise_url(url),
        pool_size=10,
        max_overflow=20,
        connect_args={"connect_timeout": CONNECT_TIMEOUT_SECONDS},
    )
    _ping_when_idle(engine, IDLE_PING_SECONDS)
    return engine


def _ping_when_idle(engine: Engine, idle_seconds: float) -> None:
    """Ping a pooled connection on checkout only when it sat idle `idle_seconds` or more.

    SQLAlchemy's pool_pre_ping pings at every checkout: a round trip per request that a busy server (judging) pays
    for nothing. A connection back in use within seconds is as alive as the last statement it ran; one that sat idle
    (the database may have restarted meanwhile) is pinged, and replaced if the ping fails.
    """

    @event.listens_for(engine, "checkin")
    def _idle_from(dbapi_connection: Any, record: Any) -> None:
        record.info[_IDLE_SINCE] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _ping_if_idle(dbapi_connection: Any, record: Any, proxy: Any) -> None:
        since = record.info.get(_IDLE_SINCE)
        if since is None or time.monotonic() - since < idle_seconds:
            return
        try:
            alive = engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:  # any failure of the ping means the connection is gone
            raise DisconnectionError("a pooled connection failed its ping") from exc
        if not alive:
            raise DisconnectionError("a pooled connection failed its ping")


_IDLE_SINCE = "trecpool_idle_since"


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
