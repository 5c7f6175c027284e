"""Human verification of a model's verdicts: model-assisted pools, each topic's seeded draw (reproducible, of the
chosen share, uniform or stratified by the model's confidence, drawn once under concurrent pushes) and the drawn
items reaching people through the normal judging queue. Model verdicts are inserted as rows (test data)."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.evaluation.statistics.prediction_powered import inclusion_probabilities, verification_draw
from app.services import campaigns, judging, pools, teams, verification
from app.services.auth import Principal
from app.services.errors import InvalidInput
from app.storage.models import Assessor, CampaignStatus, Pool, Role
from tests.services.conftest import ORGANISER


def add_model(session: Session, campaign_id: int, name: str = "judge-model") -> int:
    """A model assessor of the campaign (a row: its registration is the batch API's)."""
    model = Assessor(campaign_id=campaign_id, name=name, kind="model", provenance={"model": name, "version": "1"})
    session.add(model)
    session.commit()
    return model.id


def closed_campaign(make_campaign, n_topics: int, n_docs: int):  # type: ignore[no-untyped-def]
    """A closed campaign whose one run returns d1..d{n_docs} for every topic (a depth pool of n_docs per topic)."""
    campaign = make_campaign(n_topics=n_topics)
    run = "".join(f"{t} Q0 d{d} {d} {1000 - d} r\n" for t in campaign.topics for d in range(1, n_docs + 1))
    campaign.submit(run)
    campaigns.set_status(campaign.session, ORGANISER, campaign.id, CampaignStatus.closed)
    campaign.session.commit()
    return campaign


def assisted_pool(campaign, depth: int, share: float, stratify: str = "none", seed: int = 11) -> Pool:  # type: ignore[no-untyped-def]
    """A model-assisted depth pool."""
    spec = pools.PoolSpec(
        kind="depth", depth=depth, seed=seed, verification=pools.VerificationSpec(share, stratify=stratify)
    )
    pool = pools.create_pool(campaign.session, ORGANISER, campaign.id, spec)
    campaign.session.commit()
    return pool


def items_of(session: Session, pool: Pool, topic: str | None = None) -> list:  # type: ignore[type-arg]
    """The pool's sampled items (id, topic, docno, pi, drawn) in topic and docno order."""
    return session.execute(
        text(
            "SELECT i.id, t.number AS topic, i.docno, i.verification_probability AS pi, i.verification_sampled AS drawn"
            " FROM pool_items i JOIN topics t ON t.id = i.topic_id WHERE i.pool_id = :pool AND i.sampled"
            ' AND (CAST(:topic AS text) IS NULL OR t.number = :topic) ORDER BY t.number, i.docno COLLATE "C"'
        ),
        {"pool": pool.id, "topic": topic},
    ).all()


def push(session: Session, model: int, rows, probability=None) -> None:  # type: ignore[no-untyped-def]
    """Insert the model's verdicts on `rows` (grade 1 where its probability >= 0.5) and call the draw."""
    for k, row in enumerate(rows):
        p = None if probability is None else float(probability[k])
        session.execute(
            text("INSERT INTO model_verdicts (pool_item_id, assessor_id, grade, probability) VALUES (:i, :a, :g, :p)"),
            {"i": row.id, "a": model, "g": int(p is not None and p >= 0.5), "p": p},
        )
    verification.after_model_verdicts(session, [r.id for r in rows])


def tasks(session: Session, pool: Pool) -> list[tuple[int, int, str]]:
    """The pool's judging tasks (item, round, reason)."""
    return [
        tuple(r)
        for r in session.execute(
            text(
                "SELECT t.pool_item_id, t.round, t.reason FROM judging_tasks t"
                " JOIN pool_items i ON i.id = t.pool_item_id WHERE i.pool_id = :pool ORDER BY t.pool_item_id"
            ),
            {"pool": pool.id},
        )
    ]


def test_a_model_assisted_pool_queues_nothing_for_people_until_a_topic_is_model_judged(make_campaign):
    campaign = closed_campaign(make_campaign, n_topics=2, n_docs=12)
    session = campaign.session
    model = add_model(session, campaign.id)
    pool = assisted_pool(campaign, depth=12, share=0.25)
    assert pool.params["verification"] == {"human_share": 0.25, "stratify": "none", "model_assessor_id": model}
    assert tasks(session, pool) == []
    first = items_of(session, pool, "1")
    push(session, model, first[:-1])  # one item of topic 1 not judged yet: nothing is drawn
    session.commit()
    assert {(r.pi, r.drawn) for r in items_of(session, pool)} == {(None, None)} and tasks(session, pool) == []
    push(session, model, first[-1:])
    session.commit()
    drawn = items_of(session, pool, "1")
    expected = verification_draw(pool.seed, "1", [r.docno for r in drawn], np.full(12, 0.25))
    assert [r.pi for r in drawn] == [0.25] * 12 and [r.drawn for r in drawn] == expected.tolist()
    assert tasks(session, pool) == sorted((r.id, 1, "verification") for r in drawn if r.drawn)
    assert {(r.pi, r.drawn) for r in items_of(session, pool, "2")} == {(None, None)}  # topic 2 waits for its verdicts
    # a retried push changes nothing
    verification.after_model_verdicts(session, [r.id for r in first])
    session.commit()
    assert items_of(session, pool, "1") == drawn and len(tasks(session, pool)) == int(expected.sum())
    progress = verification.topic_progress(session, pool)
    assert [(p.topic, p.items, p.model_judged, p.drawn, p.human_judged) for p in progress] == [
        ("1", 12, 12, int(expected.sum()), 0),
        ("2", 12, 0, None, 0),
    ]


def test_the_draw_is_reproducible_and_takes_the_share_uniformly(make_campaign):
    campaign = closed_campaign(make_campaign, n_topics=40, n_docs=50)
    session = campaign.session
    model = add_model(session, campaign.id)
    draws = []
    for _ in range(2):  # the same seed, rebuilt: the same sample
        pool = assisted_pool(campaign, depth=50, share=0.3, seed=5)
        push(session, model, items_of(session, pool))
        session.commit()
        draws.append([(r.topic, r.docno, r.pi, r.drawn) for r in items_of(session, pool)])
        session.execute(text("DELETE FROM model_verdicts WHERE assessor_id = :m"), {"m": model})
        session.commit()
    assert draws[0] == draws[1]
    drawn = np.array([d[3] for d in draws[0]])
    assert {d[2] for d in draws[0]} == {0.3}
    # 2000 Bernoulli(0.3) draws: sd 20.5; 4 sd is 82
    assert abs(int(drawn.sum()) - 600) < 82
    for topic in ("1", "17", "40"):  # and each topic's draw is verification_draw's, whatever order
        rows = [d for d in draws[0] if d[0] == topic]
        reversed_rows = rows[::-1]
        again = verification_draw(5, topic, [d[1] for d in reversed_rows], np.full(len(rows), 0.3))
        assert again.tolist() == [d[3] for d in reversed_rows]


def test_a_draw_stratified_by_confidence_has_the_share_and_favours_unsure_verdicts(make_campaign):
    campaign = closed_campaign(make_campaign, n_topics=30, n_docs=60)
    session = campaign.session
    model = add_model(session, campaign.id)
    pool = assisted_pool(campaign, depth=60, share=0.2, stratify="confidence", seed=9)
    rows = items_of(session, pool)
    rng = np.random.default_rng(4)
    probability = np.round(rng.choice([0.02, 0.5, 0.97], size=len(rows), p=[0.6, 0.2, 0.2]), 2)
    push(session, model, rows, probability)
    session.commit()
    stored = items_of(session, pool)
    pi = np.array([r.pi for r in stored])
    drawn = np.array([r.drawn for r in stored])
    topic = np.array([r.topic for r in stored])
    for number in campaign.topics:  # each topic's pi is the estimator's, with mean exactly the share
        at = topic == number
        expected = inclusion_probabilities(probability[at], 0.2, stratify=True)
        assert np.allclose(pi[at], expected) and pi[at].mean() == pytest.approx(0.2)
    unsure = probability == 0.5
    assert pi[unsure].min() > pi[~unsure].max()
    # 1800 Poisson draws: the count within 4 sd of its expectation, and unsure items drawn at a higher rate
    sd = float(np.sqrt((pi * (1 - pi)).sum()))
    assert abs(int(drawn.sum()) - pi.sum()) < 4 * sd
    assert drawn[unsure].mean() > 1.5 * drawn[~unsure].mean()


def test_concurrent_pushes_finishing_a_topic_draw_it_once(make_campaign, sessions):  # type: ignore[no-untyped-def]
    """The last two verdicts of a topic pushed at once: without the lock each push would miss the other's uncommitted
    verdict and the topic would never be drawn; with it, the second push waits and draws."""
    campaign = closed_campaign(make_campaign, n_topics=1, n_docs=20)
    session = campaign.session
    model = add_model(session, campaign.id)
    pool = assisted_pool(campaign, depth=20, share=0.5, seed=3)
    rows = items_of(session, pool)
    push(session, model, rows[:-2])
    session.commit()
    inserted, checked = threading.Barrier(2), threading.Barrier(2)
    errors: list[BaseException] = []

    def last_push(row) -> None:  # type: ignore[no-untyped-def]
        try:
            with sessions() as own:
                own.execute(
                    text("INSERT INTO model_verdicts (pool_item_id, assessor_id, grade) VALUES (:i, :a, 1)"),
                    {"i": row.id, "a": model},
                )
                own.flush()
                inserted.wait(timeout=30)  # both verdicts written, neither committed
                verification.after_model_verdicts(own, [row.id])
                try:  # unlocked, both pushes would get here having missed each other's verdict
                    checked.wait(timeout=2)
                except threading.BrokenBarrierError:  # locked, the other push waits for this commit
                    pass
                own.commit()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=last_push, args=(row,)) for row in rows[-2:]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    session.expire_all()
    stored = items_of(session, pool)
    assert all(r.pi == 0.5 for r in stored) and all(r.drawn is not None for r in stored)
    drawn = [r.id for r in stored if r.drawn]
    assert [t[0] for t in tasks(session, pool)] == sorted(drawn) and len(drawn) > 0


