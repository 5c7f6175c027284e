"""Running long use cases after the response: each step commits in its own session so progress is visible."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.services import analyses, evaluations, jobs
from app.storage.database import session_scope
from app.storage.models import AnalysisJob, Evaluation

log = logging.getLogger("trecpool.jobs")


def _run_job(
    factory: sessionmaker[Session],
    job_id: int,
    work: Callable[[Session, int, Callable[[float], None]], Any],
    model: jobs.JobModel,
) -> None:
    """Run `work` for a queued job; progress and failure are committed in sessions of their own."""

    def report(value: float) -> None:
        with session_scope(factory) as session:
            jobs.set_progress(session, model, job_id, value)

    try:
        report(0.0)
        with session_scope(factory) as session:
            work(session, job_id, report)
    except Exception as exc:  # noqa: BLE001 - recorded on the job for the organiser to see
        log.exception("job %s failed", job_id)
        with session_scope(factory) as session:
            jobs.mark_failed(session, model, job_id, f"{type(exc).__name__}: {exc}")


def run_evaluation_job(factory: sessionmaker[Session], evaluation_id: int) -> None:
    """Run a queued evaluation."""
    _run_job(factory, evaluation_id, evaluations.run_evaluation, Evaluation)


def run_analysis_job(factory: sessionmaker[Session], job_id: int) -> None:
    """Run a queued analysis."""
    _run_job(factory, job_id, analyses.run_analysis, AnalysisJob)
