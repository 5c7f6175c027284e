"""token lifecycle (expiry, one-time judging links) and the audit trail (a trigger on every audited table)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 22:40:00

The audit trigger records every insert, update and delete of the audited tables in `audit_events`, whatever wrote
them (ORM, bulk SQL, the job workers): before and after hold the changed columns only, minus the columns listed per
table (secrets, large blobs and progress counters). Who made the change is the JSON in the transaction-local setting
`trecpool.actor` (set by the application, app/storage/audit.py), else {"kind": "system"}.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None

# table -> columns left out of the trail (secrets, large blobs, progress reports)
AUDITED = {
    "campaigns": (),
    "teams": (),
    "assessors": (),
    "api_tokens": ("token_hash",),
    "judge_links": ("token_hash",),
    "pools": (),
    "assignments": (),
    "judgements": (),
    "qrels_versions": (),
    "evaluations": ("progress", "heartbeat_at"),
    "analysis_jobs": ("progress", "heartbeat_at", "result"),
    "leaderboard_snapshots": ("content",),
}

AUDIT_FUNCTION = """
CREATE FUNCTION trecpool_audit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    old_row jsonb;
    new_row jsonb;
    row_data jsonb;
    before_cols jsonb;
    after_cols jsonb;
    campaign integer;
    left_out text[] := coalesce(TG_ARGV, '{}'::text[]);
    actor jsonb := coalesce(nullif(current_setting('trecpool.actor', true), '')::jsonb, '{"kind": "system"}');
BEGIN
    IF TG_OP <> 'INSERT' THEN old_row := to_jsonb(OLD) - left_out; END IF;
    IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(NEW) - left_out; END IF;
    IF TG_OP = 'UPDATE' THEN
        SELECT jsonb_object_agg(o.key, o.value), jsonb_object_agg(o.key, n.value)
          INTO before_cols, after_cols
          FROM jsonb_each(old_row) o JOIN jsonb_each(new_row) n ON n.key = o.key
         WHERE o.value IS DISTINCT FROM n.value;
        IF before_cols IS NULL THEN
            RETURN NULL;  -- only left-out columns changed
        END IF;
    ELSE
        before_cols := old_row;
        after_cols := new_row;
    END IF;
    row_data := coalesce(new_row, old_row);
    IF TG_TABLE_NAME = 'campaigns' THEN
        campaign := (row_data->>'id')::integer;
    ELSIF row_data ? 'campaign_id' THEN
        campaign := (row_data->>'campaign_id')::integer;
    ELSIF row_data ? 'pool_id' THEN
        SELECT p.campaign_id INTO campaign FROM pools p WHERE p.id = (row_data->>'pool_id')::integer;
    ELSIF row_data ? 'pool_item_id' THEN
        SELECT p.campaign_id INTO campaign FROM pool_items i JOIN pools p ON p.id = i.pool_id
         WHERE i.id = (row_data->>'pool_item_id')::bigint;
    ELSIF row_data ? 'assessor_id' THEN
        SELECT a.campaign_id INTO campaign FROM assessors a WHERE a.id = (row_data->>'assessor_id')::integer;
    END IF;
    INSERT INTO audit_events (campaign_id, table_name, row_id, action, actor, before, after)
    VALUES (campaign, TG_TABLE_NAME, row_data->>'id', lower(TG_OP), actor, before_cols, after_cols);
    RETURN NULL;
END
$$;
"""


def upgrade() -> None:
    op.add_column("api_tokens", sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True))
    op.create_index("ix_api_tokens_campaign_id", "api_tokens", ["campaign_id"])
    op.add_column("judgement_changes", sa.Column("changed_by_token_id", sa.Integer(), nullable=True))
    op.create_foreign_key(
        "fk_judgement_changes_changed_by_token_id_api_tokens",
        "judgement_changes",
        "api_tokens",
        ["changed_by_token_id"],
        ["id"],
        ondelete="SET NULL",
    )
    op.create_table(
        "judge_links",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("assessor_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("session_token_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["assessor_id"], ["assessors.id"], name="fk_judge_links_assessor_id_assessors", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["session_token_id"],
            ["api_tokens.id"],
            name="fk_judge_links_session_token_id_api_tokens",
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_judge_links"),
        sa.UniqueConstraint("token_hash", name="uq_judge_links_token_hash"),
    )
    op.create_index("ix_judge_links_assessor_id", "judge_links", ["assessor_id"])
    op.create_table(
        "audit_events",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=True),
        sa.Column("table_name", sa.String(length=64), nullable=False),
        sa.Column("row_id", sa.Text(), nullable=True),
        sa.Column("action", sa.String(length=8), nullable=False),
        sa.Column("actor", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("before", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("after", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_audit_events"),
    )
    op.create_index("ix_audit_events_campaign", "audit_events", ["campaign_id", "id"])
    op.execute(AUDIT_FUNCTION)
    for table, left_out in AUDITED.items():
        arguments = ", ".join(f"'{column}'" for column in left_out)
        op.execute(
            f"CREATE TRIGGER trecpool_audit AFTER INSERT OR UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION trecpool_audit({arguments})"
        )


def downgrade() -> None:
    for table in AUDITED:
        op.execute(f"DROP TRIGGER IF EXISTS trecpool_audit ON {table}")
    op.execute("DROP FUNCTION IF EXISTS trecpool_audit()")
    op.drop_index("ix_audit_events_campaign", table_name="audit_events")
    op.drop_table("audit_events")
    op.drop_index("ix_judge_links_assessor_id", table_name="judge_links")
    op.drop_table("judge_links")
    op.drop_constraint("fk_judgement_changes_changed_by_token_id_api_tokens", "judgement_changes", type_="foreignkey")
    op.drop_column("judgement_changes", "changed_by_token_id")
    op.drop_index("ix_api_tokens_campaign_id", table_name="api_tokens")
    op.drop_column("api_tokens", "expires_at")
