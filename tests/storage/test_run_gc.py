"""`trecpool storage gc` on a directory and on S3 (a local moto server): files no run names are deleted once older than
the minimum age, a file shared by two runs stays while one of them names it, recent files and files a writer holds
are kept, --dry-run deletes nothing, and each deletion is in the audit trail."""

from __future__ import annotations

import itertools
import json
import os
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.cli import cli
from app.config import Settings, get_settings
from app.evaluation.formats.topics_file import TopicDef
from app.services import campaigns, runs, teams, topics
from app.services.auth import Principal
from app.storage import run_gc, run_store
from app.storage.database import make_engine, make_session_factory
from app.storage.models import AuditEvent, CampaignStatus, Role, Run, TaskKind

ORGANISER = Principal(Role.organiser, token_id=0)
BUCKET = "trecpool-gc"
_names = itertools.count(1)
runner = CliRunner()


@pytest.fixture
def own_sessions(create_database, monkeypatch) -> Iterator[sessionmaker[Session]]:  # type: ignore[no-untyped-def]
    """Sessions on a database of the test's own, which the CLI uses too (DATABASE_URL)."""
    from app.storage import migrations

    url = create_database()
    migrations.upgrade(url)
    monkeypatch.setenv("DATABASE_URL", url)
    engine = make_engine(url)
    yield make_session_factory(engine)
    engine.dispose()


@pytest.fixture
def use(monkeypatch, s3_endpoint):  # type: ignore[no-untyped-def]
    """Set TRECPOOL_RUN_STORAGE (and the S3 endpoint and keys) for the rest of the test."""

    def use(location: str) -> Settings:
        monkeypatch.setenv("TRECPOOL_RUN_STORAGE", location)
        monkeypatch.setenv("TRECPOOL_S3_ENDPOINT_URL", s3_endpoint)
        monkeypatch.setenv("TRECPOOL_S3_REGION", "us-east-1")
        monkeypatch.setenv("TRECPOOL_S3_ACCESS_KEY_ID", "gc")
        monkeypatch.setenv("TRECPOOL_S3_SECRET_ACCESS_KEY", "gc-secret")
        get_settings.cache_clear()
        return get_settings()

    yield use
    get_settings.cache_clear()


def _campaign(session: Session) -> tuple[int, list[int]]:
    """An open 2-topic campaign with two teams: its id and the teams' ids."""
    spec = campaigns.CampaignSpec(name=f"gc-{next(_names)}", task_kind=TaskKind.shots)
    campaign = campaigns.create_campaign(session, ORGANISER, spec)
    topics.add_topics(session, ORGANISER, campaign.id, [TopicDef(str(n), f"topic {n}") for n in (1, 2)])
    team_ids = [teams.create_team(session, ORGANISER, campaign.id, f"team{next(_names)}")[0].id for _ in range(2)]
    campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.open)
    session.commit()
    return campaign.id, team_ids


def _run_text(seed: int) -> bytes:
    """A seeded 2-topic run of 8 results per topic."""
    rng = np.random.default_rng(seed)
    rows = (f"{t} Q0 d{d} {r + 1} {10.0 - r} r{seed}\n" for t in (1, 2) for r, d in enumerate(rng.permutation(30)[:8]))
    return "".join(rows).encode()


def _submit(session: Session, campaign_id: int, team_id: int, seed: int) -> tuple[int, str]:
    """Submit a run as the organiser, committed: its id and its file's key."""
    meta = runs.RunMetadata(name=f"run{next(_names)}")
    run = runs.submit_run(
        session, ORGANISER, campaign_id, runs.Submission(_run_text(seed), meta, team_id=team_id), max_errors=10
    )
    session.commit()
    return run.id, run.storage_key


def _orphan(session: Session, seed: int) -> str:
    """A file put straight into the configured store, no run naming it (as a rolled-back upload leaves): its key."""
    data = run_store.compress(_run_text(seed))
    key = run_store.key_of(data)
    run_store.configured_store(session).put(key, data)
    return key


def _download(sessions: sessionmaker[Session], run_id: int) -> bytes:
    """A run's download, read from its store."""
    with sessions() as session:
        return b"".join(runs.download_run(session, ORGANISER, run_id)[1])


def _delete(sessions: sessionmaker[Session], run_id: int) -> None:
    """Delete a run, committed."""
    with sessions() as session:
        runs.delete_run(session, ORGANISER, run_id)
        session.commit()


def _gc(*options: str) -> dict:  # type: ignore[type-arg]
    """`trecpool storage gc --format json OPTIONS`, its summary."""
    done = runner.invoke(cli, ["storage", "gc", "--format", "json", *options])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def _files(root: Path) -> set[str]:
    """The files under a directory store's root (any name)."""
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def _size(root: Path, *keys: str) -> int:
    """The bytes of the given files of a directory store."""
    return sum((root / k[:2] / k).stat().st_size for k in keys)


