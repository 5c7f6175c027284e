"""What a fresh interpreter imports to run a `trecpool` command (for the tests that keep the CLI's start light)."""

from __future__ import annotations

import json
import subprocess
import sys

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


def modules_after(*args: str) -> tuple[set[str], str]:
    """Run the CLI in a fresh interpreter; return the modules it imported and what it printed."""
    result = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=60)
    output, _, modules = result.stdout.rpartition("@@MODULES@@")
    return set(json.loads(modules)), output + result.stderr


def heavy(modules: set[str]) -> list[str]:
    """The heavy packages (or their submodules) among `modules`."""
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))
