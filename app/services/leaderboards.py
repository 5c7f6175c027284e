"""Leaderboards: sorted scores by run type, per-topic tables; private until an organiser publishes a snapshot."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from psycopg import sql
from sqlalchemy import select, text
from sqlalchemy.orm import Session, lazyload

from app.evaluation.significance import pairwise_randomization, randomised_tukey_hsd, significance_groups
from app.services.auth import Principal
from app.services.campaigns import get_campaign, get_organised
from app.services.errors import Forbidden, InvalidInput, NotFound
from app.services.evaluations import latest_done
from app.storage.bulk import copy_out
from app.storage.models import (
    Campaign,
    Evaluation,
    LeaderboardSnapshot,
    Role,
    Run,
    TaskKind,
    Team,
)

ALL = "all"
DEFAULT_MEASURE = {TaskKind.shots: ("xinfAP", "AP"), TaskKind.moments: ("AxIoU@10",)}


@dataclass(frozen=True)
class ScoreTable:
    """An evaluation's numbers as arrays: values[run, measure, topic] (NaN where absent) and means[run, measure]."""

    runs: list[Run]
    teams: dict[int, str]
    measures: list[str]
    topics: list[str]
    values: np.ndarray
    means: np.ndarray


def _topic_key(topic: str) -> tuple[int, int, str]:
    """Numeric topics in numeric order, then the rest."""
    return (0, int(topic), "") if topic.isdigit() else (1, 0, topic)


def score_table(session: Session, evaluation: Evaluation) -> ScoreTable:
    """Load every stored number of an evaluation in one COPY (reports, publication, analyses)."""
    runs = list(session.scalars(select(Run).where(Run.campaign_id == evaluation.campaign_id).order_by(Run.id)))
    teams = {t.id: t.name for t in session.scalars(select(Team).where(Team.campaign_id == evaluation.campaign_id))}
    query = sql.SQL("SELECT run_id, measure, topic, value FROM scores WHERE evaluation_id = {}").format(
        sql.Literal(evaluation.id)
    )
    raw = b"".join(copy_out(session, query))
    rows = np.array(raw.decode().split(), dtype=str).reshape(-1, 4) if raw else np.empty((0, 4), dtype=str)
    measures = list(evaluation.measures["names"])
    topics = sorted({t for t in rows[:, 2].tolist() if t != ALL}, key=_topic_key)
    run_index = {r.id: i for i, r in enumerate(runs)}
    measure_index = {m: i for i, m in enumerate(measures)}
    topic_index = {t: i for i, t in enumerate(topics)}
    values = np.full((len(runs), len(measures), len(topics)), np.nan)
    means = np.full((len(runs), len(measures)), np.nan)
    r = np.array([run_index.get(int(x), -1) for x in rows[:, 0].tolist()], dtype=np.int64)
    m = np.array([measure_index.get(x, -1) for x in rows[:, 1].tolist()], dtype=np.int64)
    is_all = rows[:, 2] == ALL
    t = np.array([topic_index.get(x, -1) for x in rows[:, 2].tolist()], dtype=np.int64)
    v = rows[:, 3].astype(np.float64)
    ok = (r >= 0) & (m >= 0)
    means[r[ok & is_all], m[ok & is_all]] = v[ok & is_all]
    keep = ok & ~is_all & (t >= 0)
    values[r[keep], m[keep], t[keep]] = v[keep]
    return ScoreTable(runs, teams, measures, topics, values, means)


def leaderboard_table(session: Session, campaign: Campaign, evaluation: Evaluation, measure: str | None) -> ScoreTable:
    """What one leaderboard shows: every run's stored means (run_means) and the per-topic values of its measure only.

    A few thousand numbers instead of every one of the evaluation; `values` is NaN outside the measure's slice.
    """
    query = select(Run).where(Run.campaign_id == evaluation.campaign_id).order_by(Run.id).options(lazyload(Run.team))
    runs = list(session.scalars(query))
    teams = {t.id: t.name for t in session.scalars(select(Team).where(Team.campaign_id == evaluation.campaign_id))}
    measures = list(evaluation.measures["names"])
    run_index = {r.id: i for i, r in enumerate(runs)}
    measure_index = {m: i for i, m in enumerate(measures)}
    means = np.full((len(runs), len(measures)), np.nan)
    for run_id, names, numbers in session.execute(_MEANS, {"evaluation": evaluation.id}):
        if run_id in run_index:
            known = [(measure_index[n], v) for n, v in zip(names, numbers, strict=True) if n in measure_index]
            if known:
                columns, cells = zip(*known, strict=True)
                means[run_index[run_id], list(columns)] = cells
    shown = measure or default_measure(campaign, measures)
    per_run = []
    if shown in measure_index:  # one row per run: its topics and values of the measure
        per_run = session.execute(_PER_TOPIC, {"evaluation": evaluation.id, "measure": shown}).all()
    topics = sorted({topic for _, names, _ in per_run for topic in names}, key=_topic_key)
    topic_index = {t: i for i, t in enumerate(topics)}
    values = np.full((len(runs), len(measures), len(topics)), np.nan)
    for run_id, names, numbers in per_run:
        if run_id in run_index:
            values[run_index[run_id], measure_index[shown], [topic_index[t] for t in names]] = numbers
    return ScoreTable(runs, teams, measures, topics, values, means)


