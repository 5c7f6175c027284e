"""The agreement report of a campaign: the newest human and model versions by default, the judge's provenance, the
core's numbers on the stored grades (checked against a plain count and scipy), the self-preference warning from a
run's description, and clear refusals."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

from app.services import agreement_report
from app.services.auth import Principal
from app.services.errors import Conflict, InvalidInput, NotFound
from app.storage.models import Role
from tests.api.helpers import new_campaign
from tests.services.agreement_cases import PROVENANCE, AgreementCampaign, build

ORGANISER = Principal(Role.organiser, token_id=0)


@pytest.fixture(scope="module")
def made(client, organiser, sessions) -> AgreementCampaign:  # type: ignore[no-untyped-def]
    """One campaign with a human and a model version, only read by the tests."""
    return build(client, organiser, sessions, seed=3)


def test_the_report_compares_the_newest_human_and_model_versions(made: AgreementCampaign, sessions) -> None:  # type: ignore[no-untyped-def]
    with sessions() as session:
        report = agreement_report.agreement_report(session, ORGANISER, made.campaign.id)  # type: ignore[attr-defined]
    assert (report["human"]["id"], report["model"]["id"]) == (made.human_id, made.model_id)
    assert report["labels"] == {"human": "people", "model": "umbrela-only"}
    (judge,) = report["model"]["model_assessors"]
    assert (judge["model"], judge["version"], judge["config_hash"]) == (
        PROVENANCE["model"],
        PROVENANCE["version"],
        PROVENANCE["config_hash"],
    )
    assert judge["family"] == "gpt" and report["judge_families"] == ["gpt"] and report["model"]["human_share"] == 0.1

    # the judgements: counted here from the grades stored
    counts = np.zeros((2, 2), dtype=int)
    for key, grade in made.human.items():
        counts[grade, made.model[key]] += 1
    j = report["judgements"]
    assert j["confusion"] == counts.tolist() and j["common"] == len(made.human)
    assert j["base_rate"]["human"] == pytest.approx(counts[1].sum() / counts.sum())
    assert j["base_rate"]["model"] == pytest.approx(counts[:, 1].sum() / counts.sum())
    observed, expected = np.trace(counts) / counts.sum(), (counts.sum(1) @ counts.sum(0)) / counts.sum() ** 2
    kappa = (observed - expected) / (1 - expected)
    assert j["kappa"]["linear"] == pytest.approx(kappa) and j["kappa"]["quadratic"] == pytest.approx(kappa)

    r = report["rankings"]
    assert r["tau_b"] == pytest.approx(scipy.stats.kendalltau(r["human"], r["model"]).statistic)
    assert r["top_k"] == 3 and sorted(r["runs"]) == sorted(made.runs)
    shifts = {row["run"]: row for row in report["shifts"]["runs"]}
    for i, run in enumerate(r["runs"]):
        assert shifts[run]["shift"] == pytest.approx(r["model"][i] - r["human"][i])
        assert shifts[run]["ci_low"] <= shifts[run]["shift"] <= shifts[run]["ci_high"]

    (preference,) = [w for w in report["warnings"] if w["code"] == "self_preference"]
    assert [row["run"] for row in preference["details"]["runs"]] == ["secretrun1"]
    assert "gpt" in preference["message"]


def test_versions_named_explicitly_and_refusals(made: AgreementCampaign, sessions, client, organiser) -> None:  # type: ignore[no-untyped-def]
    campaign_id = made.campaign.id  # type: ignore[attr-defined]
    with sessions() as session:
        swapped = agreement_report.agreement_report(session, ORGANISER, campaign_id, made.model_id, made.human_id)
        assert swapped["labels"] == {"human": "umbrela-only", "model": "people"}
        assert swapped["model"]["model_assessors"] == [] and swapped["judge_families"] == []
        assert [w for w in swapped["warnings"] if w["code"] == "self_preference"] == []  # no family to look for
        with pytest.raises(InvalidInput) as refused:
            agreement_report.agreement_report(session, ORGANISER, campaign_id, made.human_id, 2_000_000)
        assert refused.value.errors == [
            {"field": "model", "message": "qrels version 2000000 is not a version of this campaign"}
        ]
        with pytest.raises(InvalidInput):
            agreement_report.agreement_report(session, ORGANISER, campaign_id, made.human_id, made.human_id)
        bound = Principal(Role.organiser, token_id=0, campaign_id=campaign_id + 1)
        with pytest.raises((NotFound, Conflict)):
            agreement_report.agreement_report(session, bound, campaign_id)
    empty = new_campaign(client, organiser, 2)
    with sessions() as session, pytest.raises(Conflict, match="no human qrels version"):
        agreement_report.agreement_report(session, ORGANISER, empty.id)


def test_the_analysis_kind_computes_what_the_page_shows(made: AgreementCampaign, sessions) -> None:  # type: ignore[no-untyped-def]
    """`machine-agreement` (the CLI's and the jobs' compute) on the same versions and runs as the page."""
    from sqlalchemy import select

    from app.evaluation.grading.prepared_runs import prepare_runs
    from app.services.analysis_registry import ANALYSES, AnalysisData, parse_params
    from app.services.qrels import load_qrels
    from app.services.run_arrays import load_runs
    from app.storage.models import QrelsVersion, Run

    campaign_id = made.campaign.id  # type: ignore[attr-defined]
    with sessions() as session:
        page = agreement_report.agreement_report(session, ORGANISER, campaign_id)
        runs = list(session.scalars(select(Run).where(Run.campaign_id == campaign_id).order_by(Run.id)))
        prepared = prepare_runs(load_runs(session, [r.id for r in runs]), 100, names=[r.name for r in runs])
        versions = [session.get(QrelsVersion, i) for i in (made.human_id, made.model_id)]
        data = AnalysisData(
            runs=[r.name for r in runs],
            prepared=prepared,
            versions=[(v.label, load_qrels(session, v)) for v in versions if v is not None],
            units=lambda which: (which, [getattr(r, which) for r in runs]),
        )
    params = parse_params(
        "machine-agreement",
        {"human_version_id": made.human_id, "model_version_id": made.model_id, "judge_family": ["secretrun1"]},
    )
    assert params.qrels_version_ids == [made.human_id, made.model_id]
    computed = ANALYSES["machine-agreement"].compute(data, params, lambda _: None)
    result = computed.data
    assert result["judgements"] == page["judgements"] and result["rankings"] == page["rankings"]
    assert result["shifts"] == page["shifts"] and result["qrels_version_ids"] == [made.human_id, made.model_id]
    (preference,) = [w for w in result["warnings"] if w["code"] == "self_preference"]  # the family given, in a name
    assert [row["run"] for row in preference["details"]["runs"]] == ["secretrun1"]
    assert computed.notes == [w["message"] for w in result["warnings"]]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"human_version_id": 1}, "together"),
        ({"human_version_id": 1, "model_version_id": 1}, "same version"),
        ({"human_version_id": 1, "model_version_id": 2, "qrels_version_ids": [2, 1]}, "give one"),
        ({"qrels_version_ids": [1, 2, 3]}, "at most 2"),
        ({"top_k": 1}, "greater than or equal to 2"),
    ],
)
def test_the_analysis_parameters_are_checked(params: dict, message: str) -> None:
    from pydantic import ValidationError

    from app.services.analysis_registry import parse_params

    with pytest.raises(ValidationError, match=message):
        parse_params("machine-agreement", params)


def test_the_analysis_runs_as_a_job_on_named_versions(made: AgreementCampaign, client, organiser) -> None:  # type: ignore[no-untyped-def]
    """POST /api/campaigns/{id}/analyses with kind machine-agreement: the versions by id, its figure drawn."""
    from tests.api.helpers import assert_svg_figure, evaluate_campaign, start_analysis

    campaign_id = made.campaign.id  # type: ignore[attr-defined]
    evaluate_campaign(client, organiser, campaign_id, qrels_version_id=made.human_id, measures=["AP"])
    job = start_analysis(
        client, organiser, campaign_id, "machine-agreement", human_version_id=made.human_id,
        model_version_id=made.model_id, resamples=1000,
    )  # fmt: skip
    result = job["result"]
    assert result["labels"] == {"human": "people", "model": "umbrela-only"}
    assert result["qrels_version_ids"] == [made.human_id, made.model_id]
    assert {row["run"] for row in result["shifts"]["runs"]} == set(made.runs)
    assert "tau_b" in assert_svg_figure(client, organiser, job["id"])
    by_default = start_analysis(client, organiser, campaign_id, "machine-agreement", resamples=200)
    assert by_default["result"]["qrels_version_ids"] == [made.human_id, made.model_id]  # newest human, newest model
    refused = client.post(
        f"/api/campaigns/{campaign_id}/analyses",
        json={
            "kind": "machine-agreement",
            "params": {"human_version_id": made.human_id, "model_version_id": 2_000_000},
        },
        headers=organiser,
    )
    assert refused.status_code == 422 and refused.json()["errors"][0]["field"] == "params.qrels_version_ids"


def test_the_default_human_version_is_the_newest_fully_human_one() -> None:
    from types import SimpleNamespace

    def version(id_: int, judges: str, provenance: dict | None = None) -> SimpleNamespace:
        return SimpleNamespace(id=id_, judges=judges, provenance=provenance)

    sample = version(5, "human", {"verification_only": True})
    newest_first = [version(6, "combined"), sample, version(4, "model"), version(3, "human"), version(2, "model")]
    assert agreement_report.default_versions(newest_first) == (3, 4)  # type: ignore[arg-type]
    assert agreement_report.default_versions([sample, version(4, "model")]) == (5, 4)  # type: ignore[arg-type]
    assert agreement_report.default_versions([version(1, "combined")]) == (None, None)  # type: ignore[arg-type]


def test_a_verification_only_human_version_is_flagged_as_partial(client, organiser, sessions) -> None:  # type: ignore[no-untyped-def]
    """A human version holding only a model-assisted pool's verification sample scores runs as if its unjudged items
    were not relevant: the report says so first, and keeps the other warnings."""
    from app.storage.models import QrelsVersion

    made = build(client, organiser, sessions, seed=4)
    campaign_id = made.campaign.id  # type: ignore[attr-defined]
    with sessions() as session:
        plain = agreement_report.agreement_report(session, ORGANISER, campaign_id)
        version = session.get(QrelsVersion, made.human_id)
        version.provenance = {"verification_only": True, "human_share": 0.1}
        session.commit()
        flagged = agreement_report.agreement_report(session, ORGANISER, campaign_id)
    assert "partial_human" not in [w["code"] for w in plain["warnings"]]
    first, *rest = flagged["warnings"]
    assert first["code"] == "partial_human" and first["details"] == {"human_version_id": made.human_id}
    assert "verification sample" in first["message"]
    assert rest == plain["warnings"]
