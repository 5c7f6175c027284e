"""`trecpool db`: -h everywhere, `upgrade --wait` for a database that is not up, `revision -m` writing the next
numbered revision, a drifted database refused in one line; and the root alembic.ini driving plain `alembic`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from app.cli import cli
from app.config import get_settings
from app.storage import migrations
from app.storage.database import make_engine

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
runner = CliRunner()


@pytest.fixture
def database_env(monkeypatch):  # type: ignore[no-untyped-def]
    """Point DATABASE_URL (and the cached settings) at a URL for one test."""

    def point(url: str) -> None:
        monkeypatch.setenv("DATABASE_URL", url)
        get_settings.cache_clear()

    yield point
    get_settings.cache_clear()


def _copy_of_the_migrations(tmp_path: Path) -> Path:
    """A source-tree-like copy (alembic.ini, pyproject.toml, migrations/) to write revisions into."""
    shutil.copytree(migrations.MIGRATIONS_DIR, tmp_path / "migrations")
    shutil.copy(REPO / "alembic.ini", tmp_path / "alembic.ini")
    (tmp_path / "pyproject.toml").write_text("")
    return tmp_path / "migrations"


@pytest.mark.parametrize(
    "args", [["db", "-h"], ["db", "upgrade", "-h"], ["db", "revision", "-h"], ["db", "current", "-h"]]
)
def test_minus_h_is_help_on_db_and_its_commands(args):
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "Usage:" in result.output and "--help" in result.output


def test_upgrade_waits_for_the_database_saying_so_then_gives_up_with_one_error(tmp_path):
    """Nothing listens on the port: one line per failed attempt, then an error line and exit 1 after --wait."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "DATABASE_URL": f"postgresql://postgres@127.0.0.1:{port}/nothing", "COLUMNS": "400"}
    done = subprocess.run(
        [str(BIN / "trecpool"), "db", "upgrade", "--wait", "2.5"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) >= 3, done.stderr
    assert all(line.startswith("waiting for the database (") and f"127.0.0.1:{port}" in line for line in lines[:-1])
    assert lines[-1].startswith(f"error: cannot reach PostgreSQL at 127.0.0.1:{port}")
    assert lines[-1].endswith("s)") and "gave up after waiting" in lines[-1]
    assert done.stdout == ""


def test_revision_writes_the_next_numbered_file_from_the_template(tmp_path, monkeypatch):
    folder = _copy_of_the_migrations(tmp_path)
    monkeypatch.setattr(migrations, "MIGRATIONS_DIR", folder)
    head = migrations.head_revision()
    result = runner.invoke(cli, ["db", "revision", "-m", "Add the teams' e-mail, for contact!"])
    assert result.exit_code == 0, result.output
    number = f"{int(head) + 1:04d}"
    written = Path(result.stdout.strip())
    assert written == folder / "versions" / f"{number}_add_the_teams_e_mail_for_contact.py"
    body = written.read_text()
    assert body.startswith('"""Add the teams\' e-mail, for contact!\n\nRevision ID: ' + number)
    assert f"revision = '{number}'" in body and f"down_revision = '{head}'" in body
    assert "def upgrade() -> None:" in body and "def downgrade() -> None:" in body
    again = runner.invoke(cli, ["db", "revision", "--message", "and another"])
    assert Path(again.stdout.strip()).name == f"{int(number) + 1:04d}_and_another.py"
    assert runner.invoke(cli, ["db", "revision", "-m", "  "]).exit_code == 1


def test_revision_refuses_an_installed_package(tmp_path, monkeypatch):
    folder = _copy_of_the_migrations(tmp_path)
    (tmp_path / "pyproject.toml").unlink()
    monkeypatch.setattr(migrations, "MIGRATIONS_DIR", folder)
    result = runner.invoke(cli, ["db", "revision", "-m", "x"])
    assert result.exit_code == 1 and "is not in a source tree" in result.stderr
    assert sorted(p.name for p in (folder / "versions").glob("*.py")) == sorted(
        p.name for p in (REPO / "migrations" / "versions").glob("*.py")
    )


def test_upgrade_of_a_drifted_database_is_one_error_line(create_database, database_env):
    from alembic import command

    url = create_database()
    migrations.upgrade(url, "0003")
    engine = make_engine(url)
    with engine.begin() as conn:
        conn.execute(text("CREATE TABLE audit_events (id bigint PRIMARY KEY)"))
    engine.dispose()
    command.stamp(migrations.alembic_config(url), "0006")
    database_env(url)
    result = runner.invoke(cli, ["db", "upgrade", "--wait", "0"])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: the database is at revision 0006 but lacks the audit trail")


def test_plain_alembic_from_the_repository_root_upgrades_and_numbers_revisions(create_database, tmp_path):
    """The root alembic.ini: `alembic upgrade head` on DATABASE_URL, and `alembic revision -m` numbering NNNN (run on
    a copy of the tree, so this checkout gets no new file)."""
    url = create_database()
    env = {**os.environ, "DATABASE_URL": url}
    alembic = str(BIN / "alembic")
    upgraded = subprocess.run([alembic, "upgrade", "head"], cwd=REPO, env=env, capture_output=True, text=True)
    assert upgraded.returncode == 0, upgraded.stderr
    current = subprocess.run([alembic, "current"], cwd=REPO, env=env, capture_output=True, text=True)
    assert current.stdout.strip() == f"{migrations.head_revision()} (head)"
    unset = {k: v for k, v in env.items() if k not in ("DATABASE_URL", "TRECPOOL_DATABASE_URL")}
    refused = subprocess.run([alembic, "current"], cwd=REPO, env=unset, capture_output=True, text=True)
    assert refused.returncode != 0 and "DATABASE_URL is unset" in refused.stderr

    folder = _copy_of_the_migrations(tmp_path)
    made = subprocess.run(
        [alembic, "revision", "-m", "a new table"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert made.returncode == 0, made.stderr
    number = f"{int(migrations.head_revision()) + 1:04d}"
    written = folder / "versions" / f"{number}_a_new_table.py"
    assert f"revision = '{number}'" in written.read_text()
