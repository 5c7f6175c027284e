"""run file storage: where a run's file lives, and its content address

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 10:00:00

A run's file (its validated upload, zlib-compressed) may now live outside PostgreSQL (`app/storage/run_store.py`):

* `runs.storage` names where: `postgres` (in `runs.content`, as before), `dir:/absolute/path` (a local directory)
  or `s3://bucket/prefix` (S3-compatible object storage). Runs made before this revision are `postgres`.
* `runs.storage_key` is the SHA-256 (hex) of the stored bytes, the file's address in every store (identical files
  are stored once in a directory or a bucket). The upgrade computes it from each run's `content`.
* `runs.content` may be NULL: it holds the bytes only while `storage` is `postgres` (a CHECK says so).

The downgrade needs every file back in PostgreSQL (`trecpool storage migrate --to postgres` first): it refuses,
naming how many runs are elsewhere, rather than leave runs without their file.
"""

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

CONTENT_IN_POSTGRES = "(storage = 'postgres') = (content IS NOT NULL)"


def upgrade() -> None:
    """Add the location and the content address of each run's file; content is NULL when stored elsewhere."""
    op.add_column("runs", sa.Column("storage", sa.Text(), server_default="postgres", nullable=False))
    op.add_column("runs", sa.Column("storage_key", sa.String(64), nullable=True))
    op.execute("UPDATE runs SET storage_key = encode(sha256(content), 'hex')")
    op.alter_column("runs", "storage_key", nullable=False)
    op.alter_column("runs", "content", nullable=True)
    op.create_index("ix_runs_storage_key", "runs", ["storage_key"])
    op.create_check_constraint(op.f("ck_runs_content_in_postgres"), "runs", CONTENT_IN_POSTGRES)


def downgrade() -> None:
    """Back to files in runs.content only: refused while any run's file is stored elsewhere."""
    elsewhere = op.get_bind().execute(sa.text("SELECT count(*) FROM runs WHERE storage <> 'postgres'")).scalar()
    if elsewhere:
        raise RuntimeError(
            f"{elsewhere} run file(s) are stored outside PostgreSQL: run `trecpool storage migrate --to postgres` "
            "before downgrading below 0015"
        )
    op.drop_constraint(op.f("ck_runs_content_in_postgres"), "runs", type_="check")
    op.drop_index("ix_runs_storage_key", table_name="runs")
    op.alter_column("runs", "content", nullable=False)
    op.drop_column("runs", "storage_key")
    op.drop_column("runs", "storage")
