"""Run files behind a store: PostgreSQL, a directory, or S3 (a local moto server, never AWS), content-addressed by
SHA-256; switching the setting and `trecpool storage migrate` move the files and the scores stay the same."""

from __future__ import annotations

import hashlib
import itertools
import json
import subprocess
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.cli import cli
from app.config import Settings, get_settings
from app.evaluation.formats.topics_file import TopicDef
from app.services import campaigns, evaluations, qrels, run_arrays, runs, scores, teams, topics
from app.services.auth import Principal
from app.services.errors import Conflict
from app.storage import run_migration, run_store
from app.storage.database import make_engine, make_session_factory
from app.storage.models import CampaignStatus, Role, Run, TaskKind

ORGANISER = Principal(Role.organiser, token_id=0)
REPO = Path(__file__).resolve().parents[2]
BUCKET = "trecpool-runs"
KEYS = {"TRECPOOL_S3_ACCESS_KEY_ID": "testing", "TRECPOOL_S3_SECRET_ACCESS_KEY": "not-a-real-secret-42"}
_names = itertools.count(1)
runner = CliRunner()


@pytest.fixture
def own_url(create_database) -> str:  # type: ignore[no-untyped-def]
    """A database of the test's own: `storage migrate` moves every run of a database, so not the run's shared one."""
    from app.storage import migrations

    url = create_database()
    migrations.upgrade(url)
    return url


@pytest.fixture
def own_sessions(own_url) -> Iterator[sessionmaker[Session]]:  # type: ignore[no-untyped-def]
    """Sessions on the test's database."""
    engine = make_engine(own_url)
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture
def use(monkeypatch, s3_endpoint, own_url):  # type: ignore[no-untyped-def]
    """Set TRECPOOL_RUN_STORAGE (and the S3 endpoint and keys, DATABASE_URL for the CLI) for the rest of the test."""

    def use(location: str) -> Settings:
        monkeypatch.setenv("TRECPOOL_RUN_STORAGE", location)
        monkeypatch.setenv("TRECPOOL_S3_ENDPOINT_URL", s3_endpoint)
        monkeypatch.setenv("TRECPOOL_S3_REGION", "us-east-1")
        monkeypatch.setenv("DATABASE_URL", own_url)
        for name, value in KEYS.items():
            monkeypatch.setenv(name, value)
        get_settings.cache_clear()
        return get_settings()

    yield use
    get_settings.cache_clear()


def _objects(settings: Settings) -> list[str]:
    """The object names in the test bucket."""
    client = run_store._s3_client(settings)
    return sorted(o["Key"] for o in client.list_objects_v2(Bucket=BUCKET).get("Contents", []))


def _files(root: Path) -> list[str]:
    """The run files in a directory store."""
    return sorted(p.name for p in root.rglob("*") if p.is_file())


def test_each_store_round_trips_a_file_under_its_sha256(own_sessions, tmp_path, use) -> None:  # type: ignore[no-untyped-def]
    tmp_path, sessions = tmp_path.resolve(), own_sessions
    settings = use(f"s3://{BUCKET}/round/trip/")
    data = zlib.compress(b"1 Q0 a 1 2.5 alpha\n", 1)
    key = hashlib.sha256(data).hexdigest()
    with sessions() as session:
        stores = [run_store.open_store(f"dir:{tmp_path}", session), run_store.configured_store(session)]
        assert [s.location for s in stores] == [f"dir:{tmp_path}", f"s3://{BUCKET}/round/trip"]
        for store in stores:
            with pytest.raises(run_store.RunFileMissing, match=f"run file {key} is missing from {store.location}"):
                store.get(key)
            store.put(key, data)
            store.put(key, data)  # again: nothing changes
            assert store.get(key) == data
        assert (tmp_path / key[:2] / key).read_bytes() == data and _files(tmp_path) == [key]
        assert _objects(settings) == [f"round/trip/{key[:2]}/{key}"]
        for store in stores:
            store.delete(key)
            store.delete(key)  # absent: nothing
            with pytest.raises(run_store.RunFileMissing):
                store.get(key)
        assert _files(tmp_path) == [] and _objects(settings) == []


def _campaign(session: Session) -> tuple[int, list[int]]:
    """An open 3-topic campaign with two teams: its id and the teams' ids."""
    spec = campaigns.CampaignSpec(name=f"run-store-{next(_names)}", task_kind=TaskKind.shots)
    campaign = campaigns.create_campaign(session, ORGANISER, spec)
    topics.add_topics(session, ORGANISER, campaign.id, [TopicDef(str(n), f"topic {n}") for n in (1, 2, 3)])
    team_ids = [teams.create_team(session, ORGANISER, campaign.id, f"team{next(_names)}")[0].id for _ in range(2)]
    campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.open)
    session.commit()
    return campaign.id, team_ids


