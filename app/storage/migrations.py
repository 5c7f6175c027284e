"""Schema migrations (Alembic) run from code, and the check that the schema is current."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine

from app.storage.database import normalise_url

MIGRATIONS_DIR = Path(__file__).resolve().parents[1] / "migrations"  # package data: works installed too


class SchemaOutOfDate(RuntimeError):
    """The database schema is not at the revision this code expects."""


def alembic_config(url: str) -> Config:
    """An Alembic config pointing at this project's migrations and `url`."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.set_main_option("sqlalchemy.url", normalise_url(url).replace("%", "%%"))
    return config


def include_name(name: str | None, type_: str, parent_names: object) -> bool:
    """Whether autogenerate compares a schema object: procrastinate's queue tables (migration 0003) are not ours."""
    return not (type_ == "table" and name is not None and name.startswith("procrastinate_"))


def upgrade(url: str, revision: str = "head") -> None:
    """Apply migrations up to `revision`."""
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    """Revert migrations down to `revision`."""
    command.downgrade(alembic_config(url), revision)


def head_revision() -> str:
    """The newest revision in the migrations folder."""
    script = ScriptDirectory(str(MIGRATIONS_DIR))
    head = script.get_current_head()
    assert head is not None, "no migrations found"
    return head


def current_revision(engine: Engine) -> str | None:
    """The revision the database is at, or None for an empty database."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def check_schema(engine: Engine) -> None:
    """Raise SchemaOutOfDate, naming the fix, unless the database is at the head revision."""
    current, head = current_revision(engine), head_revision()
    if current != head:
        raise SchemaOutOfDate(
            f"database schema is at revision {current or 'none (empty database)'}, this code needs {head}: "
            "run `trecpool db upgrade` first"
        )
