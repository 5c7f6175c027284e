"""Intervals through the API: a depth pool cut before it is fully judged gives wider intervals than its stored values
alone (the pool's unjudged items imputed), one cut when judged in full does not; the significance endpoints take a
correction; the published board and report carry the intervals."""

from __future__ import annotations

import numpy as np

from app.evaluation.statistics import intervals
from app.services import scores
from app.storage.models import Evaluation
from tests.api.helpers import assign, evaluate_campaign, judge_all, judge_one, live_relevant, setup_campaign


def test_a_depth_pool_cut_before_it_is_judged_widens_its_intervals(make_campaign, client, organiser, sessions):
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=4, depth=60, seed=5)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 10, "seed": 1}, headers=organiser
    ).json()
    headers = [assign(client, organiser, campaign, pool, f"judge{t}", topic=t) for t in campaign.topics]
    for judge in headers:
        for _ in range(6):
            judge_one(client, judge)
    cut = client.post(
        f"/api/pools/{pool['id']}/qrels", json={"label": "partial", "allow_incomplete": True}, headers=organiser
    )
    assert cut.status_code == 201, cut.text
    evaluate_campaign(client, organiser, campaign.id, qrels_version_id=cut.json()["id"], measures=["AP", "P@10"])
    board = client.get(f"/api/campaigns/{campaign.id}/leaderboard?measure=AP", headers=organiser).json()
    assert board["interval"]["widening"] == "imputation+bias" and board["interval"]["sampled"] is True
    with sessions() as session:
        table = scores.score_table(session, session.get(Evaluation, board["evaluation_id"]))
    rows = {r["run_id"]: r for r in board["rows"]}
    plain = intervals.mean_intervals(np.nan_to_num(table.values[:, 0, :]), n_resamples=10_000, seed=0)
    for i, run in enumerate(table.runs):
        low, high = rows[run.id]["ci_low"], rows[run.id]["ci_high"]
        assert high - low > plain.high[i] - plain.low[i]  # wider, and cut to AP's range [0, 1] only
        assert (low < plain.low[i] or low == 0.0) and (high > plain.high[i] or high == 1.0)
        assert rows[run.id]["ci_low"] <= rows[run.id]["score"] <= rows[run.id]["ci_high"]

    for judge in headers:
        judge_all(client, judge, lambda item: "relevant" if live_relevant(item["shot_id"]) else "not_relevant")
    complete = client.post(f"/api/pools/{pool['id']}/qrels", json={"label": "complete"}, headers=organiser)
    assert complete.status_code == 201, complete.text
    evaluate_campaign(client, organiser, campaign.id, qrels_version_id=complete.json()["id"], measures=["AP"])
    board = client.get(f"/api/campaigns/{campaign.id}/leaderboard?measure=AP", headers=organiser).json()
    assert board["interval"]["widening"] is None and board["interval"]["sampled"] is False
    assert all(r["ci_low"] <= r["score"] <= r["ci_high"] for r in board["rows"])


def test_significance_takes_a_correction_and_the_published_documents_carry_intervals(evaluated, client, organiser):
    campaign = evaluated[0]
    holm = client.get(f"/api/campaigns/{campaign.id}/significance?measure=xinfAP", headers=organiser).json()
    bh = client.get(f"/api/campaigns/{campaign.id}/significance?measure=xinfAP&correction=bh", headers=organiser)
    assert bh.status_code == 200 and (holm["correction"], bh.json()["correction"]) == ("holm", "bh")
    assert len(holm["pairs"]) == len(holm["runs"]) * (len(holm["runs"]) - 1) // 2
    assert all(p["adjusted_pvalue"] >= p["pvalue"] for p in holm["pairs"])
    assert set(holm["tiers"]) == set(holm["runs"]) == set(holm["rank_intervals"])
    wrong = client.get(f"/api/campaigns/{campaign.id}/significance?correction=bonferroni", headers=organiser)
    assert wrong.status_code == 422
    board = client.get(f"/api/campaigns/{campaign.id}/leaderboard?measure=xinfAP", headers=organiser).json()
    assert board["interval"]["sampled"] is True and board["interval"]["widening"] == "jackknife"
    for row in board["rows"]:
        assert row["ci_low"] <= row["score"] <= row["ci_high"] and row["level"] == 0.95
        assert 1 <= row["rank_low"] <= row["rank_high"] <= len(board["rows"]) and row["tier"] >= 1
    report = client.get(f"/api/campaigns/{campaign.id}/report", headers=organiser).json()
    assert report["interval"]["level"] == 0.95
    assert all(r["ci_low"] is not None for group in report["overall"].values() for r in group)
