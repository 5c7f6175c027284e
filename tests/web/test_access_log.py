"""No secret in any request line: `trecpool serve` runs as the product runs it (uvicorn's access log on), a whole
judging flow goes over HTTP (and through chromium's judging and marking pages when chromium is there), and the
captured log holds none of the tokens and links issued."""

from __future__ import annotations

import itertools
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest

from tests.api.helpers import CampaignHandle, auth, setup_campaign
from tests.web.pages import CHROMIUM, CHROMIUM_ARGS, SETTLED, shown_task, wait_status

SECRET = re.compile(r"tp_[A-Za-z0-9_\-]{20,}")
_names = itertools.count(1)


def _free_port() -> int:
    """A loopback port nothing listens on (yet)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def served(database_url: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """`trecpool serve` on the test database and a free port, its output (the access log) captured in a file."""
    port = _free_port()
    log = tmp_path / "serve.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TRECPOOL_")}
    env.update(DATABASE_URL=database_url, PYTHONUNBUFFERED="1")
    command = [sys.executable, "-m", "app.cli", "serve", "--no-worker", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text()
            try:
                if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        yield base, log
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def _chromium():  # type: ignore[no-untyped-def]
    """Playwright's sync API when Debian's chromium is there (None otherwise: the HTTP flow still runs)."""
    if not CHROMIUM.exists():
        return None
    try:
        from playwright import sync_api
    except ImportError:
        return None
    return sync_api


def _campaign(
    http: httpx.Client, organiser: dict[str, str], n_topics: int = 3, task_kind: str = "shots", **settings: object
) -> CampaignHandle:
    """A new open campaign over HTTP, as the API tests' make_campaign makes one."""
    body = {"name": f"logged-{next(_names)}-{time.time_ns()}", "task_kind": task_kind, **settings}
    response = http.post("/api/campaigns", json=body, headers=organiser)
    assert response.status_code == 201, response.text
    cid = response.json()["id"]
    numbers = [str(i) for i in range(1, n_topics + 1)]
    topics = [{"number": n, "title": f"topic {n}"} for n in numbers]
    assert http.post(f"/api/campaigns/{cid}/topics", json=topics, headers=organiser).status_code == 201
    assert http.post(f"/api/campaigns/{cid}/open", headers=organiser).status_code == 200
    return CampaignHandle(http, organiser, cid, numbers)  # type: ignore[arg-type]


def _fragment_link(judge_url: str) -> str:
    """The one-time link of a judge_url (in its fragment)."""
    url = urlparse(judge_url)
    assert url.query == "" and url.fragment.startswith("link=tp_"), judge_url
    return url.fragment.removeprefix("link=")


