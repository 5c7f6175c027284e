"""Migrations go up and down on a real PostgreSQL; the app refuses an outdated schema."""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path

import pytest
from sqlalchemy import func, inspect, select, text
from sqlalchemy.exc import IntegrityError

from app.storage import migrations
from app.storage.database import make_engine
from app.storage.models import Base


def test_upgrade_downgrade_upgrade(create_database):
    url = create_database()
    engine = make_engine(url)
    try:
        assert migrations.current_revision(engine) is None
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
        assert set(Base.metadata.tables) <= set(inspect(engine).get_table_names())
        migrations.downgrade(url, "base")
        assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
        migrations.upgrade(url)
        assert set(Base.metadata.tables) <= set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_models_match_the_migrations(database_url):
    """Autogenerate finds nothing to add: the initial revision covers the whole model."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    engine = make_engine(database_url)
    with engine.connect() as conn:
        diff = compare_metadata(
            MigrationContext.configure(conn, opts={"include_name": migrations.include_name}), Base.metadata
        )
    engine.dispose()
    assert diff == []


def test_check_schema_names_the_fix(create_database):
    engine = make_engine(create_database())
    try:
        migrations.check_schema(engine)
    except migrations.SchemaOutOfDate as exc:
        assert "trecpool db upgrade" in str(exc)
    else:
        raise AssertionError("an empty database passed the schema check")
    finally:
        engine.dispose()


# Released revisions and the SHA-256 of their files: a released revision is never edited (a database made by it
# would pass the schema check and fail later). Add each revision here once it ships.
RELEASED = {
    "0001_initial_schema_the_whole_campaign_domain.py": (
        "f9bae857c5b4cd6b8926dc14226113623567052794a4cba456eed7f55fc65e8b"
    ),
    "0002_run_integrity_and_run_means.py": ("cef7697b16ebacdcedbe44f3edd6cb3be2b6e162392a562457d211f016d1156d"),
    "0003_durable_jobs.py": ("986bc2478ff8012d564475bb006d71fe18f84bfcaee66a351369af5da8fc8e7e"),
    "0004_tokens_and_audit.py": ("73997cf283b5ab50e5fc9e0d5ff994019ea5cb82bf4d747ad1377dc0776778f3"),
    "0005_team_results_setting.py": ("0272d402372fdc8998ee955f5bfa29c06757d941c7b727f29521e399a760e2c0"),
    "0006_run_elapsed_seconds.py": ("885d5129251536ea30b5a17e455b626e9f70ec2e3f00cd39ca58e51c3913ece3"),
    "0007_moment_pools_and_marks.py": ("236bc55a75ce51d699ab197fdb6c55bac94c2b74f81091dda5fb63815c2aeaaa"),
    "0008_qrels_judging_order.py": ("4a7ead28a694f5e783aa3680f01180b8603252b9cd90f45aa9a2eeed3a789e35"),
    "0009_audit_runs_topics_collection_truth.py": ("6322dc4f29b8cf17ba2038045ea789ec3fadf3f02496fbfc362e983d0dc8b5ac"),
    "0010_drop_the_unused_blobs_table.py": ("1075664a6d20ed2be267d672c6e3cde91e984676bdb3835367d312552158384d"),
    "0011_run_means_intervals.py": ("f0541a4dc95ed5f12b2f9a972b8ee563b1b281e1edcdab5860be95fd0989ad85"),
    "0012_machine_assessors.py": ("215dc279b98c0710b4f0700b795706ef9491bc8c9454c143aef515504dde3dcf"),
    "0013_console_settings.py": ("588ea8b132bad83ca188172a25f551d2df90a7836623875b8f140c172beba541"),
    "0014_campaign_series_and_progress_topics.py": ("38493014bd03344b53767823b2a7a7ce3cf792768ad3478a6650fa27a09badef"),
    "0015_run_file_storage.py": ("e4a8e2957eca9332d840963f857a86ae0bc25bcf91e89c636e97c7ed525bdf0c"),
    "0016_compact_scores.py": ("02a7ef8e38ee785c95eddb1ff688e9e09a48e998b39a7e9180d343e96c21b365"),
    "0017_collection_version.py": ("787444ad34ca99a3321561cb21719a1c8147cf892da38538447582d986926c85"),
}


def test_released_revisions_are_never_edited():
    for name, digest in RELEASED.items():
        found = hashlib.sha256((migrations.MIGRATIONS_DIR / "versions" / name).read_bytes()).hexdigest()
        assert found == digest, (
            f"released migration {name} was edited: databases made by it would not get the change; "
            "restore it and add a new revision instead"
        )


def test_the_released_revisions_are_the_oldest_and_none_is_missing():
    """Released files are the first revisions of the chain (renaming or removing one is caught too); only revisions
    newer than every released one may be unpinned (they are pinned by the release that ships them)."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory(str(migrations.MIGRATIONS_DIR))
    chain = [Path(r.path).name for r in reversed(list(script.walk_revisions()))]
    assert chain[: len(RELEASED)] == list(RELEASED)
    assert all(name.split("_")[0].isdigit() and len(name.split("_")[0]) == 4 for name in chain)


