"""`trecpool serve`: run the web service (on an embedded PostgreSQL when DATABASE_URL is unset)."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from enum import StrEnum

import typer

cli = typer.Typer(
    add_completion=False, pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]}
)


WAIT_SECONDS = 60.0  # how long `serve` and `worker` wait for the database by default (as `db upgrade --wait`)


def wait_for_database_or_exit(database_url: str | None, seconds: float, *, schema: bool) -> None:
    """Wait (bounded) for an external database to answer, and with `schema` to be at head; error line and exit 1."""
    if not database_url:
        return  # the embedded PostgreSQL is started, not waited for
    from app.cli.common import console
    from app.storage.connect import wait_for_database
    from app.storage.database import DatabaseUnavailable
    from app.storage.migrations import SchemaOutOfDate

    def say(line: str) -> None:
        console.print(line, highlight=False, soft_wrap=True, markup=False)

    try:
        wait_for_database(database_url, seconds, say, schema=schema)
    except (DatabaseUnavailable, SchemaOutOfDate) as exc:
        console.print(f"[red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None


class DemoSizeName(StrEnum):
    """How big a demo campaign `--demo` loads."""

    full = "full"
    small = "small"


@cli.command("serve")
def serve(
    demo: bool = typer.Option(
        False, "--demo", envvar="TRECPOOL_DEMO", help="Run the whole loop on a synthetic campaign once the server is up"
    ),
    demo_size: DemoSizeName = typer.Option(
        DemoSizeName.full, "--demo-size", help="full (about two minutes) or small (a few seconds, for smoke tests)"
    ),
    host: str | None = typer.Option(None, help="Interface to listen on (default from TRECPOOL_HOST)"),
    port: int | None = typer.Option(None, help="Port (default from TRECPOOL_PORT)"),
    worker: bool = typer.Option(
        True, "--worker/--no-worker", help="Also run a job worker process (off when `trecpool worker` runs them)"
    ),
    wait: float = typer.Option(
        WAIT_SECONDS, "--wait", min=0, help="Seconds to wait for PostgreSQL at DATABASE_URL to answer (0: try once)"
    ),
) -> None:
    """Start the service; refuses to run on an out-of-date schema."""
    from app.config import get_settings

    settings = get_settings()
    wait_for_database_or_exit(settings.database_url, wait, schema=False)
    serve_app(host or settings.host, port or settings.port, demo=demo, demo_size=demo_size.value, worker=worker)


def serve_app(
    host: str, port: int, *, demo: bool = False, demo_size: str = "full", exit_after: bool = False, worker: bool = True
) -> None:
    """Serve until interrupted (SIGINT/SIGTERM); with `demo`, run the demo loop against the server once it is up.

    With `worker`, a job worker runs in a process of its own beside the server, stopped with it.
    """
    import uvicorn

    from app.cli.common import console, open_database
    from app.config import get_settings
    from app.server import create_app, freeze_heap

    signal.signal(signal.SIGTERM, _interrupt)  # until uvicorn runs, SIGTERM stops start-up like Ctrl-C does
    settings = get_settings()
    database = open_database()
    if worker:
        from app.worker.processes import start_embedded_worker

        workers = start_embedded_worker(database.url, settings)
    app = create_app(settings, database.sessions)
    server = uvicorn.Server(
        uvicorn.Config(app, host=host, port=port, log_level="warning" if demo else "info", timeout_graceful_shutdown=10)
    )
    failures: list[BaseException] = []
    if demo:
        from app.cli.demo import load_demo

        base = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"

        def stop() -> None:
            server.should_exit = True

        def load() -> None:
            _when_started(server, lambda: load_demo(base, settings, database.sessions, demo_size), failures, stop)
            if exit_after:
                stop()

        threading.Thread(target=load, name="demo", daemon=True).start()
    # uvicorn stops on SIGINT/SIGTERM, then re-raises the signal: with the default SIGTERM action the process would
    # die there, before the worker and the embedded PostgreSQL are stopped. A handler of ours turns it into an exit.
    signal.signal(signal.SIGTERM, lambda *_: None)
    freeze_heap()
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        from app.services import offload

        offload.shutdown()  # the upload parse processes
        if worker:
            workers.stop()
        database.engine.dispose()
    if failures:
        raise typer.Exit(1)
    console.print("trecpool stopped")


def _interrupt(signum: int, frame: object) -> None:
    """Turn SIGTERM into KeyboardInterrupt, so that start-up unwinds and cleans up as for Ctrl-C."""
    raise KeyboardInterrupt


def _when_started(
    server: object, work: Callable[[], None], failures: list[BaseException], stop: Callable[[], None]
) -> None:
    """Run `work` once the server accepts connections; on failure record it and stop the server."""
    from app.cli.common import console

    while not getattr(server, "started", False):
        if getattr(server, "should_exit", False):
            return
        time.sleep(0.05)
    try:
        work()
    except BaseException as exc:  # noqa: BLE001 - reported, then the server stops
        failures.append(exc)
        console.print(f"[red]demo failed:[/] {exc}")
        stop()
