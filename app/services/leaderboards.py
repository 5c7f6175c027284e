"""Leaderboards: one rule for every board, live or published, over a score table (`scores`).

A filtered board ranks the runs that pass the filters from 1 and takes each topic's best run and median over those
runs only; significance groups the top runs passing the filters. Organisers see the live board of any finished
evaluation; anyone sees the published one, built from the snapshot (`snapshots`) by the same code. What a team
sees before publication, and after, is `visibility`'s policy.

Every row carries its run's interval of the board's measure (`ci_low`, `ci_high`, `level`) and of every measure
(`intervals`), stored by the evaluation job, and its rank interval and tier among the shown runs; the board's
`interval` says how they were made; the significance document adds every pair's difference with its interval, effect
size and adjusted p-values, tiers and rank intervals (`board_intervals`). Numbers stored before intervals existed
show none (null).

A board's rows also carry what the campaign says of each run at render time (`scores.run_marks`): `baseline` (marked
by an organiser; baselines are ranked like any run, so a tier says which runs cannot be told from them) and
`submitted_at`;
`by_system_type` ranks each run type's rows 1..n within it, with rank intervals and tiers among that type's runs.
A novelty run's row carries its TRECVID novelty score (`novelty_score`, null on other rows: `novelty_scores`), computed
over every run of the evaluation whatever the filters, since it counts what other teams found.
A published board shows "Team A", "Team B", ... (in the order of the teams' first submissions) instead of team names
when the campaign's `anonymise_teams` is set (`scores.team_aliases`; the published report too:
`snapshots.published_report`); organisers' live boards keep the names.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.orm import Session, object_session

from app.evaluation.statistics.intervals import CORRECTIONS
from app.evaluation.statistics.significance import pairwise_randomization, randomised_tukey_hsd, significance_groups
from app.services import board_intervals, novelty_scores
from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.errors import InvalidInput
from app.services.inputs import Text
from app.services.scores import (
    RunInfo,
    ScoreTable,
    default_measure,
    finished_evaluation,
    json_number,
    leaderboard_table,
    measure_index,
    measure_name,
    provenance,
    run_marks,
    team_aliases,
)
from app.services.snapshots import frozen_significance, published_head, published_table
from app.storage.models import Campaign, Evaluation, Run


class Filters(BaseModel):
    """Which runs a board shows, by run type (null: any): every board, live or published, and its significance.

    The one declaration of these query parameters: endpoints take it whole (`Annotated[Filters, Query()]`)."""

    model_config = ConfigDict(frozen=True)  # hashable: published significance is cached per filters

    system_type: Text | None = Field(
        default=None,
        description="Only runs of this system type: F (fully automatic), M (manually assisted) or R (relevance "
        "feedback); another value matches no run",
    )
    training_type: Text | None = Field(
        default=None,
        description="Only runs of this training type (TRECVID's A, D, E or F); another value matches no run",
    )
    novelty: bool | None = Field(default=None, description="Only novelty runs (true), or only the others (false)")

    def keep(self, run: Run | RunInfo) -> bool:
        """Whether a run passes the filters."""
        return (
            (self.system_type is None or run.system_type == self.system_type)
            and (self.training_type is None or run.training_type == self.training_type)
            and (self.novelty is None or run.novelty == self.novelty)
        )


def ranked(table: ScoreTable, m: int, filters: Filters) -> list[int]:
    """The runs passing the filters, best mean of measure `m` first (ties by run name, then id)."""
    return board_intervals.board_order(table, m, [i for i, run in enumerate(table.runs) if filters.keep(run)])


def run_fields(table: ScoreTable, i: int) -> dict[str, object]:
    """A run's name, team and type, as rows show them."""
    run = table.runs[i]
    return {
        "run_id": run.id,
        "run": run.name,
        "team": table.teams.get(run.team_id),
        "system_type": run.system_type,
        "training_type": run.training_type,
        "novelty": run.novelty,
        "priority": run.priority,
    }


