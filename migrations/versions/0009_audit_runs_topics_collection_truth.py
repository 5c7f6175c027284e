"""audit runs, topics, the collection and ground truth; record each qrels version's topics without judgements

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25 21:00:00

SPEC section 7 keeps every state change; 0004 and 0007 left runs, topics, the collection and moment ground truth
out, so a team deleting a run left no trace. This revision adds them:

* `runs` and `topics` get 0004's row trigger. A run's `content` (the compressed upload) is left out of the trail:
  its metadata and `sha256` identify it. `trecpool_audit()` is replaced by a version that blanks the left-out
  columns before the row is turned into JSON, so a run's upload (or a snapshot's content) is never copied to
  record its change; what it records is unchanged.
* `collection_items`, `ground_truth_segments` (uploaded moment ground truth) and `moment_truth_segments` (cut
  moment ground-truth versions) are written in bulk (a million shots per collection), so each statement is
  recorded once per campaign by `trecpool_audit_rows()`, with a summary of the rows before and after it: shots and
  videos for the collection; segments, topics and a sha256 of the sorted rows for ground truth.

`qrels_versions.unjudged_topics` lists the campaign's topics without any judgement in the version (a JSON array
of topic numbers; NULL when not known): boards warn about them. Shot versions made before this revision get it
from their entries (a grade >= 0 is a judgement); moment versions cut before it cannot say which topics were left
unmarked and stay NULL.

The upgrade also gives `qrels_versions.combine` to databases made by 0008 before that revision gained the column
(0008 was edited before it was released); elsewhere it is already there and nothing changes.
"""

import importlib.util
from pathlib import Path

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

# table -> columns left out of the trail (0004's tables keep theirs)
ROW_AUDITED = {"runs": ("content",), "topics": ()}
SUMMARISED = ("collection_items", "ground_truth_segments", "moment_truth_segments")
EVENTS = {
    "insert": "REFERENCING NEW TABLE AS new_rows",
    "update": "REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows",
    "delete": "REFERENCING OLD TABLE AS old_rows",
}

AUDIT_FUNCTION = """
CREATE OR REPLACE FUNCTION trecpool_audit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    old_row jsonb;
    new_row jsonb;
    row_data jsonb;
    before_cols jsonb;
    after_cols jsonb;
    campaign integer;
    left_out text[] := coalesce(TG_ARGV, '{}'::text[]);
    blank jsonb;
    actor jsonb := coalesce(nullif(current_setting('trecpool.actor', true), '')::jsonb, '{"kind": "system"}');
BEGIN
    IF cardinality(left_out) > 0 THEN
        -- left-out columns are blanked before the row becomes JSON: a large upload is never copied to be dropped
        SELECT jsonb_object_agg(c, NULL) INTO blank FROM unnest(left_out) AS c;
        IF TG_OP <> 'INSERT' THEN old_row := to_jsonb(jsonb_populate_record(OLD, blank)) - left_out; END IF;
        IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(jsonb_populate_record(NEW, blank)) - left_out; END IF;
    ELSE  -- as 0004 did (verdicts, on the judging path)
        IF TG_OP <> 'INSERT' THEN old_row := to_jsonb(OLD); END IF;
        IF TG_OP <> 'DELETE' THEN new_row := to_jsonb(NEW); END IF;
    END IF;
    IF TG_OP = 'UPDATE' THEN
        SELECT jsonb_object_agg(o.key, o.value), jsonb_object_agg(o.key, n.value)
          INTO before_cols, after_cols
          FROM jsonb_each(old_row) o JOIN jsonb_each(new_row) n ON n.key = o.key
         WHERE o.value IS DISTINCT FROM n.value;
        IF before_cols IS NULL THEN
            RETURN NULL;  -- only left-out columns changed
        END IF;
    ELSE
        before_cols := old_row;
        after_cols := new_row;
    END IF;
    row_data := coalesce(new_row, old_row);
    IF TG_TABLE_NAME = 'campaigns' THEN
        campaign := (row_data->>'id')::integer;
    ELSIF row_data ? 'campaign_id' THEN
        campaign := (row_data->>'campaign_id')::integer;
    ELSIF row_data ? 'pool_id' THEN
        SELECT p.campaign_id INTO campaign FROM pools p WHERE p.id = (row_data->>'pool_id')::integer;
    ELSIF row_data ? 'pool_item_id' THEN
        SELECT p.campaign_id INTO campaign FROM pool_items i JOIN pools p ON p.id = i.pool_id
         WHERE i.id = (row_data->>'pool_item_id')::bigint;
    ELSIF row_data ? 'item_id' THEN
        SELECT p.campaign_id INTO campaign FROM moment_pool_items i JOIN pools p ON p.id = i.pool_id
         WHERE i.id = (row_data->>'item_id')::bigint;
    ELSIF row_data ? 'assessor_id' THEN
        SELECT a.campaign_id INTO campaign FROM assessors a WHERE a.id = (row_data->>'assessor_id')::integer;
    END IF;
    INSERT INTO audit_events (campaign_id, table_name, row_id, action, actor, before, after)
    VALUES (campaign, TG_TABLE_NAME, row_data->>'id', lower(TG_OP), actor, before_cols, after_cols);
    RETURN NULL;
END
$$;
"""

