"""An assessor's day: second opinions and items put off come back within the topic every `interleave_every`
first-round verdicts, and a verdict typed after a lapsed lease is kept while nobody else holds the item."""

from __future__ import annotations

from sqlalchemy import select

from app.storage.models import Judgement, JudgingTask, PoolItem, Topic
from tests.api.helpers import depth_pool, step


def _every(client, organiser, pool: dict, every: int) -> None:  # type: ignore[no-untyped-def]
    """Set the pool's campaign's interleave_every."""
    changed = client.patch(f"/api/campaigns/{pool['campaign_id']}", json={"interleave_every": every}, headers=organiser)
    assert changed.status_code == 200 and changed.json()["interleave_every"] == every, changed.text


def _judge_until(client, ann, out: dict, wanted: int, limit: int) -> tuple[int, dict]:  # type: ignore[no-untyped-def]
    """Judge the shown item (not relevant) until `wanted` is among the next items; (verdicts given, last step)."""
    for given in range(limit + 1):
        if wanted in [i["task_id"] for i in out["next"]]:
            return given, out
        out = step(client, ann, task_id=out["next"][0]["task_id"], verdict="not_relevant")
    raise AssertionError(f"{wanted} did not come back within {limit} verdicts")


def test_an_item_put_off_comes_back_after_every_n_first_round_verdicts(make_campaign, client, organiser):
    pool, _, [(_, ann)], size = depth_pool(make_campaign, client, organiser, depth=12)
    assert size >= 9
    _every(client, organiser, pool, 3)
    first = step(client, ann)["next"]
    skipped = first[0]["task_id"]
    out = step(client, ann, task_id=skipped, later=True)
    assert out["put_off"] == skipped and skipped not in [i["task_id"] for i in out["next"]]
    # the third first-round verdict since it was put off makes it due: it is leased as the item after the next
    given, out = _judge_until(client, ann, out, skipped, size)
    assert given == 3 and [i["task_id"] for i in out["next"]][1] == skipped
    assert out["progress"]["topics"][0]["left"] == size - 3  # not at the end of the topic: 3 of its items judged


