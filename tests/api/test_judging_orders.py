"""Adaptive judging orders through the API: the queue an assessor is served is the order's policy, fed every verdict,
exactly as the numeric core plays it against the same verdicts; a restarted process picks it up from the database;
leasing ahead and rolled-back verdicts keep every item judged once."""

from __future__ import annotations

import zlib

import pytest
from sqlalchemy import select

from app.evaluation.pools.orders import judge_all, make_order
from app.services import judging_orders
from app.storage.database import session_scope
from app.storage.models import Assignment, Pool, PoolItem, Topic
from tests.api.helpers import counted, make_assessor, setup_campaign, start_analysis, wait_done

DEPTH = 8  # each run's top 8 are pooled; the runs' scores fall with their file rank, so lists are file order


def _relevant(shot: str) -> bool:
    """A fixed oracle: about a third of the shots are relevant."""
    return zlib.crc32(shot.encode()) % 3 == 0


def _uploaded_lists(client, organiser, campaign, names) -> dict[str, list[list[str]]]:
    """{topic: each pooled run's top-DEPTH shots in rank order}, read back from the runs' downloads."""
    runs = client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()
    ids = {r["name"]: r["id"] for r in runs}
    out: dict[str, list[list[str]]] = {t: [] for t in campaign.topics}
    for name in sorted(names, key=lambda n: ids[n]):
        text = client.get(f"/api/runs/{ids[name]}/download", headers=organiser).text
        rows = [line.split() for line in text.splitlines() if line.strip()]
        for topic in campaign.topics:
            mine = sorted((r for r in rows if r[0] == topic), key=lambda r: -float(r[4]))
            out[topic].append([r[2] for r in mine[:DEPTH]])
    return out


def _pool(make_campaign, client, organiser, order: str):
    """A depth-8 pool of 4 runs over 3 topics with `order`, one assessor on every topic."""
    campaign, names = setup_campaign(make_campaign, client, organiser, depth=20, seed=5)
    body = {"kind": "depth", "depth": DEPTH, "seed": 11, "order": order}
    response = client.post(f"/api/campaigns/{campaign.id}/pools", json=body, headers=organiser)
    assert response.status_code == 201, response.text
    pool = response.json()
    assessor_id, headers = make_assessor(client, organiser, campaign, f"order-{order}")
    assignments = [{"topic": t, "assessor_id": assessor_id} for t in campaign.topics]
    assert client.post(f"/api/pools/{pool['id']}/assignments", json={"assignments": assignments},
                       headers=organiser).status_code == 201  # fmt: skip
    return campaign, names, pool, headers


def _judge_in_turn(client, headers, forget_at: int | None = None) -> dict[str, list[str]]:
    """Ask for one item at a time and judge it with the oracle until the queue is empty; {topic: shots in order}.
    At verdict `forget_at` the process forgets every policy, as a restart would."""
    seen: dict[str, list[str]] = {}
    count = 0
    while True:
        response = client.post("/api/judging/next", headers=headers)
        if response.status_code == 204:
            return seen
        item = response.json()
        verdict = "relevant" if _relevant(item["shot_id"]) else "not_relevant"
        answer = client.post(f"/api/judging/items/{item['task_id']}", json={"verdict": verdict}, headers=headers)
        assert answer.status_code == 200, answer.text
        seen.setdefault(item["topic"], []).append(item["shot_id"])
        count += 1
        if count == forget_at:
            judging_orders._policies.clear()
            judging_orders._lists.clear()


@pytest.mark.parametrize("order", ["move_to_front", "mm_ns", "hedge", "mtc", "mtc_hedge"])
def test_the_queue_is_the_orders_policy_fed_every_verdict(make_campaign, client, organiser, order, monkeypatch):
    monkeypatch.setattr(judging_orders, "DEFAULT_MEMORY_MB", 1e-9)  # after the restart: lists read a run at a time
    campaign, names, pool, headers = _pool(make_campaign, client, organiser, order)
    assert pool["params"]["order"] == order
    lists = _uploaded_lists(client, organiser, campaign, names)
    seen = _judge_in_turn(client, headers, forget_at=7)
    oracle = {shot: _relevant(shot) for ranked in lists.values() for run in ranked for shot in run}
    for topic in campaign.topics:
        expected = judge_all(make_order(order, lists[topic], seed=11, topic=topic), oracle)
        assert seen[topic] == expected, topic
    shuffled = judge_all(make_order("shuffled", lists[campaign.topics[0]], seed=11, topic="1"), oracle)
    assert seen[campaign.topics[0]] != shuffled  # the adaptive queue is not the shuffle


