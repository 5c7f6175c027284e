"""A break: POST /api/judging/release gives the caller's unanswered leases back to the queue as free items, and only
the caller's."""

from __future__ import annotations

from sqlalchemy import select

from app.storage.models import JudgingTask
from tests.api.helpers import depth_pool, step


def _leases(sessions, ids: list[int]) -> dict[int, tuple[int | None, bool, bool]]:  # type: ignore[no-untyped-def]
    """Per task: (leased to, has a leased_at, done)."""
    with sessions() as session:
        rows = session.execute(
            select(JudgingTask.id, JudgingTask.leased_to, JudgingTask.leased_at, JudgingTask.done_at).where(
                JudgingTask.id.in_(ids)
            )
        ).all()
    return {r.id: (r.leased_to, r.leased_at is not None, r.done_at is not None) for r in rows}


def test_release_frees_only_the_callers_unanswered_leases(make_campaign, client, organiser, sessions):
    pool, _, [(ann_id, ann), (bob_id, bob)], size = depth_pool(
        make_campaign, client, organiser, depth=6, shared=True, names=("ann", "bob")
    )
    assert size >= 6
    first = step(client, ann)["next"]
    judged = first[0]["task_id"]
    held = [i["task_id"] for i in step(client, ann, task_id=judged, verdict="relevant")["next"]]  # ann holds two
    bobs = [i["task_id"] for i in step(client, bob)["next"]]  # bob holds two others
    assert len(held) == 2 and len(bobs) == 2 and not set(held) & set(bobs) and judged not in held
    out = client.post("/api/judging/release", headers=ann)
    assert out.status_code == 200, out.text
    assert out.json() == {"released": sorted(held)}
    after = _leases(sessions, [judged, *held, *bobs])
    assert after[judged][0] is None and after[judged][2]  # judged: the verdict stands
    assert [after[t] for t in held] == [(None, False, False)] * 2  # free again, in their place (not put off)
    assert [after[t] for t in bobs] == [(bob_id, True, False)] * 2  # bob's leases untouched
    # nothing more to release; bob's next step reaches ann's released items in judging order
    assert client.post("/api/judging/release", headers=ann).json() == {"released": []}
    out = step(client, bob, task_id=bobs[0], verdict="not_relevant")
    assert [i["task_id"] for i in out["next"]] == [bobs[1], held[0]]
    # ann resumes: the next step leases afresh (her released item now held by bob is not hers)
    resumed = [i["task_id"] for i in step(client, ann)["next"]]
    assert held[0] not in resumed and held[1] in resumed
    assert _leases(sessions, [held[1]])[held[1]][0] == ann_id
    assert client.post("/api/judging/release", headers=organiser).status_code == 403
    assert pool["id"]