def test_with_zero_an_item_put_off_comes_back_at_the_end_of_its_topic_before_the_next(
    make_campaign, client, organiser, sessions
):
    pool, _, [(ann_id, ann)], size = depth_pool(make_campaign, client, organiser, depth=5)
    body = {"assignments": [{"topic": "2", "assessor_id": ann_id}]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    _every(client, organiser, pool, 0)
    skipped = step(client, ann)["next"][0]["task_id"]
    out = step(client, ann, task_id=skipped, later=True)
    given, out = _judge_until(client, ann, out, skipped, 3 * size)
    # every other first-round item of topic 1 judged (the last one shown), then the skipped one, before topic 2
    assert given == size - 2
    assert [i["topic"] for i in out["next"]] == ["1", "1"] and out["next"][1]["task_id"] == skipped
    topic1 = next(t for t in out["progress"]["topics"] if t["topic"] == "1")
    assert topic1["left"] == 2


def _second_opinions(sessions, pool_id: int, judged_by: int, n: int) -> list[int]:  # type: ignore[no-untyped-def]
    """Queue round-2 tasks on `n` of topic 1's items judged by `judged_by` (as quality control does); their ids."""
    with sessions() as session:
        items = session.scalars(
            select(PoolItem.id)
            .join(Judgement, Judgement.pool_item_id == PoolItem.id)
            .where(PoolItem.pool_id == pool_id, Judgement.assessor_id == judged_by)
            .order_by(PoolItem.id)
            .limit(n)
        ).all()
        tasks = [
            JudgingTask(pool_item_id=i, round=2, reason="second opinion", excluded_assessor_id=judged_by) for i in items
        ]
        session.add_all(tasks)
        session.commit()
        return [t.id for t in tasks]


def test_second_opinions_are_interleaved_every_n_first_round_verdicts(make_campaign, client, organiser, sessions):
    pool, _, [(bob_id, bob), (_, ann)], size = depth_pool(
        make_campaign, client, organiser, depth=16, shared=True, names=("bob", "ann")
    )
    assert size >= 12
    _every(client, organiser, pool, 2)
    out = step(client, bob)
    for _ in range(2):
        out = step(client, bob, task_id=out["next"][0]["task_id"], verdict="relevant")
    second = _second_opinions(sessions, pool["id"], bob_id, 2)
    assert len(second) == 2
    out = step(client, ann)
    assert not set(second) & {i["task_id"] for i in out["next"]}  # nothing judged by ann yet: first round first
    given, out = _judge_until(client, ann, out, second[0], size)
    assert given == 2
    out = step(client, ann, task_id=out["next"][0]["task_id"], verdict="relevant")
    assert out["next"][0]["task_id"] == second[0]
    out = step(client, ann, task_id=second[0], verdict="relevant")  # the streak starts again
    given, out = _judge_until(client, ann, out, second[1], size)
    assert given == 2
    # bob never gets a second opinion on his own items
    assert not set(second) & {i["task_id"] for i in step(client, bob)["next"]}


def test_a_verdict_after_a_lapsed_lease_is_kept_while_nobody_else_holds_the_item(
    make_campaign, client, organiser, sessions, monkeypatch
):
    pool, _, [(_, ann), (bob_id, bob)], _ = depth_pool(
        make_campaign, client, organiser, depth=6, shared=True, names=("ann", "bob")
    )
    first = step(client, ann)["next"]
    step(client, ann, task_id=first[1]["task_id"], later=True)  # ann's item ahead released (put off: free)
    # the lapsed-lease item went back to the queue (here: put off), nobody took it: ann's late verdict is kept
    late = client.post(f"/api/judging/items/{first[1]['task_id']}", json={"verdict": "relevant"}, headers=ann)
    assert late.status_code == 200 and late.json()["verdict"] == "relevant"
    # ann's lease lapses (0 s), bob leases the same item for 300 s: ann's verdict is a 409, and nothing is stored
    monkeypatch.setattr(client.app.state.settings, "judging_lease_seconds", 0.0)
    step(client, ann)
    monkeypatch.setattr(client.app.state.settings, "judging_lease_seconds", 300.0)
    assert step(client, bob, ahead=0)["next"][0]["task_id"] == first[0]["task_id"]
    taken = client.post(f"/api/judging/items/{first[0]['task_id']}", json={"verdict": "relevant"}, headers=ann)
    assert taken.status_code == 409 and "another assessor" in taken.json()["detail"]
    # bob's lease lapses too, nobody holds the item: ann's verdict is kept, and bob's then is a 409
    monkeypatch.setattr(client.app.state.settings, "judging_lease_seconds", 0.0)
    step(client, bob, ahead=0)
    kept = client.post(f"/api/judging/items/{first[0]['task_id']}", json={"verdict": "not_relevant"}, headers=ann)
    assert kept.status_code == 200
    refused = client.post(f"/api/judging/items/{first[0]['task_id']}", json={"verdict": "relevant"}, headers=bob)
    assert refused.status_code == 404  # judged by someone else: not the caller's to see
    with sessions() as session:
        stored = session.execute(
            select(Judgement.verdict, Judgement.assessor_id)
            .join(JudgingTask, (JudgingTask.pool_item_id == Judgement.pool_item_id) & (JudgingTask.round == 1))
            .where(JudgingTask.id == first[0]["task_id"])
        ).one()
    assert stored.verdict.value == "not_relevant" and stored.assessor_id != bob_id


def test_a_free_task_of_a_topic_not_assigned_is_refused(make_campaign, client, organiser, sessions):
    pool, _, [(_, ann)], _ = depth_pool(make_campaign, client, organiser, depth=3)
    with sessions() as session:
        other = session.scalar(
            select(JudgingTask.id)
            .join(PoolItem, PoolItem.id == JudgingTask.pool_item_id)
            .join(Topic, Topic.id == PoolItem.topic_id)
            .where(PoolItem.pool_id == pool["id"], Topic.number == "2")
            .limit(1)
        )
    refused = client.post(f"/api/judging/items/{other}", json={"verdict": "relevant"}, headers=ann)
    assert refused.status_code == 409
    with sessions() as session:
        assert session.scalar(select(JudgingTask.done_at).where(JudgingTask.id == other)) is None


def test_interleave_every_is_a_setting_from_0_to_1000(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=1)
    shown = client.get(f"/api/campaigns/{campaign.id}", headers=organiser).json()
    assert shown["interleave_every"] == 10 and shown["audio_on"] is True
    for bad in (-1, 1001, "often"):
        refused = client.patch(f"/api/campaigns/{campaign.id}", json={"interleave_every": bad}, headers=organiser)
        assert refused.status_code == 422 and "interleave_every" in refused.text
    changed = client.patch(f"/api/campaigns/{campaign.id}", json={"audio_on": False}, headers=organiser).json()
    assert changed["audio_on"] is False and changed["interleave_every"] == 10
