"""The report's analysis sections (significance per run type, strata and inferred relevant, judged fraction per depth,
novelty, efficiency) and a team's run-vs-median-vs-best chart, each against a computation of its own from the
exported qrels and runs."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest
from scipy import stats
from sqlalchemy import update

from app.evaluation.formats.trec_files import parse_qrels, parse_trec_run
from app.evaluation.measures.evaluate import evaluate
from app.services import run_blocks
from app.storage.models import Run
from tests.api.helpers import wait_done
from tests.evaluation.analyses.brute import trec_order

SECONDS = {0: {"1": 2.0, "2": 4.0}, 1: {"1": 30.0}, 2: {"1": 600.0, "2": 400.0, "3": 500.0}}  # run 3 states none


def _exact_p(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided paired sign-flip p-value, all 2^n sign vectors (scipy)."""
    return stats.permutation_test(
        (x, y),
        lambda a, b, axis: np.abs(np.mean(a - b, axis=axis)),
        permutation_type="samples",
        vectorized=True,
        n_resamples=2 ** len(x),
        alternative="greater",
    ).pvalue


def _exports(client, organiser, campaign, qrels_id):  # type: ignore[no-untyped-def]
    """The qrels and the runs as files, parsed, and the runs' metadata."""
    qrels = parse_qrels(client.get(f"/api/qrels/{qrels_id}/download?format=sample_eval", headers=organiser).content)
    runs = client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()
    tables = [parse_trec_run(client.get(f"/api/runs/{r['id']}/download", headers=organiser).content) for r in runs]
    return qrels, runs, tables


def test_published_report_sections_equal_their_own_computation(judged_campaign, client, organiser, sessions):
    campaign, _, qrels_version, _ = judged_campaign
    qrels, runs, tables = _exports(client, organiser, campaign, qrels_version["id"])
    with sessions() as session:  # two runs manually assisted; three state XML elapsed times
        for i, run in enumerate(runs):
            values = {"system_type": "M" if i >= 2 else "F", "elapsed_seconds": SECONDS.get(i)}
            session.execute(update(Run).where(Run.id == run["id"]).values(**values))
        session.commit()
    evaluation = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser).json()
    wait_done(client, organiser, evaluation["id"])
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    report = client.get(f"/api/public/campaigns/{campaign.id}/report").json()
    assert report == client.get(f"/api/campaigns/{campaign.id}/report", headers=organiser).json()
    names = [r["name"] for r in runs]
    results = evaluate(qrels, tables, ["xinfAP"], max_results=100, names=names)
    per_topic = results.values[:, 0, :]

    # significance within each system type: the exact randomization test of every pair of the type, by scipy
    sig = report["significance_by_type"]
    assert [g["type"] for g in sig["types"]] == ["F", "M"]
    for group in sig["types"]:
        rows = [names.index(r) for r in group["runs"]]
        assert len(rows) == 2 and all(runs[i]["system_type"] in ("F", "M") for i in rows)
        assert group["pvalues"][0][1] == pytest.approx(_exact_p(per_topic[rows[0]], per_topic[rows[1]]), abs=1e-12)
        assert per_topic[rows[0]].mean() >= per_topic[rows[1]].mean()

    # strata and inferred relevant: counted line by line from the exported sample_eval qrels
    counts: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0, 0])
    for t, s, g in zip(qrels.topics.tolist(), qrels.strata.tolist(), qrels.grades.tolist(), strict=True):
        counts[(t, s)][0] += 1
        counts[(t, s)][1] += g >= 0
        counts[(t, s)][2] += g >= 1
    strata = report["strata"]
    assert strata["stratified"] is True and [s["stratum"] for s in strata["strata"]] == [1, 2]
    for s in strata["strata"]:
        totals = [sum(v[k] for (t, st), v in counts.items() if st == s["stratum"]) for k in range(3)]
        assert [s["pooled"], s["judged"], s["relevant"]] == totals
        assert s["judged_share"] == pytest.approx(totals[1] / totals[0])
    assert strata["strata"][0]["judged_share"] == 1.0 and strata["strata"][1]["judged_share"] < 1.0  # rate 0.5
    for row in strata["topics"]:
        r_hat = sum(v[2] * v[0] / v[1] for (t, _), v in counts.items() if t == row["topic"] and v[1])
        assert row["inferred_relevant"] == pytest.approx(r_hat)

    # judged fraction of each run's top d, over the exported runs in trec_eval order
    judged = {
        (t, d)
        for t, d, g in zip(qrels.topics.tolist(), qrels.docs.tolist(), qrels.grades.tolist(), strict=True)
        if g >= 0
    }
    orders = [trec_order(table, 100) for table in tables]
    for level in report["judged_fraction"]["depths"]:
        d = level["depth"]
        for name, order in zip(names, orders, strict=True):
            seen = [(t, doc) for t, docs in order.items() for doc in docs[:d]]
            assert level["share"][name] == pytest.approx(sum(p in judged for p in seen) / len(seen))
    assert report["judged_fraction"]["depths"][-1]["depth"] == 100

    # novelty: relevant shots a run found that no run of another team found, by plain sets
    relevant = {
        (t, d)
        for t, d, g in zip(qrels.topics.tolist(), qrels.docs.tolist(), qrels.grades.tolist(), strict=True)
        if g >= 1
    }
    found = [{(t, doc) for t, docs in order.items() for doc in docs if (t, doc) in relevant} for order in orders]
    team_of = [r["team_id"] for r in runs]
    by_run = {row["run"]: row for row in report["novelty"]["runs"]}
    for i, name in enumerate(names):
        others = set().union(*(found[j] for j in range(len(runs)) if team_of[j] != team_of[i]))
        assert by_run[name]["hits"] == len(found[i]) and by_run[name]["unique"] == len(found[i] - others)
    uniques = [t["unique"] for t in report["novelty"]["teams"]]
    assert uniques == sorted(uniques, reverse=True)

    # efficiency: mean seconds per topic against the mean score, Spearman by scipy over the three timed runs
    efficiency = report["efficiency"]
    board = {
        r["run"]: r["score"] for r in client.get(f"/api/public/campaigns/{campaign.id}/leaderboard").json()["rows"]
    }
    timed = [i for i in range(len(runs)) if i in SECONDS]
    seconds = [float(np.mean(list(SECONDS[i].values()))) for i in timed]
    assert efficiency["n_timed"] == 3
    assert [r["seconds"] for r in efficiency["runs"]] == [*seconds, None]
    expected = stats.spearmanr([board[names[i]] for i in timed], seconds).statistic
    assert efficiency["spearman"] == pytest.approx(expected)

    # the page shows every section, each figure drawn
    page = client.get(f"/campaigns/{campaign.id}/report")
    assert page.status_code == 200
    for heading in (
        "Statistical significance within each run type",
        "Judged shots per stratum",
        "Inferred relevant shots per topic",
        "Judged fraction of the runs' top results",
        "Novelty: relevant shots no other team found",
        "Efficiency",
    ):
        assert f">{heading}<" in page.text, heading
    assert page.text.count("<svg") == 8  # overall, topics, hits, strata, inferred, judged fraction, unique, efficiency


