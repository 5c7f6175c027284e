"""moment pools and marking: proposed segments, assessors' marks, versioned moment ground truth (issue 14)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-23 02:00:00

`moment_pool_items` holds a moment pool's proposed segments (a `pools` row of kind `moments`); `moment_judgements`
an assessor's marked segments on one item (JSONB [[start, end], ...], empty = none relevant), audited like
judgements; `moment_truth_segments` the segments of a moment ground-truth version (a `qrels_versions` row of kind
`moments`). Nothing existing changes, so the upgrade moves no data.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "moment_pool_items",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("pool_id", sa.Integer(), nullable=False),
        sa.Column("topic_id", sa.Integer(), nullable=False),
        sa.Column("video_id", sa.Text(), nullable=False),
        sa.Column("start", sa.Double(), nullable=False),
        sa.Column("end", sa.Double(), nullable=False),
        sa.Column("best_rank", sa.Integer(), nullable=False),
        sa.Column("n_runs", sa.Integer(), nullable=False),
        sa.Column("judging_order", sa.Integer(), nullable=False),
        sa.CheckConstraint('start >= 0 AND "end" >= start', name="ck_moment_pool_items_valid_interval"),
        sa.ForeignKeyConstraint(
            ["pool_id"], ["pools.id"], name="fk_moment_pool_items_pool_id_pools", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["topic_id"], ["topics.id"], name="fk_moment_pool_items_topic_id_topics", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_moment_pool_items"),
        sa.UniqueConstraint(
            "pool_id", "topic_id", "judging_order", name="uq_moment_pool_items_pool_id_topic_id_judging_order"
        ),
    )
    op.create_table(
        "moment_judgements",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("item_id", sa.BigInteger(), nullable=False),
        sa.Column("assessor_id", sa.Integer(), nullable=False),
        sa.Column("segments", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("seconds_spent", sa.Double(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("jsonb_typeof(segments) = 'array'", name="ck_moment_judgements_segments_array"),
        sa.ForeignKeyConstraint(
            ["item_id"],
            ["moment_pool_items.id"],
            name="fk_moment_judgements_item_id_moment_pool_items",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["assessor_id"], ["assessors.id"], name="fk_moment_judgements_assessor_id_assessors", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_moment_judgements"),
        sa.UniqueConstraint("item_id", "assessor_id", name="uq_moment_judgements_item_id_assessor_id"),
    )
    op.create_index("ix_moment_judgements_assessor_id", "moment_judgements", ["assessor_id"])
    op.create_table(
        "moment_truth_segments",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("qrels_version_id", sa.Integer(), nullable=False),
        sa.Column("topic_id", sa.Integer(), nullable=False),
        sa.Column("video_id", sa.Text(), nullable=False),
        sa.Column("start", sa.Double(), nullable=False),
        sa.Column("end", sa.Double(), nullable=False),
        sa.CheckConstraint('start >= 0 AND "end" > start', name="ck_moment_truth_segments_valid_interval"),
        sa.ForeignKeyConstraint(
            ["qrels_version_id"],
            ["qrels_versions.id"],
            name="fk_moment_truth_segments_qrels_version_id_qrels_versions",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["topic_id"], ["topics.id"], name="fk_moment_truth_segments_topic_id_topics", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_moment_truth_segments"),
    )
    op.create_index("ix_moment_truth_segments_qrels_version_id", "moment_truth_segments", ["qrels_version_id"])
    # marks are verdicts: every insert, change and delete goes to the audit trail (0004's trigger function)
    op.execute(
        "CREATE TRIGGER trecpool_audit AFTER INSERT OR UPDATE OR DELETE ON moment_judgements "
        "FOR EACH ROW EXECUTE FUNCTION trecpool_audit()"
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS trecpool_audit ON moment_judgements")
    op.drop_index("ix_moment_truth_segments_qrels_version_id", table_name="moment_truth_segments")
    op.drop_table("moment_truth_segments")
    op.drop_index("ix_moment_judgements_assessor_id", table_name="moment_judgements")
    op.drop_table("moment_judgements")
    op.drop_table("moment_pool_items")
