"""Opening the configured database for CLI commands."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import typer
from rich.console import Console
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.config import get_settings
from app.storage.connect import open_engine
from app.storage.database import DatabaseUnavailable, make_session_factory
from app.storage.migrations import SchemaOutOfDate

console = Console(stderr=True)


@dataclass(frozen=True)
class Database:
    """An open database: its URL, engine and session factory."""

    url: str
    engine: Engine
    sessions: sessionmaker[Session]
    embedded: bool


def open_database(*, upgrade_embedded: bool = True, check: bool = True) -> Database:
    """Connect to the configured database; migrate an embedded one, refuse an outdated external one.

    Any reason the database cannot be used is printed as one line, and the command exits with status 1.
    """
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("pgserver", "httpx", "httpcore", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    settings = get_settings()
    if not settings.database_url:
        pgdata = (settings.data_dir / "pgdata").resolve()
        console.print(f"[bold]DATABASE_URL is unset[/]: using an embedded PostgreSQL with its data in {pgdata}")
    try:
        opened = open_engine(settings.database_url, settings.data_dir, upgrade_embedded=upgrade_embedded, check=check)
    except (DatabaseUnavailable, SchemaOutOfDate) as exc:
        console.print(f"[red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    return Database(
        url=opened.url, engine=opened.engine, sessions=make_session_factory(opened.engine), embedded=opened.embedded
    )
