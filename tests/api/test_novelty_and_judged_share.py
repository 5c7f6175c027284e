"""The novelty score on the boards (live and published), in the report and in the team's run report, and the report's
judged share as the TRECVID overview states it, each against a computation of its own from the exported qrels and
runs."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import update

from app.evaluation.formats.trec_files import parse_qrels, parse_trec_run
from app.services import run_blocks, team_reports
from app.services.auth import authenticate
from app.storage.models import Run
from tests.api.helpers import wait_done
from tests.evaluation.analyses.brute import trec_order

MAX_RESULTS = 100  # setup_campaign's
SAMPLED = (11, 60)  # build_judged_campaign's strata "1-10:1.0, 11-60:0.5": the sampled ranks


def _novelty(grade: dict[tuple[str, str], int], orders: list[dict[str, list[str]]], teams: list[int]) -> list[float]:
    """Each run's novelty score by plain sets: 1 per relevant shot no other team returned (no penalty)."""
    returned = [{(t, d) for t, docs in order.items() for d in docs} for order in orders]
    scores = []
    for r, mine in enumerate(returned):
        others = set().union(*(returned[j] for j in range(len(returned)) if teams[j] != teams[r]))
        scores.append(float(sum(1 for p in mine if p not in others and grade.get(p, -1) >= 1)))
    return scores


def test_novelty_scores_and_judged_share_equal_their_own_computation(judged_campaign, client, organiser, sessions):
    campaign, _, qrels_version, _ = judged_campaign
    qrels = parse_qrels(
        client.get(f"/api/qrels/{qrels_version['id']}/download?format=sample_eval", headers=organiser).content
    )
    runs = client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()
    tables = [parse_trec_run(client.get(f"/api/runs/{r['id']}/download", headers=organiser).content) for r in runs]
    with sessions() as session:  # the first run is a novelty run
        session.execute(update(Run).where(Run.id == runs[0]["id"]).values(novelty=True))
        session.commit()
    evaluation = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser).json()
    wait_done(client, organiser, evaluation["id"])

    grade = dict(zip(zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True), qrels.grades.tolist(), strict=True))
    orders = [trec_order(table, MAX_RESULTS) for table in tables]
    expected = _novelty(grade, orders, [r["team_id"] for r in runs])
    assert expected[0] != 0 and len(set(expected)) > 1, expected
    by_id = {r["id"]: e for r, e in zip(runs, expected, strict=True)}

    # the live board: the novelty run's row has its score, the others none
    board = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=organiser).json()
    shown = {row["run_id"]: row["novelty_score"] for row in board["rows"]}
    assert shown == {r["id"]: (by_id[r["id"]] if i == 0 else None) for i, r in enumerate(runs)}

    # the report: every run's score, novelty runs marked
    report = client.get(f"/api/campaigns/{campaign.id}/report", headers=organiser).json()
    scored = report["novelty_scores"]
    assert scored["penalty"] == 0.0 and scored["topics"] == len(campaign.topics)
    assert {row["run_id"]: row["score"] for row in scored["runs"]} == pytest.approx(by_id)
    assert [row["run_id"] for row in scored["runs"] if row["novelty_run"]] == [runs[0]["id"]]
    assert [row["score"] for row in scored["runs"]] == sorted((row["score"] for row in scored["runs"]), reverse=True)

    # judged share: each (run, topic) list's entries at the sampled ranks 11-60 that the qrels judge (grade >= 0)
    first, last = SAMPLED
    topics = sorted(set(qrels.topics.tolist()))
    by_run = [
        [
            sum(grade.get((t, d), -1) >= 0 for d in window) / len(window)
            for t in topics
            if (window := o.get(t, [])[first - 1 : last])
        ]
        for o in orders
    ]
    shares = [s for run_shares in by_run for s in run_shares]
    share = report["judged_share"]
    assert (share["first_rank"], share["last_rank"], share["lists"]) == (first, last, len(shares))
    assert [share["min"], share["max"], share["mean"]] == pytest.approx([min(shares), max(shares), np.mean(shares)])
    assert 0 < share["min"] < 1  # rate 0.5: some of each list, not all
    assert [row["mean"] for row in share["runs"]] == pytest.approx([np.mean(s) for s in by_run])

    # the team's own run report
    token = client.post(f"/api/teams/{runs[0]['team_id']}/tokens", json={}, headers=organiser).json()["token"]
    with sessions() as session:
        mine = team_reports.run_report(session, authenticate(session, token), runs[0]["id"])["found_only_here"]
    assert mine["novelty_score"] == pytest.approx(expected[0])
    assert sum(t["novelty"] for t in mine["topics"]) == pytest.approx(expected[0])

    # published: the same numbers, frozen with the snapshot; the pages show them
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    public = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").json()
    assert {row["run_id"]: row["novelty_score"] for row in public["rows"]} == shown
    page = client.get(f"/campaigns/{campaign.id}/leaderboard").text
    assert f"novelty score {expected[0]:g}<" in page and "shows its TRECVID novelty score" in page
    page = client.get(f"/campaigns/{campaign.id}/report").text
    assert ">Novelty scores<" in page and f"at ranks {first}–{last} (the sampled strata)" in page
    assert f"at minimum {100 * min(shares):.1f} %, at maximum {100 * max(shares):.1f} %" in page


def test_a_team_report_read_a_run_at_a_time_is_the_report_of_one_block(
    judged_campaign, client, organiser, sessions, monkeypatch
):
    """A team's run report reads every run in blocks within the memory budget for its unique hits and novelty
    score: a budget of one run a block gives the report of one block (the campaign report's own test is in
    test_report_sections.py)."""
    campaign, _, _, _ = judged_campaign
    evaluation = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser).json()
    wait_done(client, organiser, evaluation["id"])
    run = client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()[0]
    token = client.post(f"/api/teams/{run['team_id']}/tokens", json={}, headers=organiser).json()["token"]
    with sessions() as session:
        whole = team_reports.run_report(session, authenticate(session, token), run["id"])["found_only_here"]
    read: list[list[int]] = []
    load = run_blocks.load_runs
    monkeypatch.setattr(run_blocks, "load_runs", lambda session, ids: read.append(list(ids)) or load(session, ids))
    monkeypatch.setattr(run_blocks, "DEFAULT_MEMORY_MB", 1e-9)
    with sessions() as session:
        blocked = team_reports.run_report(session, authenticate(session, token), run["id"])["found_only_here"]
    assert blocked == whole and whole["found"] > 0
    assert len(read) > 2 and all(len(ids) == 1 for ids in read)  # one run a block
