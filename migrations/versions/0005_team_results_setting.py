"""the campaign's team_results setting: what teams see before publication (issue 12)

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 22:40:00

`hidden`: nothing before publication; `own` (the default, also for existing campaigns): a team's own runs' scores
and, per topic, the best and median over all runs (SPEC section 7).
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

TEAM_RESULTS = postgresql.ENUM("hidden", "own", name="team_results", create_type=False)


def upgrade() -> None:
    TEAM_RESULTS.create(op.get_bind(), checkfirst=False)
    op.add_column("campaigns", sa.Column("team_results", TEAM_RESULTS, nullable=False, server_default="own"))


def downgrade() -> None:
    op.drop_column("campaigns", "team_results")
    TEAM_RESULTS.drop(op.get_bind(), checkfirst=False)
