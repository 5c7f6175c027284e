"""Bounded requests on a live server: bytes counted as they arrive, the token checked before the body, uploads off
the event loop, and the run quota held under concurrent uploads."""

from __future__ import annotations

import asyncio
import json
import select
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import httpx

from app.server import create_app

CHUNK = b"x" * 65536


def raw_request(base: str, head: str, first_bytes: bytes, timeout: float = 10.0) -> bytes:
    """Send a request's head and only the first bytes of its body, never the rest; return the server's answer.

    The body is never finished, so any answer at all was given before the body was read; a server that waits for the
    rest fails the test when `timeout` (a guard against a hang, not a speed check) runs out."""
    url = urlsplit(base)
    with socket.create_connection((url.hostname, url.port), timeout=timeout) as sock:
        sock.sendall(head.encode() + first_bytes)
        answer = b""
        while b"\r\n\r\n" not in answer:
            try:
                part = sock.recv(65536)
            except TimeoutError:
                raise AssertionError(f"no answer in {timeout} s: the server waits for the unfinished body") from None
            if not part:
                break
            answer += part
        return answer


def multipart_head(path: str, extra: str) -> str:
    """A request head for a multipart upload to `path`."""
    return f"POST {path} HTTP/1.1\r\nHost: test\r\nContent-Type: multipart/form-data; boundary=b\r\n{extra}\r\n"


def test_chunked_body_without_token_gets_401_before_it_is_sent(live_server, make_campaign):
    campaign = make_campaign()
    head = multipart_head(f"/api/campaigns/{campaign.id}/runs", "Transfer-Encoding: chunked\r\n")
    first = b"10000\r\n" + CHUNK + b"\r\n"  # one 64 KiB chunk of a body that never ends
    answer = raw_request(live_server, head, first)
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]


def test_declared_big_body_with_bad_token_gets_401_without_reading_it(live_server, make_campaign):
    campaign = make_campaign()
    head = multipart_head(
        f"/api/campaigns/{campaign.id}/runs", f"Content-Length: {1 << 30}\r\nAuthorization: Bearer tp_wrong\r\n"
    )
    answer = raw_request(live_server, head, CHUNK)  # 64 KiB sent of 1 GiB announced
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]
    assert b"WWW-Authenticate: Bearer" in answer or b"www-authenticate: Bearer" in answer


def test_json_body_without_token_gets_401_before_it_is_read(live_server, make_campaign):
    campaign = make_campaign()
    head = (
        f"POST /api/campaigns/{campaign.id}/topics HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        f"Content-Length: {256 << 20}\r\n\r\n"
    )
    answer = raw_request(live_server, head, b"[" + CHUNK)
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]


def _received(sock: socket.socket) -> bytes:
    """What the server sent before it closed (a reset after its answer loses nothing already received)."""
    try:
        return sock.recv(65536)
    except ConnectionResetError:
        return b""


def test_endless_chunked_body_gets_413_once_past_the_limit(live_server, make_campaign, settings):
    campaign = make_campaign()
    _, headers = campaign.team()
    token = f"Authorization: {headers['Authorization']}\r\n"
    head = multipart_head(f"/api/campaigns/{campaign.id}/runs", f"Transfer-Encoding: chunked\r\n{token}")
    start = b'--b\r\nContent-Disposition: form-data; name="file"; filename="run.txt"\r\n\r\n'
    url = urlsplit(live_server)
    sent, answer = 0, b""
    with socket.create_connection((url.hostname, url.port), timeout=10) as sock:
        sock.sendall(head.encode() + f"{len(start):x}\r\n".encode() + start + b"\r\n")
        while not answer and sent < 20 * settings.max_upload_bytes:  # the body never ends: only the server stops it
            try:
                sock.sendall(b"10000\r\n" + CHUNK + b"\r\n")
            except (BrokenPipeError, ConnectionResetError):  # answered and closed while a chunk was on its way
                answer = _received(sock)
                break
            sent += len(CHUNK)
            if select.select([sock], [], [], 0)[0]:
                answer = _received(sock)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert sent < 4 * settings.max_upload_bytes  # answered after the limit, plus what socket buffers hold
    listed = httpx.get(f"{live_server}/api/campaigns/{campaign.id}/runs", headers=headers)
    assert listed.json() == []


def test_declared_length_over_the_limit_gets_413(client, make_campaign, settings):
    campaign = make_campaign()
    _, headers = campaign.team()
    response = client.post(
        f"/api/campaigns/{campaign.id}/runs",
        content=b"x" * (settings.max_upload_bytes + (2 << 20)),
        headers={**headers, "Content-Type": "multipart/form-data; boundary=b"},
    )
    assert response.status_code == 413