def _age(root: Path, key: str, hours: float) -> None:
    """Make a directory store's file look written `hours` ago."""
    then = time.time() - hours * 3600
    os.utime(root / key[:2] / key, (then, then))


def _trail(sessions: sessionmaker[Session]) -> list[tuple[str | None, str, dict, dict | None]]:  # type: ignore[type-arg]
    """The audit trail's run_files events: key, action, actor, before."""
    with sessions() as session:
        events = session.scalars(select(AuditEvent).where(AuditEvent.table_name == "run_files").order_by(AuditEvent.id))
        return [(e.row_id, e.action, e.actor, e.before) for e in events]


def test_gc_in_a_directory_deletes_old_orphans_keeps_named_shared_recent_and_foreign_files(  # type: ignore[no-untyped-def]
    own_sessions, tmp_path, use
) -> None:
    root, sessions = tmp_path.resolve() / "runs", own_sessions
    use(f"dir:{root}")
    with sessions() as session:
        campaign_id, (team_a, team_b) = _campaign(session)
        (run_a, shared), (run_b, shared_b) = (_submit(session, campaign_id, t, 1) for t in (team_a, team_b))
        run_c, kept = _submit(session, campaign_id, team_a, 2)
        run_d, dropped = _submit(session, campaign_id, team_b, 3)
        old_orphan, new_orphan = _orphan(session, 4), _orphan(session, 5)
    assert shared == shared_b and len({shared, kept, dropped, old_orphan, new_orphan}) == 5
    kept_download = _download(sessions, run_c)
    for key in (shared, kept, dropped, old_orphan):
        _age(root, key, 2)
    (root / "README").write_text("not a run file")
    (root / shared[:2] / ".part-unfinished").write_bytes(b"x")
    foreign = {"README", f"{shared[:2]}/.part-unfinished"}
    _delete(sessions, run_a)  # its file is run_b's too
    _delete(sessions, run_d)
    everything = _files(root)

    dry = _gc("--dry-run")
    assert dry["store"] == f"dir:{root}" and dry["dry_run"] is True and dry["min_age_minutes"] == 60
    assert dry["listed"] == {"files": 5, "bytes": _size(root, shared, kept, dropped, old_orphan, new_orphan)}
    assert dry["referenced"] == {"files": 2, "bytes": _size(root, shared, kept)}
    assert dry["deleted"] == {"files": 2, "bytes": _size(root, dropped, old_orphan)}
    assert dry["kept_recent"] == {"files": 1, "bytes": _size(root, new_orphan)}
    assert _files(root) == everything and _trail(sessions) == []

    deleted_bytes = _size(root, dropped, old_orphan)
    done = _gc()
    assert done["deleted"] == {"files": 2, "bytes": deleted_bytes} and done["kept_recent"]["files"] == 1
    left = {f"{k[:2]}/{k}" for k in (shared, kept, new_orphan)}
    assert _files(root) == left | foreign
    trail = _trail(sessions)
    assert sorted(key for key, *_ in trail) == sorted([dropped, old_orphan])
    assert {(action, actor["kind"], actor["command"]) for _, action, actor, _ in trail} == {
        ("delete", "cli", "storage gc")
    }
    assert {before["storage"] for *_, before in trail} == {f"dir:{root}"}  # type: ignore[index]
    assert sum(before["bytes"] for *_, before in trail) == deleted_bytes  # type: ignore[index]

    _delete(sessions, run_b)  # the shared file's last run
    shared_bytes = _size(root, shared)
    text_out = runner.invoke(cli, ["storage", "gc"])
    assert text_out.exit_code == 0, text_out.output
    assert f"deleted: 1 orphan file(s), {shared_bytes} bytes" in text_out.stdout
    assert f"named by runs: 1 file(s), {_size(root, kept)} bytes" in text_out.stdout
    assert _files(root) == {f"{k[:2]}/{k}" for k in (kept, new_orphan)} | foreign

    assert _gc("--min-age", "0")["deleted"]["files"] == 1  # the recent orphan too
    assert _files(root) == {f"{kept[:2]}/{kept}"} | foreign
    assert _download(sessions, run_c) == kept_download  # the run that names the last file still reads it
    assert len(_trail(sessions)) == 4


