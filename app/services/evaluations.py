"""Evaluation jobs: every run x topic x measure of a campaign against one qrels version (or the moment ground truth)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy import delete, or_, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from app.evaluation.errors import FormatError, MeasureError
from app.evaluation.measures.evaluate import evaluate
from app.evaluation.measures.registry import default_measures, resolve
from app.evaluation.moments import (
    DEFAULT_MOMENT_MEASURES,
    MomentGroundTruth,
    evaluate_moments,
    parse_moment_ground_truth,
    parse_moment_measure,
)
from app.evaluation.records import Qrels
from app.services import jobs, score_intervals, score_store
from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.errors import Conflict, InvalidInput, NotFound
from app.services.held_blocks import HeldBlock
from app.services.qrels import COMBINED, Verified, topic_order, verified_items
from app.services.qrels_cache import cached_qrels
from app.services.run_arrays import load_moment_runs, load_runs
from app.services.run_blocks import (
    BYTES_PER_RUN_LINE,
    DEFAULT_MEMORY_MB,
    SAMPLED_BYTES_PER_RUN_LINE,
    plan_blocks,
    release_freed,
    split_blocks,
)
from app.services.topics import topic_ids_by_number
from app.services.validation import from_format_error, invalid_file
from app.storage.bulk import copy_rows
from app.storage.models import (
    Campaign,
    CampaignStatus,
    Evaluation,
    EvaluationBlockParts,
    GroundTruthSegment,
    MomentTruthSegment,
    Pool,
    PoolRun,
    QrelsVersion,
    Run,
    RunMean,
    Score,
    ScoreArray,
    TaskKind,
    Topic,
)

ALL = "all"
Progress = Callable[[float], None]
FanOut = Callable[[list[list[int]]], None]  # queues one task per block of run ids
BLOCKS = "blocks"  # a fanned-out evaluation's measures[BLOCKS]: {"n": blocks, "done": how many are stored}
HELD = "held"  # ... and HELD: true when its blocks store their parts for the step over every run (`reduce_held`)
# A finished evaluation moves a campaign on only from these (judged) steps; draft, open and closed campaigns keep
# their status, so evaluating never shuts submissions, and evaluated or published ones stay as they are.
EVALUATED_FROM = (CampaignStatus.pooled, CampaignStatus.judging)


def campaign_measures(campaign: Campaign, qrels: QrelsVersion | None) -> list[str]:
    """The measures that fit a campaign: sample_eval's for stratified qrels, trec_eval's for others, moment ones."""
    if campaign.task_kind is TaskKind.moments:
        return list(DEFAULT_MOMENT_MEASURES)
    return default_measures(stratified=qrels is not None and qrels.kind == "sample_eval")


def _check_measures(campaign: Campaign, measures: Sequence[str]) -> None:
    """InvalidInput naming each unknown measure."""
    check = parse_moment_measure if campaign.task_kind is TaskKind.moments else resolve
    errors = []
    for name in measures:
        try:
            check(name)
        except MeasureError as exc:
            errors.append({"field": "measures", "message": str(exc)})
    if errors:
        raise InvalidInput("unknown measures", errors)


def start_evaluation(
    session: Session,
    principal: Principal,
    campaign_id: int,
    *,
    qrels_version_id: int | None = None,
    measures: Sequence[str] | None = None,
) -> Evaluation:
    """Queue an evaluation of every run: shots against a qrels version (the newest by default), moments against
    a moment ground-truth version (given; else the uploaded ground truth; else the newest cut version)."""
    campaign = get_organised(session, principal, campaign_id)
    qrels = None
    if campaign.task_kind is TaskKind.shots:
        query = select(QrelsVersion).where(QrelsVersion.campaign_id == campaign_id)
        if qrels_version_id is not None:
            query = query.where(QrelsVersion.id == qrels_version_id)
        qrels = session.scalar(query.order_by(QrelsVersion.id.desc()).limit(1))
        if qrels is None:
            raise NotFound("no qrels version to evaluate against: cut one from the pool or import one")
    else:
        qrels = _moment_truth_version(session, campaign_id, qrels_version_id)
    names = list(measures) if measures else campaign_measures(campaign, qrels)
    _check_measures(campaign, names)
    evaluation = Evaluation(
        campaign_id=campaign_id,
        qrels_version_id=qrels.id if qrels else None,
        status="queued",
        progress=0.0,
        measures={"names": names},
    )
    session.add(evaluation)
    session.flush()
    return evaluation


def _moment_truth_version(session: Session, campaign_id: int, version_id: int | None) -> QrelsVersion | None:
    """The moment ground truth to evaluate against: the given version (cut from assessors' marks), else the uploaded
    segments (None), else the newest cut version."""
    versions = select(QrelsVersion).where(QrelsVersion.campaign_id == campaign_id, QrelsVersion.kind == "moments")
    if version_id is not None:
        version = session.scalar(versions.where(QrelsVersion.id == version_id))
        if version is None:
            raise NotFound(f"no moment ground-truth version {version_id} in this campaign")
        return version
    if session.scalar(select(GroundTruthSegment.id).join(Topic).where(Topic.campaign_id == campaign_id).limit(1)):
        return None
    version = session.scalar(versions.order_by(QrelsVersion.id.desc()).limit(1))
    if version is None:
        raise Conflict("this moment campaign has no ground truth yet: upload it, or cut it from assessors' marks")
    return version


def run_evaluation(
    session: Session,
    evaluation_id: int,
    progress: Progress = lambda _: None,
    *,
    memory_mb: float = DEFAULT_MEMORY_MB,
    fan_out: FanOut | None = None,
) -> Evaluation:
    """Evaluate and store every number of a queued evaluation and mark it done.

    Runs are read, evaluated and their scores stored a block at a time (`plan_evaluation`: blocks of about
    `memory_mb` of run data), then `reduce_evaluation` computes each run's interval from the stored scores (sampled,
    incomplete or combined judgements: `evaluate_in_job`, whose blocks keep parts for a step over every run). With
    `fan_out` and more than one block, the blocks are handed to it instead (one queue task each, `run_block`) and
    the evaluation stays running until the last block reduces it. The evaluation row is written only at the end, so
    `progress` may update it from another session meanwhile.
    """
    evaluation = session.get(Evaluation, evaluation_id)
    if evaluation is None:
        raise NotFound(f"evaluation {evaluation_id} not found")
    plan = plan_evaluation(session, evaluation, memory_mb)
    progress(0.1)
    if fan_out is not None and len(plan.blocks) > 1:
        marker: dict[str, object] = {"n": len(plan.blocks), "done": 0}
        if plan.held:
            marker[HELD] = True
        evaluation.measures = {**evaluation.measures, BLOCKS: marker}
        session.flush()
        fan_out(plan.blocks)
        return evaluation
    if plan.held:
        return evaluate_in_job(session, evaluation, plan.blocks, progress)
    campaign = session.get(Campaign, evaluation.campaign_id)
    assert campaign is not None
    qrels = None  # moment blocks read the ground truth; shot blocks share one parsed qrels
    if campaign.task_kind is not TaskKind.moments:
        version = session.get(QrelsVersion, evaluation.qrels_version_id)
        assert version is not None
        qrels = cached_qrels(session, version)
    for index, block in enumerate(plan.blocks):
        evaluate_block(session, evaluation, block, _share(progress, index, len(plan.blocks)), qrels=qrels)
    return reduce_evaluation(session, evaluation, plan.run_ids, plan.blocks)


def _share(progress: Progress, index: int, n_blocks: int) -> Progress:
    """Progress of block `index` of `n_blocks` (its own 0..1) as the job's, 0.1 to 0.8 over the blocks."""
    return lambda step: progress(0.1 + 0.7 * (index + step) / n_blocks)


