"""Pools, blind judging, quality control and qrels through the API."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest
from sqlalchemy import func, select

from app.storage.models import Judgement, JudgementChange, JudgingTask, PoolItem
from tests.api.helpers import TASK_VIEW_KEYS, judge_all, judge_in_process, make_assessor, setup_campaign


def test_pool_build_is_reproducible_and_counts(make_campaign, client, organiser):
    campaign, _ = setup_campaign(make_campaign, client, organiser)
    body = {"kind": "stratified", "strata": "1-10:1.0, 11-60:0.5", "seed": 123}
    first = client.post(f"/api/campaigns/{campaign.id}/pools", json=body, headers=organiser)
    assert first.status_code == 201, first.text
    pool = first.json()
    assert pool["seed"] == 123 and len(pool["topics"]) == 3
    for topic in pool["topics"]:
        strata = topic["strata"]
        assert strata["1"]["pooled"] == strata["1"]["sampled"]
        assert strata["2"]["sampled"] == int(np.floor(0.5 * strata["2"]["pooled"] + 0.5))
    again = client.post(f"/api/campaigns/{campaign.id}/pools", json=body, headers=organiser).json()
    assert again["topics"] == pool["topics"]
    stats = client.get(f"/api/pools/{again['id']}/stats", headers=organiser).json()
    assert 0 < stats["judged_share"]["min"] <= stats["judged_share"]["mean"] <= stats["judged_share"]["max"] <= 1
    assert sum(r["unique_contributions"] for r in stats["runs"]) > 0


def test_pool_needs_a_closed_campaign_and_valid_strata(make_campaign, client, organiser):
    campaign = make_campaign()
    assert (
        client.post(
            f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 10}, headers=organiser
        ).status_code
        == 409
    )
    campaign, _ = setup_campaign(make_campaign, client, organiser)
    response = client.post(f"/api/campaigns/{campaign.id}/pools", json={"strata": "5-10:1"}, headers=organiser)
    assert response.status_code == 422 and response.json()["errors"][0]["field"] == "strata"


def test_priority_selection_pools_fewer_runs(make_campaign, client, organiser):
    campaign, _ = setup_campaign(make_campaign, client, organiser)
    everything = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 20, "seed": 1}, headers=organiser
    ).json()
    priority = client.post(
        f"/api/campaigns/{campaign.id}/pools",
        json={"kind": "depth", "depth": 20, "seed": 1, "max_priority": 1},
        headers=organiser,
    ).json()
    assert len(priority["params"]["run_ids"]) == 2 and len(everything["params"]["run_ids"]) == 4
    assert sum(t["pooled"] for t in priority["topics"]) < sum(t["pooled"] for t in everything["topics"])


def test_blind_judging_flow(make_campaign, client, organiser, sessions):
    campaign, run_names = setup_campaign(make_campaign, client, organiser)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 5, "seed": 7}, headers=organiser
    ).json()
    ann_id, ann = make_assessor(client, organiser, campaign, "ann")
    bob_id, bob = make_assessor(client, organiser, campaign, "bob")
    response = client.post(
        f"/api/pools/{pool['id']}/assignments",
        headers=organiser,
        json={"assignments": [{"topic": "1", "assessor_id": ann_id}, {"topic": "2", "assessor_id": bob_id}]},
    )
    assert response.status_code == 201
    assert (
        client.post(
            f"/api/pools/{pool['id']}/assignments",
            headers=organiser,
            json={"assignments": [{"topic": "1", "assessor_id": bob_id}]},
        ).status_code
        == 409
    )
    assert client.get("/api/judging/progress", headers=ann).json()["done"] == 0

    seen = judge_all(client, ann, lambda item: "relevant" if item["shot_id"].endswith(("_1", "_2")) else "not_relevant")
    assert {item["topic"] for item in seen} == {"1"}
    assert len(seen) == next(t["sampled"] for t in pool["topics"] if t["topic"] == "1")
    # blind: the payload has exactly these fields and says nothing of runs, ranks, teams or counts
    assert set(seen[0]) == TASK_VIEW_KEYS
    assert seen[0]["media_url"].startswith("https://m.example/v")
    dump = json.dumps(seen)
    for secret in run_names + ["secret-tag", "team", "rank", "n_runs", "stratum"]:
        assert secret not in dump
    # ann cannot reach bob's items, nor other verdicts
    bob_item = client.post("/api/judging/next", headers=bob).json()
    assert (
        client.post(f"/api/judging/items/{bob_item['task_id']}", json={"verdict": "relevant"}, headers=ann).status_code
        == 409
    )
    assert client.get(f"/api/judging/items/{bob_item['task_id']}", headers=ann).status_code == 404
    assert client.get(f"/api/campaigns/{campaign.id}/runs", headers=ann).status_code == 403
    assert client.get(f"/api/pools/{pool['id']}/stats", headers=ann).status_code == 403
    # going back and changing a verdict keeps the history
    last = client.get("/api/judging/history", headers=ann).json()[0]
    before = client.get(f"/api/judging/items/{last}", headers=ann).json()["verdict"]
    after = "relevant" if before != "relevant" else "not_relevant"
    # a first verdict again (another tab) is refused, naming the stored one; going back (change) changes it
    again = client.post(f"/api/judging/items/{last}", json={"verdict": after}, headers=ann)
    assert again.status_code == 409 and f"your verdict is {before}" in again.json()["detail"]
    changed = client.post(f"/api/judging/items/{last}", json={"verdict": after, "change": True}, headers=ann)
    assert changed.json()["verdict"] == after
    with sessions() as session:
        changes = session.scalars(
            select(JudgementChange)
            .join(Judgement)
            .join(JudgingTask, JudgingTask.pool_item_id == Judgement.pool_item_id)
            .where(JudgingTask.id == last)
            .order_by(JudgementChange.id)
        ).all()
        assert [(c.old_verdict.value if c.old_verdict else None, c.new_verdict.value) for c in changes] == [
            (None, before),
            (before, after),
        ]
    progress = client.get(f"/api/pools/{pool['id']}/progress", headers=organiser).json()
    topic1 = next(t for t in progress["topics"] if t["topic"] == "1" and t["round"] == 1)
    assert topic1["done"] == topic1["total"] == len(seen)


def test_expired_lease_returns_item_to_queue(make_campaign, client, organiser, monkeypatch):
    campaign, _ = setup_campaign(make_campaign, client, organiser)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 2, "seed": 3}, headers=organiser
    ).json()
    ann_id, ann = make_assessor(client, organiser, campaign, "ann")
    bob_id, bob = make_assessor(client, organiser, campaign, "bob")
    client.post(
        f"/api/pools/{pool['id']}/assignments",
        headers=organiser,
        json={
            "shared": True,
            "assignments": [{"topic": "1", "assessor_id": ann_id}, {"topic": "1", "assessor_id": bob_id}],
        },
    )
    first = client.post("/api/judging/next", headers=ann).json()
    assert client.post("/api/judging/next", headers=ann).json()["task_id"] == first["task_id"]  # own lease first
    second = client.post("/api/judging/next", headers=bob).json()
    assert second["task_id"] != first["task_id"]  # leased items are not handed out twice
    assert (
        client.post(f"/api/judging/items/{second['task_id']}", json={"verdict": "relevant"}, headers=bob).status_code
        == 200
    )
    monkeypatch.setattr(client.app.state.settings, "judging_lease_seconds", 0.0)
    assert client.post("/api/judging/next", headers=ann).json()["task_id"] == first["task_id"]  # lease renewed, 0 s
    # ann's lease has expired: the item (first in the judging order) goes to bob, and while bob holds it ann can no
    # longer submit it (a verdict after a lapsed lease is kept only while nobody else holds the item)
    monkeypatch.setattr(client.app.state.settings, "judging_lease_seconds", 300.0)
    assert client.post("/api/judging/next", headers=bob).json()["task_id"] == first["task_id"]
    assert (
        client.post(f"/api/judging/items/{first['task_id']}", json={"verdict": "relevant"}, headers=ann).status_code
        == 409
    )


def test_twenty_concurrent_assessors_judge_every_item_once(make_campaign, client, organiser, sessions, live_server):
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=4, depth=60)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 40, "seed": 5}, headers=organiser
    ).json()
    assessors = [make_assessor(client, organiser, campaign, f"a{i}") for i in range(20)]
    client.post(
        f"/api/pools/{pool['id']}/assignments",
        headers=organiser,
        json={"shared": True, "assignments": [{"topic": "1", "assessor_id": a} for a, _ in assessors]},
    )
    expected = next(t["sampled"] for t in pool["topics"] if t["topic"] == "1")
    judged: list[tuple[str, int]] = []
    lock = threading.Lock()

    def work(headers):
        with httpx.Client(base_url=live_server, headers=headers, timeout=30) as http:
            while True:
                response = http.post("/api/judging/next")
                if response.status_code == 204:
                    return
                assert response.status_code == 200, response.text
                task = response.json()["task_id"]
                done = http.post(f"/api/judging/items/{task}", json={"verdict": "relevant"})
                assert done.status_code == 200, done.text
                with lock:
                    judged.append((headers["Authorization"], task))

    with ThreadPoolExecutor(max_workers=20) as executor:
        list(executor.map(work, [h for _, h in assessors]))
    tasks = [t for _, t in judged]
    assert len(tasks) == len(set(tasks)) == expected
    assert len({who for who, _ in judged}) > 1
    with sessions() as session:
        count = session.scalar(
            select(func.count()).select_from(Judgement).join(PoolItem).where(PoolItem.pool_id == pool["id"])
        )
    assert count == expected


def test_quality_control_adjudication_and_kappa(make_campaign, client, organiser, sessions):
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=4, depth=60, seed=1)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 30, "seed": 2}, headers=organiser
    ).json()
    ann_id, ann = make_assessor(client, organiser, campaign, "ann")
    bob_id, bob = make_assessor(client, organiser, campaign, "bob")
    client.post(
        f"/api/pools/{pool['id']}/assignments",
        headers=organiser,
        json={"assignments": [{"topic": t, "assessor_id": ann_id} for t in campaign.topics]},
    )
    client.post(
        f"/api/pools/{pool['id']}/assignments",
        headers=organiser,
        json={"assignments": [{"topic": t, "assessor_id": bob_id} for t in campaign.topics], "shared": True},
    )
    # ann says relevant only for shots whose index in the video is 0 -> neighbours (index 1..5) disagree; her ~200
    # verdicts go through the judging service in one transaction (the judging API is tested above)
    first = judge_in_process(
        sessions, ann, lambda item: "relevant" if item["shot_id"].endswith("_0") else "not_relevant"
    )
    qc = client.post(f"/api/pools/{pool['id']}/quality-control?min_runs=3", headers=organiser).json()
    assert qc["queued"] > 0 and qc["neighbour_disagreements"] > 0
    # bob re-judges blind; ann never gets her own items back
    assert client.post("/api/judging/next", headers=ann).status_code == 204
    second = judge_all(client, bob, lambda item: "relevant")
    assert len(second) == qc["queued"]
    assert {i["shot_id"] for i in second} <= {i["shot_id"] for i in first}
    queue = client.get(f"/api/pools/{pool['id']}/adjudication", headers=organiser).json()
    disagreements = [q for q in queue if q["verdicts"].get("1") != q["verdicts"].get("2")]
    assert len(disagreements) == sum(1 for i in second if not i["shot_id"].endswith("_0"))
    target = disagreements[0]
    assert (
        client.post(
            f"/api/pools/{pool['id']}/adjudication",
            headers=organiser,
            json={"pool_item_id": target["pool_item_id"], "verdict": "relevant"},
        ).status_code
        == 204
    )
    queue_after = client.get(f"/api/pools/{pool['id']}/adjudication", headers=organiser).json()
    assert len(queue_after) == len(queue) - 1
    kappa = client.get(f"/api/pools/{pool['id']}/agreement", headers=organiser).json()
    pair = kappa["assessor_pairs"][0]
    assert (pair["first"], pair["second"], pair["items"]) == ("ann", "bob", len(second))
    assert pair["agreement"] == pytest.approx(1 - len(disagreements) / len(second))


def test_qrels_cut_export_import_round_trip(make_campaign, client, organiser):
    campaign, _ = setup_campaign(make_campaign, client, organiser)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools",
        json={"kind": "stratified", "strata": "1-5:1.0, 6-60:0.2", "seed": 11},
        headers=organiser,
    ).json()
    ann_id, ann = make_assessor(client, organiser, campaign, "ann")
    client.post(
        f"/api/pools/{pool['id']}/assignments",
        headers=organiser,
        json={"assignments": [{"topic": "1", "assessor_id": ann_id}]},
    )
    judge_all(client, ann, lambda item: "relevant" if item["shot_id"] < "s5" else "not_relevant")
    cut = client.post(f"/api/pools/{pool['id']}/qrels", json={"label": "v1"}, headers=organiser)
    assert cut.status_code == 201 and cut.json()["kind"] == "sample_eval"
    assert client.post(f"/api/pools/{pool['id']}/qrels", json={"label": "v1"}, headers=organiser).status_code == 409
    exported = client.get(f"/api/qrels/{cut.json()['id']}/download?format=sample_eval", headers=organiser).content
    rows = [line.split() for line in exported.decode().splitlines()]
    assert all(len(r) == 5 for r in rows)
    topic1 = next(t for t in pool["topics"] if t["topic"] == "1")
    assert sum(1 for r in rows if r[0] == "1" and r[4] in ("0", "1")) == topic1["sampled"]
    assert {r[4] for r in rows if r[0] != "1"} == {"-1"}
    assert sum(1 for r in rows) == sum(t["pooled"] for t in pool["topics"])
    imported = client.post(
        f"/api/campaigns/{campaign.id}/qrels",
        data={"label": "copy"},
        files={"file": ("q.txt", exported)},
        headers=organiser,
    )
    assert imported.status_code == 201, imported.text
    again = client.get(f"/api/qrels/{imported.json()['id']}/download?format=sample_eval", headers=organiser).content
    assert again == exported
    trec = client.get(f"/api/qrels/{cut.json()['id']}/download?format=trec", headers=organiser).text
    assert all(len(line.split()) == 4 and line.split()[3] != "-1" for line in trec.splitlines())


def test_import_real_avs_qrels_round_trip(client, organiser, shared_data):
    path = shared_data / "trecvid-avs-2021" / "avs.qrels.main.tv21"
    cid = client.post("/api/campaigns", json={"name": "avs21-import", "task_kind": "shots"}, headers=organiser).json()[
        "id"
    ]
    client.post(
        f"/api/campaigns/{cid}/topics",
        headers=organiser,
        json=[{"number": str(1661 + i), "title": f"t{i}"} for i in range(20)],
    )
    data = path.read_bytes()
    imported = client.post(
        f"/api/campaigns/{cid}/qrels", data={"label": "tv21"}, files={"file": ("q", data)}, headers=organiser
    )
    assert imported.status_code == 201, imported.text
    assert imported.json()["n_entries"] == 124_431 and imported.json()["kind"] == "sample_eval"
    exported = client.get(f"/api/qrels/{imported.json()['id']}/download?format=sample_eval", headers=organiser).text
    assert sorted(exported.splitlines()) == sorted(" ".join(line.split()) for line in data.decode().splitlines())


def test_import_rejects_unknown_topics(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=1)
    response = client.post(
        f"/api/campaigns/{campaign.id}/qrels",
        data={"label": "bad"},
        headers=organiser,
        files={"file": ("q", b"1 0 a 1\n7 0 b 0\n7 0 c 1\n")},
    )
    assert response.status_code == 422
    assert response.json()["errors"] == [{"line": 2, "message": "unknown topic '7'"}]
