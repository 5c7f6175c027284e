"""Model assessors' rules called directly: provenance validation, keyframe instants, the grade a verdict stores and
the grade an item's judgements settle on (graded scales), and a model's push checked all or none."""

from __future__ import annotations

import pytest

from app.services import campaigns, model_judging, pools, teams
from app.services.auth import Principal
from app.services.errors import Conflict, Forbidden, InvalidInput, NotFound
from app.services.judging import verdict_grade
from app.services.model_judging import ModelVerdictIn, check_provenance, keyframe_urls
from app.services.qrels import UNJUDGED, final_grade
from app.storage.models import AssessorKind, CampaignStatus, Judgement, Role, Verdict
from tests.services.conftest import ORGANISER


def fields(error: InvalidInput) -> list[object]:
    """The fields an InvalidInput names."""
    return [e["field"] for e in error.errors]


def test_provenance_rules():
    assert check_provenance(AssessorKind.human, None) is None
    stored = check_provenance(AssessorKind.model, {"model": "m", "version": None, "parameters": {"top_p": 0.9}})
    assert stored == {"model": "m", "parameters": {"top_p": 0.9}}  # omitted fields are not stored as nulls
    cases = [
        (AssessorKind.human, {"model": "m"}, ["provenance"]),
        (AssessorKind.model, None, ["provenance"]),
        (AssessorKind.model, {"version": "1"}, ["provenance.model"]),
        (AssessorKind.model, {"model": " "}, ["provenance.model"]),
        (AssessorKind.model, {"model": "m", "seed": 1}, ["provenance.seed"]),
        (AssessorKind.model, {"model": "m", "config_hash": "x" * 65}, ["provenance.config_hash"]),
        (AssessorKind.model, {"model": "m", "parameters": "hot"}, ["provenance.parameters"]),
        (AssessorKind.model, {"model": "m", "parameters": {"t": float("nan")}}, ["provenance.parameters"]),
        (AssessorKind.model, {"model": "m", "parameters": {"t": "a\x00b"}}, ["provenance"]),
        (AssessorKind.model, {"model": "m", "parameters": {"t": "y" * 16_400}}, ["provenance"]),
    ]
    for kind, provenance, named in cases:
        with pytest.raises(InvalidInput) as caught:
            check_provenance(kind, provenance)
        assert fields(caught.value) == named, provenance
    # the bound is on the whole object's compact JSON: 16,384 bytes pass, one more does not
    filler = 16_384 - len('{"model":"m","parameters":{"t":""}}')
    assert check_provenance(AssessorKind.model, {"model": "m", "parameters": {"t": "y" * filler}}) is not None
    with pytest.raises(InvalidInput):
        check_provenance(AssessorKind.model, {"model": "m", "parameters": {"t": "y" * (filler + 1)}})


def test_keyframes_are_the_middles_of_three_equal_parts_of_the_shot():
    assert keyframe_urls("https://m/v.mp4", 3.0, 6.0) == [
        "https://m/v.mp4#t=3.5",
        "https://m/v.mp4#t=4.5",
        "https://m/v.mp4#t=5.5",
    ]
    assert keyframe_urls("https://m/v.mp4#t=3,6", 0.0, 1.0) == [
        "https://m/v.mp4#t=0.167",
        "https://m/v.mp4#t=0.5",
        "https://m/v.mp4#t=0.833",
    ]  # a fragment of the template is replaced, not appended to
    assert keyframe_urls(None, 0.0, 1.0) == [] and keyframe_urls("https://m/v.mp4", None, None) == []


def test_the_grade_a_verdict_stores():
    assert verdict_grade(Verdict.relevant, None, 1) == 1
    assert verdict_grade(Verdict.relevant, 2, 2) == 2
    assert verdict_grade(Verdict.not_relevant, None, 3) == 0
    assert verdict_grade(Verdict.not_relevant, 0, 3) == 0
    assert verdict_grade(Verdict.unsure, None, 3) is None
    for verdict, grade, top in (
        (Verdict.relevant, 2, 1),
        (Verdict.relevant, 0, 2),
        (Verdict.not_relevant, 1, 2),
        (Verdict.unsure, 0, 2),
    ):
        with pytest.raises(InvalidInput) as caught:
            verdict_grade(verdict, grade, top)
        assert fields(caught.value) == ["grade"]