def _run_text(seed: int) -> str:
    """A seeded 3-topic run of 12 results per topic."""
    rng = np.random.default_rng(seed)
    return "".join(
        f"{t} Q0 d{d} {r + 1} {20.0 - r} r{seed}\n" for t in (1, 2, 3) for r, d in enumerate(rng.permutation(20)[:12])
    )


def _submit(session: Session, campaign_id: int, team_id: int, text: str) -> Run:
    """Submit a run as the organiser, committed."""
    meta = runs.RunMetadata(name=f"run{next(_names)}")
    run = runs.submit_run(
        session, ORGANISER, campaign_id, runs.Submission(text.encode(), meta, team_id=team_id), max_errors=10
    )
    session.commit()
    return run


def _evaluate(session: Session, campaign_id: int) -> scores.ScoreTable:
    """A new evaluation of the campaign (AP, P@5, nDCG@10) and its numbers."""
    evaluation = evaluations.start_evaluation(session, ORGANISER, campaign_id, measures=["AP", "P@5", "nDCG@10"])
    evaluations.run_evaluation(session, evaluation.id)
    session.commit()
    return scores.score_table(session, evaluation)


def _where(sessions: sessionmaker[Session], campaign_id: int) -> list[tuple[str, bool]]:
    """Each run's store and whether its row holds its bytes, in run order."""
    with sessions() as session:
        rows = session.execute(
            select(Run.storage, Run.content.is_not(None)).where(Run.campaign_id == campaign_id).order_by(Run.id)
        )
        return [(storage, bool(held)) for storage, held in rows]


