"""A run file store that cannot be reached is the server's trouble, not the caller's: uploads and downloads answer 503
with Retry-After and a message naming the store (never its keys, in the answer or the log), and an evaluation job is
tried again per the queue's policy, then fails naming the store. S3 is a local moto server, then a loopback port
nobody listens on (one attempt, short timeouts: the refusal is immediate)."""

from __future__ import annotations

import itertools
import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings, get_settings
from app.evaluation.formats.topics_file import TopicDef
from app.services import campaigns, evaluations, qrels, runs, teams, topics
from app.services.auth import Principal
from app.services.errors import Unavailable
from app.storage.database import make_engine, make_session_factory
from app.storage.models import CampaignStatus, Evaluation, Role, Run, TaskKind
from app.worker.runner import JobFailed, RetryJob, Runtime, run_job

ORGANISER = Principal(Role.organiser, token_id=0)
BUCKET = "trecpool-down"
ACCESS_KEY, SECRET_KEY = "AKIA-UNAVAILABLE-TEST", "never-shown-secret-7f3a"
_names = itertools.count(1)


def _refused_endpoint() -> str:
    """An endpoint on a loopback port that no one listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}"


@pytest.fixture
def use(monkeypatch, s3_endpoint):  # type: ignore[no-untyped-def]
    """Set TRECPOOL_RUN_STORAGE and the S3 endpoint (moto unless given), keys, one attempt and short timeouts."""

    def use(location: str, endpoint: str | None = None) -> Settings:
        monkeypatch.setenv("TRECPOOL_RUN_STORAGE", location)
        monkeypatch.setenv("TRECPOOL_S3_ENDPOINT_URL", endpoint or s3_endpoint)
        monkeypatch.setenv("TRECPOOL_S3_REGION", "us-east-1")
        monkeypatch.setenv("TRECPOOL_S3_ACCESS_KEY_ID", ACCESS_KEY)
        monkeypatch.setenv("TRECPOOL_S3_SECRET_ACCESS_KEY", SECRET_KEY)
        monkeypatch.setenv("TRECPOOL_S3_MAX_ATTEMPTS", "1")
        monkeypatch.setenv("TRECPOOL_S3_TIMEOUT_SECONDS", "2")
        get_settings.cache_clear()
        return get_settings()

    yield use
    get_settings.cache_clear()


def _campaign(session: Session) -> tuple[int, int]:
    """An open 2-topic campaign with a team: their ids."""
    spec = campaigns.CampaignSpec(name=f"store-down-{next(_names)}", task_kind=TaskKind.shots)
    campaign = campaigns.create_campaign(session, ORGANISER, spec)
    topics.add_topics(session, ORGANISER, campaign.id, [TopicDef(str(n), f"topic {n}") for n in (1, 2)])
    team = teams.create_team(session, ORGANISER, campaign.id, f"team{next(_names)}")[0]
    campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.open)
    session.commit()
    return campaign.id, team.id


def _run_text(seed: int) -> str:
    """A seeded 2-topic run of 8 results per topic."""
    rng = np.random.default_rng(seed)
    return "".join(
        f"{t} Q0 d{d} {r + 1} {9.0 - r} r{seed}\n" for t in (1, 2) for r, d in enumerate(rng.permutation(20)[:8])
    )


def _upload(client, organiser, campaign_id: int, team_id: int, seed: int):  # type: ignore[no-untyped-def]
    """POST a run file as the organiser for the team: the answer."""
    return client.post(
        f"/api/campaigns/{campaign_id}/runs",
        headers=organiser,
        files={"file": ("run.txt", _run_text(seed).encode())},
        data={"name": f"run{next(_names)}", "team_id": str(team_id)},
    )


def _no_secret(text: str) -> bool:
    """Whether a text names neither S3 key."""
    return ACCESS_KEY not in text and SECRET_KEY not in text


def test_unreachable_s3_is_a_503_naming_the_bucket_for_uploads_and_downloads_without_its_keys(  # type: ignore[no-untyped-def]
    client, organiser, sessions, use, caplog
) -> None:
    location = f"s3://{BUCKET}/api{next(_names)}"
    use(location)
    with sessions() as session:
        campaign_id, team_id = _campaign(session)
    stored = _upload(client, organiser, campaign_id, team_id, 1)
    assert stored.status_code == 201, stored.text
    run_id = stored.json()["id"]
    assert client.get(f"/api/runs/{run_id}/download?original=true", headers=organiser).text == _run_text(1)

    use(location, _refused_endpoint())
    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="trecpool.api"):
        down = client.get(f"/api/runs/{run_id}/download", headers=organiser)
        refused = _upload(client, organiser, campaign_id, team_id, 2)
    assert time.monotonic() - started < 10
    assert down.status_code == 503 and down.headers["Retry-After"] == "5"
    assert down.json()["detail"].startswith(f"run {run_id}: cannot read run files in {location}: Could not connect")
    assert refused.status_code == 503 and refused.headers["Retry-After"] == "5"
    assert f"was not stored: cannot write run files in {location}: Could not connect" in refused.json()["detail"]
    assert _no_secret(down.text) and _no_secret(refused.text)
    logged = [r.getMessage() for r in caplog.records if r.name == "trecpool.api"]
    assert len(logged) == 2 and all(location in line and _no_secret(line) for line in logged)
    listed = client.get(f"/api/campaigns/{campaign_id}/runs", headers=organiser).json()
    assert [r["id"] for r in listed] == [run_id]  # the refused upload left no row


def test_an_unreadable_directory_is_a_503_and_a_missing_file_still_a_409(  # type: ignore[no-untyped-def]
    client, organiser, sessions, tmp_path, use
) -> None:
    root = tmp_path.resolve() / "runs"
    use(f"dir:{root}")
    with sessions() as session:
        campaign_id, team_id = _campaign(session)
        run_ids = [_upload(client, organiser, campaign_id, team_id, s).json()["id"] for s in (3, 4)]
        keys = [session.get_one(Run, r).storage_key for r in run_ids]
    (root / keys[1][:2] / keys[1]).unlink()
    missing = client.get(f"/api/runs/{run_ids[1]}/download", headers=organiser)
    assert missing.status_code == 409, missing.text
    folder = root / keys[0][:2]
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    folder.write_bytes(b"")  # where the file's folder was: reading it fails, but not as a missing file
    down = client.get(f"/api/runs/{run_ids[0]}/download", headers=organiser)
    assert down.status_code == 503, down.text
    assert down.json()["detail"] == f"run {run_ids[0]}: cannot read run files in dir:{root}: Not a directory"


@pytest.fixture
def own_sessions(create_database) -> Iterator[tuple[str, sessionmaker[Session]]]:  # type: ignore[no-untyped-def]
    """A database of the test's own (no worker watches it) and sessions on it."""
    from app.storage import migrations

    url = create_database()
    migrations.upgrade(url)
    engine = make_engine(url)
    yield url, make_session_factory(engine)
    engine.dispose()