OLD_RUN = "1 Q0 a 1 2.5 alpha\n1 Q0 b 2 1 alpha\n2 Q0 c 1 0.75 alpha\n"
OLD_MOMENTS = "1\tvidA\t11\t19\t0.9\n1\tvidA\t40\t46\t0.8\n"
AT_0001 = """
INSERT INTO campaigns (id, name, description, task_kind, status, max_results, max_runs_per_team) VALUES
  (1, 'shots', '', 'shots', 'pooled', 100, 5), (2, 'moments', '', 'moments', 'closed', 100, 5);
INSERT INTO topics (id, campaign_id, number, title, description) VALUES
  (11, 1, '1', 'one', ''), (12, 1, '2', 'two', ''), (21, 2, '1', 'moment', '');
INSERT INTO teams (id, campaign_id, name) VALUES (1, 1, 'team a'), (2, 1, 'team b'), (3, 2, 'team m');
INSERT INTO runs (id, campaign_id, team_id, name, tag, format, system_type, novelty, training_type, priority,
                  description, n_entries, n_topics, sha256, content) VALUES
  (1, 1, 1, 'alpha', 'alpha', 'trec', 'F', false, 'D', 1, '', 3, 2, '', :alpha),
  (2, 1, 2, 'beta', 'beta', 'trec', 'M', true, 'A', 1, '', 3, 2, '', :beta),
  (3, 2, 3, 'gamma', NULL, 'moments', 'F', false, 'D', 1, '', 2, 1, '', :gamma);
INSERT INTO run_entries (run_id, seq, topic_id, docno, rank, score) VALUES
  (1, 0, 11, 'a', 1, 2.5), (1, 1, 11, 'b', 2, 1), (1, 2, 12, 'c', 1, 0.75),
  (2, 0, 11, 'b', 1, 3), (2, 1, 11, 'a', 2, 2), (2, 2, 12, 'd', 1, 1);
INSERT INTO moment_entries (run_id, seq, topic_id, video_id, start, "end", score) VALUES
  (3, 0, 21, 'vidA', 11, 19, 0.9), (3, 1, 21, 'vidA', 40, 46, 0.8);
INSERT INTO pools (id, campaign_id, kind, params, seed) VALUES
  (1, 1, 'depth', '{"strata": [[1, 2, 1.0]], "depth": 2, "run_ids": [1, 2]}', 7);
INSERT INTO pool_runs (pool_id, run_id) VALUES (1, 1), (1, 2);
INSERT INTO pool_items (id, pool_id, topic_id, docno, stratum, sampled, best_rank, n_runs, judging_order) VALUES
  (1, 1, 11, 'a', 1, true, 1, 2, 0), (2, 1, 11, 'b', 1, true, 1, 2, 1);
INSERT INTO assessors (id, campaign_id, name) VALUES (1, 1, 'judge');
INSERT INTO assignments (pool_id, topic_id, assessor_id) VALUES (1, 11, 1);
INSERT INTO judging_tasks (id, pool_item_id, round, reason, done_at) VALUES
  (1, 1, 1, 'pooled', now()), (2, 2, 1, 'pooled', NULL);
INSERT INTO judgements (id, pool_item_id, assessor_id, round, verdict, grade) VALUES (1, 1, 1, 1, 'relevant', 1);
INSERT INTO judgement_changes (id, judgement_id, changed_by, old_verdict, new_verdict) VALUES
  (1, 1, 1, NULL, 'relevant');
INSERT INTO qrels_versions (id, campaign_id, label, kind, source, pool_id, n_entries) VALUES
  (1, 1, 'final', 'trec', 'cut', 1, 3);
INSERT INTO qrels_entries (qrels_version_id, topic_id, docno, stratum, grade) VALUES
  (1, 11, 'a', NULL, 1), (1, 11, 'b', NULL, 0), (1, 12, 'c', NULL, 1);
INSERT INTO evaluations (id, campaign_id, qrels_version_id, status, progress, measures, finished_at) VALUES
  (1, 1, 1, 'done', 1.0, '{"names": ["AP", "P@5"]}', now());
INSERT INTO scores (evaluation_id, run_id, measure, topic, value) VALUES
  (1, 1, 'AP', '1', 1.0), (1, 1, 'AP', '2', 1.0), (1, 1, 'AP', 'all', 1.0),
  (1, 1, 'P@5', '1', 0.2), (1, 1, 'P@5', '2', 0.2), (1, 1, 'P@5', 'all', 0.2),
  (1, 2, 'AP', '1', 0.5), (1, 2, 'AP', '2', 0.0), (1, 2, 'AP', 'all', 0.25),
  (1, 2, 'P@5', '1', 0.2), (1, 2, 'P@5', '2', 0.0), (1, 2, 'P@5', 'all', 0.1);
SELECT setval(pg_get_serial_sequence(t, 'id'), 100) FROM unnest(ARRAY['campaigns', 'topics', 'teams', 'runs',
  'pools', 'pool_items', 'assessors', 'judging_tasks', 'judgements', 'judgement_changes', 'qrels_versions',
  'evaluations']) AS t;
"""


def test_a_database_made_at_0001_with_data_upgrades_to_head_and_back(create_database):
    """Data written by 0001's schema survives the upgrade, the app works on it, and the downgrade restores 0001."""
    from app.services import evaluations, leaderboards, runs
    from app.services.auth import Principal
    from app.storage.database import make_session_factory
    from app.storage.models import Campaign, Judgement, QrelsEntry, Role

    url = create_database()
    engine = make_engine(url)
    organiser = Principal(Role.organiser, token_id=0)
    contents = {k: zlib.compress(v.encode()) for k, v in (("alpha", OLD_RUN), ("beta", BETA), ("gamma", OLD_MOMENTS))}
    try:
        migrations.upgrade(url, "0001")
        with engine.begin() as conn:
            for statement in AT_0001.split(";\n"):
                if statement.strip():
                    conn.execute(text(statement), {k: v for k, v in contents.items() if f":{k}" in statement})
            entries_0001 = _entries(conn)
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
        assert not {"run_entries", "moment_entries"} & set(inspect(engine).get_table_names())
        with make_session_factory(engine)() as session:
            means = session.execute(text("SELECT run_id, measure, value FROM run_means ORDER BY 1, 2")).all()
            assert means == [(1, "AP", 1.0), (1, "P@5", 0.2), (2, "AP", 0.25), (2, "P@5", 0.1)]
            assert session.get(Campaign, 1).status.value == "judging"  # it had an assignment
            assert session.get(Campaign, 2).status.value == "closed"
            assert session.get(Judgement, 1).verdict.value == "relevant"
            assert session.scalar(select(func.count()).select_from(QrelsEntry)) == 3
            board = leaderboards.live_leaderboard(session, organiser, 1, measure="AP")
            assert [(r["run"], r["score"], r["scores"]["P@5"]) for r in board["rows"]] == [
                ("alpha", 1.0, 0.2),
                ("beta", 0.25, 0.1),
            ]
            assert board["per_topic"] == [
                {"topic": "1", "best_run": "alpha", "best": 1.0, "median": 0.75},
                {"topic": "2", "best_run": "alpha", "best": 1.0, "median": 0.5},
            ]
            assert b"".join(runs.download_run(session, organiser, 1)[1]).decode() == OLD_RUN
            assert b"".join(runs.download_run(session, organiser, 3)[1]).decode() == OLD_MOMENTS.replace(
                "\n", "\tgamma\n"
            )
            evaluation = evaluations.start_evaluation(session, organiser, 1, measures=["AP", "P@5"])
            evaluations.run_evaluation(session, evaluation.id)
            assert session.get(Campaign, 1).status.value == "evaluated"
            fresh = leaderboards.live_leaderboard(session, organiser, 1, measure="AP")
            assert fresh["evaluation_id"] == evaluation.id and fresh["rows"][0]["run"] == "alpha"
            session.commit()
        migrations.downgrade(url, "0001")
        with engine.connect() as conn:
            assert _entries(conn) == entries_0001
    finally:
        engine.dispose()


