"""Two tabs of one assessor on one item: the second first verdict (or first marks) is a 409 naming what is stored,
never a silent replacement; changing a verdict or marks is the explicit going-back path (`change: true`)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
from sqlalchemy import select

from app.storage.models import Judgement, JudgementChange, JudgingTask, MomentJudgement
from tests.api.helpers import depth_pool, step


def _changes(sessions, task_id: int) -> list[tuple[str | None, str]]:
    """The change records of a task's judgement, oldest first: (old verdict, new verdict)."""
    with sessions() as session:
        rows = session.scalars(
            select(JudgementChange)
            .join(Judgement)
            .join(
                JudgingTask,
                (JudgingTask.pool_item_id == Judgement.pool_item_id) & (JudgingTask.round == Judgement.round),
            )
            .where(JudgingTask.id == task_id)
            .order_by(JudgementChange.id)
        ).all()
        return [(c.old_verdict.value if c.old_verdict else None, c.new_verdict.value) for c in rows]


def test_a_second_first_verdict_is_409_naming_the_stored_one(make_campaign, client, organiser, sessions):
    _, _, [(_, ann)], _ = depth_pool(make_campaign, client, organiser)
    # both tabs hold the same leased item (the caller's own leases come first)
    tab_a, tab_b = step(client, ann)["next"], step(client, ann)["next"]
    task = tab_a[0]["task_id"]
    assert tab_b[0]["task_id"] == task
    assert step(client, ann, task_id=task, verdict="relevant")["judged"]["verdict"] == "relevant"
    # the other tab's verdict on the same item, by the step (the page) and by the plain endpoint
    refused = client.post("/api/judging/step", json={"task_id": task, "verdict": "not_relevant"}, headers=ann)
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert f"item {task} is judged already" in detail and "your verdict is relevant" in detail and "change" in detail
    plain = client.post(f"/api/judging/items/{task}", json={"verdict": "unsure"}, headers=ann)
    assert plain.status_code == 409 and "your verdict is relevant" in plain.json()["detail"]
    # even the same verdict twice is refused (the second tab's answer must not claim "Saved")
    again = client.post(f"/api/judging/items/{task}", json={"verdict": "relevant"}, headers=ann)
    assert again.status_code == 409
    assert client.get(f"/api/judging/items/{task}", headers=ann).json()["verdict"] == "relevant"
    assert _changes(sessions, task) == [(None, "relevant")]
    # going back is the explicit change
    changed = step(client, ann, task_id=task, verdict="not_relevant", change=True)
    assert changed["judged"]["verdict"] == "not_relevant"
    kept = client.post(f"/api/judging/items/{task}", json={"verdict": "not_relevant", "change": True}, headers=ann)
    assert kept.status_code == 200 and kept.json()["verdict"] == "not_relevant"
    assert _changes(sessions, task) == [(None, "relevant"), ("relevant", "not_relevant")]


def test_change_needs_a_verdict_of_ones_own(make_campaign, client, organiser):
    _, _, [(_, ann), (_, bob)], _ = depth_pool(make_campaign, client, organiser, shared=True, names=("ann", "bob"))
    leased = step(client, ann)["next"][0]["task_id"]
    # a change of an item not judged yet is no first verdict in disguise
    missing = client.post(f"/api/judging/items/{leased}", json={"verdict": "relevant", "change": True}, headers=ann)
    assert missing.status_code == 404 and "no verdict of yours" in missing.json()["detail"]
    assert client.get(f"/api/judging/items/{leased}", headers=ann).status_code == 404
    # nor of another assessor's verdict
    step(client, ann, task_id=leased, verdict="relevant")
    others = client.post(f"/api/judging/items/{leased}", json={"verdict": "unsure", "change": True}, headers=bob)
    assert others.status_code == 404
    # change goes with a verdict
    bad = client.post("/api/judging/step", json={"task_id": leased, "later": True, "change": True}, headers=ann)
    assert bad.status_code == 422 and "change goes with a verdict" in bad.text


