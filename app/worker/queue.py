"""The procrastinate app of the workers: the two job tasks and evaluation blocks, and the reaper that settles jobs of
dead workers."""

from __future__ import annotations

import asyncio
import logging
from contextlib import suppress

from procrastinate import App, JobContext, PsycopgConnector, RetryStrategy
from procrastinate import jobs as queue_jobs
from sqlalchemy import make_url

from app.config import Settings
from app.services import jobs
from app.storage.audit import ACTOR_KEY, actor_of
from app.storage.database import make_engine, make_session_factory, normalise_url, session_scope
from app.worker.runner import RetryJob, Runtime, run_block, run_job

log = logging.getLogger("trecpool.worker")


def libpq_url(database_url: str) -> str:
    """The database URL as psycopg itself takes it (no SQLAlchemy driver name)."""
    return make_url(normalise_url(database_url)).set(drivername="postgresql").render_as_string(hide_password=False)


def build_app(database_url: str, settings: Settings) -> App:
    """A procrastinate app on the database with the evaluation and analysis tasks."""
    app = App(connector=PsycopgConnector(conninfo=libpq_url(database_url)))
    # the runner decides on retries from the row's attempts (crashes count too); the queue only carries them out
    retry = RetryStrategy(max_attempts=2 * settings.job_max_attempts + 1, wait=1, retry_exceptions={RetryJob})
    for name, model in jobs.TASKS.items():

        def task(context: JobContext, job_id: int, model: jobs.JobModel = model) -> None:
            run_job(context.additional_context["runtime"], model, job_id)

        task.__doc__ = f"Run one queued {model.__tablename__} row."
        app.task(name=name, queue=jobs.QUEUE, pass_context=True, retry=retry)(task)

    @app.task(name=jobs.BLOCK_TASK, queue=jobs.QUEUE, pass_context=True, retry=retry)
    def block(context: JobContext, job_id: int, block: int, run_ids: list[int]) -> None:
        """Run one block of runs of a fanned-out evaluation."""
        attempt = context.job.attempts + 1
        run_block(context.additional_context["runtime"], job_id, block, run_ids, attempt)

    return app


async def reap(app: App, runtime: Runtime) -> None:
    """Settle the jobs of workers silent for the stall timeout (retry or fail them), and rows the queue lost."""
    settings = runtime.settings
    stalled = await app.job_manager.get_stalled_jobs(
        queue=jobs.QUEUE, seconds_since_heartbeat=settings.job_stall_seconds
    )
    for job in stalled:
        model = jobs.TASKS.get(job.task_name)
        job_id = job.task_kwargs.get("job_id")
        block = job.task_name == jobs.BLOCK_TASK
        if (model is None and not block) or not isinstance(job_id, int):  # trecpool queues {"job_id": <row id>}
            continue

        def settle(model: jobs.JobModel | None = model, job_id: int = job_id, attempts: int = job.attempts + 1) -> bool:
            with session_scope(runtime.sessions) as session:
                if model is None:  # a block of a fanned-out evaluation: the evaluation's row settles it
                    return jobs.recover_block(session, job_id, attempts, settings.job_max_attempts)
                return jobs.recover(session, model, job_id, settings.job_max_attempts)

        again = await asyncio.to_thread(settle)
        with suppress(Exception):  # another worker may have settled it first
            if again:
                await app.job_manager.retry_job(job)
            else:
                await app.job_manager.finish_job(job, status=queue_jobs.Status.FAILED, delete_job=False)
        log.warning("job %s of a stopped worker: %s", job.id, "queued again" if again else "settled")

    def lost() -> int:
        with session_scope(runtime.sessions) as session:
            return jobs.fail_lost(session, settings.job_stall_seconds)

    if count := await asyncio.to_thread(lost):
        log.warning("%s job(s) no longer in the queue marked failed", count)


async def reap_forever(app: App, runtime: Runtime) -> None:
    """Reap now, then every half stall timeout (at most every 15 s)."""
    interval = min(runtime.settings.job_stall_seconds / 2, 15.0)
    while True:
        try:
            await reap(app, runtime)
        except Exception:  # noqa: BLE001 - the next round may succeed (e.g. the database restarted)
            log.exception("reaping stalled jobs failed")
        await asyncio.sleep(interval)


async def run_worker(database_url: str, settings: Settings, *, install_signal_handlers: bool = True) -> None:
    """Run one worker until it is stopped: jobs start on LISTEN/NOTIFY, at most `worker_concurrency` at once."""
    engine = make_engine(database_url)
    sessions = make_session_factory(engine)
    runtime = Runtime(sessions=sessions, settings=settings)
    sessions.configure(info={ACTOR_KEY: actor_of("worker", process=runtime.name)})  # the audit trail's "who"
    app = build_app(database_url, settings)
    async with app.open_async():
        reaper = asyncio.create_task(reap_forever(app, runtime))
        try:
            await app.run_worker_async(
                queues=[jobs.QUEUE],
                name=runtime.name,
                concurrency=settings.worker_concurrency,
                listen_notify=True,
                fetch_job_polling_interval=settings.job_heartbeat_seconds,
                update_heartbeat_interval=settings.job_heartbeat_seconds,
                stalled_worker_timeout=settings.job_stall_seconds,
                additional_context={"runtime": runtime},
                install_signal_handlers=install_signal_handlers,
            )
        finally:
            reaper.cancel()
            with suppress(asyncio.CancelledError):
                await reaper
            engine.dispose()
