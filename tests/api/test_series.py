"""Campaign series over HTTP: progress topics copied into each year's campaign, a set pooled once over two years' runs
and judged on the host's judging page, sealed from teams, the public and exports until released, and a top-up pool
that sends only new items to assessors."""

from __future__ import annotations

import uuid

import numpy as np

from tests.api.helpers import auth, evaluate_campaign, judge_all, make_assessor

PROGRESS = [{"number": "101", "title": "A wooden bridge", "set": "A"}, {"number": "102", "title": "A ring", "set": "A"}]


def relevant(shot: str) -> bool:
    """The simulated assessors' truth: every third shot."""
    return int(shot[1:]) % 3 == 0


def run_lines(seed: int, tag: str) -> str:
    """A seeded run over main topics 1, 2 and the progress topics: 6 shots of 15 per topic."""
    rng = np.random.default_rng(seed)
    return "".join(
        f"{topic} Q0 s{doc} {rank} {10 - rank} {tag}\n"
        for topic in ("1", "2", "101", "102")
        for rank, doc in enumerate(rng.permutation(15)[:6].tolist(), start=1)
    )


def join_year(client, organiser, make_campaign, series_id: int, seed: int):  # type: ignore[no-untyped-def]
    """A campaign of the series with team vireo's run and another team's, closed; (campaign, vireo's headers)."""
    campaign = make_campaign(n_topics=2)
    joined = client.post(f"/api/series/{series_id}/campaigns", json={"campaign_id": campaign.id}, headers=organiser)
    assert joined.status_code == 200, joined.text
    _, vireo = campaign.team(f"vireo{campaign.id}")
    _, other = campaign.team()
    for headers, name, offset in ((vireo, f"vireo-{seed}", 0), (other, f"other-{seed}", 1)):
        response = campaign.upload(headers, run_lines(seed + offset, name), name=name)
        assert response.status_code == 201, response.text
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).status_code == 200
    return campaign, vireo


