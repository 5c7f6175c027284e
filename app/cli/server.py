"""`trecpool serve`: run the web service (on an embedded PostgreSQL when DATABASE_URL is unset)."""

from __future__ import annotations

import typer

from app.cli.demo import serve_with_demo
from app.config import get_settings


def serve(
    demo: bool = typer.Option(False, "--demo", help="Run the whole loop on a synthetic campaign once the server is up"),
    host: str | None = typer.Option(None, help="Interface to listen on (default from TRECPOOL_HOST)"),
    port: int | None = typer.Option(None, help="Port (default from TRECPOOL_PORT)"),
) -> None:
    """Start the service; refuses to run on an out-of-date schema."""
    settings = get_settings()
    serve_with_demo(host or settings.host, port or settings.port, demo=demo)


def register(cli: typer.Typer) -> None:
    """Add the `serve` command."""
    cli.command("serve")(serve)
