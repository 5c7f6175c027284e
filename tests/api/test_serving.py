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


# --- security headers: on every answer, from one middleware ---


def _assert_secured(answer, csp_contains: str) -> None:  # type: ignore[no-untyped-def]
    """nosniff, no-referrer and a Content-Security-Policy containing `csp_contains`."""
    where = f"{answer.request.method} {answer.request.url.path} -> {answer.status_code}"
    assert answer.headers.get("x-content-type-options") == "nosniff", where
    assert answer.headers.get("referrer-policy") == "no-referrer", where
    assert csp_contains in answer.headers.get("content-security-policy", ""), where


def test_every_kind_of_answer_carries_the_security_headers(settings, sessions, organiser):
    from app.web import pages

    low = settings.model_copy(update={"auth_max_failures": 1})
    app = create_app(low, sessions)

    @app.get("/api/test-fault")
    def fault() -> None:
        raise RuntimeError("a bug")

    nothing = "default-src 'none'"
    with TestClient(app, raise_server_exceptions=False) as client:
        json_answers = [
            client.get("/api/health"),  # 200
            client.get("/openapi.json"),
            client.get("/api/campaigns"),  # 401 from the role check
            client.post("/api/campaigns", json={}),  # 401 from the limits middleware
            client.post("/api/campaigns", json={}, headers=organiser),  # 422
            client.get("/api/campaigns/999999", headers=organiser),  # 404
            client.get("/api/no-such-thing"),  # 404 from the router
            client.post("/api/campaigns", content=b"x" * (2 << 20), headers=organiser),  # 413
            client.get("/api/test-fault"),  # 500, from Starlette's error middleware
        ]
        client.get("/api/campaigns", headers={"Authorization": "Bearer tp_wrong"})
        json_answers.append(client.post("/api/campaigns", json={}, headers={"Authorization": "Bearer tp_x"}))  # 429
        assert sorted({a.status_code for a in json_answers}) == [200, 401, 404, 413, 422, 429, 500]
        for answer in json_answers:
            _assert_secured(answer, nothing)
        _assert_secured(client.get("/static-offline-docs/swagger-ui.css"), nothing)
        judge = client.get("/judge")  # a page with its own, stricter policy: kept
        _assert_secured(judge, pages.PAGE_HEADERS["Content-Security-Policy"])
        _assert_secured(client.get("/"), "default-src 'self'")  # the published results
        _assert_secured(client.get("/test-unknown-page"), nothing)  # a 404 (JSON)
        for path in ("/docs", "/redoc", "/docs/oauth2-redirect"):
            _assert_secured(client.get(path), "script-src 'self'")


def test_the_docs_policy_allows_exactly_their_inline_scripts(client):
    import base64
    import hashlib
    import re

    for path in ("/docs", "/docs/oauth2-redirect"):
        page = client.get(path)
        inline = re.findall(r"<script>(.*?)</script>", page.text, re.S)
        assert len(inline) == 1
        digest = base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode()
        policy = page.headers["content-security-policy"]
        assert f"script-src 'self' 'sha256-{digest}';" in policy and "unsafe-inline" not in policy
    assert "'unsafe-inline'" not in client.get("/redoc").headers["content-security-policy"].split("style-src")[0]
