"""Organisers mark baseline runs (PATCH /api/runs/{id}) and anonymise a published board's teams (the campaign's
anonymise_teams): the public JSON and CSV say Team A, B, ... in the order of first submission, organisers' live board
keeps the names; bad input is a 422 naming the field, a team cannot mark runs."""

from __future__ import annotations

from tests.api import helpers


def test_baselines_and_anonymised_teams_on_the_public_board(make_campaign, client, organiser, sessions):  # type: ignore[no-untyped-def]
    campaign, run_names, *_ = helpers.build_judged_campaign(make_campaign, client, organiser, sessions)
    runs = {r["name"]: r for r in client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()}
    first = runs[run_names[0]]
    refused = client.patch(f"/api/runs/{first['id']}", json={"baseline": "perhaps"}, headers=organiser)
    assert refused.status_code == 422 and "baseline" in refused.text
    assert client.patch(f"/api/runs/{first['id']}", json={"name": "x"}, headers=organiser).status_code == 422
    team = campaign.team(f"other{campaign.id}")[1]
    assert client.patch(f"/api/runs/{first['id']}", json={"baseline": True}, headers=team).status_code == 403
    assert client.patch(f"/api/runs/{first['id']}", json={"baseline": True}, headers=organiser).json()["baseline"]
    assert (
        client.patch(f"/api/campaigns/{campaign.id}", json={"anonymise_teams": None}, headers=organiser).status_code
        == 422
    )
    helpers.evaluate_campaign(client, organiser, campaign.id)
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    named = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").json()
    assert named["anonymised"] is False and {r["team"] for r in named["rows"]} == {
        f"team{campaign.id}_{k}" for k in (0, 1)
    }
    assert client.patch(f"/api/campaigns/{campaign.id}", json={"anonymise_teams": True}, headers=organiser).json()[
        "anonymise_teams"
    ]
    board = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").json()
    teams = {r["run"]: r["team"] for r in board["rows"]}
    # runs alternate between the two teams, team 0 first: it submitted first
    assert teams == {name: ("Team A" if k % 2 == 0 else "Team B") for k, name in enumerate(run_names)}
    assert board["anonymised"] is True and {r["run"]: r["baseline"] for r in board["rows"]}[run_names[0]] is True
    assert all(r["submitted_at"] == runs[r["run"]]["created_at"].replace("Z", "+00:00") for r in board["rows"]) or all(
        r["submitted_at"][:19] == runs[r["run"]]["created_at"][:19] for r in board["rows"]
    )
    csv = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard", params={"format": "csv"}).text
    assert "Team A" in csv and f"team{campaign.id}_" not in csv
    # the report, frozen with real names, is read anonymised too: its JSON twin and its page (figures included)
    report = client.get(f"/api/public/campaigns/{campaign.id}/report")
    assert report.json()["anonymised"] is True and "Team A" in report.text and f"team{campaign.id}_" not in report.text
    page = client.get(f"/campaigns/{campaign.id}/report").text
    assert "Team A" in page and f"team{campaign.id}_" not in page
    live = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=organiser).json()
    assert {r["team"] for r in live["rows"]} == {f"team{campaign.id}_{k}" for k in (0, 1)} and not live["anonymised"]
