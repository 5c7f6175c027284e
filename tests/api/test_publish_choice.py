"""POST /api/campaigns/{id}/publish freezes the evaluation its body names, not merely the newest one."""

from __future__ import annotations

from tests.api.helpers import evaluate_campaign

# two runs over topics 1-3: "first" ranks d1 above d2, "second" d2 above d1
RUNS = {
    "first": "".join(f"{t} Q0 d{d} {r} {10 - r} first\n" for t in (1, 2, 3) for r, d in enumerate((1, 2, 3), 1)),
    "second": "".join(f"{t} Q0 d{d} {r} {10 - r} second\n" for t in (1, 2, 3) for r, d in enumerate((2, 1, 3), 1)),
}


def test_publish_freezes_the_evaluation_named_in_its_body(make_campaign, client, organiser):
    campaign = make_campaign()
    _, team = campaign.team()
    for name, text in RUNS.items():
        assert campaign.upload(team, text, name=name).status_code == 201
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).status_code == 200
    evaluations = []
    for relevant in ("d1", "d2"):  # qrels in which only that doc is relevant, on every topic; the second is newer
        qrels = "".join(f"{t} 0 d{d} {int(f'd{d}' == relevant)}\n" for t in (1, 2, 3) for d in (1, 2, 3))
        version = client.post(
            f"/api/campaigns/{campaign.id}/qrels",
            data={"label": relevant},
            files={"file": ("qrels", qrels.encode())},
            headers=organiser,
        )
        assert version.status_code == 201, version.text
        body = {"qrels_version_id": version.json()["id"], "measures": ["AP"]}
        evaluations.append(evaluate_campaign(client, organiser, campaign.id, **body)["id"])
    older, newer = evaluations
    published = client.post(f"/api/campaigns/{campaign.id}/publish", json={"evaluation_id": older}, headers=organiser)
    assert published.status_code == 201, published.text
    board = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").json()
    assert board["evaluation_id"] == older != newer
    # on qrels "d1" the run ranking d1 first wins with AP 1; "second" finds d1 at rank 2: AP 1/2
    assert [(row["run"], row["score"]) for row in board["rows"]] == [("first", 1.0), ("second", 0.5)]
    unknown = client.post(f"/api/campaigns/{campaign.id}/publish", json={"evaluation_id": 10**6}, headers=organiser)
    assert unknown.status_code == 404, unknown.text
