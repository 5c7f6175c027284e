"""Opening the configured database for CLI commands."""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass

import typer
from rich.console import Console
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.config import get_settings
from app.storage.connect import open_engine
from app.storage.database import DatabaseUnavailable, make_session_factory
from app.storage.migrations import SchemaOutOfDate

console = Console(stderr=True, soft_wrap=True)  # a path or a token is never cut across lines


@dataclass(frozen=True)
class Database:
    """An open database: its URL, engine and session factory."""

    url: str
    engine: Engine
    sessions: sessionmaker[Session]
    embedded: bool


def open_database(*, upgrade_embedded: bool = True, check: bool = True) -> Database:
    """Connect to the configured database; migrate an embedded one, refuse an outdated external one.

    Any reason the database cannot be used is printed as one line, and the command exits with status 1. Logging
    shows warnings and errors only (worker restarts, failed jobs): what a command does it says itself.
    """
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("pgserver", "httpx", "httpcore", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    # pgserver asks platformdirs for a runtime directory to keep its lock in; without XDG_RUNTIME_DIR (a container,
    # a cron job, sudo) platformdirs warns and uses /tmp/runtime-<uid>, which serves as well.
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR is not set", module="platformdirs")
    settings = get_settings()
    if not settings.database_url:
        pgdata = (settings.data_dir / "pgdata").resolve()
        console.print(
            f"[bold]DATABASE_URL is unset[/]: using an embedded PostgreSQL with its data in {pgdata}", highlight=False
        )
    try:
        opened = open_engine(settings.database_url, settings.data_dir, upgrade_embedded=upgrade_embedded, check=check)
    except (DatabaseUnavailable, SchemaOutOfDate) as exc:
        console.print(f"[red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    return Database(
        url=opened.url, engine=opened.engine, sessions=make_session_factory(opened.engine), embedded=opened.embedded
    )
