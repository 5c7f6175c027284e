"""Status bookkeeping shared by background jobs (evaluations and analyses)."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy.orm import Session

from app.storage.models import AnalysisJob, Evaluation

JobModel = type[Evaluation] | type[AnalysisJob]


def set_progress(session: Session, model: JobModel, job_id: int, value: float) -> None:
    """Mark a job running at `value` progress (0..1)."""
    job = session.get(model, job_id)
    if job is not None:
        job.status, job.progress = "running", value
        session.flush()


def mark_failed(session: Session, model: JobModel, job_id: int, reason: str) -> None:
    """Record that a job failed, and why."""
    job = session.get(model, job_id)
    if job is not None:
        job.status, job.error, job.finished_at = "failed", reason, datetime.now(UTC)
        session.flush()
