"""The organiser overview over HTTP: its JSON twin and the server-rendered panel are for the campaign's organisers
only, agree with the pool progress endpoint, escape what users typed, and name the cancel endpoints that work."""

from __future__ import annotations

import pytest

from app.services.auth import create_token
from app.storage.database import session_scope
from app.storage.models import Evaluation, Role
from tests.api.helpers import auth, hold, judge_all, make_assessor, setup_campaign


def decide(item: dict[str, str]) -> str:
    """Ann's verdict on an item."""
    shot = item["shot_id"]
    return "relevant" if shot.endswith(("_1", "_2")) else "unsure" if shot.endswith("_3") else "not_relevant"


def _judging(make_campaign, client, organiser):  # type: ignore[no-untyped-def]
    """A depth-20 pool, topic 1 judged through the judging API by ann (shots *_1 and *_2 relevant, *_3 unsure);
    topic 2 hers too, topic 3 nobody's; (campaign, pool, ann's id, ann's headers, the items she judged)."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=20, seed=5)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 20, "seed": 2}, headers=organiser
    ).json()
    ann_id, ann = make_assessor(client, organiser, campaign, "ann")
    response = client.post(
        f"/api/pools/{pool['id']}/assignments",
        headers=organiser,
        json={"assignments": [{"topic": "1", "assessor_id": ann_id}]},
    )
    assert response.status_code == 201, response.text
    seen = judge_all(client, ann, decide)
    response = client.post(
        f"/api/pools/{pool['id']}/assignments",
        headers=organiser,
        json={"assignments": [{"topic": "2", "assessor_id": ann_id}]},
    )
    assert response.status_code == 201, response.text
    return campaign, pool, ann_id, ann, seen


@pytest.fixture(scope="module")
def judging(make_campaign, client, organiser):  # type: ignore[no-untyped-def]
    """That pool, built once for the module's tests that only read it."""
    return _judging(make_campaign, client, organiser)


@pytest.fixture
def own_judging(make_campaign, client, organiser):  # type: ignore[no-untyped-def]
    """That pool, new for a test that queues second opinions or jobs (the overview test expects none)."""
    return _judging(make_campaign, client, organiser)


def test_the_overview_agrees_with_the_pool_progress_and_the_judgements(judging, client, organiser):  # type: ignore[no-untyped-def]
    campaign, pool, ann_id, _, seen = judging
    response = client.get(f"/api/campaigns/{campaign.id}/overview", headers=organiser)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["campaign_id"] == campaign.id and body["pool_id"] == pool["id"] and body["status"] == "judging"
    progress = client.get(f"/api/pools/{pool['id']}/progress", headers=organiser).json()
    assert [(t["topic"], r["round"], r["total"], r["done"]) for t in body["topics"] for r in t["rounds"]] == [
        (p["topic"], p["round"], p["total"], p["done"]) for p in progress["topics"]
    ]
    sampled = {t["topic"]: t["sampled"] for t in pool["topics"]}
    topics = {t["topic"]: t for t in body["topics"]}
    assert {k: (t["judged"], t["total"]) for k, t in topics.items()} == {
        "1": (len(seen), sampled["1"]),
        "2": (0, sampled["2"]),
        "3": (0, sampled["3"]),
    }
    assert topics["1"]["relevant"] == sum(item["shot_id"].endswith(("_1", "_2")) for item in seen) > 0
    (ann,) = body["assessors"]
    assert (ann["assessor_id"], ann["judged"], ann["topics"]) == (ann_id, len(seen), ["1", "2"])
    assert ann["remaining"] == sampled["2"] and ann["mean_seconds"] is not None
    assert ann["eta_seconds"] == pytest.approx(ann["remaining"] * ann["recent_seconds"])
    assert body["judging"] == {
        "total": sum(sampled.values()),
        "done": len(seen),
        "remaining": sum(sampled.values()) - len(seen),
        "unassigned": sampled["3"],
        "eta_seconds": ann["eta_seconds"],
    }
    unsure = sorted(item["shot_id"] for item in seen if decide(item) == "unsure")
    assert body["adjudication"]["size"] == len(unsure) > 0
    assert sorted(a["shot_id"] for a in body["adjudication"]["items"]) == unsure
    assert body["second_opinions"] == {"open": 0, "leased": 0, "done": 0, "items": []}