def test_a_team_sees_its_own_run_against_the_median_and_best_only(judged_campaign, client, organiser):
    campaign, _, _, _ = judged_campaign
    evaluation = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser).json()
    wait_done(client, organiser, evaluation["id"])
    runs = client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()
    team_id = runs[0]["team_id"]
    token = client.post(f"/api/teams/{team_id}/tokens", headers=organiser).json()["token"]
    team = {"Authorization": f"Bearer {token}"}
    mine = [r for r in runs if r["team_id"] == team_id]
    theirs = [r for r in runs if r["team_id"] != team_id]
    own_board = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=team).json()
    chart = client.get(f"/api/runs/{mine[0]['id']}/versus", headers=team)
    assert chart.status_code == 200, chart.text
    body = chart.json()
    assert body["run"] == mine[0]["name"] and body["measure"] == own_board["measure"] and body["published"] is False
    assert body["n_runs"] == len(runs)
    for point, entry in zip(body["topics"], own_board["per_topic"], strict=True):
        assert point["topic"] == entry["topic"]
        assert point["median"] == pytest.approx(entry["median"]) and point["best"] == pytest.approx(entry["best"])
        assert point["score"] == pytest.approx(entry["runs"][mine[0]["name"]])
    text = chart.text + client.get(f"/api/runs/{mine[0]['id']}/versus?format=svg", headers=team).text
    assert all(r["name"] not in text for r in theirs)  # no other run is named, in JSON or in the chart
    svg = client.get(f"/api/runs/{mine[0]['id']}/versus?format=svg&measure=map", headers=team)
    assert svg.headers["content-type"] == "image/svg+xml" and "<svg" in svg.text
    assert client.get(f"/api/runs/{theirs[0]['id']}/versus", headers=team).status_code == 404
    assert client.get(f"/api/runs/{theirs[0]['id']}/versus", headers=organiser).status_code == 200
    assert client.get(f"/api/runs/{mine[0]['id']}/versus?measure=bogus", headers=team).status_code == 422
    client.patch(f"/api/campaigns/{campaign.id}", json={"team_results": "hidden"}, headers=organiser)
    assert client.get(f"/api/runs/{mine[0]['id']}/versus", headers=team).status_code == 403
    assert client.post(f"/api/campaigns/{campaign.id}/publish", json={}, headers=organiser).status_code == 201
    published = client.get(f"/api/runs/{mine[0]['id']}/versus", headers=team).json()
    assert published["published"] is True and published["topics"] == body["topics"]


def test_the_report_read_a_run_at_a_time_is_the_report(judged_campaign, client, organiser, monkeypatch):
    """The report reads its runs in blocks of the job budget: blocks of one run give the report of one block."""
    campaign = judged_campaign[0]
    evaluation = client.post(f"/api/campaigns/{campaign.id}/evaluations", json={}, headers=organiser).json()
    wait_done(client, organiser, evaluation["id"])
    whole = client.get(f"/api/campaigns/{campaign.id}/report", headers=organiser).json()
    read: list[list[int]] = []
    loader = run_blocks.load_runs
    monkeypatch.setattr(
        run_blocks, "load_runs", lambda session, block: read.append(list(block)) or loader(session, block)
    )
    monkeypatch.setattr(run_blocks, "DEFAULT_MEMORY_MB", 1e-9)
    assert client.get(f"/api/campaigns/{campaign.id}/report", headers=organiser).json() == whole
    assert whole["hits_by_team"]["found_hits"] > 0 and whole["frequent_false_positives"]
    n_runs = len(client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json())
    assert n_runs > 1 and sorted(map(len, read)) == [1] * n_runs
