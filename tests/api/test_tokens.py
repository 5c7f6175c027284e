"""Token lifecycle: revoke, expire, rotate, throttle failed authentications, one-time judging links."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import parse_qs, urlparse

from sqlalchemy import update

from app.storage.database import session_scope
from app.storage.models import ApiToken, JudgeLink
from tests.api.helpers import auth, throttled_client

TOKEN_FIELDS = {
    "id",
    "role",
    "label",
    "campaign_id",
    "team_id",
    "assessor_id",
    "created_at",
    "expires_at",
    "revoked_at",
}


def _token_id(client, organiser, campaign_id: int, team_id: int) -> int:  # type: ignore[no-untyped-def]
    """The id of the (only live) token of a team."""
    listed = client.get(f"/api/campaigns/{campaign_id}/tokens", headers=organiser).json()
    (row,) = [t for t in listed if t["team_id"] == team_id and t["revoked_at"] is None]
    return row["id"]


def _backdate(sessions, model, row_id: int, **values: object) -> None:  # type: ignore[no-untyped-def]
    """Set columns of a row directly (to move an expiry into the past)."""
    with session_scope(sessions) as session:
        session.execute(update(model).where(model.id == row_id).values(**values))


def test_listing_shows_ids_labels_and_dates_never_secrets(client, organiser, make_campaign):
    campaign = make_campaign()
    team_id, team = campaign.team("listed")
    response = client.get(f"/api/campaigns/{campaign.id}/tokens", headers=organiser)
    assert response.status_code == 200, response.text
    (row,) = response.json()
    assert set(row) == TOKEN_FIELDS
    assert (row["role"], row["team_id"], row["campaign_id"], row["label"]) == (
        "team",
        team_id,
        campaign.id,
        "team listed",
    )
    assert row["revoked_at"] is None and row["expires_at"] is None
    secret = team["Authorization"].removeprefix("Bearer ")
    assert secret not in response.text
    # teams may not list tokens
    assert client.get(f"/api/campaigns/{campaign.id}/tokens", headers=team).status_code == 403


def test_organiser_revokes_a_team_token_which_then_gets_401(client, organiser, make_campaign):
    campaign = make_campaign()
    team_id, team = campaign.team()
    assert client.get(f"/api/campaigns/{campaign.id}/runs", headers=team).status_code == 200
    token_id = _token_id(client, organiser, campaign.id, team_id)
    response = client.post(f"/api/tokens/{token_id}/revoke", headers=organiser)
    assert response.status_code == 200, response.text
    revoked_at = response.json()["revoked_at"]
    assert revoked_at is not None
    refused = client.get(f"/api/campaigns/{campaign.id}/runs", headers=team)
    assert refused.status_code == 401 and "revoked" in refused.json()["detail"]
    assert refused.headers["www-authenticate"] == "Bearer"
    # a body-carrying request is refused before its body too
    assert campaign.upload(team, "1 Q0 s 1 1 r\n").status_code == 401
    # revoking again leaves it as it was
    again = client.post(f"/api/tokens/{token_id}/revoke", headers=organiser)
    assert again.status_code == 200 and again.json()["revoked_at"] == revoked_at


def test_who_may_revoke_what(client, organiser, make_campaign):
    campaign, other = make_campaign(), make_campaign()
    team_id, team = campaign.team()
    other_team_id, other_team = other.team()
    other_token = _token_id(client, organiser, other.id, other_team_id)
    # a team may not revoke another team's token (and is not told it exists)
    assert client.post(f"/api/tokens/{other_token}/revoke", headers=team).status_code == 404
    # an organiser bound to one campaign may not revoke the tokens of another
    bound = client.app.state.session_factory
    from app.services.auth import create_token
    from app.storage.models import Role

    with session_scope(bound) as session:
        bound_organiser = auth(create_token(session, Role.organiser, campaign_id=campaign.id))
    assert client.post(f"/api/tokens/{other_token}/revoke", headers=bound_organiser).status_code == 404
    assert client.get(f"/api/campaigns/{other.id}/runs", headers=other_team).status_code == 200
    # but it may revoke its own campaign's team tokens, and a team its own token
    own = _token_id(client, organiser, campaign.id, team_id)
    assert client.post(f"/api/tokens/{own}/revoke", headers=team).status_code == 200
    assert client.get(f"/api/campaigns/{campaign.id}/runs", headers=team).status_code == 401
    assert client.post("/api/tokens/2147483647/revoke", headers=organiser).status_code == 404


def test_an_organiser_revokes_its_own_token(client, sessions):
    from app.services.auth import create_token
    from app.storage.models import Role

    with session_scope(sessions) as session:
        mine = auth(create_token(session, Role.organiser, label="short-lived"))
    listed = client.get("/api/campaigns", headers=mine)
    assert listed.status_code == 200
    with session_scope(sessions) as session:
        from app.services.auth import authenticate

        token_id = authenticate(session, mine["Authorization"].removeprefix("Bearer ")).token_id
    assert client.post(f"/api/tokens/{token_id}/revoke", headers=mine).status_code == 200
    assert client.get("/api/campaigns", headers=mine).status_code == 401


def test_an_expired_token_gets_401_saying_it_expired(client, organiser, make_campaign, sessions):
    campaign = make_campaign()
    team_id, _ = campaign.team()
    response = client.post(f"/api/teams/{team_id}/tokens", json={"expires_in_seconds": 3600}, headers=organiser)
    assert response.status_code == 201, response.text
    body = response.json()
    expires_at = datetime.fromisoformat(body["expires_at"])
    assert timedelta(minutes=59) < expires_at - datetime.now(UTC) <= timedelta(hours=1)
    headers = auth(body["token"])
    assert client.get(f"/api/campaigns/{campaign.id}/runs", headers=headers).status_code == 200
    _backdate(sessions, ApiToken, body["id"], expires_at=datetime.now(UTC) - timedelta(seconds=1))
    refused = client.get(f"/api/campaigns/{campaign.id}/runs", headers=headers)
    assert refused.status_code == 401 and "expired" in refused.json()["detail"]
    # a lifetime under a minute is refused, naming the field
    short = client.post(f"/api/teams/{team_id}/tokens", json={"expires_in_seconds": 5}, headers=organiser)
    assert short.status_code == 422 and short.json()["errors"][0]["field"] == "expires_in_seconds"


def test_rotating_a_team_token_revokes_the_previous_ones(client, organiser, make_campaign):
    campaign = make_campaign()
    team_id, first = campaign.team()
    kept = client.post(f"/api/teams/{team_id}/tokens", headers=organiser)  # no body: as before, nothing revoked
    assert kept.status_code == 201, kept.text
    second = auth(kept.json()["token"])
    assert client.get(f"/api/campaigns/{campaign.id}/runs", headers=first).status_code == 200
    rotated = client.post(f"/api/teams/{team_id}/tokens", json={"revoke_previous": True}, headers=organiser)
    assert rotated.status_code == 201, rotated.text
    third = auth(rotated.json()["token"])
    for old in (first, second):
        assert client.get(f"/api/campaigns/{campaign.id}/runs", headers=old).status_code == 401
    assert client.get(f"/api/campaigns/{campaign.id}/runs", headers=third).status_code == 200
    live = [
        t for t in client.get(f"/api/campaigns/{campaign.id}/tokens", headers=organiser).json() if not t["revoked_at"]
    ]
    assert [t["id"] for t in live] == [rotated.json()["id"]]


def test_rotating_an_assessor_token_also_spends_its_unused_links(client, organiser, make_campaign):
    campaign = make_campaign()
    created = client.post(f"/api/campaigns/{campaign.id}/assessors", json={"name": "rot"}, headers=organiser).json()
    old = auth(created["token"])
    assert client.get("/api/judging/progress", headers=old).status_code == 200
    link = parse_qs(urlparse(created["judge_url"]).fragment)["link"][0]
    rotated = client.post(f"/api/assessors/{created['id']}/tokens", json={"revoke_previous": True}, headers=organiser)
    assert rotated.status_code == 201, rotated.text
    assert client.get("/api/judging/progress", headers=old).status_code == 401
    assert client.get("/api/judging/progress", headers=auth(rotated.json()["token"])).status_code == 200
    assert client.post("/api/judging/session", headers=auth(link)).status_code == 401


def test_a_judging_link_works_once_and_not_after_it_expires(client, organiser, make_campaign, sessions, settings):
    campaign = make_campaign()
    created = client.post(f"/api/campaigns/{campaign.id}/assessors", json={"name": "lnk"}, headers=organiser).json()
    url = urlparse(created["judge_url"])
    assert (url.path, url.query, set(parse_qs(url.fragment))) == ("/judge", "", {"link"})
    assert created["token"] not in created["judge_url"]
    link = parse_qs(url.fragment)["link"][0]
    traded = client.post("/api/judging/session", headers=auth(link))
    assert traded.status_code == 201, traded.text
    session_token = traded.json()["token"]
    lifetime = datetime.fromisoformat(traded.json()["expires_at"]) - datetime.now(UTC)
    assert timedelta(seconds=settings.judge_session_seconds - 60) < lifetime
    assert lifetime <= timedelta(seconds=settings.judge_session_seconds)
    assert client.get("/api/judging/progress", headers=auth(session_token)).status_code == 200
    # used: refused
    used = client.post("/api/judging/session", headers=auth(link))
    assert used.status_code == 401 and "used already" in used.json()["detail"]
    # a fresh link that expired: refused
    fresh = client.post(f"/api/assessors/{created['id']}/judge-link", headers=organiser)
    assert fresh.status_code == 201, fresh.text
    fresh_link = parse_qs(urlparse(fresh.json()["judge_url"]).fragment)["link"][0]
    with session_scope(sessions) as session:
        from app.services.auth import hash_token

        session.execute(
            update(JudgeLink)
            .where(JudgeLink.token_hash == hash_token(fresh_link))
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
    expired = client.post("/api/judging/session", headers=auth(fresh_link))
    assert expired.status_code == 401 and "expired" in expired.json()["detail"]
    assert client.post("/api/judging/session", headers=auth("tp_no-such-link")).status_code == 401
    assert client.post("/api/judging/session").status_code == 401
    # a judging link is no token: it opens nothing else
    assert client.get("/api/judging/progress", headers=auth(fresh_link)).status_code == 401
    # the session token is the assessor's, listed and revocable as any other
    listed = client.get(f"/api/campaigns/{campaign.id}/tokens", headers=organiser).json()
    (session_row,) = [t for t in listed if t["label"].startswith("judging session")]
    assert session_row["assessor_id"] == created["id"] and session_row["expires_at"] is not None


def test_failed_authentications_are_throttled_with_retry_after(settings, sessions, organiser):
    with throttled_client(settings, sessions, 3) as throttled:
        # missing tokens do not count
        for _ in range(5):
            assert throttled.get("/api/campaigns").status_code == 401
        assert throttled.get("/api/campaigns", headers=organiser).status_code == 200
        for _ in range(3):
            assert throttled.get("/api/campaigns", headers=auth("tp_wrong")).status_code == 401
        refused = throttled.get("/api/campaigns", headers=auth("tp_wrong"))
        assert refused.status_code == 429, refused.text
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert "too many failed authentications" in refused.json()["detail"]
        # only failures are refused: a valid token from the address is served (behind NAT, its other users)
        assert throttled.get("/api/campaigns", headers=organiser).status_code == 200
        upload = throttled.post("/api/campaigns", json={"name": "x", "task_kind": "shots"}, headers=auth("tp_bad"))
        assert upload.status_code == 429 and int(upload.headers["retry-after"]) >= 1  # before any body is read too
        assert throttled.post("/api/judging/session", headers=auth("tp_guess")).status_code == 429
        # public pages need no authentication: still served
        assert throttled.get("/api/health").status_code == 200


def test_failed_judging_links_count_as_failed_authentications(settings, sessions):
    with throttled_client(settings, sessions, 2) as throttled:
        for _ in range(2):
            assert throttled.post("/api/judging/session", headers=auth("tp_guess")).status_code == 401
        refused = throttled.post("/api/judging/session", headers=auth("tp_guess"))
        assert refused.status_code == 429 and refused.headers["retry-after"].isdigit()