def test_the_shuffle_stays_the_default_and_unknown_orders_are_422(make_campaign, client, organiser, sessions):
    campaign, _ = setup_campaign(make_campaign, client, organiser, depth=20, seed=5)
    url = f"/api/campaigns/{campaign.id}/pools"
    bad = client.post(url, json={"kind": "depth", "depth": 4, "order": "random_walk"}, headers=organiser)
    assert bad.status_code == 422 and "order" in bad.text
    pool = client.post(url, json={"kind": "depth", "depth": 4, "seed": 2}, headers=organiser).json()
    assert pool["params"]["order"] == "shuffled"
    with session_scope(sessions) as session:
        orders = session.scalars(select(PoolItem.judging_order).where(PoolItem.pool_id == pool["id"])).all()
    assert min(orders) == 0  # the shuffle's positions, nothing planned ahead of them


def test_leasing_ahead_judges_every_item_once_and_plans_stay_at_the_head(make_campaign, client, organiser, sessions):
    campaign, _, pool, headers = _pool(make_campaign, client, organiser, "mm_ns")
    with session_scope(sessions) as session:
        total = len(session.scalars(select(PoolItem.id).where(PoolItem.pool_id == pool["id"])).all())
        heads = session.execute(
            select(Topic.number, PoolItem.docno, PoolItem.judging_order)
            .join(Topic, Topic.id == PoolItem.topic_id)
            .where(PoolItem.pool_id == pool["id"], PoolItem.judging_order < 0)
            .order_by(Topic.number, PoolItem.judging_order)
        ).all()
    # before any verdict, each topic's first plan (AHEAD docs of one run's list) heads its queue
    assert len(heads) == judging_orders.AHEAD * len(campaign.topics)
    judged: list[str] = []
    body: dict = {"ahead": 1}
    while True:
        step = client.post("/api/judging/step", json=body, headers=headers).json()
        if not step["next"]:
            break
        item = step["next"][0]
        judged.append(f"{item['topic']}/{item['shot_id']}")
        verdict = "relevant" if _relevant(item["shot_id"]) else "not_relevant"
        body = {"ahead": 1, "task_id": item["task_id"], "verdict": verdict}
    assert len(judged) == len(set(judged)) == total
    with session_scope(sessions) as session:
        stored = session.get(Pool, pool["id"])
        assert stored.params["order"] == "mm_ns"


def test_a_rolled_back_verdict_is_forgotten_by_the_policy(make_campaign, client, organiser, sessions):
    from app.services import judging
    from app.services.auth import Principal
    from app.storage.models import Role, Verdict

    campaign, names, pool, headers = _pool(make_campaign, client, organiser, "move_to_front")
    item = client.post("/api/judging/next", headers=headers).json()
    with session_scope(sessions) as session:
        assessor_id = session.scalar(select(Assignment.assessor_id).where(Assignment.pool_id == pool["id"]).limit(1))
    me = Principal(Role.assessor, token_id=0, campaign_id=campaign.id, assessor_id=assessor_id)
    with sessions() as session:
        judging.judge(session, me, item["task_id"], Verdict.not_relevant)
        assert any(key[0] == pool["id"] for key in judging_orders._policies)
        session.rollback()
    assert not any(key[0] == pool["id"] for key in judging_orders._policies)
    lists = _uploaded_lists(client, organiser, campaign, names)
    seen = _judge_in_turn(client, headers)
    oracle = {shot: _relevant(shot) for ranked in lists.values() for run in ranked for shot in run}
    for topic in campaign.topics:
        assert seen[topic] == judge_all(make_order("move_to_front", lists[topic], seed=11, topic=topic), oracle)


