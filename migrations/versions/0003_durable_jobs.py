"""durable jobs: the procrastinate queue schema, and attempts, heartbeats and cancel requests on evaluations and
analysis jobs

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 22:10:00

The queue's tables and functions are procrastinate's own schema (procrastinate 3.x, as installed when this revision
runs). A later procrastinate release that changes its schema ships SQL migrations: apply them in a new revision.
"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

JOB_TABLES = ("evaluations", "analysis_jobs")

# Every object procrastinate's schema creates is named procrastinate_*: drop functions, tables, then types.
DROP_PROCRASTINATE = """
DO $$
DECLARE
    item record;
BEGIN
    FOR item IN SELECT p.oid::regprocedure AS signature FROM pg_proc p
                JOIN pg_namespace n ON n.oid = p.pronamespace
                WHERE n.nspname = current_schema() AND p.proname LIKE 'procrastinate\\_%' LOOP
        EXECUTE 'DROP FUNCTION IF EXISTS ' || item.signature || ' CASCADE';
    END LOOP;
    FOR item IN SELECT tablename FROM pg_tables
                WHERE schemaname = current_schema() AND tablename LIKE 'procrastinate\\_%' LOOP
        EXECUTE 'DROP TABLE IF EXISTS ' || quote_ident(item.tablename) || ' CASCADE';
    END LOOP;
    FOR item IN SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
                WHERE n.nspname = current_schema() AND t.typname LIKE 'procrastinate\\_%' AND t.typtype IN ('e', 'c')
                  AND NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.reltype = t.oid AND c.relkind <> 'c') LOOP
        EXECUTE 'DROP TYPE IF EXISTS ' || quote_ident(item.typname) || ' CASCADE';
    END LOOP;
END
$$;
"""


def upgrade() -> None:
    from procrastinate.schema import SchemaManager

    op.get_bind().exec_driver_sql(SchemaManager.get_schema().replace("%", "%%"))
    for table in JOB_TABLES:
        op.add_column(table, sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False))
        op.add_column(
            table, sa.Column("cancel_requested", sa.Boolean(), server_default=sa.text("false"), nullable=False)
        )
        op.add_column(table, sa.Column("queue_job_id", sa.BigInteger(), nullable=True))
        op.add_column(table, sa.Column("worker", sa.String(length=200), nullable=True))
        op.add_column(table, sa.Column("started_at", sa.DateTime(timezone=True), nullable=True))
        op.add_column(table, sa.Column("heartbeat_at", sa.DateTime(timezone=True), nullable=True))
    # jobs left queued or running by the in-process runner this revision replaces can never finish
    for table in JOB_TABLES:
        op.execute(
            f"UPDATE {table} SET status = 'failed', finished_at = now(), "
            "error = 'interrupted: started before durable jobs were installed; start it again' "
            "WHERE status IN ('queued', 'running')"
        )


def downgrade() -> None:
    for table in JOB_TABLES:
        for column in ("heartbeat_at", "started_at", "worker", "queue_job_id", "cancel_requested", "attempts"):
            op.drop_column(table, column)
        op.execute(f"UPDATE {table} SET status = 'failed' WHERE status = 'cancelled'")
    op.get_bind().exec_driver_sql(DROP_PROCRASTINATE.replace("%", "%%"))