_MEANS = text(
    "SELECT run_id, array_agg(measure), array_agg(value) FROM run_means WHERE evaluation_id = :evaluation "
    "GROUP BY run_id"
)
_PER_TOPIC = text(
    "SELECT run_id, array_agg(topic), array_agg(value) FROM scores "
    "WHERE evaluation_id = :evaluation AND measure = :measure AND topic <> 'all' GROUP BY run_id"
)


def default_measure(campaign: Campaign, measures: list[str]) -> str:
    """The measure a leaderboard sorts by when none is asked for."""
    for name in DEFAULT_MEASURE[campaign.task_kind]:
        if name in measures:
            return name
    return measures[0]


@dataclass(frozen=True)
class Filters:
    """Which runs a leaderboard shows."""

    system_type: str | None = None
    training_type: str | None = None
    novelty: bool | None = None

    def keep(self, run: Run) -> bool:
        """Whether a run passes the filters."""
        return (
            (self.system_type is None or run.system_type == self.system_type)
            and (self.training_type is None or run.training_type == self.training_type)
            and (self.novelty is None or run.novelty == self.novelty)
        )


def build_leaderboard(
    campaign: Campaign,
    evaluation: Evaluation,
    table: ScoreTable,
    measure: str | None,
    filters: Filters,
    visible_team: int | None = None,
) -> dict[str, object]:
    """The leaderboard document: rows sorted by the measure, grouped by system type, and the per-topic table."""
    measure = measure or default_measure(campaign, table.measures)
    if measure not in table.measures:
        raise InvalidInput("unknown measure", [{"field": "measure", "message": f"one of {', '.join(table.measures)}"}])
    m = table.measures.index(measure)
    chosen = [i for i, run in enumerate(table.runs) if filters.keep(run)]
    chosen.sort(key=lambda i: (-np.nan_to_num(table.means[i, m], nan=-np.inf), table.runs[i].name))
    means = [[_num(v) for v in row] for row in table.means.tolist()]  # JSON-safe, once per cell
    rows = []
    for place, i in enumerate(chosen, start=1):
        run = table.runs[i]
        if visible_team is not None and run.team_id != visible_team:
            continue
        rows.append(
            {
                "rank": place,
                "run_id": run.id,
                "run": run.name,
                "team": table.teams.get(run.team_id),
                "system_type": run.system_type,
                "training_type": run.training_type,
                "novelty": run.novelty,
                "priority": run.priority,
                "score": means[i][m],
                "scores": dict(zip(table.measures, means[i], strict=True)),
            }
        )
    by_type: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        by_type.setdefault(str(row["system_type"]), []).append(row)
    return {
        "campaign": {"id": campaign.id, "name": campaign.name, "task_kind": campaign.task_kind.value},
        "evaluation_id": evaluation.id,
        "qrels_version_id": evaluation.qrels_version_id,
        "measure": measure,
        "measures": table.measures,
        "filters": filters.__dict__,
        "rows": rows,
        "by_system_type": by_type,
        "per_topic": per_topic(
            table, m, [i for i in chosen if visible_team is None or table.runs[i].team_id == visible_team]
        ),
    }


def per_topic(table: ScoreTable, m: int, chosen: list[int]) -> list[dict[str, object]]:
    """Per topic: the best run and score and the median over the chosen runs."""
    out = []
    for t, topic in enumerate(table.topics):
        scores = table.values[chosen, m, t]
        finite = np.isfinite(scores)
        if not finite.any():
            out.append({"topic": topic, "best_run": None, "best": None, "median": None})
            continue
        best = int(np.nanargmax(np.where(finite, scores, -np.inf)))
        out.append(
            {
                "topic": topic,
                "best_run": table.runs[chosen[best]].name,
                "best": _num(scores[best]),
                "median": _num(float(np.median(scores[finite]))),
            }
        )
    return out


