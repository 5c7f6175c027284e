"""run integrity and stored per-run means

The stored upload (runs.content) becomes the only record of a run's rows: run_entries and moment_entries, which had
no foreign keys, are dropped, so no entry can outlive its run or name a missing one. run_means holds each run's mean
of each measure in an evaluation (the scores' 'all' rows), so leaderboards read a few rows per run; it is filled
from the stored scores here. scores gains an index by measure, for one measure's per-topic table. Pooled campaigns
whose topics are already assigned move to `judging`.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22 22:10:00
"""

import zlib

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_table("run_entries")
    op.drop_table("moment_entries")
    op.create_table(
        "run_means",
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("measure", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_run_means_evaluation_id_evaluations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_run_means_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("evaluation_id", "run_id", "measure", name=op.f("pk_run_means")),
    )
    op.create_index(op.f("ix_run_means_run_id"), "run_means", ["run_id"], unique=False)
    op.create_index("ix_scores_measure", "scores", ["evaluation_id", "measure"], unique=False)
    op.execute(
        "INSERT INTO run_means (evaluation_id, run_id, measure, value) "
        "SELECT evaluation_id, run_id, measure, value FROM scores WHERE topic = 'all'"
    )
    op.execute(
        "UPDATE campaigns SET status = 'judging' WHERE status = 'pooled' AND EXISTS ("
        "SELECT 1 FROM assignments a JOIN pools p ON p.id = a.pool_id WHERE p.campaign_id = campaigns.id)"
    )


def downgrade() -> None:
    op.drop_index("ix_scores_measure", table_name="scores")
    op.drop_index(op.f("ix_run_means_run_id"), table_name="run_means")
    op.drop_table("run_means")
    op.create_table(
        "moment_entries",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("topic_id", sa.Integer(), nullable=False),
        sa.Column("video_id", sa.Text(), nullable=False),
        sa.Column("start", sa.Double(), nullable=False),
        sa.Column("end", sa.Double(), nullable=False),
        sa.Column("score", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "seq", name=op.f("pk_moment_entries")),
    )
    op.create_table(
        "run_entries",
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("topic_id", sa.Integer(), nullable=False),
        sa.Column("docno", sa.Text(), nullable=False),
        sa.Column("rank", sa.Integer(), nullable=False),
        sa.Column("score", sa.Double(), nullable=False),
        sa.PrimaryKeyConstraint("run_id", "seq", name=op.f("pk_run_entries")),
    )
    _refill_entries()


def _refill_entries() -> None:
    """Rebuild 0001's entry rows of every run from its stored upload, as 0001's code wrote them."""
    from app.services import run_files

    bind = op.get_bind()
    topics = {
        (campaign, number): topic_id
        for topic_id, campaign, number in bind.execute(sa.text("SELECT id, campaign_id, number FROM topics"))
    }
    runs = bind.execute(sa.text("SELECT id, campaign_id, format, content FROM runs ORDER BY id")).all()
    for run_id, campaign_id, fmt, content in runs:
        parsed = run_files.parse(zlib.decompress(content), fmt, max_errors=1)
        topic_ids = [topics[(campaign_id, str(t))] for t in parsed.topics.tolist()]
        if parsed.moments is not None:
            m = parsed.moments
            rows = [
                {"r": run_id, "q": q, "t": t, "v": v, "s": s, "e": e, "c": c}
                for q, (t, v, s, e, c) in enumerate(
                    zip(
                        topic_ids, m.videos.tolist(), m.starts.tolist(), m.ends.tolist(), m.scores.tolist(), strict=True
                    )
                )
            ]
            statement = "INSERT INTO moment_entries VALUES (:r, :q, :t, :v, :s, :e, :c)"
        else:
            t_ = parsed.trec
            rows = [
                {"r": run_id, "q": q, "t": t, "d": d, "k": k, "c": c}
                for q, (t, d, k, c) in enumerate(
                    zip(topic_ids, t_.docs.tolist(), t_.ranks.tolist(), t_.scores.tolist(), strict=True)
                )
            ]
            statement = "INSERT INTO run_entries VALUES (:r, :q, :t, :d, :k, :c)"
        if rows:
            bind.execute(sa.text(statement), rows)
