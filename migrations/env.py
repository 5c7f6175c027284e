"""Alembic environment: migrations run online against the configured URL.

From code (`trecpool db upgrade`, app/storage/migrations.py) the URL or an open connection comes in the config;
from the repository root (`alembic upgrade head`, `alembic revision -m ...` with the root alembic.ini) it is
DATABASE_URL. Before an upgrade or downgrade, databases made while released revisions were still placeholders are
made whole (migrations.repair_released_revisions); new revisions are numbered NNNN (migrations.number_revision).
"""

from logging.config import fileConfig

from alembic import context
from sqlalchemy import create_engine, pool

from app.storage.database import normalise_url
from app.storage.migrations import changes_schema, include_name, number_revision, repair_released_revisions
from app.storage.models import Base

config = context.config
target_metadata = Base.metadata
if config.config_file_name is not None and config.file_config.has_section("loggers"):
    fileConfig(config.config_file_name, disable_existing_loggers=False)  # the alembic command's own output


def database_url() -> str:
    """The URL in the config (set by trecpool), else DATABASE_URL (the alembic command from the repository root)."""
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        from app.config import get_settings

        url = get_settings().database_url
    if not url:
        raise SystemExit(
            "DATABASE_URL is unset: set it to postgresql://user@host:5432/dbname (or run `trecpool db upgrade`, "
            "which also starts the embedded database)"
        )
    return normalise_url(url)


def migrate(connection) -> None:  # type: ignore[no-untyped-def]
    """Run the command's migrations in one transaction, the database made whole first when it is changed."""
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        compare_type=True,
        include_name=include_name,
        process_revision_directives=number_revision,
    )
    with context.begin_transaction():
        if changes_schema(context.get_context()):
            repair_released_revisions(context.get_context(), context.script)
        context.run_migrations()


def run_migrations_online() -> None:
    """Migrate on the connection the caller gave, else on a fresh one to the configured URL."""
    connectable = config.attributes.get("connection")
    if connectable is not None:
        migrate(connectable)
        return
    engine = create_engine(database_url(), poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            migrate(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported; give a database URL")
run_migrations_online()