BETA = "1 Q0 b 1 3 beta\n1 Q0 a 2 2 beta\n2 Q0 d 1 1 beta\n"


def _entries(conn) -> tuple[list[tuple], list[tuple]]:  # type: ignore[no-untyped-def]
    """Every row of 0001's run_entries and moment_entries, in key order."""
    shots = conn.execute(text("SELECT * FROM run_entries ORDER BY run_id, seq")).all()
    moments = conn.execute(text("SELECT * FROM moment_entries ORDER BY run_id, seq")).all()
    return [tuple(r) for r in shots], [tuple(r) for r in moments]


XML_RUN = """<?xml version="1.0"?>
<!DOCTYPE videoAdhocSearchResults SYSTEM "https://www-nlpir.nist.gov/projects/tv2021/dtds/videoAdhocSearchResults.dtd">
<videoAdhocSearchResults>
<videoAdhocSearchRunResult trType="D" class="F" novelty="C" pid="p" priority="1" desc="d">
<videoAdhocSearchTopicResult tNum="1" elapsedTime="30.5">
<item seqNum="1" shotId="a"/>
</videoAdhocSearchTopicResult>
<videoAdhocSearchTopicResult tNum="2" elapsedTime="7">
<item seqNum="1" shotId="c"/>
</videoAdhocSearchTopicResult>
</videoAdhocSearchRunResult>
</videoAdhocSearchResults>
"""
AT_0005 = """
INSERT INTO campaigns (id, name, description, task_kind, status, max_results, max_runs_per_team) VALUES
  (1, 'shots', '', 'shots', 'open', 100, 5);
INSERT INTO topics (id, campaign_id, number, title, description) VALUES
  (11, 1, '1', 'one', ''), (12, 1, '2', 'two', '');
INSERT INTO teams (id, campaign_id, name) VALUES (1, 1, 'team a');
INSERT INTO runs (id, campaign_id, team_id, name, tag, format, system_type, novelty, training_type, priority,
                  description, n_entries, n_topics, sha256, content) VALUES
  (1, 1, 1, 'trec', 'alpha', 'trec', 'F', false, 'D', 1, '', 3, 2, '', :trec),
  (2, 1, 1, 'timed', 'p_1', 'xml', 'F', false, 'D', 1, 'd', 2, 2, '', :timed),
  (3, 1, 1, 'untimed', 'p_1', 'xml', 'F', false, 'D', 1, 'd', 2, 2, '', :untimed);
SELECT setval(pg_get_serial_sequence(t, 'id'), 100) FROM unnest(ARRAY['campaigns', 'topics', 'teams', 'runs']) AS t;
"""


def test_a_database_made_at_0005_with_runs_upgrades_to_0006_with_the_xml_runs_elapsed_times(create_database):
    """0006 adds runs.elapsed_seconds and fills it from the stored XML uploads; the app reads and writes runs on it,
    and the downgrade gives back 0005's table."""
    from app.services import runs
    from app.services.auth import Principal
    from app.storage.database import make_session_factory
    from app.storage.models import Role, Run

    url = create_database()
    engine = make_engine(url)
    organiser = Principal(Role.organiser, token_id=0)
    untimed = XML_RUN.replace(' elapsedTime="30.5"', "").replace(' elapsedTime="7"', "")
    contents = {k: zlib.compress(v.encode()) for k, v in (("trec", OLD_RUN), ("timed", XML_RUN), ("untimed", untimed))}
    try:
        migrations.upgrade(url, "0005")
        with engine.begin() as conn:
            for statement in AT_0005.split(";\n"):
                if statement.strip():
                    conn.execute(text(statement), {k: v for k, v in contents.items() if f":{k}" in statement})
            columns_0005 = {c["name"] for c in inspect(conn).get_columns("runs")}
        migrations.upgrade(url)  # the app runs at head
        with make_session_factory(engine)() as session:
            assert [(r.name, r.elapsed_seconds) for r in session.scalars(select(Run).order_by(Run.id))] == [
                ("trec", None),
                ("timed", {"1": 30.5, "2": 7.0}),
                ("untimed", None),
            ]
            assert b"".join(runs.download_run(session, organiser, 2)[1]).decode().split("\n")[0] == "1 Q0 a 1 -1 p_1"
            submission = runs.Submission(data=XML_RUN.encode(), metadata=runs.RunMetadata(name="new"), team_id=1)
            new = runs.submit_run(session, organiser, 1, submission, max_errors=5)
            assert (new.elapsed_seconds, new.novelty, new.description) == ({"1": 30.5, "2": 7.0}, False, "d")
            session.commit()
        migrations.downgrade(url, "0005")
        assert {c["name"] for c in inspect(engine).get_columns("runs")} == columns_0005
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM runs")).scalar_one() == 4
        migrations.upgrade(url)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT elapsed_seconds FROM runs WHERE name = 'new'")).scalar_one() == {
                "1": 30.5,
                "2": 7.0,
            }
    finally:
        engine.dispose()


