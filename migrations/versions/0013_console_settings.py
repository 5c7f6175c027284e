"""console settings: anonymised teams, baselines, audio and interleaving per campaign, topic guidelines and examples

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27 22:05:00

Issue 26 (a campaign run from the browser):

* `campaigns.anonymise_teams`: the public board shows teams as "Team A", "Team B", ... when the organiser asks.
* `campaigns.audio_on`: the judging and marking pages start with sound on (NIST's assessors listen); true by default.
* `campaigns.interleave_every`: an assessor's second opinions and shots put off for later come back within the topic
  after every this many first-round verdicts (0: only when the first round of the topic is done).
* `runs.baseline`: the organiser marks a run as a baseline; boards mark it.
* `topics.guidelines` (text shown beside the video) and `topics.examples` (a JSON list of {"url", "caption"}: example
  images for the topic).
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "campaigns", sa.Column("anonymise_teams", sa.Boolean(), nullable=False, server_default=sa.text("false"))
    )
    op.add_column("campaigns", sa.Column("audio_on", sa.Boolean(), nullable=False, server_default=sa.text("true")))
    op.add_column(
        "campaigns", sa.Column("interleave_every", sa.Integer(), nullable=False, server_default=sa.text("10"))
    )
    op.create_check_constraint(
        op.f("ck_campaigns_interleave_every_range"), "campaigns", "interleave_every BETWEEN 0 AND 1000"
    )
    op.add_column("runs", sa.Column("baseline", sa.Boolean(), nullable=False, server_default=sa.text("false")))
    op.add_column("topics", sa.Column("guidelines", sa.Text(), nullable=False, server_default=sa.text("''")))
    op.add_column("topics", sa.Column("examples", postgresql.JSONB(astext_type=sa.Text()), nullable=True))


def downgrade() -> None:
    op.drop_column("topics", "examples")
    op.drop_column("topics", "guidelines")
    op.drop_column("runs", "baseline")
    op.drop_constraint(op.f("ck_campaigns_interleave_every_range"), "campaigns", type_="check")
    op.drop_column("campaigns", "interleave_every")
    op.drop_column("campaigns", "audio_on")
    op.drop_column("campaigns", "anonymise_teams")
