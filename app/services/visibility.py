"""Who sees which scores (SPEC section 7): the policy every board and chart of a campaign's results goes through.

Organisers see every finished evaluation's board. Assessors see no scores. Once a campaign has published, its teams
see the published numbers; before, what its `team_results` setting allows: `own` = their own runs' scores (every
measure, mean and per topic) and each topic's best and median over all runs, with no ranks and nothing else of
another run; `hidden` = nothing (403). Intervals follow the scores: a team sees its own runs' intervals (which
depend on their numbers only) but no rank interval or tier before publication. An evaluation that judges a sealed
progress topic is never a team's (403, `sealing.require_unsealed`), published or not.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.orm import Session

from app.services import board_intervals, sealing
from app.services.auth import Principal
from app.services.campaigns import get_campaign
from app.services.errors import Forbidden
from app.services.leaderboards import (
    Filters,
    build_leaderboard,
    by_type,
    per_topic,
    published_leaderboard,
    ranked,
    run_fields,
)
from app.services.scores import (
    default_measure,
    finished_evaluation,
    json_number,
    leaderboard_table,
    measure_index,
    measure_name,
    provenance,
    run_topic_scores,
)
from app.services.snapshots import published_evaluation_id
from app.storage.models import Campaign, Evaluation, Role, TeamResults

HIDDEN = "this campaign shows results to teams only once the organisers publish them"


def leaderboard_for(
    session: Session,
    principal: Principal,
    campaign_id: int,
    *,
    measure: str | None = None,
    evaluation_id: int | None = None,
    filters: Filters = Filters(),
) -> dict[str, object]:
    """The leaderboard the caller may see: the live board for organisers, a team's view for a team, none for
    assessors (Forbidden)."""
    measure = measure_name(measure)
    campaign = get_campaign(session, principal, campaign_id)
    if principal.role is Role.assessor:
        raise Forbidden("assessors do not see scores")
    if principal.role is Role.team:
        assert principal.team_id is not None
        return team_board(session, campaign, principal.team_id, measure, evaluation_id, filters)
    evaluation = finished_evaluation(session, campaign_id, evaluation_id)
    table = leaderboard_table(session, campaign, evaluation, measure)
    return build_leaderboard(campaign, evaluation, table, measure, filters)


def visible_evaluation(session: Session, principal: Principal, campaign: Campaign) -> tuple[Evaluation, bool]:
    """The evaluation whose numbers the caller may see, and whether it is the published one: a team gets the
    published evaluation once there is one, else the newest finished one if `team_results` allows; others the newest
    finished one."""
    if principal.role is Role.team:
        published = published_evaluation_id(session, campaign.id)
        if published is not None:
            evaluation = session.get(Evaluation, published)
            assert evaluation is not None
            sealing.require_unsealed(session, evaluation)
            return evaluation, True
        if campaign.team_results is TeamResults.hidden:
            raise Forbidden(HIDDEN)
        evaluation = finished_evaluation(session, campaign.id, None)
        sealing.require_unsealed(session, evaluation)
        return evaluation, False
    return finished_evaluation(session, campaign.id, None), False


def team_board(
    session: Session,
    campaign: Campaign,
    team_id: int,
    measure: str | None,
    evaluation_id: int | None,
    filters: Filters,
) -> dict[str, object]:
    """What a team sees: the published board once published; before, by `team_results`, its own runs or nothing.

    `own`: the team's runs that pass the filters, each with its mean and per-topic scores of every measure, sorted by
    the measure but not ranked; per topic the best and median of the measure over all runs (whatever the filters,
    so that a narrow filter cannot single out another run). No other run's name, team, score or count.
    """
    published = published_evaluation_id(session, campaign.id)
    if published is not None:
        evaluation = session.get(Evaluation, published)
        assert evaluation is not None
        sealing.require_unsealed(session, evaluation)
        return published_leaderboard(session, campaign.id, measure, filters)
    if campaign.team_results is TeamResults.hidden:
        raise Forbidden(HIDDEN)
    evaluation = finished_evaluation(session, campaign.id, evaluation_id)
    sealing.require_unsealed(session, evaluation)
    table = leaderboard_table(session, campaign, evaluation, measure)
    measure = measure or default_measure(campaign, table.measures)
    m = measure_index(table, measure)
    mine = [i for i in ranked(table, m, filters) if table.runs[i].team_id == team_id]
    topic_scores = run_topic_scores(session, evaluation, [table.runs[i].id for i in mine], table.topics)
    rows: list[dict[str, Any]] = []
    for i in mine:
        scores = [json_number(v) for v in table.means[i].tolist()]
        rows.append(
            {
                **run_fields(table, i),
                "score": scores[m],
                "scores": dict(zip(table.measures, scores, strict=True)),
                **board_intervals.row_intervals(table, i, m),  # its own means' intervals (no rank interval, tier)
                "per_topic": topic_scores.get(table.runs[i].id, {}),
            }
        )
    overall = per_topic(table, m, list(range(len(table.runs))))
    per_topic_rows = [
        {
            "topic": entry["topic"],
            "best": entry["best"],
            "median": entry["median"],
            "runs": {row["run"]: row["per_topic"].get(measure, {}).get(entry["topic"]) for row in rows},
        }
        for entry in overall
    ]
    return {
        **provenance(campaign, evaluation),
        "measure": measure,
        "measures": table.measures,
        "filters": filters.model_dump(),
        "published": False,
        "team_results": campaign.team_results.value,
        "interval": board_intervals.interval_head(table, measure),
        "rows": rows,
        "by_system_type": by_type(rows),
        "per_topic": per_topic_rows,
    }
