"""`trecpool token create`: issue API tokens from the command line."""

from __future__ import annotations

import typer

from app.cli.common import console, open_database
from app.services.auth import create_token
from app.services.errors import ServiceError
from app.storage.database import session_scope
from app.storage.models import Role

cli = token = typer.Typer(
    help="API tokens.", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False
)


@token.callback()
def tokens() -> None:
    """API tokens: only their SHA-256 hashes are stored."""


@token.command("create")
def create(
    role: Role = typer.Option(..., "--role", help="organiser, team or assessor"),
    campaign: int | None = typer.Option(None, help="Bind an organiser token to one campaign"),
    team: int | None = typer.Option(None, help="Team id (role team)"),
    assessor: int | None = typer.Option(None, help="Assessor id (role assessor)"),
    label: str = typer.Option("", help="A note on what the token is for"),
) -> None:
    """Create a token and print it (only its hash is stored)."""
    database = open_database()
    try:
        with session_scope(database.sessions) as session:
            plain = create_token(session, role, label=label, campaign_id=campaign, team_id=team, assessor_id=assessor)
    except ServiceError as exc:
        console.print(f"[red]error:[/] {exc.message}")
        raise typer.Exit(2) from None
    typer.echo(plain)
