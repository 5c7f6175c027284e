"""Analyses over REST: background jobs whose results agree with brute-force references on the exported files."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.measures.evaluate import evaluate
from app.evaluation.pools.builders import rank_rows
from app.evaluation.records import Qrels
from app.evaluation.statistics.significance import discriminative_power, pairwise_randomization
from tests.api.helpers import assert_svg_figure, run_analysis, start_analysis, wait_done


def test_leave_one_team_out_equals_brute_force(evaluated, client, organiser):
    campaign, runs, tables, qrels, _ = evaluated
    result = run_analysis(client, organiser, campaign.id, "leave-out", by="team", measure="AP")
    teams = client.get(f"/api/campaigns/{campaign.id}/teams", headers=organiser).json()
    team_of = {t["id"]: t["name"] for t in teams}
    run_team = [team_of[r["team_id"]] for r in runs]
    # brute force: a qrels line is removed when only that team's runs rank its shot within the pool depth (60)
    run_index, topics, docs, ranks = rank_rows(tables)
    within = ranks <= 60
    owners: dict[tuple[str, str], set[str]] = {}
    for i, t, d in zip(run_index[within].tolist(), topics[within].tolist(), docs[within].tolist(), strict=True):
        owners.setdefault((t, d), set()).add(run_team[i])
    for r, run in enumerate(runs):
        team = run_team[r]
        keep = np.array(
            [
                owners.get((t, d), set()) != {team}
                for t, d in zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True)
            ]
        )
        reduced = Qrels(
            topics=qrels.topics[keep], docs=qrels.docs[keep], grades=qrels.grades[keep], strata=qrels.strata[keep]
        )
        full_topics = evaluate(qrels, [tables[r]], ["AP"], max_results=100)
        expected = evaluate(reduced, [tables[r]], ["AP"], max_results=100)
        # the mean runs over the full qrels' topics: a topic left without lines scores 0
        expected_mean = sum(expected.to_dict()[tables[r].tag]["AP"].get(t, 0.0) for t in full_topics.topics)
        expected_mean /= len(full_topics.topics)
        row = next(x for x in result["runs"] if x["run"] == run["name"])
        assert row["reduced"] == pytest.approx(expected_mean, abs=1e-12), run["name"]


def test_pool_depth_reaches_tau_one_at_the_pool_depth(evaluated, client, organiser):
    campaign, *_ = evaluated
    result = run_analysis(client, organiser, campaign.id, "pool-depth", max_depth=60)
    assert result["measure"] == "xinfAP"
    assert [d["depth"] for d in result["depths"]] == list(range(1, 61))
    assert result["depths"][-1]["tau_b"] == pytest.approx(1.0)
    assert result["depths"][-1]["scores"] == pytest.approx(result["full"])
    assert result["depths"][0]["lines"] < result["depths"][-1]["lines"]


def test_score_analyses(evaluated, client, organiser):
    campaign, runs, tables, qrels, assessor = evaluated
    agreement = run_analysis(client, organiser, campaign.id, "agreement", measures=["AP", "xinfAP", "P@10"])
    matrix = np.array(agreement["tau_b"], dtype=float)
    assert np.allclose(np.diag(matrix), 1.0) and np.allclose(matrix, matrix.T)
    stable = run_analysis(client, organiser, campaign.id, "stability", measures=["AP"], trials=20, seed=1)
    assert stable["subset_vs_full"]["AP"][-1]["mean"] == pytest.approx(1.0)
    reference = evaluate(qrels, tables, ["AP"], max_results=100)
    per_topic = reference.values[:, 0, :]
    power = run_analysis(client, organiser, campaign.id, "power", measure="AP", n_resamples=2000, seed=3)
    order = [tables.index(next(t for t in tables if t.tag == reference.runs[i])) for i in range(len(tables))]
    expected = discriminative_power(pairwise_randomization(per_topic[order], n_resamples=2000, seed=3))
    assert power["discriminative_power"] == pytest.approx(expected)
    ties = run_analysis(client, organiser, campaign.id, "ties")
    tied = np.mean([np.ptp(per_topic[:, t]) == 0 for t in range(per_topic.shape[1])])
    assert ties["ratios"]["AP"] == pytest.approx(tied)
    # only organisers start or read analyses
    assert (
        client.post(f"/api/campaigns/{campaign.id}/analyses", json={"kind": "ties"}, headers=assessor).status_code
        == 403
    )
    bad = client.post(
        f"/api/campaigns/{campaign.id}/analyses", json={"kind": "leave-out", "params": {"by": "x"}}, headers=organiser
    )
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "params.by"


def test_label_noise_on_a_moment_campaign(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=3, task_kind="moments")
    truth = "1 vidA 10 20\n2 vidA 40 52\n3 vidB 5 9\n"
    client.put(f"/api/campaigns/{campaign.id}/ground-truth", files={"file": ("gt", truth.encode())}, headers=organiser)
    _, team = campaign.team()
    runs = {
        "close": "1 vidA 11 19 0.9\n2 vidA 41 50 0.8\n3 vidB 5 9 0.7\n",
        "loose": "1 vidA 5 30 0.9\n2 vidA 30 60 0.8\n3 vidB 0 20 0.7\n",
    }
    for name, text in runs.items():
        assert campaign.upload(team, text, name=name).status_code == 201
    wait_done(
        client,
        organiser,
        client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser).json()["id"],
    )
    result = run_analysis(
        client,
        organiser,
        campaign.id,
        "label-noise",
        measures=["AxIoU@1", "R@1,0.5"],
        sigmas=[0.5, 4.0],
        trials=20,
        seed=5,
    )
    assert result["runs"] == ["close", "loose"] and [lv["sigma"] for lv in result["levels"]] == [0.5, 4.0]
    close = result["levels"][0]["runs"]["close"]["AxIoU@1"]
    assert close["clean"] == pytest.approx((8 / 10 + 9 / 12 + 1.0) / 3)  # IoUs 8/10, 9/12, 4/4 at rank 1
    for level in result["levels"]:
        for per_run in level["runs"].values():
            for stats in per_run.values():
                assert stats["rmse"] >= stats["mean_abs_change"] - 1e-12
    job = start_analysis(client, organiser, campaign.id, "label-noise", measures=["AxIoU@1"], sigmas=[1.0], trials=5)
    svg = assert_svg_figure(client, organiser, job["id"])
    assert "Label noise (5 trials" in svg and "length: shifted" in svg  # SPEC 6's (e - s) + Exp(1), the default
    assert "mean absolute change" in svg  # the quantity the paper's Fig. 7 plots
    for level in result["levels"]:
        mean_change = np.mean([per_run["AxIoU@1"]["mean_abs_change"] for per_run in level["runs"].values()])
        assert level["mean_abs_change"]["AxIoU@1"] == pytest.approx(mean_change)
    # more noise, more change
    assert result["levels"][1]["mean_rmse"]["AxIoU@1"] > result["levels"][0]["mean_rmse"]["AxIoU@1"]
    again = run_analysis(
        client,
        organiser,
        campaign.id,
        "label-noise",
        measures=["AxIoU@1", "R@1,0.5"],
        sigmas=[0.5, 4.0],
        trials=20,
        seed=5,
    )
    assert again == result
    # AxIoU Fig. 5 data from the stored means, equal to the core on the same numbers
    from app.evaluation.analyses.moment_effectiveness import moment_effectiveness

    board = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=organiser).json()
    measures = ["AxIoU@1", "R@1,0.5", "R@1,0.7"]
    means = np.array([[row["scores"][m] for m in measures] for row in board["rows"]])
    effect = start_analysis(client, organiser, campaign.id, "moment-effectiveness", measures=measures)
    expected = moment_effectiveness([row["run"] for row in board["rows"]], measures, means).to_dict()
    assert effect["result"]["runs"] == expected["runs"] == ["close", "loose"]
    assert effect["result"]["sort_by"] == "mean R@K,theta"
    for got, want in zip(effect["result"]["measures"], expected["measures"], strict=True):
        assert got["measure"] == want["measure"] and got["scores"] == pytest.approx(want["scores"])
    assert "Systems by measure" in assert_svg_figure(client, organiser, effect["id"])
    sorted_by = run_analysis(
        client, organiser, campaign.id, "moment-effectiveness", measures=measures, sort_by="R@1,0.7"
    )
    assert sorted_by["sort_by"] == "R@1,0.7"
    bad = client.post(
        f"/api/campaigns/{campaign.id}/analyses",
        json={"kind": "moment-effectiveness", "params": {"measures": ["AxIoU@1"], "sort_by": "R@1,0.5"}},
        headers=organiser,
    )
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "params.sort_by"
    shots = make_campaign()
    refused = client.post(f"/api/campaigns/{shots.id}/analyses", json={"kind": "label-noise"}, headers=organiser)
    assert refused.status_code == 422 and refused.json()["errors"][0]["message"] == "moments only"


def test_figures_are_drawn_from_the_stored_results(evaluated, client, organiser, sessions):
    campaign, _, _, _, assessor = evaluated
    kinds = {
        "pool-depth": {"max_depth": 5},
        "leave-out": {"by": "team", "measure": "AP"},
        "agreement": {"measures": ["AP", "P@10"]},
        "stability": {"measures": ["AP"], "trials": 5},
        "ties": {},
        "power": {"measure": "AP", "n_resamples": 200},
    }
    jobs = {kind: start_analysis(client, organiser, campaign.id, kind, **params) for kind, params in kinds.items()}
    texts = {kind: assert_svg_figure(client, organiser, job["id"]) for kind, job in jobs.items()}
    assert "Ranking correlation vs pool depth" in texts["pool-depth"]
    assert f"max drop = {jobs['leave-out']['result']['max_drop']:.4f}" in texts["leave-out"]
    assert "Measure agreement" in texts["agreement"] and "Stability (5 trials" in texts["stability"]
    png = client.get(f"/api/analyses/{jobs['pool-depth']['id']}/figure?format=png", headers=organiser)
    assert png.headers["content-type"] == "image/png" and png.content[:4] == b"\x89PNG"
    assert client.get(f"/api/analyses/{jobs['ties']['id']}/figure?format=gif", headers=organiser).status_code == 422
    # organisers only, and only a finished analysis has a figure
    assert client.get(f"/api/analyses/{jobs['ties']['id']}/figure", headers=assessor).status_code == 403
    _, team = campaign.team()
    assert client.get(f"/api/analyses/{jobs['ties']['id']}/figure", headers=team).status_code == 403
    from app.storage.models import AnalysisJob

    with sessions() as session:
        session.get(AnalysisJob, jobs["ties"]["id"]).status = "running"
        session.commit()
    running = client.get(f"/api/analyses/{jobs['ties']['id']}/figure", headers=organiser)
    assert running.status_code == 409 and "running" in running.text
    assert client.get("/api/analyses/999999/figure", headers=organiser).status_code == 404
