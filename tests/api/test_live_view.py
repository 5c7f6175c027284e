"""The live view and budget advisor of a pool through the API: every number equals the numeric core called directly
on the same judgements (read back from the database), the two give one stop/continue (the budget's at its
defaults), topics without an estimate are never called settled, the per-pool cache holds until a verdict arrives,
and only the campaign's organiser may look."""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
import pytest
from sqlalchemy import select

from app.evaluation.analyses.budget import (
    allocation,
    judging_advice,
    relevant_estimate,
    tau_advice,
    topic_samples,
    xinfap_variance,
)
from app.evaluation.analyses.leave_out import leave_out
from app.evaluation.analyses.lines import index_lines
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.records import Qrels
from app.services import live_view, run_blocks
from app.services.auth import authenticate
from app.services.run_arrays import load_runs
from app.storage.database import session_scope
from app.storage.models import Pool, PoolItem, Run, Team, Topic
from tests.api.helpers import LIVE_DEPTH, judge_one, live_judged_pool, live_relevant


def _reference(sessions, pool_id: int, seen: list[dict]):
    """The pool's lines (topic, shot, stratum), the judged ones' grades, and the runs with their teams, read back."""
    with session_scope(sessions) as session:
        pool = session.get(Pool, pool_id)
        items = session.execute(
            select(Topic.number, PoolItem.docno, PoolItem.stratum, PoolItem.sampled)
            .join(Topic, Topic.id == PoolItem.topic_id)
            .where(PoolItem.pool_id == pool_id)
        ).all()
        run_ids = list(pool.params["run_ids"])
        rows = {r: (n, t) for r, n, t in session.execute(select(Run.id, Run.name, Team.name).join(Team).where(
            Run.id.in_(run_ids)))}  # fmt: skip
        prepared = prepare_runs(load_runs(session, run_ids), 100, names=[rows[r][0] for r in run_ids])
    topics = np.array([i[0] for i in items])
    docs = np.array([i[1] for i in items])
    strata = np.array([i[2] for i in items], dtype=np.int64)
    judged = {(s["topic"], s["shot_id"]): int(live_relevant(s["shot_id"])) for s in seen}
    grades = np.array([judged.get((t, d), -1) for t, d in zip(topics, docs, strict=True)], dtype=np.int64)
    sampled = np.array([i[3] for i in items], dtype=bool)
    return topics, docs, strata, grades, prepared, [rows[r][1] for r in run_ids], sampled


def _cells(topics, strata, grades, topic):
    """[stratum] pooled, judged, relevant of one topic."""
    mine = topics == topic
    return [
        [int(np.sum(mine & (strata == s) & cond)) for s in (1, 2)]
        for cond in (np.ones(len(grades), bool), grades >= 0, grades >= 1)
    ]