def test_people_get_only_the_drawn_items_through_the_judging_queue(make_campaign):
    campaign = closed_campaign(make_campaign, n_topics=1, n_docs=16)
    session = campaign.session
    model = add_model(session, campaign.id)
    pool = assisted_pool(campaign, depth=16, share=0.5, seed=21)
    ann, _ = teams.create_assessor(session, ORGANISER, campaign.id, "ann")
    pools.assign_topics(session, ORGANISER, pool.id, [("1", ann.id)])
    session.commit()
    as_ann = Principal(Role.assessor, token_id=0, campaign_id=campaign.id, assessor_id=ann.id)
    assert judging.next_tasks(session, as_ann, lease_seconds=60, n=20) == []
    session.rollback()
    push(session, model, items_of(session, pool))
    session.commit()
    drawn = {r.docno for r in items_of(session, pool) if r.drawn}
    shown = judging.next_tasks(session, as_ann, lease_seconds=60, n=20)
    session.commit()
    assert {t.shot_id for t in shown} == drawn and len(shown) == len(drawn)


def test_verification_parameters_are_checked(make_campaign):
    campaign = closed_campaign(make_campaign, n_topics=1, n_docs=4)
    session = campaign.session

    def refused(spec: pools.VerificationSpec) -> list[dict[str, object]]:
        with pytest.raises(InvalidInput) as caught:
            pools.create_pool(session, ORGANISER, campaign.id, pools.PoolSpec(kind="depth", depth=4, verification=spec))
        session.rollback()
        return caught.value.errors

    no_model = refused(pools.VerificationSpec(0.5))
    assert no_model == [
        {
            "field": "verification.model_assessor_id",
            "message": "the campaign has no model assessor: name the one to verify",
        }
    ]
    first = add_model(session, campaign.id, "m1")
    person, _ = teams.create_assessor(session, ORGANISER, campaign.id, "ann")
    session.commit()
    assert [e["field"] for e in refused(pools.VerificationSpec(0.0))] == ["verification.human_share"]
    assert [e["field"] for e in refused(pools.VerificationSpec(1.5, stratify="odd"))] == [
        "verification.human_share",
        "verification.stratify",
    ]
    assert refused(pools.VerificationSpec(0.5, model_assessor_id=person.id))[0]["message"] == (
        f"{person.id} is not a model assessor of this campaign"
    )
    second = add_model(session, campaign.id, "m2")
    assert "2 model assessors" in str(refused(pools.VerificationSpec(0.5))[0]["message"])
    spec = pools.PoolSpec(kind="depth", depth=4, verification=pools.VerificationSpec(1.0, model_assessor_id=second))
    pool = pools.create_pool(session, ORGANISER, campaign.id, spec)
    assert pool.params["verification"]["model_assessor_id"] == second != first
    with pytest.raises(InvalidInput):  # a pool people judge in full has no verification progress
        other = pools.create_pool(session, ORGANISER, campaign.id, pools.PoolSpec(kind="depth", depth=4))
        verification.topic_progress(session, other)
    session.rollback()
