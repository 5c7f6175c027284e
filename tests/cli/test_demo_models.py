"""The demo's model-assisted campaign: a simulated model judges the whole pool through the batch API, the demo's people
verify exactly the drawn sample, human/model/combined versions are cut, the published board holds prediction-powered
estimates and the agreement report compares the model with people who judged every pooled item."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from rich.console import Console
from sqlalchemy import select

from app.cli import demo_models
from app.cli.demo import run_demo, synthesise
from app.judges.loading import config_hash
from app.judges.simulated import simulate
from app.storage.database import session_scope
from app.storage.models import Evaluation, Judgement, ModelVerdict, PoolItem, RunMean, Topic
from tests.api.helpers import SMALL_DEMO

SIZE = SMALL_DEMO


@pytest.fixture(scope="module")
def demo(small_demo):  # type: ignore[no-untyped-def]
    """The demo run once against the live server (shared with tests/api/test_demo_loop.py): its pages."""
    return small_demo


def _items(sessions, pool_id: int) -> dict[int, tuple[str, str, bool | None]]:  # type: ignore[no-untyped-def]
    """The pool's sampled items: id -> (topic, shot, drawn for people)."""
    with session_scope(sessions) as session:
        rows = session.execute(
            select(PoolItem.id, Topic.number, PoolItem.docno, PoolItem.verification_sampled)
            .join(Topic, Topic.id == PoolItem.topic_id)
            .where(PoolItem.pool_id == pool_id, PoolItem.sampled)
        ).all()
    return {int(i): (str(t), str(d), s) for i, t, d, s in rows}


def test_the_model_judges_every_item_once_and_people_exactly_the_drawn_sample(demo, client, organiser, sessions):
    cid = demo["model_assisted_campaign_id"]
    pool_id = int(str(demo["verification"]).rsplit("/", 2)[-2])
    items = _items(sessions, pool_id)
    assert len(items) >= 40
    with session_scope(sessions) as session:
        verdicts = session.execute(
            select(ModelVerdict.pool_item_id, ModelVerdict.grade, ModelVerdict.probability, ModelVerdict.config_hash)
            .join(PoolItem, PoolItem.id == ModelVerdict.pool_item_id)
            .where(PoolItem.pool_id == pool_id)
        ).all()
        people = session.execute(
            select(Judgement.pool_item_id, Judgement.round)
            .join(PoolItem, PoolItem.id == Judgement.pool_item_id)
            .where(PoolItem.pool_id == pool_id)
        ).all()
    assert Counter(v.pool_item_id for v in verdicts) == Counter(items.keys())  # every pooled item, once

    data = synthesise(SIZE)  # the demo's hidden truth: the model's verdicts are the simulated judge's on it
    ids = sorted(items)
    keys = [items[i][:2] for i in ids]
    truth = np.array([int(shot in data.truth.relevant[topic]) for topic, shot in keys])
    options = demo_models.judge_options(SIZE.seed, SIZE.model_depth, {r.name: r.data for r in data.runs})
    favoured = demo_models.top_items([r.data for r in data.runs if r.team == demo_models.FAVOURED_TEAM], 8)
    grades, probabilities = simulate(
        truth, keys, error_rate=demo_models.ERROR_RATE, noise=demo_models.NOISE, seed=SIZE.seed, favour=favoured,
        bias=demo_models.BIAS,
    )  # fmt: skip
    by_item = {v.pool_item_id: v for v in verdicts}
    assert [by_item[i].grade for i in ids] == grades.tolist()
    assert [by_item[i].probability for i in ids] == pytest.approx(probabilities.tolist())
    assert {v.config_hash for v in verdicts} == {config_hash(demo_models.JUDGE_SPEC, options)}
    assert options["favour_runs"] == "delta_run1,delta_run2"
    # the bias: favoured non-relevant items are called relevant more often than the others
    flagged = np.array([key in favoured for key in keys])
    false_positive = (grades == 1) & (truth == 0)
    assert false_positive[flagged & (truth == 0)].mean() > false_positive[~flagged & (truth == 0)].mean()

    drawn = {i for i, (_, _, sampled) in items.items() if sampled}
    assert all(sampled is not None for _, _, sampled in items.values())  # every topic's sample is drawn
    assert 0 < len(drawn) < len(items) / 2
    assert sorted(p.pool_item_id for p in people) == sorted(drawn) and {p.round for p in people} == {1}
    progress = client.get(f"/api/pools/{pool_id}/verification", headers=organiser).json()
    assert [(p["items"], p["model_judged"], p["drawn"], p["human_judged"]) for p in progress] == [
        (n, n, d, d)
        for n, d in (
            (sum(1 for t, _, _ in items.values() if t == topic), sum(1 for i in drawn if items[i][0] == topic))
            for topic in data.numbers
        )
    ]
    assert client.get(f"/api/campaigns/{cid}", headers=organiser).json()["status"] == "published"