def test_live_view_equals_the_core_on_the_same_judgements(make_campaign, client, organiser, sessions):
    campaign, pool, _, seen = live_judged_pool(make_campaign, client, organiser, 50)
    response = client.get(f"/api/pools/{pool['id']}/live", headers=organiser)
    assert response.status_code == 200, response.text
    live = response.json()
    topics, docs, strata, grades, prepared, teams, sampled = _reference(sessions, pool["id"], seen)
    assert live["judgements"] == 150 and live["strata"] == [1, 2] and live["random_order"]
    assert [t["topic"] for t in live["topics"]] == campaign.topics
    for row in live["topics"]:
        pooled, judged, relevant = _cells(topics, strata, grades, row["topic"])
        expected = relevant_estimate([pooled], [judged], [relevant])
        assert (row["pooled"], row["judged"], row["relevant"]) == (sum(pooled), sum(judged), sum(relevant))
        assert row["relevant_per_100"] == pytest.approx(100 * sum(relevant) / sum(judged))
        assert row["estimated_relevant"] == pytest.approx(expected.estimate[0])
        assert (row["low"], row["high"]) == pytest.approx((expected.low[0], expected.high[0]))
        assert row["advice"] in ("stop", "continue")
    assert sum(t["judged"] for t in live["topics"]) == 150
    # the last-window rate: the assessor's verdicts per topic in the order given (window 100 > verdicts per topic)
    for row in live["topics"]:
        mine = [live_relevant(s["shot_id"]) for s in seen if s["topic"] == row["topic"]][-live["window"] :]
        assert row["recent_relevant_per_100"] == pytest.approx(100 * sum(mine) / len(mine))
    so_far = Qrels(topics[grades >= 0], docs[grades >= 0], grades[grades >= 0])
    reference = leave_out(so_far, prepared, units=teams, by="team", depth=LIVE_DEPTH, max_results=100)
    reusability = live["reusability"]
    assert reusability["max_drop"] == pytest.approx(reference.max_drop)
    assert reusability["tau_b"] == pytest.approx(reference.tau_b)
    assert [u["team"] for u in reusability["teams"]] == reference.units
    assert [u["tau_b"] for u in reusability["teams"]] == pytest.approx(reference.unit_tau_b.tolist())
    assert [r["map"] for r in reusability["runs"]] == pytest.approx(reference.original.tolist())
    assert max(r["map"] for r in reusability["runs"]) > 0

    # the budget advisor: Neyman allocation to an absolute width at 90 %, xinfAP variance by the seeded bootstrap
    url = f"/api/pools/{pool['id']}/budget?target_width=4&alpha=0.1&replicates=40&seed=5"
    budget = client.get(url, headers=organiser).json()
    z = NormalDist().inv_cdf(0.95)
    assert budget["z"] == pytest.approx(z)
    cells = [_cells(topics, strata, grades, row["topic"]) for row in budget["topics"]]
    for row, (pooled, judged, relevant) in zip(budget["topics"], cells, strict=True):
        expected = relevant_estimate([pooled], [judged], [relevant], z=z)
        more = allocation([pooled], [judged], [relevant], target_width=4.0, z=z)[0].tolist()
        assert row["allocation_per_stratum"] == {"1": more[0], "2": more[1]}
        assert (row["low"], row["high"]) == pytest.approx((expected.low[0], expected.high[0]))
    stratified = Qrels(topics, docs, grades, strata=strata)
    index = index_lines(prepared, stratified)
    variance = xinfap_variance(index, replicates=40, seed=5)
    assert budget["xinfap"]["topics"] == variance.topics
    low, high = variance.intervals(z)
    means, mean_low, mean_high = variance.mean_intervals(z)
    for i, run in enumerate(budget["xinfap"]["runs"]):
        assert run["run"] == variance.runs[i]
        assert [t["xinfap"] for t in run["per_topic"]] == pytest.approx(variance.point[i].tolist())
        assert [t["variance"] for t in run["per_topic"]] == pytest.approx(variance.variance[i].tolist())
        assert [t["ci_low"] for t in run["per_topic"]] == pytest.approx(low[i].tolist())
        assert [t["ci_high"] for t in run["per_topic"]] == pytest.approx(high[i].tolist())
        assert run["mean_variance"] == pytest.approx(float(variance.mean_variance[i]))
        assert (run["estimate"], run["ci_low"], run["ci_high"]) == pytest.approx((means[i], mean_low[i], mean_high[i]))
        assert run["level"] == pytest.approx(0.9) and run["ci_low"] <= run["estimate"] <= run["ci_high"]
    assert np.all(variance.variance > 0)  # half of stratum 2 is unjudged: the estimates do vary
    # the one stop/continue: the core's rule on the same counts, with the tau advice of the same replicates
    tau = tau_advice(variance, topic_samples(index)[1], 0.9)
    queued = [[int(np.sum((topics == t) & (strata == s) & sampled & (grades < 0))) for s in (1, 2)]
              for t in variance.topics]  # fmt: skip
    advice = judging_advice(variance.topics, [1, 2], np.array([c[0] for c in cells], float),
                            np.array([c[1] for c in cells], float), np.array([c[2] for c in cells], float), tau=tau,
                            queued=np.array(queued), target_width=4.0, z=z)  # fmt: skip
    assert budget["advice"] == {k: v for k, v in advice.items() if k != "topics"}
    assert [(row["advice"], row["more_per_stratum"]) for row in budget["topics"]] == [
        (rule["advice"], rule["more_per_stratum"]) for rule in advice["topics"]
    ]
    assert budget["tau"]["target_tau"] == 0.9 and budget["tau"]["expected_tau"] == pytest.approx(tau["expected_tau"])
    assert client.get(url, headers=organiser).json() == budget  # seeded: the same answer again
    # the live view's advice is the budget advisor's at its defaults, word for word
    default = client.get(f"/api/pools/{pool['id']}/budget", headers=organiser).json()
    assert live["advice"] == default["advice"]
    assert [(t["advice"], t["more_per_stratum"]) for t in live["topics"]] == [
        (t["advice"], [t["more_per_stratum"]["1"], t["more_per_stratum"]["2"]]) for t in default["topics"]
    ]


