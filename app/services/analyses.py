"""Reusability and meta-evaluation analyses of a campaign, run as background jobs on its stored data.

Each kind is a record of the analysis registry (`analysis_registry.ANALYSES`: its typed parameters, what it reads,
the campaigns it applies to, its `compute`, which the CLI runs too). This module checks a request against the
campaign's data, reads what the record says it reads from the database into an `AnalysisData`, and stores what its
`compute` returns. A job reports its progress as it goes (the core calls back per depth, unit, block of trials or
noisy ground truth; reports are throttled to one per percent or half second) and stops at a report when its
cancellation was asked for.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.analyses.efficiency import mean_seconds
from app.evaluation.analyses.lines import judged_only
from app.evaluation.analyses.measure_agreement import readable_measures
from app.evaluation.errors import MeasureError
from app.evaluation.measures.registry import resolve
from app.evaluation.moments import parse_moment_measure
from app.services import agreement_report, topic_depths
from app.services.analysis_registry import ANALYSES, Analysis, AnalysisData, Scores, checked_params, json_safe
from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.errors import Conflict, InvalidInput, NotFound
from app.services.evaluations import load_ground_truth
from app.services.qrels import evaluation_qrels, load_qrels, order_mark_of
from app.services.run_arrays import load_moment_runs
from app.services.run_blocks import DEFAULT_MEMORY_MB, StoredBlocks
from app.services.scores import ScoreTable, default_measure, finished_evaluation, measure_name, score_table
from app.storage.models import AnalysisJob, Campaign, Evaluation, Pool, PoolRun, QrelsVersion, Run, Topic

Progress = Callable[[float], None]
LOADED, COMPUTED = 0.05, 0.95  # progress once the data is loaded; the computation reports in between


def start_analysis(
    session: Session, principal: Principal, campaign_id: int, kind: str, params: dict[str, object]
) -> AnalysisJob:
    """Queue an analysis of the campaign's newest finished evaluation (parameters checked against its data)."""
    campaign = get_organised(session, principal, campaign_id)
    record = ANALYSES.get(kind)
    if record is None:
        raise InvalidInput("unknown analysis", [{"field": "kind", "message": f"one of {', '.join(ANALYSES)}"}])
    try:
        checked = checked_params(kind, params)
    except ValidationError as exc:
        errors = [{"field": ".".join(["params", *map(str, e["loc"])]), "message": e["msg"]} for e in exc.errors()]
        raise InvalidInput("invalid analysis parameters", errors) from None
    if campaign.task_kind.value not in record.task_kinds:
        message = "for shot campaigns only" if record.task_kinds == ("shots",) else "moments only"
        what = "needs qrels" if record.task_kinds == ("shots",) else "reads moment runs"
        raise InvalidInput(f"{kind} {what}", [{"field": "kind", "message": message}])
    evaluation = finished_evaluation(session, campaign_id, None)
    checked = _check_against_data(session, campaign, evaluation, record, checked)
    job = AnalysisJob(
        campaign_id=campaign_id,
        kind=kind,
        params={**checked, "evaluation_id": evaluation.id},
        status="queued",
        progress=0.0,
    )
    session.add(job)
    session.flush()
    return job


def _refuse(field: str, message: str) -> InvalidInput:
    """A 422 naming one parameter."""
    return InvalidInput("invalid analysis parameters", [{"field": f"params.{field}", "message": message}])


def _agreement_versions(session: Session, campaign: Campaign) -> list[int]:
    """The machine-agreement pair by default: the campaign's newest human and newest model version (422 without)."""
    human, model = agreement_report.default_versions(agreement_report.versions_of(session, campaign.id))
    if human is None or model is None:
        missing = "human" if human is None else "model"
        raise _refuse(
            "human_version_id", f"the campaign has no {missing} qrels version: cut or import one, or name both versions"
        )
    return [human, model]


# The parameters naming measures, one (`measure`) or a list: what `_check_against_data` resolves against the data.
MEASURE_FIELDS = ("measure", "measures", "validation_measures", "test_measures")


def _check_split(session: Session, campaign: Campaign, topics: list[str]) -> None:
    """Refuse (422) validation topics the campaign lacks, or that leave no topic to test on."""
    known = set(session.scalars(select(Topic.number).where(Topic.campaign_id == campaign.id)))
    unknown = [t for t in topics if t not in known]
    if unknown:
        raise _refuse("validation_topics", f"not topics of this campaign: {', '.join(unknown[:10])}")
    if known <= set(topics):
        raise _refuse("validation_topics", "leave at least one topic for the test split")


