"""Opening the configured database for CLI commands."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import typer
from rich.console import Console
from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings, get_settings
from app.storage import migrations
from app.storage.database import (
    DatabaseUnavailable,
    check_connection,
    checked_url,
    make_engine,
    make_session_factory,
    start_embedded,
)

console = Console(stderr=True)


@dataclass(frozen=True)
class Database:
    """An open database: its URL, engine and session factory."""

    url: str
    engine: Engine
    sessions: sessionmaker[Session]
    embedded: bool


def database_url(settings: Settings) -> tuple[str, bool]:
    """The configured URL, or an embedded PostgreSQL's; and whether it is embedded."""
    if settings.database_url:
        return settings.database_url, False
    data_dir = settings.data_dir / "pgdata"
    console.print(f"[bold]DATABASE_URL is unset[/]: using an embedded PostgreSQL with its data in {data_dir.resolve()}")
    return start_embedded(data_dir), True


def open_database(*, upgrade_embedded: bool = True, check: bool = True) -> Database:
    """Connect to the configured database; migrate an embedded one, refuse an outdated external one."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for noisy in ("pgserver", "httpx", "httpcore", "alembic"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    settings = get_settings()
    try:
        url, embedded = database_url(settings)
        engine = make_engine(checked_url(url))
        check_connection(engine)
        if embedded and upgrade_embedded:
            migrations.upgrade(url)
        if check:
            migrations.check_schema(engine)
    except (DatabaseUnavailable, migrations.SchemaOutOfDate) as exc:
        console.print(f"[red]error:[/] {exc}", highlight=False, soft_wrap=True)
        raise typer.Exit(1) from None
    return Database(url=url, engine=engine, sessions=make_session_factory(engine), embedded=embedded)
