"""Migration 0015 (run file storage) upgrades a database with runs from 0014 and goes back."""

from __future__ import annotations

import hashlib
import zlib

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.services import run_arrays
from app.storage import migrations
from app.storage.database import make_engine

RUN_A = b"1 Q0 a 1 2.5 alpha\n1 Q0 b 2 1 alpha\n"
RUN_B = b"1 Q0 b 1 3 beta\n1 Q0 a 2 2 beta\n"
AT_0014 = """
INSERT INTO campaigns (id, name, description, task_kind, status, max_results, max_runs_per_team) VALUES
  (1, 'shots', '', 'shots', 'closed', 100, 5);
INSERT INTO topics (id, campaign_id, number, title, description) VALUES (11, 1, '1', 'one', '');
INSERT INTO teams (id, campaign_id, name) VALUES (1, 1, 'team a'), (2, 1, 'team b');
"""
RUNS_AT_0014 = """
INSERT INTO runs (id, campaign_id, team_id, name, tag, format, system_type, novelty, training_type, priority,
                  description, n_entries, n_topics, sha256, content) VALUES
  (1, 1, 1, 'alpha', 'alpha', 'trec', 'F', false, 'D', 1, '', 2, 1, '', :a),
  (2, 1, 2, 'beta', 'beta', 'trec', 'M', true, 'A', 1, '', 2, 1, '', :b),
  (3, 1, 2, 'alpha again', 'alpha', 'trec', 'M', true, 'A', 1, '', 2, 1, '', :a);
"""


def _columns(conn, table: str) -> set[str]:  # type: ignore[no-untyped-def]
    """The column names of a table."""
    return {c["name"] for c in inspect(conn).get_columns(table)}


def test_a_database_at_0014_with_runs_upgrades_to_0015_addressing_each_file_by_its_sha256(create_database):  # type: ignore[no-untyped-def]
    """0015: runs made before it are stored in PostgreSQL, addressed by the SHA-256 of their stored bytes (the two
    copies of one file share it), and read as before; content may be NULL only for runs stored elsewhere; the
    downgrade refuses while a file is elsewhere and otherwise restores 0014."""
    url = create_database()
    engine = make_engine(url)
    a, b = zlib.compress(RUN_A, 1), zlib.compress(RUN_B, 1)
    try:
        migrations.upgrade(url, "0014")
        with engine.begin() as conn:
            conn.execute(text(AT_0014))
            conn.execute(text(RUNS_AT_0014), {"a": a, "b": b})
        migrations.upgrade(url, "0015")
        assert migrations.current_revision(engine) == "0015"
        with engine.begin() as conn:
            rows = conn.execute(text("SELECT id, storage, storage_key FROM runs ORDER BY id")).all()
        key_a, key_b = hashlib.sha256(a).hexdigest(), hashlib.sha256(b).hexdigest()
        assert rows == [(1, "postgres", key_a), (2, "postgres", key_b), (3, "postgres", key_a)]
        with Session(engine) as session:
            assert list(run_arrays.stored_files(session, [2, 1])) == [("trec", RUN_B), ("trec", RUN_A)]
        with pytest.raises(IntegrityError), engine.begin() as conn:  # in PostgreSQL, a run's row holds its file
            conn.execute(text("UPDATE runs SET content = NULL WHERE id = 1"))
        with pytest.raises(IntegrityError), engine.begin() as conn:  # stored elsewhere, the row holds none
            conn.execute(text("UPDATE runs SET storage = 'dir:/x' WHERE id = 1"))
        with engine.begin() as conn:
            conn.execute(text("UPDATE runs SET storage = 'dir:/x', content = NULL WHERE id = 2"))
        with pytest.raises(RuntimeError, match="1 run file.*storage migrate --to postgres"):
            migrations.downgrade(url, "0014")
        with engine.begin() as conn:
            conn.execute(text("UPDATE runs SET storage = 'postgres', content = :b WHERE id = 2"), {"b": b})
        migrations.downgrade(url, "0014")
        with engine.connect() as conn:
            assert {"storage", "storage_key"} & _columns(conn, "runs") == set()
            assert conn.execute(text("SELECT content FROM runs ORDER BY id")).scalars().all() == [a, b, a]
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
    finally:
        engine.dispose()