def test_second_opinions_and_adjudication_as_the_pool_endpoints_see_them(own_judging, client, organiser):  # type: ignore[no-untyped-def]
    campaign, pool, *_ = own_judging
    queued = client.post(f"/api/pools/{pool['id']}/quality-control?min_runs=2", headers=organiser)
    assert queued.status_code == 200, queued.text
    body = client.get(f"/api/campaigns/{campaign.id}/overview", headers=organiser).json()
    assert body["second_opinions"]["open"] == queued.json()["queued"] > 0
    assert len(body["second_opinions"]["items"]) == queued.json()["queued"]
    topic_1 = next(t for t in body["topics"] if t["topic"] == "1")
    assert topic_1["rounds"][1] == {"round": 2, "total": queued.json()["queued"], "done": 0}
    queue = client.get(f"/api/pools/{pool['id']}/adjudication", headers=organiser).json()
    assert body["adjudication"]["items"] == [
        {k: q[k] for k in ("pool_item_id", "topic", "shot_id", "verdicts")} for q in queue
    ]
    assert body["adjudication"]["size"] == len(queue) > 0


def test_cancel_urls_cancel(own_judging, client, organiser, sessions):  # type: ignore[no-untyped-def]
    campaign, *_ = own_judging
    with session_scope(sessions) as session:
        job = Evaluation(campaign_id=campaign.id, status="queued")
        hold(session, job)
        job_id = job.id
    body = client.get(f"/api/campaigns/{campaign.id}/overview", headers=organiser).json()
    (listed,) = body["jobs"]
    assert listed["id"] == job_id and listed["cancellable"] and listed["url"] == f"/api/evaluations/{job_id}"
    assert listed["cancel_url"] == f"/api/evaluations/{job_id}/cancel"
    assert client.post(listed["cancel_url"], headers=organiser).status_code == 200
    (after,) = client.get(f"/api/campaigns/{campaign.id}/overview", headers=organiser).json()["jobs"]
    assert after["status"] == "cancelled" and not after["cancellable"] and after["finished_at"] is not None


@pytest.mark.parametrize("path", ["/api/campaigns/{id}/overview", "/organise/campaigns/{id}/panel"])
def test_only_the_campaigns_organisers_see_it(judging, make_campaign, client, organiser, sessions, path):  # type: ignore[no-untyped-def]
    campaign, _, _, ann, _ = judging
    url = path.format(id=campaign.id)
    _, team = campaign.team()
    other = make_campaign()
    with session_scope(sessions) as session:
        mine = auth(create_token(session, Role.organiser, campaign_id=campaign.id))
        theirs = auth(create_token(session, Role.organiser, campaign_id=other.id))
    assert client.get(url, headers=organiser).status_code == 200
    assert client.get(url, headers=mine).status_code == 200
    assert client.get(url, headers=team).status_code == 403
    assert client.get(url, headers=ann).status_code == 403
    assert client.get(url, headers=theirs).status_code == 404
    assert client.get(url).status_code == 401
    assert client.get(path.format(id=2_000_000_000), headers=organiser).status_code == 404
    assert client.get(path.format(id=0), headers=organiser).status_code == 422


def test_the_page_shell_holds_no_data_and_the_panel_escapes(make_campaign, client, organiser):  # type: ignore[no-untyped-def]
    campaign = make_campaign(name="<script>alert(1)</script> & co")
    shell = client.get(f"/organise/campaigns/{campaign.id}")
    assert shell.status_code == 200 and shell.headers["content-type"].startswith("text/html")
    assert "alert(1)" not in shell.text and "topic 1" not in shell.text
    assert (
        shell.headers["cache-control"] == "no-store"
        and "default-src 'self'" in shell.headers["content-security-policy"]
    )
    assert f'href="/api/campaigns/{campaign.id}/overview"' in shell.text  # its JSON twin
    panel = client.get(f"/organise/campaigns/{campaign.id}/panel", headers=organiser)
    assert panel.status_code == 200 and panel.headers["cache-control"] == "no-store"
    assert "<script>" not in panel.text and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in panel.text
    assert "No pool yet" in panel.text
