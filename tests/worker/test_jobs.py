"""Durable jobs: killed workers, jobs queued with no worker, failures, cancels, deadlines and retries."""

from __future__ import annotations

import os
import signal
import socket
import time
from collections.abc import Callable

from sqlalchemy import select, text

from app.storage.models import Evaluation, Score
from app.worker.runner import HARD_STOP_EXIT_CODE
from tests.worker.conftest import evaluable_campaign

RUN_SECONDS = 3.0  # the deadline in the deadline tests: long enough for a loaded machine to reach the store step


def wait_for(condition: Callable[[], object], timeout: float, what: str) -> object:
    """Poll until `condition()` is truthy; return its value (AssertionError naming `what` after `timeout` s)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def row(sessions, evaluation_id: int) -> Evaluation:  # type: ignore[no-untyped-def]
    """The evaluation's row as stored now."""
    with sessions() as session:
        evaluation = session.get(Evaluation, evaluation_id)
        assert evaluation is not None
        session.expunge(evaluation)
        return evaluation


def start(api, campaign_id: int) -> int:  # type: ignore[no-untyped-def]
    """Queue an evaluation over the API; its id."""
    response = api.post(f"/api/campaigns/{campaign_id}/evaluations", json={"measures": ["AP", "P@10"]})
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "queued"
    return response.json()["id"]


def finished(api, evaluation_id: int, timeout: float = 60.0) -> dict:  # type: ignore[no-untyped-def]
    """Wait until the evaluation is done, failed or cancelled; its API view."""
    return wait_for(  # type: ignore[return-value]
        lambda: (
            (body := api.get(f"/api/evaluations/{evaluation_id}").json())["status"] in ("done", "failed", "cancelled")
            and body
        ),
        timeout,
        f"evaluation {evaluation_id} to finish",
    )


def blocked_storing(sessions, evaluation_id: int) -> None:  # type: ignore[no-untyped-def]
    """Wait until a running evaluation waits on the scores lock (progress 0.7: it computed, it stores next)."""
    wait_for(
        lambda: (r := row(sessions, evaluation_id)).status == "running" and r.progress >= 0.7,
        30,
        "the job to reach the store step",
    )
    with sessions() as session:
        wait_for(
            lambda: session.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                    "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
                )
            ),
            30,
            "the job to wait on the lock",
        )


def scores_of(sessions, evaluation_id: int) -> int:  # type: ignore[no-untyped-def]
    """How many numbers the evaluation stored."""
    with sessions() as session:
        return len(session.scalars(select(Score.value).where(Score.evaluation_id == evaluation_id)).all())


def test_a_worker_killed_mid_job_is_replaced_and_the_job_retried(api, jobs_sessions, spawn_worker, scores_locked):
    campaign = evaluable_campaign(api)
    first = spawn_worker()
    evaluation_id = start(api, campaign)
    blocked_storing(jobs_sessions, evaluation_id)
    assert row(jobs_sessions, evaluation_id).attempts == 1
    os.kill(first.pid, signal.SIGKILL)
    first.join()
    scores_locked()
    assert api.get(f"/api/evaluations/{evaluation_id}").json()["status"] == "running"  # until the stall is seen
    second = spawn_worker()
    body = finished(api, evaluation_id)  # fails after its timeout rather than hang: a guard, not a speed check
    assert body["status"] == "done", body
    assert body["progress"] == 1.0 and body["error"] is None
    stored = row(jobs_sessions, evaluation_id)
    assert stored.attempts == 2 and stored.worker == f"{socket.gethostname()}:{second.pid}"  # the new worker's
    assert scores_of(jobs_sessions, evaluation_id) == 3 * 2 * 4  # 3 runs x 2 measures x (3 topics + all)


def test_a_worker_killed_on_the_last_attempt_fails_the_job_saying_why(api, jobs_sessions, spawn_worker, scores_locked):
    campaign = evaluable_campaign(api)
    first = spawn_worker(job_max_attempts=1)
    evaluation_id = start(api, campaign)
    blocked_storing(jobs_sessions, evaluation_id)
    os.kill(first.pid, signal.SIGKILL)
    first.join()
    scores_locked()
    spawn_worker(job_max_attempts=1)
    body = finished(api, evaluation_id)
    assert body["status"] == "failed"
    assert "stopped responding" in body["error"] and "attempt 1 of 1" in body["error"]
    assert scores_of(jobs_sessions, evaluation_id) == 0


def test_a_job_queued_with_no_worker_runs_when_one_starts(api, jobs_sessions, spawn_worker):
    campaign = evaluable_campaign(api)
    evaluation_id = start(api, campaign)
    time.sleep(1.0)
    assert api.get(f"/api/evaluations/{evaluation_id}").json()["status"] == "queued"
    spawn_worker()
    body = finished(api, evaluation_id, timeout=30)
    assert body["status"] == "done", body
    assert row(jobs_sessions, evaluation_id).attempts == 1