def _check_against_data(
    session: Session, campaign: Campaign, evaluation: Evaluation, record: Analysis, params: dict[str, Any]
) -> dict[str, Any]:
    """The parameters with measure names in their stored spelling, refused (422) where the data cannot use them: an
    analysis of moment runs takes moment measures, one that re-scores runs any registry measure, one that reads the
    stored scores a measure of the evaluation."""
    stored = list(evaluation.measures["names"])
    out = dict(params)
    for field in MEASURE_FIELDS:
        if out.get(field) is None:
            continue
        given = [out[field]] if field == "measure" else list(out[field])
        names = []
        for i, name in enumerate(given):
            where = field if field == "measure" else f"{field}.{i}"
            if record.reads == "moment-runs":
                try:
                    names.append(parse_moment_measure(name).name)
                except MeasureError as exc:
                    raise _refuse(where, str(exc)) from None
            elif record.reads in ("runs", "qrels-versions"):  # re-scored under other qrels: any registry measure
                try:
                    names.append(resolve(name).name)
                except MeasureError as exc:
                    raise _refuse(where, str(exc)) from None
            else:
                name = measure_name(name) or name
                if name not in stored:
                    raise _refuse(where, f"not a measure of evaluation {evaluation.id}: one of {', '.join(stored)}")
                names.append(name)
        out[field] = names[0] if field == "measure" else names
    if out.get("validation_topics"):  # model selection's split: topics of the campaign, leaving some to test on
        _check_split(session, campaign, list(out["validation_topics"]))
    if "sort_by" in out:
        name = measure_name(out["sort_by"]) or out["sort_by"]
        if name not in out.get("measures", stored):
            raise _refuse("sort_by", f"not one of the measures: {', '.join(out.get('measures', stored))}")
        out["sort_by"] = name
    if record.name == "machine-agreement" and not out.get("qrels_version_ids"):
        out["qrels_version_ids"] = _agreement_versions(session, campaign)
    if record.reads == "qrels-versions":
        out["qrels_version_ids"] = _qrels_versions(session, campaign, out.get("qrels_version_ids"))
    if isinstance(out.get("depth"), dict):  # per-topic depths: of the campaign's topics
        try:
            out["depth"] = topic_depths.check_depths(session, campaign.id, out["depth"], field="params.depth")
        except InvalidInput as exc:
            raise InvalidInput("invalid analysis parameters", exc.errors) from None
    if "pooled_runs" in out:
        version = session.get(QrelsVersion, evaluation.qrels_version_id) if evaluation.qrels_version_id else None
        if version is not None and version.pool_id is not None:
            raise _refuse("pooled_runs", "the qrels were cut from a pool, which records the runs that built it")
        known = set(session.scalars(select(Run.name).where(Run.campaign_id == campaign.id)))
        unknown = [name for name in out["pooled_runs"] if name not in known]
        if unknown:
            raise _refuse("pooled_runs", f"not runs of this campaign: {', '.join(unknown[:10])}")
    return out


def _qrels_versions(session: Session, campaign: Campaign, given: list[int] | None) -> list[int]:
    """The qrels versions to compare: those given (each of this campaign), else all of the campaign (at least 2)."""
    known = list(
        session.scalars(
            select(QrelsVersion.id).where(QrelsVersion.campaign_id == campaign.id).order_by(QrelsVersion.id)
        )
    )
    if given is None:
        if len(known) < 2:
            raise _refuse("qrels_version_ids", f"the campaign has {len(known)} qrels version(s): comparing needs 2")
        return known
    unknown = [str(i) for i in given if i not in known]
    if unknown:
        raise _refuse("qrels_version_ids", f"not qrels versions of this campaign: {', '.join(unknown)}")
    if len(set(given)) != len(given):
        raise _refuse("qrels_version_ids", "a version is named twice")
    return list(given)


class Reporter:
    """Passes a computation's progress (0..1) on as the job's, mapped into [start, end], at most one report per
    percent or half second (each report is a database write, and the point where a cancel takes effect)."""

    def __init__(self, report: Progress, start: float = LOADED, end: float = COMPUTED) -> None:
        self.report, self.start, self.end = report, start, end
        self.last_value, self.last_time = -1.0, 0.0

    def __call__(self, fraction: float) -> None:
        """Report `fraction` of the computation done."""
        value = self.start + (self.end - self.start) * min(max(fraction, 0.0), 1.0)
        now = time.monotonic()
        if value - self.last_value >= 0.01 or now - self.last_time >= 0.5:
            self.last_value, self.last_time = value, now
            self.report(value)