AT_0006 = """
INSERT INTO campaigns (id, name, description, task_kind, status, max_results, max_runs_per_team) VALUES
  (1, 'moments', '', 'moments', 'closed', 100, 5);
INSERT INTO topics (id, campaign_id, number, title, description) VALUES (11, 1, '1', 'one', '');
INSERT INTO teams (id, campaign_id, name) VALUES (1, 1, 'team m');
INSERT INTO assessors (id, campaign_id, name) VALUES (1, 1, 'ann');
INSERT INTO runs (id, campaign_id, team_id, name, tag, format, system_type, novelty, training_type, priority,
                  description, n_entries, n_topics, sha256, content) VALUES
  (1, 1, 1, 'gamma', NULL, 'moments', 'F', false, 'D', 1, '', 2, 1, '', :gamma);
INSERT INTO ground_truth_segments (id, topic_id, video_id, start, "end") VALUES (1, 11, 'vidA', 10, 20);
SELECT setval(pg_get_serial_sequence(t, 'id'), 100) FROM unnest(ARRAY['campaigns', 'topics', 'teams', 'runs',
  'assessors', 'ground_truth_segments']) AS t;
"""


def test_a_database_made_at_0006_with_a_moment_campaign_upgrades_to_0007_and_pools_and_marks_it(create_database):
    """0007 adds moment pools, marks and moment ground-truth versions; a moment campaign made at 0006 gets a moment
    pool, marks (audited) and a cut version on it, still evaluates on its uploaded ground truth, and the downgrade
    gives back 0006's tables with their data."""
    from app.services import evaluations, moment_judging, pools
    from app.services.auth import Principal
    from app.storage.database import make_session_factory
    from app.storage.models import Role

    url = create_database()
    engine = make_engine(url)
    organiser = Principal(Role.organiser, token_id=0)
    ann = Principal(Role.assessor, token_id=0, campaign_id=1, assessor_id=1)
    try:
        migrations.upgrade(url, "0006")
        with engine.begin() as conn:
            for statement in AT_0006.split(";\n"):
                if statement.strip():
                    params = {"gamma": zlib.compress(OLD_MOMENTS.encode())} if ":gamma" in statement else {}
                    conn.execute(text(statement), params)
            tables_0006 = set(inspect(conn).get_table_names())
        migrations.upgrade(url, "0007")
        assert {"moment_pool_items", "moment_judgements", "moment_truth_segments"} <= set(
            inspect(engine).get_table_names()
        )
        migrations.upgrade(url)  # today's app runs on head: later revisions must keep 0006's data working too
        with make_session_factory(engine)() as session:
            spec = moment_judging.MomentPoolSpec(depth=2, iou=0.5, seed=1)
            pool = moment_judging.create_moment_pool(session, organiser, 1, spec)
            assert moment_judging.moment_topic_counts(session, pool) == [{"topic": "1", "proposed": 2, "judged": 0}]
            pools.assign_topics(session, organiser, pool.id, [("1", 1)])
            while (item := moment_judging.next_item(session, ann)) is not None:
                moment_judging.mark(session, ann, item.item_id, [(item.start, item.end)] if item.start < 30 else [])
            version = moment_judging.cut_moment_truth(session, organiser, pool.id, "marks")
            assert b"".join(moment_judging.export_moment_truth(session, organiser, version.id)) == b"1\tvidA\t11\t19\n"
            audited = session.execute(text("SELECT count(*) FROM audit_events WHERE table_name = 'moment_judgements'"))
            assert audited.scalar_one() == 2
            evaluation = evaluations.start_evaluation(session, organiser, 1, measures=["R@1,0.5"])
            assert evaluation.qrels_version_id is None  # the uploaded ground truth is still the default
            evaluations.run_evaluation(session, evaluation.id)
            session.commit()
        migrations.downgrade(url, "0006")
        assert set(inspect(engine).get_table_names()) == tables_0006
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM ground_truth_segments")).scalar_one() == 1
            assert conn.execute(text("SELECT count(*) FROM qrels_versions")).scalar_one() == 1
        migrations.upgrade(url)
    finally:
        engine.dispose()


AT_0007 = """
INSERT INTO campaigns (id, name, description, task_kind, status, max_results, max_runs_per_team) VALUES
  (1, 'shots', '', 'shots', 'judging', 100, 5);
INSERT INTO topics (id, campaign_id, number, title, description) VALUES (11, 1, '1', 'one', '');
INSERT INTO pools (id, campaign_id, kind, params, seed) VALUES
  (1, 1, 'depth', '{"strata": [[1, 2, 1.0]], "depth": 2, "run_ids": []}', 3);
INSERT INTO qrels_versions (id, campaign_id, label, kind, source, pool_id, n_entries) VALUES
  (1, 1, 'cut', 'trec', 'cut', 1, 1), (2, 1, 'imported', 'trec', 'imported', NULL, 1),
  (3, 1, 'marks', 'moments', 'cut', NULL, 0);
INSERT INTO qrels_entries (qrels_version_id, topic_id, docno, stratum, grade) VALUES
  (1, 11, 'a', NULL, 1), (2, 11, 'b', NULL, 0);
SELECT setval(pg_get_serial_sequence(t, 'id'), 100) FROM unnest(ARRAY['campaigns', 'topics', 'pools',
  'qrels_versions']) AS t;
"""


