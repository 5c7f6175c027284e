"""The CLI starts light: `trecpool --help` and `trecpool eval` import no web stack, database layer or plotting."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("fastapi", "starlette", "sqlalchemy", "alembic", "psycopg", "uvicorn", "httpx", "matplotlib", "scipy.stats")

PROBE = """
import json, sys
from app.cli import cli
try:
    cli(args=sys.argv[1:], prog_name="trecpool")
except SystemExit as exc:
    code = exc.code
print("\\n@@MODULES@@" + json.dumps(sorted(sys.modules)))
"""


def _modules_after(*args: str) -> tuple[set[str], str]:
    """Run the CLI in a fresh interpreter; return the modules it imported and what it printed."""
    result = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60)
    output, _, modules = result.stdout.rpartition("@@MODULES@@")
    return set(json.loads(modules)), output + result.stderr


def _heavy(modules: set[str]) -> list[str]:
    """The heavy packages (or their submodules) among `modules`."""
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("--version",),
        ("eval", "--help"),
        ("sample_eval", "--help"),
        ("trec_eval", "--help"),
        ("analyse", "--help"),
    ],
)
def test_help_imports_nothing_heavy(args):
    modules, output = _modules_after(*args)
    assert "Usage:" in output or output.startswith("trecpool 0.")
    assert _heavy(modules) == []


def test_eval_on_a_tiny_input_imports_nothing_heavy(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 d1 1\n1 0 d2 0\n")
    run.write_text("1 Q0 d2 1 0.9 r\n1 Q0 d1 2 0.5 r\n")
    modules, output = _modules_after("eval", "-m", "AP", "-m", "P@1", str(qrels), str(run))
    assert output.split() == ["AP", "all", "0.5", "P@1", "all", "0.0"]
    assert _heavy(modules) == []
    assert "numpy" in modules  # the numeric core is what it does import


def test_commands_that_need_the_service_import_it_only_when_run():
    modules, output = _modules_after("serve", "--help")
    assert "--demo" in output
    assert _heavy(modules) == []


def test_sample_eval_on_a_tiny_input_imports_nothing_heavy(tmp_path):
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("1 0 d1 1 1\n1 0 d2 1 0\n")
    run.write_text("1 Q0 d2 1 0.9 r\n1 Q0 d1 2 0.5 r\n")
    modules, output = _modules_after("sample_eval", str(qrels), str(run))
    assert output.splitlines()[0].startswith("infAP\t\tall\t\t0.5")
    assert _heavy(modules) == []
