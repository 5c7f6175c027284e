"""Reusability and meta-evaluation analyses of a campaign, run as background jobs on its stored data."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.analyses.label_noise import label_noise
from app.evaluation.analyses.leave_out import leave_out
from app.evaluation.analyses.measure_agreement import agreement_matrix
from app.evaluation.analyses.pool_depth import pool_depth
from app.evaluation.analyses.power import discriminative_power
from app.evaluation.analyses.stability import stability
from app.evaluation.analyses.ties import all_tied_ratio
from app.evaluation.moments import ground_truth_segments, parse_moment_measure, rank_moments
from app.evaluation.prepared_runs import prepare_runs
from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.errors import Conflict, InvalidInput, NotFound
from app.services.evaluations import load_ground_truth
from app.services.leaderboards import ScoreTable, default_measure, finished_evaluation, score_table
from app.services.pools import current_pool
from app.services.qrels import load_qrels
from app.services.run_arrays import load_moment_runs, load_runs
from app.storage.models import AnalysisJob, Campaign, Evaluation, PoolRun, QrelsVersion, TaskKind

Progress = Callable[[float], None]
KINDS = ("pool-depth", "leave-out", "agreement", "stability", "ties", "power", "label-noise")
LABEL_NOISE_MEASURES = ("AxIoU@1", "AxIoU@5", "AxIoU@10", "R@1,0.5", "R@1,0.7", "R@5,0.5", "R@5,0.7")
NEEDS_QRELS = ("pool-depth", "leave-out")
LEAVE_OUT_BY = ("run", "team", "type")


def start_analysis(
    session: Session, principal: Principal, campaign_id: int, kind: str, params: dict[str, object]
) -> AnalysisJob:
    """Queue an analysis of the campaign's newest finished evaluation."""
    campaign = get_organised(session, principal, campaign_id)
    if kind not in KINDS:
        raise InvalidInput("unknown analysis", [{"field": "kind", "message": f"one of {', '.join(KINDS)}"}])
    if kind in NEEDS_QRELS and campaign.task_kind is not TaskKind.shots:
        raise InvalidInput(f"{kind} needs pooled qrels", [{"field": "kind", "message": "for shot campaigns only"}])
    if kind == "label-noise" and campaign.task_kind is not TaskKind.moments:
        raise InvalidInput("label noise perturbs moment ground truth", [{"field": "kind", "message": "moments only"}])
    if kind == "leave-out" and params.get("by", "run") not in LEAVE_OUT_BY:
        raise InvalidInput("unknown unit", [{"field": "params.by", "message": f"one of {', '.join(LEAVE_OUT_BY)}"}])
    evaluation = finished_evaluation(session, campaign_id, None)
    job = AnalysisJob(
        campaign_id=campaign_id,
        kind=kind,
        params={**params, "evaluation_id": evaluation.id},
        status="queued",
        progress=0.0,
    )
    session.add(job)
    session.flush()
    return job


def run_analysis(session: Session, job_id: int, progress: Progress = lambda _: None) -> AnalysisJob:
    """Compute a queued analysis and store its result (the job row is written only at the end)."""
    job = session.get(AnalysisJob, job_id)
    if job is None:
        raise NotFound(f"analysis {job_id} not found")
    campaign = session.get(Campaign, job.campaign_id)
    evaluation = session.get(Evaluation, job.params["evaluation_id"])
    assert campaign is not None and evaluation is not None
    table = score_table(session, evaluation)
    params = dict(job.params)
    measure = str(params.get("measure") or default_measure(campaign, table.measures))
    progress(0.2)
    if job.kind in NEEDS_QRELS:
        result = _qrels_analysis(session, campaign, evaluation, table, job.kind, measure, params)
    elif job.kind == "label-noise":
        result = _label_noise(session, campaign, table, params)
    else:
        result = _score_analysis(table, job.kind, measure, params)
    progress(0.9)
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


