"""A run's stored upload is its one record: no entry table, nothing left after a delete, no rows for missing runs."""

from __future__ import annotations

import pytest
from sqlalchemy import func, inspect, select, text
from sqlalchemy.exc import IntegrityError

from app.services import campaigns, collection, evaluations, qrels, runs
from app.services.errors import InvalidInput
from app.storage.models import CampaignStatus, Evaluation, Run, RunMean, Score
from tests.services.conftest import ORGANISER


def tables_with_run_id(session) -> list[str]:  # type: ignore[no-untyped-def]
    """Every table that has a run_id column (not the view `scores`, whose rows are score_arrays')."""
    return list(
        session.scalars(
            text(
                "SELECT c.table_name FROM information_schema.columns c JOIN information_schema.tables t "
                "USING (table_schema, table_name) WHERE c.table_schema = 'public' AND c.column_name = 'run_id' "
                "AND t.table_type = 'BASE TABLE' ORDER BY c.table_name"
            )
        )
    )


def evaluated(campaign) -> Evaluation:  # type: ignore[no-untyped-def]
    """Import qrels for the campaign and run an evaluation of its runs to the end."""
    session = campaign.session
    text_ = "".join(f"{t} 0 d1 1\n{t} 0 d2 0\n" for t in campaign.topics)
    qrels.import_qrels(session, ORGANISER, campaign.id, text_.encode(), label=f"q{campaign.id}", max_errors=10)
    evaluation = evaluations.start_evaluation(session, ORGANISER, campaign.id, measures=["AP", "P@5"])
    evaluations.run_evaluation(session, evaluation.id)
    session.commit()
    return evaluation


def test_no_entry_tables_remain(session):
    names = set(inspect(session.connection()).get_table_names())
    assert "run_entries" not in names and "moment_entries" not in names
    # every table that names a run refers to it with a cascading foreign key
    for table in tables_with_run_id(session):
        keys = inspect(session.connection()).get_foreign_keys(table)
        assert any(k["referred_table"] == "runs" and k["options"].get("ondelete") == "CASCADE" for k in keys), table


def test_deleting_a_run_leaves_nothing(make_campaign):
    campaign = make_campaign()
    keep = campaign.submit("1 Q0 d1 1 2.0 k\n2 Q0 d2 1 1.0 k\n")
    gone = campaign.submit("1 Q0 d2 1 2.0 g\n3 Q0 d1 1 1.0 g\n")
    session = campaign.session
    campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.closed)
    evaluation = evaluated(campaign)
    assert session.scalar(select(func.count()).select_from(RunMean).where(RunMean.run_id == gone.id)) == 2
    gone_id = gone.id
    runs.delete_run(session, ORGANISER, gone_id)
    session.commit()
    tables = tables_with_run_id(session)
    assert {"score_arrays", "run_means", "pool_runs"} <= set(tables)
    for table in tables:
        left = session.scalar(text(f"SELECT count(*) FROM {table} WHERE run_id = :r"), {"r": gone_id})
        assert left == 0, table
    assert session.get(Run, gone_id) is None
    kept = session.scalar(select(func.count()).select_from(Score).where(Score.run_id == keep.id))
    assert kept == 2 * (len(campaign.topics) + 1) and evaluation.id


@pytest.mark.parametrize("table", ["score_arrays", "run_means"])
def test_rows_for_a_missing_run_are_refused(make_campaign, sessions, table):
    campaign = make_campaign()
    campaign.submit("1 Q0 d1 1 2.0 r\n")
    campaigns.set_status(campaign.session, ORGANISER, campaign.id, CampaignStatus.closed)
    evaluation = evaluated(campaign)
    missing = campaign.session.scalar(select(func.max(Run.id))) + 1000
    columns = "evaluation_id, run_id, measure, " + ("per_topic" if table == "score_arrays" else "value")
    values = ":e, :r, 'AP', " + ("'{0.5}'" if table == "score_arrays" else "0.5")
    with sessions() as session, pytest.raises(IntegrityError, match="foreign key"):
        session.execute(text(f"INSERT INTO {table} ({columns}) VALUES ({values})"), {"e": evaluation.id, "r": missing})
        session.flush()


def test_download_is_rendered_from_the_stored_upload(make_campaign):
    campaign = make_campaign()
    run = campaign.submit("1 Q0 a 1 3 t\n1 Q0 b 2 0.5 t\n2 Q0 c 1 1e-05 t\n3 Q0 d 7 -2.25 t\n")
    _, chunks = runs.download_run(campaign.session, ORGANISER, run.id)
    assert b"".join(chunks).decode() == "1 Q0 a 1 3 t\n1 Q0 b 2 0.5 t\n2 Q0 c 1 1e-05 t\n3 Q0 d 7 -2.25 t\n"


def test_unknown_shots_are_named_by_line_and_nothing_is_written(make_campaign):
    campaign = make_campaign()
    session = campaign.session
    collection.replace_collection(
        session, ORGANISER, campaign.id, b"a v1 0 1\nb v1 1 2\n", media_url_template=None, max_errors=10
    )
    session.commit()
    with pytest.raises(InvalidInput) as raised:
        campaign.submit("1 Q0 a 1 3 t\n1 Q0 zz 2 2 t\n2 Q0 zz 1 1 t\n2 Q0 b 2 0.5 t\n3 Q0 yy 1 1 t\n")
    assert [(e["line"], e["message"]) for e in raised.value.errors] == [
        (2, "shot 'zz' is not in the collection"),
        (3, "shot 'zz' is not in the collection"),
        (5, "shot 'yy' is not in the collection"),
    ]
    session.rollback()
    assert session.scalar(select(func.count()).select_from(Run).where(Run.campaign_id == campaign.id)) == 0
