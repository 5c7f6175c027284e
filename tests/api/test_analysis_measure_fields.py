"""Every analysis parameter naming measures is checked against the evaluation when the job is asked for: a measure the
evaluation lacks is a 422 naming the parameter, never a failed job (model-selection's validation and test measures,
and its validation topics, included)."""

from __future__ import annotations

from app.services.analyses import MEASURE_FIELDS
from app.services.analysis_registry import ANALYSES
from tests.api.helpers import start_analysis


def test_every_parameter_naming_measures_is_one_the_request_check_resolves() -> None:
    named = {field for record in ANALYSES.values() for field in record.params.model_fields if "measure" in field}
    assert named == set(MEASURE_FIELDS)


def test_model_selection_with_an_unknown_measure_or_topic_answers_422_naming_it(evaluated, client, organiser):  # type: ignore[no-untyped-def]
    campaign = evaluated[0]
    path = f"/api/campaigns/{campaign.id}/analyses"
    cases = [
        ({"validation_measures": ["no-such-measure"]}, "params.validation_measures.0"),
        ({"test_measures": ["AP", "P@nope"]}, "params.test_measures.1"),
        ({"validation_topics": ["1", "9999"]}, "params.validation_topics"),
        ({"validation_topics": ["1", "2", "3"]}, "params.validation_topics"),  # nothing left to test on
    ]
    for params, field in cases:
        refused = client.post(path, json={"kind": "model-selection", "params": params}, headers=organiser)
        assert refused.status_code == 422, (params, refused.text)
        assert refused.json()["errors"][0]["field"] == field
    done = start_analysis(
        client, organiser, campaign.id, "model-selection", validation_measures=["AP"], test_measures=["AP", "P@10"]
    )
    assert done["params"]["validation_measures"] == ["AP"] and done["status"] == "done"
    assert done["params"]["test_measures"] == ["AP", "P@10"]
