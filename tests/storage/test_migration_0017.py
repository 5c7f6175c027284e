"""Migration 0017 (collection version) gives every campaign of a database with data its own version, draws a new one
for exactly the campaigns a statement on collection_items touches without an audit event of its own, and goes back."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Connection, inspect, text

from app.storage import migrations
from app.storage.database import make_engine

AT_0016 = """
INSERT INTO campaigns (id, name, description, task_kind, status, max_results, max_runs_per_team) VALUES
  (1, 'with a collection', '', 'shots', 'open', 1000, 5),
  (2, 'another', '', 'shots', 'open', 1000, 5),
  (3, 'without', '', 'shots', 'draft', 1000, 5);
INSERT INTO collection_items (campaign_id, shot_id, video_id, start, "end")
  SELECT c, 'shot' || s || '_1', 'v' || s, 0, 1 FROM generate_series(1, 2) c, generate_series(1, 1000) s;
"""
NEW_CAMPAIGN = """
INSERT INTO campaigns (id, name, description, task_kind, status, max_results, max_runs_per_team)
VALUES (4, 'new', '', 'shots', 'draft', 1000, 5)
"""
VERSIONS = "SELECT id, collection_version FROM campaigns ORDER BY id"
AUDITED = "SELECT count(*) FROM audit_events WHERE table_name = :t"


def _versions(conn: Connection) -> dict[int, int]:
    """Each campaign's collection version."""
    return {campaign: version for campaign, version in conn.execute(text(VERSIONS))}


def test_a_database_at_0016_with_collections_upgrades_and_goes_back(create_database: Callable[[], str]) -> None:
    url = create_database()
    engine = make_engine(url)
    try:
        migrations.upgrade(url, "0016")
        with engine.begin() as conn:
            conn.execute(text(AT_0016))
            shots = conn.execute(text("SELECT count(*) FROM collection_items")).scalar()
        migrations.upgrade(url, "0017")
        with engine.begin() as conn:
            first = _versions(conn)
            assert len(set(first.values())) == 3  # each campaign its own, drawn from the sequence
            assert conn.execute(text("SELECT count(*) FROM collection_items")).scalar() == shots == 2000
            campaign_events = conn.execute(text(AUDITED), {"t": "campaigns"}).scalar()
            conn.execute(text("DELETE FROM collection_items WHERE campaign_id = 1 AND shot_id = 'shot1_1'"))
            second = _versions(conn)
            assert second[1] > max(first.values()) and (second[2], second[3]) == (first[2], first[3])
            conn.execute(text("UPDATE campaigns SET description = 'changed' WHERE id = 2"))  # still audited
            assert conn.execute(text(AUDITED), {"t": "campaigns"}).scalar() == campaign_events + 1
            # the insert before the upgrade (one event per campaign) and the delete: the bump recorded nothing more
            assert conn.execute(text(AUDITED), {"t": "collection_items"}).scalar() == 3
            conn.execute(text(NEW_CAMPAIGN))
            new = conn.execute(text("SELECT collection_version FROM campaigns WHERE name = 'new'")).scalar()
            assert new is not None and new > second[1]
        migrations.downgrade(url, "0016")
        with engine.begin() as conn:
            assert "collection_version" not in {c["name"] for c in inspect(conn).get_columns("campaigns")}
            assert conn.execute(text("SELECT to_regclass('collection_versions')")).scalar() is None
            triggers = conn.execute(
                text("SELECT tgname FROM pg_trigger WHERE tgrelid = 'collection_items'::regclass AND NOT tgisinternal")
            ).scalars()
            assert not [t for t in triggers if t.startswith("trecpool_collection_version")]
            before = conn.execute(text(AUDITED), {"t": "campaigns"}).scalar()
            conn.execute(text("UPDATE campaigns SET description = 'again' WHERE id = 3"))
            assert conn.execute(text(AUDITED), {"t": "campaigns"}).scalar() == before + 1
            conn.execute(text("DELETE FROM collection_items WHERE campaign_id = 2"))
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
    finally:
        engine.dispose()
