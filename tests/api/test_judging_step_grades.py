"""Graded verdicts through the judging page's API: the step says the campaign's scale, and the items judged and gone
back to carry the caller's own grade."""

from __future__ import annotations

from sqlalchemy import select

from app.storage.models import Judgement, JudgingTask
from tests.api.helpers import depth_pool, step


def _stored(sessions, task_id: int) -> tuple[str, int | None]:  # type: ignore[no-untyped-def]
    """The verdict and grade stored for a task."""
    with sessions() as session:
        verdict, grade = session.execute(
            select(Judgement.verdict, Judgement.grade)
            .join(
                JudgingTask,
                (JudgingTask.pool_item_id == Judgement.pool_item_id) & (JudgingTask.round == Judgement.round),
            )
            .where(JudgingTask.id == task_id)
        ).one()
    return verdict.value, grade


def test_a_graded_campaign_s_step_says_its_scale_and_items_carry_your_grade(make_campaign, client, organiser, sessions):
    pool, _, [(_, ann)], size = depth_pool(make_campaign, client, organiser)
    assert size >= 4
    patched = client.patch(f"/api/campaigns/{pool['campaign_id']}", json={"max_grade": 3}, headers=organiser)
    assert patched.status_code == 200, patched.text
    first = step(client, ann)
    assert first["max_grade"] == 3
    assert [item["grade"] for item in first["next"]] == [None, None]  # not judged yet
    shown = first["next"]
    judged: dict[int, tuple[str, int | None]] = {}
    for verdict, grade in [("relevant", 3), ("not_relevant", 0), ("relevant", None), ("unsure", None)]:
        task = shown[0]["task_id"]
        body = {"task_id": task, "verdict": verdict} | ({} if grade is None else {"grade": grade})
        out = step(client, ann, **body)
        expected = 1 if verdict == "relevant" and grade is None else grade  # relevant without a grade is 1
        assert (out["judged"]["verdict"], out["judged"]["grade"]) == (verdict, expected)
        assert out["max_grade"] == 3
        judged[task] = (verdict, expected)
        shown = out["next"]
    for task, (verdict, grade) in judged.items():
        back = client.get(f"/api/judging/items/{task}", headers=ann).json()
        assert (back["verdict"], back["grade"]) == (verdict, grade) == _stored(sessions, task)
    # going back, a grade alone changes (the verdict stays relevant)
    task = next(iter(judged))
    out = step(client, ann, task_id=task, verdict="relevant", grade=2, change=True)
    assert (out["judged"]["verdict"], out["judged"]["grade"]) == ("relevant", 2) == _stored(sessions, task)
    # off the scale: a 422 naming the grade, and nothing changes
    refused = client.post(
        "/api/judging/step", json={"task_id": task, "verdict": "relevant", "grade": 4, "change": True}, headers=ann
    )
    assert refused.status_code == 422 and "grade" in refused.text
    assert _stored(sessions, task) == ("relevant", 2)


def test_a_binary_campaign_s_step_says_max_grade_1(make_campaign, client, organiser, sessions):
    _, _, [(_, ann)], _ = depth_pool(make_campaign, client, organiser)
    first = step(client, ann)
    assert first["max_grade"] == 1
    task = first["next"][0]["task_id"]
    out = step(client, ann, task_id=task, verdict="not_relevant")
    assert out["max_grade"] == 1 and out["judged"]["grade"] == 0 == _stored(sessions, task)[1]
    refused = client.post(
        "/api/judging/step", json={"task_id": task, "verdict": "relevant", "grade": 2, "change": True}, headers=ann
    )
    assert refused.status_code == 422 and "binary" in refused.text
