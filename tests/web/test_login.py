"""Sign-in by token: a new expiring session token in an HttpOnly cookie (never the long-lived token), CSRF on the login
form and on every console form, bearer requests exempt, safe `next` redirects, assessors refused, /logout revokes."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient

from app.services.auth import hash_token
from app.storage.models import ApiToken
from app.web.session import COOKIE, csrf_token, safe_next
from tests.api.helpers import make_assessor, new_campaign


def hidden(html: str, name: str) -> str:
    """The value of a hidden form field."""
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert found, f"no field {name}"
    return found.group(1)


def sign_in(app_client: TestClient, token: str, next_url: str = "") -> object:
    """GET /login then POST the form; the POST's response (redirects not followed)."""
    form = app_client.get("/login")
    assert form.status_code == 200
    data = {"token": token, "csrf_token": hidden(form.text, "csrf_token"), "next": next_url}
    return app_client.post("/login", data=data, follow_redirects=False)


@pytest.fixture
def fresh(client) -> TestClient:  # type: ignore[no-untyped-def]
    """A client of the test app with its own cookie jar."""
    return TestClient(client.app, base_url="http://testserver")


@pytest.fixture(scope="module")
def team(client, organiser):  # type: ignore[no-untyped-def]
    """A campaign with one team; (campaign, team token)."""
    campaign = new_campaign(client, organiser, 2)
    _, headers = campaign.team()
    return campaign, headers["Authorization"].split()[1]


def test_sign_in_sets_a_new_expiring_httponly_session_token(fresh, team, sessions) -> None:  # type: ignore[no-untyped-def]
    _, token = team
    response = sign_in(fresh, token)
    assert response.status_code == 303 and response.headers["location"] == "/team/"
    cookie = next(c for c in response.headers.get_list("set-cookie") if c.startswith(f"{COOKIE}="))
    attributes = {part.strip().split("=")[0].lower() for part in cookie.split(";")}
    assert {"httponly", "path", "max-age"} <= attributes and "samesite=lax" in cookie.lower()
    assert "secure" not in attributes  # plain http here; https requests get Secure
    value = fresh.cookies.get(COOKIE)
    assert value and value != token
    with sessions() as session:
        rows = {r.token_hash: r for r in session.query(ApiToken).all()}
        made, given = rows[hash_token(value)], rows[hash_token(token)]
        assert (made.role, made.team_id, made.campaign_id) == (given.role, given.team_id, given.campaign_id)
        assert (
            made.expires_at is not None
            and 11 * 3600 < (made.expires_at - datetime.now(UTC)).total_seconds() <= 12 * 3600
        )
    page = fresh.get("/team/")
    assert page.status_code == 200 and hidden(page.text, "csrf_token") == csrf_token(value)


def test_login_refuses_a_bad_token_an_assessor_and_a_missing_csrf(fresh, team, client, organiser) -> None:  # type: ignore[no-untyped-def]
    campaign, token = team
    bad = sign_in(fresh, "tp_nonsense")
    assert bad.status_code == 401 and "invalid token" in bad.text and COOKIE not in fresh.cookies
    _, assessor = make_assessor(client, organiser, campaign, "ann")
    refused = sign_in(fresh, assessor["Authorization"].split()[1])
    assert refused.status_code == 403 and "judging link" in refused.text
    forged = TestClient(client.app).post("/login", data={"token": token}, follow_redirects=False)
    assert forged.status_code == 403 and "CSRF" in forged.text


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("/team/runs/3/report?measure=AP", "/team/runs/3/report?measure=AP"),
        ("//evil.example/x", "/team/"),
        ("https://evil.example/", "/team/"),
        ("/\\evil.example", "/team/"),
        ("team/", "/team/"),
    ],
)
def test_next_stays_on_this_site(target: str, expected: str) -> None:
    assert safe_next(target) == expected