def test_topics_without_judgements_are_never_settled(make_campaign, client, organiser):
    # one verdict per topic: no sampled stratum has two judged docs, so no topic has an estimate and no prior can be
    # built from the judged ones; both views say continue, name every topic, and give no expected tau
    campaign, pool, _, _ = live_judged_pool(make_campaign, client, organiser, 1)
    live = client.get(f"/api/pools/{pool['id']}/live", headers=organiser).json()
    budget = client.get(f"/api/pools/{pool['id']}/budget", headers=organiser).json()
    assert live["advice"] == budget["advice"]
    assert budget["advice"]["advice"] == "continue" and budget["advice"]["expected_tau"] is None
    assert budget["advice"]["unestimated_topics"] == campaign.topics
    assert {item["topic"] for item in budget["advice"]["next"]} == set(campaign.topics)
    assert all(t["advice"] == "continue" and "unestimated" in t["reasons"] for t in live["topics"])
    assert budget["xinfap"]["prior_topics"] == campaign.topics
    for run in budget["xinfap"]["runs"]:  # no estimate: the widest interval, never a narrow one around 0
        assert run["estimate"] is None and (run["ci_low"], run["ci_high"]) == (0.0, 1.0)
        assert all(t["prior"] and (t["ci_low"], t["ci_high"]) == (0.0, 1.0) for t in run["per_topic"])


def test_the_cache_holds_until_the_next_verdict(make_campaign, client, organiser, sessions):
    _, pool, assessors, _ = live_judged_pool(make_campaign, client, organiser, 7)

    def view():
        with session_scope(sessions) as session:
            principal = authenticate(session, organiser["Authorization"].removeprefix("Bearer "))
            return live_view.live_view(session, principal, pool["id"])

    first = view()
    assert first["judgements"] == 21
    assert view() is first  # a poll between verdicts reuses the result
    assert client.get(f"/api/pools/{pool['id']}/live", headers=organiser).json() == first
    item = judge_one(client, assessors[1])
    after = view()
    assert after is not first and after["judgements"] == 22
    row = next(t for t in after["topics"] if t["topic"] == item["topic"])
    before = next(t for t in first["topics"] if t["topic"] == item["topic"])
    assert row["judged"] == before["judged"] + 1
    assert row["relevant"] == before["relevant"] + int(live_relevant(item["shot_id"]))
    assert view() is after
    # a changed verdict keeps the number of judgements and the last id: the cache key's latest update moves it
    flipped = "not_relevant" if live_relevant(item["shot_id"]) else "relevant"
    response = client.post(
        f"/api/judging/items/{item['task_id']}", json={"verdict": flipped, "change": True}, headers=assessors[1]
    )
    assert response.status_code == 200, response.text
    regraded = view()
    assert regraded is not after and regraded["judgements"] == 22
    row = next(t for t in regraded["topics"] if t["topic"] == item["topic"])
    assert row["judged"] == before["judged"] + 1 and row["relevant"] == before["relevant"] + int(flipped == "relevant")


def test_only_the_organiser_sees_the_live_view(make_campaign, client, organiser):
    campaign, pool, assessors, _ = live_judged_pool(make_campaign, client, organiser, 1)
    _, team = campaign.team()
    for path in ("live", "budget?replicates=2"):
        url = f"/api/pools/{pool['id']}/{path}"
        assert client.get(url, headers=team).status_code == 403
        assert client.get(url, headers=assessors[0]).status_code == 403
        assert client.get(url).status_code == 401
    assert client.get("/api/pools/999999999/live", headers=organiser).status_code == 404
    assert client.get(f"/api/pools/{pool['id']}/budget?replicates=100000", headers=organiser).status_code == 422
    budget = f"/api/pools/{pool['id']}/budget?replicates=2"
    assert client.get(f"{budget}&alpha=5e-324", headers=organiser).status_code == 422  # 1 - alpha/2 rounds to 1
    extreme = client.get(f"{budget}&alpha=1e-9&target_width=1e-6", headers=organiser)
    assert extreme.status_code == 200, extreme.text


def test_a_board_read_a_run_at_a_time_shows_the_numbers_of_one_block(
    make_campaign, client, organiser, sessions, monkeypatch
):
    """The board reads the pool's runs a block at a time within the memory budget and keeps only their entries at
    the pool's lines: a budget of one run a block gives the live view and the budget of one block."""
    _, pool, _, _ = live_judged_pool(make_campaign, client, organiser, 7)
    views = []
    for memory_mb in (run_blocks.DEFAULT_MEMORY_MB, 1e-9):
        monkeypatch.setattr(run_blocks, "DEFAULT_MEMORY_MB", memory_mb)
        live_view._CACHE.clear()
        live = client.get(f"/api/pools/{pool['id']}/live", headers=organiser).json()
        budget = client.get(f"/api/pools/{pool['id']}/budget?replicates=20", headers=organiser).json()
        views.append((live, budget))
    assert views[0] == views[1]
    assert views[0][0]["judgements"] == 21 and views[0][0]["reusability"]["runs"]
