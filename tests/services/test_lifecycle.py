"""The campaign lifecycle: which use case moves a campaign to which status, and what each status still allows."""

from __future__ import annotations

import pytest

from app.services import campaigns, evaluations, judging, pools, publication, qrels, teams
from app.services.auth import Principal
from app.services.errors import Conflict
from app.storage.models import CampaignStatus, Role, Verdict
from tests.services.conftest import ORGANISER

S = CampaignStatus
RUN = "".join(f"{t} Q0 d{d} {d} {10 - d} r\n" for t in (1, 2, 3) for d in (1, 2, 3))


def import_and_evaluate(campaign) -> None:  # type: ignore[no-untyped-def]
    """Import qrels and run an evaluation to the end."""
    data = "".join(f"{t} 0 d1 1\n{t} 0 d2 0\n" for t in campaign.topics).encode()
    qrels.import_qrels(campaign.session, ORGANISER, campaign.id, data, label="imported", max_errors=10)
    evaluation = evaluations.start_evaluation(campaign.session, ORGANISER, campaign.id, measures=["AP"])
    evaluations.run_evaluation(campaign.session, evaluation.id)
    campaign.session.commit()


def status(campaign) -> S:  # type: ignore[no-untyped-def]
    """The campaign's stored status."""
    return campaigns.get_campaign(campaign.session, ORGANISER, campaign.id).status


def test_evaluating_an_open_campaign_leaves_submissions_open(make_campaign):
    campaign = make_campaign()
    campaign.submit(RUN)
    import_and_evaluate(campaign)
    assert status(campaign) is S.open
    campaign.submit(RUN)  # uploads still accepted
    campaigns.set_status(campaign.session, ORGANISER, campaign.id, S.closed)
    assert campaigns.set_status(campaign.session, ORGANISER, campaign.id, S.open).status is S.open


def test_evaluating_a_closed_campaign_leaves_it_closed_and_reopenable(make_campaign):
    campaign = make_campaign()
    campaign.submit(RUN)
    campaigns.set_status(campaign.session, ORGANISER, campaign.id, S.closed)
    import_and_evaluate(campaign)
    assert status(campaign) is S.closed
    assert campaigns.set_status(campaign.session, ORGANISER, campaign.id, S.open).status is S.open


def test_publishing_needs_closed_submissions(make_campaign):
    campaign = make_campaign()
    campaign.submit(RUN)
    import_and_evaluate(campaign)
    with pytest.raises(Conflict, match="close submissions before publishing"):
        publication.publish(campaign.session, ORGANISER, campaign.id)
    campaign.session.rollback()
    campaigns.set_status(campaign.session, ORGANISER, campaign.id, S.closed)
    publication.publish(campaign.session, ORGANISER, campaign.id)
    assert status(campaign) is S.published


def test_pool_judging_evaluated_published(make_campaign):
    campaign = make_campaign()
    campaign.submit(RUN)
    session = campaign.session
    with pytest.raises(Conflict):
        pools.create_pool(session, ORGANISER, campaign.id, pools.PoolSpec(kind="depth", depth=2, seed=1))
    campaigns.set_status(session, ORGANISER, campaign.id, S.closed)
    pool = pools.create_pool(session, ORGANISER, campaign.id, pools.PoolSpec(kind="depth", depth=2, seed=1))
    assert status(campaign) is S.pooled
    assessor, _ = teams.create_assessor(session, ORGANISER, campaign.id, "judge")
    pools.assign_topics(session, ORGANISER, pool.id, [(t, assessor.id) for t in campaign.topics])
    assert status(campaign) is S.judging
    # an assigned pool without verdicts may still be rebuilt; the rebuilt one waits for its assignments again
    pool = pools.create_pool(session, ORGANISER, campaign.id, pools.PoolSpec(kind="depth", depth=3, seed=1))
    assert status(campaign) is S.pooled
    pools.assign_topics(session, ORGANISER, pool.id, [(t, assessor.id) for t in campaign.topics])
    me = Principal(Role.assessor, token_id=0, campaign_id=campaign.id, assessor_id=assessor.id)
    while (task := judging.next_task(session, me, lease_seconds=60)) is not None:
        judging.judge(session, me, task.task_id, Verdict.relevant if task.shot_id == "d1" else Verdict.not_relevant)
    assert status(campaign) is S.judging
    with pytest.raises(Conflict, match="judgements"):
        pools.create_pool(session, ORGANISER, campaign.id, pools.PoolSpec(kind="depth", depth=2, seed=1))
    qrels.cut_qrels(session, ORGANISER, pool.id, "final")
    evaluation = evaluations.start_evaluation(session, ORGANISER, campaign.id, measures=["AP"])
    assert status(campaign) is S.judging  # queuing changes nothing
    evaluations.run_evaluation(session, evaluation.id)
    assert status(campaign) is S.evaluated
    publication.publish(session, ORGANISER, campaign.id)
    assert status(campaign) is S.published
    again = evaluations.start_evaluation(session, ORGANISER, campaign.id, measures=["AP"])
    evaluations.run_evaluation(session, again.id)
    assert status(campaign) is S.published
    session.commit()


@pytest.mark.parametrize(
    ("start", "target", "allowed"),
    [
        (S.draft, S.open, True),
        (S.draft, S.closed, False),
        (S.open, S.closed, True),
        (S.closed, S.open, True),
        (S.pooled, S.open, False),
        (S.judging, S.open, False),
        (S.evaluated, S.open, False),
        (S.published, S.open, False),
        (S.evaluated, S.closed, False),
        (S.open, S.published, False),
    ],
)
def test_manual_transitions(make_campaign, start, target, allowed):
    campaign = make_campaign()
    campaigns.get_campaign(campaign.session, ORGANISER, campaign.id).status = start
    if allowed:
        assert campaigns.set_status(campaign.session, ORGANISER, campaign.id, target).status is target
    else:
        with pytest.raises(Conflict, match=f"from {start.value} to {target.value}"):
            campaigns.set_status(campaign.session, ORGANISER, campaign.id, target)
    campaign.session.rollback()
