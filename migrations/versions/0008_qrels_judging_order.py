"""qrels_versions.judging_order, unjudged_sampled and combine: how a cut version's judgements were made (issue 15)

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 04:00:00

A pool may now be judged in an adaptive order (move-to-front, MM-NS), whose judgements are not a random sample of
the pool until every sampled item is judged; scores from a version cut before that are biased and are marked so.
`judging_order` is the cutting pool's order (NULL for imported versions and moment ground truth), `unjudged_sampled`
how many of the pool's sampled items had no judgement at the cut (NULL when not known). Versions cut before this
revision came from shuffled pools (the only order there was): the upgrade says so and leaves the count unknown.
`combine` is how a moment ground-truth cut combined several assessors' marks of an item (first, union, majority,
all); moment versions cut before this revision took the first assessor's marks, and the upgrade says so.
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("qrels_versions", sa.Column("judging_order", sa.String(length=32), nullable=True))
    op.add_column("qrels_versions", sa.Column("unjudged_sampled", sa.Integer(), nullable=True))
    op.add_column("qrels_versions", sa.Column("combine", sa.String(length=16), nullable=True))
    op.execute(
        "UPDATE qrels_versions SET judging_order = 'shuffled' "
        "WHERE source = 'cut' AND kind IN ('trec', 'sample_eval')"
    )
    op.execute("UPDATE qrels_versions SET combine = 'first' WHERE source = 'cut' AND kind = 'moments'")


def downgrade() -> None:
    op.drop_column("qrels_versions", "combine")
    op.drop_column("qrels_versions", "unjudged_sampled")
    op.drop_column("qrels_versions", "judging_order")
