"""Migration 0014 (campaign series and progress topics) upgrades a database with data from 0013 and goes back."""

from __future__ import annotations

import pytest
from sqlalchemy import inspect, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.services import sealing
from app.storage import migrations
from app.storage.database import make_engine

AT_0013 = """
INSERT INTO campaigns (id, name, description, task_kind, status, max_results, max_runs_per_team) VALUES
  (1, 'avs 2022', '', 'shots', 'evaluated', 100, 5), (2, 'avs 2023', '', 'shots', 'closed', 100, 5);
INSERT INTO topics (id, campaign_id, number, title, description) VALUES
  (11, 1, '1', 'one', ''), (12, 1, '101', 'progress', ''), (21, 2, '101', 'progress', '');
INSERT INTO pools (id, campaign_id, kind, params, seed) VALUES
  (1, 1, 'depth', '{"strata": [[1, 2, 1.0]], "depth": 2, "run_ids": []}', 7);
INSERT INTO pool_items (id, pool_id, topic_id, docno, stratum, sampled, best_rank, n_runs, judging_order) VALUES
  (1, 1, 12, 's1', 1, true, 1, 1, 0);
INSERT INTO qrels_versions (id, campaign_id, label, kind, source, pool_id, n_entries) VALUES
  (1, 1, 'final', 'trec', 'cut', 1, 2);
INSERT INTO qrels_entries (qrels_version_id, topic_id, docno, stratum, grade) VALUES
  (1, 11, 's1', NULL, 1), (1, 12, 's1', NULL, 1);
"""


def _columns(conn, table: str) -> set[str]:  # type: ignore[no-untyped-def]
    """The column names of a table."""
    return {c["name"] for c in inspect(conn).get_columns(table)}


def test_a_database_at_0013_upgrades_to_0014_with_no_series_and_seals_only_what_a_set_holds(create_database):  # type: ignore[no-untyped-def]
    """0014: campaigns made before it belong to no series, topics are main topics and pools the campaigns' own, so
    nothing is sealed; a judgement copied by a top-up pool can say where it came from (NULL for the others); a series,
    its sets and members are audited; marking a topic a progress topic of an
    unreleased set seals the version judging it until the set is released; the downgrade drops it all."""
    url = create_database()
    engine = make_engine(url)
    try:
        migrations.upgrade(url, "0013")
        with engine.begin() as conn:
            conn.execute(text(AT_0013))
        migrations.upgrade(url, "0014")
        assert migrations.current_revision(engine) == "0014"
        with engine.begin() as conn:
            assert conn.execute(text("SELECT DISTINCT series_id FROM campaigns")).scalars().all() == [None]
            assert conn.execute(text("SELECT DISTINCT progress_set FROM topics")).scalars().all() == [None]
            assert conn.execute(text("SELECT series_set_id FROM pools")).scalars().all() == [None]
            conn.execute(
                text("INSERT INTO judgements (id, pool_item_id, round, verdict, grade) VALUES (1, 1, 1, 'relevant', 1)")
            )
            conn.execute(
                text(
                    "INSERT INTO judgements (id, pool_item_id, round, verdict, grade, reused_from) "
                    """VALUES (2, 1, 2, 'relevant', 1, '{"pool_id": 1, "kind": "human"}')"""
                )
            )
            found = conn.execute(text("SELECT reused_from FROM judgements ORDER BY id")).scalars().all()
            assert found == [None, {"pool_id": 1, "kind": "human"}]  # a verdict given on the item itself: NULL
        with Session(engine) as session:
            assert sealing.sealed_sets_of_version(session, 1) == []
            assert sealing.sealed_topics(session, 1) == {}
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO series (id, name) VALUES (5, 'avs-progress')"))
            conn.execute(text("INSERT INTO series_topic_sets (id, series_id, name) VALUES (3, 5, 'A')"))
            conn.execute(text("UPDATE campaigns SET series_id = 5"))
            conn.execute(text("UPDATE topics SET progress_set = 'A' WHERE number = '101'"))
            audited = conn.execute(
                text("SELECT table_name, action FROM audit_events WHERE table_name LIKE 'series%' ORDER BY id")
            ).all()
            assert audited == [("series", "insert"), ("series_topic_sets", "insert")]
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(text("INSERT INTO series_topic_sets (series_id, name) VALUES (5, 'A')"))  # one set A
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(text("INSERT INTO series (name) VALUES ('avs-progress')"))  # names are unique
        with Session(engine) as session:
            assert sealing.sealed_sets_of_version(session, 1) == ["A"]
            assert sealing.sealed_numbers_of_version(session, 1) == ["101"]
            assert sealing.sealed_topics(session, 2) == {21: ("101", "A")}
        with engine.begin() as conn:
            conn.execute(text("UPDATE series_topic_sets SET released_at = now()"))
        with Session(engine) as session:
            assert sealing.sealed_sets_of_version(session, 1) == []
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM series"))  # the campaigns stay, out of any series
            assert conn.execute(text("SELECT count(*) FROM campaigns WHERE series_id IS NULL")).scalar() == 2
        migrations.downgrade(url, "0013")
        with engine.connect() as conn:
            assert "series_id" not in _columns(conn, "campaigns")
            assert "progress_set" not in _columns(conn, "topics")
            assert "series_set_id" not in _columns(conn, "pools")
            assert "reused_from" not in _columns(conn, "judgements")
            assert conn.execute(text("SELECT count(*) FROM judgements")).scalar() == 2
            assert not inspect(conn).has_table("series")
            assert conn.execute(text("SELECT count(*) FROM qrels_entries")).scalar() == 2
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
    finally:
        engine.dispose()