def significance(
    table: ScoreTable,
    measure: str,
    *,
    top: int = 10,
    method: str = "tukey",
    n_resamples: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
) -> dict[str, object]:
    """Groups of the top runs with no significant difference (randomised Tukey HSD or pairwise randomization)."""
    if method not in ("tukey", "pairwise"):
        raise InvalidInput("unknown method", [{"field": "method", "message": "tukey or pairwise"}])
    if measure not in table.measures:
        raise InvalidInput("unknown measure", [{"field": "measure", "message": f"one of {', '.join(table.measures)}"}])
    m = table.measures.index(measure)
    order = [i for i in np.argsort(-np.nan_to_num(table.means[:, m], nan=-np.inf), kind="stable")[:top]]
    names = [table.runs[i].name for i in order]
    scores = np.nan_to_num(table.values[order, m, :], nan=0.0)  # a topic a run lacks scores 0, as in the means
    if len(order) < 2:
        return {"measure": measure, "method": method, "runs": names, "pvalues": [], "groups": [names]}
    test = randomised_tukey_hsd if method == "tukey" else pairwise_randomization
    pvalues = test(scores, n_resamples=n_resamples, seed=seed)
    means = table.means[order, m]
    return {
        "measure": measure,
        "method": method,
        "alpha": alpha,
        "n_resamples": n_resamples,
        "seed": seed,
        "runs": names,
        "means": [_num(v) for v in means.tolist()],
        "pvalues": pvalues.tolist(),
        "groups": significance_groups(names, means, pvalues, alpha),
    }


def live_significance(
    session: Session,
    principal: Principal,
    campaign_id: int,
    *,
    measure: str | None = None,
    top: int = 10,
    method: str = "tukey",
    n_resamples: int = 10_000,
    seed: int = 0,
) -> dict[str, object]:
    """Significance groups of the current evaluation's top runs (organisers only before publication)."""
    campaign = get_organised(session, principal, campaign_id)
    evaluation = finished_evaluation(session, campaign_id, None)
    table = score_table(session, evaluation)
    return significance(
        table,
        measure or default_measure(campaign, table.measures),
        top=top,
        method=method,
        n_resamples=n_resamples,
        seed=seed,
    )


def _num(value: float) -> float | None:
    """A JSON-safe number (None for NaN)."""
    return None if value is None or not math.isfinite(value) else float(value)


def live_leaderboard(
    session: Session,
    principal: Principal,
    campaign_id: int,
    *,
    measure: str | None = None,
    evaluation_id: int | None = None,
    filters: Filters = Filters(),
) -> dict[str, object]:
    """The current leaderboard: organisers see every run, a team only its own rows."""
    campaign = get_campaign(session, principal, campaign_id)
    if principal.role is Role.assessor:
        raise Forbidden("assessors do not see scores")
    visible_team = principal.team_id if principal.role is Role.team else None
    evaluation = finished_evaluation(session, campaign_id, evaluation_id)
    table = leaderboard_table(session, campaign, evaluation, measure)
    return build_leaderboard(campaign, evaluation, table, measure, filters, visible_team)


def finished_evaluation(session: Session, campaign_id: int, evaluation_id: int | None) -> Evaluation:
    """The named finished evaluation, or the newest."""
    if evaluation_id is None:
        evaluation = latest_done(session, campaign_id)
    else:
        evaluation = session.get(Evaluation, evaluation_id)
        if evaluation is not None and (evaluation.campaign_id != campaign_id or evaluation.status != "done"):
            evaluation = None
    if evaluation is None:
        raise NotFound("no finished evaluation for this campaign yet")
    return evaluation


def published_snapshot(session: Session, campaign_id: int) -> LeaderboardSnapshot:
    """The newest published snapshot of a campaign (public)."""
    snapshot = session.scalar(
        select(LeaderboardSnapshot)
        .where(LeaderboardSnapshot.campaign_id == campaign_id)
        .order_by(LeaderboardSnapshot.id.desc())
        .limit(1)
    )
    if snapshot is None:
        raise NotFound(f"campaign {campaign_id} has published nothing")
    return snapshot


def published_leaderboard(
    session: Session, campaign_id: int, measure: str | None, filters: Filters
) -> dict[str, object]:
    """A published leaderboard, for anyone, filtered like the live one."""
    content = published_snapshot(session, campaign_id).content
    measure = measure or content["default_measure"]
    board = content["leaderboards"].get(measure)
    if board is None:
        raise InvalidInput(
            "unknown measure", [{"field": "measure", "message": f"one of {', '.join(content['leaderboards'])}"}]
        )
    rows = [
        r
        for r in board["rows"]
        if (filters.system_type is None or r["system_type"] == filters.system_type)
        and (filters.training_type is None or r["training_type"] == filters.training_type)
        and (filters.novelty is None or r["novelty"] == filters.novelty)
    ]
    by_type: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        by_type.setdefault(row["system_type"], []).append(row)
    return {**board, "rows": rows, "by_system_type": by_type, "filters": filters.__dict__, "published": True}


def published_campaigns(session: Session) -> list[Campaign]:
    """Campaigns that have published a snapshot."""
    ids = select(LeaderboardSnapshot.campaign_id).distinct()
    return list(session.scalars(select(Campaign).where(Campaign.id.in_(ids)).order_by(Campaign.id)))
