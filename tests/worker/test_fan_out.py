"""An evaluation fanned out over the job queue, one task per block of runs: the numbers of the single-process path,
bit for bit, with 1, 2 and 4 workers and after a worker is killed in the middle of a block."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

import numpy as np
import pytest
from sqlalchemy import select, text

from app.services import evaluations, jobs
from app.services.auth import Principal
from app.storage.models import Evaluation, Role, RunMean, Score

N_RUNS = 8
TINY_BUDGET = 1e-9  # MB: every run a block of its own
MEASURES = ["AP", "P@10", "nDCG@10", "bpref", "gm_map"]
SAMPLED_MEASURES = ["xinfAP", "infNDCG", "AP", "P@10"]


def evaluable_campaign(api, n_runs: int, n_topics: int, *, sampled: bool = False) -> int:  # type: ignore[no-untyped-def]
    """A campaign of `n_runs` seeded runs of 20 lines per topic and imported qrels, to evaluate; its id. `sampled`:
    stratified qrels (sample_eval's), docs 0-24 judged in full, the others at a third."""
    body = {"name": f"fan-out-{time.time_ns()}", "task_kind": "shots", "max_runs_per_team": n_runs}
    cid = api.post("/api/campaigns", json=body).json()["id"]
    topics = [str(t) for t in range(1, n_topics + 1)]
    api.post(f"/api/campaigns/{cid}/topics", json=[{"number": t, "title": "t"} for t in topics]).raise_for_status()
    api.post(f"/api/campaigns/{cid}/open").raise_for_status()
    team = api.post(f"/api/campaigns/{cid}/teams", json={"name": "team"}).json()["id"]
    rng = np.random.default_rng(5)
    for r in range(n_runs):
        docs = {t: rng.permutation(50)[:20].tolist() for t in topics}
        lines = [f"{t} Q0 d{docs[t][d]} {d + 1} {100 - d} run{r}" for t in topics for d in range(20)]
        response = api.post(
            f"/api/campaigns/{cid}/runs",
            data={"name": f"run{r}", "team_id": str(team)},
            files={"file": ("run.txt", "\n".join(lines) + "\n")},
        )
        assert response.status_code == 201, response.text
    qrels = "".join(f"{t} 0 d{d} {int(d % 3 == 0)}\n" for t in topics for d in range(50))
    if sampled:
        drawn = rng.random((n_topics, 50)) < 1 / 3
        qrels = "".join(
            f"{t} 0 d{d} {1 if d < 25 else 2} {int(d % 3 == 0) if d < 25 or drawn[i, d] else -1}\n"
            for i, t in enumerate(topics)
            for d in range(50)
        )
    api.post(f"/api/campaigns/{cid}/qrels", data={"label": "q"}, files={"file": ("q", qrels)}).raise_for_status()
    return int(cid)


def wait_for(condition: Callable[[], object], timeout: float, what: str) -> object:
    """Poll until `condition()` is truthy; return its value (AssertionError naming `what` after `timeout` s)."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return value


def numbers(sessions, evaluation_id: int) -> tuple[dict, dict]:  # type: ignore[no-untyped-def, type-arg]
    """An evaluation's stored scores and run means, keyed, as exact float hex strings."""

    def exact(value: float | None) -> str | None:
        return None if value is None else float(value).hex()

    with sessions() as session:
        scores = session.scalars(select(Score).where(Score.evaluation_id == evaluation_id)).all()
        means = session.scalars(select(RunMean).where(RunMean.evaluation_id == evaluation_id)).all()
        return (
            {(s.run_id, s.measure, s.topic): exact(s.value) for s in scores},
            {(m.run_id, m.measure): tuple(map(exact, (m.value, m.ci_low, m.ci_high))) for m in means},
        )


def single_process(sessions, campaign_id: int, measures: list[str] = MEASURES) -> tuple[dict, dict]:  # type: ignore[no-untyped-def, type-arg]
    """The numbers of an evaluation run in this process, every run in one block."""
    with sessions() as session:
        organiser = Principal(Role.organiser, token_id=0)
        evaluation = evaluations.start_evaluation(session, organiser, campaign_id, measures=measures)
        evaluations.run_evaluation(session, evaluation.id)
        session.commit()
        evaluation_id = evaluation.id
    return numbers(sessions, evaluation_id)


def start(api, campaign_id: int, measures: list[str] = MEASURES) -> int:  # type: ignore[no-untyped-def]
    """Queue an evaluation over the API; its id."""
    response = api.post(f"/api/campaigns/{campaign_id}/evaluations", json={"measures": measures})
    assert response.status_code == 202, response.text
    return int(response.json()["id"])


def finished(api, evaluation_id: int, timeout: float = 120.0) -> dict:  # type: ignore[no-untyped-def, type-arg]
    """Wait until the evaluation is done, failed or cancelled; its API view."""
    return wait_for(  # type: ignore[return-value]
        lambda: (
            (body := api.get(f"/api/evaluations/{evaluation_id}").json())["status"] in ("done", "failed", "cancelled")
            and body
        ),
        timeout,
        f"evaluation {evaluation_id} to finish",
    )


def block_jobs(sessions, evaluation_id: int) -> list[tuple[str, int]]:  # type: ignore[no-untyped-def]
    """(status, attempts) of the evaluation's block tasks in the queue."""
    with sessions() as session:
        rows = session.execute(
            text(
                "SELECT status, attempts FROM procrastinate_jobs "
                "WHERE task_name = :task AND (args->>'job_id')::int = :id"
            ),
            {"task": jobs.BLOCK_TASK, "id": evaluation_id},
        ).all()
        return [(str(status), int(attempts)) for status, attempts in rows]


@pytest.mark.parametrize("n_workers", [1, 2, 4])
def test_fanned_out_blocks_store_the_single_process_numbers(api, jobs_sessions, spawn_worker, n_workers):  # type: ignore[no-untyped-def]
    campaign = evaluable_campaign(api, n_runs=N_RUNS, n_topics=4)
    expected = single_process(jobs_sessions, campaign)
    assert len(expected[0]) == N_RUNS * len(MEASURES) * 5 and len(expected[1]) == N_RUNS * len(MEASURES)
    for _ in range(n_workers):
        spawn_worker(job_memory_mb=TINY_BUDGET)
    evaluation_id = start(api, campaign)
    body = finished(api, evaluation_id)
    assert body["status"] == "done" and body["progress"] == 1.0 and body["error"] is None, body
    settled = [("succeeded", 1)] * N_RUNS  # one task per run, each run once (procrastinate counts the end)
    wait_for(lambda: sorted(block_jobs(jobs_sessions, evaluation_id)) == settled, 30, "every block to be settled")
    assert numbers(jobs_sessions, evaluation_id) == expected
    with jobs_sessions() as session:
        stored = session.get(Evaluation, evaluation_id)
        assert stored is not None and evaluations.BLOCKS not in stored.measures and stored.measures["interval"]


def test_a_worker_killed_mid_block_is_retried_to_the_same_numbers(api, jobs_sessions, spawn_worker, scores_locked):  # type: ignore[no-untyped-def]
    campaign = evaluable_campaign(api, n_runs=N_RUNS, n_topics=4)
    first = spawn_worker(job_memory_mb=TINY_BUDGET)
    spawn_worker(job_memory_mb=TINY_BUDGET)
    evaluation_id = start(api, campaign)
    waiting = text(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
        "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
    )

    def blocked() -> bool:  # a session per look: pg_stat_activity is read once per transaction
        with jobs_sessions() as session:
            return int(session.scalar(waiting) or 0) >= 2

    wait_for(blocked, 60, "both workers' blocks, computed, to wait on the scores lock to store them")
    assert sorted(block_jobs(jobs_sessions, evaluation_id))[:2] == [("doing", 0), ("doing", 0)]
    os.kill(first.pid, signal.SIGKILL)
    first.join()
    scores_locked()
    body = finished(api, evaluation_id)
    assert body["status"] == "done" and body["error"] is None, body
    settled = [("succeeded", 1)] * (N_RUNS - 1) + [("succeeded", 2)]  # the killed block ran again
    wait_for(lambda: sorted(block_jobs(jobs_sessions, evaluation_id)) == settled, 30, "every block to be settled")
    assert numbers(jobs_sessions, evaluation_id) == single_process(jobs_sessions, campaign)


def test_sampled_qrels_fanned_out_store_the_single_process_numbers(api, jobs_sessions, spawn_worker):  # type: ignore[no-untyped-def]
    """Each block stores its scores and sampling parts; the block that finishes last reads every block's parts and
    makes the step over every run (the jackknife ratio per topic): the numbers of one process, bit for bit."""
    campaign = evaluable_campaign(api, n_runs=N_RUNS, n_topics=4, sampled=True)
    expected = single_process(jobs_sessions, campaign, SAMPLED_MEASURES)
    assert len(expected[1]) == N_RUNS * len(SAMPLED_MEASURES)
    for _ in range(2):
        spawn_worker(job_memory_mb=TINY_BUDGET)
    evaluation_id = start(api, campaign, SAMPLED_MEASURES)
    body = finished(api, evaluation_id)
    assert body["status"] == "done" and body["error"] is None, body
    settled = [("succeeded", 1)] * N_RUNS
    wait_for(lambda: sorted(block_jobs(jobs_sessions, evaluation_id)) == settled, 30, "every block to be settled")
    assert numbers(jobs_sessions, evaluation_id) == expected
    with jobs_sessions() as session:
        parts = session.scalar(
            text("SELECT count(*) FROM evaluation_block_parts WHERE evaluation_id = :id"), {"id": evaluation_id}
        )
        assert parts == 0  # the reduce deleted them
        stored = session.get(Evaluation, evaluation_id)
        assert stored is not None and set(stored.measures["interval"]["widened"]) == {"xinfAP", "infNDCG"}
