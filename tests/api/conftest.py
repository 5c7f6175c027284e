"""API fixtures: the app on the test database, an organiser, and helpers to make campaigns and teams."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.server import create_app
from app.services.auth import create_token
from app.storage.database import make_engine, make_session_factory, session_scope
from app.storage.models import Role

_names = itertools.count(1)


@pytest.fixture(scope="session")
def settings(database_url: str) -> Settings:
    """Settings of the app under test."""
    return Settings(database_url=database_url, max_upload_bytes=8 * 1024 * 1024, max_errors=50)


@pytest.fixture(scope="session")
def sessions(database_url: str):  # type: ignore[no-untyped-def]
    """A session factory on the test database."""
    engine = make_engine(database_url)
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture(scope="session")
def client(settings: Settings, sessions, job_worker) -> Iterator[TestClient]:  # type: ignore[no-untyped-def]
    """A client of the app, with a worker running its jobs."""
    with TestClient(create_app(settings, sessions)) as test_client:
        yield test_client


def auth(token: str) -> dict[str, str]:
    """Headers carrying a bearer token."""
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="session")
def organiser(sessions) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Headers of an unbound organiser."""
    with session_scope(sessions) as session:
        return auth(create_token(session, Role.organiser, label="tests"))


@dataclass
class CampaignHandle:
    """A campaign made for one test, with helpers bound to it."""

    client: TestClient
    organiser: dict[str, str]
    id: int
    topics: list[str]

    def team(self, name: str | None = None) -> tuple[int, dict[str, str]]:
        """Register a team; returns its id and auth headers."""
        response = self.client.post(
            f"/api/campaigns/{self.id}/teams", json={"name": name or f"team{next(_names)}"}, headers=self.organiser
        )
        assert response.status_code == 201, response.text
        body = response.json()
        return body["id"], auth(body["token"])

    def upload(self, headers: dict[str, str], content: bytes | str, name: str | None = None, **form: object):  # type: ignore[no-untyped-def]
        """POST a run file with metadata; returns the response."""
        data = {"name": name or f"run{next(_names)}", **{k: str(v) for k, v in form.items()}}
        body = content.encode() if isinstance(content, str) else content
        return self.client.post(
            f"/api/campaigns/{self.id}/runs",
            data=data,
            files={"file": ("run.txt", body, "text/plain")},
            headers=headers,
        )

    def set_collection(self, tsv: str):  # type: ignore[no-untyped-def]
        """PUT a master shot reference."""
        return self.client.put(
            f"/api/campaigns/{self.id}/collection",
            files={"file": ("msr.tsv", tsv.encode(), "text/plain")},
            headers=self.organiser,
        )


@pytest.fixture
def make_campaign(client: TestClient, organiser: dict[str, str]):  # type: ignore[no-untyped-def]
    """Factory: a new open campaign with `n_topics` topics numbered 1..n."""

    def make(n_topics: int = 3, task_kind: str = "shots", open_: bool = True, **settings: object) -> CampaignHandle:
        body = {"name": f"campaign-{next(_names)}", "task_kind": task_kind, **settings}
        response = client.post("/api/campaigns", json=body, headers=organiser)
        assert response.status_code == 201, response.text
        cid = response.json()["id"]
        numbers = [str(i) for i in range(1, n_topics + 1)]
        response = client.post(
            f"/api/campaigns/{cid}/topics",
            json=[{"number": n, "title": f"topic {n}"} for n in numbers],
            headers=organiser,
        )
        assert response.status_code == 201, response.text
        if open_:
            assert client.post(f"/api/campaigns/{cid}/open", headers=organiser).status_code == 200
        return CampaignHandle(client, organiser, cid, numbers)

    return make


@pytest.fixture(scope="session")
def live_server(settings: Settings, sessions) -> Iterator[str]:  # type: ignore[no-untyped-def]
    """The app served by uvicorn on a free loopback port (for concurrency and browser tests)."""
    import socket
    import threading
    import time

    import uvicorn

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
