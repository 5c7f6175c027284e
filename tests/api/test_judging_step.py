"""One request per key press: POST /api/judging/step judges (or puts off) an item and leases the next ones, blind."""

from __future__ import annotations

import json

from sqlalchemy import event, select

from app.storage.models import Judgement, JudgementChange, JudgingTask, PoolItem
from tests.api.helpers import TASK_VIEW_KEYS, depth_pool, step


def test_each_verdict_returns_the_next_items_and_the_one_ahead_stays_next(make_campaign, client, organiser, sessions):
    pool, run_names, [(_, ann)], size = depth_pool(make_campaign, client, organiser)
    assert size >= 5
    first = step(client, ann)  # no verdict: the next item and one ahead, leased
    assert first["judged"] is None and first["put_off"] is None
    assert len(first["next"]) == 2 and first["next"][0]["task_id"] != first["next"][1]["task_id"]
    assert first["progress"]["judged_by_you"] == 0 and first["progress"]["topics"][0]["left"] == size
    # asking again hands back the same two leases, in the same order (nothing new is claimed)
    assert [i["task_id"] for i in step(client, ann)["next"]] == [i["task_id"] for i in first["next"]]
    # the plain next endpoint still answers with the first of them
    assert client.post("/api/judging/next", headers=ann).json()["task_id"] == first["next"][0]["task_id"]

    shown, seen, verdicts = first["next"], [], {}
    while shown:
        current = shown[0]
        verdict = ["relevant", "not_relevant", "unsure"][len(seen) % 3]
        out = step(client, ann, task_id=current["task_id"], verdict=verdict, seconds_spent=1.5)
        assert out["judged"]["task_id"] == current["task_id"] and out["judged"]["verdict"] == verdict
        seen.append(current)
        verdicts[current["task_id"]] = verdict
        if len(shown) > 1:  # the item leased ahead (whose media the page preloads) is the next one
            assert out["next"][0]["task_id"] == shown[1]["task_id"]
        assert len(out["next"]) == min(2, size - len(seen))
        assert out["progress"]["judged_by_you"] == len(seen)
        assert out["progress"]["topics"] == [
            {"topic": "1", "total": size, "left": size - len(seen), "judged_by_you": len(seen)}
        ]
        shown = out["next"]
    assert len(seen) == len({i["task_id"] for i in seen}) == size
    # blind: items carry exactly these fields, and nothing of runs, ranks, teams or counts of runs
    assert all(set(item) == TASK_VIEW_KEYS for item in seen)
    dump = json.dumps([seen, out])
    for secret in [*run_names, "secret-tag", "team", "rank", "n_runs", "stratum", "round"]:
        assert secret not in dump
    with sessions() as session:
        rows = session.execute(
            select(JudgingTask.id, Judgement.verdict, Judgement.seconds_spent)
            .join(Judgement, (Judgement.pool_item_id == JudgingTask.pool_item_id) & (Judgement.round == 1))
            .join(PoolItem, PoolItem.id == JudgingTask.pool_item_id)
            .where(PoolItem.pool_id == pool["id"])
        ).all()
    assert {t: v.value for t, v, _ in rows} == verdicts
    assert {s for _, _, s in rows} == {1.5}


def test_going_back_a_changed_verdict_is_kept_and_the_queue_is_unchanged(make_campaign, client, organiser, sessions):
    _, _, [(_, ann)], _ = depth_pool(make_campaign, client, organiser)
    shown = step(client, ann)["next"]
    out = step(client, ann, task_id=shown[0]["task_id"], verdict="relevant")
    ahead = [i["task_id"] for i in out["next"]]
    again = step(client, ann, task_id=shown[0]["task_id"], verdict="not_relevant", change=True)  # going back
    assert again["judged"]["verdict"] == "not_relevant"
    assert [i["task_id"] for i in again["next"]] == ahead and again["progress"]["judged_by_you"] == 1
    with sessions() as session:
        changes = session.scalars(
            select(JudgementChange.new_verdict)
            .join(Judgement)
            .join(JudgingTask, JudgingTask.pool_item_id == Judgement.pool_item_id)
            .where(JudgingTask.id == shown[0]["task_id"])
            .order_by(JudgementChange.id)
        ).all()
    assert [c.value for c in changes] == ["relevant", "not_relevant"]


def test_later_moves_an_item_to_the_end_of_the_queue(make_campaign, client, organiser):
    _, _, [(_, ann)], size = depth_pool(make_campaign, client, organiser)
    shown = step(client, ann)["next"]
    skipped = shown[0]["task_id"]
    out = step(client, ann, task_id=skipped, later=True)
    assert out["put_off"] == skipped and out["judged"] is None
    assert out["next"][0]["task_id"] == shown[1]["task_id"] and skipped not in [i["task_id"] for i in out["next"]]
    assert out["progress"]["topics"][0]["left"] == size  # not judged, still to do
    # it cannot be put off or judged again until it is handed out again
    assert client.post("/api/judging/step", json={"task_id": skipped, "later": True}, headers=ann).status_code == 409
    order = []
    shown = out["next"]
    while shown:
        order.append(shown[0]["task_id"])
        shown = step(client, ann, task_id=shown[0]["task_id"], verdict="not_relevant")["next"]
    assert len(order) == size and order[-1] == skipped and skipped not in order[:-1]
    assert client.post("/api/judging/next", headers=ann).status_code == 204


