"""Reusability and meta-evaluation analyses of a campaign, run as background jobs on its stored data.

Parameters are the typed models of `analysis_params` (the CLI validates with the same ones); a job reports its
progress as it goes (the core calls back per depth, unit, block of trials or noisy ground truth; reports are
throttled to one per percent or half second) and stops at a report when its cancellation was asked for.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.analyses.depth_inference import pool_depths
from app.evaluation.analyses.efficiency import mean_seconds, score_vs_time
from app.evaluation.analyses.judged_depth import judged_fraction
from app.evaluation.analyses.label_noise import label_noise
from app.evaluation.analyses.leave_out import leave_out
from app.evaluation.analyses.lines import index_lines, run_mask
from app.evaluation.analyses.measure_agreement import agreement_result, readable_measures
from app.evaluation.analyses.moment_effectiveness import moment_effectiveness
from app.evaluation.analyses.novelty import unique_relevant
from app.evaluation.analyses.pool_depth import pool_depth
from app.evaluation.analyses.power import power_result
from app.evaluation.analyses.qrels_comparison import compare_qrels
from app.evaluation.analyses.stability import stability
from app.evaluation.analyses.strata import stratum_summary
from app.evaluation.analyses.swap_rate import swap_rates
from app.evaluation.analyses.ties import ties_result
from app.evaluation.analyses.topic_comparison import topic_comparison
from app.evaluation.analyses.type_significance import significance_by_type
from app.evaluation.errors import MeasureError
from app.evaluation.measures.registry import aggregate_of, resolve
from app.evaluation.moments import ground_truth_segments, parse_moment_measure, rank_moments
from app.evaluation.prepared_runs import prepare_runs
from app.services.analysis_params import checked_params, parse_params
from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.errors import Conflict, InvalidInput, NotFound
from app.services.evaluations import load_ground_truth
from app.services.leaderboards import ScoreTable, default_measure, finished_evaluation, measure_name, score_table
from app.services.qrels import evaluation_qrels, load_qrels, order_mark_of
from app.services.run_arrays import load_moment_runs, load_runs
from app.storage.models import AnalysisJob, Campaign, Evaluation, Pool, PoolRun, QrelsVersion, Run, TaskKind

Progress = Callable[[float], None]
KINDS = (
    "pool-depth",
    "leave-out",
    "agreement",
    "stability",
    "ties",
    "power",
    "label-noise",
    "judged-fraction",
    "qrels-versions",
    "swap-rate",
    "type-significance",
    "novelty",
    "run-vs-median",
    "efficiency",
    "strata",
    "moment-effectiveness",
)
NEEDS_QRELS = ("pool-depth", "leave-out")  # re-evaluated under reduced qrels of the evaluation's version
REEVALUATED = ("pool-depth", "leave-out", "qrels-versions")  # any registry measure, scored afresh
SHOTS_ONLY = ("pool-depth", "leave-out", "judged-fraction", "qrels-versions", "novelty", "strata")
MOMENTS_ONLY = ("label-noise", "moment-effectiveness")
LOADED, COMPUTED = 0.05, 0.95  # progress once the data is loaded; the computation reports in between


def start_analysis(
    session: Session, principal: Principal, campaign_id: int, kind: str, params: dict[str, object]
) -> AnalysisJob:
    """Queue an analysis of the campaign's newest finished evaluation (parameters checked against its data)."""
    campaign = get_organised(session, principal, campaign_id)
    if kind not in KINDS:
        raise InvalidInput("unknown analysis", [{"field": "kind", "message": f"one of {', '.join(KINDS)}"}])
    try:
        checked = checked_params(kind, params)
    except ValidationError as exc:
        errors = [{"field": ".".join(["params", *map(str, e["loc"])]), "message": e["msg"]} for e in exc.errors()]
        raise InvalidInput("invalid analysis parameters", errors) from None
    if kind in SHOTS_ONLY and campaign.task_kind is not TaskKind.shots:
        raise InvalidInput(f"{kind} needs qrels", [{"field": "kind", "message": "for shot campaigns only"}])
    if kind in MOMENTS_ONLY and campaign.task_kind is not TaskKind.moments:
        raise InvalidInput(f"{kind} reads moment runs", [{"field": "kind", "message": "moments only"}])
    evaluation = finished_evaluation(session, campaign_id, None)
    checked = _check_against_data(session, campaign, evaluation, kind, checked)
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


