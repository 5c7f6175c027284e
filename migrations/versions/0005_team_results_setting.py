"""the campaign's team_results setting: what teams see before publication (placeholder, issue 12)

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22 22:40:00
"""

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
