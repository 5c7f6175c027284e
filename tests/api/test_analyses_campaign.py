"""The campaign analyses as REST jobs (judged fraction, qrels versions, swap rate, significance per run type,
novelty, run vs median, efficiency, strata): each job runs to done and its result equals the core function called
directly on the exported qrels and the downloaded runs; each has its figure; bad parameters are a 422."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.analyses.efficiency import score_vs_time
from app.evaluation.analyses.judged_depth import judged_fraction
from app.evaluation.analyses.novelty import unique_relevant
from app.evaluation.analyses.qrels_comparison import compare_qrels
from app.evaluation.analyses.strata import stratum_summary
from app.evaluation.analyses.swap_rate import swap_rates
from app.evaluation.analyses.topic_comparison import topic_comparison
from app.evaluation.analyses.type_significance import significance_by_type
from app.evaluation.formats.trec_files import parse_qrels
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures.evaluate import evaluate
from tests.api.helpers import assert_svg_figure, evaluate_campaign, start_analysis


def _post(client, organiser, campaign_id, kind, **params):
    return client.post(
        f"/api/campaigns/{campaign_id}/analyses", json={"kind": kind, "params": params}, headers=organiser
    )


def _per_topic(qrels, tables, measure):
    """[n_run, n_topic] scores of `tables` (in their order) under `measure`, and the topics."""
    reference = evaluate(qrels, tables, [measure], max_results=100)
    order = [reference.runs.index(t.tag) for t in tables]
    return reference.values[order, 0, :], reference.topics, reference.mean()[order, 0]


def test_campaign_analyses_equal_the_core_on_the_exported_data(evaluated, client, organiser, sessions):
    campaign, runs, tables, qrels, assessor = evaluated
    names = [r["name"] for r in runs]
    teams = {t["id"]: t["name"] for t in client.get(f"/api/campaigns/{campaign.id}/teams", headers=organiser).json()}
    from app.storage.models import Run

    types, seconds = ["M", "F", "M", "F"], [4.0, 1.0, 2.0, 8.0]
    with sessions() as session:  # run types and elapsed times, as XML run metadata would state them
        for run, system_type, elapsed in zip(runs, types, seconds, strict=True):
            stored = session.get(Run, run["id"])
            stored.system_type = system_type
            stored.elapsed_seconds = {t: elapsed for t in campaign.topics}
        session.commit()
    prepared = prepare_runs(tables, 100, names=names)
    jobs = {}

    jobs["judged-fraction"] = job = start_analysis(
        client, organiser, campaign.id, "judged-fraction", depths=[1, 10, 60]
    )
    expected = judged_fraction(qrels, prepared, depths=[1, 10, 60], max_results=100).to_dict()
    assert job["result"] == expected and [d["depth"] for d in job["result"]["depths"]] == [1, 10, 60]
    assert job["result"]["depths"][-1]["overall"] < 1.0  # the stratified pool judged half of ranks 11-60

    jobs["novelty"] = job = start_analysis(client, organiser, campaign.id, "novelty")
    expected = unique_relevant(qrels, prepared, [teams[r["team_id"]] for r in runs], max_results=100).to_dict()
    assert job["result"] == expected and job["result"]["found"] > 0

    jobs["strata"] = job = start_analysis(client, organiser, campaign.id, "strata")
    expected = stratum_summary(qrels).to_dict()
    assert {k: v for k, v in job["result"].items() if k != "qrels_label"} == expected
    assert job["result"]["qrels_label"] == "final" and len(job["result"]["strata"]) == 2

    ap, topics, ap_means = _per_topic(qrels, tables, "AP")
    jobs["swap-rate"] = job = start_analysis(client, organiser, campaign.id, "swap-rate", measure="map", trials=50)
    expected = swap_rates(ap, names, measure="AP", trials=50, seed=0).to_dict()
    assert job["params"]["bin_width"] == 0.01 and job["params"]["min_comparisons"] == 10
    assert job["result"] == expected and job["result"]["sizes"][0]["comparisons"] == 50 * 6

    jobs["type-significance"] = job = start_analysis(
        client, organiser, campaign.id, "type-significance", measure="AP", n_resamples=500, seed=2
    )
    expected = significance_by_type(names, types, ap, n_resamples=500, seed=2).to_dict()
    assert job["result"]["by"] == "system_type" and [g["type"] for g in job["result"]["types"]] == ["M", "F"]
    for got, want in zip(job["result"]["types"], expected["types"], strict=True):
        assert got["runs"] == want["runs"] and got["groups"] == want["groups"]
        assert np.allclose(got["pvalues"], want["pvalues"]) and np.allclose(got["means"], want["means"])

    jobs["run-vs-median"] = job = start_analysis(client, organiser, campaign.id, "run-vs-median", measure="AP")
    expected = topic_comparison(names, topics, ap, measure="AP").to_dict()
    assert job["result"]["topics"] == expected["topics"]
    assert job["result"]["median"] == pytest.approx(expected["median"])
    assert job["result"]["best"] == pytest.approx(expected["best"])

    jobs["efficiency"] = job = start_analysis(client, organiser, campaign.id, "efficiency", measure="AP")
    expected = score_vs_time(names, ap_means, np.array(seconds), measure="AP").to_dict()
    assert job["result"]["front"] == expected["front"] and job["result"]["n_timed"] == 4
    assert job["result"]["spearman"] == pytest.approx(expected["spearman"])
    assert [r["seconds"] for r in job["result"]["runs"]] == seconds

    # a second qrels version: the exported judgements with one topic's relevant shots judged not relevant
    text = client.get(
        f"/api/qrels/{qrels_id(client, organiser, campaign)}/download?format=sample_eval", headers=organiser
    )
    lines = text.content.decode().splitlines()
    first = campaign.topics[0]
    changed = [" ".join([*f[:4], "0"]) if f[0] == first else " ".join(f) for f in (line.split() for line in lines)]
    other = ("\n".join(changed) + "\n").encode()
    imported = client.post(
        f"/api/campaigns/{campaign.id}/qrels", files={"file": ("q", other)}, data={"label": "strict"}, headers=organiser
    )
    assert imported.status_code == 201, imported.text
    jobs["qrels-versions"] = job = start_analysis(client, organiser, campaign.id, "qrels-versions", measure="AP")
    expected = compare_qrels(["final", "strict"], [qrels, parse_qrels(other)], prepared, measure="AP").to_dict()
    assert job["result"]["labels"] == ["final", "strict"] and len(job["result"]["qrels_version_ids"]) == 2
    assert np.allclose(job["result"]["tau_b"], expected["tau_b"]) and job["result"]["tau_b"][0][1] < 1
    assert np.allclose(job["result"]["tau_ap"], expected["tau_ap"])
    for label in ("final", "strict"):
        assert job["result"]["scores"][label] == pytest.approx(expected["scores"][label])
    assert job["result"]["judgements"] == expected["judgements"]

    # every job draws its figure
    for kind in ("judged-fraction", "novelty", "strata", "swap-rate", "type-significance", "efficiency"):
        assert_svg_figure(client, organiser, jobs[kind]["id"])
    assert "tau_b(final, strict)" in assert_svg_figure(client, organiser, jobs["qrels-versions"]["id"])
    chart = client.get(f"/api/analyses/{jobs['run-vs-median']['id']}/figure?run={names[0]}", headers=organiser)
    assert chart.status_code == 200 and names[0] in chart.text
    assert not any(name in chart.text for name in names[1:])  # one team's chart names no other run
    missing = client.get(f"/api/analyses/{jobs['run-vs-median']['id']}/figure", headers=organiser)
    assert missing.status_code == 422 and missing.json()["errors"][0]["field"] == "run"
    unknown = client.get(f"/api/analyses/{jobs['run-vs-median']['id']}/figure?run=nobody", headers=organiser)
    assert unknown.status_code == 422
    assert client.get(f"/api/analyses/{jobs['novelty']['id']}/figure", headers=assessor).status_code == 403


def qrels_id(client, organiser, campaign):
    """The id of the campaign's qrels version labelled final."""
    versions = client.get(f"/api/campaigns/{campaign.id}/qrels", headers=organiser).json()
    return next(v["id"] for v in versions if v["label"] == "final")