def test_scores_from_a_partly_judged_adaptive_pool_are_marked_biased_everywhere(make_campaign, client, organiser):

    campaign, _, pool, headers = _pool(make_campaign, client, organiser, "mm_ns")
    sampled = sum(t["sampled"] for t in pool["topics"])
    for _ in range(10):
        item = client.post("/api/judging/next", headers=headers).json()
        verdict = "relevant" if _relevant(item["shot_id"]) else "not_relevant"
        client.post(f"/api/judging/items/{item['task_id']}", json={"verdict": verdict}, headers=headers)

    live = client.get(f"/api/pools/{pool['id']}/live", headers=organiser).json()
    assert (live["judging_order"], live["random_order"]) == ("mm_ns", False)
    assert all(t["estimate_biased"] for t in live["topics"])
    budget = client.get(f"/api/pools/{pool['id']}/budget", headers=organiser).json()
    assert budget["random_order"] is False and all(t["estimate_biased"] for t in budget["topics"])
    page = client.get(f"/organise/campaigns/{campaign.id}/panel", headers=organiser).text
    assert "judging order mm_ns, not random: estimates biased" in page

    def cut_and_evaluate(label: str) -> tuple[dict, dict, dict, dict]:
        """Cut a version, evaluate on it; the version, the evaluation, the live leaderboard and a ties analysis."""
        version = client.post(f"/api/pools/{pool['id']}/qrels", json={"label": label}, headers=organiser).json()
        started = client.post(
            f"/api/campaigns/{campaign.id}/evaluations", json={"qrels_version_id": version["id"]}, headers=organiser
        )
        assert started.status_code == 202, started.text
        evaluation = wait_done(client, organiser, started.json()["id"])
        board = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=organiser).json()
        return version, evaluation, board, start_analysis(client, organiser, campaign.id, "ties")

    version, evaluation, board, ties = cut_and_evaluate("partial")
    expected = {"order": "mm_ns", "random": False, "unjudged_sampled": sampled - 10, "biased": True}
    for marked in (version, evaluation, board, ties):
        assert {k: marked["judging_order"][k] for k in expected} == expected
    assert "biased" in board["judging_order"]["note"]
    listed = client.get(f"/api/campaigns/{campaign.id}/qrels", headers=organiser).json()
    assert [q["judging_order"]["biased"] for q in listed] == [True]

    partial_evaluation = evaluation["id"]
    _judge_in_turn(client, headers)  # to the end: every sampled item judged, whatever the order
    version, evaluation, board, ties = cut_and_evaluate("complete")
    expected = {"order": "mm_ns", "random": False, "unjudged_sampled": 0, "biased": False}
    for marked in (version, evaluation, board, ties):
        assert {k: marked["judging_order"][k] for k in expected} == expected

    published = client.post(
        f"/api/campaigns/{campaign.id}/publish", json={"evaluation_id": partial_evaluation}, headers=organiser
    )
    assert published.status_code == 201, published.text
    public = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").json()
    assert public["judging_order"]["biased"] is True
    for page in ("leaderboard", "report"):
        assert "Biased: judged in the non-random order mm_ns" in client.get(f"/campaigns/{campaign.id}/{page}").text


def test_a_verdict_on_an_adaptive_pool_adds_three_statements(make_campaign, client, organiser, sessions):
    _, _, _, headers = _pool(make_campaign, client, organiser, "mm_ns")
    engine = sessions.kw["bind"]
    for _ in range(2):  # warm: the connections in use, the topic's policy in the process
        item = client.post("/api/judging/next", headers=headers).json()
        client.post(f"/api/judging/items/{item['task_id']}", json={"verdict": "relevant"}, headers=headers)
    item = client.post("/api/judging/next", headers=headers).json()
    with counted(engine) as statements:
        judged = client.post(f"/api/judging/items/{item['task_id']}", json={"verdict": "relevant"}, headers=headers)
    assert judged.status_code == 200
    # the shuffle's four, then the topic's advisory lock (before the judgement), the verdicts since the policy's last,
    # the plan moved to the head of the queue
    assert len(statements) == 7, statements
    assert "pg_advisory_xact_lock" in statements[3] and statements[-1].startswith("UPDATE pool_items")
