"""An analysis added as a registry record alone runs as a job: the service validates it against the campaign,
reads what the record says it reads from the database, stores what its `compute` returns, and the REST API serves
the job and its figure."""

from __future__ import annotations

import numpy as np
import pytest

from tests.services.toy_analysis import TOY


def test_a_toy_analysis_runs_as_a_job_on_the_stored_scores(
    evaluated,
    toy,
    client,
    organiser,
    sessions,
    database_url,
):
    from app.services import analyses
    from app.services.auth import Principal
    from app.storage.database import session_scope
    from app.storage.models import AnalysisJob, Role
    from app.worker import runner
    from tests.conftest import job_settings

    campaign, *_ = evaluated
    refused = client.post(
        f"/api/campaigns/{campaign.id}/analyses",
        json={"kind": TOY.name, "params": {"scale": 0}},
        headers=organiser,
    )
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "params.scale"
    with session_scope(sessions) as session:  # not enqueued: the test run's worker process has no toy
        organiser_principal = Principal(role=Role.organiser, token_id=0)
        job_id = analyses.start_analysis(session, organiser_principal, campaign.id, TOY.name, {"scale": 2}).id
    runner.run_job(runner.Runtime(sessions=sessions, settings=job_settings(database_url)), AnalysisJob, job_id)
    job = client.get(f"/api/analyses/{job_id}", headers=organiser).json()
    assert job["status"] == "done" and job["params"]["scale"] == 2.0
    board = client.get(f"/api/campaigns/{campaign.id}/leaderboard", headers=organiser).json()
    measure = job["result"]["measure"]
    means = [row["scores"][measure] for row in board["rows"]]
    assert measure == "xinfAP"  # the leaderboard's measure of these stratified qrels
    assert job["result"]["spread"] == pytest.approx(2 * float(np.ptp(means)))
    figure = client.get(f"/api/analyses/{job_id}/figure", headers=organiser)
    assert figure.status_code == 200 and b"<svg" in figure.content[:1000]
