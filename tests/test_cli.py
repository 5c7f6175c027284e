"""The command line: db upgrade, token create, and refusal to serve on an outdated schema."""

from __future__ import annotations

from click.testing import CliRunner

from app.cli import cli
from app.config import get_settings

runner = CliRunner()


def _env(monkeypatch, url: str) -> None:
    monkeypatch.setenv("DATABASE_URL", url)
    get_settings.cache_clear()


def test_serve_refuses_outdated_schema_then_db_upgrade_fixes_it(create_database, monkeypatch):
    _env(monkeypatch, create_database())
    result = runner.invoke(cli, ["serve"])
    assert result.exit_code == 1
    assert "trecpool db upgrade" in result.output
    result = runner.invoke(cli, ["db", "upgrade"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["db", "current"])
    assert result.output.splitlines()[0].split()[-1] == result.output.splitlines()[1].split()[-1]
    get_settings.cache_clear()


def test_token_create_prints_a_working_token(database_url, monkeypatch):
    _env(monkeypatch, database_url)
    result = runner.invoke(cli, ["token", "create", "--role", "organiser", "--label", "cli"])
    assert result.exit_code == 0, result.output
    token = result.stdout.strip().splitlines()[-1]
    assert token.startswith("tp_")
    from app.services.auth import authenticate
    from app.storage.database import make_engine, make_session_factory

    engine = make_engine(database_url)
    with make_session_factory(engine)() as session:
        assert authenticate(session, token).role.value == "organiser"
    engine.dispose()
    result = runner.invoke(cli, ["token", "create", "--role", "team", "--team", "999999"])
    assert result.exit_code == 2
    get_settings.cache_clear()