def test_put_off_items_come_back_in_the_order_they_were_put_off(make_campaign, client, organiser):
    _, _, [(_, ann)], size = depth_pool(make_campaign, client, organiser, depth=2)
    order, put_off = [], []
    shown = step(client, ann, ahead=0)["next"]
    for _ in range(2):  # put off the first two items, then judge the rest
        put_off.append(shown[0]["task_id"])
        shown = step(client, ann, task_id=shown[0]["task_id"], later=True, ahead=0)["next"]
    while shown:
        order.append(shown[0]["task_id"])
        shown = step(client, ann, task_id=shown[0]["task_id"], verdict="relevant", ahead=0)["next"]
    assert order[-2:] == put_off and len(order) == size


def test_progress_counts_only_the_callers_own_work(make_campaign, client, organiser):
    _, _, [(_, ann), (_, bob)], size = depth_pool(make_campaign, client, organiser, shared=True, names=("ann", "bob"))
    shown = step(client, ann)["next"]
    for _ in range(3):
        shown = step(client, ann, task_id=shown[0]["task_id"], verdict="relevant")["next"]
    mine = client.get("/api/judging/progress", headers=bob).json()
    assert mine["judged_by_you"] == 0 and mine["topics"] == [
        {"topic": "1", "total": size, "left": size - 3, "judged_by_you": 0}
    ]
    assert mine["done"] == 3 and mine["total"] == size  # the topic's items done, by anyone sharing it
    assert client.get("/api/judging/progress", headers=ann).json()["judged_by_you"] == 3
    # bob never gets ann's leased items, current or ahead
    held = {i["task_id"] for i in step(client, ann)["next"]}
    assert not held & {i["task_id"] for i in step(client, bob)["next"]}


def test_shared_topic_judged_with_lookahead_judges_every_item_once(make_campaign, client, organiser):
    _, _, assessors, size = depth_pool(make_campaign, client, organiser, shared=True, names=("a", "b", "c"))
    shown = {i: step(client, h, ahead=2)["next"] for i, (_, h) in enumerate(assessors)}
    judged = []
    while any(shown.values()):
        for i, (_, headers) in enumerate(assessors):
            if shown[i]:
                judged.append(shown[i][0]["task_id"])
                shown[i] = step(client, headers, task_id=judged[-1], verdict="relevant", ahead=2)["next"]
    assert len(judged) == len(set(judged)) == size


def test_step_refuses_bad_bodies_and_other_assessors_items(make_campaign, client, organiser):
    _, _, [(_, ann), (_, bob)], _ = depth_pool(make_campaign, client, organiser, shared=True, names=("ann", "bob"))
    task = step(client, ann)["next"][0]["task_id"]
    for body in (
        {"verdict": "relevant"},
        {"later": True},
        {"task_id": task},
        {"task_id": task, "verdict": "relevant", "later": True},
        {"task_id": task, "verdict": "maybe"},
        {"ahead": 9},
        {"task_id": "x", "verdict": "relevant"},
    ):
        response = client.post("/api/judging/step", json=body, headers=ann)
        assert response.status_code == 422, (body, response.text)
    for body in ({"task_id": task, "verdict": "relevant"}, {"task_id": task, "later": True}):
        assert client.post("/api/judging/step", json=body, headers=bob).status_code == 409
    for task_id, status in ((2**31 - 1, 404), (2**31, 422), (0, 422)):
        body = {"task_id": task_id, "verdict": "relevant"}
        assert client.post("/api/judging/step", json=body, headers=bob).status_code == status
    assert client.post("/api/judging/step", json={}, headers=organiser).status_code == 403
    assert client.post("/api/judging/step", json={}).status_code == 401


def test_a_step_is_a_handful_of_round_trips(make_campaign, client, organiser, sessions):
    _, _, [(_, ann)], _ = depth_pool(make_campaign, client, organiser)
    shown = step(client, ann)["next"]
    statements: list[str] = []

    def count(conn, cursor, statement, *args):  # type: ignore[no-untyped-def]
        statements.append(statement)

    engine = sessions.kw["bind"]
    event.listen(engine, "before_cursor_execute", count)
    try:
        step(client, ann, task_id=shown[0]["task_id"], verdict="relevant")
    finally:
        event.remove(engine, "before_cursor_execute", count)
    work = [s for s in statements if "judging_tasks" in s or "assignments" in s]
    # lock the task, record the verdict, own leases, claim one more, lease the two, progress; plus authentication
    assert len(work) <= 6, work
    assert len(statements) <= 10, statements
