"""Quality control and qrels at their boundaries: a shot returned by exactly N runs, adjudicated and `unsure`
verdicts reaching the cut qrels. Each case would pass with the obvious slip (`>` for `>=`, adjudication ignored,
`unsure` graded relevant) only if it asserted less than it does."""

from __future__ import annotations

from tests.api.helpers import assign, campaign_with_counted_runs, judge_all


def test_a_shot_returned_by_exactly_min_runs_runs_is_sent_to_quality_control(make_campaign, client, organiser):
    campaign, pool = campaign_with_counted_runs(make_campaign, client, organiser)
    headers = assign(client, organiser, campaign, pool, "first")
    judged = judge_all(client, headers, lambda item: "not_relevant")
    assert len(judged) == 10
    qc = client.post(f"/api/pools/{pool['id']}/quality-control?min_runs=3&window=1", headers=organiser).json()
    assert qc == {"frequent_false_positives": 2, "neighbour_disagreements": 0, "queued": 2}  # s_0 (4 runs), s_1 (3)


def _qrels_grades(client, organiser, pool) -> dict[str, int]:
    cut = client.post(f"/api/pools/{pool['id']}/qrels", json={"label": "v1"}, headers=organiser)
    assert cut.status_code == 201, cut.text
    text = client.get(f"/api/qrels/{cut.json()['id']}/download?format=trec", headers=organiser).text
    return {line.split()[2]: int(line.split()[3]) for line in text.splitlines() if line.startswith("1 ")}


def test_adjudicated_and_unsure_verdicts_reach_the_cut_qrels(make_campaign, client, organiser):
    campaign, pool = campaign_with_counted_runs(make_campaign, client, organiser)
    headers = assign(client, organiser, campaign, pool, "judge")
    decide = {"s_0": "unsure", "s_1": "unsure", "s_2": "relevant", "s_3": "not_relevant"}
    judge_all(client, headers, lambda item: decide.get(item["shot_id"], "not_relevant"))
    queue = client.get(f"/api/pools/{pool['id']}/adjudication", headers=organiser).json()
    assert sorted(item["shot_id"] for item in queue) == ["s_0", "s_1"]
    s0 = next(item for item in queue if item["shot_id"] == "s_0")
    body = {"pool_item_id": s0["pool_item_id"], "verdict": "relevant"}
    assert client.post(f"/api/pools/{pool['id']}/adjudication", json=body, headers=organiser).status_code == 204
    grades = _qrels_grades(client, organiser, pool)
    assert grades["s_0"] == 1  # unsure, then adjudicated relevant
    assert grades["s_1"] == 0  # unsure, never adjudicated: not relevant
    assert grades["s_2"] == 1 and grades["s_3"] == 0
    assert sum(grades.values()) == 2 and len(grades) == 10


def test_second_opinions_go_only_to_other_assessors_of_the_topic(make_campaign, client, organiser):
    campaign, pool = campaign_with_counted_runs(make_campaign, client, organiser)
    first = assign(client, organiser, campaign, pool, "first")
    judge_all(client, first, lambda item: "not_relevant")
    qc = client.post(f"/api/pools/{pool['id']}/quality-control?min_runs=3&window=1", headers=organiser).json()
    assert qc["queued"] == 2
    stranger = assign(client, organiser, campaign, pool, "stranger", topic="2")  # of the pool, not of topic 1
    assert [item["shot_id"] for item in judge_all(client, stranger, lambda item: "relevant")] == ["s_11"]
    assert client.post("/api/judging/next", headers=stranger).status_code == 204  # no second opinions of topic 1
    stranger_id = client.get(f"/api/campaigns/{campaign.id}/assessors", headers=organiser).json()[-1]["id"]
    assert client.post("/api/judging/next", headers=first).status_code == 204  # never its own items back
    body = {"assignments": [{"topic": "1", "assessor_id": stranger_id}], "shared": True}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code in (200, 201)
    second = judge_all(client, stranger, lambda item: "not_relevant")
    assert sorted(item["shot_id"] for item in second) == ["s_0", "s_1"]
