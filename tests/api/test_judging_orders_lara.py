"""The `lara` judging order live: the service gives the topic's policy the model's probabilities (the verified model
assessor's, else every model assessor's averaged), read from model_verdicts, and people are then served the most
uncertain item as the core's policy plays it."""

from __future__ import annotations

import zlib

import pytest
from sqlalchemy import select

from app.evaluation.pools.orders import judge_all, make_order
from app.services import judging_orders
from app.storage.database import session_scope
from app.storage.models import Assessor, ModelVerdict, Pool, PoolItem, Topic
from tests.api.helpers import make_assessor, setup_campaign

SEED = 11


def _relevant(shot: str) -> bool:
    """A fixed oracle: about a third of the shots are relevant."""
    return zlib.crc32(shot.encode()) % 3 == 0


def _probability(shot: str, salt: str) -> float:
    """A model's probability of relevance, fixed per shot and model."""
    return (zlib.crc32(f"{salt}{shot}".encode()) % 1000) / 1000


@pytest.fixture
def lara_pool(make_campaign, client, organiser, sessions):  # type: ignore[no-untyped-def]
    """A depth-6 `lara` pool of 4 runs over 3 topics, two model assessors' verdicts on topic 1 (inserted directly),
    one person assigned topic 1; (pool id, topic 1's id, {docno: (model A's, model B's probability)}, headers)."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, depth=20, seed=5)
    body = {"kind": "depth", "depth": 6, "seed": SEED, "order": "lara"}
    response = client.post(f"/api/campaigns/{campaign.id}/pools", json=body, headers=organiser)
    assert response.status_code == 201, response.text
    pool_id = response.json()["id"]
    assessor_id, headers = make_assessor(client, organiser, campaign, "lara-person")
    assignments = {"assignments": [{"topic": "1", "assessor_id": assessor_id}]}
    assert client.post(f"/api/pools/{pool_id}/assignments", json=assignments, headers=organiser).status_code == 201
    with session_scope(sessions) as session:
        topic_id = session.scalar(select(Topic.id).where(Topic.campaign_id == campaign.id, Topic.number == "1"))
        models = [Assessor(campaign_id=campaign.id, name=f"model-{m}", kind="model") for m in "AB"]
        session.add_all(models)
        session.flush()
        items = session.execute(
            select(PoolItem.id, PoolItem.docno).where(PoolItem.pool_id == pool_id, PoolItem.topic_id == topic_id)
        ).all()
        probabilities = {}
        for k, (item_id, docno) in enumerate(items):
            pair = (_probability(docno, "A"), _probability(docno, "B"))
            probabilities[docno] = pair
            for model, probability in zip(models, pair, strict=True):
                if model.name == "model-B" and k % 4 == 0:
                    continue  # B did not judge every item: the average is over the verdicts there are
                session.add(
                    ModelVerdict(pool_item_id=item_id, assessor_id=model.id, grade=int(probability > 0.5),
                                 probability=probability)
                )  # fmt: skip
        # a verdict with no probability counts for nothing
        session.add(ModelVerdict(pool_item_id=items[0][0], assessor_id=models[1].id, grade=1, probability=None))
        ids = [m.id for m in models]
    return pool_id, topic_id, probabilities, headers, ids


def test_model_probabilities_are_the_verified_models_or_the_average(lara_pool, sessions):
    pool_id, topic_id, probabilities, _, (model_a, _) = lara_pool
    first = next(iter(probabilities))
    with session_scope(sessions) as session:
        averaged = judging_orders.model_probabilities(session, pool_id, topic_id)
        assert averaged[first] == pytest.approx(probabilities[first][0])  # B's verdict on it has no probability
        assert averaged == pytest.approx(
            {d: a if k % 4 == 0 else (a + b) / 2 for k, (d, (a, b)) in enumerate(probabilities.items())}
        )
        pool = session.get(Pool, pool_id)
        pool.params = {**pool.params, "verification": {"model_assessor_id": model_a}}
        session.flush()
        assert judging_orders.model_probabilities(session, pool_id, topic_id) == pytest.approx(
            {d: a for d, (a, _) in probabilities.items()}
        )
        session.rollback()


def test_people_are_served_the_calibrated_most_uncertain_item(lara_pool, client, sessions):
    pool_id, topic_id, probabilities, headers, _ = lara_pool
    averaged = {d: a if k % 4 == 0 else (a + b) / 2 for k, (d, (a, b)) in enumerate(probabilities.items())}
    with session_scope(sessions) as session:
        lists = judging_orders._pool_lists(session, pool_id)[topic_id]
    served = []
    while True:
        response = client.post("/api/judging/next", headers=headers)
        if response.status_code == 204:
            break
        item = response.json()
        verdict = "relevant" if _relevant(item["shot_id"]) else "not_relevant"
        answer = client.post(f"/api/judging/items/{item['task_id']}", json={"verdict": verdict}, headers=headers)
        assert answer.status_code == 200, answer.text
        served.append(item["shot_id"])
    oracle = {d: _relevant(d) for d in averaged}
    # the pool was built before any model verdict: its first item is the seeded doc order's (lara's fallback)
    assert served[0] == judge_all(make_order("lara", lists, seed=SEED, topic="1"), oracle)[0]
    # from the first verdict on, the policy has the model's probabilities, calibrated on every verdict
    policy = make_order("lara", lists, seed=SEED, topic="1", probabilities=averaged)
    policy.record(served[0], oracle[served[0]])
    assert served[1:] == judge_all(policy, oracle)
    assert sorted(served) == sorted(averaged)
    # the calibration moved the order: people are not served the model's uncalibrated uncertainty order
    rest = [d for d in averaged if d != served[0]]
    assert served[1:] != sorted(rest, key=lambda d: abs(averaged[d] - 0.5))


def test_model_verdicts_before_anyone_judges_put_the_most_uncertain_item_first(
    make_campaign, client, organiser, sessions
):  # type: ignore[no-untyped-def]
    """A model judging a `lara` topic through the batch API before any person re-plans the topic: the first item a
    person gets is then the policy's first with the model's probabilities, not the seeded fallback's."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, depth=20, seed=5)
    body = {"kind": "depth", "depth": 6, "seed": SEED, "order": "lara"}
    pool_id = client.post(f"/api/campaigns/{campaign.id}/pools", json=body, headers=organiser).json()["id"]
    model = {"name": "lara-model", "kind": "model", "provenance": {"model": "sim"}}
    made = client.post(f"/api/campaigns/{campaign.id}/assessors", json=model, headers=organiser).json()
    model_headers = {"Authorization": f"Bearer {made['token']}"}
    person_id, person = make_assessor(client, organiser, campaign, "lara-person")
    assignments = {"shared": True, "assignments": [{"topic": "1", "assessor_id": a} for a in (made["id"], person_id)]}
    assert client.post(f"/api/pools/{pool_id}/assignments", json=assignments, headers=organiser).status_code == 201
    pulled = client.post("/api/judging/batch/pull", json={"n": 100}, headers=model_headers).json()["items"]
    verdicts = [
        {"item_id": i["item_id"], "grade": int(_probability(i["shot_id"], "A") > 0.5),
         "probability": _probability(i["shot_id"], "A")}
        for i in pulled
    ]  # fmt: skip
    pushed = client.post("/api/judging/batch/verdicts", json={"verdicts": verdicts}, headers=model_headers)
    assert pushed.status_code == 200 and pushed.json()["accepted"] == len(pulled)
    with session_scope(sessions) as session:
        topic_id = session.scalar(select(Topic.id).where(Topic.campaign_id == campaign.id, Topic.number == "1"))
        lists = judging_orders._pool_lists(session, pool_id)[topic_id]
    probabilities = {i["shot_id"]: _probability(i["shot_id"], "A") for i in pulled}
    expected = make_order("lara", lists, seed=SEED, topic="1", probabilities=probabilities).next()
    fallback = make_order("lara", lists, seed=SEED, topic="1").next()
    assert expected != fallback  # the case tells the two apart
    assert client.post("/api/judging/next", headers=person).json()["shot_id"] == expected
