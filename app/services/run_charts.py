"""A run against all runs, per topic: its score, the median and the best (the chart NIST sends each team).

A team asks for its own runs only and sees no other run's name, team or score: only each topic's median and best
over all runs, as the leaderboard's `own` view already shows them (SPEC section 7). Before publication the campaign's
`team_results` decides (`hidden`: 403); after, the published evaluation's numbers. Organisers see any run's chart.
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from app.evaluation.analyses.topic_comparison import topic_comparison
from app.services.auth import Principal
from app.services.runs import visible_run
from app.services.scores import default_measure, leaderboard_table, measure_index, measure_name
from app.services.visibility import visible_evaluation
from app.storage.models import Campaign


def run_versus_all(
    session: Session, principal: Principal, run_id: int, measure: str | None = None
) -> dict[str, object]:
    """Per topic: the run's score of `measure` (the campaign's default when None), the median and the best."""
    run = visible_run(session, principal, run_id)
    campaign = session.get(Campaign, run.campaign_id)
    assert campaign is not None
    evaluation, published = visible_evaluation(session, principal, campaign)
    wanted = measure_name(measure)
    table = leaderboard_table(session, campaign, evaluation, wanted)
    shown = wanted or default_measure(campaign, table.measures)
    ids = [r.id for r in table.runs]
    values = table.values[:, measure_index(table, shown), :]
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