def test_no_token_or_link_reaches_the_access_log(served, organiser):
    base, log = served
    issued: set[str] = {organiser["Authorization"].removeprefix("Bearer ")}

    def collect(response: httpx.Response) -> None:
        """Every secret any answer carries (tokens, judge_urls, session tokens) is one the log must not show."""
        response.read()
        issued.update(SECRET.findall(response.text))

    with httpx.Client(base_url=base, timeout=60, event_hooks={"response": [collect]}) as http:
        campaign, _ = setup_campaign(
            lambda **kw: _campaign(http, organiser, **kw), http, organiser, n_runs=2, depth=60, seed=4
        )
        http.patch(
            f"/api/campaigns/{campaign.id}",
            json={"media_url_template": f"{base}/no-such-media/{{video_id}}.mp4"},
            headers=organiser,
        )
        pool = http.post(
            f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 3, "seed": 9}, headers=organiser
        ).json()
        created = http.post(f"/api/campaigns/{campaign.id}/assessors", json={"name": "ann"}, headers=organiser).json()
        assessor_id, link = created["id"], _fragment_link(created["judge_url"])
        assignments = {"assignments": [{"topic": "1", "assessor_id": assessor_id}]}
        assert http.post(f"/api/pools/{pool['id']}/assignments", json=assignments, headers=organiser).status_code == 201

        # the page as a browser fetches it (no fragment is sent), then the exchange, the link in a header
        assert http.get(created["judge_url"]).status_code == 200
        traded = http.post("/api/judging/session", headers=auth(link))
        assert traded.status_code == 201, traded.text
        ann = auth(traded.json()["token"])
        # a whole queue: verdicts one step each, a second first verdict refused, one going back and changing
        shown = http.post("/api/judging/step", json={}, headers=ann).json()["next"]
        judged = []
        while shown:
            task = shown[0]["task_id"]
            out = http.post("/api/judging/step", json={"task_id": task, "verdict": "relevant"}, headers=ann)
            assert out.status_code == 200, out.text
            judged.append(task)
            if len(judged) == 1:
                again = http.post("/api/judging/step", json={"task_id": task, "verdict": "unsure"}, headers=ann)
                assert again.status_code == 409
            shown = out.json()["next"]
        assert len(judged) >= 3
        back = http.get("/api/judging/history", headers=ann).json()[0]
        assert http.get(f"/api/judging/items/{back}", headers=ann).json()["verdict"] == "relevant"
        body = {"task_id": back, "verdict": "not_relevant", "change": True}
        assert http.post("/api/judging/step", json=body, headers=ann).status_code == 200
        assert http.get("/api/judging/progress", headers=ann).status_code == 200
        # the spent link again, a garbage one, and tokens rotated and revoked
        assert http.post("/api/judging/session", headers=auth(link)).status_code == 401
        assert http.post("/api/judging/session", headers=auth("tp_" + "x" * 43)).status_code == 401
        rotated = http.post(f"/api/assessors/{assessor_id}/tokens", json={"revoke_previous": False}, headers=organiser)
        assert rotated.status_code == 201
        assert http.post(f"/api/tokens/{rotated.json()['id']}/revoke", headers=organiser).status_code == 200
        # a link in the old form, ?link=..., as an old e-mail has it: served, withdrawn, and not logged
        old_form = _fragment_link(
            http.post(f"/api/assessors/{assessor_id}/judge-link", headers=organiser).json()["judge_url"]
        )
        assert http.get("/judge", params={"link": old_form}).status_code == 200
        assert http.post("/api/judging/session", headers=auth(old_form)).status_code == 401
        # the pages, in chromium: the judging page and the marking page trade their links and judge
        browser_link = http.post(f"/api/assessors/{assessor_id}/judge-link", headers=organiser).json()["judge_url"]
        moments = _campaign(http, organiser, n_topics=1, task_kind="moments")
        marker = http.post(f"/api/campaigns/{moments.id}/assessors", json={"name": "mo"}, headers=organiser).json()

    sync_api = _chromium()
    if sync_api is not None:
        with sync_api.sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            page = chromium.new_page()
            page.goto(browser_link)
            page.wait_for_function(SETTLED, arg="")
            assert page.url == f"{base}/judge"  # the link left the address bar
            issued.update(page.evaluate("Object.values(sessionStorage)"))
            page.keyboard.press("b")
            page.wait_for_function(f"() => document.getElementById('item').dataset.task === '{judged[-1]}'")
            page.keyboard.press("u")
            wait_status(page, "Changed to Unsure")
            assert shown_task(page) is None or page.is_visible("#message")
            marking = chromium.new_page()
            marking.goto(marker["judge_url"])
            marking.wait_for_selector("#message:not([hidden])")  # no moment pool yet: nothing to mark
            assert marking.url == f"{base}/mark"
            (mark_token,) = marking.evaluate("Object.values(sessionStorage)")
            issued.add(mark_token)
            chromium.close()

    time.sleep(0.5)  # the last access lines are written as the answers go out
    text = log.read_text()
    # the log is the access log of this flow (so that the check below cannot pass on an empty log) ...
    for line in (
        '"POST /api/judging/session HTTP/1.1" 201',
        '"POST /api/judging/step HTTP/1.1" 200',
        '"POST /api/judging/step HTTP/1.1" 409',
        '"GET /judge HTTP/1.1" 200',
        '"GET /judge?link=[redacted] HTTP/1.1" 200',
    ):
        assert line in text, text[-3000:]
    if sync_api is not None:
        assert '"GET /mark HTTP/1.1" 200' in text
    # ... and holds none of the secrets issued: organiser, team and assessor tokens, links, session tokens
    assert len(issued) >= 8
    leaked = sorted(secret for secret in issued if secret in text)
    assert leaked == []
    assert SECRET.findall(text) == []
