"""Leaderboards: sorted scores by run type, per-topic tables; private until an organiser publishes a snapshot.

One rule for every board, live or published: a filtered board ranks the runs that pass the filters from 1 and takes
each topic's best run and median over those runs only. Before publication a team sees what its campaign's
`team_results` setting allows (SPEC section 7): `own` = its own runs' scores (every measure, mean and per topic) and
each topic's best and median over all runs, with no ranks and nothing else of another run; `hidden` = nothing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from psycopg import sql
from sqlalchemy import bindparam, func, select, text
from sqlalchemy.orm import Session, object_session

from app.evaluation.errors import MeasureError
from app.evaluation.measures.registry import resolve
from app.evaluation.moments import parse_moment_measure
from app.evaluation.statistics.significance import pairwise_randomization, randomised_tukey_hsd, significance_groups
from app.services.auth import Principal
from app.services.campaigns import get_campaign, get_organised
from app.services.errors import Forbidden, InvalidInput, NotFound
from app.services.evaluations import latest_done
from app.services.qrels import order_mark, unjudged_note
from app.storage.bulk import copy_out
from app.storage.models import (
    Campaign,
    Evaluation,
    LeaderboardSnapshot,
    QrelsVersion,
    Role,
    Run,
    TaskKind,
    Team,
    TeamResults,
    Topic,
)

ALL = "all"
DEFAULT_MEASURE = {TaskKind.shots: ("xinfAP", "AP"), TaskKind.moments: ("AxIoU@10",)}
SNAPSHOT_FORMAT = 2  # snapshots since issue 12 hold the score table; older ones hold prebuilt boards
RUN_FIELDS = ("id", "name", "team_id", "system_type", "training_type", "novelty", "priority")


@dataclass(frozen=True)
class RunInfo:
    """What a board needs of a run (its metadata, not its upload)."""

    id: int
    name: str
    team_id: int
    system_type: str
    training_type: str
    novelty: bool
    priority: int


@dataclass(frozen=True)
class ScoreTable:
    """An evaluation's numbers as arrays: values[run, measure, topic] (NaN where absent) and means[run, measure]."""

    runs: Sequence[Run | RunInfo]
    teams: dict[int, str]
    measures: list[str]
    topics: list[str]
    values: np.ndarray
    means: np.ndarray


@dataclass(frozen=True)
class Filters:
    """Which runs a leaderboard shows."""

    system_type: str | None = None
    training_type: str | None = None
    novelty: bool | None = None

    def keep(self, run: Run | RunInfo) -> bool:
        """Whether a run passes the filters."""
        return (
            (self.system_type is None or run.system_type == self.system_type)
            and (self.training_type is None or run.training_type == self.training_type)
            and (self.novelty is None or run.novelty == self.novelty)
        )


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


_RUNS = text(
    "SELECT r.id, r.name, r.team_id, r.system_type, r.training_type, r.novelty, r.priority, t.name "
    "FROM runs r JOIN teams t ON t.id = r.team_id WHERE r.campaign_id = :campaign ORDER BY r.id"
)
_MEANS = text(
    "SELECT run_id, array_agg(measure), array_agg(value) FROM run_means WHERE evaluation_id = :evaluation "
    "GROUP BY run_id"
)
_PER_TOPIC = text(
    "SELECT run_id, array_agg(topic), array_agg(value) FROM scores "
    "WHERE evaluation_id = :evaluation AND measure = :measure AND topic <> 'all' GROUP BY run_id"
)
_RUN_TOPICS = text(
    "SELECT run_id, measure, array_agg(topic), array_agg(value) FROM scores "
    "WHERE evaluation_id = :evaluation AND run_id IN :runs AND topic <> 'all' GROUP BY run_id, measure"
).bindparams(bindparam("runs", expanding=True))


def leaderboard_table(session: Session, campaign: Campaign, evaluation: Evaluation, measure: str | None) -> ScoreTable:
    """What one leaderboard shows: every run's stored means (run_means) and the per-topic values of its measure only.

    A few thousand numbers instead of every one of the evaluation; `values` is NaN outside the measure's slice.
    """
    runs, teams = [], {}
    for *fields, team in session.execute(_RUNS, {"campaign": evaluation.campaign_id}):
        run = RunInfo(*fields)
        runs.append(run)
        teams[run.team_id] = team
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