@dataclass(frozen=True)
class Plan:
    """An evaluation's runs (in id order) and the blocks it reads them in; `held`: the judgements are a sample,
    incomplete or a model's corrected by people, so each block keeps its runs' sampling parts (`HeldBlock`) for a
    step over every run at the end (`reduce_held`: the sampling variances and estimates)."""

    run_ids: list[int]
    blocks: list[list[int]]
    held: bool


def plan_evaluation(session: Session, evaluation: Evaluation, memory_mb: float) -> Plan:
    """The runs an evaluation scores and its blocks of runs within the memory budget (`Plan`)."""
    campaign = session.get(Campaign, evaluation.campaign_id)
    assert campaign is not None
    runs = evaluated_runs(session, campaign.id, evaluation.qrels_version_id)
    run_ids = [r.id for r in runs]
    held = False  # moment measures score each run on its own: moment campaigns are evaluated in blocks too
    if campaign.task_kind is not TaskKind.moments:
        version = session.get(QrelsVersion, evaluation.qrels_version_id)
        assert version is not None
        plan = score_intervals.design(session, version, cached_qrels(session, version))
        held = version.judges == COMBINED or plan.sampled or plan.depth_incomplete
    per_line = SAMPLED_BYTES_PER_RUN_LINE if held else BYTES_PER_RUN_LINE
    return Plan(run_ids, plan_blocks(runs, memory_mb, per_line), held)


