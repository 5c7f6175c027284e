"""`trecpool token create|list|revoke`: expiry, rotation, listing without secrets, revocation that takes effect."""

from __future__ import annotations

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
