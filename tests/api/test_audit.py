"""The audit trail over REST: every state change of a campaign's loop, with who, when, before and after."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import select

from app.services.auth import authenticate
from app.storage.models import Judgement, JudgementChange
from tests.api.helpers import ANN, judge_all, make_assessor, mark_all, setup_campaign, wait_done


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
    assert own and all(e["table_name"] in ("campaigns", "topics", "teams", "api_tokens") for e in own)
    others = client.get(f"/api/campaigns/{other.id}/audit", headers=organiser).json()["events"]
    assert not {e["id"] for e in own} & {e["id"] for e in others}
    bad = client.get(f"/api/campaigns/{campaign.id}/audit", params={"table": "scores"}, headers=organiser)
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "table"
    page = client.get(f"/api/campaigns/{campaign.id}/audit", params={"limit": 1}, headers=organiser).json()
    assert len(page["events"]) == 1 and page["next"] == page["events"][0]["id"]


def test_runs_topics_collection_and_ground_truth_changes_are_kept(make_campaign, client, organiser, sessions):
    """SPEC section 7: a team deleting its run leaves who, when and the run as it was (without its upload); topics,
    the collection and uploaded moment ground truth are kept too (bulk tables: one event per statement)."""
    organiser_token = _token_id(sessions, organiser)
    by_organiser = {"kind": "token", "token_id": organiser_token, "role": "organiser"}
    campaign = make_campaign(n_topics=2)
    assert campaign.set_collection("a\tv1\t0\t4\nb\tv1\t4\t9\nc\tv2\t0\t3\n").status_code == 200
    assert campaign.set_collection("a\tv1\t0\t4\nb\tv1\t4\t9\n").status_code == 200
    team_id, team = campaign.team()
    team_token = _token_id(sessions, team)
    uploaded = campaign.upload(team, "1 Q0 a 1 2.5 gone\n2 Q0 b 1 1 gone\n", name="gone", description="oops")
    assert uploaded.status_code == 201, uploaded.text
    run = uploaded.json()
    assert client.delete(f"/api/runs/{run['id']}", headers=team).status_code == 204
    events = _all_events(client, organiser, campaign.id)

    def of(table: str) -> list[tuple[str, dict | None, dict | None]]:
        return [(e["action"], e["before"], e["after"]) for e in events if e["table_name"] == table]

    inserted, deleted = [e for e in events if e["table_name"] == "runs"]
    assert (deleted["action"], deleted["row_id"]) == ("delete", str(run["id"]))
    assert deleted["actor"] == {"kind": "token", "token_id": team_token, "role": "team", "campaign_id": campaign.id,
                                "team_id": team_id}  # fmt: skip
    assert deleted["after"] is None and deleted["at"] >= inserted["at"]
    before = deleted["before"]
    assert {k: before[k] for k in ("name", "team_id", "sha256", "n_entries", "description")} == {
        "name": "gone",
        "team_id": team_id,
        "sha256": run["sha256"],
        "n_entries": 2,
        "description": "oops",
    }
    assert "content" not in before and "content" not in inserted["after"]  # the upload is not copied
    assert inserted["actor"]["token_id"] == team_token and inserted["after"]["name"] == "gone"

    topics = [e for e in events if e["table_name"] == "topics"]
    assert [(e["action"], e["after"]["number"], e["actor"]) for e in topics] == [
        ("insert", "1", by_organiser),
        ("insert", "2", by_organiser),
    ]
    assert of("collection_items") == [
        ("insert", None, {"shots": 3, "videos": 2}),  # the first upload
        ("delete", {"shots": 3, "videos": 2}, None),  # replaced by the second, in one transaction
        ("insert", None, {"shots": 2, "videos": 1}),
    ]
    assert all(e["actor"] == by_organiser for e in events if e["table_name"] == "collection_items")
    filtered = _all_events(client, organiser, campaign.id, table="collection_items")
    assert [e["action"] for e in filtered] == ["insert", "delete", "insert"]

    moments = make_campaign(n_topics=2, task_kind="moments")
    for truth in ("1\tvidA\t10\t20\n2\tvidB\t0\t5\n", "1\tvidA\t10\t20\n2\tvidB\t0\t5\n", "1\tvidA\t11\t20\n"):
        response = client.put(
            f"/api/campaigns/{moments.id}/ground-truth", files={"file": ("gt.tsv", truth.encode())}, headers=organiser
        )
        assert response.status_code == 200, response.text
    changes = [e for e in _all_events(client, organiser, moments.id) if e["table_name"] == "ground_truth_segments"]
    assert [(e["action"], (e["before"] or e["after"])["segments"]) for e in changes] == [
        ("insert", 2),
        ("delete", 2),
        ("insert", 2),
        ("delete", 2),
        ("insert", 1),
    ]
    assert {e["actor"]["token_id"] for e in changes} == {organiser_token}
    first, again, last = (e["after"]["sha256"] for e in changes if e["action"] == "insert")
    assert first == again != last  # the same ground truth uploaded twice, then a changed one
    assert changes[3]["before"] == changes[2]["after"] == {"segments": 2, "topics": 2, "sha256": first}


def test_marks_and_cut_moment_ground_truth_are_kept(moment_pool, client, organiser):
    campaign, pool, ann, _ = moment_pool
    mark_all(client, ann, ANN)
    cut = client.post(f"/api/moment-pools/{pool['id']}/truth", json={"label": "v1"}, headers=organiser)
    assert cut.status_code == 201, cut.text
    marks = _all_events(client, organiser, campaign.id, table="moment_judgements")
    assert len(marks) == 5 and {e["action"] for e in marks} == {"insert"}
    (segments,) = _all_events(client, organiser, campaign.id, table="moment_truth_segments")
    assert (segments["action"], segments["before"]) == ("insert", None)
    assert {k: segments["after"][k] for k in ("qrels_versions", "segments", "topics")} == {
        "qrels_versions": [cut.json()["id"]],
        "segments": 4,
        "topics": 2,
    }