def measure_name(name: str | None) -> str | None:
    """The stored name of a measure asked for in any spelling the CLI accepts (`map` -> AP, `P_10` -> P@10)."""
    if name is None:
        return None
    try:
        return resolve(name).name
    except MeasureError:
        pass
    try:
        return parse_moment_measure(name).name
    except MeasureError:
        return name  # unknown: the board names the measures it has


def default_measure(campaign: Campaign, measures: list[str]) -> str:
    """The measure a leaderboard sorts by when none is asked for."""
    for name in DEFAULT_MEASURE[campaign.task_kind]:
        if name in measures:
            return name
    return measures[0]


def _measure_index(table: ScoreTable, measure: str) -> int:
    """The column of a measure (InvalidInput naming the known ones)."""
    if measure not in table.measures:
        raise InvalidInput("unknown measure", [{"field": "measure", "message": f"one of {', '.join(table.measures)}"}])
    return table.measures.index(measure)


def ranked(table: ScoreTable, m: int, filters: Filters) -> list[int]:
    """The runs passing the filters, best mean of measure `m` first (ties by run name, then id)."""
    column = table.means[:, m].tolist()
    chosen = [i for i, run in enumerate(table.runs) if filters.keep(run)]
    return sorted(
        chosen,
        key=lambda i: (-column[i] if math.isfinite(column[i]) else math.inf, table.runs[i].name, table.runs[i].id),
    )


def _header(campaign: Campaign, evaluation: Evaluation) -> dict[str, object]:
    """What a board says about where its numbers come from, and its warning about topics without judgements."""
    session = object_session(evaluation)
    assert session is not None
    version = session.get(QrelsVersion, evaluation.qrels_version_id) if evaluation.qrels_version_id else None
    warning = None
    if version is not None and version.unjudged_topics:
        n_topics = session.scalar(select(func.count()).select_from(Topic).where(Topic.campaign_id == campaign.id))
        warning = unjudged_note(version, n_topics)
    return {
        "campaign": {"id": campaign.id, "name": campaign.name, "task_kind": campaign.task_kind.value},
        "evaluation_id": evaluation.id,
        "qrels_version_id": evaluation.qrels_version_id,
        "judging_order": order_mark(version),
        "unjudged_topics": version.unjudged_topics if version is not None else None,
        "warning": warning,
    }


def _run_fields(table: ScoreTable, i: int) -> dict[str, object]:
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


def _by_type(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Rows grouped by system type, in board order."""
    by_type: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_type.setdefault(str(row["system_type"]), []).append(row)
    return by_type


def board_document(
    header: dict[str, object], table: ScoreTable, measure: str, filters: Filters, *, published: bool = False
) -> dict[str, object]:
    """The board over the runs passing the filters: ranked from 1, and each topic's best and median among them."""
    m = _measure_index(table, measure)
    chosen = ranked(table, m, filters)
    means = table.means.tolist()
    rows = []
    for place, i in enumerate(chosen, start=1):
        scores = [_num(v) for v in means[i]]
        rows.append(
            {
                "rank": place,
                **_run_fields(table, i),
                "score": scores[m],
                "scores": dict(zip(table.measures, scores, strict=True)),
            }
        )
    return {
        **header,
        "measure": measure,
        "measures": table.measures,
        "filters": filters.__dict__,
        "published": published,
        "rows": rows,
        "by_system_type": _by_type(rows),
        "per_topic": per_topic(table, m, chosen),
    }


def build_leaderboard(
    campaign: Campaign, evaluation: Evaluation, table: ScoreTable, measure: str | None, filters: Filters
) -> dict[str, object]:
    """The leaderboard document: rows sorted by the measure, grouped by system type, and the per-topic table."""
    measure = measure or default_measure(campaign, table.measures)
    return board_document(_header(campaign, evaluation), table, measure, filters)


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
    out = []
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
) -> dict[str, object]:
    """Groups of the top runs passing the filters with no significant difference (randomised Tukey HSD or pairwise).

    Fewer than two runs, or no topic with scores (qrels that judge none), leave nothing to test: p = 1 and one group,
    with `tested` false and a `note` saying why.
    """
    if method not in ("tukey", "pairwise"):
        raise InvalidInput("unknown method", [{"field": "method", "message": "tukey or pairwise"}])
    m = _measure_index(table, measure)
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
        "filters": filters.__dict__,
        "alpha": alpha,
        "n_resamples": n_resamples,
        "seed": seed,
        "runs": names,
        "means": [_num(v) for v in means.tolist()],
        "pvalues": pvalues.tolist(),
        "groups": significance_groups(names, np.nan_to_num(means, nan=0.0), pvalues, alpha),
        "tested": note is None,
        "note": note,
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
) -> dict[str, object]:
    """Significance groups of the current evaluation's top runs passing the filters (organisers only)."""
    measure = measure_name(measure)
    campaign = get_organised(session, principal, campaign_id)
    evaluation = finished_evaluation(session, campaign_id, None)
    measure = measure or default_measure(campaign, list(evaluation.measures["names"]))
    table = leaderboard_table(session, campaign, evaluation, measure)
    return significance(table, measure, filters=filters, top=top, method=method, n_resamples=n_resamples, seed=seed)


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
    """The current leaderboard for organisers; for a team what its campaign's `team_results` allows."""
    measure = measure_name(measure)
    campaign = get_campaign(session, principal, campaign_id)
    if principal.role is Role.assessor:
        raise Forbidden("assessors do not see scores")
    if principal.role is Role.team:
        assert principal.team_id is not None
        return team_results(session, campaign, principal.team_id, measure, evaluation_id, filters)
    evaluation = finished_evaluation(session, campaign_id, evaluation_id)
    table = leaderboard_table(session, campaign, evaluation, measure)
    return build_leaderboard(campaign, evaluation, table, measure, filters)


