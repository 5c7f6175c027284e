"""run file storage: where a run's file lives (placeholder, filled by the storage work of issue 28)

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 10:00:00
"""

from alembic import op  # noqa: F401

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Nothing yet."""


def downgrade() -> None:
    """Nothing yet."""
