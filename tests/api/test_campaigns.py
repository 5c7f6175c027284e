"""Campaign creation, settings and lifecycle through the API."""

from __future__ import annotations

from tests.api.helpers import auth


def test_create_list_get(client, organiser):
    response = client.post("/api/campaigns", json={"name": "avs-2026", "task_kind": "shots"}, headers=organiser)
    assert response.status_code == 201
    body = response.json()
    assert (body["status"], body["max_results"], body["max_runs_per_team"]) == ("draft", 1000, 10)
    assert body["id"] in [c["id"] for c in client.get("/api/campaigns", headers=organiser).json()]
    assert client.get(f"/api/campaigns/{body['id']}", headers=organiser).json()["name"] == "avs-2026"


def test_duplicate_name_is_409(client, organiser):
    body = {"name": "twice", "task_kind": "moments"}
    assert client.post("/api/campaigns", json=body, headers=organiser).status_code == 201
    response = client.post("/api/campaigns", json=body, headers=organiser)
    assert response.status_code == 409
    assert "twice" in response.json()["detail"]


def test_invalid_fields_are_named(client, organiser):
    response = client.post(
        "/api/campaigns", json={"name": "x", "task_kind": "audio", "max_results": 0}, headers=organiser
    )
    assert response.status_code == 422
    fields = {e["field"] for e in response.json()["errors"]}
    assert fields == {"task_kind", "max_results"}


def test_window_must_not_be_empty(client, organiser):
    response = client.post(
        "/api/campaigns",
        json={
            "name": "badwindow",
            "task_kind": "shots",
            "submission_opens_at": "2026-05-01T00:00:00Z",
            "submission_closes_at": "2026-04-01T00:00:00Z",
        },
        headers=organiser,
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "submission_closes_at"


def test_lifecycle_open_close_reopen(make_campaign, client, organiser):
    campaign = make_campaign(open_=False)
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).status_code == 409
    assert client.post(f"/api/campaigns/{campaign.id}/open", headers=organiser).json()["status"] == "open"
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).json()["status"] == "closed"
    assert client.post(f"/api/campaigns/{campaign.id}/open", headers=organiser).json()["status"] == "open"


def test_patch_settings(make_campaign, client, organiser):
    campaign = make_campaign()
    response = client.patch(
        f"/api/campaigns/{campaign.id}", json={"max_runs_per_team": 2, "description": "d"}, headers=organiser
    )
    assert response.status_code == 200
    assert (response.json()["max_runs_per_team"], response.json()["description"]) == (2, "d")
    assert (
        client.patch(f"/api/campaigns/{campaign.id}", json={"status": "published"}, headers=organiser).status_code
        == 422
    )


def test_teams_see_only_their_campaign_and_cannot_create(make_campaign, client):
    mine, other = make_campaign(), make_campaign()
    _, team = mine.team()
    assert [c["id"] for c in client.get("/api/campaigns", headers=team).json()] == [mine.id]
    assert client.get(f"/api/campaigns/{other.id}", headers=team).status_code == 404
    assert client.post("/api/campaigns", json={"name": "t", "task_kind": "shots"}, headers=team).status_code == 403
    assert client.post(f"/api/campaigns/{mine.id}/close", headers=team).status_code == 403


def test_missing_and_bad_tokens_are_401(client):
    assert client.get("/api/campaigns").status_code == 401
    assert client.get("/api/campaigns", headers=auth("tp_nope")).status_code == 401
    assert client.get("/api/campaigns", headers={"Authorization": "Basic abc"}).status_code == 401


def test_health_is_public(client):
    assert client.get("/api/health").json()["status"] == "ok"
