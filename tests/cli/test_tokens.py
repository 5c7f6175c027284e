"""`trecpool token create|list|revoke`: expiry, rotation, listing without secrets, revocation that takes effect."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner

from app.cli import cli
from app.config import get_settings
from app.services.auth import authenticate
from app.services.errors import Unauthenticated
from app.storage.database import make_engine, make_session_factory, session_scope
from app.storage.models import Assessor, AuditEvent, Campaign, TaskKind

runner = CliRunner()


@pytest.fixture
def cli_db(database_url, monkeypatch):  # type: ignore[no-untyped-def]
    """The CLI pointed at the test database; yields a session factory on it."""
    monkeypatch.setenv("DATABASE_URL", database_url)
    get_settings.cache_clear()
    engine = make_engine(database_url)
    yield make_session_factory(engine)
    engine.dispose()
    get_settings.cache_clear()


def _create(*args: str) -> str:
    result = runner.invoke(cli, ["token", "create", *args])
    assert result.exit_code == 0, result.output
    return result.stdout.strip().splitlines()[-1]


def _rows(*args: str) -> list[dict[str, str]]:
    """`trecpool token list` as dicts by column."""
    result = runner.invoke(cli, ["token", "list", *args])
    assert result.exit_code == 0, result.output
    header, *lines = [line for line in result.stdout.splitlines() if line]
    return [dict(zip(header.split("\t"), line.split("\t"), strict=True)) for line in lines]


def test_list_then_revoke_by_id(cli_db):
    with session_scope(cli_db) as session:
        campaign = Campaign(name=f"cli-tokens-{datetime.now(UTC).timestamp()}", task_kind=TaskKind.shots)
        session.add(campaign)
        session.flush()
        assessor = Assessor(campaign_id=campaign.id, name="cli")
        session.add(assessor)
        session.flush()
        campaign_id, assessor_id = campaign.id, assessor.id
    first = _create("--role", "assessor", "--assessor", str(assessor_id), "--label", "first")
    second = _create("--role", "assessor", "--assessor", str(assessor_id), "--expires-in", "12h")
    rows = _rows("--campaign", str(campaign_id))
    assert [(r["role"], r["assessor"], r["state"], r["label"]) for r in rows] == [
        ("assessor", str(assessor_id), "active", "first"),
        ("assessor", str(assessor_id), "active", ""),
    ]
    expires = datetime.fromisoformat(rows[1]["expires"])
    assert timedelta(hours=11, minutes=59) < expires - datetime.now(UTC) <= timedelta(hours=12)
    listing = runner.invoke(cli, ["token", "list"]).stdout
    assert first not in listing and second not in listing  # never the secrets

    result = runner.invoke(cli, ["token", "revoke", rows[0]["id"]])
    assert result.exit_code == 0, result.output
    assert f"revoked token {rows[0]['id']}" in result.stdout
    with cli_db() as session:
        with pytest.raises(Unauthenticated, match="revoked"):
            authenticate(session, first)
        assert authenticate(session, second).assessor_id == assessor_id
        (event,) = session.query(AuditEvent).filter_by(table_name="api_tokens", row_id=rows[0]["id"], action="update")
        assert event.actor == {"kind": "cli"} and event.before == {"revoked_at": None}
    # revoked tokens are listed only with --all
    assert [r["id"] for r in _rows("--campaign", str(campaign_id))] == [rows[1]["id"]]
    assert [r["state"] for r in _rows("--campaign", str(campaign_id), "--all")] == ["revoked", "active"]

    # rotation from the command line
    third = _create("--role", "assessor", "--assessor", str(assessor_id), "--revoke-previous")
    with cli_db() as session:
        with pytest.raises(Unauthenticated, match="revoked"):
            authenticate(session, second)
        assert authenticate(session, third).assessor_id == assessor_id


def test_bad_ids_and_durations_are_refused(cli_db):
    result = runner.invoke(cli, ["token", "revoke", "2147483000"])
    assert result.exit_code == 2 and "not found" in result.output
    result = runner.invoke(cli, ["token", "create", "--role", "organiser", "--expires-in", "soon"])
    assert result.exit_code == 2 and "duration" in result.output
    result = runner.invoke(cli, ["token", "create", "--role", "organiser", "--revoke-previous"])
    assert result.exit_code == 2


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["--role", "team"], "error: --role team needs --team ID (the team's id)"),
        (["--role", "assessor", "--label", "x"], "error: --role assessor needs --assessor ID (the assessor's id)"),
        (["--role", "organiser", "--team", "3"], "error: --team is for --role team, not --role organiser"),
        (
            ["--role", "team", "--team", "3", "--assessor", "4"],
            "error: --assessor is for --role assessor, not --role team",
        ),
        (
            ["--role", "team", "--team", "3", "--campaign", "1"],
            "error: --campaign is for --role organiser: a team token is bound to its team's campaign",
        ),
    ],
)
def test_ids_that_do_not_go_with_the_role_are_one_line_before_any_database(monkeypatch, args, line):
    monkeypatch.setenv("DATABASE_URL", "postgresql://nobody@127.0.0.1:9/none")  # never reached
    get_settings.cache_clear()
    try:
        result = runner.invoke(cli, ["token", "create", *args])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 2
    assert (result.stdout, result.stderr) == ("", line + "\n")


def test_an_unknown_campaign_is_one_line(cli_db):
    result = runner.invoke(cli, ["token", "create", "--role", "organiser", "--campaign", "2147483000"])
    assert result.exit_code == 2
    assert (result.stdout, result.stderr) == ("", "error: campaign 2147483000 not found\n")


def test_format_json_on_create_list_and_revoke(cli_db):
    with session_scope(cli_db) as session:
        campaign = Campaign(name=f"cli-json-{datetime.now(UTC).timestamp()}", task_kind=TaskKind.shots)
        session.add(campaign)
        session.flush()
        campaign_id = campaign.id
    result = runner.invoke(
        cli,
        ["token", "create", "--role", "organiser", "--campaign", str(campaign_id), "--label", "j", "--format", "json"],
    )
    assert result.exit_code == 0, result.output
    created = json.loads(result.stdout)
    assert {k: v for k, v in created.items() if k not in ("id", "token")} == {
        "role": "organiser",
        "campaign": campaign_id,
        "team": None,
        "assessor": None,
        "label": "j",
        "expires": None,
    }
    with cli_db() as session:
        assert authenticate(session, created["token"]).role.value == "organiser"

    listed = runner.invoke(cli, ["token", "list", "--campaign", str(campaign_id), "--format", "json"])
    assert listed.exit_code == 0, listed.output
    (row,) = json.loads(listed.stdout)
    assert created["token"] not in listed.stdout
    assert (row["id"], row["state"], row["label"], row["expires"]) == (created["id"], "active", "j", None)
    assert datetime.fromisoformat(row["created"]).tzinfo is not None

    revoked = runner.invoke(cli, ["token", "revoke", str(created["id"]), "--format", "json"])
    assert revoked.exit_code == 0, revoked.output
    (gone,) = json.loads(revoked.stdout)
    assert (gone["id"], gone["role"], gone["label"]) == (created["id"], "organiser", "j")
    assert datetime.fromisoformat(gone["revoked"]) <= datetime.now(UTC)
    again = runner.invoke(cli, ["token", "list", "--campaign", str(campaign_id), "--all", "--format", "json"])
    assert [r["state"] for r in json.loads(again.stdout)] == ["revoked"]