# One event per statement and campaign: the campaign of a row and the summary of a set of rows (alias r), per table.
ROWS_FUNCTION = """
CREATE FUNCTION trecpool_audit_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    campaign_of text;
    summary_of text;
    none text := 'SELECT NULL::integer AS campaign, NULL::jsonb AS summary WHERE false';
    per_campaign text := 'SELECT coalesce(%s, -1) AS campaign, %s AS summary FROM %I r GROUP BY 1';
    actor jsonb := coalesce(nullif(current_setting('trecpool.actor', true), '')::jsonb, '{"kind": "system"}');
BEGIN
    CASE TG_TABLE_NAME
    WHEN 'collection_items' THEN
        campaign_of := 'r.campaign_id';
        summary_of := $q$jsonb_build_object('shots', count(*), 'videos', count(DISTINCT r.video_id))$q$;
    WHEN 'ground_truth_segments' THEN
        campaign_of := '(SELECT t.campaign_id FROM topics t WHERE t.id = r.topic_id)';
        summary_of := $q$jsonb_build_object('segments', count(*), 'topics', count(DISTINCT r.topic_id),
            'sha256', encode(sha256(convert_to(string_agg(concat_ws(E'\\t', r.topic_id, r.video_id, r.start, r."end"),
            E'\\n' ORDER BY r.topic_id, r.video_id, r.start, r."end"), 'UTF8')), 'hex'))$q$;
    WHEN 'moment_truth_segments' THEN
        campaign_of := '(SELECT v.campaign_id FROM qrels_versions v WHERE v.id = r.qrels_version_id)';
        summary_of := $q$jsonb_build_object('qrels_versions', jsonb_agg(DISTINCT r.qrels_version_id),
            'segments', count(*), 'topics', count(DISTINCT r.topic_id),
            'sha256', encode(sha256(convert_to(string_agg(concat_ws(E'\\t', r.topic_id, r.video_id, r.start, r."end"),
            E'\\n' ORDER BY r.topic_id, r.video_id, r.start, r."end"), 'UTF8')), 'hex'))$q$;
    END CASE;
    EXECUTE format(
        'INSERT INTO audit_events (campaign_id, table_name, row_id, action, actor, before, after) '
        'SELECT nullif(coalesce(o.campaign, n.campaign), -1), %L, NULL, %L, %L::jsonb, o.summary, n.summary '
        'FROM (%s) o FULL JOIN (%s) n ON n.campaign = o.campaign',
        TG_TABLE_NAME, lower(TG_OP), actor,
        CASE WHEN TG_OP = 'INSERT' THEN none ELSE format(per_campaign, campaign_of, summary_of, 'old_rows') END,
        CASE WHEN TG_OP = 'DELETE' THEN none ELSE format(per_campaign, campaign_of, summary_of, 'new_rows') END
    );
    RETURN NULL;
END
$$;
"""

UNJUDGED_TOPICS = """
UPDATE qrels_versions v SET unjudged_topics = coalesce((
    SELECT jsonb_agg(t.number ORDER BY t.number !~ '^[0-9]+$', length(t.number), t.number)
      FROM topics t
     WHERE t.campaign_id = v.campaign_id
       AND NOT EXISTS (SELECT 1 FROM qrels_entries e
                        WHERE e.qrels_version_id = v.id AND e.topic_id = t.id AND e.grade >= 0)
), '[]'::jsonb)
WHERE v.kind IN ('trec', 'sample_eval')
"""


def _released_0004_function() -> str:
    """0004's trecpool_audit() as released (the downgrade puts it back), read from its revision file."""
    path = Path(__file__).with_name("0004_tokens_and_audit.py")
    spec = importlib.util.spec_from_file_location("trecpool_revision_0004", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.AUDIT_FUNCTION.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)


def upgrade() -> None:
    op.execute("ALTER TABLE qrels_versions ADD COLUMN IF NOT EXISTS combine varchar(16)")
    op.execute(
        "UPDATE qrels_versions SET combine = 'first' WHERE source = 'cut' AND kind = 'moments' AND combine IS NULL"
    )
    op.add_column(
        "qrels_versions", sa.Column("unjudged_topics", postgresql.JSONB(astext_type=sa.Text()), nullable=True)
    )
    op.execute(UNJUDGED_TOPICS)
    op.execute(AUDIT_FUNCTION)
    op.execute(ROWS_FUNCTION)
    for table, left_out in ROW_AUDITED.items():
        arguments = ", ".join(f"'{column}'" for column in left_out)
        op.execute(
            f"CREATE TRIGGER trecpool_audit AFTER INSERT OR UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION trecpool_audit({arguments})"
        )
    for table in SUMMARISED:
        for event, transition in EVENTS.items():  # a trigger with transition tables takes one event
            op.execute(
                f"CREATE TRIGGER trecpool_audit_{event} AFTER {event.upper()} ON {table} {transition} "
                "FOR EACH STATEMENT EXECUTE FUNCTION trecpool_audit_rows()"
            )


def downgrade() -> None:
    for table in SUMMARISED:
        for event in EVENTS:
            op.execute(f"DROP TRIGGER IF EXISTS trecpool_audit_{event} ON {table}")
    for table in ROW_AUDITED:
        op.execute(f"DROP TRIGGER IF EXISTS trecpool_audit ON {table}")
    op.execute("DROP FUNCTION IF EXISTS trecpool_audit_rows()")
    op.execute(_released_0004_function())
    op.drop_column("qrels_versions", "unjudged_topics")
