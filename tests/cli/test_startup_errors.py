"""Start-up errors are one clear line on stderr with exit status 1, never a traceback."""

from __future__ import annotations

import socket

import pytest
from click.testing import CliRunner
from sqlalchemy import make_url

from app.cli import cli
from app.config import get_settings


def _closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _serve_with(monkeypatch: pytest.MonkeyPatch, url: str, *args: str) -> str:
    """Run `trecpool serve` with DATABASE_URL set to `url`; return its output after checking it failed cleanly."""
    monkeypatch.setenv("DATABASE_URL", url)
    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(cli, ["serve", "--port", str(_closed_port()), *args])
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


def test_unreachable_database(monkeypatch):
    line = _serve_with(monkeypatch, f"postgresql://postgres@127.0.0.1:{_closed_port()}/trecpool", "--wait", "0")
    assert "cannot reach PostgreSQL at 127.0.0.1:" in line and "DATABASE_URL" in line


@pytest.mark.parametrize("url", ["mysql://user@localhost/db", "sqlite:///x.db"])
def test_wrong_url_scheme(monkeypatch, url):
    assert "needs PostgreSQL" in _serve_with(monkeypatch, url)


def test_not_a_url(monkeypatch):
    assert "not a database URL" in _serve_with(monkeypatch, "localhost:5432")


def test_missing_database(monkeypatch, pg_admin_url):
    url = make_url(pg_admin_url).set(database="trecpool_no_such_db").render_as_string(hide_password=False)
    line = _serve_with(monkeypatch, url)
    assert "database 'trecpool_no_such_db' does not exist" in line and "createdb" in line


def test_outdated_schema(monkeypatch, create_database):
    assert "trecpool db upgrade" in _serve_with(monkeypatch, create_database())
