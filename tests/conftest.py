"""Shared fixtures: a real PostgreSQL for the whole run (TEST_DATABASE_URL, else embedded), fresh databases on it."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, make_url, text

from app.storage.database import normalise_url

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def pg_admin_url() -> Iterator[str]:
    """URL of a maintenance database on a real PostgreSQL server for this test run."""
    configured = os.environ.get("TEST_DATABASE_URL")
    if configured:
        yield normalise_url(configured)
        return
    import pgserver

    with tempfile.TemporaryDirectory(prefix="trecpool-pg-") as data_dir:
        server = pgserver.get_server(data_dir, cleanup_mode="delete")
        try:
            yield normalise_url(server.get_uri())
        finally:
            server.cleanup()


@pytest.fixture(scope="session")
def create_database(pg_admin_url: str) -> Iterator[Callable[[], str]]:
    """A factory of fresh, empty databases on the test server, dropped at the end of the run."""
    admin = create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    made: list[str] = []

    def make() -> str:
        name = f"trecpool_test_{uuid.uuid4().hex[:12]}"
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        made.append(name)
        return make_url(pg_admin_url).set(database=name).render_as_string(hide_password=False)

    yield make
    with admin.connect() as conn:
        for name in made:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def database_url(create_database: Callable[[], str]) -> str:
    """This run's own database, migrated to the newest schema."""
    from app.storage import migrations

    url = create_database()
    migrations.upgrade(url)
    return url


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The shared data folder beside the repository (skips if absent)."""
    path = SHARED / "data"
    if not path.is_dir():
        pytest.skip(f"shared data not found at {path}")
    return path


def job_settings(database_url: str, **overrides: object):  # type: ignore[no-untyped-def]
    """Settings for test workers: quick heartbeats and stall detection."""
    from app.config import Settings

    fast = {"job_heartbeat_seconds": 0.2, "job_stall_seconds": 3.0, "job_max_run_seconds": 300.0}
    return Settings(database_url=database_url, **{**fast, **overrides})  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def job_worker(database_url: str) -> Iterator[object]:
    """A worker process running the jobs queued on this run's database (as `trecpool serve` runs one)."""
    from app.worker.processes import WorkerProcesses

    handle = WorkerProcesses(database_url, job_settings(database_url))
    yield handle
    handle.stop(timeout=5)