def _migrate(to: str) -> dict:  # type: ignore[type-arg]
    """`trecpool storage migrate --to TO --format json`, its summary."""
    done = runner.invoke(cli, ["storage", "migrate", "--to", to, "--format", "json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_switching_the_setting_and_migrating_moves_every_run_and_the_scores_stay_identical(  # type: ignore[no-untyped-def]
    own_sessions, tmp_path, use
) -> None:
    """Runs uploaded under postgres and then under dir: (one file twice, stored once) evaluate together; migrating
    to S3 and back to PostgreSQL moves them all, each file checked and deleted from its old store, and the scores and
    downloads are bit-identical at every step; a second migrate finds nothing to do."""
    directory, sessions = tmp_path.resolve() / "runs", own_sessions
    s3 = f"s3://{BUCKET}/moved"
    use("postgres")
    with sessions() as session:
        campaign_id, (team_a, team_b) = _campaign(session)
        first = [_submit(session, campaign_id, team_a, _run_text(1)).id]
        settings = use(f"dir:{directory}")
        first += [_submit(session, campaign_id, t, _run_text(s)).id for t, s in ((team_a, 2), (team_b, 2), (team_b, 1))]
        assert _where(sessions, campaign_id) == [("postgres", True)] + [(f"dir:{directory}", False)] * 3
        assert len(_files(directory)) == 2  # the file uploaded twice is stored once
        downloads = [b"".join(runs.download_run(session, ORGANISER, r)[1]) for r in first]
        qrels_text = "".join(f"{t} 0 d{d} {int(d % 3 == 0)}\n" for t in (1, 2, 3) for d in range(20))
        campaigns.set_status(session, ORGANISER, campaign_id, CampaignStatus.closed)
        qrels.import_qrels(session, ORGANISER, campaign_id, qrels_text.encode(), label="q", max_errors=10)
        session.commit()
        before = _evaluate(session, campaign_id)
    assert np.isfinite(before.means).all() and before.means.shape == (4, 3)

    settings = use(s3)
    with sessions() as session:
        assert run_migration.by_store(session) == [(f"dir:{directory}", 3, 2), ("postgres", 1, 1)]
    moved = _migrate(s3)
    assert (moved["files"], moved["runs"], moved["failed"]) == (3, 4, [])  # run 1's file: in postgres and in dir
    assert _where(sessions, campaign_id) == [(s3, False)] * 4
    assert _files(directory) == [] and len(_objects(settings)) == 2
    assert _migrate(s3)["files"] == 0  # idempotent
    with sessions() as session:
        after = _evaluate(session, campaign_id)
        assert [b"".join(runs.download_run(session, ORGANISER, r)[1]) for r in first] == downloads

    use("postgres")
    assert _migrate("postgres")["runs"] == 4
    assert _where(sessions, campaign_id) == [("postgres", True)] * 4 and _objects(settings) == []
    with sessions() as session:
        back = _evaluate(session, campaign_id)
    for table in (after, back):
        assert np.array_equal(table.values, before.values, equal_nan=True)
        assert np.array_equal(table.means, before.means, equal_nan=True)


def test_a_stopped_or_failing_migration_moves_the_rest_keeps_the_source_and_resumes(  # type: ignore[no-untyped-def]
    own_sessions, tmp_path, use, monkeypatch
) -> None:
    """A file that cannot be written is reported and left where it was (exit 1), the others moved; a damaged file
    is not moved (its SHA-256 is checked before the copy); fixed, the next migrate moves what is left."""
    directory, target = tmp_path.resolve() / "from", f"dir:{tmp_path.resolve() / 'to'}"
    sessions = own_sessions
    use(f"dir:{directory}")
    with sessions() as session:
        campaign_id, (team_a, _) = _campaign(session)
        ids = [_submit(session, campaign_id, team_a, _run_text(10 + s)).id for s in range(3)]
        keys = [session.get_one(Run, r).storage_key for r in ids]
    damaged = directory / keys[2][:2] / keys[2]
    good = damaged.read_bytes()
    damaged.write_bytes(good[:-1] + bytes([good[-1] ^ 1]))
    real_put = run_store.DirectoryStore.put

    def refuse_one(self, key: str, data: bytes) -> None:  # type: ignore[no-untyped-def]
        if key == keys[0]:
            raise run_store.RunStoreError("disk full (simulated)")
        real_put(self, key, data)

    monkeypatch.setattr(run_store.DirectoryStore, "put", refuse_one)
    done = runner.invoke(cli, ["storage", "migrate", "--to", target])
    assert done.exit_code == 1, done.output
    assert "moved 1 file(s) of 1 run(s)" in done.stdout and "disk full (simulated)" in done.stdout
    assert "does not match its SHA-256" in done.stdout
    assert _where(sessions, campaign_id) == [(f"dir:{directory}", False), (target, False), (f"dir:{directory}", False)]
    assert _files(directory) == sorted([keys[0], keys[2]])
    monkeypatch.setattr(run_store.DirectoryStore, "put", real_put)
    damaged.write_bytes(good)
    assert _migrate(target)["files"] == 2
    assert _where(sessions, campaign_id) == [(target, False)] * 3 and _files(directory) == []


def test_a_missing_run_file_is_a_409_naming_the_run_not_a_500(  # type: ignore[no-untyped-def]
    client, organiser, sessions, tmp_path, use
) -> None:
    tmp_path = tmp_path.resolve()
    use(f"dir:{tmp_path}")
    with sessions() as session:  # the app's database
        campaign_id, (team_a, _) = _campaign(session)
        run = _submit(session, campaign_id, team_a, _run_text(7))
        run_id, key = run.id, run.storage_key
    assert client.get(f"/api/runs/{run_id}/download?original=true", headers=organiser).text == _run_text(7)
    (tmp_path / key[:2] / key).unlink()
    for path in (f"/api/runs/{run_id}/download", f"/api/runs/{run_id}/download?original=true"):
        answer = client.get(path, headers=organiser)
        assert answer.status_code == 409, answer.text
        assert answer.json()["detail"] == f"run {run_id}: the run file {key} is missing from dir:{tmp_path}"
    with sessions() as session, pytest.raises(Conflict, match=f"run {run_id}: the run file {key} is missing"):
        run_arrays.load_runs(session, [run_id])


def test_s3_without_boto3_says_which_extra_to_install_and_the_core_never_imports_boto3(  # type: ignore[no-untyped-def]
    own_sessions, use, monkeypatch
) -> None:
    use(f"s3://{BUCKET}")
    sessions = own_sessions
    monkeypatch.setitem(sys.modules, "boto3", None)  # import boto3 fails, as in a plain install
    monkeypatch.setattr(run_store, "_clients", {})
    with sessions() as session, pytest.raises(run_store.RunStoreError) as raised:
        run_store.configured_store(session)
    assert str(raised.value) == "run storage in S3 needs boto3, which is not installed: pip install 'trecpool[s3]'"
    done = runner.invoke(cli, ["storage", "migrate"])
    assert done.exit_code == 2 and "pip install 'trecpool[s3]'" in done.output
    code = "import sys, app.services.runs, app.storage.run_store, app.cli.storage; print('boto3' in sys.modules)"
    found = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "False"


def test_the_setting_names_a_store_and_never_shows_a_secret(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tmp_path = tmp_path.resolve()
    assert Settings(run_storage=f"dir:{tmp_path}/./runs").run_storage == f"dir:{tmp_path}/runs"
    assert Settings(run_storage="s3://bucket/a/b/").run_storage == "s3://bucket/a/b"
    for bad, said in (
        ("mysql", "is no run storage"),
        ("dir:", "needs a directory"),
        ("s3://", "needs a bucket"),
        ("s3://key:secret@bucket", "credentials go in TRECPOOL_S3_ACCESS_KEY_ID"),
    ):
        with pytest.raises(ValidationError, match=said):
            Settings(run_storage=bad)
    settings = Settings(s3_access_key_id="AKIDEXAMPLE", s3_secret_access_key="wJalrXUtnFEMI-secret")
    assert "wJalrXUtnFEMI-secret" not in repr(settings) and "wJalrXUtnFEMI-secret" not in str(settings.model_dump())