def test_a_database_made_at_0007_with_qrels_upgrades_to_0008_and_marks_how_they_were_judged(create_database):
    """0008 records how a cut version's judgements were ordered: versions cut before it came from shuffled pools
    (the only order there was), imported ones have none; their marks say neither is biased; moment cuts took the first
    assessor's marks; and the downgrade gives back 0007's table with its rows."""
    from app.services.qrels import order_mark
    from app.storage.database import make_session_factory
    from app.storage.models import QrelsVersion

    url = create_database()
    engine = make_engine(url)
    try:
        migrations.upgrade(url, "0007")
        with engine.begin() as conn:
            for statement in AT_0007.split(";\n"):
                if statement.strip():
                    conn.execute(text(statement))
            columns_0007 = {c["name"] for c in inspect(conn).get_columns("qrels_versions")}
        migrations.upgrade(url, "0008")
        with engine.connect() as conn:  # at 0008 itself; the models below are head's
            rows = conn.execute(
                text("SELECT id, judging_order, unjudged_sampled, combine FROM qrels_versions ORDER BY id")
            )
            assert [tuple(r) for r in rows] == [
                (1, "shuffled", None, None),
                (2, None, None, None),
                (3, None, None, "first"),
            ]
        migrations.upgrade(url)  # today's app runs on head: later revisions must keep 0007's data working too
        with make_session_factory(engine)() as session:
            cut, imported = session.get(QrelsVersion, 1), session.get(QrelsVersion, 2)
            assert (cut.judging_order, cut.unjudged_sampled) == ("shuffled", None)
            assert (imported.judging_order, imported.unjudged_sampled) == (None, None)
            assert order_mark(cut) == {
                "order": "shuffled", "random": True, "unjudged_sampled": None, "biased": False, "note": None
            }  # fmt: skip
            assert order_mark(imported) is None
            marks = session.get(QrelsVersion, 3)
            assert (marks.judging_order, marks.combine, cut.combine) == (None, "first", None)
        migrations.downgrade(url, "0007")
        assert {c["name"] for c in inspect(engine).get_columns("qrels_versions")} == columns_0007
        with engine.connect() as conn:
            assert conn.execute(text("SELECT count(*) FROM qrels_entries")).scalar_one() == 2
        migrations.upgrade(url)
    finally:
        engine.dispose()


AT_0008 = """
INSERT INTO campaigns (id, name, description, task_kind, status, max_results, max_runs_per_team) VALUES
  (1, 'shots', '', 'shots', 'judging', 100, 5), (2, 'moments', '', 'moments', 'closed', 100, 5);
INSERT INTO topics (id, campaign_id, number, title, description) VALUES
  (11, 1, '1', 'one', ''), (19, 1, '9', 'nine', ''), (20, 1, '10', 'ten', ''), (21, 2, '1', 'moment', '');
INSERT INTO teams (id, campaign_id, name) VALUES (1, 1, 'team a');
INSERT INTO runs (id, campaign_id, team_id, name, tag, format, system_type, novelty, training_type, priority,
                  description, n_entries, n_topics, sha256, content) VALUES
  (1, 1, 1, 'alpha', 'alpha', 'trec', 'F', false, 'D', 1, '', 3, 2, 'abc123', :alpha);
INSERT INTO collection_items (campaign_id, shot_id, video_id, start, "end") VALUES
  (1, 'a', 'v1', 0, 1), (1, 'b', 'v1', 1, 2);
INSERT INTO pools (id, campaign_id, kind, params, seed) VALUES
  (1, 1, 'stratified', '{"strata": [[1, 2, 1.0]], "depth": 2, "run_ids": [1]}', 3);
INSERT INTO qrels_versions (id, campaign_id, label, kind, source, pool_id, n_entries, judging_order, unjudged_sampled,
                            combine) VALUES
  (1, 1, 'cut', 'sample_eval', 'cut', 1, 3, 'shuffled', 1, NULL),
  (2, 1, 'imported', 'trec', 'imported', NULL, 1, NULL, NULL, NULL),
  (3, 2, 'marks', 'moments', 'cut', NULL, 0, NULL, NULL, 'first');
INSERT INTO qrels_entries (qrels_version_id, topic_id, docno, stratum, grade) VALUES
  (1, 11, 'a', 1, 1), (1, 19, 'b', 1, -1), (1, 20, 'c', 1, 0), (2, 11, 'a', NULL, 1);
SELECT setval(pg_get_serial_sequence(t, 'id'), 100) FROM unnest(ARRAY['campaigns', 'topics', 'teams', 'runs',
  'pools', 'qrels_versions']) AS t;
"""
ACTOR = text("SELECT set_config('trecpool.actor', '{\"kind\": \"cli\"}', true)")


def _load(engine, script: str, **params: object) -> None:  # type: ignore[no-untyped-def]
    """Run the statements of a data script in one transaction."""
    with engine.begin() as conn:
        for statement in script.split(";\n"):
            if statement.strip():
                conn.execute(text(statement), {k: v for k, v in params.items() if f":{k}" in statement})


def _audit_function(conn) -> str:  # type: ignore[no-untyped-def]
    """The source of trecpool_audit()."""
    return conn.execute(text("SELECT prosrc FROM pg_proc WHERE proname = 'trecpool_audit'")).scalar_one()