def test_an_evaluation_job_is_retried_while_s3_is_unreachable_then_fails_naming_it(  # type: ignore[no-untyped-def]
    own_sessions, use
) -> None:
    url, sessions = own_sessions
    location = f"s3://{BUCKET}/job{next(_names)}"
    use(location)
    with sessions() as session:
        campaign_id, team_id = _campaign(session)
        for seed in (5, 6):
            meta = runs.RunMetadata(name=f"run{next(_names)}")
            submission = runs.Submission(_run_text(seed).encode(), meta, team_id=team_id)
            runs.submit_run(session, ORGANISER, campaign_id, submission, max_errors=10)
        campaigns.set_status(session, ORGANISER, campaign_id, CampaignStatus.closed)
        qrels_text = "".join(f"{t} 0 d{d} {d % 2}\n" for t in (1, 2) for d in range(20))
        qrels.import_qrels(session, ORGANISER, campaign_id, qrels_text.encode(), label="q", max_errors=10)
        evaluation_id = evaluations.start_evaluation(session, ORGANISER, campaign_id, measures=["AP"]).id
        session.commit()

    use(location, _refused_endpoint())
    settings = Settings(database_url=url, job_max_attempts=2, job_heartbeat_seconds=0.2)  # type: ignore[call-arg]  # pydantic-settings takes fields by name
    runtime = Runtime(sessions=sessions, settings=settings)
    with pytest.raises(RetryJob, match=f"Unavailable: run \\d+: cannot read run files in {location}"):
        run_job(runtime, Evaluation, evaluation_id)
    with sessions() as session:
        row = session.get_one(Evaluation, evaluation_id)
        assert (row.status, row.attempts) == ("queued", 1)
        assert row.error is not None and row.error.startswith("will be tried again: Unavailable: run ")
    with pytest.raises(JobFailed) as failed:
        run_job(runtime, Evaluation, evaluation_id)
    assert isinstance(failed.value.__cause__, Unavailable)
    with sessions() as session:
        row = session.get_one(Evaluation, evaluation_id)
        assert (row.status, row.attempts) == ("failed", 2)
        assert row.error is not None and f"cannot read run files in {location}: Could not connect" in row.error
        assert _no_secret(row.error)

    use(location)  # reachable again: a new evaluation of the same runs is done
    with sessions() as session:
        again = evaluations.start_evaluation(session, ORGANISER, campaign_id, measures=["AP"]).id
        session.commit()
    run_job(runtime, Evaluation, again)
    with sessions() as session:
        assert session.get_one(Evaluation, again).status == "done"


def test_the_file_store_settings_are_checked(tmp_path: Path) -> None:
    assert Settings().s3_max_attempts == 3 and Settings().s3_timeout_seconds == 10.0
    assert Settings().run_storage_gc_minutes == 60.0
    for bad in ({"s3_max_attempts": 0}, {"s3_timeout_seconds": 0}, {"run_storage_gc_minutes": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            Settings(**bad)  # type: ignore[arg-type]  # one field at a time
