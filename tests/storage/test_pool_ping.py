"""Pooled connections: pinged only after sitting idle, and replaced when the ping finds them dead."""

from __future__ import annotations

import time

import psycopg
from sqlalchemy import text

from app.storage import database


def _backend(engine) -> int:  # type: ignore[no-untyped-def]
    """The server process id of the connection the pool hands out."""
    with engine.connect() as connection:
        return int(connection.execute(text("SELECT pg_backend_pid()")).scalar_one())


def test_a_busy_connection_is_not_pinged_and_an_idle_dead_one_is_replaced(database_url, monkeypatch):
    monkeypatch.setattr(database, "IDLE_PING_SECONDS", 0.3)
    engine = database.make_engine(database_url)
    pings: list[int] = []
    original = engine.dialect.do_ping
    monkeypatch.setattr(engine.dialect, "do_ping", lambda dbapi: pings.append(1) or original(dbapi))
    try:
        first = _backend(engine)
        assert _backend(engine) == first and pings == []  # back in use at once: no ping
        with psycopg.connect(database.normalise_url(database_url).replace("+psycopg", ""), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (first,))
        time.sleep(0.5)
        assert _backend(engine) != first  # idle, pinged, found dead, replaced: no error reaches the caller
        assert pings
    finally:
        engine.dispose()
