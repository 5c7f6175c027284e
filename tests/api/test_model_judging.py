"""Model assessors over REST: registration with provenance, the batch judging API (pull, push, leases, idempotence,
blindness, rate limit, concurrent clients) and graded verdicts of people on the judging page."""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
from fastapi.testclient import TestClient
from sqlalchemy import func, select, text

from app.storage.models import Judgement, JudgingTask, ModelLease, ModelVerdict, PoolItem
from tests.api.helpers import Headers, auth, make_assessor, setup_campaign

PROVENANCE = {"model": "sim-judge", "version": "2026-01", "config_hash": "c0ffee", "parameters": {"temperature": 0}}
ITEM_KEYS = {
    "item_id",
    "topic",
    "title",
    "description",
    "shot_id",
    "video_id",
    "start",
    "end",
    "media_url",
    "keyframe_urls",
}
NOT_MODEL = "the batch API is for model assessors"


def add_model(client: TestClient, organiser: Headers, campaign_id: int, name: str) -> tuple[int, Headers]:
    """Register a model assessor; its id and headers."""
    body = {"name": name, "kind": "model", "provenance": PROVENANCE}
    response = client.post(f"/api/campaigns/{campaign_id}/assessors", json=body, headers=organiser)
    assert response.status_code == 201, response.text
    return response.json()["id"], auth(response.json()["token"])


