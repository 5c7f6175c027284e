"""Published snapshots: the score table a publication freezes, and reading it back (public, no caller checks).

A snapshot holds the score table, not prebuilt boards (`SNAPSHOT_FORMAT` 2, since issue 12): published boards are
built from it by the live boards' code and rule (`leaderboards`). Snapshots published before hold prebuilt boards;
their table is read again from their evaluation's stored scores.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlalchemy import select, text
from sqlalchemy.orm import Session

from app.services.board_intervals import frozen_ranks
from app.services.errors import NotFound
from app.services.score_intervals import RunIntervals
from app.services.scores import (
    RunInfo,
    ScoreTable,
    default_measure,
    json_number,
    leaderboard_table,
    provenance,
    team_aliases,
)
from app.storage.models import Campaign, Evaluation, LeaderboardSnapshot, Team

SNAPSHOT_FORMAT = 2  # snapshots since issue 12 hold the score table; older ones hold prebuilt boards
RUN_FIELDS = ("id", "name", "team_id", "system_type", "training_type", "novelty", "priority")


def snapshot_content(campaign: Campaign, evaluation: Evaluation, table: ScoreTable) -> dict[str, object]:
    """The frozen score table of a publication: runs, means and every measure's per-topic values, and the runs'
    intervals with the default board's rank intervals and tiers (`intervals`, null without any)."""
    measure = default_measure(campaign, table.measures)
    return {
        "format": SNAPSHOT_FORMAT,
        **provenance(campaign, evaluation),
        "default_measure": measure,
        "intervals": frozen_intervals(table, measure),
        "runs": [
            {**{f: getattr(run, f) for f in RUN_FIELDS}, "team": table.teams.get(run.team_id)} for run in table.runs
        ],
        "measures": table.measures,
        "topics": table.topics,
        "means": [[json_number(v) for v in row] for row in table.means.tolist()],
        "values": {
            measure: [[json_number(v) for v in row] for row in table.values[:, m, :].tolist()]
            for m, measure in enumerate(table.measures)
        },
    }


def frozen_intervals(table: ScoreTable, measure: str) -> dict[str, object] | None:
    """The runs' intervals [run][measure] as a snapshot freezes them, with how they were made and the default
    board's rank intervals and tiers over every run (`info.frozen_ranks`); None when the numbers have none."""
    found = table.intervals
    if found is None:
        return None
    ranks = frozen_ranks(table, table.measures.index(measure))
    return {
        "info": {**found.info, "frozen_ranks": {measure: ranks} if ranks else {}},
        **{
            name: [[json_number(v) for v in row] for row in array.tolist()]
            for name, array in (("ci_low", found.low), ("ci_high", found.high), ("sampling_se", found.sampling_se))
        },
    }


def _thawed(frozen: dict[str, Any] | None, n_run: int, n_measure: int) -> RunIntervals | None:
    """A snapshot's frozen intervals as arrays (None for a snapshot published without them)."""
    if not frozen:
        return None
    arrays = [np.array(frozen[k], dtype=np.float64).reshape(n_run, n_measure) for k in ("ci_low", "ci_high")]
    se = np.array(frozen["sampling_se"], dtype=np.float64).reshape(n_run, n_measure)
    return RunIntervals(arrays[0], arrays[1], se, frozen["info"])


def published_snapshot(session: Session, campaign_id: int) -> LeaderboardSnapshot:
    """The newest published snapshot of a campaign."""
    snapshot = session.scalar(
        select(LeaderboardSnapshot)
        .where(LeaderboardSnapshot.campaign_id == campaign_id)
        .order_by(LeaderboardSnapshot.id.desc())
        .limit(1)
    )
    if snapshot is None:
        raise NotFound(f"campaign {campaign_id} has published nothing")
    return snapshot


def published_evaluation_id(session: Session, campaign_id: int) -> int | None:
    """The evaluation of the campaign's newest snapshot, or None while it has published nothing."""
    return session.scalar(
        select(LeaderboardSnapshot.evaluation_id)
        .where(LeaderboardSnapshot.campaign_id == campaign_id)
        .order_by(LeaderboardSnapshot.id.desc())
        .limit(1)
    )


def published_campaigns(session: Session) -> list[Campaign]:
    """Campaigns that have published a snapshot."""
    ids = select(LeaderboardSnapshot.campaign_id).distinct()
    return list(session.scalars(select(Campaign).where(Campaign.id.in_(ids)).order_by(Campaign.id)))