def test_health_answers_while_a_200k_line_run_uploads(live_server, make_campaign, monkeypatch):
    """While the run service validates and stores a big run, a health check is answered: the upload holds a worker
    thread, not the event loop. The service is held until the check is answered (or 30 s pass, a guard against a
    hang), so the order of the two is what is checked, not how long either took."""
    from app.services import runs as run_service

    campaign = make_campaign(n_topics=200)
    _, headers = campaign.team()
    lines = [f"{t} Q0 shot{t}_{r} {r} {1000 - r}.5 big" for t in range(1, 201) for r in range(1, 1001)]
    body = ("\n".join(lines) + "\n").encode()
    assert len(lines) == 200_000
    submitting, answered = threading.Event(), threading.Event()
    answered_while_submitting: list[bool] = []
    submit_run = run_service.submit_run

    def held_submit_run(*args: object, **kwargs: object) -> object:
        submitting.set()
        answered_while_submitting.append(answered.wait(timeout=30))
        return submit_run(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(run_service, "submit_run", held_submit_run)

    def upload() -> httpx.Response:
        with httpx.Client(base_url=live_server, timeout=120) as http:
            return http.post(
                f"/api/campaigns/{campaign.id}/runs",
                data={"name": "big"},
                files={"file": ("run.txt", body, "text/plain")},
                headers=headers,
            )

    with ThreadPoolExecutor(1) as pool:
        uploading = pool.submit(upload)
        assert submitting.wait(timeout=60), "the upload never reached the run service"
        health = httpx.get(f"{live_server}/api/health", timeout=60)
        assert health.status_code == 200, health.text
        answered.set()
        response = uploading.result(timeout=120)
    assert answered_while_submitting == [True]  # answered while the service held the upload, not after it
    assert response.status_code == 201, response.text
    assert response.json()["n_entries"] == 200_000


def test_concurrent_uploads_respect_the_run_quota_and_names(live_server, make_campaign):
    campaign = make_campaign(max_runs_per_team=2)
    _, headers = campaign.team()
    run = "".join(f"{t} Q0 shot{t}_{r} {r} {10 - r} tag\n" for t in campaign.topics for r in range(1, 6))

    def upload(name: str) -> int:
        with httpx.Client(base_url=live_server, timeout=60) as http:
            return http.post(
                f"/api/campaigns/{campaign.id}/runs",
                data={"name": name},
                files={"file": ("run.txt", run.encode(), "text/plain")},
                headers=headers,
            ).status_code

    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(upload, [f"r{i}" for i in range(8)]))
    assert sorted(codes) == [201, 201] + [409] * 6, codes
    other = make_campaign()
    _, team = other.team()
    headers = team

    def same_name(_: int) -> int:
        with httpx.Client(base_url=live_server, timeout=60) as http:
            return http.post(
                f"/api/campaigns/{other.id}/runs",
                data={"name": "same"},
                files={"file": ("run.txt", run.encode(), "text/plain")},
                headers=headers,
            ).status_code

    with ThreadPoolExecutor(6) as pool:
        codes = list(pool.map(same_name, range(6)))
    assert sorted(codes) == [201] + [409] * 5, codes
    listed = httpx.get(f"{live_server}/api/campaigns/{other.id}/runs", headers=headers).json()
    assert [r["name"] for r in listed] == ["same"]


# --- JSON bodies: their own small limit, counted as they arrive; an organiser's bulk lists a larger one ---

STEP_CHUNK = b"0," * 32768  # 64 KiB of a JSON array of numbers


def _assessor(campaign) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """Headers of a new assessor of the campaign."""
    created = campaign.client.post(
        f"/api/campaigns/{campaign.id}/assessors", json={"name": f"a{time.monotonic_ns()}"}, headers=campaign.organiser
    )
    assert created.status_code == 201, created.text
    return {"Authorization": f"Bearer {created.json()['token']}"}


def _call(app, path: str, headers: dict[str, str], declared: int | None) -> tuple[int, dict, int]:  # type: ignore[no-untyped-def]
    """POST an endless JSON body to `app` at the ASGI level; (status, JSON answer, body bytes the app read)."""
    raw = [(b"host", b"test"), (b"content-type", b"application/json")]
    raw += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    raw.append((b"content-length", str(declared).encode()) if declared else (b"transfer-encoding", b"chunked"))
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": raw,
        "client": ("127.0.0.1", 50000),
        "server": ("test", 80),
        "state": {},
    }
    read = 0
    first = True
    messages: list[dict] = []

    async def receive() -> dict:
        nonlocal read, first
        chunk = (b'{"later": false, "pad": [' if first else b"") + STEP_CHUNK
        first = False
        read += len(chunk)
        return {"type": "http.request", "body": chunk, "more_body": True}  # it never ends

    async def send(message: dict) -> None:
        messages.append(message)

    asyncio.run(app(scope, receive, send))
    status = messages[0]["status"]
    body = b"".join(m.get("body", b"") for m in messages[1:])
    return status, json.loads(body), read


