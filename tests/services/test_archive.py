"""Campaign archives: the demo's campaigns round-trip (export, import under another name, export again: the same
records), verify finds them identical in a fresh database, a run file that no longer matches its SHA-256 and a cut or
altered file are refused with nothing imported, and a score changed by one bit is found by run, topic and measure."""

from __future__ import annotations

import base64
import copy
import gzip
import hashlib
import io
import math
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.services import archive, archive_import, archive_verify
from app.services.archive_format import Verification
from app.services.errors import InvalidInput
from app.storage.database import make_engine, make_session_factory
from app.storage.models import Campaign, Evaluation, PoolItem, Run, Score

CODE = archive.CodeVersion("test", None)


def export(sessions, campaign_id: int) -> bytes:  # type: ignore[no-untyped-def]
    """The campaign's archive."""
    out = io.BytesIO()
    with sessions() as session:
        archive.export_campaign(session, campaign_id, out, CODE)
        session.rollback()
    return out.getvalue()


def records(data: bytes) -> list[dict[str, Any]]:
    """An archive's records (checked as import reads them)."""
    return [record for _, record in archive.read_records(io.BytesIO(data))]


def rewritten(data: bytes, change) -> bytes:  # type: ignore[no-untyped-def]
    """The archive with `change` applied to a copy of its records, written again with a valid end record."""
    changed = copy.deepcopy(records(data))
    change(changed)
    out = io.BytesIO()
    archive.write_records(changed, out)
    return out.getvalue()


@pytest.fixture(scope="module")
def demo_archives(small_demo, sessions) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    """The archives of the demo's people-judged and model-assisted campaigns."""
    return {
        "people": export(sessions, int(small_demo["campaign_id"])),
        "model": export(sessions, int(small_demo["model_assisted_campaign_id"])),
    }


@pytest.fixture(scope="module")
def scratch(create_database) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """A session factory on a fresh, migrated database of the test server (verify's scratch database)."""
    from app.storage import migrations

    url = create_database()
    migrations.upgrade(url)
    engine = make_engine(url)
    yield make_session_factory(engine)
    engine.dispose()


def verify(scratch, data: bytes) -> Verification:  # type: ignore[no-untyped-def]
    """Verify an archive in the scratch database, rolled back after."""
    with scratch() as session:
        try:
            return archive_verify.verify_campaign(session, archive.read_records(io.BytesIO(data)))
        finally:
            session.rollback()


def test_the_archive_holds_runs_with_their_sha256_pools_qrels_and_scores(demo_archives, small_demo, sessions):
    found = records(demo_archives["people"])
    header = found[0]
    assert (header["type"], header["format"], header["version"], header["trecpool"]) == (
        "header",
        archive.FORMAT,
        1,
        "test",
    )
    assert header["schema"] and header["campaign"] == "demo-avs"
    runs = [r for r in found if r["type"] == "run"]
    assert len(runs) == 8
    for run in runs:
        assert hashlib.sha256(base64.b64decode(run["content"])).hexdigest() == run["sha256"]
    (pool,) = [r for r in found if r["type"] == "pool"]
    assert pool["params"]["strata"] == [[1, 10, 1.0], [11, 60, 0.2]] and pool["seed"] == 2022
    items = [row for r in found if r.get("table") == "pool_items" for row in r["rows"]]
    columns = archive.TABLES["pool_items"][0]
    stratum, sampled, inclusion = (columns.index(c) for c in ("stratum", "sampled", "inclusion_probability"))
    assert {(row[stratum], row[inclusion]) for row in items} == {(1, 1.0), (2, 0.2)}
    assert {row[sampled] for row in items if row[stratum] == 1} == {True}
    cid = int(small_demo["campaign_id"])
    with sessions() as session:
        n_items = session.scalar(select(func.count()).select_from(PoolItem).where(PoolItem.pool_id == pool["id"]))
        n_scores = session.scalar(
            select(func.count()).select_from(Score).join(Evaluation).where(Evaluation.campaign_id == cid)
        )
    assert len(items) == n_items
    assert sum(len(r["rows"]) for r in found if r.get("table") == "scores") == n_scores > 0
    assert [r["label"] for r in found if r["type"] == "qrels_version"] == ["final"]
    judged = [row for r in found if r.get("table") == "judgements" for row in r["rows"]]
    assert {row[3] for row in judged} >= {1, 2, 3}  # first round, second opinions and adjudication
    model = records(demo_archives["model"])
    assessors = [r for r in model if r["type"] == "assessor" and r["kind"] == "model"]
    assert [a["provenance"]["model"] for a in assessors] == ["simulated"]  # a model assessor's provenance
    assert {r["judges"] for r in model if r["type"] == "qrels_version"} == {"human", "model", "combined"}