def evaluate_block(
    session: Session,
    evaluation: Evaluation,
    run_ids: Sequence[int],
    progress: Progress = lambda _: None,
    *,
    qrels: Qrels | None = None,
) -> None:
    """Evaluate one block of runs and store its scores, replacing any the block stored before (a retried block
    writes the same rows again). `progress` gets the block's share done (0..1); `qrels`: the evaluation's, if read."""
    store_block(session, evaluation, run_ids, block_scores(session, evaluation, run_ids, progress, qrels=qrels))


def block_scores(
    session: Session,
    evaluation: Evaluation,
    run_ids: Sequence[int],
    progress: Progress = lambda _: None,
    *,
    qrels: Qrels | None = None,
) -> dict[str, dict[str, dict[str, float]]]:
    """One block of runs' scores, {run id: {measure: {topic: value}}}, computed (not stored): moment runs against
    the evaluation's ground truth, shot runs against `qrels`, the evaluation's, else the process's cached copy of
    its version (`cached_qrels`)."""
    campaign = session.get(Campaign, evaluation.campaign_id)
    assert campaign is not None
    names = list(evaluation.measures["names"])
    if campaign.task_kind is TaskKind.moments:
        moments = _evaluate_moments(session, campaign, run_ids, names, evaluation.qrels_version_id)
        release_freed()
        progress(1.0)
        return moments
    version = session.get(QrelsVersion, evaluation.qrels_version_id)
    assert version is not None
    tables = load_runs(session, run_ids)
    progress(0.4)
    judged = cached_qrels(session, version) if qrels is None else qrels
    table = evaluate(judged, tables, names, max_results=campaign.max_results, names=[str(r) for r in run_ids]).to_dict()
    del tables
    release_freed()
    progress(1.0)
    return table


def store_block(
    session: Session, evaluation: Evaluation, run_ids: Sequence[int], table: dict[str, dict[str, dict[str, float]]]
) -> bool:
    """Store a block's scores in place of any the block stored before; whether there were any (committed: the
    delete waits for a transaction that stored them to end), found through the runs' index whatever the blocks."""
    stale = delete(ScoreArray).where(ScoreArray.evaluation_id == evaluation.id, ScoreArray.run_id.in_(list(run_ids)))
    replaced = session.execute(stale.returning(ScoreArray.run_id)).first() is not None
    score_store.write_table(session, evaluation.id, run_ids, table)
    return replaced


