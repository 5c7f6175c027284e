"""`trecpool serve`: run the web service (on an embedded PostgreSQL when DATABASE_URL is unset)."""

from __future__ import annotations

import typer
import uvicorn

from app.cli.common import console, open_database
from app.config import get_settings
from app.server import create_app
from app.services.demo import load_demo
from app.storage.database import session_scope


def serve(
    demo: bool = typer.Option(False, "--demo", help="Load a small synthetic demo campaign first"),
    host: str | None = typer.Option(None, help="Interface to listen on (default from TRECPOOL_HOST)"),
    port: int | None = typer.Option(None, help="Port (default from TRECPOOL_PORT)"),
) -> None:
    """Start the service; refuses to run on an out-of-date schema."""
    settings = get_settings()
    database = open_database()
    if demo:
        token_file = settings.data_dir / "demo-organiser.token"
        with session_scope(database.sessions) as session:
            summary = load_demo(session, token_file)
        console.print(summary)
    app = create_app(settings, database.sessions)
    uvicorn.run(app, host=host or settings.host, port=port or settings.port, log_level="info")


def register(cli: typer.Typer) -> None:
    """Add the `serve` command."""
    cli.command("serve")(serve)