def _check_against_data(
    session: Session, campaign: Campaign, evaluation: Evaluation, kind: str, params: dict[str, Any]
) -> dict[str, Any]:
    """The parameters with measure names in their stored spelling, refused (422) where the data cannot use them."""
    stored = list(evaluation.measures["names"])
    out = dict(params)
    for field in ("measure", "measures"):
        if field not in out:
            continue
        given = [out[field]] if field == "measure" else list(out[field])
        names = []
        for i, name in enumerate(given):
            where = field if field == "measure" else f"{field}.{i}"
            if kind == "label-noise":
                try:
                    names.append(parse_moment_measure(name).name)
                except MeasureError as exc:
                    raise _refuse(where, str(exc)) from None
            elif kind in REEVALUATED:  # re-evaluated under other qrels: any registry measure
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
    if "sort_by" in out:
        name = measure_name(out["sort_by"]) or out["sort_by"]
        if name not in out.get("measures", stored):
            raise _refuse("sort_by", f"not one of the measures: {', '.join(out.get('measures', stored))}")
        out["sort_by"] = name
    if kind == "qrels-versions":
        out["qrels_version_ids"] = _qrels_versions(session, campaign, out.get("qrels_version_ids"))
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


def run_analysis(session: Session, job_id: int, progress: Progress = lambda _: None) -> AnalysisJob:
    """Compute a queued analysis and store its result (the job row is written only at the end)."""
    job = session.get(AnalysisJob, job_id)
    if job is None:
        raise NotFound(f"analysis {job_id} not found")
    campaign = session.get(Campaign, job.campaign_id)
    evaluation = session.get(Evaluation, job.params["evaluation_id"])
    assert campaign is not None and evaluation is not None
    params = parse_params(job.kind, {k: v for k, v in job.params.items() if k != "evaluation_id"})
    table = score_table(session, evaluation)
    progress(0.01)
    reporter = Reporter(progress)
    if job.kind in NEEDS_QRELS:
        result = _qrels_analysis(session, campaign, evaluation, table, job.kind, params, reporter)
    elif job.kind == "label-noise":
        result = _label_noise(session, campaign, table, params, reporter, evaluation.qrels_version_id)
    elif job.kind in QRELS_READERS:
        result = _qrels_reader(session, campaign, evaluation, table, job.kind, params, reporter)
    elif job.kind in TABLE_READERS:
        result = _table_reader(campaign, table, job.kind, params, reporter)
    else:
        result = _score_analysis(campaign, table, job.kind, params, reporter)
    progress(COMPUTED)
    job.result, job.status, job.progress, job.finished_at = json_safe(result), "done", 1.0, datetime.now(UTC)
    session.flush()
    return job


def json_safe(value: object) -> object:
    """The value with NaN and infinities replaced by None (JSONB refuses them)."""
    if isinstance(value, float):
        return value if np.isfinite(value) else None
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value


def _column(table: ScoreTable, measure: str) -> int:
    """Index of a measure of the evaluation, or InvalidInput."""
    if measure not in table.measures:
        raise InvalidInput("unknown measure", [{"field": "params.measure", "message": f"one of {table.measures}"}])
    return table.measures.index(measure)


def _measures(campaign: Campaign, table: ScoreTable, params: Any, all_by_default: bool) -> list[str]:
    """The measures an analysis reads: `measures`, else [`measure`], else all of them but the counts (num_ret,
    num_rel, ...: see measure_agreement) or the default one."""
    if getattr(params, "measures", None):
        return list(params.measures)
    if getattr(params, "measure", None):
        return [params.measure]
    if all_by_default:
        return readable_measures(table.measures) or list(table.measures)
    return [default_measure(campaign, table.measures)]


