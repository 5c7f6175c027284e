"""`trecpool worker`: run background job workers (evaluations, analyses) on the configured database."""

from __future__ import annotations

import signal

import typer

from app.cli.serving import WAIT_SECONDS, wait_for_database_or_exit

cli = typer.Typer(
    add_completion=False, pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]}
)


@cli.command("worker")
def worker(
    processes: int = typer.Option(1, min=1, help="Worker processes to run (each restarted if it dies)"),
    concurrency: int | None = typer.Option(
        None, min=1, help="Jobs each process runs at once (default from TRECPOOL_WORKER_CONCURRENCY)"
    ),
    wait: float = typer.Option(
        WAIT_SECONDS,
        "--wait",
        min=0,
        help="Seconds to wait for PostgreSQL at DATABASE_URL to answer with its schema migrated (0: try once)",
    ),
) -> None:
    """Run workers until interrupted; several processes or machines may share one database."""
    from app.cli.common import console, open_database
    from app.config import get_settings
    from app.worker.processes import WorkerProcesses

    settings = get_settings()
    wait_for_database_or_exit(settings.database_url, wait, schema=True)
    if concurrency is not None:
        settings = settings.model_copy(update={"worker_concurrency": concurrency})
    database = open_database()
    database.engine.dispose()
    handle = WorkerProcesses(database.url, settings, processes=processes)
    signal.signal(signal.SIGTERM, lambda *_: handle.stopping.set())  # before saying so: a SIGTERM may follow at once
    console.print(
        f"[bold]{processes} worker process(es)[/], {settings.worker_concurrency} job(s) each at once; "
        "Ctrl-C or SIGTERM stops them"
    )
    try:
        handle.wait()
    except KeyboardInterrupt:
        pass
    handle.stop()