def test_a_database_made_at_0008_with_data_upgrades_to_0009_audits_runs_and_bulk_tables_and_back(create_database):
    """0009 records each qrels version's topics without judgements (from its entries; unknown for moment cuts),
    audits runs (without their upload), topics and the collection (one event per statement), leaves 0004's trail
    as it was, and the downgrade gives back 0008's table, triggers and trecpool_audit()."""
    from app.services.qrels import unjudged_note
    from app.storage.database import make_session_factory
    from app.storage.models import QrelsVersion

    url = create_database()
    engine = make_engine(url)
    try:
        migrations.upgrade(url, "0008")
        _load(engine, AT_0008, alpha=zlib.compress(OLD_RUN.encode()))
        with engine.connect() as conn:
            columns_0008 = {c["name"] for c in inspect(conn).get_columns("qrels_versions")}
            function_0008 = _audit_function(conn)
        migrations.upgrade(url)  # the app runs at head
        with make_session_factory(engine)() as session:
            versions = {v.id: v for v in session.scalars(select(QrelsVersion))}
            assert {i: v.unjudged_topics for i, v in versions.items()} == {1: ["9"], 2: ["9", "10"], 3: None}
            assert unjudged_note(versions[2], 3) == (
                "2 of 3 topic(s) have no judgement in qrels version 'imported' (9, 10): scores on them say nothing "
                "about the runs, and the means are not those of the whole topic set"
            )
            assert versions[3].combine == "first"
        with engine.begin() as conn:
            start = conn.execute(text("SELECT max(id) FROM audit_events")).scalar_one()  # the data's own inserts
            conn.execute(ACTOR)
            conn.execute(text("UPDATE campaigns SET description = 'changed' WHERE id = 1"))
            conn.execute(text("DELETE FROM runs WHERE id = 1"))
            conn.execute(text("UPDATE topics SET title = 'nine!' WHERE id = 19"))
            conn.execute(text("DELETE FROM collection_items WHERE campaign_id = 1 AND shot_id = 'b'"))
            conn.execute(text("INSERT INTO collection_items VALUES (1, 'c', 'v2', 0, 1), (1, 'd', 'v3', 0, 1)"))
        with engine.connect() as conn:
            events = conn.execute(
                text(
                    "SELECT campaign_id, table_name, row_id, action, actor, before, after FROM audit_events "
                    "WHERE id > :start ORDER BY id"
                ),
                {"start": start},
            ).all()
        cli = {"kind": "cli"}
        run = events[1]
        assert run[:5] == (1, "runs", "1", "delete", cli) and run.after is None
        assert "content" not in run.before and (run.before["name"], run.before["sha256"]) == ("alpha", "abc123")
        assert [tuple(e) for e in events[:1] + events[2:]] == [
            (1, "campaigns", "1", "update", cli, {"description": ""}, {"description": "changed"}),
            (1, "topics", "19", "update", cli, {"title": "nine"}, {"title": "nine!"}),
            (1, "collection_items", None, "delete", cli, {"shots": 1, "videos": 1}, None),
            (1, "collection_items", None, "insert", cli, None, {"shots": 2, "videos": 2}),
        ]
        migrations.downgrade(url, "0008")
        with engine.begin() as conn:
            assert {c["name"] for c in inspect(conn).get_columns("qrels_versions")} == columns_0008
            assert _audit_function(conn) == function_0008
            assert conn.execute(text("SELECT to_regprocedure('trecpool_audit_rows()')")).scalar() is None
            conn.execute(text("DELETE FROM topics WHERE id = 21"))
            conn.execute(text("DELETE FROM collection_items"))
            newer = text("SELECT count(*) FROM audit_events WHERE id > :start")
            assert conn.execute(newer, {"start": start}).scalar_one() == 5  # no trigger left to add one
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
    finally:
        engine.dispose()


AT_0003 = """
INSERT INTO campaigns (id, name, description, task_kind, status, max_results, max_runs_per_team) VALUES
  (1, 'shots', '', 'shots', 'open', 100, 5);
INSERT INTO teams (id, campaign_id, name) VALUES (1, 1, 'team a');
INSERT INTO api_tokens (id, token_hash, role, label, campaign_id, team_id) VALUES
  (1, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'team', '', 1, 1);
SELECT setval(pg_get_serial_sequence(t, 'id'), 100) FROM unnest(ARRAY['campaigns', 'teams', 'api_tokens']) AS t;
"""


def test_a_database_made_while_0004_and_0005_were_placeholders_upgrades_to_head(create_database):
    """0004 and 0005 were released empty and filled in later: a database made then is stamped 0005 without the audit
    trail or team_results, and 0007's trigger failed (`function trecpool_audit() does not exist`). The upgrade now
    applies the two again first, keeping the data."""
    from alembic import command

    url = create_database()
    engine = make_engine(url)
    try:
        migrations.upgrade(url, "0003")
        _load(engine, AT_0003)
        command.stamp(migrations.alembic_config(url), "0005")  # what upgrading through the placeholders left
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
        with engine.begin() as conn:
            assert conn.execute(text("SELECT team_results FROM campaigns")).scalar_one() == "own"
            assert conn.execute(text("SELECT expires_at FROM api_tokens")).scalar_one() is None
            conn.execute(ACTOR)
            conn.execute(text("UPDATE campaigns SET status = 'closed' WHERE id = 1"))
            audited = conn.execute(text("SELECT table_name, before, after FROM audit_events")).all()
        assert [tuple(e) for e in audited] == [("campaigns", {"status": "open"}, {"status": "closed"})]
        migrations.downgrade(url, "0003")  # and back, through the repaired revisions
        assert "audit_events" not in inspect(engine).get_table_names()
    finally:
        engine.dispose()


def test_a_database_missing_part_of_a_released_revision_is_refused_naming_it(create_database):
    """A revision partly applied (here 0004's table without its function) cannot be mended: SchemaDrift says what is
    missing instead of a failure deep in a later revision, and nothing changes."""
    from alembic import command

    url = create_database()
    engine = make_engine(url)
    try:
        migrations.upgrade(url, "0003")
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE audit_events (id bigint PRIMARY KEY)"))
        command.stamp(migrations.alembic_config(url), "0006")
        with pytest.raises(migrations.SchemaDrift) as refused:
            migrations.upgrade(url)
        assert str(refused.value).startswith(
            "the database is at revision 0006 but lacks the audit trail (audit_events, trecpool_audit()) or judging "
            "links of revision 0004: it was made by an edited copy of revision 0004"
        )
        assert migrations.current_revision(engine) == "0006"
    finally:
        engine.dispose()


