"""Reading stored scores: an evaluation's numbers as arrays, the measure a caller means, where the numbers come from.

What boards, reports, publication, analyses and charts read; none of them writes here. Every number of an
evaluation (`score_table`, its score arrays in one query: `score_store`) or what one board shows
(`leaderboard_table`: the per-run means of `run_means` and one measure's per-topic values, one index range). A run
absent from a topic, or a measure absent from a run, is NaN.
"""

from __future__ import annotations

import math
import string
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import func, select, text
from sqlalchemy.orm import Session, object_session

from app.evaluation.errors import MeasureError
from app.evaluation.measures.registry import resolve
from app.evaluation.moments import parse_moment_measure
from app.services.errors import InvalidInput, NotFound
from app.services.evaluations import latest_done
from app.services.qrels import judges_of, order_mark, unjudged_note
from app.services.score_intervals import RunIntervals
from app.services.score_store import read_scores
from app.storage.models import Campaign, Evaluation, QrelsVersion, Run, TaskKind, Team, Topic

ALL = "all"  # the topic column of a run's mean
DEFAULT_MEASURE = {TaskKind.shots: ("xinfAP", "AP"), TaskKind.moments: ("AxIoU@10",)}


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
    intervals: RunIntervals | None = None  # None: the numbers were stored without intervals (before issue 24)


def topic_key(topic: str) -> tuple[int, int, str]:
    """Numeric topics in numeric order, then the rest."""
    return (0, int(topic), "") if topic.isdigit() else (1, 0, topic)


def json_number(value: float | None) -> float | None:
    """A JSON-safe number (None for NaN, infinities and None)."""
    return None if value is None or not math.isfinite(value) else float(value)


def score_table(session: Session, evaluation: Evaluation) -> ScoreTable:
    """Load every stored number of an evaluation, its score arrays in one query (reports, publication, analyses)."""
    runs = list(session.scalars(select(Run).where(Run.campaign_id == evaluation.campaign_id).order_by(Run.id)))
    teams = {t.id: t.name for t in session.scalars(select(Team).where(Team.campaign_id == evaluation.campaign_id))}
    stored = read_scores(session, evaluation.id)
    measures = list(evaluation.measures["names"])
    topics = sorted((t for t in stored.found_topics() if t != ALL), key=topic_key)
    run_index = {r.id: i for i, r in enumerate(runs)}
    measure_index = {m: i for i, m in enumerate(measures)}
    values = np.full((len(runs), len(measures), len(topics)), np.nan)
    means = np.full((len(runs), len(measures)), np.nan)
    r = np.array([run_index.get(x, -1) for x in stored.run_ids.tolist()], dtype=np.int64)
    m = np.array([measure_index.get(x, -1) for x in stored.measures], dtype=np.int64)
    ok = (r >= 0) & (m >= 0)
    columns = [stored.topics.index(t) for t in topics]
    values[r[ok], m[ok], :] = stored.values[ok][:, columns]  # NaN where absent
    if ALL in stored.topics:
        means[r[ok], m[ok]] = stored.values[ok, stored.topics.index(ALL)]
    found = stored_intervals(session, evaluation, run_index, measure_index)
    return ScoreTable(runs, teams, measures, topics, values, means, found)


_INTERVALS = text(
    "SELECT run_id, array_agg(measure), array_agg(ci_low), array_agg(ci_high), array_agg(sampling_se) "
    "FROM run_means WHERE evaluation_id = :evaluation GROUP BY run_id"
)


def stored_intervals(
    session: Session, evaluation: Evaluation, run_index: dict[int, int], measure_index: dict[str, int]
) -> RunIntervals | None:
    """The runs' stored intervals [run, measure] (None for an evaluation made before the job stored them)."""
    info = evaluation.measures.get("interval")
    if not info:
        return None
    return _fill(info, session.execute(_INTERVALS, {"evaluation": evaluation.id}), run_index, measure_index)


def _fill(
    info: dict[str, Any], rows: Iterable[Sequence[Any]], run_index: dict[int, int], measure_index: dict[str, int]
) -> RunIntervals:
    """RunIntervals from rows of (run id, measures, lows, highs, standard errors); NULL and unknown are NaN."""
    arrays = [np.full((len(run_index), len(measure_index)), np.nan) for _ in range(3)]
    for run_id, names, *columns in rows:
        if run_id not in run_index:
            continue
        for k, name in enumerate(names):
            if name in measure_index:
                for array, column in zip(arrays, columns, strict=True):
                    if column[k] is not None:
                        array[run_index[run_id], measure_index[name]] = column[k]
    return RunIntervals(arrays[0], arrays[1], arrays[2], info)


