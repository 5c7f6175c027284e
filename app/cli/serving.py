"""Serving the app in this process, shared by `trecpool serve`, `trecpool demo` and `trecpool worker`.

The start-up wait for an external database, the server with its embedded worker, and a demo loop run against it
once it is up. The demo loop is passed in (`app.cli.demo.load_demo`), so this module imports no command module and
`server` and `demo` both import it without importing each other.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from sqlalchemy.orm import Session, sessionmaker

    from app.config import Settings

DemoLoop = Callable[[str, "Settings", "sessionmaker[Session]"], None]  # (base URL, settings, sessions) -> None

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


def serve_app(
    host: str, port: int, *, demo: DemoLoop | None = None, exit_after: bool = False, worker: bool = True
) -> None:
    """Serve until interrupted (SIGINT/SIGTERM); with `demo`, run that demo loop against the server once it is up.

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
    from app.services import offload

    offload.start(settings.parse_processes, settings.worker_niceness)  # upload parse processes, ready before uploads
    server = uvicorn.Server(
        uvicorn.Config(
            app, host=host, port=port, log_level="warning" if demo is not None else "info", timeout_graceful_shutdown=10
        )
    )
    failures: list[BaseException] = []
    if demo is not None:
        run_demo = demo
        base = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"

        def stop() -> None:
            server.should_exit = True

        def load() -> None:
            _when_started(server, lambda: run_demo(base, settings, database.sessions), failures, stop)
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