def _score_analysis(
    campaign: Campaign, table: ScoreTable, kind: str, params: Any, reporter: Reporter
) -> dict[str, object]:
    """Analyses computed from the stored per-topic scores alone (a topic a run lacks scores 0, as in the means)."""
    names = [r.name for r in table.runs]
    measures = _measures(campaign, table, params, all_by_default=kind in ("agreement", "ties"))
    columns = [_column(table, m) for m in measures]
    values = np.nan_to_num(table.values[:, columns, :])
    if kind == "agreement":
        return agreement_result(measures, table.means[:, columns])
    if kind == "ties":
        return ties_result(measures, table.values[:, columns, :])
    if kind == "power":
        return power_result(
            names,
            measures,
            values,
            alpha=params.alpha,
            n_resamples=params.n_resamples,
            seed=params.seed,
            progress=reporter,
        )
    result = stability(values, measures, trials=params.trials, seed=params.seed, sizes=params.sizes, progress=reporter)
    return result.to_dict()


TABLE_READERS = ("swap-rate", "type-significance", "run-vs-median", "efficiency", "moment-effectiveness")
QRELS_READERS = ("judged-fraction", "qrels-versions", "novelty", "strata")


def _table_reader(
    campaign: Campaign, table: ScoreTable, kind: str, params: Any, reporter: Reporter
) -> dict[str, object]:
    """The campaign analyses read off the stored scores (and the runs' metadata)."""
    names = [r.name for r in table.runs]
    if kind == "moment-effectiveness":
        measures = list(params.measures or table.measures)
        columns = [_column(table, m) for m in measures]
        return moment_effectiveness(names, measures, table.means[:, columns], sort_by=params.sort_by).to_dict()
    measure = params.measure or default_measure(campaign, table.measures)
    column = _column(table, measure)
    values = table.values[:, column, :]
    if kind == "swap-rate":
        return swap_rates(
            values,
            names,
            measure=measure,
            sizes=params.sizes,
            trials=params.trials,
            seed=params.seed,
            bin_width=params.bin_width,
            relative=params.relative,
            threshold=params.threshold,
            min_comparisons=params.min_comparisons,
            aggregate=aggregate_of(measure),
            progress=reporter,
        ).to_dict()
    if kind == "type-significance":
        result = significance_by_type(
            names,
            [getattr(r, params.by) for r in table.runs],
            values,
            method=params.method,
            top=params.top,
            alpha=params.alpha,
            n_resamples=params.n_resamples,
            seed=params.seed,
            aggregate=aggregate_of(measure),
            progress=reporter,
        )
        return {"measure": measure, "by": params.by, **result.to_dict()}
    if kind == "run-vs-median":
        return topic_comparison(names, table.topics, values, measure=measure).to_dict()
    seconds = np.array([mean_seconds(r.elapsed_seconds) for r in table.runs], dtype=np.float64)
    return score_vs_time(names, table.means[:, column], seconds, measure=measure).to_dict()


def _qrels_reader(
    session: Session,
    campaign: Campaign,
    evaluation: Evaluation,
    table: ScoreTable,
    kind: str,
    params: Any,
    reporter: Reporter,
) -> dict[str, object]:
    """The campaign analyses that read the evaluation's qrels (and the runs, re-read from their uploads)."""
    version, qrels = evaluation_qrels(session, evaluation)
    if kind == "strata":
        return {"qrels_label": version.label, **stratum_summary(qrels).to_dict()}
    runs = list(table.runs)
    names = [r.name for r in runs]
    prepared = prepare_runs(load_runs(session, [r.id for r in runs]), campaign.max_results, names=names)
    reporter(0.0)
    if kind == "judged-fraction":
        depths = params.depths
        return judged_fraction(qrels, prepared, depths=depths, max_results=campaign.max_results).to_dict()
    if kind == "novelty":
        teams = [table.teams[r.team_id] for r in runs]
        return unique_relevant(qrels, prepared, teams, max_results=campaign.max_results).to_dict()
    versions = [session.get(QrelsVersion, i) for i in params.qrels_version_ids]
    loaded = []
    for k, other in enumerate(versions):
        assert other is not None
        loaded.append(qrels if other.id == version.id else load_qrels(session, other))
        reporter(0.5 * (k + 1) / len(versions))
    measure = params.measure or ("xinfAP" if all(q.stratified for q in loaded) else "AP")
    labels = [v.label for v in versions]  # type: ignore[union-attr]
    result = compare_qrels(labels, loaded, prepared, measure=measure, progress=Reporter(reporter, 0.5, 1.0))
    return {**result.to_dict(), "qrels_version_ids": list(params.qrels_version_ids)}