def _masked(value: Any) -> Any:
    """A record with every database id and the campaign's name left out, to compare two exports of one campaign."""
    if isinstance(value, dict):
        if value.get("type") == "rows":
            keep = [
                i for i, c in enumerate(value["columns"]) if not (c == "id" or c.endswith("_id") or c == "changed_by")
            ]
            return [value["table"], [[row[i] for i in keep] for row in value["rows"]]]
        named = value.get("type") == "campaign"  # the campaign's own name is the new one
        return {
            k: _masked(v)
            for k, v in value.items()
            if not (k == "id" or k.endswith("_id") or k.endswith("_ids") or k == "campaign" or (named and k == "name"))
        }
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


@pytest.fixture
def copies(sessions) -> Iterator[list[int]]:  # type: ignore[no-untyped-def]
    """Campaigns a test imports into the run's database (its ids appended), deleted after it: other tests of the
    session read the database's published campaigns."""
    made: list[int] = []
    yield made
    with sessions() as session:
        for campaign_id in made:
            session.delete(session.get_one(Campaign, campaign_id))
        session.commit()


def test_import_under_another_name_then_export_gives_the_same_records(demo_archives, sessions, copies):
    for kind, data in demo_archives.items():
        with sessions() as session:
            done = archive_import.import_campaign(
                session, archive.read_records(io.BytesIO(data)), name=f"copy of {kind}"
            )
            session.commit()
            assert done.campaign is not None
            new_id = done.campaign.id
            copies.append(new_id)
        again = records(export(sessions, new_id))
        original = records(data)
        assert again[1]["name"] == f"copy of {kind}" and again[1]["status"] == original[1]["status"] == "published"
        assert [_masked(r) for r in again[1:]] == [_masked(r) for r in original[1:]]
        # who judged what survives the new ids: (round, verdict, assessor name) of each judged item, in order
        assert _judges(sessions, new_id) == _judges(sessions, original[1]["name"])


def _judges(sessions, campaign: int | str) -> list[tuple[str, str, int, str, str | None]]:  # type: ignore[no-untyped-def]
    """Every judgement of the campaign: topic, shot, round, verdict, assessor's name."""
    from sqlalchemy import text

    with sessions() as session:
        return [
            tuple(row)
            for row in session.execute(
                text(
                    "SELECT t.number, i.docno, j.round, j.verdict::text, a.name FROM judgements j "
                    "JOIN pool_items i ON i.id = j.pool_item_id JOIN topics t ON t.id = i.topic_id "
                    "JOIN campaigns c ON c.id = t.campaign_id LEFT JOIN assessors a ON a.id = j.assessor_id "
                    "WHERE c.id::text = :c OR c.name = :c ORDER BY 1, 2, 3"
                ),
                {"c": str(campaign)},
            )
        ]


@pytest.mark.parametrize("kind", ["people", "model"])
def test_verify_finds_the_demo_identical(demo_archives, scratch, kind):
    found = verify(scratch, demo_archives[kind])
    assert found.differences == []
    assert found.compared["pools"] == 1
    assert found.compared["pool_items"] == sum(
        len(r["rows"]) for r in records(demo_archives[kind]) if r.get("table") == "pool_items"
    )
    assert (
        found.compared["scores"]
        == sum(len(r["rows"]) for r in records(demo_archives[kind]) if r.get("table") == "scores")
        > 0
    )
    assert found.compared["evaluations"] >= 1 and found.compared["run_means"] > 0
    if kind == "model":  # the verification sample drawn again from the model's probabilities and the seed
        assert found.compared["verification_items"] > 0
    versions = [r for r in records(demo_archives[kind]) if r["type"] == "qrels_version"]
    parts = {name: (p.identical, p.different, len(p.not_recomputed)) for name, p in found.parts.items()}
    assert parts["pools"] == (1, 0, 0) and parts["qrels"][1] == 0
    # every version cut from the pool is cut again; the model demo's uploaded version of the people's qrels says why
    # it is not
    reasons = found.parts["qrels"].not_recomputed
    assert parts["qrels"][0] + len(reasons) == len(versions) and parts["qrels"][0] >= 1
    assert len(reasons) == (1 if kind == "model" else 0), reasons
    assert all(r.endswith("imported, not cut from a pool: nothing to recompute it from") for r in reasons), reasons
    assert parts["evaluations"] == (found.compared["evaluations"], 0, 0)
    assert found.summary()[0] == "pools: 1 identical, 0 different"
    with scratch() as session:  # verify leaves nothing behind
        assert session.scalar(select(func.count()).select_from(Campaign)) == 0


