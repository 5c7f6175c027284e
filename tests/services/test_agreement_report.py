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