def judge_pool(client, organiser, campaign, pool: dict, name: str) -> list[dict]:  # type: ignore[no-untyped-def]
    """An assessor of the host given both progress topics judges everything it is sent."""
    assessor_id, headers = make_assessor(client, organiser, campaign, name)
    body = {"assignments": [{"topic": t["number"], "assessor_id": assessor_id} for t in PROGRESS]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    return judge_all(client, headers, lambda item: "relevant" if relevant(item["shot_id"]) else "not_relevant")


def test_a_progress_set_pooled_over_two_years_is_sealed_until_released_and_tops_up(client, organiser, make_campaign):  # type: ignore[no-untyped-def]
    made = client.post("/api/series", json={"name": f"avs-progress-{uuid.uuid4().hex[:8]}"}, headers=organiser)
    assert made.status_code == 201, made.text
    series_id = made.json()["id"]
    first = make_campaign(n_topics=2)
    assert client.post(
        f"/api/series/{series_id}/campaigns", json={"campaign_id": first.id}, headers=organiser
    ).is_success
    topics = client.post(f"/api/series/{series_id}/topics", json={"topics": PROGRESS}, headers=organiser)
    assert topics.status_code == 201, topics.text
    assert topics.json()["sets"] == [{"name": "A", "topics": ["101", "102"], "released_at": None, "sealed": True}]
    _, vireo22 = first.team("vireo")
    assert first.upload(vireo22, run_lines(1, "v22"), name="v22").status_code == 201
    assert client.post(f"/api/campaigns/{first.id}/close", headers=organiser).status_code == 200
    second, vireo23 = join_year(client, organiser, make_campaign, series_id, 5)
    listed = client.get(f"/api/campaigns/{second.id}/topics", headers=vireo23).json()
    assert {t["number"] for t in listed} == {"1", "2", "101", "102"}  # teams answer the progress topics every year

    body = {"campaign_ids": [first.id, second.id], "kind": "depth", "depth": 4, "seed": 3}
    built = client.post(f"/api/series/{series_id}/sets/A/pools", json=body, headers=organiser)
    assert built.status_code == 201, built.text
    pool = built.json()
    assert pool["campaign_id"] == second.id and pool["reused"] == 0
    assert {t["topic"] for t in pool["topics"]} == {"101", "102"}
    seen = judge_pool(client, organiser, second, pool, "ann")
    assert len(seen) == sum(t["sampled"] for t in pool["topics"])
    cut = client.post(f"/api/pools/{pool['id']}/qrels", json={"label": "set A"}, headers=organiser)
    assert cut.status_code == 201, cut.text
    version = cut.json()["id"]
    evaluation = evaluate_campaign(client, organiser, second.id, qrels_version_id=version, measures=["AP", "P@5"])

    board = client.get(f"/api/series/{series_id}/sets/A/board?measure=AP", headers=organiser)
    assert board.status_code == 200, board.text
    rows = board.json()["rows"]
    assert {r["campaign_id"] for r in rows} == {first.id, second.id}
    assert {r["run"] for r in rows} == {"v22", "vireo-5", "other-5"}
    assert all(r["ci_low"] <= r["score"] <= r["ci_high"] for r in rows)

    # sealed: a team, the public and an export get nothing of set A
    refused = client.get(f"/api/campaigns/{second.id}/leaderboard?evaluation_id={evaluation['id']}", headers=vireo23)
    assert refused.status_code == 403 and "sealed" in refused.json()["detail"]
    public = client.get(f"/api/public/series/{series_id}/sets/A/board")
    assert public.status_code == 403 and "sealed" in public.json()["detail"]
    download = client.get(f"/api/qrels/{version}/download", headers=organiser)
    assert download.status_code == 200 and download.text == ""
    assert download.headers["X-Sealed-Topics-Left-Out"] == "101 102"
    published = client.post(
        f"/api/campaigns/{second.id}/publish", json={"evaluation_id": evaluation["id"]}, headers=organiser
    )
    assert published.status_code == 409

    released = client.post(f"/api/series/{series_id}/sets/A/release", headers=organiser)
    assert released.status_code == 200 and released.json()["sets"][0]["sealed"] is False
    public = client.get(f"/api/public/series/{series_id}/sets/A/board?measure=AP")
    assert public.status_code == 200
    assert [(r["run"], r["score"]) for r in public.json()["rows"]] == [(r["run"], r["score"]) for r in rows]
    mine = client.get(f"/api/campaigns/{second.id}/leaderboard?evaluation_id={evaluation['id']}", headers=vireo23)
    assert mine.status_code == 200 and [r["run"] for r in mine.json()["rows"]] == ["vireo-5"]
    download = client.get(f"/api/qrels/{version}/download", headers=organiser)
    assert {line.split()[0] for line in download.text.splitlines()} == {"101", "102"}
    assert "X-Sealed-Topics-Left-Out" not in download.headers

    # top-up: a third year's pool sends assessors only the items no earlier pool of the series judged
    third, _ = join_year(client, organiser, make_campaign, series_id, 9)
    body = {"campaign_ids": [first.id, second.id, third.id], "kind": "depth", "depth": 4, "seed": 4}
    topup = client.post(f"/api/series/{series_id}/sets/A/pools", json=body, headers=organiser).json()
    sampled = sum(t["sampled"] for t in topup["topics"])
    assert 0 < topup["reused"] < sampled and topup["params"]["reused"]["items"] == topup["reused"]
    again = judge_pool(client, organiser, third, topup, "bob")
    assert len(again) == sampled - topup["reused"]
    assert not {(i["topic"], i["shot_id"]) for i in again} & {(i["topic"], i["shot_id"]) for i in seen}
    cut = client.post(f"/api/pools/{topup['id']}/qrels", json={"label": "set A, 3 years"}, headers=organiser).json()
    lines = client.get(f"/api/qrels/{cut['id']}/download", headers=organiser).text.splitlines()
    assert len(lines) == sampled and all(int(g) == int(relevant(d)) for _, _, d, g in (x.split() for x in lines))
    outsider = client.post(
        f"/api/series/{series_id}/sets/A/pools", json={**body, "campaign_ids": [third.id, 10**6]}, headers=organiser
    )
    assert outsider.status_code == 422
    # per-topic depths name only the set's topics; a model-assisted series pool cannot reuse earlier verdicts
    main_topic = client.post(
        f"/api/series/{series_id}/sets/A/pools", json={**body, "depths": {"1": 2, "101": 3}}, headers=organiser
    )
    assert main_topic.status_code == 422 and main_topic.json()["errors"][0]["field"] == "depths"
    assert "1" in main_topic.json()["errors"][0]["message"]
    assisted = {**body, "reuse": True, "verification": {"human_share": 0.5}}
    both = client.post(f"/api/series/{series_id}/sets/A/pools", json=assisted, headers=organiser)
    assert both.status_code == 422 and both.json()["errors"][0]["field"] == "reuse"
    bound = client.get(f"/api/series/{series_id}", headers=auth("tp_not_a_token"))
    assert bound.status_code == 401
