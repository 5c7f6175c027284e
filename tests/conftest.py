"""Shared fixtures: a real PostgreSQL for the whole run (TEST_DATABASE_URL, else embedded), fresh databases on it,
the app on the run's database (a client, an organiser, a live server), campaigns to work on (judged, evaluated
once per module, a moment pool) and a toy analysis registered for one test; and the order of the run: the lint,
type and architecture checks first, ending the run at once when one fails. Plain helpers are in tests/api/helpers.py
and tests/web/pages.py."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import create_engine, make_url, text

pytest.register_assert_rewrite("tests.api.helpers", "tests.web.pages")

from app.storage.database import normalise_url  # noqa: E402 - after the assertion rewriting is registered
from tests.api import helpers  # noqa: E402
from tests.api.helpers import CampaignHandle, auth, new_campaign  # noqa: E402

if TYPE_CHECKING:
    from app.services.analysis_registry import Analysis

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
TESTS = Path(__file__).resolve().parent

# ------------------------------------------------------------------------------- lint, type and architecture first

# Checks of the code itself run before everything else and a failure among them ends the run (after the rest of
# them, so every such failure is shown at once): a test marked `lint`, or any test of these files in tests/.
LINT_FILES = ("test_style.py", "test_architecture.py", "test_types.py")
_LINT_FAILURES = pytest.StashKey[list[str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    """--lint-no-stop: go on with the run when a lint, type or architecture check fails."""
    parser.addoption(
        "--lint-no-stop",
        action="store_true",
        help="run the rest of the suite even when a lint, type or architecture check fails",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Declare the `lint` marker."""
    config.addinivalue_line(
        "markers", "lint: a check of the code (style, types, architecture): run first; a failure ends the run"
    )
    config.stash[_LINT_FAILURES] = []


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one test process more than the cores (PYTEST_XDIST_AUTO_NUM_WORKERS overrides): the tests wait much
    of their time for PostgreSQL, chromium, worker processes and pip, and a third process on two cores took the whole
    run from 474 s to 397 s."""
    configured = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    return int(configured) if configured.isdigit() else len(os.sched_getaffinity(0)) + 1


def is_lint(item: pytest.Item) -> bool:
    """Whether a collected test is a lint, type or architecture check."""
    return item.get_closest_marker("lint") is not None or (item.path.parent == TESTS and item.path.name in LINT_FILES)


# Then the modules whose tests take seconds each (a browser, a live server, worker processes, a pip install, long
# judging loops), whole and in their order, before the quick ones: pytest-xdist's `worksteal` gives each process a
# contiguous share and an idle one takes half of another's rest, so a run ends on quick tests and neither process
# waits long for the other's last one. Keeping a module together builds its module-scoped fixtures once.
SLOW_FIXTURES = ("browser", "live_server", "spawn_worker")
SLOW_MODULES = (
    "test_install.py",
    "test_schemathesis.py",
    "test_judging_orders.py",
    "test_scale_bench.py",
    "test_fan_out.py",
    # tests of 12-40 s each without a browser, server or worker (--durations=40 on 2026-11-28): run late, they were
    # the run's tail
    "test_migration_0016.py",
    "test_leave_out.py",
    "test_validation.py",
    "test_startup_wait.py",
    "test_team_results.py",
    "test_db_command.py",
)
# The readers of session-scoped state come first of all, one after the other: no other module's test (the schemathesis
# fuzzing, say, which reaches whatever the database holds) runs between the state's making and its reading.
SESSION_STATE = ("small_demo",)


def is_slow(item: pytest.Item) -> bool:
    """Whether a collected test is one that takes seconds (see SLOW_FIXTURES and SLOW_MODULES)."""
    return item.path.name in SLOW_MODULES or any(name in SLOW_FIXTURES for name in getattr(item, "fixturenames", ()))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The lint, type and architecture checks first, then the modules that read session-scoped state, then those
    with a slow test, then the rest, each in its collected order (after any other reordering)."""
    readers = {item.path for item in items if set(SESSION_STATE) & set(getattr(item, "fixturenames", ()))}
    slow_modules = {item.path for item in items if is_slow(item)}

    def rank(item: pytest.Item) -> int:
        return 0 if is_lint(item) else 1 if item.path in readers else 2 if item.path in slow_modules else 3

    items.sort(key=rank)  # stable: a module's tests keep their order


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Note every failed lint, type or architecture check."""
    report = yield
    if report.failed and is_lint(item):
        item.config.stash[_LINT_FAILURES].append(item.nodeid)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    """After the last lint, type or architecture check, end the run if any of them failed."""
    result = yield
    failed = item.config.stash[_LINT_FAILURES]
    last_check = is_lint(item) and (nextitem is None or not is_lint(nextitem))
    if last_check and failed and not item.config.getoption("--lint-no-stop"):
        item.session.shouldfail = (
            f"stopping: {len(failed)} lint, type or architecture check(s) failed ({', '.join(failed)}); "
            "fix them first, or pass --lint-no-stop to run the rest anyway"
        )
    return result


# ----------------------------------------------------------------------------------------------------- database


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
def create_database(pg_admin_url: str) -> Iterator[Callable[..., str]]:
    """A factory of fresh databases on the test server, dropped at the end of the run: empty, or a copy of the
    database named by `template`."""
    admin = create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    made: list[str] = []

    def make(template: str | None = None) -> str:
        name = f"trecpool_test_{uuid.uuid4().hex[:12]}"
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")))
        made.append(name)
        return make_url(pg_admin_url).set(database=name).render_as_string(hide_password=False)

    yield make
    with admin.connect() as conn:
        for name in made:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def migrated_database(create_database: Callable[..., str]) -> Callable[[], str]:
    """A factory of fresh databases at the newest schema: copies of one migrated once per test process (a copy takes
    a tenth of a second, running the migrations one and a half)."""
    from app.storage import migrations

    template = create_database()
    migrations.upgrade(template)  # its engine is disposed: PostgreSQL copies a database nobody is connected to
    name = make_url(template).database
    assert name is not None

    def make() -> str:
        return create_database(template=name)

    return make


@pytest.fixture(scope="session")
def database_url(migrated_database: Callable[[], str]) -> str:
    """This run's own database, migrated to the newest schema."""
    return migrated_database()


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


