"""Migration 0018 (evaluation block parts) upgrades a database with a running evaluation from 0017 and goes back."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError

from app.storage import migrations
from app.storage.database import make_engine

AT_0017 = """
INSERT INTO campaigns (id, name, description, task_kind, status, max_results, max_runs_per_team) VALUES
  (1, 'shots', '', 'shots', 'closed', 100, 5);
INSERT INTO evaluations (id, campaign_id, status, progress, measures, attempts) VALUES
  (7, 1, 'running', 0.1, '{"names": ["xinfAP"], "blocks": {"n": 2, "done": 0}}', 1),
  (8, 1, 'done', 1.0, '{"names": ["AP"]}', 1);
"""


def test_a_database_at_0017_with_evaluations_upgrades_to_0018_and_back(create_database):  # type: ignore[no-untyped-def]
    """0018 adds `evaluation_block_parts`, one row per (evaluation, block), deleted with its evaluation; the
    evaluations are untouched; the downgrade drops the table and keeps them."""
    url = create_database()
    engine = make_engine(url)
    try:
        migrations.upgrade(url, "0017")
        with engine.begin() as conn:
            conn.execute(text(AT_0017))
        migrations.upgrade(url, "0018")
        assert migrations.current_revision(engine) == "0018"
        with engine.begin() as conn:
            assert {c["name"] for c in inspect(conn).get_columns("evaluation_block_parts")} == {
                "evaluation_id",
                "block",
                "data",
            }
            conn.execute(
                text("INSERT INTO evaluation_block_parts VALUES (7, 0, '\\x01'), (7, 1, '\\x02'), (8, 0, '\\x03')")
            )
        with pytest.raises(IntegrityError), engine.begin() as conn:  # one row per block
            conn.execute(text("INSERT INTO evaluation_block_parts VALUES (7, 1, '\\x04')"))
        with pytest.raises(IntegrityError), engine.begin() as conn:  # of an evaluation that exists
            conn.execute(text("INSERT INTO evaluation_block_parts VALUES (99, 0, '\\x04')"))
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM evaluations WHERE id = 8"))
            kept = conn.execute(text("SELECT evaluation_id, block, data FROM evaluation_block_parts ORDER BY 2"))
            assert [(e, b, bytes(d)) for e, b, d in kept] == [(7, 0, b"\x01"), (7, 1, b"\x02")]
        migrations.downgrade(url, "0017")
        with engine.connect() as conn:
            assert "evaluation_block_parts" not in inspect(conn).get_table_names()
            assert conn.execute(text("SELECT id, status FROM evaluations")).all() == [(7, "running")]
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
    finally:
        engine.dispose()
