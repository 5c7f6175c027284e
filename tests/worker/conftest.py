"""Worker fixtures: a database of their own (no session worker on it), an API client, and worker processes to kill."""

from __future__ import annotations

import itertools
import multiprocessing
import os
from collections.abc import Callable, Iterator
from multiprocessing.process import BaseProcess

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

from app.config import Settings
from app.server import create_app
from app.services.auth import create_token
from app.storage import migrations
from app.storage.database import make_engine, make_session_factory, session_scope
from app.storage.models import Role
from app.worker.processes import worker_main
from tests.conftest import job_settings

_names = itertools.count(1)


@pytest.fixture(scope="module")
def jobs_db(create_database: Callable[[], str]) -> str:
    """A migrated database only these tests' workers use."""
    url = create_database()
    migrations.upgrade(url)
    return url


@pytest.fixture(scope="module")
def jobs_sessions(jobs_db: str):  # type: ignore[no-untyped-def]
    """Sessions on that database."""
    engine = make_engine(jobs_db)
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture(scope="module")
def api(jobs_db: str, jobs_sessions) -> Iterator[TestClient]:  # type: ignore[no-untyped-def]
    """The app on that database, with an organiser's token on every request."""
    with session_scope(jobs_sessions) as session:
        token = create_token(session, Role.organiser, label="worker tests")
    with TestClient(create_app(Settings(database_url=jobs_db), jobs_sessions)) as client:
        client.headers["Authorization"] = f"Bearer {token}"
        yield client


@pytest.fixture
def spawn_worker(jobs_db: str) -> Iterator[Callable[..., BaseProcess]]:
    """Factory: start a bare worker process (no supervisor) with test settings; all are killed at the end."""
    started: list[BaseProcess] = []
    context = multiprocessing.get_context("spawn")

    def spawn(**overrides: object) -> BaseProcess:
        process = context.Process(target=worker_main, args=(jobs_db, job_settings(jobs_db, **overrides), os.getpid()))
        process.start()
        started.append(process)
        return process

    yield spawn
    for process in started:
        if process.is_alive():
            process.kill()
        process.join()


@pytest.fixture
def scores_locked(jobs_sessions):  # type: ignore[no-untyped-def]
    """Hold an exclusive lock on the scores table: an evaluation blocks just before storing its numbers.

    Yields a function that releases the lock (it is released at the end in any case).
    """
    session = jobs_sessions()
    session.execute(text("LOCK TABLE scores IN ACCESS EXCLUSIVE MODE"))

    def release() -> None:
        session.rollback()

    yield release
    session.rollback()
    session.close()


def evaluable_campaign(api: TestClient, n_runs: int = 3, n_topics: int = 3) -> int:
    """A campaign with runs and imported qrels, ready to evaluate; returns its id."""
    cid = api.post("/api/campaigns", json={"name": f"jobs-{next(_names)}", "task_kind": "shots"}).json()["id"]
    topics = [str(t) for t in range(1, n_topics + 1)]
    api.post(f"/api/campaigns/{cid}/topics", json=[{"number": t, "title": "t"} for t in topics]).raise_for_status()
    api.post(f"/api/campaigns/{cid}/open").raise_for_status()
    team = api.post(f"/api/campaigns/{cid}/teams", json={"name": "team"}).json()["id"]
    for r in range(n_runs):
        lines = [f"{t} Q0 d{(d * (r + 1)) % 50} {d + 1} {100 - d} run{r}" for t in topics for d in range(20)]
        api.post(
            f"/api/campaigns/{cid}/runs",
            data={"name": f"run{r}", "team_id": str(team)},
            files={"file": ("run.txt", "\n".join(lines) + "\n")},
        ).raise_for_status()
    qrels = "".join(f"{t} 0 d{d} {int(d % 3 == 0)}\n" for t in topics for d in range(50))
    api.post(f"/api/campaigns/{cid}/qrels", data={"label": "q"}, files={"file": ("q", qrels)}).raise_for_status()
    return cid
