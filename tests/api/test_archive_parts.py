"""Campaign archives beyond a shots campaign's pools and scores: a moment campaign (its pool, marks, ground truth,
AxIoU evaluation and an analysis) round-trips and verifies identical part by part; a tampered ground truth, score or
analysis result is caught and named in its part's summary; a campaign of a series carries its series, progress sets
(the sealed ones marked) and topics' sets, and import joins the series of that name or makes it."""

from __future__ import annotations

import copy
import io
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import select

from app.services import archive, archive_import, archive_verify, series
from app.services.archive_format import Verification
from app.services.archive_series import OPERATOR
from app.services.series import ProgressTopic
from app.storage.database import make_engine, make_session_factory
from app.storage.models import AnalysisJob, Campaign, Series, Topic
from tests.api.helpers import ANN, mark_all, start_analysis, wait_done

CODE = archive.CodeVersion("test", None)


def export(sessions, campaign_id: int) -> bytes:  # type: ignore[no-untyped-def]
    """The campaign's archive."""
    out = io.BytesIO()
    with sessions() as session:
        archive.export_campaign(session, campaign_id, out, CODE)
        session.rollback()
    return out.getvalue()


def records(data: bytes) -> list[dict[str, Any]]:
    """An archive's records."""
    return [record for _, record in archive.read_records(io.BytesIO(data))]


def rewritten(data: bytes, change) -> bytes:  # type: ignore[no-untyped-def]
    """The archive with `change` applied to a copy of its records, written again with a valid end record."""
    changed = copy.deepcopy(records(data))
    change(changed)
    out = io.BytesIO()
    archive.write_records(changed, out)
    return out.getvalue()


@pytest.fixture(scope="module")
def scratch(migrated_database) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """A session factory on a fresh, migrated database (verify's scratch database)."""
    engine = make_engine(migrated_database())
    yield make_session_factory(engine)
    engine.dispose()


def verify(scratch, data: bytes) -> Verification:  # type: ignore[no-untyped-def]
    """Verify an archive in the scratch database, rolled back after."""
    with scratch() as session:
        try:
            return archive_verify.verify_campaign(session, archive.read_records(io.BytesIO(data)))
        finally:
            session.rollback()


@pytest.fixture
def moment_archive(moment_pool, client, organiser, sessions) -> Iterator[tuple[bytes, dict[str, Any]]]:  # type: ignore[no-untyped-def]
    """A moment campaign marked by ann, its ground truth cut, evaluated (AxIoU) and analysed; its archive and ids."""
    campaign, pool, ann, _ = moment_pool
    mark_all(client, ann, ANN)
    cut = client.post(f"/api/moment-pools/{pool['id']}/truth", json={"label": "marked-v1"}, headers=organiser)
    assert cut.status_code == 201, cut.text
    started = client.post(
        f"/api/campaigns/{campaign.id}/evaluations", json={"qrels_version_id": cut.json()["id"]}, headers=organiser
    )
    assert started.status_code == 202, started.text
    wait_done(client, organiser, started.json()["id"])
    job = start_analysis(client, organiser, campaign.id, "moment-effectiveness")
    yield export(sessions, campaign.id), {"campaign": campaign.id, "analysis": job}
    with sessions() as session:  # other tests of the session read the database's campaigns
        session.delete(session.get_one(Campaign, campaign.id))
        session.commit()