def test_a_65_mb_json_body_gets_413_having_read_no_more_than_the_limit(settings, sessions, make_campaign):
    campaign = make_campaign()
    assessor = _assessor(campaign)
    app = create_app(settings, sessions)
    status, answer, read = _call(app, "/api/judging/step", assessor, declared=65_000_000)
    assert status == 413 and read == 0  # a declared length over the limit: refused before any of it is read
    assert answer == {
        "detail": f"the request body is over this endpoint's limit of {settings.max_json_bytes} bytes "
        "(setting TRECPOOL_MAX_JSON_BYTES)",
        "errors": [],
    }
    status, answer, read = _call(app, "/api/judging/step", assessor, declared=None)  # chunked: counted as it comes
    assert status == 413 and "TRECPOOL_MAX_JSON_BYTES" in answer["detail"]
    assert settings.max_json_bytes < read <= settings.max_json_bytes + len(STEP_CHUNK) + 64


def test_a_declared_65_mb_json_body_is_answered_413_before_it_is_sent(live_server, make_campaign):
    campaign = make_campaign()
    token = _assessor(campaign)["Authorization"]
    head = (
        "POST /api/judging/step HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
        f"Authorization: {token}\r\nContent-Length: 65000000\r\n\r\n"
    )
    answer = raw_request(live_server, head, b'{"later": false, "pad": [' + STEP_CHUNK)  # 64 KiB of 65 MB sent
    assert answer.startswith(b"HTTP/1.1 413"), answer[:300]
    assert b"connection: close" in answer.lower()


def test_bulk_lists_get_the_larger_limit_for_organisers_only(client, settings, make_campaign, organiser):
    campaign = make_campaign()
    _, team = campaign.team()
    description = "d" * 1000
    topics = [{"number": f"b{i}", "title": f"bulk {i}", "description": description} for i in range(1500)]
    body = json.dumps(topics).encode()
    assert settings.max_json_bytes < len(body) < settings.max_bulk_json_bytes
    headers = {"Content-Type": "application/json"}
    path = f"/api/campaigns/{campaign.id}/topics"
    refused = client.post(path, content=body, headers={**headers, **team})  # a team: the small limit, before 403
    assert refused.status_code == 413 and "TRECPOOL_MAX_JSON_BYTES" in refused.json()["detail"]
    created = client.post(path, content=body, headers={**headers, **organiser})
    assert created.status_code == 201, created.text[:300]
    assert [t["number"] for t in created.json()] == [f"b{i}" for i in range(1500)]
    assert created.json()[7]["description"] == description
    # every other JSON endpoint keeps the small limit, for organisers too
    big = {"name": "x" * (settings.max_json_bytes + 10), "task_kind": "shots"}
    assert client.post("/api/campaigns", json=big, headers=organiser).status_code == 413


def test_bulk_routes_exist_and_uploads_are_found_in_the_openapi_document(client):
    from app.api.limits import BULK_JSON_ROUTES, body_routes_of

    spec = client.app.openapi()
    for method, path in BULK_JSON_ROUTES:
        assert "application/json" in spec["paths"][path][method.lower()]["requestBody"]["content"], path
    routes = body_routes_of(spec)
    assert routes.kind("POST", "/api/campaigns/12/runs") == "upload"
    assert routes.kind("PUT", "/api/campaigns/12/collection") == "upload"
    assert routes.kind("POST", "/api/campaigns/12/topics/file") == "upload"
    assert routes.kind("POST", "/api/campaigns/12/qrels") == "upload"
    assert routes.kind("POST", "/team/runs") == "upload"  # the team console's run form
    assert client.post("/team/runs", follow_redirects=False).status_code not in (404, 405)  # the form's route exists
    assert routes.kind("POST", "/api/campaigns/12/topics") == "bulk"
    assert routes.kind("POST", "/api/pools/3/assignments") == "bulk"
    assert routes.kind("POST", "/api/judging/step") == "json"
    assert routes.kind("GET", "/api/campaigns/12/runs") == "json"
    assert routes.kind("POST", "/api/campaigns/12/runs/extra") == "json"
