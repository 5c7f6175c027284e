"""Running one queued job in a worker: claim it, beat while it runs, stop it when asked or late, record the end."""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.services import analyses, evaluations, jobs
from app.services.errors import Unavailable
from app.storage.database import session_scope

log = logging.getLogger("trecpool.worker")

Work = Callable[[Session, int, Callable[[float], None]], Any]
WORK: dict[jobs.JobModel, Work] = {
    jobs.Evaluation: evaluations.run_evaluation,
    jobs.AnalysisJob: analyses.run_analysis,
}
HARD_STOP_EXIT_CODE = 70


class Stopped(Exception):
    """A running job was stopped on purpose: cancelled, or over its maximum run time."""

    def __init__(self, status: str, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


class RetryJob(Exception):
    """A transient failure: the queue runs the job again."""


class JobFailed(Exception):
    """The job failed for good (its row says why); raised so the queue records the failure too."""


@dataclass(frozen=True)
class Runtime:
    """What jobs of one worker process share: the database and the settings."""

    sessions: sessionmaker[Session]
    settings: Settings
    name: str = f"{socket.gethostname()}:{os.getpid()}"


def is_transient(exc: BaseException) -> bool:
    """Whether a failure may pass on its own (a lost connection, a deadlock, an unreachable run file store) rather
    than come from the input."""
    if isinstance(exc, OperationalError | Unavailable):
        return True
    if isinstance(exc, DBAPIError) and exc.connection_invalidated:
        return True
    code = getattr(getattr(exc, "orig", None), "sqlstate", None) or ""
    return code.startswith(("08", "40", "57P"))  # connection, serialization/deadlock, shutdown


class Heartbeat(threading.Thread):
    """Beats for a running job and enforces its deadline.

    Past the maximum run time the job is asked to stop (at its next progress report); if it still runs one stall
    timeout later, it is failed and the worker process exits: its supervisor starts a fresh one.
    """

    def __init__(self, runtime: Runtime, model: jobs.JobModel, job_id: int) -> None:
        super().__init__(name=f"heartbeat-{model.__tablename__}-{job_id}", daemon=True)
        self.runtime, self.model, self.job_id = runtime, model, job_id
        settings = runtime.settings
        self.deadline = time.monotonic() + settings.job_max_run_seconds
        self.hard_deadline = self.deadline + settings.job_stall_seconds
        self.done = threading.Event()

    def overdue(self) -> bool:
        """Whether the job has run past its maximum run time."""
        return time.monotonic() > self.deadline

    def late_reason(self) -> str:
        """Why an overdue job was stopped."""
        return f"stopped: exceeded the maximum run time of {self.runtime.settings.job_max_run_seconds:g} s"

    def run(self) -> None:
        """Beat every heartbeat interval until the job ends."""
        while not self.done.wait(self.runtime.settings.job_heartbeat_seconds):
            past_hard_deadline = time.monotonic() > self.hard_deadline  # read once: exit only after marking failed
            try:
                with session_scope(self.runtime.sessions) as session:
                    jobs.beat(session, self.model, self.job_id)
                    if past_hard_deadline:
                        jobs.mark_failed(session, self.model, self.job_id, self.late_reason() + " (did not stop)")
            except Exception:  # noqa: BLE001 - a missed beat is not fatal; the next one may succeed
                log.exception("heartbeat of %s %s failed", self.model.__tablename__, self.job_id)
                continue
            if past_hard_deadline:
                log.error("%s %s ignored its deadline: stopping this worker", self.model.__tablename__, self.job_id)
                os._exit(HARD_STOP_EXIT_CODE)


def run_job(runtime: Runtime, model: jobs.JobModel, job_id: int) -> None:
    """Run a queued job to its end; raise RetryJob to have the queue run it again, JobFailed when it failed."""
    with session_scope(runtime.sessions) as session:
        claimed = jobs.claim(session, model, job_id, runtime.name)
    if claimed is None:
        return
    heartbeat = Heartbeat(runtime, model, job_id)

    def check(cancel: bool) -> None:
        if cancel:
            raise Stopped("cancelled", jobs.CANCELLED)
        if heartbeat.overdue():
            raise Stopped("failed", heartbeat.late_reason())

    def report(value: float) -> None:
        with session_scope(runtime.sessions) as progress_session:
            cancel = jobs.set_progress(progress_session, model, job_id, value)
        check(cancel)

    heartbeat.start()
    try:
        with session_scope(runtime.sessions) as session:
            if model is jobs.Evaluation:  # in blocks of runs within the memory budget, fanned out when several
                evaluations.run_evaluation(
                    session,
                    job_id,
                    report,
                    memory_mb=runtime.settings.job_memory_mb,
                    fan_out=lambda blocks: jobs.enqueue_blocks(session, _evaluation(session, job_id), blocks),
                )
            elif model is jobs.AnalysisJob:  # reads runs in blocks within the memory budget
                analyses.run_analysis(session, job_id, report, memory_mb=runtime.settings.job_memory_mb)
            else:
                WORK[model](session, job_id, report)
            with session_scope(runtime.sessions) as other:  # the last report, before the result is committed
                check(jobs.cancel_requested(other, model, job_id))
    except Stopped as stop:
        _record(runtime, model, job_id, stop.status, stop.reason)
    except Exception as exc:  # noqa: BLE001 - recorded on the job for the organiser to see
        reason = f"{type(exc).__name__}: {exc}"
        if is_transient(exc) and claimed.attempt < runtime.settings.job_max_attempts:
            log.warning("%s %s failed on attempt %s: %s", model.__tablename__, job_id, claimed.attempt, reason)
            with session_scope(runtime.sessions) as session:
                jobs.requeue(session, model, job_id, reason)
            raise RetryJob(reason) from exc
        log.exception("%s %s failed", model.__tablename__, job_id)
        _record(runtime, model, job_id, "failed", reason)
        raise JobFailed(reason) from exc
    finally:
        heartbeat.done.set()


def _evaluation(session: Session, evaluation_id: int) -> jobs.Evaluation:
    """An evaluation's row (it exists: the job claimed it)."""
    evaluation = session.get(jobs.Evaluation, evaluation_id)
    assert evaluation is not None
    return evaluation


def run_block(runtime: Runtime, evaluation_id: int, index: int, run_ids: list[int], attempt: int) -> None:
    """Run one block of a fanned-out evaluation (`evaluations.run_block`) with the evaluation's heartbeat and
    deadline: a cancelled evaluation's blocks stop before they start; RetryJob for a transient failure before the
    last attempt; any other failure fails the evaluation (JobFailed)."""
    with session_scope(runtime.sessions) as session:
        if jobs.cancel_requested(session, jobs.Evaluation, evaluation_id):
            jobs.mark_cancelled(session, jobs.Evaluation, evaluation_id)
            return
    heartbeat = Heartbeat(runtime, jobs.Evaluation, evaluation_id)
    heartbeat.start()
    try:
        with session_scope(runtime.sessions) as session:
            evaluations.run_block(session, evaluation_id, index, run_ids)
    except Exception as exc:  # noqa: BLE001 - recorded on the evaluation for the organiser to see
        reason = f"block {index + 1}: {type(exc).__name__}: {exc}"
        if is_transient(exc) and attempt < runtime.settings.job_max_attempts:
            log.warning("evaluation %s failed on attempt %s: %s", evaluation_id, attempt, reason)
            raise RetryJob(reason) from exc
        log.exception("evaluation %s failed", evaluation_id)
        _record(runtime, jobs.Evaluation, evaluation_id, "failed", reason)
        raise JobFailed(reason) from exc
    finally:
        heartbeat.done.set()


def _record(runtime: Runtime, model: jobs.JobModel, job_id: int, status: str, reason: str) -> None:
    """Record how a job ended, in a session of its own."""
    with session_scope(runtime.sessions) as session:
        if status == "cancelled":
            jobs.mark_cancelled(session, model, job_id)
        else:
            jobs.mark_failed(session, model, job_id, reason)
