"""A moment campaign's assessors are sent to the marking page, and its moment pools are not cut as shot qrels."""

from __future__ import annotations


def test_judge_links_point_at_the_page_of_the_campaigns_task(make_campaign, client, organiser):
    shots = make_campaign(n_topics=1)
    moments = make_campaign(n_topics=1, task_kind="moments")
    for campaign, page in ((shots, "/judge#link="), (moments, "/mark#link=")):
        body = client.post(f"/api/campaigns/{campaign.id}/assessors", json={"name": "a"}, headers=organiser).json()
        assert page in body["judge_url"], body["judge_url"]
        again = client.post(f"/api/assessors/{body['id']}/judge-link", headers=organiser)
        assert again.status_code == 201 and page in again.json()["judge_url"]


def test_a_moment_pool_is_not_cut_as_shot_qrels(moment_pool, client, organiser):
    _, pool, *_ = moment_pool
    refused = client.post(f"/api/pools/{pool['id']}/qrels", json={"label": "shots?"}, headers=organiser)
    assert refused.status_code == 409 and f"/api/moment-pools/{pool['id']}/truth" in refused.json()["detail"]
