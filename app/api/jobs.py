"""Running long use cases after the response: each step commits in its own session so progress is visible."""

from __future__ import annotations

import logging

from sqlalchemy.orm import Session, sessionmaker

from app.services import evaluations
from app.storage.database import session_scope

log = logging.getLogger("trecpool.jobs")


def run_evaluation_job(factory: sessionmaker[Session], evaluation_id: int) -> None:
    """Run a queued evaluation; a failure is recorded on the evaluation, not raised."""

    def report(value: float) -> None:
        with session_scope(factory) as session:
            evaluations.set_progress(session, evaluation_id, value)

    try:
        report(0.0)
        with session_scope(factory) as session:
            evaluations.run_evaluation(session, evaluation_id, report)
    except Exception as exc:  # noqa: BLE001 - recorded for the organiser to see
        log.exception("evaluation %s failed", evaluation_id)
        with session_scope(factory) as session:
            evaluations.mark_failed(session, evaluation_id, f"{type(exc).__name__}: {exc}")
