"""What every response and a serving process share: a frozen start-up heap (and, below, headers and outages)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator

import pytest
from fastapi.testclient import TestClient

from app import __version__
from app.config import Settings
from app.server import create_app
from app.services.auth import create_token
from app.storage import migrations
from app.storage.database import make_engine, make_session_factory, normalise_url, session_scope
from app.storage.models import Role

FREEZE_PROBE = """
import gc
from app.server import create_app, freeze_heap
before = len(gc.get_objects())
freeze_heap()
print(before, len(gc.get_objects()), gc.get_freeze_count())
"""


def test_a_serving_process_keeps_its_start_up_heap_out_of_garbage_collections():
    result = subprocess.run([sys.executable, "-c", FREEZE_PROBE], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    before, after, frozen = map(int, result.stdout.split())
    assert before > 50_000  # the imports of the web stack
    assert after < before // 100 and frozen > before // 2  # a full collection no longer scans them


# --- a database that goes away: 503 with Retry-After (JSON on the API, a short page elsewhere), then back ---


@pytest.fixture
def throwaway_postgres() -> Iterator[tuple[str, Callable[[], None], Callable[[], None]]]:
    """A PostgreSQL of this test's own (pgserver), migrated: (its URL, stop it, start it again)."""
    import pgserver

    server = pgserver.get_server(tempfile.mkdtemp(prefix="trecpool-outage-"), cleanup_mode="delete")
    try:
        url = normalise_url(server.get_uri())
        migrations.upgrade(url)

        def stop() -> None:
            pgserver.pg_ctl(["-w", "stop", "-m", "fast"], pgdata=server.pgdata, user=server.system_user)

        yield url, stop, server.ensure_postgres_running
    finally:
        server.cleanup()


def test_a_database_outage_gets_503_with_retry_after_and_health_says_so(throwaway_postgres):
    url, stop, start = throwaway_postgres
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    with session_scope(sessions) as session:
        organiser = {"Authorization": f"Bearer {create_token(session, Role.organiser, label='outage')}"}
    app = create_app(Settings(database_url=url), sessions)
    try:
        with TestClient(app, raise_server_exceptions=False) as client:
            assert client.get("/api/health").json() == {"status": "ok", "database": "ok", "version": __version__}
            assert client.get("/api/campaigns", headers=organiser).status_code == 200
            assert client.get("/").status_code == 200
            stop()

            health = client.get("/api/health")
            assert health.status_code == 503 and health.headers["retry-after"] == "5"
            assert health.json() == {
                "detail": "the database is unreachable: try again in a few seconds",
                "errors": [],
                "status": "unavailable",
                "database": "unreachable",
                "version": __version__,
            }
            for answer in (
                client.get("/api/campaigns", headers=organiser),  # the role check's token lookup
                client.post("/api/campaigns", json={"name": "x", "task_kind": "shots"}, headers=organiser),  # the
                # body's token check, in the limits middleware
                client.get("/api/public/campaigns/1/leaderboard"),  # an endpoint's own query
            ):
                assert answer.status_code == 503, (answer.request.url, answer.text)
                assert answer.headers["retry-after"] == "5" and answer.headers["content-type"] == "application/json"
                assert answer.json() == {
                    "detail": "the database is unreachable: try again in a few seconds",
                    "errors": [],
                }
            page = client.get("/")
            assert page.status_code == 503 and page.headers["content-type"].startswith("text/html")
            assert "Temporarily unavailable" in page.text and "database is unreachable" in page.text
            assert page.headers["retry-after"] == "5"

            start()
            statuses = [client.get("/api/health").status_code for _ in range(3)]
            assert statuses[-1] == 200, statuses  # served again once PostgreSQL is back
            assert client.get("/api/campaigns", headers=organiser).status_code == 200
    finally:
        engine.dispose()


def test_an_unexpected_error_is_a_500_in_the_documented_shape(settings, sessions):
    app = create_app(settings, sessions)

    @app.get("/api/test-fault")
    def api_fault() -> None:
        raise RuntimeError("a bug")

    @app.get("/test-fault")
    def page_fault() -> None:
        raise RuntimeError("a bug")

    with TestClient(app, raise_server_exceptions=False) as client:
        api = client.get("/api/test-fault")
        assert api.status_code == 500 and api.json() == {"detail": "internal server error", "errors": []}
        page = client.get("/test-fault")
        assert page.status_code == 500 and page.headers["content-type"].startswith("text/html")
        assert "Internal server error" in page.text and "a bug" not in page.text
