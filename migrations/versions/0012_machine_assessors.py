"""machine assessors: assessor kind and provenance, model verdicts with probabilities, human verification samples

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27 21:00:00

Issue 25: automatic judges are assessors of kind `model` that judge through the batch API; people verify a seeded
sample of their verdicts, and qrels versions say whose judgements they hold.

* `assessors.kind` (`human` | `model`, existing assessors are people) and `assessors.provenance` (a model's name,
  version, configuration hash and parameters, as the organiser registered it).
* `campaigns.max_grade`: the campaign's grade scale 0..max_grade (1, binary, for every existing campaign).
* `model_verdicts`: a model assessor's verdict on a pool item (one per item and assessor: a retried push is a
  no-op), its grade, the judge's probability that the item is relevant and the configuration hash the client gave;
  audited row by row with 0004's trigger, as people's verdicts are. `model_leases`: the items handed to a model
  assessor and not yet answered (not audited: a lease changes no judgement).
* `pool_items.verification_probability` and `verification_sampled`: in a model-assisted pool, the item's inclusion
  probability in the human verification sample and whether it was drawn (NULL elsewhere).
* `qrels_versions.judges` (`human` | `model` | `combined`) and `provenance` (the model assessors, the human share);
  `qrels_entries.model_grade`, `model_probability`, `human_grade`, `verification_probability`: what a combined
  version's prediction-powered estimates are computed from, kept with the immutable version.
* `run_means.estimator`: NULL for plain means, `prediction_powered` for a combined version's estimates.
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "assessors", sa.Column("kind", sa.String(length=16), nullable=False, server_default=sa.text("'human'"))
    )
    op.add_column("assessors", sa.Column("provenance", postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    op.create_check_constraint(op.f("ck_assessors_kind_known"), "assessors", "kind IN ('human', 'model')")
    op.add_column("campaigns", sa.Column("max_grade", sa.Integer(), nullable=False, server_default=sa.text("1")))
    op.create_check_constraint(op.f("ck_campaigns_max_grade_range"), "campaigns", "max_grade BETWEEN 1 AND 10")
    op.add_column("pool_items", sa.Column("verification_probability", sa.Double(), nullable=True))
    op.add_column("pool_items", sa.Column("verification_sampled", sa.Boolean(), nullable=True))
    op.create_table(
        "model_verdicts",
        sa.Column("id", sa.BigInteger(), nullable=False),
        sa.Column("pool_item_id", sa.BigInteger(), nullable=False),
        sa.Column("assessor_id", sa.Integer(), nullable=False),
        sa.Column("grade", sa.Integer(), nullable=False),
        sa.Column("probability", sa.Double(), nullable=True),
        sa.Column("config_hash", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint("grade >= 0", name=op.f("ck_model_verdicts_grade_not_negative")),
        sa.CheckConstraint(
            "probability IS NULL OR (probability >= 0 AND probability <= 1)",
            name=op.f("ck_model_verdicts_probability_range"),
        ),
        sa.ForeignKeyConstraint(
            ["pool_item_id"], ["pool_items.id"], name="fk_model_verdicts_pool_item_id_pool_items", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["assessor_id"], ["assessors.id"], name="fk_model_verdicts_assessor_id_assessors", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_model_verdicts"),
        sa.UniqueConstraint("pool_item_id", "assessor_id", name="uq_model_verdicts_pool_item_id_assessor_id"),
    )
    op.create_index("ix_model_verdicts_assessor_id", "model_verdicts", ["assessor_id"])
    op.execute(
        "CREATE TRIGGER trecpool_audit AFTER INSERT OR UPDATE OR DELETE ON model_verdicts "
        "FOR EACH ROW EXECUTE FUNCTION trecpool_audit()"
    )
    op.create_table(
        "model_leases",
        sa.Column("pool_item_id", sa.BigInteger(), nullable=False),
        sa.Column("assessor_id", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["pool_item_id"], ["pool_items.id"], name="fk_model_leases_pool_item_id_pool_items", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["assessor_id"], ["assessors.id"], name="fk_model_leases_assessor_id_assessors", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("pool_item_id", "assessor_id", name="pk_model_leases"),
    )
    op.create_index("ix_model_leases_assessor_id", "model_leases", ["assessor_id"])
    op.add_column(
        "qrels_versions", sa.Column("judges", sa.String(length=16), nullable=False, server_default=sa.text("'human'"))
    )
    op.add_column("qrels_versions", sa.Column("provenance", postgresql.JSONB(astext_type=sa.Text()), nullable=True))
    op.create_check_constraint(
        op.f("ck_qrels_versions_judges_known"), "qrels_versions", "judges IN ('human', 'model', 'combined')"
    )
    op.add_column("qrels_entries", sa.Column("model_grade", sa.Integer(), nullable=True))
    op.add_column("qrels_entries", sa.Column("model_probability", sa.Double(), nullable=True))
    op.add_column("qrels_entries", sa.Column("human_grade", sa.Integer(), nullable=True))
    op.add_column("qrels_entries", sa.Column("verification_probability", sa.Double(), nullable=True))
    op.add_column("run_means", sa.Column("estimator", sa.String(length=32), nullable=True))


def downgrade() -> None:
    op.drop_column("run_means", "estimator")
    for column in ("verification_probability", "human_grade", "model_probability", "model_grade"):
        op.drop_column("qrels_entries", column)
    op.drop_constraint(op.f("ck_qrels_versions_judges_known"), "qrels_versions", type_="check")
    op.drop_column("qrels_versions", "provenance")
    op.drop_column("qrels_versions", "judges")
    op.drop_index("ix_model_leases_assessor_id", table_name="model_leases")
    op.drop_table("model_leases")
    op.execute("DROP TRIGGER IF EXISTS trecpool_audit ON model_verdicts")
    op.drop_index("ix_model_verdicts_assessor_id", table_name="model_verdicts")
    op.drop_table("model_verdicts")
    op.drop_column("pool_items", "verification_sampled")
    op.drop_column("pool_items", "verification_probability")
    op.drop_constraint(op.f("ck_campaigns_max_grade_range"), "campaigns", type_="check")
    op.drop_column("campaigns", "max_grade")
    op.drop_constraint(op.f("ck_assessors_kind_known"), "assessors", type_="check")
    op.drop_column("assessors", "provenance")
    op.drop_column("assessors", "kind")