def run_analysis(
    session: Session, job_id: int, progress: Progress = lambda _: None, *, memory_mb: float = DEFAULT_MEMORY_MB
) -> AnalysisJob:
    """Compute a queued analysis and store its result (the job row is written only at the end); runs are read in
    blocks of about `memory_mb` (`prepared_runs`)."""
    job = session.get(AnalysisJob, job_id)
    if job is None:
        raise NotFound(f"analysis {job_id} not found")
    campaign = session.get(Campaign, job.campaign_id)
    evaluation = session.get(Evaluation, job.params["evaluation_id"])
    assert campaign is not None and evaluation is not None
    record = ANALYSES[job.kind]
    params = record.params.model_validate({k: v for k, v in job.params.items() if k != "evaluation_id"})
    data, provenance = gather(session, campaign, evaluation, record, params, memory_mb=memory_mb)
    progress(0.01)
    reporter = Reporter(progress)
    reporter(0.0)
    computed = record.compute(data, params, reporter)
    progress(COMPUTED)
    result = {**computed.data, **provenance}
    stored = cast(dict[str, Any], json_safe(result))
    job.result, job.status, job.progress, job.finished_at = stored, "done", 1.0, datetime.now(UTC)
    session.flush()
    return job


def gather(
    session: Session,
    campaign: Campaign,
    evaluation: Evaluation,
    record: Analysis,
    params: Any,
    *,
    memory_mb: float = DEFAULT_MEMORY_MB,
) -> tuple[AnalysisData, dict[str, object]]:
    """What the analysis reads (`record.reads`, `record.needs`) from the campaign's stored data, and where the pool's
    runs and depth came from (added to the result); runs are read in blocks of about `memory_mb`."""
    table = score_table(session, evaluation)
    runs = cast(list[Run], list(table.runs))  # score_table reads the Run rows
    names = [r.name for r in runs]
    data = AnalysisData(runs=names, max_results=campaign.max_results)
    version: QrelsVersion | None = None
    if record.reads == "scores":
        data.scores = _scores(campaign, table, record, params)
    elif record.reads == "moment-runs":
        data.truth = load_ground_truth(session, campaign.id, evaluation.qrels_version_id)
        data.moment_runs = load_moment_runs(session, [r.id for r in runs])
    else:
        version, qrels = evaluation_qrels(session, evaluation)
        data.qrels, data.qrels_label = qrels, version.label
        if record.reads != "qrels":
            ids, names = [r.id for r in runs], [r.name for r in runs]
            keep_as = functools.partial(judged_only, qrels=qrels) if record.cuts_qrels else None
            data.blocks = StoredBlocks(  # a block at a time
                session, ids, names, campaign.max_results, memory_mb, keep_as=keep_as
            )
        if record.reads == "qrels-versions":
            data.versions = [
                (version.label, qrels) if other.id == version.id else (other.label, load_qrels(session, other))
                for other in (session.get(QrelsVersion, i) for i in params.qrels_version_ids)
                if other is not None
            ]
    provenance: dict[str, object] = {}
    if "units" in record.needs:
        data.units = functools.partial(_units, runs, table.teams)
    if "pool" in record.needs:
        if version is None:
            raise ValueError(f"{record.name} reads the pool of the evaluation's qrels: it must read runs")
        facts = pool_facts(session, version, runs, params.pooled_runs, getattr(params, "depth", None))
        data.pooled, data.depth = facts.pooled, facts.depth
        data.depth_source = "pool" if facts.depth_source == "pool" else "given"
        provenance = {"pooled_from": facts.pooled_from, "pool_depth_source": facts.depth_source}
    if "times" in record.needs:
        data.seconds = {r.name: mean_seconds(r.elapsed_seconds) for r in runs}
    return data, provenance


def _units(runs: Sequence[Any], teams: dict[int, str], which: str) -> tuple[str, list[str]]:
    """Each run's team or run type (`system_type`, `training_type`; `type` is the system type)."""
    if which == "team":
        return "team", [teams[r.team_id] for r in runs]
    field = "system_type" if which == "type" else which
    if field not in ("system_type", "training_type"):
        raise ValueError(f"runs have no {which}")
    return which, [getattr(r, field) for r in runs]


