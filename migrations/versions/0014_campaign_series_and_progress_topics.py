"""campaign series and progress topics: a series of campaigns shares progress topics in named sets, sealed until
released; a pool may be a series pool of one set

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01 10:00:00

Issue 27 (TRECVID's Progress task):

* `series`: a campaign series (e.g. `avs-progress`), named uniquely.
* `campaigns.series_id`: the series a campaign belongs to (NULL: none); a series' campaign is never deleted with it.
* `series_topic_sets`: the named sets of a series' progress topics (e.g. A, B) and when the organiser released each
  (NULL: sealed, so nothing derived from its judgements reaches a team or the public).
* `topics.progress_set`: the progress set a topic belongs to (NULL: the campaign's own main topic).
* `pools.series_set_id`: a series pool, built over the runs of several campaigns of the series for one set (NULL:
  the campaign's own pool).
* `judgements.reused_from`: a top-up pool's verdict copied from an earlier pool of the series, where it came from
  originally (the settling judgement's id, round, pool, campaign, assessor and its kind, and when it was given); NULL
  for a verdict given on the item itself. A copy of a copy names the original.

`series` and `series_topic_sets` are audited like the other state (the row trigger of 0004/0009).
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None

AUDITED = ("series", "series_topic_sets")


def upgrade() -> None:
    op.create_table(
        "series",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False, server_default=sa.text("''")),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_series")),
        sa.UniqueConstraint("name", name=op.f("uq_series_name")),
    )
    op.create_table(
        "series_topic_sets",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("series_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("released_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["series_id"], ["series.id"], name=op.f("fk_series_topic_sets_series_id_series"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_series_topic_sets")),
        sa.UniqueConstraint("series_id", "name", name=op.f("uq_series_topic_sets_series_id_name")),
    )
    op.add_column("campaigns", sa.Column("series_id", sa.Integer(), nullable=True))
    op.create_foreign_key(
        op.f("fk_campaigns_series_id_series"), "campaigns", "series", ["series_id"], ["id"], ondelete="SET NULL"
    )
    op.create_index(op.f("ix_campaigns_series_id"), "campaigns", ["series_id"])
    op.add_column("topics", sa.Column("progress_set", sa.String(length=64), nullable=True))
    op.add_column("pools", sa.Column("series_set_id", sa.Integer(), nullable=True))
    op.create_foreign_key(
        op.f("fk_pools_series_set_id_series_topic_sets"),
        "pools",
        "series_topic_sets",
        ["series_set_id"],
        ["id"],
        ondelete="SET NULL",
    )
    op.add_column("judgements", sa.Column("reused_from", postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    for table in AUDITED:
        op.execute(
            f"CREATE TRIGGER trecpool_audit AFTER INSERT OR UPDATE OR DELETE ON {table} "
            "FOR EACH ROW EXECUTE FUNCTION trecpool_audit()"
        )


def downgrade() -> None:
    for table in AUDITED:
        op.execute(f"DROP TRIGGER IF EXISTS trecpool_audit ON {table}")
    op.drop_column("judgements", "reused_from")
    op.drop_constraint(op.f("fk_pools_series_set_id_series_topic_sets"), "pools", type_="foreignkey")
    op.drop_column("pools", "series_set_id")
    op.drop_column("topics", "progress_set")
    op.drop_index(op.f("ix_campaigns_series_id"), table_name="campaigns")
    op.drop_constraint(op.f("fk_campaigns_series_id_series"), "campaigns", type_="foreignkey")
    op.drop_column("campaigns", "series_id")
    op.drop_table("series_topic_sets")
    op.drop_table("series")