def _score_analysis(table: ScoreTable, kind: str, measure: str, params: dict[str, object]) -> dict[str, object]:
    """Analyses computed from the stored per-topic scores alone."""
    values = np.nan_to_num(table.values)  # a topic a run lacks scores 0, as in the means
    names = [r.name for r in table.runs]
    if kind == "agreement":
        measures = list(params.get("measures") or table.measures)  # type: ignore[call-overload]
        columns = [_column(table, m) for m in measures]
        matrix = agreement_matrix(table.means[:, columns])
        return {"measures": measures, "tau_b": matrix.tolist()}
    if kind == "ties":
        return {"ratios": {m: all_tied_ratio(table.values[:, i, :]) for i, m in enumerate(table.measures)}}
    if kind == "power":
        m = _column(table, measure)
        alpha = float(params.get("alpha", 0.05))  # type: ignore[arg-type]
        power = discriminative_power(
            values[:, m, :],
            alpha=alpha,
            n_resamples=int(params.get("n_resamples", 10_000)),
            seed=int(params.get("seed", 0)),
        )  # type: ignore[arg-type]
        return {"measure": measure, "alpha": alpha, "runs": names, "discriminative_power": power}
    measures = list(params.get("measures") or [measure])  # type: ignore[call-overload]
    columns = [_column(table, m) for m in measures]
    result = stability(
        values[:, columns, :],
        measures,
        trials=int(params.get("trials", 200)),  # type: ignore[arg-type]
        seed=int(params.get("seed", 0)),
    )  # type: ignore[arg-type]
    return result.to_dict()


def _qrels_analysis(
    session: Session,
    campaign: Campaign,
    evaluation: Evaluation,
    table: ScoreTable,
    kind: str,
    measure: str,
    params: dict[str, object],
) -> dict[str, object]:
    """Pool-depth and leave-out analyses: re-evaluation under reduced qrels of the evaluation's qrels version."""
    version = session.get(QrelsVersion, evaluation.qrels_version_id)
    assert version is not None
    qrels = load_qrels(session, version)
    runs = table.runs
    names = [r.name for r in runs]
    tables = load_runs(session, [r.id for r in runs])
    pool = current_pool(session, campaign.id)
    pooled_ids = set(session.scalars(select(PoolRun.run_id).where(PoolRun.pool_id == pool.id))) if pool else set()
    pooled = [r.name for r in runs if r.id in pooled_ids] or None
    pool_depth_k = int(pool.params["strata"][-1][1]) if pool else campaign.max_results
    prepared = prepare_runs(tables, campaign.max_results, names=names)
    if kind == "pool-depth":
        max_depth = int(params.get("max_depth", min(100, pool_depth_k)))  # type: ignore[arg-type]
        return pool_depth(
            qrels, prepared, measure=measure, pooled=pooled, max_depth=max_depth, max_results=campaign.max_results
        ).to_dict()
    by = str(params.get("by", "run"))
    units = {"run": names, "team": [table.teams[r.team_id] for r in runs], "type": [r.system_type for r in runs]}[by]
    return leave_out(
        qrels,
        prepared,
        units=units,
        by=by,
        measure=measure,
        pooled=pooled,
        depth=int(params.get("depth", pool_depth_k)),  # type: ignore[arg-type]
        max_results=campaign.max_results,
    ).to_dict()


def _label_noise(
    session: Session, campaign: Campaign, table: ScoreTable, params: dict[str, object]
) -> dict[str, object]:
    """The AxIoU paper's label-noise study on the campaign's ground truth and moment runs."""
    measures = list(params.get("measures") or LABEL_NOISE_MEASURES)  # type: ignore[call-overload]
    specs = [parse_moment_measure(m) for m in measures]
    segments = ground_truth_segments(load_ground_truth(session, campaign.id))
    ranked = rank_moments(segments, load_moment_runs(session, [r.id for r in table.runs]), max(s.k for s in specs))
    options = {k: params[k] for k in ("sigmas", "trials", "raters", "seed", "length") if k in params}
    result = label_noise(segments, ranked, measures, runs=[r.name for r in table.runs], **options)  # type: ignore[arg-type]
    return result.to_dict()


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