def _scores(campaign: Campaign, table: ScoreTable, record: Analysis, params: Any) -> Scores:
    """The stored scores an analysis reads: `measures`, else [`measure`], else as the record says (the
    leaderboard's measure, every measure but the counts, or every measure)."""
    if getattr(params, "measures", None):
        measures = list(params.measures)
    elif getattr(params, "measure", None):
        measures = [params.measure]
    elif record.measures == "readable":
        measures = readable_measures(table.measures) or list(table.measures)
    elif record.measures == "every":
        measures = list(table.measures)
    else:
        measures = [default_measure(campaign, table.measures)]
    columns = [_column(table, m) for m in measures]
    names = [r.name for r in table.runs]
    return Scores(names, measures, list(table.topics), table.values[:, columns, :], table.means[:, columns])


def _column(table: ScoreTable, measure: str) -> int:
    """Index of a measure of the evaluation, or InvalidInput."""
    if measure not in table.measures:
        raise InvalidInput("unknown measure", [{"field": "params.measure", "message": f"one of {table.measures}"}])
    return table.measures.index(measure)


@dataclass(frozen=True)
class PoolFacts:
    """Which runs built the pool behind a qrels version, and its depth, with where each came from."""

    pooled: list[str]
    pooled_from: str  # pool | params | priority 1
    depth: int | dict[str, int] | None  # one for every topic, or per topic (a pool's per-topic depths, or given)
    depth_source: str  # pool | given | inferred


def pool_facts(
    session: Session,
    version: QrelsVersion,
    runs: Sequence[Run],
    pooled_runs: list[str] | None,
    depth: int | dict[str, int] | None,
) -> PoolFacts:
    """The pool's runs and depth: stored for qrels cut from a pool (per topic when the pool has per-topic depths);
    for imported qrels the runs given (else the priority-1 runs) and the depth given (one or per topic; else None:
    inferred from the qrels)."""
    pool = session.get(Pool, version.pool_id) if version.pool_id is not None else None
    if pool is not None:
        ids = set(session.scalars(select(PoolRun.run_id).where(PoolRun.pool_id == pool.id)))
        numbers = list(session.scalars(select(Topic.number).where(Topic.campaign_id == pool.campaign_id)))
        deepest = int(pool.params["strata"][-1][1])
        per_topic = topic_depths.depth_of_topics(pool, numbers)
        stored: int | dict[str, int] = per_topic or deepest
        if isinstance(depth, dict):  # the topics a map given does not name keep the pool's depth
            depth = {**(per_topic or dict.fromkeys(numbers, deepest)), **depth}
        return PoolFacts(
            pooled=[r.name for r in runs if r.id in ids],
            pooled_from="pool",
            depth=stored if depth is None else depth,
            depth_source="pool" if depth is None else "given",
        )
    if pooled_runs is not None:
        pooled, source = list(pooled_runs), "params"
    else:
        pooled, source = [r.name for r in runs if r.priority == 1] or [r.name for r in runs], "priority 1"
    return PoolFacts(
        pooled=pooled, pooled_from=source, depth=depth, depth_source="inferred" if depth is None else "given"
    )


def analysis_order_mark(session: Session, job: AnalysisJob) -> dict[str, object] | None:
    """The judging-order mark of the qrels the analysis's evaluation scored against (`qrels.order_mark`)."""
    evaluation = session.get(Evaluation, job.params.get("evaluation_id")) if job.params else None
    return order_mark_of(session, evaluation.qrels_version_id) if evaluation is not None else None


def get_analysis(session: Session, principal: Principal, job_id: int) -> AnalysisJob:
    """An analysis of a campaign the caller organises."""
    job = session.get(AnalysisJob, job_id)
    if job is None:
        raise NotFound(f"analysis {job_id} not found")
    get_organised(session, principal, job.campaign_id)
    return job


def finished_analysis(session: Session, principal: Principal, job_id: int) -> AnalysisJob:
    """An analysis of a campaign the caller organises that has its result (Conflict while it runs or if it failed)."""
    job = get_analysis(session, principal, job_id)
    if job.status != "done" or job.result is None:
        raise Conflict(f"analysis {job_id} is {job.status}: it has no result to draw")
    return job
