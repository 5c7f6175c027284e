"""Role rules: every endpoint declares its role; teams never reach other teams' runs."""

from __future__ import annotations

from tests.api.helpers import roles_of, routes


def test_every_endpoint_declares_exactly_one_role(client):
    api_routes = [r for r in routes(client.app.routes) if r.path.startswith("/api")]
    assert len(api_routes) >= 15
    undeclared = [f"{sorted(r.methods)} {r.path}" for r in api_routes if len(roles_of(r)) != 1]
    assert undeclared == []


def _run(campaign, headers, name="r"):
    response = campaign.upload(headers, "1 Q0 a 1 1.0 t\n", name=name)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def test_team_cannot_read_download_or_delete_another_teams_run(make_campaign, client):
    campaign = make_campaign()
    _, alice = campaign.team()
    _, bob = campaign.team()
    run_id = _run(campaign, alice)
    for method, path in (
        ("get", f"/api/runs/{run_id}"),
        ("get", f"/api/runs/{run_id}/download"),
        ("delete", f"/api/runs/{run_id}"),
    ):
        assert getattr(client, method)(path, headers=bob).status_code == 404
    assert client.get(f"/api/runs/{run_id}", headers=alice).status_code == 200


def test_team_lists_only_its_own_runs(make_campaign, client, organiser):
    campaign = make_campaign()
    _, alice = campaign.team()
    _, bob = campaign.team()
    mine, theirs = _run(campaign, alice, "a1"), _run(campaign, bob, "b1")
    listed = [r["id"] for r in client.get(f"/api/campaigns/{campaign.id}/runs", headers=alice).json()]
    assert listed == [mine]
    assert {r["id"] for r in client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()} == {
        mine,
        theirs,
    }


def test_team_of_another_campaign_sees_nothing(make_campaign, client):
    first, second = make_campaign(), make_campaign()
    _, alice = first.team()
    _, mallory = second.team()
    run_id = _run(first, alice)
    assert client.get(f"/api/campaigns/{first.id}/runs", headers=mallory).status_code == 404
    assert client.get(f"/api/runs/{run_id}", headers=mallory).status_code == 404
    assert first.upload(mallory, "1 Q0 a 1 1.0 t\n").status_code == 404


def test_team_cannot_submit_for_another_team(make_campaign):
    campaign = make_campaign()
    _, alice = campaign.team()
    bob_id, _ = campaign.team()
    assert campaign.upload(alice, "1 Q0 a 1 1.0 t\n", team_id=bob_id).status_code == 403


def test_assessors_never_see_runs(make_campaign, client, organiser):
    campaign = make_campaign()
    _, alice = campaign.team()
    run_id = _run(campaign, alice)
    token = client.post(f"/api/campaigns/{campaign.id}/assessors", json={"name": "ann"}, headers=organiser).json()[
        "token"
    ]
    assessor = {"Authorization": f"Bearer {token}"}
    assert client.get(f"/api/campaigns/{campaign.id}/runs", headers=assessor).status_code == 403
    assert client.get(f"/api/runs/{run_id}", headers=assessor).status_code == 403
    assert client.get(f"/api/runs/{run_id}/download", headers=assessor).status_code == 403


def test_delete_own_run_while_open_only(make_campaign, client, organiser):
    campaign = make_campaign()
    _, alice = campaign.team()
    first, second = _run(campaign, alice, "x1"), _run(campaign, alice, "x2")
    assert client.delete(f"/api/runs/{first}", headers=alice).status_code == 204
    assert client.get(f"/api/runs/{first}", headers=alice).status_code == 404
    client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser)
    assert client.delete(f"/api/runs/{second}", headers=alice).status_code == 403
    assert client.delete(f"/api/runs/{second}", headers=organiser).status_code == 204


def test_campaign_bound_organiser_is_confined(make_campaign, client, sessions):
    from app.services.auth import create_token
    from app.storage.database import session_scope
    from app.storage.models import Role

    mine, other = make_campaign(), make_campaign()
    with session_scope(sessions) as session:
        token = create_token(session, Role.organiser, campaign_id=mine.id)
    headers = {"Authorization": f"Bearer {token}"}
    assert client.get(f"/api/campaigns/{mine.id}/teams", headers=headers).status_code == 200
    assert client.get(f"/api/campaigns/{other.id}/teams", headers=headers).status_code == 404
    assert (
        client.post("/api/campaigns", json={"name": "nope", "task_kind": "shots"}, headers=headers).status_code == 403
    )