def test_an_exception_in_the_job_fails_it_with_the_reason_and_no_retry(api, jobs_sessions, spawn_worker):
    campaign = evaluable_campaign(api)
    evaluation_id = start(api, campaign)
    with jobs_sessions() as session:  # an input error the job meets at run time
        session.execute(
            text('UPDATE evaluations SET measures = \'{"names": ["AP", "bogus@3"]}\' WHERE id = :id'),
            {"id": evaluation_id},
        )
        session.commit()
    spawn_worker()
    body = finished(api, evaluation_id)
    assert body["status"] == "failed"
    assert "bogus@3" in body["error"]
    assert row(jobs_sessions, evaluation_id).attempts == 1
    queued = row(jobs_sessions, evaluation_id).queue_job_id

    def queue_status() -> str:
        with jobs_sessions() as session:  # the queue records the failure just after the job's own row
            return str(session.scalar(text("SELECT status FROM procrastinate_jobs WHERE id = :id"), {"id": queued}))

    wait_for(lambda: queue_status() == "failed", 10, "the queue to record the failure")


def test_cancel_a_queued_job(api, jobs_sessions, spawn_worker):
    campaign = evaluable_campaign(api)
    evaluation_id = start(api, campaign)
    cancelled = api.post(f"/api/evaluations/{evaluation_id}/cancel")
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json()["status"] == "cancelled"
    assert api.post(f"/api/evaluations/{evaluation_id}/cancel").json()["status"] == "cancelled"  # idempotent
    later = start(api, campaign)
    spawn_worker()
    assert finished(api, later)["status"] == "done"  # the worker ran the next job, not the cancelled one
    body = api.get(f"/api/evaluations/{evaluation_id}").json()
    assert body["status"] == "cancelled" and body["finished_at"] is not None
    assert row(jobs_sessions, evaluation_id).attempts == 0
    assert api.post(f"/api/evaluations/{later}/cancel").status_code == 409  # done: nothing to cancel
    assert api.post("/api/evaluations/999999/cancel").status_code == 404
    team = api.post(f"/api/campaigns/{campaign}/teams", json={"name": "other"}).json()["token"]
    refused = api.post(f"/api/evaluations/{later}/cancel", headers={"Authorization": f"Bearer {team}"})
    assert refused.status_code == 403


def test_cancel_a_running_job_stops_it_at_its_next_report(api, jobs_sessions, spawn_worker, scores_locked):
    campaign = evaluable_campaign(api)
    spawn_worker()
    evaluation_id = start(api, campaign)
    blocked_storing(jobs_sessions, evaluation_id)
    response = api.post(f"/api/evaluations/{evaluation_id}/cancel")
    assert response.status_code == 200 and response.json()["status"] == "running"
    scores_locked()
    body = finished(api, evaluation_id)
    assert body["status"] == "cancelled", body
    assert scores_of(jobs_sessions, evaluation_id) == 0  # nothing half-written


def test_a_job_over_its_maximum_run_time_fails_saying_so(api, jobs_sessions, spawn_worker, scores_locked):
    campaign = evaluable_campaign(api)
    spawn_worker(job_max_run_seconds=RUN_SECONDS, job_stall_seconds=30.0)
    evaluation_id = start(api, campaign)
    blocked_storing(jobs_sessions, evaluation_id)
    time.sleep(RUN_SECONDS + 0.2)
    scores_locked()
    body = finished(api, evaluation_id)
    assert body["status"] == "failed"
    assert f"maximum run time of {RUN_SECONDS:g} s" in body["error"]
    assert scores_of(jobs_sessions, evaluation_id) == 0


def test_a_job_that_ignores_its_deadline_is_failed_and_its_worker_replaced(
    api, jobs_sessions, spawn_worker, scores_locked
):
    campaign = evaluable_campaign(api)
    worker = spawn_worker(job_max_run_seconds=RUN_SECONDS, job_stall_seconds=1.0)
    evaluation_id = start(api, campaign)
    blocked_storing(jobs_sessions, evaluation_id)
    worker.join(timeout=30)  # the job never reports again while the lock is held
    assert worker.exitcode == HARD_STOP_EXIT_CODE
    body = api.get(f"/api/evaluations/{evaluation_id}").json()
    assert body["status"] == "failed" and "did not stop" in body["error"]
    scores_locked()
    spawn_worker()  # the next worker settles the queue's side of the job without running it again
    time.sleep(2.0)
    assert api.get(f"/api/evaluations/{evaluation_id}").json()["status"] == "failed"
    assert row(jobs_sessions, evaluation_id).attempts == 1


def test_a_transient_database_error_is_retried(api, jobs_sessions, spawn_worker, scores_locked):
    campaign = evaluable_campaign(api)
    spawn_worker()
    evaluation_id = start(api, campaign)
    blocked_storing(jobs_sessions, evaluation_id)
    with jobs_sessions() as session:  # the job's connection drops
        killed = session.scalar(
            text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = current_database() "
                "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
            )
        )
    assert killed == 1
    scores_locked()
    body = finished(api, evaluation_id)
    assert body["status"] == "done", body
    assert row(jobs_sessions, evaluation_id).attempts == 2
