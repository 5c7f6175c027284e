"""Moment run uploads for a moment-retrieval campaign."""

from __future__ import annotations


def test_moment_run_round_trip(make_campaign, client):
    campaign = make_campaign(task_kind="moments")
    assert campaign.set_collection("s1 vid1 0 30\ns2 vid2 0 40\n").status_code == 200
    _, team = campaign.team()
    text = "1\tvid1\t1.5\t7.25\t0.9\tm1\n1\tvid2\t0\t3\t0.5\tm1\n2\tvid1\t10\t12\t0.7\tm1\n"
    response = campaign.upload(team, text, name="moments1")
    assert response.status_code == 201, response.text
    assert (response.json()["format"], response.json()["n_entries"]) == ("moments", 3)
    downloaded = client.get(f"/api/runs/{response.json()['id']}/download", headers=team).text
    assert downloaded.split() == text.split()


def test_moment_run_rules(make_campaign):
    campaign = make_campaign(task_kind="moments")
    _, team = campaign.team()
    text = "1 vid1 5 5 0.9\n1 vid1 -1 3 0.5\n2 vid1 4 2 0.1\n"
    response = campaign.upload(team, text)
    assert response.status_code == 422
    assert [e["line"] for e in response.json()["errors"]] == [1, 2, 3]


def test_unknown_video(make_campaign):
    campaign = make_campaign(task_kind="moments")
    assert campaign.set_collection("s1 vid1 0 30\n").status_code == 200
    _, team = campaign.team()
    response = campaign.upload(team, "1 vid1 0 3 0.9\n1 nope 1 2 0.5\n")
    assert response.status_code == 422
    assert response.json()["errors"][0]["line"] == 2
    assert "nope" in response.json()["errors"][0]["message"]


def test_shot_runs_are_refused_by_moment_campaigns(make_campaign):
    campaign = make_campaign(task_kind="moments")
    _, team = campaign.team()
    response = campaign.upload(team, "1 Q0 a 1 1.0 r\n", format="trec")
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "format"