_RUNS = text(
    "SELECT r.id, r.name, r.team_id, r.system_type, r.training_type, r.novelty, r.priority, t.name "
    "FROM runs r JOIN teams t ON t.id = r.team_id WHERE r.campaign_id = :campaign ORDER BY r.id"
)
_MEANS = text(
    "SELECT run_id, array_agg(measure), array_agg(value), array_agg(ci_low), array_agg(ci_high), "
    "array_agg(sampling_se) FROM run_means WHERE evaluation_id = :evaluation GROUP BY run_id"
)


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
    rows = session.execute(_MEANS, {"evaluation": evaluation.id}).all()
    for run_id, names, numbers, *_ in rows:
        if run_id in run_index:
            known = [(measure_index[n], v) for n, v in zip(names, numbers, strict=True) if n in measure_index]
            if known:
                columns, cells = zip(*known, strict=True)
                means[run_index[run_id], list(columns)] = cells
    info = evaluation.measures.get("interval")
    found = _fill(info, [(r[0], r[1], *r[3:]) for r in rows], run_index, measure_index) if info else None
    shown = measure or default_measure(campaign, measures)
    topics: list[str] = []
    values = np.full((len(runs), len(measures), 0), np.nan)
    if shown in measure_index:  # one array per run: its values of the measure (one index range)
        stored = read_scores(session, evaluation.id, measure=shown)
        topics = sorted((t for t in stored.found_topics() if t != ALL), key=topic_key)
        positions = [stored.topics.index(t) for t in topics]
        values = np.full((len(runs), len(measures), len(topics)), np.nan)
        for k, run_id in enumerate(stored.run_ids.tolist()):
            if run_id in run_index:
                values[run_index[run_id], measure_index[shown], :] = stored.values[k, positions]
    return ScoreTable(runs, teams, measures, topics, values, means, found)


def run_topic_scores(
    session: Session, evaluation: Evaluation, run_ids: list[int], order: list[str]
) -> dict[int, dict[str, dict[str, float | None]]]:
    """Per run, measure and topic: the stored values of a few runs, topics in `order` (then any others)."""
    out: dict[int, dict[str, dict[str, float | None]]] = {}
    if not run_ids:
        return out
    stored = read_scores(session, evaluation.id, run_ids=run_ids)
    for k, (run_id, measure) in enumerate(zip(stored.run_ids.tolist(), stored.measures, strict=True)):
        cells = zip(stored.topics, stored.values[k].tolist(), stored.present[k].tolist(), strict=True)
        found = {topic: value for topic, value, seen in cells if seen and topic != ALL}
        if not found:  # only the run's mean
            continue
        ordered = [t for t in order if t in found]
        if len(ordered) < len(found):
            ordered += sorted(set(found) - set(ordered), key=topic_key)
        out.setdefault(run_id, {})[measure] = {t: json_number(found[t]) for t in ordered}
    return out


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


def measure_index(table: ScoreTable, measure: str) -> int:
    """The column of a measure (InvalidInput naming the known ones)."""
    if measure not in table.measures:
        raise InvalidInput("unknown measure", [{"field": "measure", "message": f"one of {', '.join(table.measures)}"}])
    return table.measures.index(measure)


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


def provenance(campaign: Campaign, evaluation: Evaluation) -> dict[str, object]:
    """Where an evaluation's numbers come from (campaign, qrels version, its judging order), and the warning about
    topics without judgements: the head of every board and snapshot."""
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
        "qrels_judges": judges_of(version),
        "unjudged_topics": version.unjudged_topics if version is not None else None,
        "warning": warning,
    }


def run_marks(session: Session, campaign_id: int) -> dict[int, dict[str, object]]:
    """Each run's `baseline` mark and `submitted_at` (ISO 8601), read when a board is built."""
    found = session.execute(select(Run.id, Run.baseline, Run.created_at).where(Run.campaign_id == campaign_id))
    return {run_id: {"baseline": baseline, "submitted_at": _iso(created)} for run_id, baseline, created in found}


def _iso(moment: datetime | None) -> str | None:
    """A time as ISO 8601 (None stays None)."""
    return moment.isoformat() if moment is not None else None


def alias(k: int) -> str:
    """The k-th anonymous team name (0-based): Team A .. Team Z, Team AA, Team AB, ..."""
    letters = ""
    k += 1
    while k:
        k, rest = divmod(k - 1, 26)
        letters = string.ascii_uppercase[rest] + letters
    return f"Team {letters}"


def team_aliases(session: Session, campaign_id: int) -> dict[int, str]:
    """Every team of the campaign with runs -> its anonymous name, in the order of the teams' first submissions
    (ties by the first run's id), so a team keeps its name however the board is filtered or sorted."""
    found = session.execute(
        select(Run.team_id, Run.created_at, Run.id).where(Run.campaign_id == campaign_id).order_by(Run.id)
    )
    first: dict[int, tuple[datetime, int]] = {}
    for team_id, created, run_id in found:
        if team_id not in first or (created, run_id) < first[team_id]:
            first[team_id] = (created, run_id)
    return {team_id: alias(k) for k, team_id in enumerate(sorted(first, key=first.__getitem__))}
