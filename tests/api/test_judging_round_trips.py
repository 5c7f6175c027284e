"""Judging requests stay a handful of database statements each: an assessor's every keypress pays for them."""

from __future__ import annotations

from tests.api.helpers import assign, campaign_with_counted_runs, counted


def test_next_and_verdict_take_four_statements_each(make_campaign, client, organiser, sessions):
    campaign, pool = campaign_with_counted_runs(make_campaign, client, organiser)
    headers = assign(client, organiser, campaign, pool, "quick")
    engine = sessions.kw["bind"]
    warm = client.post("/api/judging/next", headers=headers).json()  # the pool's connections are in use, not fresh
    client.post(f"/api/judging/items/{warm['task_id']}", json={"verdict": "not_relevant"}, headers=headers)
    with counted(engine) as next_statements:
        item = client.post("/api/judging/next", headers=headers)
    assert item.status_code == 200
    # the token (naming the audit actor), pool + own lease, first-round candidate, lease + blind view
    assert len(next_statements) == 4, next_statements
    with counted(engine) as verdict_statements:
        judged = client.post(
            f"/api/judging/items/{item.json()['task_id']}", json={"verdict": "relevant"}, headers=headers
        )
    assert judged.status_code == 200 and judged.json()["verdict"] == "relevant"
    # the token before the body is read, the audit actor, the locked task, judgement + change + task + view
    assert len(verdict_statements) == 4, verdict_statements
