"""Leaderboards read the stored per-run means and one measure's per-topic values: the same document as from every
score."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from app.services import campaigns, leaderboards, publication, scores, visibility
from app.services.auth import Principal
from app.services.errors import Forbidden
from app.storage.models import Evaluation, Role, RunMean, Score, TeamResults
from tests.services.conftest import ORGANISER, Campaign, evaluated_mixed, new_campaign

MEASURES = ["AP", "P@5", "nDCG@10", "num_rel_ret"]


def _evaluated(campaign: Campaign) -> tuple[Campaign, Evaluation]:
    """Close the campaign with 9 runs of mixed types over its 12 topics (one run skips topics) and evaluate it."""
    return evaluated_mixed(campaign, MEASURES, novelty=True)


@pytest.fixture(scope="module")
def evaluated(module_session):  # type: ignore[no-untyped-def]
    """A closed, evaluated campaign of 9 runs of mixed types over 12 topics (one run skips topics): built once for
    the module, whose tests only read it."""
    return _evaluated(new_campaign(module_session, n_topics=12))


@pytest.fixture
def own_evaluated(make_campaign):  # type: ignore[no-untyped-def]
    """The same campaign, new for a test that publishes it."""
    return _evaluated(make_campaign(n_topics=12))


def test_run_means_are_the_scores_all_rows(evaluated):
    campaign, evaluation = evaluated
    session = campaign.session
    means = session.execute(
        select(RunMean.run_id, RunMean.measure, RunMean.value).where(RunMean.evaluation_id == evaluation.id)
    ).all()
    alls = session.execute(
        select(Score.run_id, Score.measure, Score.value).where(
            Score.evaluation_id == evaluation.id, Score.topic == "all"
        )
    ).all()
    assert len(means) == 9 * len(MEASURES)
    assert sorted(means) == sorted(alls)


@pytest.mark.parametrize("measure", [None, *MEASURES])
@pytest.mark.parametrize(
    "filters",
    [
        leaderboards.Filters(),
        leaderboards.Filters(system_type="M"),
        leaderboards.Filters(training_type="A", novelty=False),
    ],
)
def test_the_same_board_as_from_every_score(evaluated, measure, filters):
    campaign, evaluation = evaluated
    session = campaign.session
    stored = session.get(Evaluation, evaluation.id)
    model = campaigns.get_campaign(session, ORGANISER, campaign.id)
    expected = leaderboards.build_leaderboard(model, stored, scores.score_table(session, stored), measure, filters)
    board = leaderboards.live_leaderboard(session, ORGANISER, campaign.id, measure=measure, filters=filters)
    assert board == expected
    assert board["rows"] and len(board["per_topic"]) == 12
    assert [r["rank"] for r in board["rows"]] == list(range(1, len(board["rows"]) + 1))
    assert all(filters.keep(_Run(**r)) for r in board["rows"])


class _Run:
    """A board row seen as a run, to check it passes the filters."""

    def __init__(self, **row: object) -> None:
        self.system_type, self.training_type, self.novelty = row["system_type"], row["training_type"], row["novelty"]


def test_a_snapshot_published_before_the_table_was_frozen_still_filters_by_the_rule(own_evaluated):
    """Snapshots made before issue 12 hold prebuilt unfiltered boards: filtered views come from their evaluation."""
    campaign, evaluation = own_evaluated
    session = campaign.session
    snapshot = publication.publish(session, ORGANISER, campaign.id)
    model = campaigns.get_campaign(session, ORGANISER, campaign.id)
    stored = session.get(Evaluation, evaluation.id)
    table = scores.score_table(session, stored)
    boards = {m: leaderboards.build_leaderboard(model, stored, table, m, leaderboards.Filters()) for m in MEASURES}
    old = {k: snapshot.content[k] for k in ("default_measure", "qrels_label", "significance", "report")}
    snapshot.content = {**old, "leaderboards": boards}
    session.commit()
    for filters in (leaderboards.Filters(), leaderboards.Filters(system_type="M"), leaderboards.Filters(novelty=True)):
        for measure in (None, "P@5"):
            live = leaderboards.live_leaderboard(session, ORGANISER, campaign.id, measure=measure, filters=filters)
            published = leaderboards.published_leaderboard(session, campaign.id, measure, filters)
            assert published == {**live, "published": True}
            assert [r["rank"] for r in published["rows"]] == list(range(1, len(published["rows"]) + 1))


def test_hidden_raises_for_a_team_until_published(own_evaluated):
    campaign, _ = own_evaluated
    session = campaign.session
    campaigns.update_campaign(session, ORGANISER, campaign.id, {"team_results": TeamResults.hidden})
    team = Principal(Role.team, token_id=0, campaign_id=campaign.id, team_id=campaign.team_id)
    with pytest.raises(Forbidden):
        visibility.leaderboard_for(session, team, campaign.id)
    publication.publish(session, ORGANISER, campaign.id)
    seen = visibility.leaderboard_for(session, team, campaign.id, filters=leaderboards.Filters(system_type="R"))
    public = leaderboards.published_leaderboard(session, campaign.id, None, leaderboards.Filters(system_type="R"))
    assert seen == public
    assert seen["published"] is True and {r["system_type"] for r in seen["rows"]} == {"R"}
