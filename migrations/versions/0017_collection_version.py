"""collection version: a number each campaign's collection gets anew whenever its rows change

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-10 10:00:00

Run uploads check their shots against the campaign's collection in memory (`app/services/collection.py` keeps the
ids of a few collections per process), keyed by `campaigns.collection_version`:

* `collection_versions`, a sequence: every version is a value drawn from it, so no two states of any collection, even
  one that a rolled-back transaction made, share a version (a counter per campaign would reuse the number a rolled-back
  change took, and a process that cached that change would answer for the next one with it);
* `campaigns.collection_version` (bigint, drawn from the sequence for each campaign, the existing ones included);
* statement triggers on `collection_items` (insert, update, delete with their transition tables; truncate) draw a new
  version for every campaign whose rows the statement touched, so every writer bumps it: the collection upload, the
  archive import, hand-written SQL;
* the campaigns' audit trigger leaves the column out (a bump alone records no event: the statement that caused it
  is recorded by the collection's own summary trigger of 0009).
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

BUMP_FUNCTION = """
CREATE FUNCTION trecpool_collection_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        UPDATE campaigns SET collection_version = nextval('collection_versions');
    ELSIF TG_OP = 'INSERT' THEN
        UPDATE campaigns SET collection_version = nextval('collection_versions')
         WHERE id IN (SELECT campaign_id FROM new_rows);
    ELSIF TG_OP = 'DELETE' THEN
        UPDATE campaigns SET collection_version = nextval('collection_versions')
         WHERE id IN (SELECT campaign_id FROM old_rows);
    ELSE
        UPDATE campaigns SET collection_version = nextval('collection_versions')
         WHERE id IN (SELECT campaign_id FROM old_rows UNION SELECT campaign_id FROM new_rows);
    END IF;
    RETURN NULL;
END
$$;
"""
EVENTS = {
    "insert": "REFERENCING NEW TABLE AS new_rows",
    "update": "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
    "delete": "REFERENCING OLD TABLE AS old_rows",
}


def _audit_campaigns(*left_out: str) -> None:
    """The campaigns' audit row trigger again, leaving `left_out` columns out of the trail."""
    arguments = ", ".join(f"'{column}'" for column in left_out)
    op.execute("DROP TRIGGER IF EXISTS trecpool_audit ON campaigns")
    op.execute(
        "CREATE TRIGGER trecpool_audit AFTER INSERT OR UPDATE OR DELETE ON campaigns "
        f"FOR EACH ROW EXECUTE FUNCTION trecpool_audit({arguments})"
    )


def upgrade() -> None:
    op.execute("CREATE SEQUENCE collection_versions AS bigint")
    op.add_column(
        "campaigns",
        sa.Column(
            "collection_version", sa.BigInteger(), server_default=sa.text("nextval('collection_versions')"), nullable=False
        ),
    )
    op.execute("ALTER SEQUENCE collection_versions OWNED BY campaigns.collection_version")
    _audit_campaigns("collection_version")
    op.execute(BUMP_FUNCTION)
    for event, transition in EVENTS.items():  # a trigger with transition tables takes one event
        op.execute(
            f"CREATE TRIGGER trecpool_collection_version_{event} AFTER {event.upper()} ON collection_items "
            f"{transition} FOR EACH STATEMENT EXECUTE FUNCTION trecpool_collection_version()"
        )
    op.execute(
        "CREATE TRIGGER trecpool_collection_version_truncate AFTER TRUNCATE ON collection_items "
        "FOR EACH STATEMENT EXECUTE FUNCTION trecpool_collection_version()"
    )


def downgrade() -> None:
    for event in (*EVENTS, "truncate"):
        op.execute(f"DROP TRIGGER IF EXISTS trecpool_collection_version_{event} ON collection_items")
    op.execute("DROP FUNCTION IF EXISTS trecpool_collection_version()")
    _audit_campaigns()
    op.drop_column("campaigns", "collection_version")  # drops the sequence it owns
    op.execute("DROP SEQUENCE IF EXISTS collection_versions")
