"""`trecpool db ...`: schema migrations."""

from __future__ import annotations

import typer

from app.cli.common import console, open_database
from app.storage import migrations

cli = db = typer.Typer(
    help="Database schema migrations.", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False
)


@db.command("upgrade")
def upgrade(revision: str = typer.Argument("head", help="Target revision")) -> None:
    """Apply migrations up to REVISION (default: the newest)."""
    database = open_database(upgrade_embedded=False, check=False)
    migrations.upgrade(database.url, revision)
    console.print(f"schema at {migrations.current_revision(database.engine)}")


@db.command("downgrade")
def downgrade(revision: str = typer.Argument(..., help="Target revision, or 'base' for an empty schema")) -> None:
    """Revert migrations down to REVISION."""
    database = open_database(upgrade_embedded=False, check=False)
    migrations.downgrade(database.url, revision)
    console.print(f"schema at {migrations.current_revision(database.engine) or 'base'}")


@db.command("current")
def current() -> None:
    """Show the database's revision and the code's."""
    database = open_database(upgrade_embedded=False, check=False)
    typer.echo(f"database: {migrations.current_revision(database.engine) or 'none'}")
    typer.echo(f"code:     {migrations.head_revision()}")
