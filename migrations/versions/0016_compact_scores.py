"""compact scores: one array per evaluation, run and measure over the evaluation's topic order

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-09 10:00:00

Scores were one row per (evaluation, run, measure, topic): about 100 bytes of row, key and index per number. They
are now (`app/services/score_store.py`):

* `score_topics`: an evaluation's topic order (`topics`, 'all' being a run's mean), only ever appended to;
* `score_arrays`: one row per evaluation, measure and run, `per_topic[i]` the value of `topics[i]` (NULL where the
  run has none, and beyond the end of an array written before the order grew); keyed (evaluation, measure, run),
  so one board's values are one index range;
* the view `scores` unnests them into the rows (evaluation_id, run_id, measure, topic, value) of before, for the
  archive, verify and ad hoc SQL.

The upgrade moves every row (topics in (length, text) order); the downgrade unnests them back.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

VIEW = """
CREATE VIEW scores AS
SELECT a.evaluation_id, a.run_id, a.measure, t.topic, a.per_topic[t.position] AS value
FROM score_arrays a
JOIN score_topics o ON o.evaluation_id = a.evaluation_id
CROSS JOIN LATERAL unnest(o.topics) WITH ORDINALITY AS t(topic, position)
WHERE a.per_topic[t.position] IS NOT NULL
"""


def upgrade() -> None:
    """Make the topic orders and arrays from the score rows, drop the rows' table, and view the arrays as rows."""
    op.create_table(
        "score_topics",
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("topics", postgresql.ARRAY(sa.String(length=64)), nullable=False),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_score_topics_evaluation_id_evaluations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("evaluation_id", name=op.f("pk_score_topics")),
    )
    op.create_table(
        "score_arrays",
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("measure", sa.String(length=64), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("per_topic", postgresql.ARRAY(sa.Double()), nullable=False),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_score_arrays_evaluation_id_evaluations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_score_arrays_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("evaluation_id", "measure", "run_id", name=op.f("pk_score_arrays")),
    )
    op.create_index(op.f("ix_score_arrays_run_id"), "score_arrays", ["run_id"])
    op.execute(
        "INSERT INTO score_topics (evaluation_id, topics) "
        "SELECT evaluation_id, array_agg(topic ORDER BY length(topic), topic) "
        "FROM (SELECT DISTINCT evaluation_id, topic FROM scores) found GROUP BY evaluation_id"
    )
    op.execute(
        "INSERT INTO score_arrays (evaluation_id, measure, run_id, per_topic) "
        "SELECT k.evaluation_id, k.measure, k.run_id, array_agg(s.value ORDER BY t.position) "
        "FROM (SELECT DISTINCT evaluation_id, measure, run_id FROM scores) k "
        "JOIN score_topics o ON o.evaluation_id = k.evaluation_id "
        "CROSS JOIN LATERAL unnest(o.topics) WITH ORDINALITY AS t(topic, position) "
        "LEFT JOIN scores s ON s.evaluation_id = k.evaluation_id AND s.run_id = k.run_id "
        "AND s.measure = k.measure AND s.topic = t.topic "
        "GROUP BY k.evaluation_id, k.measure, k.run_id"
    )
    op.drop_table("scores")
    op.execute(VIEW)


def downgrade() -> None:
    """Back to one row per score: the view's rows into the table of before."""
    op.execute("ALTER VIEW scores RENAME TO scores_view")
    op.create_table(
        "scores",
        sa.Column("evaluation_id", sa.Integer(), nullable=False),
        sa.Column("run_id", sa.Integer(), nullable=False),
        sa.Column("measure", sa.String(length=64), nullable=False),
        sa.Column("topic", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Double(), nullable=False),
        sa.ForeignKeyConstraint(
            ["evaluation_id"],
            ["evaluations.id"],
            name=op.f("fk_scores_evaluation_id_evaluations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["run_id"], ["runs.id"], name=op.f("fk_scores_run_id_runs"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("evaluation_id", "run_id", "measure", "topic", name=op.f("pk_scores")),
    )
    op.execute(
        "INSERT INTO scores (evaluation_id, run_id, measure, topic, value) "
        "SELECT evaluation_id, run_id, measure, topic, value FROM scores_view"
    )
    op.create_index("ix_scores_measure", "scores", ["evaluation_id", "measure"])
    op.execute("DROP VIEW scores_view")
    op.drop_table("score_arrays")
    op.drop_table("score_topics")
