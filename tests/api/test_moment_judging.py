"""Moment pools and marking over REST: pool, blind marking, agreement, a cut ground truth, and evaluation on it."""

from __future__ import annotations

import pytest

from app.evaluation.moments import evaluate_moments, parse_moment_ground_truth, parse_moment_run
from tests.api.helpers import ANN, MOMENT_BLIND_KEYS, MOMENT_RUNS, mark_all, wait_done

BOB = {
    ("1", "vidA", 10.0): [[10.0, 18.0]],  # IoU with ann's [12,18]: 6/8
    ("1", "vidA", 40.0): [[40.0, 45.0]],  # with ann's [40,45]+[50,52]: 5/7
    ("1", "vidB", 0.0): [],  # both none: 1
}


def test_marking_agreement_truth_and_evaluation(moment_pool, client, organiser):
    campaign, pool, ann, bob = moment_pool
    seen = mark_all(client, ann, ANN)
    assert [i["topic"] for i in seen] == ["1", "1", "1", "2", "2"]  # topic by topic
    assert all(set(i) == MOMENT_BLIND_KEYS for i in seen)  # no run, rank or count
    assert all(i["segments"] is None for i in seen)
    # each answer of /next names the media of the item after it (the page preloads it), the last one none
    assert [i["next_media_url"] for i in seen] == [i["media_url"] for i in seen[1:]] + [None]
    first = seen[0]
    assert first["media_url"] == f"https://media.example/{first['video_id']}.mp4" and first["topic_title"] == "topic 1"
    assert client.get("/api/moment-judging/progress", headers=ann).json() == {"marked": 5, "total": 5}
    # bob sees only topic 1, none of ann's marks, and not ann's topic 2 items
    topic2 = next(i for i in seen if i["topic"] == "2")
    assert client.get(f"/api/moment-judging/items/{topic2['item_id']}", headers=bob).status_code == 404
    bobs_view = client.get(f"/api/moment-judging/items/{first['item_id']}", headers=bob).json()
    assert bobs_view["segments"] is None and set(bobs_view) == MOMENT_BLIND_KEYS
    assert client.get("/api/moment-judging/progress", headers=bob).json() == {"marked": 0, "total": 3}
    mark_all(client, bob, BOB)
    assert (
        client.get(f"/api/moment-judging/items/{first['item_id']}", headers=ann).json()["segments"]
        == ANN[(first["topic"], first["video_id"], first["start"])]
    )

    counts = client.get(f"/api/moment-pools/{pool['id']}", headers=organiser).json()["topics"]
    assert counts == [{"topic": "1", "proposed": 3, "judged": 3}, {"topic": "2", "proposed": 2, "judged": 2}]
    agreement = client.get(f"/api/moment-pools/{pool['id']}/agreement", headers=organiser).json()
    expected = (6 / 8 + 5 / 7 + 1.0) / 3
    assert agreement["items"] == 3 and agreement["mean_iou"] == pytest.approx(expected)
    assert agreement["topics"] == [{"topic": "1", "items": 3, "mean_iou": pytest.approx(expected)}]
    assert agreement["pairs"] == [{"assessors": ["ann", "bob"], "items": 3, "mean_iou": pytest.approx(expected)}]

    # the truth takes each item's first marks (ann's), merged per topic and video
    cut = client.post(f"/api/moment-pools/{pool['id']}/truth", json={"label": "marked-v1"}, headers=organiser)
    assert cut.status_code == 201, cut.text
    version = cut.json()
    assert (version["kind"], version["source"], version["n_entries"]) == ("moments", "cut", 4)
    again = client.post(f"/api/moment-pools/{pool['id']}/truth", json={"label": "marked-v1"}, headers=organiser)
    assert again.status_code == 409
    truth = client.get(f"/api/moment-truth/{version['id']}", headers=organiser).text
    assert truth == "1\tvidA\t12\t18\n1\tvidA\t40\t45\n1\tvidA\t50\t52\n2\tvidB\t0\t5\n"

    started = client.post(
        f"/api/campaigns/{campaign.id}/evaluations", json={"qrels_version_id": version["id"]}, headers=organiser
    )
    assert started.status_code == 202, started.text
    assert started.json()["qrels_version_id"] == version["id"]
    wait_done(client, organiser, started.json()["id"])
    board = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=organiser).json()
    reference = evaluate_moments(
        parse_moment_ground_truth(truth),
        [parse_moment_run(t) for t in MOMENT_RUNS.values()],
        board["measures"],
        run_names=list(MOMENT_RUNS),
    )
    for row in board["rows"]:
        for measure, value in row["scores"].items():
            assert value == pytest.approx(reference[row["run"]][measure]["all"], abs=1e-12)
    # by hand: topic 2's truth [0,5] vs good's first moment [0,4]: IoU 0.8, a hit at 0.5; poor's [30,40] misses;
    # topic 1: good's [11,19] vs [12,18] 6/8 hit, poor's [10,20] vs [12,18] 6/10 hit: R@1,0.5 = 1 and 0.5
    means = {row["run"]: row["scores"] for row in board["rows"]}
    assert means["good"]["R@1,0.5"] == pytest.approx(1.0) and means["poor"]["R@1,0.5"] == pytest.approx(0.5)