def test_two_tabs_judging_at_once_store_one_verdict(make_campaign, client, organiser, sessions, live_server):
    _, _, [(_, ann)], size = depth_pool(make_campaign, client, organiser)
    rounds = min(size, 4)
    with httpx.Client(base_url=live_server, headers=ann, timeout=30) as http, ThreadPoolExecutor(2) as threads:
        for _ in range(rounds):
            task = http.post("/api/judging/step", json={}).json()["next"][0]["task_id"]
            start = threading.Barrier(2)

            def judge(verdict: str, task: int = task, start: threading.Barrier = start) -> httpx.Response:
                start.wait()
                return http.post("/api/judging/step", json={"task_id": task, "verdict": verdict})

            answers = list(threads.map(judge, ["relevant", "not_relevant"]))
            assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
            won = next(a for a in answers if a.status_code == 200).json()["judged"]["verdict"]
            lost = next(a for a in answers if a.status_code == 409).json()["detail"]
            # the loser is told what is stored, whether it waited for the winner's lock or came after it
            assert f"judged already: your verdict is {won}" in lost
            assert _changes(sessions, task) == [(None, won)]


def test_second_first_marks_are_409_naming_the_stored_marks(moment_pool, client, sessions):
    _, _, ann, _ = moment_pool
    item = client.post("/api/moment-judging/next", headers=ann).json()
    path = f"/api/moment-judging/items/{item['item_id']}"
    first = client.post(path, json={"segments": [{"start": 12, "end": 18.5}]}, headers=ann)
    assert first.status_code == 200, first.text
    # another tab had the same item (no lease: the next unmarked one) and submits its own marks
    refused = client.post(path, json={"segments": []}, headers=ann)
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert "marked already: your marks are 12.0-18.5 s" in detail
    assert client.get(path, headers=ann).json()["segments"] == [[12.0, 18.5]]
    # going back is the explicit change
    changed = client.post(path, json={"segments": [], "change": True}, headers=ann)
    assert changed.status_code == 200 and changed.json()["segments"] == []
    refused = client.post(path, json={"segments": [{"start": 1, "end": 2}]}, headers=ann)
    assert refused.status_code == 409 and "your marks are none relevant" in refused.json()["detail"]
    # a change of an item not marked yet is refused
    other = client.post("/api/moment-judging/next", headers=ann).json()
    assert other["item_id"] != item["item_id"]
    missing = client.post(
        f"/api/moment-judging/items/{other['item_id']}", json={"segments": [], "change": True}, headers=ann
    )
    assert missing.status_code == 404 and "no marks of yours" in missing.json()["detail"]
    with sessions() as session:
        rows = session.scalars(select(MomentJudgement).where(MomentJudgement.item_id == item["item_id"])).all()
        assert [r.segments for r in rows] == [[]]


def test_two_tabs_marking_at_once_store_one_set_of_marks(moment_pool, live_server, sessions):
    _, _, ann, _ = moment_pool
    with httpx.Client(base_url=live_server, headers=ann, timeout=30) as http, ThreadPoolExecutor(2) as threads:
        item = http.post("/api/moment-judging/next").json()
        path = f"/api/moment-judging/items/{item['item_id']}"
        start = threading.Barrier(2)

        def submit(end: float) -> httpx.Response:
            start.wait()
            return http.post(path, json={"segments": [{"start": 1.0, "end": end}]})

        answers = list(threads.map(submit, [5.0, 9.0]))
    assert sorted(a.status_code for a in answers) == [200, 409], [a.text for a in answers]
    won = next(a for a in answers if a.status_code == 200).json()["segments"]
    assert f"your marks are 1.0-{won[0][1]:.1f} s" in next(a for a in answers if a.status_code == 409).json()["detail"]
    with sessions() as session:
        rows = session.scalars(select(MomentJudgement).where(MomentJudgement.item_id == item["item_id"])).all()
        assert [r.segments for r in rows] == [won]
