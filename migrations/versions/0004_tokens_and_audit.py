"""token lifecycle (revocation, expiry, rotation, throttling) and the audit trail (placeholder, issue 12)

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22 22:40:00
"""

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