def test_a_moment_campaign_round_trips_and_verifies_part_by_part(moment_archive, scratch, sessions):
    data, made = moment_archive
    found = records(data)
    assert found[1]["task_kind"] == "moments"
    tables = {r["table"]: len(r["rows"]) for r in found if r["type"] == "rows"}
    assert tables["moment_pool_items"] == 5 and tables["moment_judgements"] == 5  # ann marked every proposal
    assert tables["moment_truth_segments"] == 4  # as the cut's file: 12-18, 40-45, 50-52 and 2's 0-5
    (analysis,) = [r for r in found if r["type"] == "analysis"]
    assert analysis["kind"] == "moment-effectiveness" and analysis["status"] == "done"
    assert analysis["result"] == made["analysis"]["result"] and analysis["code"] == {
        "trecpool": "test",
        "git_commit": None,
    }
    evaluation = next(r for r in found if r["type"] == "evaluation")
    assert analysis["params"]["evaluation_id"] == evaluation["id"]

    checked = verify(scratch, data)
    assert checked.identical, [d.line() for d in checked.differences]
    parts = {name: (p.identical, p.different, p.not_recomputed) for name, p in checked.parts.items()}
    assert parts == {"pools": (1, 0, []), "qrels": (1, 0, []), "evaluations": (1, 0, []), "analyses": (1, 0, [])}
    assert checked.compared["moment_pool_items"] == 5 and checked.compared["moment_truth_segments"] == 4
    assert checked.analyses == [{"analysis": analysis["id"], "kind": "moment-effectiveness", "outcome": "identical"}]

    with sessions() as session:  # imported under another name and exported again: the same records
        done = archive_import.import_campaign(session, archive.read_records(io.BytesIO(data)), name="moments copy")
        session.commit()
        assert done.campaign is not None
        copy_id = done.campaign.id
    try:
        again = records(export(sessions, copy_id))
        assert [r["type"] for r in again] == [r["type"] for r in found]
        assert [len(r.get("rows", ())) for r in again] == [len(r.get("rows", ())) for r in found]
        (copied,) = [r for r in again if r["type"] == "analysis"]
        assert copied["result"] == analysis["result"] and copied["kind"] == analysis["kind"]
    finally:
        with sessions() as session:
            session.delete(session.get_one(Campaign, copy_id))
            session.commit()


def test_a_tampered_moment_archive_is_caught_in_every_part_it_touches(moment_archive, scratch):
    data, _ = moment_archive
    ids: list[int] = []

    def tamper(found: list[dict[str, Any]]) -> None:
        truth = next(r for r in found if r.get("table") == "moment_truth_segments")
        truth["rows"][0][4] = 19.0  # topic 1's [12, 18] stretched to [12, 19]
        analysis = next(r for r in found if r["type"] == "analysis")
        analysis["result"]["tampered"] = True
        ids.append(analysis["id"])

    checked = verify(scratch, rewritten(data, tamper))
    (analysis_id,) = ids
    assert not checked.identical
    qrels, evaluations, analyses = (checked.parts[p] for p in ("qrels", "evaluations", "analyses"))
    assert (qrels.identical, qrels.different) == (0, 1)
    assert qrels.first is not None and qrels.first.what == "qrels" and "segment 1" in qrels.first.where
    assert (qrels.first.archived, qrels.first.recomputed) == (("1", "vidA", 12.0, 19.0), ("1", "vidA", 12.0, 18.0))
    # the scores archived were computed on [12, 18]: scored again on the stored (stretched) truth, they differ
    assert evaluations.different == 1 and evaluations.first is not None and evaluations.first.what == "score"
    assert analyses.different == 1 and analyses.first is not None
    # the analysis reads the stored truth too, so its numbers differ; and the leaf added to its result is named
    assert analyses.first.where.startswith(f"analysis {analysis_id} (moment-effectiveness).")
    added = [d for d in checked.differences if d.where.endswith("(moment-effectiveness).tampered")]
    assert [(d.archived, d.recomputed) for d in added] == [(True, None)]
    assert checked.analyses[0]["outcome"] == "different" and checked.analyses[0]["first_difference"]
    assert checked.parts["pools"].identical == 1 and checked.parts["pools"].different == 0
    lines = checked.summary()
    assert lines[0] == "pools: 1 identical, 0 different"
    assert lines[1].startswith("qrels: 0 identical, 1 different (first: qrels: moment ground truth ")


