"""Evaluation jobs, leaderboards and publication through the API."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from click.testing import CliRunner

from app.cli import cli
from app.evaluation.formats.trec_files import parse_trec_run
from app.evaluation.moments import evaluate_moments, parse_moment_ground_truth, parse_moment_run
from tests.api.helpers import setup_campaign, wait_done


def test_stored_numbers_equal_trecpool_eval_on_the_exported_files(judged_campaign, client, organiser, tmp_path):
    campaign, run_names, qrels, _ = judged_campaign
    started = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser)
    assert started.status_code == 202, started.text
    evaluation = wait_done(client, organiser, started.json()["id"])
    assert "xinfAP" in evaluation["measures"]["names"] and "AP" in evaluation["measures"]["names"]
    board = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=organiser).json()
    assert board["measure"] == "xinfAP"
    assert [r["rank"] for r in board["rows"]] == [1, 2, 3, 4]
    scores = [r["score"] for r in board["rows"]]
    assert scores == sorted(scores, reverse=True)
    # the reference: `trecpool eval` on the exported qrels file and the downloaded run files
    (tmp_path / "qrels").write_bytes(
        client.get(f"/api/qrels/{qrels['id']}/download?format=sample_eval", headers=organiser).content
    )
    runs = client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()
    paths = []
    for run in runs:
        paths.append(str(tmp_path / f"{run['name']}.txt"))
        (tmp_path / f"{run['name']}.txt").write_bytes(
            client.get(f"/api/runs/{run['id']}/download", headers=organiser).content
        )
    measures = [arg for m in evaluation["measures"]["names"] for arg in ("-m", m)]
    result = CliRunner().invoke(
        cli, ["eval", "-q", "--format", "json", "--max-results", "100", *measures, str(tmp_path / "qrels"), *paths]
    )
    assert result.exit_code == 0, result.output
    reference = json.loads(result.stdout)
    tables = [parse_trec_run((tmp_path / f"{run['name']}.txt").read_bytes()) for run in runs]
    for run, table in zip(runs, tables, strict=True):
        row = next(r for r in board["rows"] if r["run_id"] == run["id"])
        for measure, value in row["scores"].items():
            assert value == pytest.approx(reference[table.tag][measure]["all"], abs=1e-12), (run["name"], measure)
    per_topic = {t["topic"]: t for t in board["per_topic"]}
    assert set(per_topic) == set(campaign.topics)
    for topic, entry in per_topic.items():
        values = [reference[t.tag]["xinfAP"][topic] for t in tables]
        assert entry["best"] == pytest.approx(max(values)) and entry["median"] == pytest.approx(
            float(np.median(values))
        )


def test_visibility_before_and_after_publication(judged_campaign, client, organiser, make_campaign):
    campaign, _, _, assessor = judged_campaign
    evaluation = client.post(
        f"/api/campaigns/{campaign.id}/evaluations", json={"measures": ["AP", "P@10"]}, headers=organiser
    ).json()
    wait_done(client, organiser, evaluation["id"])
    team_token = client.post(
        f"/api/teams/{client.get(f'/api/campaigns/{campaign.id}/teams', headers=organiser).json()[0]['id']}/tokens",
        headers=organiser,
    ).json()["token"]
    team = {"Authorization": f"Bearer {team_token}"}
    own = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=team).json()
    assert len(own["rows"]) == 2 and len({r["team"] for r in own["rows"]}) == 1
    assert own["measure"] == "AP"
    assert client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=assessor).status_code == 403
    assert client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").status_code == 404
    other_team = make_campaign().team()[1]
    assert client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=other_team).status_code == 404
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=team).status_code == 403
    published = client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser)
    assert published.status_code == 201
    public = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard")
    assert public.status_code == 200 and len(public.json()["rows"]) == 4 and public.json()["published"] is True
    by_p10 = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard?measure=P@10").json()
    assert by_p10["measure"] == "P@10"
    filtered = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard?system_type=M").json()
    assert all(r["system_type"] == "M" for r in filtered["rows"])
    text = client.get(f"/api/public/campaigns/{campaign.id}/leaderboard?format=csv").text
    table = list(csv.DictReader(io.StringIO(text)))
    assert [int(r["rank"]) for r in table] == [1, 2, 3, 4] and "P@10" in table[0]
    assert client.get(f"/api/campaigns/{campaign.id}", headers=organiser).json()["status"] == "published"


def test_moment_campaign_evaluation(make_campaign, client, organiser):
    campaign = make_campaign(n_topics=2, task_kind="moments")
    campaign.set_collection("s1 vidA 0 60\ns2 vidB 0 60\n")
    truth = "1\tvidA\t10\t20\n1\tvidA\t40\t45\n2\tvidB\t0\t5\n"
    response = client.put(
        f"/api/campaigns/{campaign.id}/ground-truth", files={"file": ("gt.tsv", truth.encode())}, headers=organiser
    )
    assert response.json() == {"segments": 3}
    _, team = campaign.team()
    runs = {
        "good": "1 vidA 11 19 0.9\n1 vidA 40 46 0.8\n2 vidB 0 4 0.7\n",
        "poor": "1 vidB 11 19 0.9\n1 vidA 0 9 0.8\n2 vidB 30 40 0.7\n",
    }
    for name, text in runs.items():
        assert campaign.upload(team, text, name=name).status_code == 201
    started = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser).json()
    wait_done(client, organiser, started["id"])
    board = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=organiser).json()
    assert board["measure"] == "AxIoU@10"
    assert [r["run"] for r in board["rows"]] == ["good", "poor"]
    reference = evaluate_moments(
        parse_moment_ground_truth(truth),
        [parse_moment_run(t) for t in runs.values()],
        board["measures"],
        run_names=list(runs),
    )
    for row in board["rows"]:
        for measure, value in row["scores"].items():
            assert value == pytest.approx(reference[row["run"]][measure]["all"], abs=1e-12)


def test_evaluation_needs_judgements_and_known_measures(make_campaign, client, organiser):
    campaign = make_campaign()
    assert client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser).status_code == 404
    moments = make_campaign(task_kind="moments")
    assert client.post(f"/api/campaigns/{moments.id}/evaluations", json={}, headers=organiser).status_code == 409
    shots, _ = setup_campaign(make_campaign, client, organiser)
    client.post(
        f"/api/campaigns/{shots.id}/qrels",
        data={"label": "q"},
        headers=organiser,
        files={"file": ("q", b"1 0 s0_1 1\n2 0 s1_1 0\n")},
    )
    response = client.post(
        f"/api/campaigns/{shots.id}/evaluations", json={"measures": ["AP", "bogus@3"]}, headers=organiser
    )
    assert response.status_code == 422 and "bogus" in response.json()["errors"][0]["message"]


def test_significance_groups_on_a_constructed_case(make_campaign, client, organiser):
    """Three strong runs close together and three weak ones: two groups, strong first."""
    campaign = make_campaign(n_topics=30)
    docs = [f"d{i}" for i in range(20)]
    qrels = "".join(f"{t} 0 {d} {1 if int(d[1:]) < 5 else 0}\n" for t in campaign.topics for d in docs)
    client.post(
        f"/api/campaigns/{campaign.id}/qrels",
        data={"label": "q"},
        files={"file": ("q", qrels.encode())},
        headers=organiser,
    )
    rng = np.random.default_rng(0)
    _, team = campaign.team()
    for name, good in (("s1", True), ("s2", True), ("s3", True), ("w1", False), ("w2", False), ("w3", False)):
        lines = []
        for topic in campaign.topics:
            relevant, other = [f"d{i}" for i in rng.permutation(5)], [f"d{i}" for i in 5 + rng.permutation(15)]
            ranked = relevant[:4] + other[:2] + relevant[4:] + other[2:] if good else other[:12] + relevant + other[12:]
            lines += [f"{topic} Q0 {d} {r + 1} {20 - r} {name}" for r, d in enumerate(ranked)]
        assert campaign.upload(team, "\n".join(lines) + "\n", name=name).status_code == 201
    client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser)
    started = client.post(
        f"/api/campaigns/{campaign.id}/evaluations", json={"measures": ["AP", "P@5"]}, headers=organiser
    ).json()
    wait_done(client, organiser, started["id"])
    result = client.get(f"/api/campaigns/{campaign.id}/significance?measure=AP&top=6", headers=organiser).json()
    assert [sorted(g) for g in result["groups"]] == [["s1", "s2", "s3"], ["w1", "w2", "w3"]]
    assert sorted(result["runs"][:3]) == ["s1", "s2", "s3"]
    pvalues = np.array(result["pvalues"])
    assert (pvalues[:3, 3:] < 0.05).all() and (pvalues[:3, :3] >= 0.05).all()
    client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser)
    frozen = client.get(f"/api/public/campaigns/{campaign.id}/significance").json()
    assert frozen["measure"] == "AP" and [sorted(g) for g in frozen["groups"]] == [
        ["s1", "s2", "s3"],
        ["w1", "w2", "w3"],
    ]


def test_report_sections_agree_with_the_files(judged_campaign, client, organiser):
    campaign, _, qrels, _ = judged_campaign
    started = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser).json()
    wait_done(client, organiser, started["id"])
    assert client.get(f"/api/public/campaigns/{campaign.id}/report").status_code == 404
    live = client.get(f"/api/campaigns/{campaign.id}/report", headers=organiser).json()
    client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser)
    report = client.get(f"/api/public/campaigns/{campaign.id}/report").json()
    assert report == live
    lines = [
        line.split()
        for line in client.get(
            f"/api/qrels/{qrels['id']}/download?format=sample_eval", headers=organiser
        ).text.splitlines()
    ]
    hits = {t: sum(1 for r in lines if r[0] == t and r[4] == "1") for t in campaign.topics}
    judged = {t: sum(1 for r in lines if r[0] == t and r[4] != "-1") for t in campaign.topics}
    assert {j["topic"]: (j["hits"], j["judged"]) for j in report["judgements"]} == {
        t: (hits[t], judged[t]) for t in campaign.topics
    }
    runs = client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()
    returned: dict[tuple[str, str], int] = {}
    for run in runs:
        for row in client.get(f"/api/runs/{run['id']}/download", headers=organiser).text.splitlines():
            topic, _, shot, *_ = row.split()
            returned[(topic, shot)] = returned.get((topic, shot), 0) + 1
    grade = {(r[0], r[2]): r[4] for r in lines}
    fp = report["frequent_false_positives"]
    assert fp and all(
        grade[(f["topic"], f["shot"])] == "0" and returned[(f["topic"], f["shot"])] == f["runs"] for f in fp
    )
    most = max(n for key, n in returned.items() if grade.get(key) == "0")
    assert fp[0]["runs"] == most
    assert report["measure"] == "xinfAP" and set(report["overall"]) <= {"F", "M", "R"}
    assert 0 <= report["judged_share"]["min"] <= report["judged_share"]["max"] <= 1
    assert report["easy_hard"]["threshold"] is not None and len(report["per_topic"]) == 3
