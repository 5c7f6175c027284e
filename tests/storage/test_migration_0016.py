"""Migration 0016 (compact scores) moves every score row of 0015 into arrays, reads them back the same, is several
times smaller per score, and goes back; a board's score query reads one index range of one evaluation."""

from __future__ import annotations

import json
from collections.abc import Callable

from sqlalchemy import Connection, inspect, text
from sqlalchemy.orm import Session

from app.services import score_store
from app.services.scores import leaderboard_table
from app.storage import migrations
from app.storage.database import make_engine
from app.storage.models import Campaign, Evaluation

N_RUNS, N_TOPICS, MEASURES = 100, 50, ("AP", "P@10", "nDCG@10", "bpref", "Rprec", "RR", "recall@1000", "num_rel_ret")
AT_0015 = """
INSERT INTO campaigns (id, name, description, task_kind, status, max_results, max_runs_per_team) VALUES
  (1, 'shots', '', 'shots', 'evaluated', 1000, 500);
INSERT INTO teams (id, campaign_id, name) VALUES (1, 1, 'team a');
"""
RUNS = """
INSERT INTO runs (id, campaign_id, team_id, name, tag, format, system_type, novelty, training_type, priority,
                  description, n_entries, n_topics, sha256, content, storage_key)
  SELECT r, 1, 1, 'run ' || r, 'run' || r, 'trec', 'F', false, 'D', 1, '', 1, 1, '', '\\x00', '' FROM
  generate_series(1, :runs) r
"""
EVALUATIONS = """
INSERT INTO evaluations (id, campaign_id, status, progress, measures, finished_at)
  SELECT e, 1, 'done', 1.0, :measures, now() FROM generate_series(1, :evaluations) e
"""
# evaluation 1: a few hand-made rows (a run without topic 3, a NaN, a run with its mean only for RR)
SMALL = """
INSERT INTO scores (evaluation_id, run_id, measure, topic, value) VALUES
  (1, 1, 'AP', '1', 0.5), (1, 1, 'AP', '2', 0.1), (1, 1, 'AP', '3', 'NaN'), (1, 1, 'AP', 'all', 0.3),
  (1, 2, 'AP', '1', 0.25), (1, 2, 'AP', '2', 1e-300), (1, 2, 'AP', 'all', 0.125), (1, 2, 'RR', 'all', 1.0),
  (1, 1, 'P@10', '10', 0.30000000000000004), (1, 1, 'P@10', 'all', 0.30000000000000004);
"""
# evaluation 2: a synthetic campaign's scores, every run x measure x topic and the mean ('all')
SYNTHETIC = """
INSERT INTO scores (evaluation_id, run_id, measure, topic, value)
  SELECT 2, r, m, t, ((r * 7919 + t::int * 104729 + length(m) * 31) % 10007) / 10007.0
  FROM generate_series(1, :runs) r, unnest(CAST(:measures AS text[])) m,
       (SELECT generate_series(1, :topics)::text AS t) topics
  UNION ALL SELECT 2, r, m, 'all', r / 1000.0 FROM generate_series(1, :runs) r, unnest(CAST(:measures AS text[])) m
"""
ROWS = "SELECT evaluation_id, run_id, measure, topic, value::text FROM scores ORDER BY 1, 2, 3, 4"


def _bytes_per_score(conn: Connection, tables: tuple[str, ...]) -> float:
    """The tables' total size (rows, keys, indexes, TOAST) over the number of scores."""
    size = sum(conn.execute(text("SELECT pg_total_relation_size(:t)"), {"t": t}).scalar_one() for t in tables)
    return float(size / conn.execute(text("SELECT count(*) FROM scores")).scalar_one())


