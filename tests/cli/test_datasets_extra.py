"""Import by ir_datasets id (the `datasets` extra): a small fake dataset with ir_datasets' API shape injected into the
loader (nothing is downloaded), stored through the upload services all or nothing; without the extra the command says
how to install it (exit 2, no traceback); the core install never imports ir_datasets."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import tomllib
from collections import namedtuple
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from app.cli import cli
from app.config import get_settings
from app.evaluation.formats.topics_file import TopicDef, parse_topics
from app.evaluation.formats.trec_files import parse_qrels
from app.services import datasets
from app.storage.database import make_engine, make_session_factory, session_scope
from app.storage.models import Campaign, QrelsEntry, QrelsVersion, TaskKind, Topic

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()

# ir_datasets' record types (ir_datasets.formats.trec.TrecQuery, TrecQrel; GenericQuery has `text` only)
TrecQuery = namedtuple("TrecQuery", ["query_id", "title", "description", "narrative"])
GenericQuery = namedtuple("GenericQuery", ["query_id", "text"])
TrecQrel = namedtuple("TrecQrel", ["query_id", "doc_id", "relevance", "iteration"])


class FakeDataset:
    """A dataset as ir_datasets.load gives it: queries_iter(), qrels_iter(), has_queries(), has_qrels()."""

    def __init__(self, queries: list, qrels: list) -> None:
        self.queries, self.qrels = queries, qrels

    def queries_iter(self):  # type: ignore[no-untyped-def]
        return iter(self.queries)

    def qrels_iter(self):  # type: ignore[no-untyped-def]
        return iter(self.qrels)

    def has_queries(self) -> bool:
        return True

    def has_qrels(self) -> bool:
        return True


COVID = FakeDataset(
    [
        TrecQuery("1", "coronavirus origin", "what is the origin of COVID-19", "seeking <range> & origin"),
        TrecQuery("2", "coronavirus response to weather changes", "how does it respond to weather", ""),
    ],
    [
        TrecQrel("1", "010vptx3", 2, "0.5"),
        TrecQrel("1", "02f0opkr", 1, "1"),
        TrecQrel("2", "01goni72", 0, "0.5"),
    ],
)


@pytest.fixture
def cli_db(database_url, monkeypatch):  # type: ignore[no-untyped-def]
    """The CLI pointed at the test database; yields a session factory on it."""
    monkeypatch.setenv("DATABASE_URL", database_url)
    get_settings.cache_clear()
    engine = make_engine(database_url)
    yield make_session_factory(engine)
    engine.dispose()
    get_settings.cache_clear()


def _campaign(sessions) -> int:  # type: ignore[no-untyped-def]
    with session_scope(sessions) as session:
        campaign = Campaign(name=f"datasets-{datetime.now(UTC).timestamp()}", task_kind=TaskKind.shots)
        session.add(campaign)
        session.flush()
        return campaign.id


def _inject(monkeypatch: pytest.MonkeyPatch, dataset: FakeDataset) -> list[str]:
    """The loader returns `dataset`; the ids asked for are recorded."""
    asked: list[str] = []
    monkeypatch.setattr(datasets, "load_dataset", lambda dataset_id: asked.append(dataset_id) or dataset)
    return asked


def test_files_written_from_a_dataset_read_back_through_the_upload_parsers() -> None:
    topics = parse_topics(datasets.topics_file([*COVID.queries, GenericQuery("3", "plain text query")]))
    assert topics == [
        TopicDef("1", "coronavirus origin", "what is the origin of COVID-19\nseeking <range> & origin"),
        TopicDef("2", "coronavirus response to weather changes", "how does it respond to weather"),
        TopicDef("3", "plain text query", ""),
    ]
    qrels = parse_qrels(datasets.qrels_file(COVID.qrels))
    assert qrels.topics.tolist() == ["1", "1", "2"] and qrels.docs.tolist() == ["010vptx3", "02f0opkr", "01goni72"]
    assert list(qrels.grades) == [2, 1, 0] and qrels.strata is None


def test_import_stores_the_topics_and_a_qrels_version(cli_db, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    campaign = _campaign(cli_db)
    asked = _inject(monkeypatch, COVID)
    args = ["datasets", "import", "cord19/trec-covid/round1", "--campaign", str(campaign), "--format", "json"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert asked == ["cord19/trec-covid/round1"]
    assert summary["topics"] == 2 and summary["qrels_entries"] == 3
    assert summary["qrels_label"] == "cord19/trec-covid/round1"
    with session_scope(cli_db) as session:
        stored = session.scalars(select(Topic).where(Topic.campaign_id == campaign).order_by(Topic.number)).all()
        assert [(t.number, t.title) for t in stored] == [("1", "coronavirus origin"), ("2", COVID.queries[1].title)]
        version = session.get(QrelsVersion, summary["qrels_version_id"])
        assert version is not None and version.source == "imported" and version.kind == "trec"
        grades = session.execute(
            select(Topic.number, QrelsEntry.docno, QrelsEntry.grade)
            .join(Topic, Topic.id == QrelsEntry.topic_id)
            .where(QrelsEntry.qrels_version_id == version.id)
            .order_by(QrelsEntry.docno)
        ).all()
        assert [tuple(g) for g in grades] == [("1", "010vptx3", 2), ("2", "01goni72", 0), ("1", "02f0opkr", 1)]
    # the topics are there now: the qrels alone again, under another label
    again = runner.invoke(cli, [*args[:5], "--no-topics", "--label", "round 1 again"])
    assert again.exit_code == 0, again.output
    assert "qrels version 'round 1 again' (3 judgements)" in again.stdout


def test_a_qrels_line_the_parser_refuses_stores_nothing(cli_db, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    campaign = _campaign(cli_db)
    _inject(monkeypatch, FakeDataset(COVID.queries, [*COVID.qrels, TrecQrel("9", "x", 1, "0")]))
    result = runner.invoke(cli, ["datasets", "import", "some/dataset", "--campaign", str(campaign)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "unknown topic '9'" in result.output and "nothing was stored" in result.output
    with session_scope(cli_db) as session:  # the topics went back with the qrels
        assert session.scalar(select(func.count()).select_from(Topic).where(Topic.campaign_id == campaign)) == 0
        assert session.scalar(select(func.count()).where(QrelsVersion.campaign_id == campaign)) == 0


def test_an_unknown_dataset_id_is_refused_before_anything_is_read(cli_db) -> None:  # type: ignore[no-untyped-def]
    result = runner.invoke(cli, ["datasets", "import", "no-such/dataset", "--campaign", "1"])
    assert result.exit_code == 2 and "no ir_datasets dataset 'no-such/dataset'" in result.output


def _run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)


BLOCK = """
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "ir_datasets":
            raise ModuleNotFoundError("No module named 'ir_datasets'")
