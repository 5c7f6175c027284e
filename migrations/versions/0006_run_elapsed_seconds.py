"""runs.elapsed_seconds: a TRECVID XML run's elapsedTime per topic (issue 16)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 01:00:00

A JSONB object {topic number: seconds}, NULL for runs that state none (TREC runs, moment runs). XML runs stored
before this revision keep their elapsedTime attributes in their stored upload: the upgrade reads them from there, one
run at a time, with a parser of its own (so that later changes to the app's parsers cannot change this revision).
"""

import json
import math
import zlib
from xml.parsers import expat

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

OBJECT_CHECK = "elapsed_seconds IS NULL OR jsonb_typeof(elapsed_seconds) = 'object'"


def upgrade() -> None:
    op.add_column("runs", sa.Column("elapsed_seconds", postgresql.JSONB(), nullable=True))
    op.create_check_constraint(op.f("ck_runs_elapsed_seconds_object"), "runs", OBJECT_CHECK)
    conn = op.get_bind()
    run_ids = conn.execute(sa.text("SELECT id FROM runs WHERE format = 'xml' ORDER BY id")).scalars().all()
    for run_id in run_ids:
        content = conn.execute(sa.text("SELECT content FROM runs WHERE id = :id"), {"id": run_id}).scalar_one()
        elapsed = _elapsed_seconds(zlib.decompress(content))
        if elapsed:
            conn.execute(
                sa.text("UPDATE runs SET elapsed_seconds = CAST(:elapsed AS jsonb) WHERE id = :id"),
                {"elapsed": json.dumps(elapsed), "id": run_id},
            )


def downgrade() -> None:
    op.drop_constraint(op.f("ck_runs_elapsed_seconds_object"), "runs", type_="check")
    op.drop_column("runs", "elapsed_seconds")


def _elapsed_seconds(xml: bytes) -> dict[str, float]:
    """{tNum: elapsedTime} of an XML run's topic results (the first valid value of a topic); {} if it cannot be read."""
    found: dict[str, float] = {}

    def start(name: str, attrs: dict[str, str]) -> None:
        local = name.rsplit("}", 1)[-1].rsplit(":", 1)[-1]
        if not (local.endswith("TopicResult") or local == "topic"):
            return
        topic = (attrs.get("tNum") or attrs.get("tnum") or attrs.get("num") or attrs.get("topic") or "").strip()
        text = attrs.get("elapsedTime") or attrs.get("elapsedtime")
        if not topic or text is None:
            return
        try:
            seconds = float(text.strip())
        except ValueError:
            return
        if math.isfinite(seconds) and seconds >= 0 and "_" not in text:
            found.setdefault(topic, seconds)

    def refuse(*args: object) -> None:
        raise ValueError("entities are not read")

    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartElementHandler = start
    parser.EntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    try:
        parser.Parse(xml, True)
    except (expat.ExpatError, ValueError):
        return {}
    return found
