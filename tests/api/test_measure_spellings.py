"""Leaderboards take a measure in any spelling the CLI accepts: trec_eval's (map, P_10, ndcg_cut_10) or ours."""

from __future__ import annotations

from tests.api.helpers import wait_done


def test_trec_eval_spellings_name_the_same_board(judged_campaign, client, organiser):
    campaign, *_ = judged_campaign
    body = {"measures": ["AP", "P@10", "nDCG@10"]}
    evaluation = client.post(f"/api/campaigns/{campaign.id}/evaluations", json=body, headers=organiser).json()
    wait_done(client, organiser, evaluation["id"])
    live = f"/api/campaigns/{campaign.id}/leaderboard"
    spellings = (("AP", "map"), ("P@10", "P_10"), ("P@10", "P.10"), ("nDCG@10", "ndcg_cut_10"))
    for ours, theirs in (*spellings, ("nDCG@10", "ndcg_cut.10")):
        expected = client.get(live, params={"measure": ours}, headers=organiser).json()
        got = client.get(live, params={"measure": theirs}, headers=organiser)
        assert got.status_code == 200, got.text
        assert got.json()["measure"] == ours and got.json()["rows"] == expected["rows"]
    unknown = client.get(live, params={"measure": "no_such_measure"}, headers=organiser)
    assert unknown.status_code == 422 and "AP" in unknown.text
    significance = client.get(f"/api/campaigns/{campaign.id}/significance?measure=map", headers=organiser)
    assert significance.status_code == 200, significance.text
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    public = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard?measure=P_10").json()
    assert public["measure"] == "P@10"
