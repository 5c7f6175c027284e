"""Model-assisted pools and the human/model/combined qrels versions over HTTP: the `verification` object of a pool,
the `judges` of a cut, what a version shows of whose verdicts it holds, and the 4xx answers to bad values."""

from __future__ import annotations

from sqlalchemy import text

from app.storage.models import Assessor
from tests.api.helpers import setup_campaign


def add_model(sessions, campaign_id: int, name: str = "judge") -> int:  # type: ignore[no-untyped-def]
    """A model assessor row (its registration is the batch API's)."""
    with sessions() as session:
        model = Assessor(campaign_id=campaign_id, name=name, kind="model", provenance={"model": name})
        session.add(model)
        session.commit()
        return model.id


def fields(response) -> list[str]:  # type: ignore[no-untyped-def]
    """The fields a 422 names."""
    assert response.status_code == 422, response.text
    return [e["field"] for e in response.json()["errors"]]


def test_bad_verification_objects_are_refused_naming_the_field(make_campaign, client, organiser, sessions):  # type: ignore[no-untyped-def]
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=10)
    url = f"/api/campaigns/{campaign.id}/pools"

    def build(verification: object):  # type: ignore[no-untyped-def]
        return client.post(url, json={"kind": "depth", "depth": 5, "verification": verification}, headers=organiser)

    assert fields(build({"human_share": 0.3})) == ["verification.model_assessor_id"]  # no model assessor yet
    model = add_model(sessions, campaign.id)
    assert fields(build({"human_share": 0})) == ["verification.human_share"]
    assert fields(build({"human_share": 1.2})) == ["verification.human_share"]
    assert fields(build({})) == ["verification.human_share"]
    assert fields(build({"human_share": 0.3, "stratify": "loud"})) == ["verification.stratify"]
    assert fields(build({"human_share": 0.3, "model_assessor_id": 0})) == ["verification.model_assessor_id"]
    assert fields(build({"human_share": 0.3, "model_assessor_id": model + 1000})) == ["verification.model_assessor_id"]
    add_model(sessions, campaign.id, "second")
    assert fields(build({"human_share": 0.3})) == ["verification.model_assessor_id"]  # two models, none named
    built = build({"human_share": 0.3, "stratify": "confidence", "model_assessor_id": model})
    assert built.status_code == 201, built.text
    assert built.json()["params"]["verification"] == {
        "human_share": 0.3,
        "stratify": "confidence",
        "model_assessor_id": model,
    }


def test_cuts_say_whose_verdicts_they_hold(make_campaign, client, organiser, sessions):  # type: ignore[no-untyped-def]
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=10)
    model = add_model(sessions, campaign.id)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools",
        json={"kind": "depth", "depth": 3, "seed": 5, "verification": {"human_share": 0.5}},
        headers=organiser,
    ).json()
    progress = client.get(f"/api/pools/{pool['id']}/verification", headers=organiser)
    assert progress.status_code == 200
    assert [(p["topic"], p["model_judged"], p["drawn"], p["human_judged"]) for p in progress.json()] == [
        ("1", 0, None, 0),
        ("2", 0, None, 0),
        ("3", 0, None, 0),
    ]
    with sessions() as session:  # the model's verdicts on topic 1 (the batch API's rows)
        n = session.execute(
            text(
                "INSERT INTO model_verdicts (pool_item_id, assessor_id, grade, probability) "
                "SELECT i.id, :m, 1, 0.9 FROM pool_items i JOIN topics t ON t.id = i.topic_id "
                "WHERE i.pool_id = :p AND t.number = '1'"
            ),
            {"m": model, "p": pool["id"]},
        ).rowcount  # type: ignore[attr-defined]
        session.commit()
    assert n >= 3
    cut = f"/api/pools/{pool['id']}/qrels"
    assert fields(client.post(cut, json={"label": "x", "judges": "robots"}, headers=organiser)) == ["judges"]
    assert fields(
        client.post(cut, json={"label": "x", "judges": "model", "model_assessor_id": 0}, headers=organiser)
    ) == ["model_assessor_id"]
    refused = client.post(cut, json={"label": "x"}, headers=organiser)  # people have judged nothing
    assert refused.status_code == 409, refused.text
    made = client.post(cut, json={"label": "model", "judges": "model"}, headers=organiser)
    assert made.status_code == 201, made.text
    body = made.json()
    assert (body["judges"], body["n_entries"], body["unjudged_topics"]) == ("model", n, ["2", "3"])
    assert body["provenance"]["model_assessors"] == [{"id": model, "name": "judge", "provenance": {"model": "judge"}}]
    assert (body["provenance"]["human_share"], body["provenance"]["model_judgements"]) == (0.5, n)
    combined = client.post(
        cut, json={"label": "both", "judges": "combined", "allow_incomplete": True}, headers=organiser
    )
    assert combined.status_code == 201 and combined.json()["judges"] == "combined"
    listed = client.get(f"/api/campaigns/{campaign.id}/qrels", headers=organiser).json()
    assert [(q["label"], q["judges"], q["provenance"]["model_judgements"]) for q in listed] == [
        ("model", "model", n),
        ("both", "combined", n),
    ]


def test_plain_pools_have_no_combined_version_nor_verification_progress(make_campaign, client, organiser):  # type: ignore[no-untyped-def]
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=10)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 3}, headers=organiser
    ).json()
    combined = client.post(
        f"/api/pools/{pool['id']}/qrels", json={"label": "c", "judges": "combined"}, headers=organiser
    )
    assert fields(combined) == ["judges"]
    assert fields(client.get(f"/api/pools/{pool['id']}/verification", headers=organiser)) == ["pool_id"]
