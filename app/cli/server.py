"""`trecpool serve`: run the web service (on an embedded PostgreSQL when DATABASE_URL is unset)."""

from __future__ import annotations

import functools

import typer

from app.cli.serving import WAIT_SECONDS, DemoLoop, DemoSizeName, serve_app, wait_for_database_or_exit

cli = typer.Typer(
    add_completion=False, pretty_exceptions_enable=False, context_settings={"help_option_names": ["-h", "--help"]}
)


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
    loop: DemoLoop | None = None
    if demo:
        from app.cli.demo import load_demo

        loop = functools.partial(load_demo, size=demo_size.value)
    serve_app(host or settings.host, port or settings.port, demo=loop, worker=worker)
