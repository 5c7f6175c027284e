"""`trecpool judge` end to end against a live server: the simulated judge, as a model assessor registered and assigned
through the API, judges the whole pool over several workers, every item once with the simulated grade and the
configuration hash; a second run finds nothing left; bad tokens, judges and servers are one clear line."""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest
from click.testing import CliRunner
from sqlalchemy import select

from app.cli import cli
from app.judges.loading import config_hash
from app.judges.simulated import simulate
from app.storage.database import session_scope
from app.storage.models import ModelVerdict, PoolItem, Topic
from tests.api.helpers import setup_campaign

runner = CliRunner()


def _grade(topic: str, shot: str) -> int:
    """The qrels' grade of a shot: about a third relevant."""
    return int(zlib.crc32(f"{topic}/{shot}".encode()) % 3 == 0)


@pytest.fixture
def model_pool(make_campaign, client, organiser, sessions, tmp_path):  # type: ignore[no-untyped-def]
    """A depth-5 pool of 4 runs over 3 topics, a model assessor assigned every topic; (pool id, its token, the
    sampled (topic, shot) keys by item id, a qrels file of their true grades)."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, n_runs=4, depth=30, seed=8)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 5, "seed": 2}, headers=organiser
    ).json()
    body = {"name": "sim-judge", "kind": "model", "provenance": {"model": "simulated", "version": "1"}}
    response = client.post(f"/api/campaigns/{campaign.id}/assessors", json=body, headers=organiser)
    assert response.status_code == 201, response.text
    model_id, token = response.json()["id"], response.json()["token"]
    assignments = {"assignments": [{"topic": t, "assessor_id": model_id} for t in campaign.topics]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=assignments, headers=organiser).status_code == 201
    with session_scope(sessions) as session:
        rows = session.execute(
            select(PoolItem.id, Topic.number, PoolItem.docno)
            .join(Topic, Topic.id == PoolItem.topic_id)
            .where(PoolItem.pool_id == pool["id"], PoolItem.sampled)
        ).all()
    keys = {int(i): (str(t), str(d)) for i, t, d in rows}
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{t} 0 {d} {_grade(t, d)}\n" for t, d in keys.values()))
    return pool["id"], token, keys, qrels


def test_the_simulated_judge_judges_the_whole_pool_once(model_pool, live_server, sessions, client, monkeypatch):
    pool_id, token, keys, qrels = model_pool
    assert len(keys) >= 30
    options = ["-o", f"qrels={qrels}", "-o", "error_rate=0.25", "-o", "seed=3"]
    monkeypatch.setenv("TRECPOOL_TOKEN", token)  # the token from the environment, as --help advises
    args = ["judge", "--url", live_server, "--judge", "simulated", *options, "--batch", "4", "--workers", "3"]
    result = runner.invoke(cli, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    digest = config_hash("simulated", {"qrels": str(qrels), "error_rate": "0.25", "seed": "3"})
    summary = json.loads(result.stdout)
    assert summary["config_hash"] == digest and summary["assessor"] == "sim-judge"
    assert (summary["items"], summary["accepted"], summary["unchanged"]) == (len(keys), len(keys), 0)
    assert f"config hash {digest}" in result.stderr and token not in result.output

    with session_scope(sessions) as session:
        stored = session.execute(
            select(ModelVerdict.pool_item_id, ModelVerdict.grade, ModelVerdict.probability, ModelVerdict.config_hash)
            .join(PoolItem, PoolItem.id == ModelVerdict.pool_item_id)
            .where(PoolItem.pool_id == pool_id)
        ).all()
    assert sorted(r.pool_item_id for r in stored) == sorted(keys)  # every item exactly once
    ids = sorted(keys)
    truth = np.array([_grade(*keys[i]) for i in ids])
    grades, probabilities = simulate(truth, [keys[i] for i in ids], error_rate=0.25, noise=0.5, seed=3)
    by_item = {r.pool_item_id: r for r in stored}
    assert [by_item[i].grade for i in ids] == grades.tolist()
    assert [by_item[i].probability for i in ids] == pytest.approx(probabilities.tolist())
    assert {r.config_hash for r in stored} == {digest}
    assert 0 < int(np.sum(grades != truth)) < len(ids)  # the simulated model errs, not always

    again = runner.invoke(cli, args)  # nothing left to pull: a quiet second run
    assert again.exit_code == 0, again.output
    assert again.stdout.startswith("judged 0 items in 0 batches")


def test_refused_tokens_bad_judges_and_unreachable_servers_are_one_line(model_pool, live_server, organiser):
    _, token, _, qrels = model_pool
    common = ["judge", "--url", live_server, "-o", f"qrels={qrels}"]
    wrong = runner.invoke(cli, [*common, "--judge", "simulated", "--token", "tp_not-a-real-token"])
    assert wrong.exit_code == 1
    assert wrong.stderr.count("\n") == 2 and "error:" in wrong.stderr and "401" in wrong.stderr  # hash note + error
    assert "tp_not-a-real-token" not in wrong.output
    person = runner.invoke(cli, [*common, "--judge", "simulated", "--token", organiser["Authorization"][7:]])
    assert person.exit_code == 1 and "403" in person.stderr
    bad = runner.invoke(cli, [*common, "--judge", "no_such_judge_module:judge", "--token", token])
    assert bad.exit_code == 2
    message = "error: --judge 'no_such_judge_module:judge': no module 'no_such_judge_module' (is it installed or on"
    assert bad.stderr.strip() == f"{message} PYTHONPATH?)"
    down = runner.invoke(cli, ["judge", "--url", "http://127.0.0.1:9", "--judge", "simulated", "-o", f"qrels={qrels}",
                               "--token", token])  # fmt: skip
    assert down.exit_code == 1 and "http://127.0.0.1:9/api/judging/batch failed after 3 attempts" in down.stderr
    assert token not in down.output
