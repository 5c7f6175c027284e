"""A command on the embedded PostgreSQL says which database it uses in one line on stderr, and nothing else: no
platformdirs warning about XDG_RUNTIME_DIR, no INFO log lines, no line cut in the middle of a path."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_token_create_on_a_new_embedded_database_prints_the_token_and_one_line(tmp_path: Path) -> None:
    unset = ("DATABASE_URL", "XDG_RUNTIME_DIR", "PYTHONWARNINGS", "PYTHONUNBUFFERED")
    environment = {name: value for name, value in os.environ.items() if name not in unset}
    data = tmp_path / "a-data-directory-with-a-name-long-enough-to-be-wrapped-at-eighty-columns"
    environment |= {"TRECPOOL_DATA_DIR": str(data), "COLUMNS": "80"}
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "token", "create", "--role", "organiser"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("tp_") and len(done.stdout.splitlines()) == 1
    pgdata = (data / "pgdata").resolve()
    assert done.stderr == f"DATABASE_URL is unset: using an embedded PostgreSQL with its data in {pgdata}\n"