def run_block(session: Session, evaluation_id: int, index: int, run_ids: Sequence[int]) -> bool:
    """One queued block (number `index`) of a fanned-out evaluation: its scores stored (and, for sampled,
    incomplete or combined judgements, its `HeldBlock` under its index), then the block counted done under the
    evaluation's row lock unless it replaced scores of its own (its worker died after committing them with the
    count: the block counts once); the last block reduces the evaluation. False (nothing done) unless it is
    running. The count is one number however many blocks, so each block's work on the row is the same."""
    evaluation = session.get(Evaluation, evaluation_id)
    if evaluation is None or evaluation.status != "running":
        return False
    sampling = _Sampling.of(session, evaluation) if evaluation.measures[BLOCKS].get(HELD) else None
    if sampling is not None:
        kept, counted = held_block(session, evaluation, run_ids, lambda _: None, sampling=sampling)
        data = kept.to_bytes()
        upsert = pg_insert(EvaluationBlockParts).values(evaluation_id=evaluation_id, block=index, data=data)
        session.execute(upsert.on_conflict_do_update(index_elements=["evaluation_id", "block"], set_={"data": data}))
        del kept
    else:
        counted = store_block(session, evaluation, run_ids, block_scores(session, evaluation, run_ids))
    session.flush()
    # blocks count themselves one at a time, seeing each other's; NO KEY UPDATE, as the block's scores hold KEY SHARE
    # on the row (their foreign key) which a plain FOR UPDATE would wait for in every other block: a deadlock
    session.refresh(evaluation, with_for_update={"key_share": True})
    if evaluation.status != "running":  # failed or cancelled meanwhile: its blocks' parts are not needed
        jobs.drop_block_parts(session, evaluation_id)
        return False
    blocks = evaluation.measures[BLOCKS]
    before = blocks["done"]  # a list of indices in an evaluation fanned out before the count
    done = (len(before) if isinstance(before, list) else int(before)) + (0 if counted else 1)
    evaluation.measures = {**evaluation.measures, BLOCKS: {**blocks, "done": done}}
    evaluation.progress = 0.1 + 0.8 * min(done, blocks["n"]) / blocks["n"]
    session.flush()
    if done < blocks["n"]:
        return True
    if sampling is not None:  # every block's parts, in block order: the runs end to end as one process holds them
        stored = select(EvaluationBlockParts.data).where(EvaluationBlockParts.evaluation_id == evaluation_id)
        found = [HeldBlock.from_bytes(data) for data in session.scalars(stored.order_by(EvaluationBlockParts.block))]
        jobs.drop_block_parts(session, evaluation_id)
        reduce_held(session, evaluation, found, sampling=sampling)
    else:
        evaluated = score_store.stored_runs(session, evaluation_id)
        reduce_evaluation(session, evaluation, evaluated, split_blocks([(r, 1) for r in evaluated], len(run_ids)))
    return True


def reduce_evaluation(
    session: Session, evaluation: Evaluation, run_ids: Sequence[int], blocks: Sequence[Sequence[int]]
) -> Evaluation:
    """Each run's means with their intervals (run_means) from its stored scores, a block of runs at a time, and the
    evaluation marked done: the numbers `evaluate_in_job` stores from the same scores in memory."""
    campaign = session.get(Campaign, evaluation.campaign_id)
    assert campaign is not None
    names = list(evaluation.measures["names"])
    canonical = parse_moment_measure if campaign.task_kind is TaskKind.moments else resolve
    order = {canonical(name).name: i for i, name in enumerate(names)}
    found_topics = select(Score.topic).where(Score.evaluation_id == evaluation.id, Score.topic != ALL).distinct()
    topics = topic_order(set(session.scalars(found_topics)))
    session.execute(delete(RunMean).where(RunMean.evaluation_id == evaluation.id))
    info = score_intervals.compute(np.zeros((0, len(names), len(topics))), names, {}).info
    for block in blocks:
        rows = session.execute(
            select(Score.run_id, Score.measure, Score.topic, Score.value).where(
                Score.evaluation_id == evaluation.id, Score.run_id.in_(list(block))
            )
        ).all()
        table: dict[str, dict[str, dict[str, float]]] = {}
        for run_id, measure, topic, value in sorted(rows, key=lambda row: (order.get(row[1], len(order)), row[1])):
            table.setdefault(str(run_id), {}).setdefault(measure, {})[topic] = value
        keys = [str(r) for r in block]
        found = score_intervals.compute(score_intervals.score_arrays(table, keys, names, topics), names, {})
        _store_means(session, evaluation, block, table, found, names, {})
    return _finish(session, evaluation, campaign, info)