def test_a_database_made_by_0008_before_it_gained_combine_gets_the_column_from_0009(create_database):
    """0008 was edited (combine added) before release: a database made by the first 0008 lacks the column, and the
    app fails on every qrels version; 0009 adds it with what 0008 would have filled in."""
    url = create_database()
    engine = make_engine(url)
    try:
        migrations.upgrade(url, "0008")
        _load(engine, AT_0008, alpha=zlib.compress(OLD_RUN.encode()))
        with engine.begin() as conn:
            conn.execute(text("ALTER TABLE qrels_versions DROP COLUMN combine"))
        migrations.upgrade(url)
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT id, combine FROM qrels_versions ORDER BY id")).all()
        assert [tuple(r) for r in rows] == [(1, None), (2, None), (3, "first")]
    finally:
        engine.dispose()


KEPT_0009 = ("campaigns", "topics", "teams", "runs", "collection_items", "pools", "qrels_versions", "qrels_entries")
BLOB_ROW = "INSERT INTO blobs (campaign_id, name, media_type, content) VALUES (1, 'plot.svg', 'image/svg+xml', 'x')"


def _blobs_table(conn) -> dict[str, object] | None:  # type: ignore[no-untyped-def]
    """The blobs table as the inspector sees it (None when there is none)."""
    found = inspect(conn)
    if "blobs" not in found.get_table_names():
        return None
    return {
        "columns": [(c["name"], str(c["type"]), c["nullable"], c["default"]) for c in found.get_columns("blobs")],
        "primary_key": found.get_pk_constraint("blobs"),
        "foreign_keys": found.get_foreign_keys("blobs"),
        "unique": found.get_unique_constraints("blobs"),
        "indexes": found.get_indexes("blobs"),
    }


def test_a_database_at_0009_with_data_upgrades_to_0010_without_the_blobs_table_and_back(create_database):
    """0010 drops `blobs` (nothing wrote or read it) and keeps every other row; rows put in it by hand stop the
    upgrade, naming them, with nothing changed; the downgrade makes 0001's table again, empty."""
    from app.services import runs
    from app.services.auth import Principal
    from app.storage.database import make_session_factory
    from app.storage.models import Role

    url = create_database()
    engine = make_engine(url)
    count = "SELECT count(*) FROM {}"
    try:
        migrations.upgrade(url, "0009")
        _load(engine, AT_0008, alpha=zlib.compress(OLD_RUN.encode()))
        with engine.connect() as conn:
            rows_0009 = {t: conn.execute(text(count.format(t))).scalar_one() for t in KEPT_0009}
            blobs_0009 = _blobs_table(conn)
        assert blobs_0009 is not None and rows_0009["qrels_entries"] == 4
        _load(engine, BLOB_ROW)
        with pytest.raises(migrations.RowsInTheWay) as refused:
            migrations.upgrade(url, "0010")
        assert str(refused.value).startswith("revision 0010 drops the blobs table, which nothing in trecpool reads, ")
        assert "it holds 1 row(s) put there by hand: save them (pg_dump --table=blobs)" in str(refused.value)
        assert migrations.current_revision(engine) == "0009"
        with engine.begin() as conn:
            assert conn.execute(text(count.format("blobs"))).scalar_one() == 1
            conn.execute(text("DELETE FROM blobs"))
        migrations.upgrade(url, "0010")
        with engine.connect() as conn:
            assert _blobs_table(conn) is None
            assert {t: conn.execute(text(count.format(t))).scalar_one() for t in KEPT_0009} == rows_0009
        migrations.upgrade(url)  # the app runs at head
        with make_session_factory(engine)() as session:
            organiser = Principal(Role.organiser, token_id=0)
            assert b"".join(runs.download_run(session, organiser, 1)[1]).decode() == OLD_RUN
        migrations.downgrade(url, "0009")
        with engine.connect() as conn:
            assert _blobs_table(conn) == blobs_0009
            assert {t: conn.execute(text(count.format(t))).scalar_one() for t in KEPT_0009} == rows_0009
        _load(engine, BLOB_ROW)  # the table takes rows again, as 0001 made it
        with engine.begin() as conn:
            conn.execute(text("DELETE FROM blobs"))
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
    finally:
        engine.dispose()


AT_0010 = """
INSERT INTO evaluations (id, campaign_id, qrels_version_id, status, progress, measures, finished_at) VALUES
  (1, 1, 2, 'done', 1.0, '{"names": ["AP"]}', now());
INSERT INTO scores (evaluation_id, run_id, measure, topic, value) VALUES
  (1, 1, 'AP', '1', 1.0), (1, 1, 'AP', 'all', 1.0);
INSERT INTO run_means (evaluation_id, run_id, measure, value) VALUES (1, 1, 'AP', 1.0);
SELECT setval(pg_get_serial_sequence('evaluations', 'id'), 100);
"""


