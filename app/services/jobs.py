"""Durable background jobs (evaluations and analyses): queueing, cancelling and the status bookkeeping of a run.

A job is a row (evaluations or analysis_jobs: status, progress, attempts, heartbeat) plus a procrastinate job in the
same database that a worker picks up. Both are written in the caller's transaction, so a committed row is queued.
Statuses: queued -> running -> done | failed | cancelled; a retried job goes back to queued.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from procrastinate import jobs as queue_jobs
from procrastinate.manager import JobManager
from procrastinate.sync_psycopg_connector import SyncPsycopgConnector
from sqlalchemy import CursorResult, delete, func, select, text, update
from sqlalchemy.orm import Session

from app.services.auth import Principal
from app.services.campaigns import get_organised
from app.services.errors import Conflict, NotFound
from app.storage.models import AnalysisJob, Evaluation, EvaluationBlockParts

JobModel = type[Evaluation] | type[AnalysisJob]
Job = Evaluation | AnalysisJob
AnyJob = TypeVar("AnyJob", Evaluation, AnalysisJob)

QUEUE = "trecpool"
TASKS: dict[str, JobModel] = {"trecpool.evaluation": Evaluation, "trecpool.analysis": AnalysisJob}
BLOCK_TASK = "trecpool.evaluation_block"  # one block of runs of a fanned-out evaluation (its row: the evaluation's)
FINAL = ("done", "failed", "cancelled")
CANCELLED = "cancelled on request"


def task_name(model: JobModel) -> str:
    """The queue's task name for jobs stored in `model`."""
    return next(name for name, m in TASKS.items() if m is model)


def _manager() -> JobManager:
    """A procrastinate job manager for queries run on a connection the caller passes (it opens no pool)."""
    return JobManager(SyncPsycopgConnector())


def _driver_connection(session: Session) -> Any:
    """The psycopg connection under the session's current transaction."""
    return session.connection().connection.driver_connection


def enqueue(session: Session, job: Job, *, campaign_concurrency: int) -> None:
    """Queue a job row for the workers, in the session's transaction.

    At most `campaign_concurrency` jobs of one campaign run at once: each job takes one of that many procrastinate
    locks of its campaign (jobs sharing a lock run one after the other, in order).
    """
    session.flush()
    lock = f"campaign-{job.campaign_id}-{job.id % campaign_concurrency}"
    deferred = _manager().defer_job(
        queue_jobs.Job(
            queue=QUEUE, lock=lock, queueing_lock=None, task_name=task_name(type(job)), task_kwargs={"job_id": job.id}
        ),
        connection=_driver_connection(session),
    )
    job.queue_job_id = deferred.id
    session.flush()


def enqueue_blocks(session: Session, evaluation: Evaluation, blocks: list[list[int]]) -> None:
    """Queue one task per block of runs of a running evaluation, in the session's transaction (committed with the
    job that planned them). Blocks take no campaign lock: any free worker runs one."""
    session.flush()
    manager, connection = _manager(), _driver_connection(session)
    for index, run_ids in enumerate(blocks):
        kwargs: dict[str, Any] = {"job_id": evaluation.id, "block": index, "run_ids": run_ids}
        manager.defer_job(
            queue_jobs.Job(
                queue=QUEUE,
                lock=None,
                queueing_lock=None,
                task_name=BLOCK_TASK,
                task_kwargs=kwargs,
            ),
            connection=connection,
        )


def recover_block(session: Session, evaluation_id: int, attempts: int, max_attempts: int) -> bool:
    """Settle a block whose worker died after `attempts` tries: True to run it again, False when its evaluation
    is finished (now: cancelled if asked, failed on the last attempt, saying so; or before)."""
    evaluation = session.get(Evaluation, evaluation_id, with_for_update=True)
    if evaluation is None or evaluation.status in FINAL:
        return False
    if evaluation.cancel_requested:
        _finish(evaluation, "cancelled", CANCELLED)
    elif attempts >= max_attempts:
        _finish(
            evaluation,
            "failed",
            f"the worker running one of its blocks stopped responding, on attempt {attempts} of {max_attempts}",
        )
    else:
        return True
    drop_block_parts(session, evaluation_id)
    session.flush()
    return False


def _locked(session: Session, model: JobModel, job_id: int) -> Job | None:
    """The job's row, locked for update (None when there is none)."""
    if model is Evaluation:
        return session.get(Evaluation, job_id, with_for_update=True)
    return session.get(AnalysisJob, job_id, with_for_update=True)


def cancel(session: Session, principal: Principal, model: type[AnyJob], job_id: int) -> AnyJob:
    """Cancel a job: a queued one at once, a running one at its next progress report (Conflict once finished)."""
    job = session.get(model, job_id, with_for_update=True)
    if job is None:
        raise NotFound(f"{_noun(model)} {job_id} not found")
    get_organised(session, principal, job.campaign_id)
    if job.status == "cancelled":
        return job
    if job.status in FINAL:
        raise Conflict(f"{_noun(model)} {job_id} is {job.status}: there is nothing to cancel")
    job.cancel_requested = True
    if job.status == "queued" and job.queue_job_id is not None:
        taken_off = _manager().cancel_job_by_id(job.queue_job_id, connection=_driver_connection(session))
        if taken_off:  # still waiting in the queue: no worker will see it
            _finish(job, "cancelled", CANCELLED)
    session.flush()
    return job


