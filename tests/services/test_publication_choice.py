"""Publishing freezes the evaluation the organiser names (`evaluation_id`), not merely the newest one."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.services import campaigns, evaluations, leaderboards, publication, qrels
from app.services.errors import NotFound
from app.storage.models import CampaignStatus, Evaluation, RunMean
from tests.services.conftest import ORGANISER

# two runs over topics 1-3: "first" ranks d1 above d2, "second" d2 above d1
RUNS = {
    "first": "".join(f"{t} Q0 d{d} {r} {10 - r} first\n" for t in (1, 2, 3) for r, d in enumerate((1, 2, 3), 1)),
    "second": "".join(f"{t} Q0 d{d} {r} {10 - r} second\n" for t in (1, 2, 3) for r, d in enumerate((2, 1, 3), 1)),
}


def _evaluate_on(campaign, label: str, relevant: str) -> Evaluation:  # type: ignore[no-untyped-def]
    """Import qrels in which only `relevant` is relevant on every topic, and evaluate AP on them to the end."""
    data = "".join(f"{t} 0 d{d} {int(f'd{d}' == relevant)}\n" for t in campaign.topics for d in (1, 2, 3))
    version = qrels.import_qrels(campaign.session, ORGANISER, campaign.id, data.encode(), label=label, max_errors=10)
    started = evaluations.start_evaluation(
        campaign.session, ORGANISER, campaign.id, qrels_version_id=version.id, measures=["AP"]
    )
    done = evaluations.run_evaluation(campaign.session, started.id)
    campaign.session.commit()
    return done


@pytest.fixture
def two_evaluations(make_campaign):  # type: ignore[no-untyped-def]
    """A closed campaign evaluated twice, on qrels 'd1' (d1 relevant) then on the newer qrels 'd2' (d2 relevant)."""
    campaign = make_campaign()
    for name, text in RUNS.items():
        campaign.submit(text, name=name)
    campaigns.set_status(campaign.session, ORGANISER, campaign.id, CampaignStatus.closed)
    older = _evaluate_on(campaign, "d1", "d1")
    newer = _evaluate_on(campaign, "d2", "d2")
    return campaign, older.id, newer.id


def _means(session, evaluation_id: int) -> dict[int, float]:  # type: ignore[no-untyped-def]
    """AP mean per run id, as the evaluation stored it."""
    rows = session.execute(
        select(RunMean.run_id, RunMean.value).where(RunMean.evaluation_id == evaluation_id, RunMean.measure == "AP")
    )
    return {run_id: value for run_id, value in rows}


def test_publish_freezes_the_named_evaluation_not_the_newest(two_evaluations):
    campaign, older, newer = two_evaluations
    session = campaign.session
    assert _means(session, older) != _means(session, newer)  # the two evaluations rank the runs differently
    snapshot = publication.publish(session, ORGANISER, campaign.id, evaluation_id=older)
    session.commit()
    assert snapshot.evaluation_id == older
    assert snapshot.content["evaluation_id"] == older and snapshot.content["qrels_label"] == "d1"
    board = leaderboards.published_leaderboard(session, campaign.id, "AP", leaderboards.Filters())
    assert board["evaluation_id"] == older
    # on qrels "d1" the run ranking d1 first wins with AP 1; "second" finds d1 at rank 2: AP 1/2
    assert [(row["run"], row["score"]) for row in board["rows"]] == [("first", 1.0), ("second", 0.5)]
    assert {row["run_id"]: row["score"] for row in board["rows"]} == _means(session, older)


def test_publish_without_an_evaluation_id_takes_the_newest(two_evaluations):
    campaign, _, newer = two_evaluations
    snapshot = publication.publish(campaign.session, ORGANISER, campaign.id)
    assert snapshot.evaluation_id == newer and snapshot.content["qrels_label"] == "d2"
    board = leaderboards.published_leaderboard(campaign.session, campaign.id, "AP", leaderboards.Filters())
    assert [(row["run"], row["score"]) for row in board["rows"]] == [("second", 1.0), ("first", 0.5)]


def test_publish_refuses_an_evaluation_of_another_campaign_or_unfinished(two_evaluations, make_campaign):
    campaign, older, _ = two_evaluations
    session = campaign.session
    other = make_campaign()
    other.submit(RUNS["first"], name="elsewhere")
    campaigns.set_status(session, ORGANISER, other.id, CampaignStatus.closed)
    with pytest.raises(NotFound):
        publication.publish(session, ORGANISER, other.id, evaluation_id=older)  # campaign's, not other's
    session.rollback()
    queued = evaluations.start_evaluation(session, ORGANISER, campaign.id, measures=["AP"])
    session.commit()
    with pytest.raises(NotFound):
        publication.publish(session, ORGANISER, campaign.id, evaluation_id=queued.id)  # not finished