def test_a_score_changed_by_one_bit_is_found(demo_archives, scratch):
    columns = archive.TABLES["scores"][0]
    value = columns.index("value")
    changed: dict[str, Any] = {}

    def change(found: list[dict[str, Any]]) -> None:
        runs = {r["id"]: r["name"] for r in found if r["type"] == "run"}
        block = next(r for r in found if r.get("table") == "scores")
        row = next(row for row in block["rows"] if row[columns.index("topic")] != "all" and row[value] > 0)
        changed.update(run=runs[row[1]], measure=row[2], topic=row[3], before=row[value])
        row[value] = math.nextafter(row[value], math.inf)

    found = verify(scratch, rewritten(demo_archives["people"], change))
    assert len(found.differences) == 1
    (difference,) = found.differences
    assert difference.what == "score"
    assert f"/{changed['run']}, topic {changed['topic']}, {changed['measure']}" in difference.where
    assert difference.recomputed == changed["before"] and difference.archived == math.nextafter(changed["before"], 1)


def test_a_pool_item_moved_to_another_stratum_is_found(demo_archives, scratch):
    columns = archive.TABLES["pool_items"][0]

    def change(found: list[dict[str, Any]]) -> None:
        block = next(r for r in found if r.get("table") == "pool_items")
        block["rows"][0][columns.index("stratum")] += 1

    found = verify(scratch, rewritten(demo_archives["people"], change))
    # the pool rebuilt puts it back; the qrels cut again from the (moved) item carry its stratum
    assert [(d.what, d.where.rsplit(": ", 1)[-1]) for d in found.differences] == [
        ("pool_item", "stratum"),
        ("qrels", "stratum"),
    ]
    assert (found.parts["pools"].different, found.parts["qrels"].different) == (1, 1)
    assert found.parts["evaluations"].different == 0 and found.parts["evaluations"].identical >= 1


def _count_campaigns(session: Session, name: str) -> int:
    """Campaigns called `name`."""
    return int(session.scalar(select(func.count()).select_from(Campaign).where(Campaign.name == name)) or 0)


def test_a_run_that_does_not_match_its_sha256_is_refused_and_nothing_imported(demo_archives, sessions):
    def tamper(found: list[dict[str, Any]]) -> None:
        run = next(r for r in found if r["type"] == "run" and r["name"] == "beta_run2")
        content = bytearray(base64.b64decode(run["content"]))
        content[content.index(b" 1 ") + 1] ^= 1  # rank 1 of a line made 0, the SHA-256 kept
        run["content"] = base64.b64encode(bytes(content)).decode()

    data = rewritten(demo_archives["people"], tamper)
    with sessions() as session:
        with pytest.raises(
            InvalidInput, match=r"run 'beta_run2': its file's SHA-256 is [0-9a-f]{64}, the archive says"
        ):
            archive_import.import_campaign(session, archive.read_records(io.BytesIO(data)), name="tampered")
        session.rollback()
        assert _count_campaigns(session, "tampered") == 0
        assert (
            session.scalar(select(func.count()).select_from(Run).join(Campaign).where(Campaign.name == "tampered")) == 0
        )


def test_a_cut_or_altered_archive_is_refused(demo_archives, sessions):
    data = demo_archives["people"]
    body = gzip.decompress(data)
    lines = body.splitlines(keepends=True)
    altered = b"".join(lines[:3]) + lines[3].replace(b'"title":"', b'"title":"x') + b"".join(lines[4:])
    cases = {
        "cut": (data[: len(data) // 2], "not a readable gzip file"),
        "no end": (gzip.compress(b"".join(lines[:-1])), "ends without its end record"),
        "altered": (gzip.compress(altered), "not those written"),
        "not an archive": (gzip.compress(b'{"type": "run"}\n'), "not a trecpool campaign archive"),
    }
    for case, (broken, message) in cases.items():
        with sessions() as session:
            with pytest.raises(InvalidInput, match=message):
                archive_import.import_campaign(session, archive.read_records(io.BytesIO(broken)), name=f"broken {case}")
            session.rollback()
            assert _count_campaigns(session, f"broken {case}") == 0, case


def test_a_taken_name_is_a_conflict(demo_archives, sessions):
    from app.services.errors import Conflict

    with sessions() as session:
        with pytest.raises(Conflict, match="a campaign named 'demo-avs' exists on this server"):
            archive_import.import_campaign(session, archive.read_records(io.BytesIO(demo_archives["people"])))
        session.rollback()
