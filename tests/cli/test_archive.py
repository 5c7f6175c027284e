"""`trecpool archive`: the demo campaign exported to one file, verified identical in a fresh embedded PostgreSQL, a
changed score found in a given database (exit 1), imported under another name, and a tampered run refused (exit 2)
with nothing imported."""

from __future__ import annotations

import base64
import gzip
import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from app.cli import cli
from app.cli.archive import default_name
from app.config import get_settings
from app.services import archive
from app.storage.models import Campaign

runner = CliRunner()


@pytest.fixture
def on_test_database(monkeypatch, database_url):  # type: ignore[no-untyped-def]
    """DATABASE_URL (and the cached settings) pointed at the run's database for one test."""
    monkeypatch.setenv("DATABASE_URL", database_url)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def _rewrite(source: Path, target: Path, change) -> None:  # type: ignore[no-untyped-def]
    """Write `source`'s records, changed by `change`, to `target` as a well-formed archive."""
    with source.open("rb") as stream:
        found = [record for _, record in archive.read_records(stream)]
    change(found)
    with target.open("wb") as out:
        archive.write_records(found, out)


def _campaigns(sessions, name: str) -> int:  # type: ignore[no-untyped-def]
    """How many campaigns are called `name`."""
    with sessions() as session:
        return int(session.scalar(select(func.count()).select_from(Campaign).where(Campaign.name == name)) or 0)


def test_export_verify_and_import_the_demo(small_demo, on_test_database, sessions, create_database, tmp_path):
    path = tmp_path / "demo.trecpool.jsonl.gz"
    result = runner.invoke(cli, ["archive", "export", str(small_demo["campaign_id"]), "-o", str(path)])
    assert result.exit_code == 0, result.output
    assert f"campaign 'demo-avs' archived in {path}: 1 campaign, 400 collection, 3 topic" in result.stderr
    assert not path.with_name(path.name + ".part").exists()
    assert json.loads(gzip.decompress(path.read_bytes()).splitlines()[0])["format"] == "trecpool-archive"

    result = runner.invoke(cli, ["archive", "verify", str(path)])  # in a fresh embedded PostgreSQL
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("campaign 'demo-avs': identical (")
    assert "1 pools" in result.stdout and "1 evaluations" in result.stdout

    changed: dict[str, Any] = {}

    def change(found: list[dict[str, Any]]) -> None:
        teams = {r["id"]: r["name"] for r in found if r["type"] == "team"}
        runs = {r["id"]: f"{teams[r['team_id']]}/{r['name']}" for r in found if r["type"] == "run"}
        block = next(r for r in found if r.get("table") == "scores")
        row = next(row for row in block["rows"] if row[3] != "all" and row[4] > 0)
        changed.update(run=runs[row[1]], measure=row[2], topic=row[3], value=row[4])
        row[4] = math.nextafter(row[4], 0.0)

    wrong = tmp_path / "changed.trecpool.jsonl.gz"
    _rewrite(path, wrong, change)
    given = ["--database-url", create_database(), "--format", "json"]
    result = runner.invoke(cli, ["archive", "verify", str(wrong), *given])
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    assert report["identical"] is False
    assert report["differences"] == [
        {
            "what": "score",
            "where": f"evaluation {row_evaluation(path)}, run {changed['run']}, topic {changed['topic']}, "
            f"{changed['measure']}",
            "archived": math.nextafter(changed["value"], 0.0),
            "recomputed": changed["value"],
        }
    ]

    assert report["parts"]["evaluations"]["different"] == 1 and report["parts"]["pools"]["different"] == 0
    result = runner.invoke(cli, ["archive", "verify", str(wrong), "--database-url", create_database()])
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("campaign 'demo-avs': 1 difference(s) (")
    assert lines[1:4] == ["pools: 1 identical, 0 different", "qrels: 1 identical, 0 different",
                          f"evaluations: 0 identical, 1 different (first: {lines[-1]})"]  # fmt: skip
    assert lines[4] == "analyses: 0 identical, 0 different" and lines[-1].startswith("score: evaluation ")

    result = runner.invoke(cli, ["archive", "import", str(path), "--name", "demo-avs copy", "--format", "json"])
    assert result.exit_code == 0, result.output
    imported = json.loads(result.stdout)
    assert imported["name"] == "demo-avs copy" and imported["counts"]["run"] == 8
    assert _campaigns(sessions, "demo-avs copy") == 1
    with sessions() as session:  # other tests of the session read the database's published campaigns
        session.delete(session.get_one(Campaign, imported["campaign_id"]))
        session.commit()


def row_evaluation(path: Path) -> int:
    """The archive id of the first evaluation in an archive."""
    with path.open("rb") as stream:
        return next(int(r["id"]) for _, r in archive.read_records(stream) if r["type"] == "evaluation")


def test_a_tampered_run_is_refused_and_nothing_imported(small_demo, on_test_database, sessions, tmp_path):
    path = tmp_path / default_name("demo-avs")
    assert path.name == "demo-avs.trecpool.jsonl.gz"
    assert runner.invoke(cli, ["archive", "export", "demo-avs", "-o", str(path)]).exit_code == 0

    def tamper(found: list[dict[str, Any]]) -> None:
        run = next(r for r in found if r["type"] == "run" and r["name"] == "gamma_run1")
        content = base64.b64decode(run["content"]).replace(b" 2 ", b" 3 ", 1)
        run["content"] = base64.b64encode(content).decode()

    tampered = tmp_path / "tampered.trecpool.jsonl.gz"
    _rewrite(path, tampered, tamper)
    result = runner.invoke(cli, ["archive", "import", str(tampered), "--name", "tampered demo"])
    assert result.exit_code == 2, result.output
    line = result.stderr.strip()
    assert line.startswith(f"error: {tampered}: archive line ") and "run 'gamma_run1': its file's SHA-256 is " in line
    assert line.endswith("the file was changed; nothing was imported")
    assert _campaigns(sessions, "tampered demo") == 0

    result = runner.invoke(cli, ["archive", "import", str(tmp_path / "missing.gz")])
    assert result.exit_code == 2 and "cannot read" in result.stderr
    result = runner.invoke(cli, ["archive", "export", "no such campaign"])
    assert (
        result.exit_code == 2
        and result.stderr.strip() == "error: no campaign 'no such campaign' (give its id or its name)"
    )


def test_the_default_file_name_is_safe() -> None:
    assert default_name("AVS 2024 / progress") == "AVS-2024-progress.trecpool.jsonl.gz"
    assert default_name("..") == "campaign.trecpool.jsonl.gz"