def by_type(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Rows grouped by system type, in board order."""
    by_type: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_type.setdefault(str(row["system_type"]), []).append(row)
    return by_type


RANK_FIELDS = ("rank_low", "rank_high", "tier")


def ranked_by_type(table: ScoreTable, m: int, rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Rows grouped by system type, each group ranked 1..n within it with its rank intervals and tiers among the
    group's runs (the board's `rows` rank among every shown run)."""
    at = {run.id: i for i, run in enumerate(table.runs)}
    grouped: dict[str, list[dict[str, Any]]] = {}
    for system_type, members in by_type(rows).items():
        stats = board_intervals.rank_stats(table, m, [at[row["run_id"]] for row in members])
        grouped[system_type] = [
            {**row, "rank": place, **{name: stats[name][place - 1] for name in RANK_FIELDS}}
            for place, row in enumerate(members, start=1)
        ]
    return grouped


def anonymised(board: dict[str, Any], run_teams: dict[int, int], aliases: dict[int, str]) -> dict[str, Any]:
    """The board with each row's team (run id -> team id) replaced by its anonymous name (`anonymised` set)."""

    def renamed(row: dict[str, Any]) -> dict[str, Any]:
        """The row under its team's anonymous name."""
        return {**row, "team": aliases.get(run_teams[row["run_id"]], "Team ?")}

    return {
        **board,
        "anonymised": True,
        "rows": [renamed(r) for r in board["rows"]],
        "by_system_type": {k: [renamed(r) for r in rows] for k, rows in board["by_system_type"].items()},
    }


def board_document(
    header: dict[str, object],
    table: ScoreTable,
    measure: str,
    filters: Filters,
    *,
    published: bool = False,
    marks: dict[int, dict[str, object]] | None = None,
    novelty: dict[int, float] | None = None,
) -> dict[str, object]:
    """The board over the runs passing the filters: ranked from 1 (and 1..n within each run type), each run's
    marks (baseline, submission time: null when not given), a novelty run's novelty score (run id -> score in
    `novelty`), and each topic's best and median among them."""
    marks = marks or {}
    novelty = novelty or {}
    m = measure_index(table, measure)
    chosen = ranked(table, m, filters)
    means = table.means.tolist()
    stats = board_intervals.rank_stats(table, m, chosen)
    rows = []
    for place, i in enumerate(chosen, start=1):
        scores = [json_number(v) for v in means[i]]
        rows.append(
            {
                "rank": place,
                **run_fields(table, i),
                **marks.get(table.runs[i].id, {"baseline": False, "submitted_at": None}),
                "novelty_score": novelty.get(table.runs[i].id) if table.runs[i].novelty else None,
                "score": scores[m],
                "scores": dict(zip(table.measures, scores, strict=True)),
                **board_intervals.row_intervals(table, i, m),
                **{name: stats[name][place - 1] for name in ("rank_low", "rank_high", "tier")},
            }
        )
    return {
        **header,
        "measure": measure,
        "measures": table.measures,
        "filters": filters.model_dump(),
        "published": published,
        "anonymised": False,
        "interval": board_intervals.interval_head(table, measure),
        "rows": rows,
        "by_system_type": ranked_by_type(table, m, rows),
        "per_topic": per_topic(table, m, chosen),
    }


def build_leaderboard(
    campaign: Campaign, evaluation: Evaluation, table: ScoreTable, measure: str | None, filters: Filters
) -> dict[str, object]:
    """The leaderboard document: rows sorted by the measure, grouped by system type, and the per-topic table."""
    measure = measure or default_measure(campaign, table.measures)
    session = object_session(campaign)
    marks = run_marks(session, campaign.id) if session is not None else None
    novelty = novelty_scores.live_scores(session, campaign, evaluation, table.runs) if session is not None else None
    return board_document(provenance(campaign, evaluation), table, measure, filters, marks=marks, novelty=novelty)


def per_topic(table: ScoreTable, m: int, chosen: list[int]) -> list[dict[str, object]]:
    """Per topic: the best run and score and the median over the chosen runs (the first in `chosen` wins ties)."""
    block = table.values[chosen, m, :] if chosen else np.full((0, len(table.topics)), np.nan)
    finite = np.isfinite(block)
    answered = finite.any(axis=0)
    filled = np.where(finite, block, -np.inf)
    best_at = filled.argmax(axis=0).tolist() if chosen else [0] * len(table.topics)
    best = filled.max(axis=0, initial=-np.inf).tolist()
    median = np.full(len(table.topics), np.nan)
    if answered.any():
        median[answered] = np.nanmedian(block[:, answered], axis=0)
    out: list[dict[str, object]] = []
    for t, (topic, seen, mid) in enumerate(zip(table.topics, answered.tolist(), median.tolist(), strict=True)):
        if not seen:
            out.append({"topic": topic, "best_run": None, "best": None, "median": None})
        else:
            out.append(
                {"topic": topic, "best_run": table.runs[chosen[best_at[t]]].name, "best": best[t], "median": mid}
            )
    return out


def significance(
    table: ScoreTable,
    measure: str,
    *,
    filters: Filters = Filters(),
    top: int = 10,
    method: str = "tukey",
    n_resamples: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
    correction: str = "holm",
) -> dict[str, object]:
    """Groups of the top runs passing the filters with no significant difference (randomised Tukey HSD or pairwise),
    and over the same runs every pair's difference with its interval, d_z and paired t-test p-values adjusted by
    `correction` (holm or bh), their tiers and rank intervals (`board_intervals.significance_fields`).

    Fewer than two runs, or no topic with scores (qrels that judge none), leave nothing to test: p = 1 and one group,
    with `tested` false and a `note` saying why.
    """
    if method not in ("tukey", "pairwise"):
        raise InvalidInput("unknown method", [{"field": "method", "message": "tukey or pairwise"}])
    if correction not in CORRECTIONS:
        raise InvalidInput("unknown correction", [{"field": "correction", "message": " or ".join(CORRECTIONS)}])
    m = measure_index(table, measure)
    order = ranked(table, m, filters)[:top]
    names = [table.runs[i].name for i in order]
    scores = np.nan_to_num(table.values[order, m, :], nan=0.0)  # a topic a run lacks scores 0, as in the means
    test = randomised_tukey_hsd if method == "tukey" else pairwise_randomization
    pvalues = test(scores, n_resamples=n_resamples, seed=seed)
    means = table.means[order, m]
    note = None
    if len(order) < 2:
        note = f"{'one run passes' if order else 'no run passes'} the filters: there is nothing to compare"
    elif scores.shape[1] == 0:
        note = f"no topic has {measure} scores (the qrels judge none): the runs cannot be told apart"
    return {
        "measure": measure,
        "method": method,
        "filters": filters.model_dump(),
        "alpha": alpha,
        "n_resamples": n_resamples,
        "seed": seed,
        "runs": names,
        "means": [json_number(v) for v in means.tolist()],
        "pvalues": pvalues.tolist(),
        "groups": significance_groups(names, np.nan_to_num(means, nan=0.0), pvalues, alpha),
        "tested": note is None,
        "note": note,
        **board_intervals.significance_fields(
            table, m, order, names, correction=correction, n_resamples=n_resamples, seed=seed, alpha=alpha
        ),
    }


def live_significance(
    session: Session,
    principal: Principal,
    campaign_id: int,
    *,
    measure: str | None = None,
    filters: Filters = Filters(),
    top: int = 10,
    method: str = "tukey",
    n_resamples: int = 10_000,
    seed: int = 0,
    correction: str = "holm",
    evaluation_id: int | None = None,
) -> dict[str, object]:
    """Significance groups of a finished evaluation's (the newest when None) top runs passing the filters
    (organisers only)."""
    measure = measure_name(measure)
    campaign = get_organised(session, principal, campaign_id)
    evaluation = finished_evaluation(session, campaign_id, evaluation_id)
    measure = measure or default_measure(campaign, list(evaluation.measures["names"]))
    table = leaderboard_table(session, campaign, evaluation, measure)
    return significance(
        table,
        measure,
        filters=filters,
        top=top,
        method=method,
        n_resamples=n_resamples,
        seed=seed,
        correction=correction,
    )


def live_leaderboard(
    session: Session,
    principal: Principal,
    campaign_id: int,
    *,
    measure: str | None = None,
    evaluation_id: int | None = None,
    filters: Filters = Filters(),
) -> dict[str, object]:
    """The board of a finished evaluation (the newest when None), for the campaign's organisers."""
    measure = measure_name(measure)
    campaign = get_organised(session, principal, campaign_id)
    evaluation = finished_evaluation(session, campaign_id, evaluation_id)
    table = leaderboard_table(session, campaign, evaluation, measure)
    return build_leaderboard(campaign, evaluation, table, measure, filters)


def published_leaderboard(
    session: Session, campaign_id: int, measure: str | None, filters: Filters
) -> dict[str, object]:
    """A published leaderboard, for anyone, built and filtered by the same rule as the live one."""
    measure = measure_name(measure)
    _, head, table = published_table(session, campaign_id, measure)
    board = board_document(
        published_head(head),
        table,
        measure or head["default_measure"],
        filters,
        published=True,
        marks=run_marks(session, campaign_id),
        novelty=novelty_scores.published_scores(session, campaign_id) if any(r.novelty for r in table.runs) else None,
    )
    campaign = session.get(Campaign, campaign_id)
    if campaign is None or not campaign.anonymise_teams:
        return board
    run_teams = {run.id: run.team_id for run in table.runs}
    return anonymised(board, run_teams, team_aliases(session, campaign_id))


_SIGNIFICANCE: dict[tuple[int, Filters, str], dict[str, object]] = {}
MAX_CACHED = 256
SIGNIFICANCE_ADDED = ("correction", "interval", "pairs", "tiers", "rank_intervals")  # null in older snapshots


def published_significance(
    session: Session, campaign_id: int, filters: Filters, correction: str = "holm"
) -> dict[str, object]:
    """The significance groups of the published board's measure over the runs passing the filters.

    Unfiltered with Holm's correction: the document frozen at publication (a snapshot published before the pairs
    were added has them null). Otherwise: computed once per snapshot, filters and correction with the same defaults
    (the filters take a bounded number of values, so the cache stays small).
    """
    if filters == Filters() and correction == "holm":
        frozen = frozen_significance(session, campaign_id)
        return {**{k: None for k in SIGNIFICANCE_ADDED}, **frozen, "filters": filters.model_dump()}
    snapshot_id, head, table = published_table(session, campaign_id, None)
    key = (snapshot_id, filters, correction)
    if key not in _SIGNIFICANCE:
        if len(_SIGNIFICANCE) >= MAX_CACHED:
            _SIGNIFICANCE.clear()
        _SIGNIFICANCE[key] = significance(table, head["default_measure"], filters=filters, correction=correction)
    return _SIGNIFICANCE[key]