def test_gc_on_s3_keeps_recent_and_locked_files_and_deletes_orphans_once_old(  # type: ignore[no-untyped-def]
    own_sessions, use, monkeypatch
) -> None:
    """On S3 (objects can't be dated back: the clock is moved on instead), under a prefix, other objects in the
    bucket untouched; a file whose writer holds its lock (an upload not yet committed) is kept however old; one file
    per transaction here (the directory test deletes its files in one)."""
    monkeypatch.setattr(run_gc, "BATCH", 1)
    sessions = own_sessions
    location = f"s3://{BUCKET}/gc/{next(_names)}"
    settings = use(location)
    client = run_store._s3_client(settings)
    client.put_object(Bucket=BUCKET, Key="elsewhere/ab/" + "ab" * 32, Body=b"another store's file")
    with sessions() as session:
        campaign_id, (team_a, team_b) = _campaign(session)
        (run_a, shared), (run_b, _) = (_submit(session, campaign_id, t, 11) for t in (team_a, team_b))
        run_c, kept = _submit(session, campaign_id, team_a, 12)
        orphans = [_orphan(session, 13), _orphan(session, 14)]
    _delete(sessions, run_a)
    kept_download = _download(sessions, run_c)

    assert _gc()["deleted"]["files"] == 0  # all written just now: kept
    later = lambda: datetime.now(UTC) + timedelta(hours=2)  # noqa: E731
    dry = run_gc.collect(sessions, location, min_age_minutes=60, dry_run=True, now=later)
    assert (dry.listed.files, dry.referenced.files, dry.deleted.files, dry.recent.files) == (4, 2, 2, 0)

    with sessions() as writer:  # an upload of orphans[0]'s bytes under way: its row not committed yet
        run_store.hold_file(writer, orphans[0])
        done = run_gc.collect(sessions, location, min_age_minutes=60, dry_run=False, now=later)
        assert (done.deleted.files, done.busy.files) == (1, 1)
        writer.rollback()
    done = run_gc.collect(sessions, location, min_age_minutes=60, dry_run=False, now=later)
    assert (done.deleted.files, done.busy.files, done.referenced.files) == (1, 0, 2)

    prefix = location.removeprefix(f"s3://{BUCKET}/")
    names = {o["Key"] for o in client.list_objects_v2(Bucket=BUCKET).get("Contents", [])}
    assert {n for n in names if n.startswith(prefix + "/")} == {f"{prefix}/{k[:2]}/{k}" for k in (shared, kept)}
    assert "elsewhere/ab/" + "ab" * 32 in names
    assert sorted(key for key, *_ in _trail(sessions)) == sorted(orphans)

    _delete(sessions, run_b)
    assert _gc("--min-age", "0")["deleted"]["files"] == 1
    assert _download(sessions, run_c) == kept_download
    with sessions() as session:
        assert session.scalar(select(Run.storage).where(Run.id == run_c)) == location
    assert _gc("--store", "postgres")["listed"] == {"files": 0, "bytes": 0}


def test_gc_names_a_bad_store_option_and_an_unreachable_store_without_its_keys(  # type: ignore[no-untyped-def]
    own_sessions, use, monkeypatch
) -> None:
    use("postgres")
    bad = runner.invoke(cli, ["storage", "gc", "--store", "mysql"])
    assert bad.exit_code == 2 and "--store: 'mysql' is no run storage" in bad.stderr
    with socket.socket() as probe:  # a loopback port that no one listens on: connections are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("TRECPOOL_S3_ENDPOINT_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("TRECPOOL_S3_MAX_ATTEMPTS", "1")
    monkeypatch.setenv("TRECPOOL_S3_TIMEOUT_SECONDS", "2")
    get_settings.cache_clear()
    started = time.monotonic()
    down = runner.invoke(cli, ["storage", "gc", "--store", f"s3://{BUCKET}/down"])
    assert down.exit_code == 2, down.output
    assert f"error: cannot list run files in s3://{BUCKET}/down: Could not connect" in down.stderr
    assert "gc-secret" not in down.output and time.monotonic() - started < 10


def test_a_store_failing_mid_batch_stops_gc_and_the_trail_keeps_what_was_deleted(  # type: ignore[no-untyped-def]
    own_sessions, tmp_path, use, monkeypatch
) -> None:
    root, sessions = tmp_path.resolve() / "runs", own_sessions
    use(f"dir:{root}")
    with sessions() as session:
        orphans = [_orphan(session, seed) for seed in (21, 22, 23)]
    for key in orphans:
        _age(root, key, 2)
    real_delete = run_store.DirectoryStore.delete
    calls: list[str] = []

    def fail_second(self, key: str) -> None:  # type: ignore[no-untyped-def]
        calls.append(key)
        if len(calls) == 2:
            raise run_store.RunStoreUnavailable(f"cannot delete run files in {self.location}: disk gone (simulated)")
        real_delete(self, key)

    monkeypatch.setattr(run_store.DirectoryStore, "delete", fail_second)
    done = runner.invoke(cli, ["storage", "gc"])
    assert done.exit_code == 2 and "disk gone (simulated)" in done.stderr
    assert [key for key, *_ in _trail(sessions)] == calls[:1]
    assert _files(root) == {f"{k[:2]}/{k}" for k in orphans if k != calls[0]}
    monkeypatch.setattr(run_store.DirectoryStore, "delete", real_delete)
    assert _gc()["deleted"]["files"] == 2 and _files(root) == set() and len(_trail(sessions)) == 3