def frozen_significance(session: Session, campaign_id: int) -> dict[str, Any]:
    """The significance groups frozen with the newest snapshot (its default measure, no filters)."""
    frozen = session.execute(
        text(
            "SELECT content -> 'significance' FROM leaderboard_snapshots WHERE campaign_id = :campaign "
            "ORDER BY id DESC LIMIT 1"
        ),
        {"campaign": campaign_id},
    ).first()
    if frozen is None:
        raise NotFound(f"campaign {campaign_id} has published nothing")
    groups: dict[str, Any] = frozen[0]
    return groups


_SNAPSHOT_HEAD = text(
    "SELECT id, content - 'values' - 'report' - 'leaderboards', "
    "content -> 'values' -> coalesce(CAST(:measure AS text), content ->> 'default_measure') "
    "FROM leaderboard_snapshots WHERE campaign_id = :campaign ORDER BY id DESC LIMIT 1"
)


def published_table(session: Session, campaign_id: int, measure: str | None) -> tuple[int, dict[str, Any], ScoreTable]:
    """The newest snapshot's id, head and score table (means, and the per-topic values of one measure)."""
    found = session.execute(_SNAPSHOT_HEAD, {"campaign": campaign_id, "measure": measure}).first()
    if found is None:
        raise NotFound(f"campaign {campaign_id} has published nothing")
    snapshot_id, head, values = found
    if head.get("format") != SNAPSHOT_FORMAT:
        return snapshot_id, head, _legacy_table(session, campaign_id, head, measure)
    measure = measure or head["default_measure"]
    runs = [RunInfo(**{f: r[f] for f in RUN_FIELDS}) for r in head["runs"]]
    teams = {r["team_id"]: r["team"] for r in head["runs"]}
    measures, topics = head["measures"], head["topics"]
    grid = np.full((len(runs), len(measures), len(topics)), np.nan)
    if values is not None and runs and topics:  # values is None for an unknown measure: the board says which
        grid[:, measures.index(measure), :] = np.array(values, dtype=np.float64)  # None -> NaN
    means = np.array(head["means"], dtype=np.float64).reshape(len(runs), len(measures))
    frozen = _thawed(head.get("intervals"), len(runs), len(measures))
    return snapshot_id, head, ScoreTable(runs, teams, measures, topics, grid, means, frozen)


def _legacy_table(session: Session, campaign_id: int, head: dict[str, Any], measure: str | None) -> ScoreTable:
    """The table of a snapshot published before snapshots held one: its evaluation's stored scores."""
    snapshot = published_snapshot(session, campaign_id)
    board = next(iter(snapshot.content["leaderboards"].values()))
    head.update({k: board[k] for k in ("campaign", "evaluation_id", "qrels_version_id", "measures")})
    head["format"] = SNAPSHOT_FORMAT
    campaign = session.get(Campaign, campaign_id)
    evaluation = session.get(Evaluation, snapshot.evaluation_id)
    assert campaign is not None and evaluation is not None
    header = provenance(campaign, evaluation)  # what such boards did not say yet
    head.update({k: header[k] for k in ("judging_order", "qrels_judges", "unjudged_topics", "warning")})
    return leaderboard_table(session, campaign, evaluation, measure or head["default_measure"])


def published_head(head: dict[str, Any]) -> dict[str, object]:
    """The header a published board repeats from its snapshot (older snapshots lack the later keys)."""
    return {
        **{k: head[k] for k in ("campaign", "evaluation_id", "qrels_version_id")},
        **{k: head.get(k) for k in ("judging_order", "qrels_judges", "unjudged_topics", "warning")},
    }


def renamed_teams(document: Any, names: dict[str, str]) -> Any:
    """A JSON document with every team name (a string equal to one, a dict key, or the `team/` of a `team/run` label)
    replaced by its alias: a published report names teams in many places (overall rows, hits and novelty by team)."""
    if isinstance(document, dict):
        return {renamed_teams(k, names): renamed_teams(v, names) for k, v in document.items()}
    if isinstance(document, list):
        return [renamed_teams(v, names) for v in document]
    if isinstance(document, str):
        if document in names:
            return names[document]
        team, slash, rest = document.partition("/")
        if slash and team in names:
            return f"{names[team]}/{rest}"
    return document


def published_report(session: Session, snapshot: LeaderboardSnapshot) -> dict[str, Any]:
    """A publication's report as the public reads it: team names replaced by their aliases when the campaign asks
    (`anonymise_teams`, read now, as boards read it), with `anonymised` saying so."""
    report: dict[str, Any] = snapshot.content["report"]
    campaign = session.get(Campaign, snapshot.campaign_id)
    if campaign is None or not campaign.anonymise_teams:
        return report
    aliases = team_aliases(session, campaign.id)
    teams = session.execute(select(Team.id, Team.name).where(Team.campaign_id == campaign.id))
    names = {name: aliases[team_id] for team_id, name in teams if team_id in aliases}
    return {**renamed_teams(report, names), "anonymised": True}
