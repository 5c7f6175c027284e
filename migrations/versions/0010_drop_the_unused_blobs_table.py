"""Drop the unused blobs table

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25 21:40:01.645679

0001 made `blobs` for generated artefacts kept with a campaign, but no code ever wrote or read it: reports and
figures are drawn from the snapshot when asked for. The upgrade refuses a table that holds rows (someone put them
there by hand), naming how many, rather than lose them; the downgrade makes the table again as 0001 made it, empty.
"""

import sqlalchemy as sa
from alembic import op

from app.storage.migrations import RowsInTheWay

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    rows = op.get_bind().execute(sa.text("SELECT count(*) FROM blobs")).scalar_one()
    if rows:
        raise RowsInTheWay(
            f"revision 0010 drops the blobs table, which nothing in trecpool reads, but it holds {rows} row(s) put "
            "there by hand: save them (pg_dump --table=blobs), delete them (DELETE FROM blobs) and upgrade again"
        )
    op.drop_index(op.f("ix_blobs_campaign_id"), table_name="blobs")
    op.drop_table("blobs")


def downgrade() -> None:
    op.create_table(
        "blobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("campaign_id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("media_type", sa.String(length=100), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["campaign_id"], ["campaigns.id"], name=op.f("fk_blobs_campaign_id_campaigns"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_blobs")),
        sa.UniqueConstraint("campaign_id", "name", name=op.f("uq_blobs_campaign_id_name")),
    )
    op.create_index(op.f("ix_blobs_campaign_id"), "blobs", ["campaign_id"], unique=False)
