"""The topic-set-design analysis as a REST job on an evaluated campaign: its result equals the core on the campaign's
per-topic scores (re-scored here from the exported qrels and the downloaded runs), it draws its figure, and bad
parameters are a 422."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.analyses.topic_set_design import topic_set_design
from app.evaluation.measures.evaluate import evaluate
from tests.api.helpers import assert_svg_figure, start_analysis


def test_topic_set_design_job_equals_the_core_on_the_stored_scores(evaluated, client, organiser):
    campaign, runs, tables, qrels, _ = evaluated
    job = start_analysis(client, organiser, campaign.id, "topic-set-design", measure="AP", min_differences=[0.1, 0.2])
    result = job["result"]
    reference = evaluate(qrels, tables, ["AP"], max_results=100)  # the campaign's cut
    expected = topic_set_design(
        np.nan_to_num(reference.values[:, 0, :]), reference.runs, measure="AP", min_differences=[0.1, 0.2]
    ).to_dict()
    assert result["measure"] == "AP" and result["n_runs"] == len(runs) == result["systems"]
    assert result["n_topics"] == len(reference.topics)
    assert result["sigma2"] == pytest.approx(expected["sigma2"]) and result["variance"] == "two-way"
    assert result["designs"] == expected["designs"] and result["ci"] == expected["ci"]
    assert "Topic set size for AP" in assert_svg_figure(client, organiser, job["id"])
    bad = client.post(
        f"/api/campaigns/{campaign.id}/analyses",
        json={"kind": "topic-set-design", "params": {"min_differences": [0]}},
        headers=organiser,
    )
    assert bad.status_code == 422 and bad.json()["errors"][0]["field"] == "params.min_differences.0"
