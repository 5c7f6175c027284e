"""`trecpool token create|list|revoke`: API tokens from the command line (the audit trail names the actor "cli")."""

from __future__ import annotations

import enum
import re

import typer

cli = token = typer.Typer(
    help="API tokens: create, list, revoke.", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False
)

DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class Role(enum.StrEnum):
    """Who a token speaks for (the values of app.storage.models.Role, kept here so --help imports nothing heavy)."""

    organiser = "organiser"
    team = "team"
    assessor = "assessor"


def seconds_of(duration: str) -> float:
    """Seconds in a duration such as 3600, 90m, 12h, 30d or 2w."""
    match = DURATION.match(duration)
    if match is None or float(match.group(1)) <= 0:
        raise typer.BadParameter(f"{duration!r}: a positive duration such as 3600, 90m, 12h, 30d or 2w")
    return float(match.group(1)) * UNIT_SECONDS[match.group(2)]


@token.callback()
def tokens() -> None:
    """API tokens: only their SHA-256 hashes are stored."""


def _fail(message: str) -> typer.Exit:
    """Print an error and return the exit to raise."""
    from app.cli.common import console

    console.print(f"[red]error:[/] {message}")
    return typer.Exit(2)


@token.command("create")
def create(
    role: Role = typer.Option(..., "--role", help="organiser, team or assessor"),
    campaign: int | None = typer.Option(None, help="Bind an organiser token to one campaign"),
    team: int | None = typer.Option(None, help="Team id (role team)"),
    assessor: int | None = typer.Option(None, help="Assessor id (role assessor)"),
    label: str = typer.Option("", help="A note on what the token is for"),
    expires_in: str | None = typer.Option(None, "--expires-in", help="Expire after 3600 (s), 90m, 12h, 30d or 2w"),
    revoke_previous: bool = typer.Option(
        False, "--revoke-previous", help="Revoke the team's or assessor's other tokens (rotation)"
    ),
) -> None:
    """Create a token and print it (only its hash is stored)."""
    from app.cli.common import open_database
    from app.services import tokens as lifecycle
    from app.services.auth import issue_token
    from app.services.errors import ServiceError
    from app.storage.audit import actor_of, set_actor
    from app.storage.database import session_scope
    from app.storage.models import Role as StoredRole

    lifetime = seconds_of(expires_in) if expires_in is not None else None
    if revoke_previous and role is Role.organiser:
        raise _fail("--revoke-previous is for team and assessor tokens")
    database = open_database()
    try:
        with session_scope(database.sessions) as session:
            set_actor(session, actor_of("cli"))
            row, plain = issue_token(
                session,
                StoredRole(role.value),
                label=label,
                campaign_id=campaign,
                team_id=team,
                assessor_id=assessor,
                expires_at=lifecycle.expiry(lifetime),
            )
            if revoke_previous:
                lifecycle.revoke_member_tokens(session, team_id=row.team_id, assessor_id=row.assessor_id, keep=row.id)
    except ServiceError as exc:
        raise _fail(exc.message) from None
    typer.echo(plain)


@token.command("list")
def list_(
    campaign: int | None = typer.Option(None, help="Only the tokens bound to this campaign"),
    all_: bool = typer.Option(False, "--all", help="Also revoked and expired tokens"),
) -> None:
    """List tokens: id, role, what they are bound to, dates and label (never the secrets)."""
    from sqlalchemy import select

    from app.cli.common import open_database
    from app.services.tokens import now
    from app.storage.database import session_scope
    from app.storage.models import ApiToken

    database = open_database()
    with session_scope(database.sessions) as session:
        query = select(ApiToken).order_by(ApiToken.id)
        if campaign is not None:
            query = query.where(ApiToken.campaign_id == campaign)
        rows = list(session.scalars(query))
        moment = now()
        typer.echo("id\trole\tcampaign\tteam\tassessor\tcreated\texpires\tstate\tlabel")
        for row in rows:
            expired = row.expires_at is not None and row.expires_at <= moment
            state = "revoked" if row.revoked_at is not None else "expired" if expired else "active"
            if state != "active" and not all_:
                continue
            cells = (row.id, row.role.value, row.campaign_id, row.team_id, row.assessor_id)
            dates = (row.created_at, row.expires_at)
            typer.echo(
                "\t".join(
                    [*("" if c is None else str(c) for c in cells)]
                    + [d.isoformat(timespec="seconds") if d else "" for d in dates]
                    + [state, row.label]
                )
            )


@token.command("revoke")
def revoke(
    token_ids: list[int] = typer.Argument(..., metavar="ID...", help="Token ids (see `trecpool token list`)"),
) -> None:
    """Revoke tokens by id: each gets 401 from now on."""
    from app.cli.common import open_database
    from app.services.errors import ServiceError
    from app.services.tokens import revoke_token
    from app.storage.audit import actor_of, set_actor
    from app.storage.database import session_scope

    database = open_database()
    try:
        with session_scope(database.sessions) as session:
            set_actor(session, actor_of("cli"))
            for token_id in token_ids:
                row = revoke_token(session, None, token_id)
                typer.echo(f"revoked token {row.id} ({row.role.value} {row.label})".rstrip())
    except ServiceError as exc:
        raise _fail(exc.message) from None