def batch_pool(make_campaign, client, organiser, *, n_models: int = 1, topics=("1",), max_grade: int = 1, depth=5):  # type: ignore[no-untyped-def]
    """setup_campaign's runs, a depth pool, model assessors sharing `topics`; (campaign, run names, pool, models,
    sampled items per topic)."""
    campaign, run_names = setup_campaign(make_campaign, client, organiser, n_runs=4, depth=60, seed=3)
    if max_grade != 1:
        patched = client.patch(f"/api/campaigns/{campaign.id}", json={"max_grade": max_grade}, headers=organiser)
        assert patched.status_code == 200 and patched.json()["max_grade"] == max_grade, patched.text
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": depth, "seed": 4}, headers=organiser
    ).json()
    models = [add_model(client, organiser, campaign.id, f"model{k}") for k in range(n_models)]
    body = {"shared": True, "assignments": [{"topic": t, "assessor_id": a} for a, _ in models for t in topics]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    sizes = {t["topic"]: t["sampled"] for t in pool["topics"]}
    return campaign, run_names, pool, models, sizes


def pull(client: TestClient, headers: Headers, n: int) -> list[dict]:
    """POST /api/judging/batch/pull; the items, checked to be a 200."""
    response = client.post("/api/judging/batch/pull", json={"n": n}, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()["items"]


def push(client: TestClient, headers: Headers, verdicts: list[dict], **body: object) -> httpx.Response:
    """POST /api/judging/batch/verdicts."""
    return client.post("/api/judging/batch/verdicts", json={"verdicts": verdicts, **body}, headers=headers)


def model_verdicts(sessions, assessor_id: int) -> dict[int, int]:  # type: ignore[no-untyped-def]
    """The assessor's stored verdicts: item -> grade."""
    with sessions() as session:
        rows = session.execute(
            select(ModelVerdict.pool_item_id, ModelVerdict.grade).where(ModelVerdict.assessor_id == assessor_id)
        )
        return {item: grade for item, grade in rows}


def test_a_model_assessor_is_registered_with_its_provenance_listed_and_audited(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=1)
    body = {"name": "judge", "kind": "model", "provenance": PROVENANCE}
    made = client.post(f"/api/campaigns/{campaign.id}/assessors", json=body, headers=organiser)
    assert made.status_code == 201, made.text
    assert made.json()["kind"] == "model" and made.json()["provenance"] == PROVENANCE
    assert made.json()["judge_url"] is None and made.json()["token"].startswith("tp_")
    person = client.post(f"/api/campaigns/{campaign.id}/assessors", json={"name": "ann"}, headers=organiser).json()
    assert person["kind"] == "human" and person["provenance"] is None and "#link=" in person["judge_url"]
    listed = client.get(f"/api/campaigns/{campaign.id}/assessors", headers=organiser).json()
    assert [(a["name"], a["kind"], a["provenance"]) for a in listed] == [
        ("judge", "model", PROVENANCE),
        ("ann", "human", None),
    ]
    events = client.get(f"/api/campaigns/{campaign.id}/audit", params={"limit": 500}, headers=organiser).json()
    inserted = [e["after"] for e in events["events"] if e["table_name"] == "assessors" and e["action"] == "insert"]
    assert {(a["name"], a["kind"], json.dumps(a["provenance"], sort_keys=True)) for a in inserted} == {
        ("judge", "model", json.dumps(PROVENANCE, sort_keys=True)),
        ("ann", "human", "null"),
    }


def test_provenance_is_required_for_models_refused_for_people_and_bounded(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=1)
    path = f"/api/campaigns/{campaign.id}/assessors"
    cases = [
        ({"name": "m1", "kind": "model"}, "provenance"),
        ({"name": "h1", "provenance": PROVENANCE}, "provenance"),
        ({"name": "m2", "kind": "model", "provenance": {"version": "1"}}, "model"),
        ({"name": "m3", "kind": "model", "provenance": {"model": "x", "prompt": "p"}}, "prompt"),
        ({"name": "m4", "kind": "model", "provenance": {"model": "x", "parameters": [1]}}, "parameters"),
        (
            {"name": "m5", "kind": "model", "provenance": {"model": "x", "parameters": {"p": "y" * 20_000}}},
            "provenance",
        ),
        ({"name": "m6", "kind": "model", "provenance": {"model": "x", "config_hash": "h" * 65}}, "config_hash"),
        ({"name": "m7", "kind": "robot"}, "kind"),
    ]
    for body, field in cases:
        response = client.post(path, json=body, headers=organiser)
        assert response.status_code == 422, (body, response.text)
        assert field in json.dumps(response.json()["errors"]), (body, response.json())
    assert client.get(path, headers=organiser).json() == []  # nothing was registered


def test_who_am_i_and_the_pull_payload_is_exactly_the_contract_and_blind(make_campaign, client, organiser):
    campaign, run_names, pool, [(model_id, model)], sizes = batch_pool(make_campaign, client, organiser)
    me = client.get("/api/judging/batch", headers=model)
    assert me.status_code == 200, me.text
    assert me.json() == {
        "assessor": "model0",
        "kind": "model",
        "provenance": PROVENANCE,
        "max_grade": 1,
        "max_batch": 100,
        "lease_seconds": 600.0,
    }
    response = client.post("/api/judging/batch/pull", json={"n": 3}, headers=model)
    assert response.status_code == 200, response.text
    assert set(response.json()) == {"items", "max_grade"} and response.json()["max_grade"] == 1
    items = response.json()["items"]
    assert len(items) == 3 and all(set(item) == ITEM_KEYS for item in items)
    for item in items:
        assert item["topic"] == "1" and item["title"] == "topic 1"
        assert item["media_url"] == f"https://m.example/{item['video_id']}.mp4"
        # setup_campaign's shots s{v}_{s} span 2s..2s+2: the instants 1/6, 3/6 and 5/6 of the way through
        start = float(item["shot_id"].split("_")[1]) * 2
        assert (item["start"], item["end"]) == (start, start + 2)
        assert [u.split("#t=")[0] for u in item["keyframe_urls"]] == [item["media_url"]] * 3
        instants = [float(u.split("#t=")[1]) for u in item["keyframe_urls"]]
        assert np.allclose(instants, [start + 1 / 3, start + 1, start + 5 / 3], atol=1e-3)
    for secret in [*run_names, "secret-tag", "secretrun", "team", "rank", "n_runs", "stratum", "round", "verdict"]:
        assert secret not in response.text, secret
    assert len({item["item_id"] for item in items}) == 3 and sizes["1"] > 3


def test_pull_push_until_nothing_is_left_and_retries_are_unchanged(make_campaign, client, organiser, sessions):
    campaign, _, pool, [(model_id, model)], sizes = batch_pool(make_campaign, client, organiser, topics=("1", "2"))
    first = pull(client, model, 4)
    second = pull(client, model, 4)
    assert not {i["item_id"] for i in first} & {i["item_id"] for i in second}  # leased items are not handed again
    assert [i["topic"] for i in first + second] == sorted(i["topic"] for i in first + second)  # topic by topic
    verdicts = [{"item_id": i["item_id"], "grade": i["item_id"] % 2, "probability": 0.25} for i in first]
    answer = push(client, model, verdicts, config_hash="c0ffee")
    assert answer.status_code == 200 and answer.json() == {"accepted": 4, "unchanged": 0}, answer.text
    again = push(client, model, verdicts + [{"item_id": second[0]["item_id"], "grade": 1}])
    assert again.json() == {"accepted": 1, "unchanged": 4}, again.text
    seen = [*first, *second]
    while items := pull(client, model, 7):
        seen += items
        answer = push(client, model, [{"item_id": i["item_id"], "grade": 1} for i in items])
        assert answer.json() == {"accepted": len(items), "unchanged": 0}
    left = second[1:]  # leased before and never answered: not handed out again while the lease holds
    assert len(seen) == sizes["1"] + sizes["2"] and len({i["item_id"] for i in seen}) == len(seen)
    stored = model_verdicts(sessions, model_id)
    assert len(stored) == len(seen) - len(left)
    with sessions() as session:
        leases = session.scalars(select(ModelLease.pool_item_id).where(ModelLease.assessor_id == model_id)).all()
        probability, config = session.execute(
            select(ModelVerdict.probability, ModelVerdict.config_hash).where(
                ModelVerdict.pool_item_id == first[0]["item_id"], ModelVerdict.assessor_id == model_id
            )
        ).one()
    assert sorted(leases) == sorted(i["item_id"] for i in left)  # answered items' leases are released
    assert (probability, config) == (0.25, "c0ffee")


def test_an_expired_lease_is_handed_out_again_first(make_campaign, client, organiser, sessions):
    _, _, _, [(model_id, model)], _ = batch_pool(make_campaign, client, organiser)
    first = pull(client, model, 2)
    with sessions() as session:
        session.execute(
            text("UPDATE model_leases SET expires_at = now() - interval '1 second' WHERE pool_item_id = :item"),
            {"item": first[1]["item_id"]},
        )
        session.commit()
    again = pull(client, model, 2)
    assert again[0]["item_id"] == first[1]["item_id"]
    assert again[1]["item_id"] not in {i["item_id"] for i in first}


def test_conflicts_unknown_items_and_bad_batches_write_nothing(make_campaign, client, organiser, sessions):
    _, _, pool, [(model_id, model)], _ = batch_pool(make_campaign, client, organiser)
    items = pull(client, model, 3)
    a, b, c = (i["item_id"] for i in items)
    assert push(client, model, [{"item_id": a, "grade": 1}]).status_code == 200
    with sessions() as session:
        topic_of_a = session.scalar(select(PoolItem.topic_id).where(PoolItem.id == a))
        other_topic = session.scalar(
            select(PoolItem.id).where(PoolItem.pool_id == pool["id"], PoolItem.topic_id != topic_of_a).limit(1)
        )
    assert other_topic is not None
    changed = push(client, model, [{"item_id": b, "grade": 1}, {"item_id": a, "grade": 0}])
    assert changed.status_code == 409 and f"item {a} (stored grade 1, this batch 0)" in changed.text
    unknown = push(client, model, [{"item_id": b, "grade": 1}, {"item_id": other_topic, "grade": 1}])
    assert unknown.status_code == 404 and str(other_topic) in unknown.json()["detail"]
    missing = push(client, model, [{"item_id": c, "grade": 0}, {"item_id": 10**15, "grade": 0}])
    assert missing.status_code == 404 and str(10**15) in missing.json()["detail"]
    twice = push(client, model, [{"item_id": b, "grade": 1}, {"item_id": b, "grade": 1}])
    assert twice.status_code == 422 and twice.json()["errors"][0]["field"] == "verdicts[1].item_id"
    off_scale = push(client, model, [{"item_id": b, "grade": 2}])
    assert off_scale.status_code == 422 and off_scale.json()["errors"][0]["field"] == "verdicts[0].grade"
    assert push(client, model, [{"item_id": b, "grade": 1, "probability": 1.5}]).status_code == 422
    too_many = push(client, model, [{"item_id": k + 1, "grade": 0} for k in range(101)])
    assert too_many.status_code == 422 and too_many.json()["errors"][0]["field"] == "verdicts"
    assert client.post("/api/judging/batch/pull", json={"n": 101}, headers=model).status_code == 422
    assert client.post("/api/judging/batch/pull", json={"n": 0}, headers=model).status_code == 422
    assert model_verdicts(sessions, model_id) == {a: 1}  # none of the refused batches wrote anything
    with sessions() as session:
        held = session.scalar(select(func.count()).select_from(ModelLease).where(ModelLease.assessor_id == model_id))
    assert held == 2  # b and c stay leased


def test_people_are_refused_by_the_batch_api_and_models_by_the_judging_page(make_campaign, client, organiser):
    campaign, _, pool, [(_, model)], _ = batch_pool(make_campaign, client, organiser)
    person_id, person = make_assessor(client, organiser, campaign, "ann")
    body = {"shared": True, "assignments": [{"topic": "1", "assessor_id": person_id}]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    _, team = campaign.team()
    for headers in (person, team, organiser):
        for method, path, payload in (
            ("GET", "/api/judging/batch", None),
            ("POST", "/api/judging/batch/pull", {"n": 1}),
            ("POST", "/api/judging/batch/verdicts", {"verdicts": []}),
        ):
            response = client.request(method, path, json=payload, headers=headers)
            assert response.status_code == 403, (path, response.text)
            if headers is person:
                assert response.json()["detail"] == NOT_MODEL
    task = client.post("/api/judging/next", headers=person).json()["task_id"]
    for method, path, payload in (
        ("POST", "/api/judging/next", None),
        ("POST", "/api/judging/step", {}),
        ("POST", "/api/judging/step", {"task_id": task, "verdict": "relevant"}),
        ("POST", "/api/judging/step", {"task_id": task, "later": True}),
        ("POST", f"/api/judging/items/{task}", {"verdict": "relevant"}),
        ("POST", "/api/judging/items/999999999", {"verdict": "relevant"}),
        ("GET", f"/api/judging/items/{task}", None),
    ):
        response = client.request(method, path, json=payload, headers=model)
        assert response.status_code == 403, (path, response.text)
        assert "batch API" in response.json()["detail"]
    assert client.post(f"/api/judging/items/{task}", json={"verdict": "relevant"}, headers=person).status_code == 200


def test_moment_campaigns_are_not_served_yet(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=1, task_kind="moments")
    _, model = add_model(client, organiser, campaign.id, "m")
    assert client.get("/api/judging/batch", headers=model).status_code == 200
    response = client.post("/api/judging/batch/pull", json={"n": 1}, headers=model)
    assert response.status_code == 409 and "moment" in response.json()["detail"]
    for method, path in (("POST", "/api/moment-judging/next"), ("GET", "/api/moment-judging/progress")):
        response = client.request(method, path, headers=model)
        assert response.status_code == 403, (path, response.text)
        assert "batch API" in response.json()["detail"]


def test_a_model_gets_no_judging_link(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=1)
    model_id, _ = add_model(client, organiser, campaign.id, "m")
    response = client.post(f"/api/assessors/{model_id}/judge-link", headers=organiser)
    assert response.status_code == 409 and "batch API" in response.json()["detail"]


def test_the_rate_limit_answers_429_with_retry_after(make_campaign, client, organiser, settings, sessions):
    from app.server import create_app

    _, _, _, [(_, model)], _ = batch_pool(make_campaign, client, organiser)
    low = settings.model_copy(update={"model_judging_per_minute": 5})
    with TestClient(create_app(low, sessions)) as limited:
        items = pull(limited, model, 3)
        refused = limited.post("/api/judging/batch/pull", json={"n": 3}, headers=model)
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1, refused.text
        answer = push(limited, model, [{"item_id": i["item_id"], "grade": 0} for i in items[:2]])
        assert answer.status_code == 200, answer.text  # 3 + 2 units: the refused pull counted nothing
        assert push(limited, model, [{"item_id": items[2]["item_id"], "grade": 0}]).status_code == 429
    assert pull(client, model, 1)  # the limit is per server process (the other app still serves)


def test_concurrent_clients_of_two_models_judge_every_item_once_each(
    make_campaign, client, organiser, sessions, live_server
):
    _, _, pool, models, sizes = batch_pool(make_campaign, client, organiser, n_models=2, topics=("1", "2"), depth=8)
    total = sizes["1"] + sizes["2"]
    handed: dict[int, list[int]] = {model_id: [] for model_id, _ in models}
    accepted: dict[int, int] = {model_id: 0 for model_id, _ in models}
    repeats: list[dict] = []
    lock = threading.Lock()

    def work(args: tuple[int, Headers, int]) -> None:
        model_id, headers, seed = args
        rng = np.random.default_rng(seed)
        with httpx.Client(base_url=live_server, headers=headers, timeout=60) as http:
            while True:
                response = http.post("/api/judging/batch/pull", json={"n": int(rng.integers(1, 6))})
                assert response.status_code == 200, response.text
                items = response.json()["items"]
                if not items:
                    return
                verdicts = [{"item_id": i["item_id"], "grade": (i["item_id"] + model_id) % 2} for i in items]
                answer = http.post("/api/judging/batch/verdicts", json={"verdicts": verdicts})
                assert answer.status_code == 200, answer.text
                assert answer.json() == {"accepted": len(items), "unchanged": 0}
                if rng.random() < 0.3:  # a retry after a lost answer: nothing more is written
                    again = http.post("/api/judging/batch/verdicts", json={"verdicts": verdicts})
                    assert again.status_code == 200 and again.json() == {"accepted": 0, "unchanged": len(items)}
                    with lock:
                        repeats.append(again.json())
                with lock:
                    handed[model_id] += [i["item_id"] for i in items]
                    accepted[model_id] += answer.json()["accepted"]

    jobs = [(model_id, headers, 100 * model_id + k) for model_id, headers in models for k in range(4)]
    with ThreadPoolExecutor(max_workers=len(jobs)) as executor:
        list(executor.map(work, jobs))
    assert repeats  # some pushes were repeated
    for model_id, _ in models:
        assert len(handed[model_id]) == len(set(handed[model_id])) == total  # never one item to two clients
        assert accepted[model_id] == total
        stored = model_verdicts(sessions, model_id)
        assert len(stored) == total and stored == {i: (i + model_id) % 2 for i in handed[model_id]}
    with sessions() as session:
        rows = session.scalar(
            select(func.count()).select_from(ModelVerdict).join(PoolItem).where(PoolItem.pool_id == pool["id"])
        )
        leases = session.scalar(
            select(func.count()).select_from(ModelLease).join(PoolItem).where(PoolItem.pool_id == pool["id"])
        )
    assert rows == 2 * total and leases == 0


def test_graded_verdicts_of_people_on_the_campaigns_scale(make_campaign, client, organiser, sessions):
    campaign, _, pool, [(_, model)], _ = batch_pool(make_campaign, client, organiser, max_grade=3)
    person_id, person = make_assessor(client, organiser, campaign, "ann")
    body = {"shared": True, "assignments": [{"topic": "1", "assessor_id": person_id}]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    task = client.post("/api/judging/next", headers=person).json()["task_id"]
    for verdict, grade, field in (
        ("relevant", 4, "grade"),  # off the scale 0..3
        ("relevant", 0, "grade"),
        ("not_relevant", 2, "grade"),
        ("unsure", 1, "grade"),
        ("relevant", 11, "grade"),
    ):
        refused = client.post(f"/api/judging/items/{task}", json={"verdict": verdict, "grade": grade}, headers=person)
        assert refused.status_code == 422 and field in refused.text, (verdict, grade, refused.text)
    judged = client.post(f"/api/judging/items/{task}", json={"verdict": "relevant", "grade": 3}, headers=person)
    assert judged.status_code == 200, judged.text
    stepped = client.post(
        "/api/judging/step", json={"task_id": task, "verdict": "relevant", "grade": 2, "change": True}, headers=person
    )
    assert stepped.status_code == 200, stepped.text
    nxt = stepped.json()["next"][0]["task_id"]
    plain = client.post(f"/api/judging/items/{nxt}", json={"verdict": "relevant"}, headers=person)
    assert plain.status_code == 200
    with sessions() as session:
        same_round = (Judgement.pool_item_id == JudgingTask.pool_item_id) & (Judgement.round == JudgingTask.round)
        query = select(JudgingTask.id, Judgement.grade).join(Judgement, same_round)
        grades = {task_id: grade for task_id, grade in session.execute(query.where(JudgingTask.id.in_([task, nxt])))}
    assert grades == {task: 2, nxt: 1}  # the changed grade, and a relevant verdict without one
    items = pull(client, model, 1)
    assert push(client, model, [{"item_id": items[0]["item_id"], "grade": 3}]).json()["accepted"] == 1
    lower = client.patch(f"/api/campaigns/{campaign.id}", json={"max_grade": 2}, headers=organiser)
    assert lower.status_code == 409 and "3" in lower.json()["detail"]
    assert client.patch(f"/api/campaigns/{campaign.id}", json={"max_grade": 11}, headers=organiser).status_code == 422
    assert (
        client.patch(f"/api/campaigns/{campaign.id}", json={"max_grade": 5}, headers=organiser).json()["max_grade"] == 5
    )


def test_a_binary_campaign_refuses_grades_above_one(make_campaign, client, organiser):
    campaign, _, pool, _, _ = batch_pool(make_campaign, client, organiser)
    person_id, person = make_assessor(client, organiser, campaign, "bob")
    body = {"shared": True, "assignments": [{"topic": "1", "assessor_id": person_id}]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    task = client.post("/api/judging/next", headers=person).json()["task_id"]
    refused = client.post(f"/api/judging/items/{task}", json={"verdict": "relevant", "grade": 2}, headers=person)
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "grade"
    judged = client.post(f"/api/judging/items/{task}", json={"verdict": "relevant", "grade": 1}, headers=person)
    assert judged.status_code == 200 and judged.json()["verdict"] == "relevant"


def test_a_model_assisted_pool_draws_its_human_sample_when_the_model_finishes_a_topic(
    make_campaign, client, organiser, sessions
):
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=4, depth=60, seed=3)
    model_id, model = add_model(client, organiser, campaign.id, "assisted")
    body = {"kind": "depth", "depth": 3, "seed": 4, "verification": {"human_share": 0.5, "model_assessor_id": model_id}}
    made = client.post(f"/api/campaigns/{campaign.id}/pools", json=body, headers=organiser)
    assert made.status_code == 201, made.text
    pool = made.json()
    assignments = {"assignments": [{"topic": t, "assessor_id": model_id} for t in ("1", "2")]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=assignments, headers=organiser).status_code == 201

    def drawn(topic: str) -> list[bool | None]:
        with sessions() as session:
            return list(
                session.scalars(
                    text(
                        "SELECT i.verification_sampled FROM pool_items i JOIN topics t ON t.id = i.topic_id"
                        " WHERE i.pool_id = :pool AND t.number = :topic AND i.sampled"
                    ),
                    {"pool": pool["id"], "topic": topic},
                )
            )

    first = [i for i in pull(client, model, 100) if i["topic"] == "1"]
    assert first and all(flag is None for flag in drawn("1"))
    assert (
        push(client, model, [{"item_id": i["item_id"], "grade": 1, "probability": 0.8} for i in first]).status_code
        == 200
    )
    assert all(flag is not None for flag in drawn("1")) and any(drawn("1"))  # topic 1 judged: its sample drawn
    assert all(flag is None for flag in drawn("2"))  # topic 2 not judged yet
