"""run integrity and stored per-run means (placeholder, filled in by the integrity work of issue 11)

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 22:10:00
"""

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
