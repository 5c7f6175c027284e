"""Migrations go up and down on a real PostgreSQL; the app refuses an outdated schema."""

from __future__ import annotations

from sqlalchemy import inspect

from app.storage import migrations
from app.storage.database import make_engine
from app.storage.models import Base


def test_upgrade_downgrade_upgrade(create_database):
    url = create_database()
    engine = make_engine(url)
    try:
        assert migrations.current_revision(engine) is None
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
        assert set(Base.metadata.tables) <= set(inspect(engine).get_table_names())
        migrations.downgrade(url, "base")
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
        migrations.upgrade(url)
        assert set(Base.metadata.tables) <= set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_models_match_the_migrations(database_url):
    """Autogenerate finds nothing to add: the initial revision covers the whole model."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    engine = make_engine(database_url)
    with engine.connect() as conn:
        diff = compare_metadata(
            MigrationContext.configure(conn, opts={"include_name": migrations.include_name}), Base.metadata
        )
    engine.dispose()
    assert diff == []


def test_check_schema_names_the_fix(create_database):
    engine = make_engine(create_database())
    try:
        migrations.check_schema(engine)
    except migrations.SchemaOutOfDate as exc:
        assert "trecpool db upgrade" in str(exc)
    else:
        raise AssertionError("an empty database passed the schema check")
    finally:
        engine.dispose()