sys.meta_path.insert(0, Block())
"""


def test_without_the_extra_the_command_says_how_to_install_it() -> None:
    code = BLOCK + (
        "sys.argv = ['trecpool', 'datasets', 'import', 'cord19/trec-covid/round1', '--campaign', '1']\n"
        "from app.cli import main\nmain()\n"
    )
    done = _run(code)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "pip install 'trecpool[datasets]'" in done.stderr and "Traceback" not in done.stderr + done.stdout


def test_the_core_never_imports_ir_datasets() -> None:
    """The server, the CLI (its help and the datasets command's) and the service load without it, and it is imported
    only inside a function; it is a dependency of the extra alone."""
    code = (
        "import sys\nfrom click.testing import CliRunner\nfrom app.cli import cli\nfrom app.server import create_app\n"
        "import app.services.datasets\ncreate_app()\n"
        "for args in (['--help'], ['datasets', 'import', '--help']):\n"
        "    assert CliRunner().invoke(cli, args).exit_code == 0\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'ir_datasets'))\n"
    )
    done = _run(code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    for path in (REPO / "app").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level: never
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            assert not any(n.split(".")[0] == "ir_datasets" for n in names), path
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not any(r.lower().startswith(("ir_datasets", "ir-datasets")) for r in project["dependencies"])
    assert any(r.startswith("ir_datasets") for r in project["optional-dependencies"]["datasets"])