def _noun(model: JobModel) -> str:
    """How messages name a job of `model`."""
    return "evaluation" if model is Evaluation else "analysis"


def _finish(job: Job, status: str, reason: str | None) -> None:
    """Put a job in a final state."""
    job.status, job.error, job.finished_at = status, reason, datetime.now(UTC)


@dataclass(frozen=True)
class Claim:
    """A job a worker has started: which try this is."""

    attempt: int
    campaign_id: int


def claim(session: Session, model: JobModel, job_id: int, worker: str) -> Claim | None:
    """Mark a job running on `worker` and count the attempt; None when it is gone, finished or cancelled."""
    job = _locked(session, model, job_id)
    if job is None or job.status in FINAL:
        return None
    if job.cancel_requested:
        _finish(job, "cancelled", CANCELLED)
        session.flush()
        return None
    job.status, job.progress, job.error = "running", 0.0, None
    job.attempts += 1
    job.worker = worker
    job.started_at = job.heartbeat_at = datetime.now(UTC)
    session.flush()
    return Claim(attempt=job.attempts, campaign_id=job.campaign_id)


def set_progress(session: Session, model: JobModel, job_id: int, value: float) -> bool:
    """Record a running job's progress (0..1) and heartbeat; True when its cancellation was asked for."""
    row = session.execute(
        update(model)
        .where(model.id == job_id, model.status == "running")
        .values(progress=value, heartbeat_at=func.now())
        .returning(model.cancel_requested)
    ).first()
    return bool(row and row[0])


def cancel_requested(session: Session, model: JobModel, job_id: int) -> bool:
    """Whether an organiser asked to cancel the job."""
    return bool(session.scalar(select(model.cancel_requested).where(model.id == job_id)))


def beat(session: Session, model: JobModel, job_id: int) -> None:
    """Record that a running job's worker is alive."""
    session.execute(update(model).where(model.id == job_id, model.status == "running").values(heartbeat_at=func.now()))


def mark_failed(session: Session, model: JobModel, job_id: int, reason: str) -> None:
    """Record that a job failed, and why (a job already finished keeps its outcome)."""
    _end(session, model, job_id, "failed", reason)


def mark_cancelled(session: Session, model: JobModel, job_id: int) -> None:
    """Record that a job stopped because its cancellation was asked for."""
    _end(session, model, job_id, "cancelled", CANCELLED)


def _end(session: Session, model: JobModel, job_id: int, status: str, reason: str) -> None:
    """Put an unfinished job in a final state (an evaluation's fanned-out blocks' parts, no longer needed, gone)."""
    session.execute(
        update(model)
        .where(model.id == job_id, model.status.not_in(FINAL))
        .values(status=status, error=reason[:2000], finished_at=func.now())
    )
    if model is Evaluation:
        drop_block_parts(session, job_id)


def drop_block_parts(session: Session, evaluation_id: int) -> None:
    """Delete what an evaluation's fanned-out blocks stored for its reduce (`evaluation_block_parts`)."""
    session.execute(delete(EvaluationBlockParts).where(EvaluationBlockParts.evaluation_id == evaluation_id))


def requeue(session: Session, model: JobModel, job_id: int, reason: str) -> None:
    """Put an unfinished job back in the queued state to be tried again, noting why."""
    session.execute(
        update(model)
        .where(model.id == job_id, model.status.not_in(FINAL))
        .values(status="queued", progress=0.0, error=f"will be tried again: {reason}"[:2000])
    )


def recover(session: Session, model: JobModel, job_id: int, max_attempts: int) -> bool:
    """Settle a job whose worker died: True to run it again, False when it is finished (now or before)."""
    job = _locked(session, model, job_id)
    if job is None or job.status in FINAL:
        return False
    if job.cancel_requested:
        _finish(job, "cancelled", CANCELLED)
    elif job.attempts >= max_attempts:
        _finish(
            job,
            "failed",
            f"the worker running it ({job.worker or 'unknown'}) stopped responding, "
            f"on attempt {job.attempts} of {max_attempts}",
        )
    else:
        job.status, job.progress = "queued", 0.0
        job.error = f"will be tried again: the worker running it ({job.worker or 'unknown'}) stopped responding"
        session.flush()
        return True
    session.flush()
    return False


def fail_lost(session: Session, stall_seconds: float) -> int:
    """Fail unfinished jobs the queue no longer runs (its job failed or was cancelled outside the API, or vanished,
    e.g. when the runner could not record the end); returns how many.

    Only rows silent for `stall_seconds` are touched, so a job being queued or started right now is left alone.
    """
    cutoff = datetime.now(UTC) - timedelta(seconds=stall_seconds)
    count = 0
    for model in TASKS.values():
        result = session.execute(
            text(
                f"UPDATE {model.__tablename__} AS j SET status = 'failed', finished_at = now(), "
                "error = 'lost: the job queue no longer holds it (status ' || coalesce(q.status::text, 'none') || ')' "
                f"FROM {model.__tablename__} AS o LEFT JOIN procrastinate_jobs AS q ON q.id = o.queue_job_id "
                "WHERE j.id = o.id AND o.status IN ('queued', 'running') "
                "AND coalesce(o.heartbeat_at, o.created_at) < :cutoff "
                "AND (q.id IS NULL OR q.status IN ('failed', 'cancelled', 'aborted'))"
            ),
            {"cutoff": cutoff},
        )
        count += result.rowcount if isinstance(result, CursorResult) else 0
    return count
