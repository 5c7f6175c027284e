"""An archive import stores its run files where TRECPOOL_RUN_STORAGE says, as uploads do: with a directory store the
files are there (each once), the rows name it, and the imported runs evaluate to the same numbers as the originals;
verifying an archive (a scratch import, rolled back) writes nothing into the configured store."""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.config import get_settings
from app.evaluation.formats.topics_file import TopicDef
from app.services import archive, archive_import, archive_verify, campaigns, evaluations, qrels, runs, scores, teams
from app.services import topics as topic_service
from app.services.auth import Principal
from app.storage.database import make_engine, make_session_factory
from app.storage.models import CampaignStatus, Role, Run, TaskKind

ORGANISER = Principal(Role.organiser, token_id=0)
CODE = archive.CodeVersion("test", None)
MEASURES = ["AP", "P@5", "nDCG@10"]
_names = itertools.count(1)


def _database(create_database) -> Iterator[sessionmaker[Session]]:  # type: ignore[no-untyped-def]
    """Sessions on a new, migrated database."""
    from app.storage import migrations

    url = create_database()
    migrations.upgrade(url)
    engine = make_engine(url)
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture
def own_sessions(create_database) -> Iterator[sessionmaker[Session]]:  # type: ignore[no-untyped-def]
    """Sessions on a database of the test's own."""
    yield from _database(create_database)


@pytest.fixture
def scratch(create_database) -> Iterator[sessionmaker[Session]]:  # type: ignore[no-untyped-def]
    """Sessions on another database, to verify an archive in (as `trecpool archive verify` does)."""
    yield from _database(create_database)


@pytest.fixture
def use(monkeypatch):  # type: ignore[no-untyped-def]
    """Set TRECPOOL_RUN_STORAGE for the rest of the test."""

    def use(location: str) -> None:
        monkeypatch.setenv("TRECPOOL_RUN_STORAGE", location)
        get_settings.cache_clear()

    yield use
    get_settings.cache_clear()


def _run_text(seed: int) -> bytes:
    """A seeded 3-topic run of 12 results per topic."""
    rng = np.random.default_rng(seed)
    rows = (
        f"{t} Q0 d{d} {r + 1} {20.0 - r} r{seed}\n" for t in (1, 2, 3) for r, d in enumerate(rng.permutation(25)[:12])
    )
    return "".join(rows).encode()


def _evaluate(session: Session, campaign_id: int) -> scores.ScoreTable:
    """A new evaluation of the campaign and its numbers, committed."""
    evaluation = evaluations.start_evaluation(session, ORGANISER, campaign_id, measures=MEASURES)
    evaluations.run_evaluation(session, evaluation.id)
    session.commit()
    return scores.score_table(session, evaluation)


def _evaluated_campaign(session: Session) -> tuple[int, scores.ScoreTable]:
    """A closed campaign of 4 runs (two with the same file) kept in PostgreSQL, with qrels and an evaluation."""
    spec = campaigns.CampaignSpec(name=f"archived-{next(_names)}", task_kind=TaskKind.shots)
    campaign = campaigns.create_campaign(session, ORGANISER, spec)
    topic_service.add_topics(session, ORGANISER, campaign.id, [TopicDef(str(n), f"topic {n}") for n in (1, 2, 3)])
    team_ids = [teams.create_team(session, ORGANISER, campaign.id, f"team{n}")[0].id for n in (1, 2)]
    campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.open)
    for team_id, seed in ((team_ids[0], 1), (team_ids[0], 2), (team_ids[1], 2), (team_ids[1], 3)):
        meta = runs.RunMetadata(name=f"run{next(_names)}")
        runs.submit_run(
            session, ORGANISER, campaign.id, runs.Submission(_run_text(seed), meta, team_id=team_id), max_errors=10
        )
    campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.closed)
    qrels_text = "".join(f"{t} 0 d{d} {d % 3}\n" for t in (1, 2, 3) for d in range(25))
    qrels.import_qrels(session, ORGANISER, campaign.id, qrels_text.encode(), label="q", max_errors=10)
    session.commit()
    return campaign.id, _evaluate(session, campaign.id)


def _export(sessions: sessionmaker[Session], campaign_id: int) -> bytes:
    """The campaign's archive."""
    out = io.BytesIO()
    with sessions() as session:
        archive.export_campaign(session, campaign_id, out, CODE)
        session.rollback()
    return out.getvalue()


def _files(root: Path) -> list[str]:
    """The file names under a directory store."""
    return sorted(p.name for p in root.rglob("*") if p.is_file())


def test_an_import_stores_its_runs_in_the_configured_directory_and_they_evaluate_the_same(  # type: ignore[no-untyped-def]
    own_sessions, scratch, tmp_path, use
) -> None:
    root, sessions = tmp_path.resolve() / "runs", own_sessions
    use("postgres")
    with sessions() as session:
        original_id, before = _evaluated_campaign(session)
        original_keys = list(session.scalars(select(Run.storage_key).where(Run.campaign_id == original_id)))
    data = _export(sessions, original_id)

    use(f"dir:{root}")
    with scratch() as session:
        verified = archive_verify.verify_campaign(session, archive.read_records(io.BytesIO(data)), analyses=False)
        session.rollback()
    assert verified.differences == [] and verified.compared["evaluations"] == 1
    assert not root.exists()  # the scratch import kept its files in its rows, rolled back with them

    with sessions() as session:
        done = archive_import.import_campaign(session, archive.read_records(io.BytesIO(data)), name="imported")
        session.commit()
        assert done.campaign is not None and done.counts["run"] == 4
        copy_id = done.campaign.id
        rows = session.execute(
            select(Run.storage, Run.storage_key, Run.content.is_(None)).where(Run.campaign_id == copy_id)
        ).all()
    assert {(storage, empty) for storage, _, empty in rows} == {(f"dir:{root}", True)}
    assert sorted(key for _, key, _ in rows) == sorted(original_keys)  # the same bytes, the same addresses
    assert _files(root) == sorted(set(original_keys)) and len(set(original_keys)) == 3  # the shared file once
    with sessions() as session:
        after = _evaluate(session, copy_id)
        downloads = [
            {
                run.name: b"".join(runs.download_run(session, ORGANISER, run.id)[1])
                for run in session.scalars(select(Run).where(Run.campaign_id == campaign_id))
            }
            for campaign_id in (original_id, copy_id)
        ]
    assert downloads[0] == downloads[1] and len(downloads[0]) == 4  # from PostgreSQL and from the directory
    assert after.measures == before.measures and after.topics == before.topics
    assert np.array_equal(after.values, before.values, equal_nan=True)
    assert np.array_equal(after.means, before.means, equal_nan=True)
    assert np.isfinite(before.means).all() and before.means.shape == (4, 3)


def test_an_import_that_rolls_back_leaves_only_files_for_gc(own_sessions, tmp_path, use) -> None:  # type: ignore[no-untyped-def]
    root, sessions = tmp_path.resolve() / "runs", own_sessions
    use("postgres")
    with sessions() as session:
        original_id, _ = _evaluated_campaign(session)
    data = _export(sessions, original_id)
    use(f"dir:{root}")
    with sessions() as session:
        archive_import.import_campaign(session, archive.read_records(io.BytesIO(data)), name="dropped")
        session.rollback()
        assert session.scalar(select(Run.id).where(Run.storage == f"dir:{root}")) is None
    assert len(_files(root)) == 3  # written, then no row names them: `trecpool storage gc` collects them