@dataclass(frozen=True)
class PoolFacts:
    """Which runs built the pool behind a qrels version, and its depth, with where each came from."""

    pooled: list[str]
    pooled_from: str  # pool | params | priority 1
    depth: int | None
    depth_source: str  # pool | given | inferred


def pool_facts(
    session: Session, version: QrelsVersion, runs: Sequence[Run], pooled_runs: list[str] | None, depth: int | None
) -> PoolFacts:
    """The pool's runs and depth: stored for qrels cut from a pool; for imported qrels the runs given (else the
    priority-1 runs) and the depth given (else None: inferred from the qrels)."""
    pool = session.get(Pool, version.pool_id) if version.pool_id is not None else None
    if pool is not None:
        ids = set(session.scalars(select(PoolRun.run_id).where(PoolRun.pool_id == pool.id)))
        stored = int(pool.params["strata"][-1][1])
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


def _qrels_analysis(
    session: Session,
    campaign: Campaign,
    evaluation: Evaluation,
    table: ScoreTable,
    kind: str,
    params: Any,
    reporter: Reporter,
) -> dict[str, object]:
    """Pool-depth and leave-out analyses: re-evaluation under reduced qrels of the evaluation's qrels version."""
    version, qrels = evaluation_qrels(session, evaluation)
    runs = list(table.runs)
    names = [r.name for r in runs]
    prepared = prepare_runs(load_runs(session, [r.id for r in runs]), campaign.max_results, names=names)
    measure = params.measure or ("xinfAP" if qrels.stratified else "AP")
    facts = pool_facts(session, version, runs, params.pooled_runs, getattr(params, "depth", None))  # type: ignore[arg-type]
    reporter(0.0)
    provenance = {"pooled_from": facts.pooled_from, "pool_depth_source": facts.depth_source}
    index = index_lines(prepared, qrels)
    mask = run_mask(prepared.names, facts.pooled)
    source = "pool" if facts.depth_source == "pool" else "given"
    pool = pool_depths(index, mask, facts.depth, given_source=source)
    if kind == "pool-depth":
        deepest = int(pool.depths.max(initial=0))
        max_depth = params.max_depth or min(100, max(deepest, 1))
        cut = pool_depth(
            qrels,
            prepared,
            measure=measure,
            pooled=facts.pooled,
            max_depth=max_depth,
            max_results=campaign.max_results,
            outside=params.outside,
            pool=pool,
            progress=reporter,
        )
        return {**cut.to_dict(), **provenance, "pool_depth": deepest}
    units = {"run": names, "team": [table.teams[r.team_id] for r in runs], "type": [r.system_type for r in runs]}
    result = leave_out(
        qrels,
        prepared,
        units=units[params.by],
        by=params.by,
        measure=measure,
        pooled=facts.pooled,
        depth=pool,
        max_results=campaign.max_results,
        progress=reporter,
    )
    return {**result.to_dict(), **provenance}


def _label_noise(
    session: Session, campaign: Campaign, table: ScoreTable, params: Any, reporter: Reporter, version: int | None
) -> dict[str, object]:
    """The AxIoU paper's label-noise study on the evaluation's ground truth (uploaded, or a cut version) and runs."""
    specs = [parse_moment_measure(m) for m in params.measures]
    segments = ground_truth_segments(load_ground_truth(session, campaign.id, version))
    ranked = rank_moments(segments, load_moment_runs(session, [r.id for r in table.runs]), max(s.k for s in specs))
    reporter(0.0)
    result = label_noise(
        segments,
        ranked,
        params.measures,
        runs=[r.name for r in table.runs],
        sigmas=params.sigmas,
        trials=params.trials,
        raters=params.raters,
        seed=params.seed,
        length=params.length,
        progress=reporter,
    )
    return result.to_dict()


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