def test_a_database_at_0010_with_an_evaluation_upgrades_to_0011_and_its_board_shows_no_interval(create_database):
    """0011 adds run_means.ci_low, ci_high and sampling_se, NULL for the means stored before: the board of that
    evaluation shows no interval rather than failing, a new evaluation stores its intervals, and the downgrade gives
    back 0010's table with every row."""
    from app.services import evaluations, leaderboards
    from app.services.auth import Principal
    from app.storage.database import make_session_factory
    from app.storage.models import Role

    url = create_database()
    engine = make_engine(url)
    organiser = Principal(Role.organiser, token_id=0)
    try:
        migrations.upgrade(url, "0010")
        _load(engine, AT_0008 + AT_0010, alpha=zlib.compress(OLD_RUN.encode()))
        with engine.connect() as conn:
            columns_0010 = {c["name"] for c in inspect(conn).get_columns("run_means")}
        migrations.upgrade(url)  # the app runs at head
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT run_id, measure, value, ci_low, ci_high, sampling_se FROM run_means"))
            assert [tuple(r) for r in rows] == [(1, "AP", 1.0, None, None, None)]
        with make_session_factory(engine)() as session:
            board = leaderboards.live_leaderboard(session, organiser, 1, measure="AP")
            assert board["interval"] is None
            assert [(r["run"], r["score"], r["ci_low"], r["tier"]) for r in board["rows"]] == [
                ("alpha", 1.0, None, None)
            ]
            evaluation = evaluations.start_evaluation(session, organiser, 1, qrels_version_id=2, measures=["AP"])
            evaluations.run_evaluation(session, evaluation.id)
            session.commit()
            fresh = leaderboards.live_leaderboard(session, organiser, 1, measure="AP")
            assert fresh["interval"]["level"] == 0.95
            assert [(r["ci_low"], r["ci_high"], r["rank_low"], r["tier"]) for r in fresh["rows"]] == [(1.0, 1.0, 1, 1)]
        migrations.downgrade(url, "0010")
        with engine.connect() as conn:
            assert {c["name"] for c in inspect(conn).get_columns("run_means")} == columns_0010
            assert conn.execute(text("SELECT count(*) FROM run_means")).scalar_one() == 2
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
    finally:
        engine.dispose()


AT_0011 = """
INSERT INTO assessors (id, campaign_id, name) VALUES (1, 1, 'ann');
INSERT INTO pool_items (id, pool_id, topic_id, docno, stratum, sampled, best_rank, n_runs, judging_order) VALUES
  (1, 1, 11, 'a', 1, true, 1, 1, 0);
INSERT INTO judgements (id, pool_item_id, assessor_id, round, verdict, grade) VALUES (1, 1, 1, 1, 'relevant', 1)
"""


def test_a_database_at_0011_with_assessors_and_versions_upgrades_to_0012_as_people_on_a_binary_scale(create_database):
    """0012: every assessor before it is a person, every campaign binary, every qrels version people's, every entry
    and mean without a model's inputs; a model verdict is audited and refused off its range; the downgrade gives back
    0011's tables."""
    url = create_database()
    engine = make_engine(url)
    try:
        migrations.upgrade(url, "0011")
        _load(engine, AT_0008 + AT_0010 + ";\n" + AT_0011, alpha=zlib.compress(OLD_RUN.encode()))
        with engine.connect() as conn:
            tables_0011 = set(inspect(conn).get_table_names())
        migrations.upgrade(url)
        with engine.begin() as conn:
            assert conn.execute(text("SELECT id, kind, provenance FROM assessors")).all() == [(1, "human", None)]
            assert conn.execute(text("SELECT max_grade FROM campaigns ORDER BY id")).scalars().all() == [1, 1]
            assert conn.execute(text("SELECT DISTINCT judges FROM qrels_versions")).scalars().all() == ["human"]
            entries = conn.execute(
                text(
                    "SELECT DISTINCT model_grade, model_probability, human_grade, verification_probability"
                    " FROM qrels_entries"
                )
            ).all()
            assert entries == [(None, None, None, None)]
            assert conn.execute(text("SELECT DISTINCT estimator FROM run_means")).all() == [(None,)]
            assert conn.execute(text("SELECT verification_sampled FROM pool_items")).scalars().all() == [None]
            conn.execute(text("UPDATE assessors SET kind = 'model', provenance = '{\"model\": \"m\"}' WHERE id = 1"))
            conn.execute(
                text("INSERT INTO model_verdicts (pool_item_id, assessor_id, grade, probability) VALUES (1, 1, 1, 0.8)")
            )
            audited = conn.execute(
                text("SELECT campaign_id, action FROM audit_events WHERE table_name = 'model_verdicts'")
            )
            assert audited.all() == [(1, "insert")]
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(
                text("INSERT INTO model_verdicts (pool_item_id, assessor_id, grade, probability) VALUES (1, 1, 0, 1.5)")
            )
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(text("UPDATE assessors SET kind = 'robot'"))
        migrations.downgrade(url, "0011")
        with engine.connect() as conn:
            assert set(inspect(conn).get_table_names()) == tables_0011
            assert "kind" not in {c["name"] for c in inspect(conn).get_columns("assessors")}
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
    finally:
        engine.dispose()


def test_a_database_at_0012_upgrades_to_0013_with_the_console_s_defaults(create_database):
    """0013: campaigns made before it keep named teams, sound on and second opinions every 10 verdicts; runs are no
    baselines; topics have no guidelines or examples; the interleaving is bounded; the downgrade drops them again."""
    url = create_database()
    engine = make_engine(url)
    try:
        migrations.upgrade(url, "0012")
        _load(engine, AT_0008 + AT_0010 + ";\n" + AT_0011, alpha=zlib.compress(OLD_RUN.encode()))
        migrations.upgrade(url, "0013")
        with engine.begin() as conn:
            settings = conn.execute(text("SELECT anonymise_teams, audio_on, interleave_every FROM campaigns"))
            assert set(settings.all()) == {(False, True, 10)}
            assert conn.execute(text("SELECT DISTINCT baseline FROM runs")).scalars().all() == [False]
            topics = conn.execute(text("SELECT DISTINCT guidelines, examples FROM topics")).all()
            assert topics == [("", None)]
        with pytest.raises(IntegrityError), engine.begin() as conn:
            conn.execute(text("UPDATE campaigns SET interleave_every = 1001"))
        migrations.downgrade(url, "0012")
        with engine.connect() as conn:
            assert "audio_on" not in {c["name"] for c in inspect(conn).get_columns("campaigns")}
            assert "guidelines" not in {c["name"] for c in inspect(conn).get_columns("topics")}
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
    finally:
        engine.dispose()