def test_versions_the_estimated_board_and_the_agreement_report(demo, live_server, client, organiser, sessions):
    cid = demo["model_assisted_campaign_id"]
    versions = client.get(f"/api/campaigns/{cid}/qrels", headers=organiser).json()
    assert [(v["judges"], v["source"]) for v in versions] == [
        ("human", "cut"),
        ("model", "cut"),
        ("combined", "cut"),
        ("human", "imported"),  # the people's campaign's verdicts on this pool's items
    ]
    human, model, combined, people = versions
    assert human["provenance"]["verification_only"] is True
    assert combined["provenance"]["human_share"] == demo_models.HUMAN_SHARE
    assert combined["provenance"]["stratify"] == "confidence"
    assert model["n_entries"] == combined["n_entries"] == people["n_entries"]

    board = client.get(f"/api/public/campaigns/{cid}/leaderboard").json()
    assert board["qrels_version_id"] == combined["id"] and board["qrels_judges"]["judges"] == "combined"
    assert board["interval"]["widening"] == "prediction_powered" and len(board["rows"]) == 8
    with session_scope(sessions) as session:
        means = session.execute(
            select(Evaluation.qrels_version_id, RunMean.measure, RunMean.estimator, RunMean.sampling_se)
            .join(Evaluation, Evaluation.id == RunMean.evaluation_id)
            .where(Evaluation.campaign_id == cid)
        ).all()
    assert {m.qrels_version_id for m in means} == {human["id"], combined["id"]}  # the two evaluations
    estimated = [m for m in means if m.qrels_version_id == combined["id"] and m.measure == "AP"]
    assert len(estimated) == 8 and {m.estimator for m in estimated} == {"prediction_powered"}
    assert all(m.sampling_se > 0 for m in estimated)  # people verified a sample, not every item
    assert {m.estimator for m in means if m.qrels_version_id == human["id"]} == {None}

    page = client.get(str(demo["agreement"]).replace(live_server, ""))
    assert page.status_code == 200
    report = client.get(f"/organise/campaigns/{cid}/agreement.json", headers=organiser)
    assert report.status_code == 200, report.text
    body = report.json()
    assert (body["human"]["id"], body["model"]["id"]) == (people["id"], model["id"])  # the fully human version
    assert body["model"]["model_assessors"][0]["config_hash"] == config_hash(
        demo_models.JUDGE_SPEC, body["model"]["model_assessors"][0]["parameters"]
    )
    assert body["judgements"]["common"] == model["n_entries"]
    assert 0 < body["judgements"]["kappa_binary"] < 1
    warnings = {w["code"]: w for w in body["warnings"]}
    preference = warnings["self_preference"]["details"]
    assert [r["run"] for r in preference["runs"]] == ["delta_run1", "delta_run2"]
    assert preference["difference"] > 0  # the model lifts the runs of its own family
    assert run_demo(live_server, organiser["Authorization"].split()[1], SIZE, out=Console(quiet=True)) == demo