def test_next_is_followed_and_pages_redirect_to_login(fresh, team) -> None:  # type: ignore[no-untyped-def]
    _, token = team
    away = fresh.get("/team/results?measure=AP", follow_redirects=False)
    assert away.status_code == 303 and away.headers["location"] == "/login?next=%2Fteam%2Fresults%3Fmeasure%3DAP"
    assert fresh.get("/team/index.json").status_code == 401
    response = sign_in(fresh, token, "//evil.example/")
    assert response.headers["location"] == "/team/"
    response = sign_in(fresh, token, "/team/results")
    assert response.headers["location"] == "/team/results"


def test_csrf_is_checked_on_cookie_posts_and_not_on_bearer_ones(fresh, team, client) -> None:  # type: ignore[no-untyped-def]
    campaign, token = team
    sign_in(fresh, token)
    files = {"file": ("run.txt", b"1 Q0 d1 1 1 x\n", "text/plain")}
    refused = fresh.post("/team/runs", data={"name": "r1"}, files=files)
    assert refused.status_code == 403 and "csrf_token" in refused.text
    wrong = fresh.post("/team/runs", data={"name": "r1", "csrf_token": "0" * 64}, files=files)
    assert wrong.status_code == 403
    assert client.get(f"/api/campaigns/{campaign.id}/runs", headers={"Authorization": f"Bearer {token}"}).json() == []
    by_bearer = TestClient(client.app).post(
        "/team/runs",
        data={"name": "r1"},
        files=files,
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
    )
    assert by_bearer.status_code == 201, by_bearer.text
    assert by_bearer.json()["submitted"]["name"] == "r1"


def test_logout_revokes_the_session_token(fresh, team, sessions) -> None:  # type: ignore[no-untyped-def]
    _, token = team
    sign_in(fresh, token)
    value = fresh.cookies.get(COOKIE)
    page = fresh.get("/team/")
    assert fresh.post("/logout", data={}).status_code == 403  # the CSRF field is required here too
    out = fresh.post("/logout", data={"csrf_token": hidden(page.text, "csrf_token")}, follow_redirects=False)
    assert out.status_code == 303 and out.headers["location"] == "/login"
    with sessions() as session:
        row = session.query(ApiToken).filter_by(token_hash=hash_token(value)).one()
        assert row.revoked_at is not None
        assert session.query(ApiToken).filter_by(token_hash=hash_token(token)).one().revoked_at is None
    again = TestClient(fresh.app, cookies={COOKIE: value}).get("/team/", follow_redirects=False)
    assert again.status_code == 303 and again.headers["location"].startswith("/login")


def test_twins_answer_json_by_suffix_and_accept_with_the_link_header(fresh, team) -> None:  # type: ignore[no-untyped-def]
    _, token = team
    sign_in(fresh, token)
    page = fresh.get("/team/")
    assert page.headers["link"] == '</team/index.json>; rel="alternate"; type="application/json"'
    twin = fresh.get("/team/index.json")
    by_accept = fresh.get("/team/", headers={"Accept": "application/json"})
    assert twin.json() == by_accept.json() and twin.json()["submissions_open"] is True
    assert "csrf" not in twin.text  # the form's secret stays in the HTML
    login = fresh.get("/login.json")
    assert (
        login.json()["fields"]["token"]
        and login.headers["link"] == '</login.json>; rel="alternate"; type="application/json"'
    )


def test_the_session_lasts_as_the_setting_says(fresh, team, sessions, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(fresh.app.state.settings, "web_session_seconds", 2 * 3600.0)
    assert "browser session of 2 hours" in fresh.get("/login").text
    response = sign_in(fresh, team[1])
    cookie = next(c for c in response.headers.get_list("set-cookie") if c.startswith(f"{COOKIE}="))
    assert "max-age=7200" in cookie.lower()
    with sessions() as session:
        made = session.query(ApiToken).filter_by(token_hash=hash_token(fresh.cookies.get(COOKIE))).one()
        assert made.expires_at is not None
        assert 7200 - 60 < (made.expires_at - datetime.now(UTC)).total_seconds() <= 7200