@dataclass(frozen=True)
class _Sampling:
    """What every block of a sampled, incomplete or combined evaluation shares: its campaign, measures, qrels, their
    sampling design and a combined version's verified items (None for others)."""

    campaign: Campaign
    names: list[str]
    qrels: Qrels
    plan: score_intervals.Design
    verified: Verified | None

    @classmethod
    def of(cls, session: Session, evaluation: Evaluation) -> _Sampling:
        """The evaluation's (its qrels parsed once per process: `cached_qrels`)."""
        campaign = session.get(Campaign, evaluation.campaign_id)
        version = session.get(QrelsVersion, evaluation.qrels_version_id)
        assert campaign is not None and version is not None
        qrels = cached_qrels(session, version)
        plan = score_intervals.design(session, version, qrels)
        verified = verified_items(session, version) if version.judges == COMBINED else None
        return cls(campaign, list(evaluation.measures["names"]), qrels, plan, verified)


def evaluate_in_job(
    session: Session,
    evaluation: Evaluation,
    blocks: Sequence[Sequence[int]],
    progress: Progress = lambda _: None,
) -> Evaluation:
    """Sampled, incomplete or combined judgements, a block of runs at a time (`Plan.held`): each block's scores
    (a combined version's estimates in place) stored, and its runs' sampling parts (`score_intervals.SamplingParts`)
    and labelling standard errors kept, all a run's own (`held_block`); then the one step over every run
    (`reduce_held`). The numbers of one block, bit for bit."""
    sampling = _Sampling.of(session, evaluation)
    held = [
        held_block(session, evaluation, block, _share(progress, index, len(blocks)), sampling=sampling)[0]
        for index, block in enumerate(blocks)
    ]
    return reduce_held(session, evaluation, held, sampling=sampling)


def held_block(
    session: Session,
    evaluation: Evaluation,
    run_ids: Sequence[int],
    progress: Progress,
    *,
    sampling: _Sampling,
) -> tuple[HeldBlock, bool]:
    """One block of a sampled, incomplete or combined evaluation: its scores stored (a combined version's estimates
    in place, replacing any the block stored before) and what the step over every run needs of it; whether it
    replaced scores of its own (`store_block`)."""
    campaign, names = sampling.campaign, sampling.names
    keys = [str(r) for r in run_ids]
    tables = load_runs(session, run_ids)
    table = evaluate(sampling.qrels, tables, names, max_results=campaign.max_results, names=keys).to_dict()
    topics = score_intervals.topics_of(table)
    scored = score_intervals.score_arrays(table, keys, names, topics)
    progress(0.4)
    parts = score_intervals.sampling_parts(sampling.plan, tables, keys, campaign.max_results, names, topics)
    estimated = None
    if sampling.verified is not None:  # the table then holds the estimates: they are stored and bootstrapped
        estimated = score_intervals.prediction_powered_scores(
            sampling.verified, tables, keys, campaign.max_results, names, table
        )
    stored = scored if estimated is None else score_intervals.score_arrays(table, keys, names, topics)
    replaced = store_block(session, evaluation, run_ids, table)
    means = {run: {m: {ALL: v[ALL]} for m, v in per.items() if ALL in v} for run, per in table.items()}
    del tables, table
    release_freed()
    progress(1.0)
    return HeldBlock(list(run_ids), topics, scored, stored, means, parts, estimated), replaced


def reduce_held(
    session: Session, evaluation: Evaluation, held: Sequence[HeldBlock], *, sampling: _Sampling
) -> Evaluation:
    """The step over every run of a sampled, incomplete or combined evaluation, from its blocks (in block order):
    the sampling variances (the estimators' jackknife / imputation ratio per topic over every run), each block's
    means with their intervals, and the evaluation marked done."""
    campaign, names, plan = sampling.campaign, sampling.names, sampling.plan
    topics = topic_order({t for kept in held for t in kept.topics})
    session.execute(delete(RunMean).where(RunMean.evaluation_id == evaluation.id))
    info = score_intervals.compute(np.zeros((0, len(names), len(topics))), names, {}).info
    if not held:
        return _finish(session, evaluation, campaign, info)
    scored = np.concatenate([score_intervals.on_topics(kept.scored, kept.topics, topics) for kept in held])
    parts = score_intervals.SamplingParts.joined([kept.parts for kept in held], topics)
    variances = score_intervals.sampling_variances(plan, parts, names, scored)
    del scored
    start = 0
    for kept in held:
        rows = slice(start, start + len(kept.run_ids))
        start = rows.stop
        own = {m: (v[rows], how) for m, (v, how) in variances.items()}
        if kept.estimated is not None:
            own = {**own, **kept.estimated.variances(len(topics))}
        computed = score_intervals.compute(score_intervals.on_topics(kept.stored, kept.topics, topics), names, own)
        info = computed.info
        if kept.estimated is not None:
            info = {**computed.info, "prediction_powered": kept.estimated.info}
        estimators = kept.estimated.estimators if kept.estimated else {}
        _store_means(session, evaluation, kept.run_ids, kept.means, computed, names, estimators)
    return _finish(session, evaluation, campaign, info)


