"""A run against all runs, per topic: its score, the median and the best (the chart NIST sends each team).

A team asks for its own runs only and sees no other run's name, team or score: only each topic's median and best
over all runs, as the leaderboard's `own` view already shows them (SPEC section 7). Before publication the campaign's
`team_results` decides (`hidden`: 403); after, the published evaluation's numbers. Organisers see any run's chart.
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.analyses.topic_comparison import topic_comparison
from app.services.auth import Principal
from app.services.errors import Forbidden, InvalidInput
from app.services.leaderboards import default_measure, finished_evaluation, leaderboard_table, measure_name
from app.services.runs import visible_run
from app.storage.models import Campaign, Evaluation, LeaderboardSnapshot, Role, TeamResults


def _evaluation(session: Session, principal: Principal, campaign: Campaign) -> tuple[Evaluation, bool]:
    """The evaluation whose numbers the caller may see, and whether it is the published one."""
    published = session.scalar(
        select(LeaderboardSnapshot.evaluation_id)
        .where(LeaderboardSnapshot.campaign_id == campaign.id)
        .order_by(LeaderboardSnapshot.id.desc())
        .limit(1)
    )
    if principal.role is Role.team:
        if published is not None:
            evaluation = session.get(Evaluation, published)
            assert evaluation is not None
            return evaluation, True
        if campaign.team_results is TeamResults.hidden:
            raise Forbidden("this campaign shows results to teams only once the organisers publish them")
    return finished_evaluation(session, campaign.id, None), False


def run_versus_all(
    session: Session, principal: Principal, run_id: int, measure: str | None = None
) -> dict[str, object]:
    """Per topic: the run's score of `measure` (the campaign's default when None), the median and the best."""
    run = visible_run(session, principal, run_id)
    campaign = session.get(Campaign, run.campaign_id)
    assert campaign is not None
    evaluation, published = _evaluation(session, principal, campaign)
    wanted = measure_name(measure)
    table = leaderboard_table(session, campaign, evaluation, wanted)
    shown = wanted or default_measure(campaign, table.measures)
    if shown not in table.measures:
        raise InvalidInput("unknown measure", [{"field": "measure", "message": f"one of {', '.join(table.measures)}"}])
    ids = [r.id for r in table.runs]
    values = table.values[:, table.measures.index(shown), :]
    comparison = topic_comparison([str(i) for i in ids], table.topics, values, measure=shown)
    chart = comparison.run(str(run.id))
    return {
        **chart,
        "run": run.name,
        "run_id": run.id,
        "campaign_id": campaign.id,
        "evaluation_id": evaluation.id,
        "published": published,
    }
