"""durable jobs (placeholder, filled in by the job-queue work of issue 11)

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 22:10:00
"""

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
