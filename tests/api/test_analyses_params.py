"""Analyses over REST: typed parameters with the SPEC's defaults (refused with a 422 when unknown or unusable),
imported qrels (which runs were pooled, the inferred depth), and jobs whose progress moves and that cancel."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from app.evaluation.measures.evaluate import evaluate
from app.evaluation.pools.builders import rank_rows
from app.evaluation.records import Qrels
from tests.api.helpers import run_analysis, start_analysis, wait_done


def _post(client, organiser, campaign_id, kind, **params):
    return client.post(
        f"/api/campaigns/{campaign_id}/analyses", json={"kind": kind, "params": params}, headers=organiser
    )


def test_defaults_are_stored_with_the_job_and_follow_the_spec(evaluated, client, organiser):
    campaign, *_ = evaluated
    depth = start_analysis(client, organiser, campaign.id, "pool-depth", max_depth=3)
    assert depth["params"]["outside"] == "drop" and depth["result"]["outside"] == "drop"
    assert depth["result"]["pooled_from"] == "pool" and depth["result"]["pool_depth"] == 60
    leave = start_analysis(client, organiser, campaign.id, "leave-out", measure="AP")
    assert leave["params"]["by"] == "team" and "depth" not in leave["params"]
    assert leave["result"]["depth"] == 60 and leave["result"]["depth_source"] == "pool"
    stable = start_analysis(client, organiser, campaign.id, "stability", sizes=[1, 3])
    assert stable["params"]["trials"] == 5000 and stable["result"]["trials"] == 5000  # the AxIoU paper's
    assert stable["result"]["sizes"] == [1, 3] and list(stable["result"]["subset_vs_full"]) == ["xinfAP"]
    assert stable["result"]["subset_vs_full"]["xinfAP"][-1]["mean"] == pytest.approx(1.0)
    power = start_analysis(client, organiser, campaign.id, "power", measures=["AP", "P@10"], n_resamples=200)
    assert set(power["result"]["power"]) == {"AP", "P@10"} and power["params"]["alpha"] == 0.05
    ties = run_analysis(client, organiser, campaign.id, "ties", measures=["map", "P_10"])  # trec_eval spellings
    assert list(ties["ratios"]) == ["AP", "P@10"] and ties["n_topics"] == 3


@pytest.mark.parametrize(
    ("kind", "params", "field"),
    [
        ("stability", {"measures": ["nonsense"]}, "params.measures.0"),
        ("stability", {"sizes": [0]}, "params.sizes.0"),
        ("stability", {"measure": "AP", "measures": ["AP"]}, "params"),  # one of them would be ignored
        ("power", {"measure": "ndcg_cut_7x"}, "params.measure"),
        ("pool-depth", {"outside": "maybe"}, "params.outside"),
        ("pool-depth", {"pooled_runs": ["secretrun0"]}, "params.pooled_runs"),  # the pool records its runs
        ("leave-out", {"measure": "nonsense"}, "params.measure"),
        ("agreement", {"measures": ["AP"]}, "params.measures"),
        ("ties", {"sizes": [1]}, "params.sizes"),
    ],
)
def test_unknown_or_unusable_parameters_are_a_422(evaluated, client, organiser, kind, params, field):
    campaign, *_ = evaluated
    response = _post(client, organiser, campaign.id, kind, **params)
    assert response.status_code == 422, response.text
    assert [e["field"] for e in response.json()["errors"]] == [field]


def test_imported_qrels_take_the_pooled_runs_given_or_the_priority_ones_and_infer_the_depth(
    judged_campaign,
    client,
    organiser,
):
    campaign, run_names, qrels, _ = judged_campaign
    exported = client.get(f"/api/qrels/{qrels['id']}/download?format=sample_eval", headers=organiser).content
    imported = client.post(
        f"/api/campaigns/{campaign.id}/qrels",
        files={"file": ("qrels", exported)},
        data={"label": "imported"},
        headers=organiser,
    )
    assert imported.status_code == 201, imported.text
    started = client.post(
        f"/api/campaigns/{campaign.id}/evaluations", json={"qrels_version_id": imported.json()["id"]}, headers=organiser
    )
    wait_done(client, organiser, started.json()["id"])
    runs = client.get(f"/api/campaigns/{campaign.id}/runs", headers=organiser).json()
    unknown = _post(client, organiser, campaign.id, "leave-out", pooled_runs=["nobody"])
    assert unknown.status_code == 422 and unknown.json()["errors"][0]["field"] == "params.pooled_runs"

    by_priority = run_analysis(client, organiser, campaign.id, "leave-out", by="run", measure="AP")
    priority_one = [r["name"] for r in runs if r["priority"] == 1]
    assert by_priority["pooled_from"] == "priority 1" and by_priority["pooled"] == priority_one
    # the pool was every run's top 60, so 60 is the depth the judgements cover (inferred, and said so)
    assert by_priority["depth"] == 60 and by_priority["depth_source"] == "inferred"
    assert by_priority["depth_inference"]["share_at_depth"] == 1.0

    given = run_analysis(
        client, organiser, campaign.id, "leave-out", by="run", measure="AP", pooled_runs=run_names, depth=10
    )
    assert given["pooled_from"] == "params" and given["depth"] == 10 and given["depth_source"] == "given"
    # brute force: a line goes when only that run, among the runs given, ranks its shot within 10
    from app.evaluation.formats.trec_files import parse_qrels, parse_trec_run

    tables = [parse_trec_run(client.get(f"/api/runs/{r['id']}/download", headers=organiser).content) for r in runs]
    full_qrels = parse_qrels(exported)
    run_index, topics, docs, ranks = rank_rows(tables)
    owners: dict[tuple[str, str], set[int]] = defaultdict(set)
    within = ranks <= 10
    for i, t, d in zip(run_index[within].tolist(), topics[within].tolist(), docs[within].tolist(), strict=True):
        owners[(t, d)].add(i)
    keys = list(zip(full_qrels.topics.tolist(), full_qrels.docs.tolist(), strict=True))
    n_topics = len(set(full_qrels.topics.tolist()))
    for r, run in enumerate(runs):
        keep = np.array([owners.get(k, set()) != {r} for k in keys])
        reduced = Qrels(
            topics=full_qrels.topics[keep],
            docs=full_qrels.docs[keep],
            grades=full_qrels.grades[keep],
            strata=full_qrels.strata[keep],
        )
        expected = evaluate(reduced, [tables[r]], ["AP"], max_results=100).values[0, 0].sum() / n_topics
        row = next(x for x in given["runs"] if x["run"] == run["name"])
        assert row["reduced"] == pytest.approx(expected, abs=1e-12), run["name"]

    depth = run_analysis(client, organiser, campaign.id, "pool-depth", pooled_runs=priority_one[:1], outside="keep")
    assert depth["pooled"] == priority_one[:1] and depth["outside"] == "keep"
    assert depth["pool_depth"] == 60 and [d["depth"] for d in depth["depths"]][-1] == 60


def test_a_running_analysis_reports_moving_progress_and_stops_when_cancelled(
    evaluated,
    client,
    organiser,
    sessions,
    database_url,
    monkeypatch,
):
    """The worker's own path (claim, progress reports, cancel check) run in this process on a job no queue holds."""
    from app.services import analyses, jobs
    from app.services.auth import Principal
    from app.storage.database import session_scope
    from app.storage.models import AnalysisJob, Role
    from app.worker import runner
    from tests.conftest import job_settings

    campaign, *_ = evaluated
    organiser_principal = Principal(role=Role.organiser, token_id=0)

    def queued(kind: str, **params: object) -> int:
        with session_scope(sessions) as session:  # not enqueued: the test run's worker never sees it
            return analyses.start_analysis(session, organiser_principal, campaign.id, kind, params).id

    reported: list[float] = []
    cancel_at = {"count": 0}
    set_progress = jobs.set_progress

    def report(session, model, job_id, value):  # type: ignore[no-untyped-def]
        reported.append(value)
        if len(reported) == cancel_at["count"]:  # the organiser cancels while the job runs
            response = client.post(f"/api/analyses/{job_id}/cancel", headers=organiser)
            assert response.status_code == 200 and response.json()["status"] == "running"
        return set_progress(session, model, job_id, value)

    monkeypatch.setattr(jobs, "set_progress", report)
    runtime = runner.Runtime(sessions=sessions, settings=job_settings(database_url))

    job_id = queued("pool-depth", max_depth=20)
    runner.run_job(runtime, AnalysisJob, job_id)
    done = client.get(f"/api/analyses/{job_id}", headers=organiser).json()
    assert done["status"] == "done" and done["progress"] == 1.0
    assert len(reported) >= 20 and reported == sorted(reported) and 0 < reported[0] and reported[-1] < 1
    assert len({round(v, 6) for v in reported}) >= 20  # a report per depth: the fraction moves during the job

    reported.clear()
    cancel_at["count"] = 5
    job_id = queued("pool-depth", max_depth=20)
    runner.run_job(runtime, AnalysisJob, job_id)
    body = client.get(f"/api/analyses/{job_id}", headers=organiser).json()
    assert body["status"] == "cancelled" and body["result"] is None and body["finished_at"] is not None
    assert len(reported) == 5 and reported == sorted(reported) and 0 < reported[2] < reported[4] < 0.95
    assert body["progress"] == pytest.approx(reported[-1])  # stopped at the report that saw the cancel
