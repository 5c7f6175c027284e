"""`trecpool db ...`: schema migrations, and a new numbered revision."""

from __future__ import annotations

import typer

cli = db = typer.Typer(
    help="Database schema migrations.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

WAIT_SECONDS = 60.0  # how long `db upgrade` waits for PostgreSQL by default (docker compose starts both at once)


def _fail(message: str) -> typer.Exit:
    """Print `message` as one error line on stderr; the exit (status 1) to raise."""
    from app.cli.common import console

    console.print(f"[red]error:[/] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(1)


def _wait_for_database(seconds: float) -> None:
    """Wait up to `seconds` for PostgreSQL at DATABASE_URL to answer, one line on stderr per failed attempt; exit 1
    after that (at once for errors that do not pass by themselves: credentials, a missing database, a bad URL)."""
    from app.cli.common import console
    from app.config import get_settings
    from app.storage.connect import wait_for_database
    from app.storage.database import DatabaseUnavailable

    url = get_settings().database_url
    if not url:
        return  # the embedded PostgreSQL is started, not waited for

    def say(line: str) -> None:
        console.print(line, highlight=False, soft_wrap=True, markup=False)

    try:
        wait_for_database(url, seconds, say)
    except DatabaseUnavailable as exc:
        raise _fail(str(exc)) from None


@db.command("upgrade")
def upgrade(
    revision: str = typer.Argument("head", help="Target revision"),
    wait: float = typer.Option(
        WAIT_SECONDS, "--wait", min=0, help="Seconds to wait for PostgreSQL at DATABASE_URL to answer (0: try once)"
    ),
) -> None:
    """Apply migrations up to REVISION (default: the newest), waiting for the database to come up first."""
    from app.cli.common import console, open_database
    from app.storage import migrations

    _wait_for_database(wait)
    database = open_database(upgrade_embedded=False, check=False)
    try:
        migrations.upgrade(database.url, revision)
    except migrations.SchemaDrift as exc:
        raise _fail(str(exc)) from None
    console.print(f"schema at {migrations.current_revision(database.engine)}")


@db.command("downgrade")
def downgrade(revision: str = typer.Argument(..., help="Target revision, or 'base' for an empty schema")) -> None:
    """Revert migrations down to REVISION."""
    from app.cli.common import console, open_database
    from app.storage import migrations

    database = open_database(upgrade_embedded=False, check=False)
    try:
        migrations.downgrade(database.url, revision)
    except migrations.SchemaDrift as exc:
        raise _fail(str(exc)) from None
    console.print(f"schema at {migrations.current_revision(database.engine) or 'base'}")


@db.command("current")
def current() -> None:
    """Show the database's revision and the code's."""
    from app.cli.common import open_database
    from app.storage import migrations

    database = open_database(upgrade_embedded=False, check=False)
    typer.echo(f"database: {migrations.current_revision(database.engine) or 'none'}")
    typer.echo(f"code:     {migrations.head_revision()}")


@db.command("revision")
def revision(
    message: str = typer.Option(..., "-m", "--message", help="What the revision changes (its file name and docstring)"),
) -> None:
    """Write the next numbered revision (NNNN_words.py) into the source tree's migrations folder; no database needed.

    Fill in its upgrade() and downgrade(); it is released (and then never edited) with the next release.
    """
    from app.storage import migrations

    try:
        path = migrations.new_revision(message)
    except ValueError as exc:
        raise _fail(str(exc)) from None
    typer.echo(str(path))
