"""run_means.ci_low, ci_high and sampling_se: each run's interval per measure, computed by the evaluation job (issue 24)

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-26 09:00:00

The evaluation job now computes each run's confidence interval of every measure over topics (paired bootstrap,
widened by the judgement sampling variance where the qrels are sampled or incomplete: `services.score_intervals`)
and stores it with the run's mean, so that a board request reads it with the means instead of resampling. Rows
written before this revision have no interval (NULL): boards show none for them until the evaluation is run again.
`sampling_se` is the standard error the judgement sampling adds to the run's mean (NULL when nothing was added), kept
for the pairwise differences and rank intervals of the boards that show the run.
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("run_means", sa.Column("ci_low", sa.Double(), nullable=True))
    op.add_column("run_means", sa.Column("ci_high", sa.Double(), nullable=True))
    op.add_column("run_means", sa.Column("sampling_se", sa.Double(), nullable=True))


def downgrade() -> None:
    op.drop_column("run_means", "sampling_se")
    op.drop_column("run_means", "ci_high")
    op.drop_column("run_means", "ci_low")