def _finish(session: Session, evaluation: Evaluation, campaign: Campaign, info: dict[str, Any]) -> Evaluation:
    """Mark an evaluation done with how its intervals were made, and move its campaign on."""
    kept = {k: v for k, v in evaluation.measures.items() if k != BLOCKS}
    evaluation.measures = {**kept, "interval": info}  # the row is written at the end only
    evaluation.status, evaluation.progress, evaluation.finished_at = "done", 1.0, datetime.now(UTC)
    if campaign.status in EVALUATED_FROM:
        campaign.status = CampaignStatus.evaluated
    session.flush()
    return evaluation


def load_ground_truth(session: Session, campaign_id: int, version_id: int | None = None) -> MomentGroundTruth:
    """A moment campaign's ground-truth segments as the numeric core's table: a cut version's, or the uploaded."""
    if version_id is not None:
        truth = MomentTruthSegment
        query = select(Topic.number, truth.video_id, truth.start, truth.end).join(Topic, Topic.id == truth.topic_id)
        rows = session.execute(query.where(truth.qrels_version_id == version_id)).all()
    else:
        rows = session.execute(
            select(Topic.number, GroundTruthSegment.video_id, GroundTruthSegment.start, GroundTruthSegment.end)
            .join(Topic, Topic.id == GroundTruthSegment.topic_id)
            .where(Topic.campaign_id == campaign_id)
        ).all()
    columns = list(zip(*rows, strict=True)) if rows else [()] * 4
    return MomentGroundTruth(
        topics=np.array(columns[0], dtype=str),
        videos=np.array(columns[1], dtype=str),
        starts=np.array(columns[2], dtype=np.float64),
        ends=np.array(columns[3], dtype=np.float64),
        lines=np.arange(1, len(rows) + 1),
    )


def _evaluate_moments(
    session: Session, campaign: Campaign, run_ids: Sequence[int], names: Sequence[str], version_id: int | None = None
) -> dict[str, dict[str, dict[str, float]]]:
    """Moment measures of every run against the campaign's ground-truth segments (a cut version's, or uploaded)."""
    tables = load_moment_runs(session, run_ids)
    truth = load_ground_truth(session, campaign.id, version_id)
    return evaluate_moments(truth, tables, names, run_names=[str(r) for r in run_ids])


def _store_means(
    session: Session,
    evaluation: Evaluation,
    run_ids: Sequence[int],
    table: dict[str, dict[str, dict[str, float]]],
    found: score_intervals.RunIntervals,
    names: Sequence[str],
    estimators: Mapping[str, str],
) -> None:
    """COPY each run's means (the 'all' topic) with its interval and estimator (`estimators`, by the table's measure
    name; NULL for plain means) into run_means, which leaderboards read; `found` is indexed like `run_ids`."""
    mean_run, mean_measure, mean_value, mean_estimator = [], [], [], []
    bounds: list[list[float | None]] = [[], [], []]  # ci_low, ci_high, sampling_se
    column = {m: i for i, m in enumerate(names)}
    for r, run_id in enumerate(run_ids):
        for measure, per_topic in table.get(str(run_id), {}).items():
            if ALL in per_topic:
                mean_run.append(run_id)
                mean_measure.append(measure)
                mean_value.append(per_topic[ALL])
                mean_estimator.append(estimators.get(measure))
                m = column.get(measure)
                for cells, array in zip(bounds, (found.low, found.high, found.sampling_se), strict=True):
                    value = float(array[r, m]) if m is not None else math.nan
                    cells.append(value if math.isfinite(value) else None)
    copy_rows(
        session,
        "run_means",
        ("evaluation_id", "run_id", "measure", "value", "ci_low", "ci_high", "sampling_se", "estimator"),
        [
            np.full(len(mean_run), evaluation.id),
            mean_run,
            mean_measure,
            np.array(mean_value, dtype=np.float64),
            *(np.array(cells, dtype=object) for cells in bounds),
            np.array(mean_estimator, dtype=object),
        ],
    )