def test_a_database_at_0015_with_scores_upgrades_to_arrays_and_back(create_database: Callable[[], str]) -> None:
    url = create_database()
    engine = make_engine(url)
    names = json.dumps({"names": list(MEASURES)})
    try:
        migrations.upgrade(url, "0015")
        with engine.begin() as conn:
            conn.execute(text(AT_0015))
            conn.execute(text(RUNS), {"runs": N_RUNS})
            conn.execute(text(EVALUATIONS), {"measures": names, "evaluations": 2})
            conn.execute(text(SMALL))
            conn.execute(text(SYNTHETIC), {"runs": N_RUNS, "topics": N_TOPICS, "measures": list(MEASURES)})
            before = conn.execute(text(ROWS)).all()
            bytes_before = _bytes_per_score(conn, ("scores",))
        assert len(before) == 10 + N_RUNS * len(MEASURES) * (N_TOPICS + 1)
        migrations.upgrade(url, "0016")
        with engine.begin() as conn:
            assert conn.execute(text(ROWS)).all() == before  # the view `scores`: the same rows, bit for bit
            arrays = conn.execute(
                text("SELECT run_id, measure, per_topic::text FROM score_arrays WHERE evaluation_id = 1 ORDER BY 1, 2")
            ).all()
            order = conn.execute(text("SELECT topics FROM score_topics WHERE evaluation_id = 1")).scalar()
            assert order == ["1", "2", "3", "10", "all"]
            assert arrays == [
                (1, "AP", "{0.5,0.1,NaN,NULL,0.3}"),
                (1, "P@10", "{NULL,NULL,NULL,0.30000000000000004,0.30000000000000004}"),
                (2, "AP", "{0.25,1e-300,NULL,NULL,0.125}"),
                (2, "RR", "{NULL,NULL,NULL,NULL,1}"),
            ]
            bytes_after = _bytes_per_score(conn, ("score_arrays", "score_topics"))
        print(f"bytes per score: {bytes_before:.1f} as rows (0015), {bytes_after:.1f} as arrays (0016)")
        assert bytes_after * 5 < bytes_before and bytes_after < 15
        migrations.upgrade(url)  # the models are head's: read the arrays through them there
        with Session(engine) as session:
            stored = score_store.read_scores(session, 2, measure="AP", run_ids=[3])
            assert stored.topics[:3] == ["1", "2", "3"] and stored.measures == ["AP"]
            assert stored.values[0, 0] == ((3 * 7919 + 104729 + 2 * 31) % 10007) / 10007
            evaluation, campaign = session.get(Evaluation, 2), session.get(Campaign, 1)
            assert evaluation is not None and campaign is not None
            board = leaderboard_table(session, campaign, evaluation, "AP")
            assert board.topics == [str(t) for t in range(1, N_TOPICS + 1)]
            assert board.values[2, 0, 0] == stored.values[0, 0]  # run 3's row
        migrations.downgrade(url, "0015")
        with engine.connect() as conn:
            assert conn.execute(text(ROWS)).all() == before
            assert {"score_arrays", "score_topics"} & set(inspect(conn).get_table_names()) == set()
            assert "ix_scores_measure" in {i["name"] for i in inspect(conn).get_indexes("scores")}
        migrations.upgrade(url)
        assert migrations.current_revision(engine) == migrations.head_revision()
    finally:
        engine.dispose()


def test_a_boards_score_query_reads_one_index_range_of_one_evaluation(create_database: Callable[[], str]) -> None:
    """EXPLAIN of the arrays one board reads (one evaluation, one measure) among several evaluations' scores: an
    index scan of the primary key bounded on both, no sequential scan."""
    url = create_database()
    migrations.upgrade(url, "0015")
    engine = make_engine(url)
    names = json.dumps({"names": list(MEASURES)})
    try:
        with engine.begin() as conn:
            conn.execute(text(AT_0015))
            conn.execute(text(RUNS), {"runs": N_RUNS})
            conn.execute(text(EVALUATIONS), {"measures": names, "evaluations": 3})
            for evaluation in (1, 2, 3):
                synthetic = SYNTHETIC.replace("SELECT 2,", f"SELECT {evaluation},")
                conn.execute(text(synthetic), {"runs": N_RUNS, "topics": N_TOPICS, "measures": list(MEASURES)})
        migrations.upgrade(url)
        with engine.begin() as conn:
            conn.execute(text("ANALYZE score_arrays"))
            query = score_store.read_query(2, measure="AP")
            compiled = query.compile(conn, compile_kwargs={"literal_binds": True})
            plan = conn.execute(text(f"EXPLAIN (FORMAT JSON) {compiled}")).scalar_one()[0]["Plan"]
        assert plan["Node Type"] in ("Index Scan", "Bitmap Heap Scan"), plan
        scan = plan if plan["Node Type"] == "Index Scan" else plan["Plans"][0]
        assert scan["Index Name"] == "pk_score_arrays"
        assert scan["Index Cond"] == "((evaluation_id = 2) AND ((measure)::text = 'AP'::text))"
        assert "Seq Scan" not in json.dumps(plan)
    finally:
        engine.dispose()