BAD = [
    ("judged-fraction", {"depth": [1]}, "params.depth"),  # unknown name
    ("judged-fraction", {"depths": [0]}, "params.depths.0"),
    ("swap-rate", {"bin_width": 0}, "params.bin_width"),
    ("swap-rate", {"measure": "nonsense"}, "params.measure"),
    ("type-significance", {"method": "anova"}, "params.method"),
    ("type-significance", {"by": "team"}, "params.by"),
    ("novelty", {"measure": "AP"}, "params.measure"),
    ("strata", {"x": 1}, "params.x"),
    ("run-vs-median", {"run": "secretrun0"}, "params.run"),
    ("efficiency", {"measure": "nonsense"}, "params.measure"),
    ("qrels-versions", {"qrels_version_ids": [1]}, "params.qrels_version_ids"),  # at least two
    ("qrels-versions", {}, "params.qrels_version_ids"),  # the campaign has one version
    ("qrels-versions", {"qrels_version_ids": [999998, 999999]}, "params.qrels_version_ids"),  # not its versions
    ("moment-effectiveness", {}, "kind"),  # moments only
]


def test_bad_parameters_of_the_campaign_analyses_are_a_422(judged_campaign, client, organiser):
    campaign, *_ = judged_campaign  # its own: the test above adds a qrels version to the module's `evaluated`
    evaluate_campaign(client, organiser, campaign.id)
    for kind, params, field in BAD:
        response = _post(client, organiser, campaign.id, kind, **params)
        assert response.status_code == 422, (kind, response.text)
        assert [e["field"] for e in response.json()["errors"]] == [field], (kind, response.text)
