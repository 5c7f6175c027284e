"""The audit trail over REST: every state change of a campaign's loop, with who, when, before and after."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from app.services.auth import authenticate
from app.storage.models import Judgement, JudgementChange
from tests.api.test_evaluations import wait_done
from tests.api.test_pools import judge_all, make_assessor, setup_campaign


def _token_id(sessions, headers: dict[str, str]) -> int:  # type: ignore[no-untyped-def]
    """The id of the token in `headers`."""
    with sessions() as session:
        return authenticate(session, headers["Authorization"].removeprefix("Bearer ")).token_id


def _all_events(client, organiser, campaign_id: int, **params: object) -> list[dict]:  # type: ignore[no-untyped-def]
    """Every audit event of a campaign, page by page."""
    events: list[dict] = []
    after = None
    while True:
        query = {**params, **({"after": after} if after is not None else {})}
        response = client.get(f"/api/campaigns/{campaign_id}/audit", params=query, headers=organiser)
        assert response.status_code == 200, response.text
        page = response.json()
        events += page["events"]
        if page["next"] is None:
            return events
        after = page["next"]


def test_the_loop_leaves_a_trail_of_who_changed_what(make_campaign, client, organiser, sessions):
    organiser_token = _token_id(sessions, organiser)
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=20, seed=3)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 2, "seed": 1}, headers=organiser
    ).json()
    assessor_id, assessor = make_assessor(client, organiser, campaign, "aud")
    assessor_token = _token_id(sessions, assessor)
    client.post(
        f"/api/pools/{pool['id']}/assignments",
        headers=organiser,
        json={"assignments": [{"topic": t, "assessor_id": assessor_id} for t in campaign.topics]},
    )
    seen = judge_all(client, assessor, lambda item: "relevant")
    # the assessor changes one verdict to unsure; the organiser adjudicates it
    changed = seen[0]["task_id"]
    response = client.post(
        f"/api/judging/items/{changed}", json={"verdict": "unsure", "change": True}, headers=assessor
    )
    assert response.status_code == 200, response.text
    (pending,) = client.get(f"/api/pools/{pool['id']}/adjudication", headers=organiser).json()
    response = client.post(
        f"/api/pools/{pool['id']}/adjudication",
        headers=organiser,
        json={"pool_item_id": pending["pool_item_id"], "verdict": "not_relevant"},
    )
    assert response.status_code == 204, response.text
    qrels = client.post(f"/api/pools/{pool['id']}/qrels", json={"label": "final"}, headers=organiser).json()
    evaluation = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser).json()
    wait_done(client, organiser, evaluation["id"])
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201

    events = _all_events(client, organiser, campaign.id, limit=7)
    assert [e["id"] for e in events] == sorted({e["id"] for e in events})  # pages neither overlap nor skip
    by_organiser = {"kind": "token", "token_id": organiser_token, "role": "organiser"}

    def find(table: str, action: str, **after: object) -> list[dict]:
        return [
            e
            for e in events
            if e["table_name"] == table
            and e["action"] == action
            and all((e["after"] or {}).get(k) == v for k, v in after.items())
        ]

    (created,) = find("campaigns", "insert")
    assert created["actor"] == by_organiser and created["after"]["status"] == "draft"
    statuses = [
        (e["before"]["status"], e["after"]["status"]) for e in find("campaigns", "update") if "status" in e["after"]
    ]
    assert statuses == [
        ("draft", "open"),
        ("open", "closed"),
        ("closed", "pooled"),
        ("pooled", "judging"),
        ("judging", "evaluated"),
        ("evaluated", "published"),
    ]
    # the worker's changes have no token behind them
    (evaluated,) = [e for e in find("campaigns", "update") if e["after"].get("status") == "evaluated"]
    assert evaluated["actor"]["kind"] == "worker" and ":" in evaluated["actor"]["process"]
    (pool_made,) = find("pools", "insert")
    assert pool_made["row_id"] == str(pool["id"]) and pool_made["actor"] == by_organiser
    # verdicts: by the assessor's token, the change with its before and after
    verdicts = find("judgements", "insert", round=1)
    assert len(verdicts) == len(seen)
    assert {e["actor"]["token_id"] for e in verdicts} == {assessor_token}
    assert verdicts[0]["actor"] == {
        "kind": "token",
        "token_id": assessor_token,
        "role": "assessor",
        "campaign_id": campaign.id,
        "assessor_id": assessor_id,
    }
    (change,) = [e for e in find("judgements", "update") if "verdict" in e["after"]]
    assert (change["before"]["verdict"], change["after"]["verdict"]) == ("relevant", "unsure")
    assert change["actor"]["token_id"] == assessor_token
    assert "pool_item_id" not in change["after"]  # only the changed columns
    (adjudication,) = find("judgements", "insert", round=3)
    assert adjudication["actor"] == by_organiser and adjudication["after"]["verdict"] == "not_relevant"
    (cut,) = find("qrels_versions", "insert")
    assert cut["row_id"] == str(qrels["id"]) and cut["actor"] == by_organiser
    (queued,) = find("evaluations", "insert")
    assert queued["row_id"] == str(evaluation["id"]) and queued["actor"] == by_organiser
    done = [e for e in find("evaluations", "update") if e["after"].get("status") == "done"]
    assert len(done) == 1 and "progress" not in done[0]["after"]
    (published,) = find("leaderboard_snapshots", "insert")
    assert published["actor"] == by_organiser and "content" not in published["after"]
    tokens = find("api_tokens", "insert")
    assert {e["after"]["role"] for e in tokens} == {"team", "assessor"}
    # no secret, not even its hash, is in the trail
    assert not [e for e in tokens if "token_hash" in e["after"]]
    assert assessor["Authorization"].removeprefix("Bearer ") not in str(events)

    # the adjudication's own history names the organiser's token (SPEC section 7: who)
    with sessions() as session:
        rows = session.scalars(
            select(JudgementChange)
            .join(Judgement, Judgement.id == JudgementChange.judgement_id)
            .where(Judgement.pool_item_id == pending["pool_item_id"], Judgement.round == 3)
        ).all()
    assert [(r.changed_by_token_id, r.new_verdict.value) for r in rows] == [(organiser_token, "not_relevant")]

    # filters
    only = _all_events(client, organiser, campaign.id, table="judgements")
    assert only and {e["table_name"] for e in only} == {"judgements"}
    assert len(only) == len([e for e in events if e["table_name"] == "judgements"])
    later = (datetime.now(UTC) + timedelta(minutes=5)).isoformat()
    assert _all_events(client, organiser, campaign.id, since=later) == []
    since = events[-1]["at"]
    assert {e["id"] for e in _all_events(client, organiser, campaign.id, since=since)} >= {events[-1]["id"]}


def test_audit_is_for_the_campaigns_organisers_only(make_campaign, client, organiser):
    campaign, other = make_campaign(), make_campaign()
    _, team = campaign.team()
    assert client.get(f"/api/campaigns/{campaign.id}/audit", headers=team).status_code == 403
    own = client.get(f"/api/campaigns/{campaign.id}/audit", headers=organiser).json()["events"]
    assert own and all(e["table_name"] in ("campaigns", "teams", "api_tokens") for e in own)
    others = client.get(f"/api/campaigns/{other.id}/audit", headers=organiser).json()["events"]
    assert not {e["id"] for e in own} & {e["id"] for e in others}
    bad = client.get(f"/api/campaigns/{campaign.id}/audit", params={"table": "scores"}, headers=organiser)
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "table"
    page = client.get(f"/api/campaigns/{campaign.id}/audit", params={"limit": 1}, headers=organiser).json()
    assert len(page["events"]) == 1 and page["next"] == page["events"][0]["id"]