def test_bad_marks_are_422_naming_the_field_and_others_are_refused(moment_pool, client, organiser):
    campaign, pool, ann, bob = moment_pool
    item = client.post("/api/moment-judging/next", headers=ann).json()
    path = f"/api/moment-judging/items/{item['item_id']}"
    response = client.post(path, json={"segments": [{"start": 5, "end": 9}, {"start": 8, "end": 3}]}, headers=ann)
    assert response.status_code == 422
    assert [e["field"] for e in response.json()["errors"]] == ["segments[1].end"]
    response = client.post(path, json={"segments": [{"start": -1, "end": 3}]}, headers=ann)
    assert [e["field"] for e in response.json()["errors"]] == ["segments[0].start"]
    response = client.post(path, json={"segments": [{"start": 1}]}, headers=ann)
    assert response.status_code == 422 and "end" in response.json()["errors"][0]["field"]
    assert client.post(path, json={}, headers=ann).status_code == 422
    # organisers and teams do not mark; an unknown item is 404
    assert client.post(path, json={"segments": []}, headers=organiser).status_code == 403
    assert client.post("/api/moment-judging/items/999999", json={"segments": []}, headers=ann).status_code == 404
    assert client.post(path, json={"segments": []}, headers=ann).json()["segments"] == []
    # with a mark, the pool cannot be rebuilt; bad pool parameters name their field
    rebuilt = client.post(f"/api/campaigns/{campaign.id}/moment-pools", json={"depth": 1}, headers=organiser)
    assert rebuilt.status_code == 409
    bad = client.post(f"/api/campaigns/{campaign.id}/moment-pools", json={"iou": 1.5}, headers=organiser)
    assert bad.status_code == 422 and "iou" in bad.json()["errors"][0]["field"]
    stats = client.get(f"/api/pools/{pool['id']}/stats", headers=organiser)
    assert stats.status_code == 422


def test_moment_pools_are_for_closed_moment_campaigns(make_campaign, client, organiser):
    shots = make_campaign()
    response = client.post(f"/api/campaigns/{shots.id}/moment-pools", json={}, headers=organiser)
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "task_kind"
    moments = make_campaign(task_kind="moments")
    assert client.post(f"/api/campaigns/{moments.id}/moment-pools", json={}, headers=organiser).status_code == 409


def test_the_organiser_overview_counts_moment_marks(moment_pool, client, organiser):
    campaign, pool, ann, bob = moment_pool
    mark_all(client, bob, BOB)  # bob marks all of topic 1 (3 items, 2 with a segment)
    body = client.get(f"/api/campaigns/{campaign.id}/overview", headers=organiser).json()
    topics = {t["topic"]: t for t in body["topics"]}
    assert {k: (t["pooled"], t["total"], t["judged"], t["relevant"]) for k, t in topics.items()} == {
        "1": (3, 3, 3, 2),
        "2": (2, 2, 0, 0),
    }
    assessors = {a["assessor"]: a for a in body["assessors"]}
    assert (assessors["bob"]["judged"], assessors["bob"]["mean_seconds"]) == (3, 4.5)
    assert (assessors["ann"]["judged"], assessors["ann"]["remaining"]) == (0, 2)  # topic 2 is ann's alone
    assert (body["judging"]["total"], body["judging"]["done"], body["judging"]["remaining"]) == (5, 3, 2)
    mark_all(client, ann, ANN)  # ann marks topics 1 and 2: topic 1's items were done already (by bob)
    body = client.get(f"/api/campaigns/{campaign.id}/overview", headers=organiser).json()
    topics = {t["topic"]: t for t in body["topics"]}
    assert (topics["2"]["judged"], topics["2"]["relevant"]) == (2, 1)
    assert {a["assessor"]: a["judged"] for a in body["assessors"]} == {"ann": 5, "bob": 3}


def test_the_truth_combines_several_assessors_marks_as_asked(moment_pool, client, organiser):
    campaign, pool, ann, bob = moment_pool
    mark_all(client, ann, ANN)
    mark_all(client, bob, BOB)

    def cut(label: str, combine: str) -> str:
        body = {"label": label, "combine": combine}
        version = client.post(f"/api/moment-pools/{pool['id']}/truth", json=body, headers=organiser)
        assert version.status_code == 201, version.text
        assert version.json()["combine"] == combine
        return client.get(f"/api/moment-truth/{version.json()['id']}", headers=organiser).text

    # item (1, vidA, 10): ann [12,18], bob [10,18]; item (1, vidA, 40): ann [40,45]+[50,52], bob [40,45];
    # topic 2: ann alone, so each of her marks is a majority of one
    assert cut("any", "union") == "1\tvidA\t10\t18\n1\tvidA\t40\t45\n1\tvidA\t50\t52\n2\tvidB\t0\t5\n"
    assert cut("most", "majority") == "1\tvidA\t12\t18\n1\tvidA\t40\t45\n2\tvidB\t0\t5\n"
    assert cut("all", "all") == cut("most again", "majority")  # with two assessors, more than half is both
    assert cut("first", "first") == "1\tvidA\t12\t18\n1\tvidA\t40\t45\n1\tvidA\t50\t52\n2\tvidB\t0\t5\n"
    refused = client.post(
        f"/api/moment-pools/{pool['id']}/truth", json={"label": "x", "combine": "vote"}, headers=organiser
    )
    assert refused.status_code == 422 and "combine" in refused.text