def test_analyses_not_run_again_are_listed_with_why(moment_archive, scratch):
    data, _ = moment_archive
    with scratch() as session:
        try:
            checked = archive_verify.verify_campaign(session, archive.read_records(io.BytesIO(data)), analyses=False)
        finally:
            session.rollback()
    analyses = checked.parts["analyses"]
    assert (analyses.identical, analyses.different) == (0, 0)
    assert len(analyses.not_recomputed) == 1 and "asked not to run analyses again" in analyses.not_recomputed[0]
    assert checked.summary()[3] == "analyses: 0 identical, 0 different, 1 not recomputed"


@pytest.fixture
def series_campaign(make_campaign, sessions) -> Iterator[tuple[int, str]]:  # type: ignore[no-untyped-def]
    """A campaign in a new series with progress set A (released) and B (sealed); its id and the series' name."""
    campaign = make_campaign(n_topics=2)
    name = f"archive-series-{uuid.uuid4().hex[:8]}"
    with sessions() as session:
        made = series.create_series(session, OPERATOR, name, "two sets")
        series.add_campaign(session, OPERATOR, made.id, campaign.id)
        topics = [ProgressTopic("101", "p101", "", "A"), ProgressTopic("102", "p102", "", "B")]
        series.add_progress_topics(session, OPERATOR, made.id, topics)
        series.release_set(session, OPERATOR, made.id, "A")
        session.commit()
    yield campaign.id, name
    with sessions() as session:
        for found in session.scalars(select(Campaign).where(Campaign.series_id == made.id)):
            session.delete(found)
        session.delete(session.get_one(Series, made.id))
        session.commit()


def test_a_series_campaign_carries_its_series_and_import_joins_or_makes_it(series_campaign, sessions, scratch):
    campaign_id, name = series_campaign
    data = export(sessions, campaign_id)
    found = records(data)
    assert found[0]["sealed_sets"] == ["B"]
    (record,) = [r for r in found if r["type"] == "series"]
    assert record["name"] == name and record["description"] == "two sets"
    sets = {s["name"]: (s["topics"], s["sealed"], s["released_at"] is None) for s in record["sets"]}
    assert sets == {"A": (["101"], False, False), "B": (["102"], True, True)}
    topics = {r["number"]: r["progress_set"] for r in found if r["type"] == "topic"}
    assert topics == {"1": None, "2": None, "101": "A", "102": "B"}

    with sessions() as session:  # on this server: the copy joins the series of that name
        done = archive_import.import_campaign(session, archive.read_records(io.BytesIO(data)), name=f"{name} copy")
        session.commit()
        assert done.campaign is not None
        view = series.get_series(session, OPERATOR, done.campaign.series_id or 0)
        assert view.name == name and [c.name for c in view.campaigns][-1] == f"{name} copy" and len(view.campaigns) == 2
        assert {s.name: s.sealed for s in view.sets} == {"A": False, "B": True}

    with scratch() as session:  # on another server: the series is made, its sets as archived
        try:
            done = archive_import.import_campaign(session, archive.read_records(io.BytesIO(data)))
            assert done.campaign is not None and done.campaign.series_id is not None
            made = series.get_series(session, OPERATOR, done.campaign.series_id)
            assert made.name == name and {s.name: (s.topics, s.sealed) for s in made.sets} == {
                "A": (["101"], False),
                "B": (["102"], True),
            }
            sealed = session.scalars(
                select(Topic.number).where(Topic.campaign_id == done.campaign.id, Topic.progress_set == "B")
            )
            assert list(sealed) == ["102"]
        finally:
            session.rollback()


def test_a_topic_in_a_set_the_series_lacks_is_refused(series_campaign, sessions):
    campaign_id, _ = series_campaign

    def change(found: list[dict[str, Any]]) -> None:
        next(r for r in found if r["type"] == "topic" and r["number"] == "101")["progress_set"] = "C"

    data = rewritten(export(sessions, campaign_id), change)
    with sessions() as session:
        with pytest.raises(archive_import.InvalidInput, match="topic 101: progress set 'C' is not a set"):
            archive_import.import_campaign(session, archive.read_records(io.BytesIO(data)), name="set C")
        session.rollback()
        assert session.scalar(select(AnalysisJob.id).join(Campaign).where(Campaign.name == "set C")) is None