# ------------------------------------------------------------------------------------------- the app under test


@pytest.fixture(scope="session")
def settings(database_url: str):  # type: ignore[no-untyped-def]
    """Settings of the app under test."""
    from app.config import Settings

    return Settings(database_url=database_url, max_upload_bytes=8 * 1024 * 1024, max_errors=50)


@pytest.fixture(scope="session")
def sessions(database_url: str):  # type: ignore[no-untyped-def]
    """A session factory on the test database."""
    from app.storage.database import make_engine, make_session_factory

    engine = make_engine(database_url)
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture(scope="session")
def client(settings, sessions, job_worker):  # type: ignore[no-untyped-def]
    """A client of the app, with a worker running its jobs."""
    from fastapi.testclient import TestClient

    from app.server import create_app

    with TestClient(create_app(settings, sessions)) as test_client:
        yield test_client


@pytest.fixture(scope="session")
def organiser(sessions) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Headers of an unbound organiser."""
    from app.services.auth import create_token
    from app.storage.database import session_scope
    from app.storage.models import Role

    with session_scope(sessions) as session:
        return auth(create_token(session, Role.organiser, label="tests"))


@pytest.fixture(scope="session")
def make_campaign(client, organiser) -> Callable[..., CampaignHandle]:  # type: ignore[no-untyped-def]
    """Factory: a new campaign with `n_topics` topics numbered 1..n, open unless `open_=False` (new at every call,
    so module-scoped fixtures may build on it too)."""

    def make(n_topics: int = 3, task_kind: str = "shots", open_: bool = True, **settings: object) -> CampaignHandle:
        return new_campaign(client, organiser, n_topics, task_kind, open_, **settings)

    return make


@pytest.fixture(scope="session")
def live_server(settings, sessions) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The app served by uvicorn on a free loopback port (for concurrency and browser tests)."""
    import socket
    import threading
    import time

    import uvicorn

    from app.server import create_app

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(create_app(settings, sessions), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


# ------------------------------------------------------------------------------------ campaigns to work on


@pytest.fixture
def judged_campaign(make_campaign, client, organiser, sessions):  # type: ignore[no-untyped-def]
    """A closed shots campaign with a stratified pool whose topics are all judged, and a qrels version cut from it;
    (campaign, run names, qrels version, the assessor's headers). A new one per test: its tests evaluate and
    publish it (tests that only read an evaluated campaign share `evaluated`)."""
    return helpers.build_judged_campaign(make_campaign, client, organiser, sessions)


@pytest.fixture(scope="module")
def evaluated(make_campaign, client, organiser, sessions):  # type: ignore[no-untyped-def]
    """A campaign as judged_campaign's (its own), evaluated on every measure, with its runs, their parsed files, the
    exported qrels parsed, and the assessor's headers: (campaign, runs, tables, qrels, assessor). Built once per
    module, so its tests must not change it."""
    from app.evaluation.formats.trec_files import parse_qrels, parse_trec_run

    campaign, _, qrels, assessor = helpers.build_judged_campaign(make_campaign, client, organiser, sessions)
    helpers.evaluate_campaign(client, organiser, campaign.id)
    runs = client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()
    tables = [parse_trec_run(client.get(f"/api/runs/{r['id']}/download", headers=organiser).content) for r in runs]
    exported = parse_qrels(
        client.get(f"/api/qrels/{qrels['id']}/download?format=sample_eval", headers=organiser).content
    )
    return campaign, runs, tables, exported, assessor


@pytest.fixture
def moment_pool(make_campaign, client, organiser):  # type: ignore[no-untyped-def]
    """A closed moment campaign with two runs and a depth-2 moment pool; ann owns topics 1 and 2, bob shares 1;
    (campaign, pool, ann's headers, bob's headers). A new one per test: its tests mark it."""
    return helpers.build_moment_pool(make_campaign, client, organiser)


@pytest.fixture(scope="session")
def small_demo(live_server, organiser, job_worker) -> dict[str, object]:  # type: ignore[no-untyped-def]
    """The Quick start's demo (helpers.SMALL_DEMO: the people's campaign and the model-assisted one) run once per
    test process against the live server, the job worker evaluating: its pages. Its tests only read it (running the
    demo again finds it)."""
    from rich.console import Console

    from app.cli.demo import run_demo

    token = organiser["Authorization"].split()[1]
    return run_demo(live_server, token, helpers.SMALL_DEMO, out=Console(quiet=True))


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> Analysis:
    """The toy analysis of tests/services/toy_analysis.py, registered for the test only."""
    from app.services.analysis_registry import ANALYSES
    from tests.services.toy_analysis import TOY

    monkeypatch.setitem(ANALYSES, TOY.name, TOY)
    return TOY
