"""Failed-authentication throttling refuses failures only: valid tokens from a throttled address are served."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from fastapi.testclient import TestClient

from app.api import throttle as throttle_module
from app.api.throttle import FailureThrottle
from app.server import create_app
from app.services.errors import TooManyAttempts
from tests.api.helpers import auth


def test_a_throttled_address_still_serves_every_valid_token(settings, sessions, make_campaign, organiser):
    campaign = make_campaign()
    _, team = campaign.team()
    created = campaign.client.post(
        f"/api/campaigns/{campaign.id}/assessors", json={"name": "nat"}, headers=organiser
    ).json()
    assessor = auth(created["token"])
    link = parse_qs(urlparse(created["judge_url"]).fragment)["link"][0]
    low = settings.model_copy(update={"auth_max_failures": 3, "auth_failure_window_seconds": 60.0})
    with TestClient(create_app(low, sessions)) as behind_nat:  # every request from one client address
        for _ in range(3):
            assert behind_nat.get("/api/campaigns", headers=auth("tp_wrong")).status_code == 401
        assert behind_nat.get("/api/campaigns", headers=auth("tp_wrong")).status_code == 429
        # the organiser, the team and the assessor behind the same address are served, bodies included
        assert behind_nat.get("/api/campaigns", headers=organiser).status_code == 200
        assert behind_nat.get(f"/api/campaigns/{campaign.id}/runs", headers=team).status_code == 200
        step = behind_nat.post("/api/judging/step", json={}, headers=assessor)
        assert step.status_code in (200, 204), step.text
        upload = behind_nat.post(
            f"/api/campaigns/{campaign.id}/runs",
            data={"name": "nat-run"},
            files={"file": ("run.txt", b"1 Q0 s1 1 1.0 r\n", "text/plain")},
            headers=team,
        )
        assert upload.status_code == 201, upload.text
        named = behind_nat.post("/api/campaigns", json={"name": "nat-ok", "task_kind": "shots"}, headers=organiser)
        assert named.status_code == 201, named.text
        exchanged = behind_nat.post("/api/judging/session", headers=auth(link))
        assert exchanged.status_code == 201, exchanged.text
        # the bad ones are still refused: with a body (before it is read), without, and a guessed judging link
        refused = behind_nat.post("/api/judging/step", json={}, headers=auth("tp_wrong"))
        assert refused.status_code == 429 and 1 <= int(refused.headers["retry-after"]) <= 60
        assert behind_nat.get("/api/campaigns", headers=auth("tp_wrong")).status_code == 429
        assert behind_nat.post("/api/judging/session", headers=auth("tp_guess")).status_code == 429
        assert behind_nat.post("/api/judging/session", headers=auth(link)).status_code == 429  # spent: a failure


def test_failures_count_per_window_and_retry_after_says_when(monkeypatch: pytest.MonkeyPatch):
    now = [1000.0]
    monkeypatch.setattr(throttle_module.time, "monotonic", lambda: now[0])
    throttle = FailureThrottle(max_failures=2, window_seconds=60.0)
    throttle.failed("a")
    now[0] = 1010.0
    throttle.failed("a")
    with pytest.raises(TooManyAttempts) as refused:
        throttle.failed("a")  # a third within 60 s; it counts too, so the last two are both at 1010
    assert refused.value.retry_after == 60
    throttle.failed("b")  # other addresses are counted apart
    now[0] = 1069.0
    with pytest.raises(TooManyAttempts) as refused:
        throttle.failed("a")
    assert refused.value.retry_after == 1  # the failures at 1010 leave the window at 1070
    now[0] = 1071.0
    throttle.failed("a")  # one failure (1069) left in the window: allowed, a 401 again
