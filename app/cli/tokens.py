"""`trecpool token create|list|revoke`: API tokens from the command line (the audit trail names the actor "cli")."""

from __future__ import annotations

import enum
import json
import re
from datetime import datetime

import typer

cli = token = typer.Typer(
    help="API tokens: create, list, revoke.", no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False
)

DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*$")
UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


class TextOrJson(enum.StrEnum):
    """Output of `token create` and `token revoke`: lines of text, or one JSON document on stdout."""

    text = "text"
    json = "json"


class TsvOrJson(enum.StrEnum):
    """Output of `token list`: tab-separated columns with a header line, or a JSON list on stdout."""

    tsv = "tsv"
    json = "json"


FORMAT_HELP = "json: one JSON document on stdout (nothing else is printed there)"


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
    """Print an error (one line on stderr) and return the exit to raise."""
    from rich.markup import escape

    from app.cli.common import console

    console.print(f"[red]error:[/] {escape(message)}", highlight=False)
    return typer.Exit(2)


def bound_to(role: Role, campaign: int | None, team: int | None, assessor: int | None) -> None:
    """Refuse ids that do not go with the role (before the database is opened): a team token needs --team, an
    assessor token --assessor, and only an organiser token takes --campaign."""
    needed = {Role.team: ("--team", team), Role.assessor: ("--assessor", assessor)}
    if role in needed and needed[role][1] is None:
        option = needed[role][0]
        raise _fail(f"--role {role.value} needs {option} ID (the {role.value}'s id)")
    for option, value, owner in (("--team", team, Role.team), ("--assessor", assessor, Role.assessor)):
        if value is not None and role is not owner:
            raise _fail(f"{option} is for --role {owner.value}, not --role {role.value}")
    if campaign is not None and role is not Role.organiser:
        raise _fail(f"--campaign is for --role organiser: a {role.value} token is bound to its {role.value}'s campaign")


def _when(moment: datetime | None) -> str | None:
    """A timestamp in ISO 8601 to the second, or None."""
    return moment.isoformat(timespec="seconds") if moment else None


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
    fmt: TextOrJson = typer.Option(TextOrJson.text, "--format", help=f"text: the token alone; {FORMAT_HELP}"),
) -> None:
    """Create a token and print it (only its hash is stored)."""
    from app.cli.common import open_database
    from app.services import tokens as lifecycle
    from app.services.auth import issue_token
    from app.services.errors import ServiceError
    from app.storage.audit import actor_of, set_actor
    from app.storage.database import session_scope
    from app.storage.models import Campaign
    from app.storage.models import Role as StoredRole

    lifetime = seconds_of(expires_in) if expires_in is not None else None
    bound_to(role, campaign, team, assessor)
    if revoke_previous and role is Role.organiser:
        raise _fail("--revoke-previous is for team and assessor tokens")
    database = open_database()
    try:
        with session_scope(database.sessions) as session:
            set_actor(session, actor_of("cli"))
            if campaign is not None and session.get(Campaign, campaign) is None:
                raise _fail(f"campaign {campaign} not found")
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
            created = {
                "id": row.id,
                "token": plain,
                "role": row.role.value,
                "campaign": row.campaign_id,
                "team": row.team_id,
                "assessor": row.assessor_id,
                "label": row.label,
                "expires": _when(row.expires_at),
            }
    except ServiceError as exc:
        raise _fail(exc.message) from None
    typer.echo(json.dumps(created, indent=2) if fmt is TextOrJson.json else plain)


@token.command("list")
def list_(
    campaign: int | None = typer.Option(None, help="Only the tokens bound to this campaign"),
    all_: bool = typer.Option(False, "--all", help="Also revoked and expired tokens"),
    fmt: TsvOrJson = typer.Option(TsvOrJson.tsv, "--format", help=f"tsv: columns with a header; {FORMAT_HELP}"),
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
        moment = now()
        listed = []
        for row in session.scalars(query):
            expired = row.expires_at is not None and row.expires_at <= moment
            state = "revoked" if row.revoked_at is not None else "expired" if expired else "active"
            if state == "active" or all_:
                listed.append(
                    {
                        "id": row.id,
                        "role": row.role.value,
                        "campaign": row.campaign_id,
                        "team": row.team_id,
                        "assessor": row.assessor_id,
                        "created": _when(row.created_at),
                        "expires": _when(row.expires_at),
                        "state": state,
                        "label": row.label,
                    }
                )
    if fmt is TsvOrJson.json:
        typer.echo(json.dumps(listed, indent=2))
        return
    typer.echo("id\trole\tcampaign\tteam\tassessor\tcreated\texpires\tstate\tlabel")
    for item in listed:
        typer.echo("\t".join("" if value is None else str(value) for value in item.values()))


@token.command("revoke")
def revoke(
    token_ids: list[int] = typer.Argument(..., metavar="ID...", help="Token ids (see `trecpool token list`)"),
    fmt: TextOrJson = typer.Option(TextOrJson.text, "--format", help=f"text: a line per token; {FORMAT_HELP}"),
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
            rows = [revoke_token(session, None, token_id) for token_id in token_ids]
            revoked = [
                {"id": row.id, "role": row.role.value, "label": row.label, "revoked": _when(row.revoked_at)}
                for row in rows
            ]
    except ServiceError as exc:
        raise _fail(exc.message) from None
    if fmt is TextOrJson.json:
        typer.echo(json.dumps(revoked, indent=2))
        return
    for item in revoked:
        typer.echo(f"revoked token {item['id']} ({item['role']} {item['label']})".rstrip())
