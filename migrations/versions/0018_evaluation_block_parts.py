"""evaluation block parts: what each block of a fanned-out sampled evaluation keeps for the block that reduces it

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-11 10:00:00

Sampled qrels, incomplete depth cuts and combined human+model versions end with a step over every run (the
estimators' jackknife / imputation ratio per topic): their blocks, fanned out over the queue like any evaluation's,
each store what that step needs of their runs (`app/services/held_blocks.py`: a few numbers per run and topic) in

* `evaluation_block_parts`: (evaluation_id, block) -> data (bytea), deleted with the evaluation; the block that
  finishes last reads every row, reduces the evaluation and deletes them.

A scratch table of the job workers, like the scores, it is not audited. Nothing to move: an evaluation that is
running when the upgrade runs was planned before it, in the job itself.
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "evaluation_block_parts",
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("block", sa.Integer(), nullable=False),
        sa.Column("data", sa.LargeBinary(), nullable=False),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_evaluation_block_parts_evaluation_id_evaluations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("evaluation_id", "block", name=op.f("pk_evaluation_block_parts")),
    )


def downgrade() -> None:
    op.drop_table("evaluation_block_parts")