def judgement(verdict: Verdict, grade: int | None, round_: int = 1) -> Judgement:
    """An unsaved judgement."""
    return Judgement(pool_item_id=1, round=round_, verdict=verdict, grade=grade)


def test_final_grade_is_the_settled_judgements_grade():
    r, n, u = Verdict.relevant, Verdict.not_relevant, Verdict.unsure
    assert final_grade({}) == UNJUDGED
    assert final_grade({1: judgement(r, None)}) == 1  # a relevant verdict without a grade, as binary verdicts
    assert final_grade({1: judgement(r, 1)}) == 1 and final_grade({1: judgement(n, 0)}) == 0
    assert final_grade({1: judgement(u, None)}) == 0
    assert final_grade({1: judgement(r, 2)}) == 2
    # agreeing rounds: the second round's grade; disagreeing: the first stands until adjudicated
    assert final_grade({1: judgement(r, 2, 1), 2: judgement(r, 1, 2)}) == 1
    assert final_grade({1: judgement(r, 2, 1), 2: judgement(n, 0, 2)}) == 2
    assert final_grade({1: judgement(r, 2, 1), 2: judgement(n, 0, 2), 3: judgement(r, 3, 3)}) == 3
    assert final_grade({1: judgement(r, 2, 1), 2: judgement(n, 0, 2), 3: judgement(n, 0, 3)}) == 0


RUN = "".join(f"{t} Q0 d{d} {d} {10 - d} r\n" for t in (1, 2) for d in range(1, 6))


def test_a_push_is_all_or_none(make_campaign):
    campaign = make_campaign(n_topics=2)
    session = campaign.session
    campaign.submit(RUN)
    campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.closed)
    pool = pools.create_pool(session, ORGANISER, campaign.id, pools.PoolSpec(kind="depth", depth=5, seed=1))
    model, _ = teams.create_assessor(
        session, ORGANISER, campaign.id, "m", kind=AssessorKind.model, provenance={"model": "sim"}
    )
    person, _ = teams.create_assessor(session, ORGANISER, campaign.id, "p")
    pools.assign_topics(session, ORGANISER, pool.id, [("1", model.id)])
    session.commit()
    me = Principal(Role.assessor, token_id=0, campaign_id=campaign.id, assessor_id=model.id)
    items = model_judging.pull(session, me, 5, max_batch=10, lease_seconds=60).items
    assert [i.topic for i in items] == ["1"] * 5 and sorted(i.shot_id for i in items) == [f"d{d}" for d in range(1, 6)]
    assert model_judging.pull(session, me, 5, max_batch=10, lease_seconds=60).items == []  # all five are leased
    ids = [i.item_id for i in items]
    pushed = model_judging.push(session, me, [ModelVerdictIn(ids[0], 1, 0.9)], max_batch=10)
    assert (pushed.accepted, pushed.unchanged) == (1, 0)
    session.commit()
    with pytest.raises(Conflict, match=f"item {ids[0]} \\(stored grade 1, this batch 0\\)"):
        model_judging.push(session, me, [ModelVerdictIn(ids[1], 1), ModelVerdictIn(ids[0], 0)], max_batch=10)
    session.rollback()
    with pytest.raises(NotFound, match="10000000000"):
        model_judging.push(session, me, [ModelVerdictIn(ids[1], 1), ModelVerdictIn(10**10, 1)], max_batch=10)
    session.rollback()
    with pytest.raises(InvalidInput) as caught:
        model_judging.push(session, me, [ModelVerdictIn(ids[1], 2), ModelVerdictIn(ids[1], 1)], max_batch=10)
    assert fields(caught.value) == ["verdicts[0].grade", "verdicts[1].item_id"]
    session.rollback()
    pushed = model_judging.push(
        session, me, [ModelVerdictIn(i, 0) for i in ids[1:]] + [ModelVerdictIn(ids[0], 1)], max_batch=10
    )
    assert (pushed.accepted, pushed.unchanged) == (4, 1)
    session.commit()
    someone = Principal(Role.assessor, token_id=0, campaign_id=campaign.id, assessor_id=person.id)
    with pytest.raises(Forbidden, match="for model assessors"):
        model_judging.pull(session, someone, 1, max_batch=10, lease_seconds=60)
    session.rollback()