def get_evaluation(session: Session, principal: Principal, evaluation_id: int) -> Evaluation:
    """An evaluation of a campaign the caller organises."""
    evaluation = session.get(Evaluation, evaluation_id)
    if evaluation is None:
        raise NotFound(f"evaluation {evaluation_id} not found")
    get_organised(session, principal, evaluation.campaign_id)
    return evaluation


def latest_done(session: Session, campaign_id: int) -> Evaluation | None:
    """The newest finished evaluation of a campaign's own (a series pool's evaluations are the series board's)."""
    series_versions = select(QrelsVersion.id).join(Pool, Pool.id == QrelsVersion.pool_id)
    series_versions = series_versions.where(Pool.series_set_id.is_not(None), QrelsVersion.campaign_id == campaign_id)
    return session.scalar(
        select(Evaluation)
        .where(Evaluation.campaign_id == campaign_id, Evaluation.status == "done")
        .where(or_(Evaluation.qrels_version_id.is_(None), Evaluation.qrels_version_id.not_in(series_versions)))
        .order_by(Evaluation.id.desc())
        .limit(1)
    )


def evaluated_runs(session: Session, campaign_id: int, qrels_version_id: int | None) -> list[Run]:
    """The runs an evaluation scores: the campaign's, or for a version cut from a series pool the pool's runs, of
    every campaign of the series it took (services/series.py)."""
    query = select(Run).where(Run.campaign_id == campaign_id)
    if qrels_version_id is not None:
        pool = session.scalar(
            select(Pool)
            .join(QrelsVersion, QrelsVersion.pool_id == Pool.id)
            .where(QrelsVersion.id == qrels_version_id, Pool.series_set_id.is_not(None))
        )
        if pool is not None:
            query = select(Run).join(PoolRun, PoolRun.run_id == Run.id).where(PoolRun.pool_id == pool.id)
    return list(session.scalars(query.order_by(Run.id)))


def replace_ground_truth(
    session: Session, principal: Principal, campaign_id: int, data: bytes, *, max_errors: int
) -> int:
    """Replace a moment campaign's ground-truth segments with an uploaded file; returns the segment count."""
    campaign = get_organised(session, principal, campaign_id)
    if campaign.task_kind is not TaskKind.moments:
        raise InvalidInput(
            "only moment campaigns take ground-truth segments",
            [{"field": "task_kind", "message": "shots campaigns are judged through pools"}],
        )
    try:
        truth = parse_moment_ground_truth(data, max_errors=max_errors, source="ground truth")
    except FormatError as exc:
        raise from_format_error("ground-truth file", exc, max_errors) from None
    topic_ids = topic_ids_by_number(session, campaign_id)
    unknown = [
        (int(line), f"unknown topic {t!r}")
        for t, line in zip(truth.topics.tolist(), truth.lines.tolist(), strict=True)
        if t not in topic_ids
    ]
    if unknown:
        raise invalid_file("ground-truth file", unknown, max_errors)
    session.execute(delete(GroundTruthSegment).where(GroundTruthSegment.topic_id.in_(topic_ids.values())))
    session.add_all(
        GroundTruthSegment(topic_id=topic_ids[t], video_id=v, start=s, end=e)
        for t, v, s, e in zip(
            truth.topics.tolist(), truth.videos.tolist(), truth.starts.tolist(), truth.ends.tolist(), strict=True
        )
    )
    session.flush()
    return len(truth)
