"""The reaper settles only queue jobs that name one of trecpool's rows ({"job_id": <int>}); another job of a task
it knows, without such an id, is left alone instead of failing the whole reaping round."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.services import jobs
from app.worker.queue import reap
from app.worker.runner import Runtime


@dataclass
class _Job:
    """The fields of a procrastinate job the reaper reads."""

    id: int
    task_name: str
    task_kwargs: dict[str, Any]


@dataclass
class _Manager:
    """A job manager with stalled jobs to hand out, recording what the reaper does with them."""

    stalled: list[_Job]
    done: list[tuple[str, int]] = field(default_factory=list)

    async def get_stalled_jobs(self, **_: object) -> list[_Job]:
        return self.stalled

    async def retry_job(self, job: _Job) -> None:
        self.done.append(("retry", job.id))

    async def finish_job(self, job: _Job, **_: object) -> None:
        self.done.append(("finish", job.id))


@dataclass
class _App:
    job_manager: _Manager


def test_stalled_jobs_without_an_integer_row_id_are_left_alone(
    sessions: sessionmaker[Session], database_url: str
) -> None:
    evaluation = next(name for name, model in jobs.TASKS.items() if model is jobs.Evaluation)
    manager = _Manager([_Job(1, evaluation, {}), _Job(2, evaluation, {"job_id": "7"}), _Job(3, "other.task", {})])
    runtime = Runtime(sessions=sessions, settings=Settings(database_url=database_url, job_stall_seconds=3.0))
    asyncio.run(reap(_App(manager), runtime))  # type: ignore[arg-type]  # a stand-in for procrastinate's App
    assert manager.done == []