def team_results(
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
    if session.scalar(select(LeaderboardSnapshot.id).where(LeaderboardSnapshot.campaign_id == campaign.id).limit(1)):
        return published_leaderboard(session, campaign.id, measure, filters)
    if campaign.team_results is TeamResults.hidden:
        raise Forbidden("this campaign shows results to teams only once the organisers publish them")
    evaluation = finished_evaluation(session, campaign.id, evaluation_id)
    table = leaderboard_table(session, campaign, evaluation, measure)
    measure = measure or default_measure(campaign, table.measures)
    m = _measure_index(table, measure)
    mine = [i for i in ranked(table, m, filters) if table.runs[i].team_id == team_id]
    topic_scores = _run_topics(session, evaluation, [table.runs[i].id for i in mine], table.topics)
    rows = []
    for i in mine:
        scores = [_num(v) for v in table.means[i].tolist()]
        rows.append(
            {
                **_run_fields(table, i),
                "score": scores[m],
                "scores": dict(zip(table.measures, scores, strict=True)),
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
        **_header(campaign, evaluation),
        "measure": measure,
        "measures": table.measures,
        "filters": filters.__dict__,
        "published": False,
        "team_results": campaign.team_results.value,
        "rows": rows,
        "by_system_type": _by_type(rows),
        "per_topic": per_topic_rows,
    }


def _run_topics(
    session: Session, evaluation: Evaluation, run_ids: list[int], order: list[str]
) -> dict[int, dict[str, dict[str, float | None]]]:
    """Per run, measure and topic: the stored values of a few runs, topics in `order` (then any others)."""
    out: dict[int, dict[str, dict[str, float | None]]] = {}
    if not run_ids:
        return out
    for run_id, measure, topics, values in session.execute(
        _RUN_TOPICS, {"evaluation": evaluation.id, "runs": run_ids}
    ).all():
        found = dict(zip(topics, values, strict=True))
        ordered = [t for t in order if t in found]
        if len(ordered) < len(found):
            ordered += sorted(set(found) - set(ordered), key=_topic_key)
        out.setdefault(run_id, {})[measure] = {t: _num(found[t]) for t in ordered}
    return out


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


def snapshot_content(campaign: Campaign, evaluation: Evaluation, table: ScoreTable) -> dict[str, object]:
    """The frozen score table of a publication: runs, means and every measure's per-topic values."""
    return {
        "format": SNAPSHOT_FORMAT,
        **_header(campaign, evaluation),
        "default_measure": default_measure(campaign, table.measures),
        "runs": [
            {**{f: getattr(run, f) for f in RUN_FIELDS}, "team": table.teams.get(run.team_id)} for run in table.runs
        ],
        "measures": table.measures,
        "topics": table.topics,
        "means": [[_num(v) for v in row] for row in table.means.tolist()],
        "values": {
            measure: [[_num(v) for v in row] for row in table.values[:, m, :].tolist()]
            for m, measure in enumerate(table.measures)
        },
    }


_SNAPSHOT_HEAD = text(
    "SELECT id, content - 'values' - 'report' - 'leaderboards', "
    "content -> 'values' -> coalesce(CAST(:measure AS text), content ->> 'default_measure') "
    "FROM leaderboard_snapshots WHERE campaign_id = :campaign ORDER BY id DESC LIMIT 1"
)


def _published_table(session: Session, campaign_id: int, measure: str | None) -> tuple[int, dict[str, Any], ScoreTable]:
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
    return snapshot_id, head, ScoreTable(runs, teams, measures, topics, grid, means)


def _legacy_table(session: Session, campaign_id: int, head: dict[str, Any], measure: str | None) -> ScoreTable:
    """The table of a snapshot published before snapshots held one: its evaluation's stored scores."""
    snapshot = published_snapshot(session, campaign_id)
    board = next(iter(snapshot.content["leaderboards"].values()))
    head.update({k: board[k] for k in ("campaign", "evaluation_id", "qrels_version_id", "measures")})
    head["format"] = SNAPSHOT_FORMAT
    campaign = session.get(Campaign, campaign_id)
    evaluation = session.get(Evaluation, snapshot.evaluation_id)
    assert campaign is not None and evaluation is not None
    header = _header(campaign, evaluation)  # what such boards did not say yet
    head.update({k: header[k] for k in ("judging_order", "unjudged_topics", "warning")})
    return leaderboard_table(session, campaign, evaluation, measure or head["default_measure"])


def _head(head: dict[str, Any]) -> dict[str, object]:
    """The header a published board repeats from its snapshot (older snapshots lack the later keys)."""
    return {
        **{k: head[k] for k in ("campaign", "evaluation_id", "qrels_version_id")},
        **{k: head.get(k) for k in ("judging_order", "unjudged_topics", "warning")},
    }


def published_leaderboard(
    session: Session, campaign_id: int, measure: str | None, filters: Filters
) -> dict[str, object]:
    """A published leaderboard, for anyone, built and filtered by the same rule as the live one."""
    measure = measure_name(measure)
    _, head, table = _published_table(session, campaign_id, measure)
    return board_document(_head(head), table, measure or head["default_measure"], filters, published=True)


_SIGNIFICANCE: dict[tuple[int, Filters], dict[str, object]] = {}
MAX_CACHED = 256


def published_significance(session: Session, campaign_id: int, filters: Filters) -> dict[str, object]:
    """The significance groups of the published board's measure over the runs passing the filters.

    Unfiltered: the groups frozen at publication. Filtered: computed once per snapshot and filters with the same
    defaults (the filters take a bounded number of values, so the cache stays small).
    """
    if filters == Filters():
        frozen = session.execute(
            text(
                "SELECT content -> 'significance' FROM leaderboard_snapshots WHERE campaign_id = :campaign "
                "ORDER BY id DESC LIMIT 1"
            ),
            {"campaign": campaign_id},
        ).first()
        if frozen is None:
            raise NotFound(f"campaign {campaign_id} has published nothing")
        return {**frozen[0], "filters": filters.__dict__}
    snapshot_id, head, table = _published_table(session, campaign_id, None)
    key = (snapshot_id, filters)
    if key not in _SIGNIFICANCE:
        if len(_SIGNIFICANCE) >= MAX_CACHED:
            _SIGNIFICANCE.clear()
        _SIGNIFICANCE[key] = significance(table, head["default_measure"], filters=filters)
    return _SIGNIFICANCE[key]


def published_campaigns(session: Session) -> list[Campaign]:
    """Campaigns that have published a snapshot."""
    ids = select(LeaderboardSnapshot.campaign_id).distinct()
    return list(session.scalars(select(Campaign).where(Campaign.id.in_(ids)).order_by(Campaign.id)))
