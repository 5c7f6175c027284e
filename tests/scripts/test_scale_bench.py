"""scripts/bench/scale.py end to end at a tiny size: upload over REST, an evaluation fanned out as queue tasks and
the leaderboard, its table printed, and its scratch database dropped."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from sqlalchemy import create_engine, text

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "bench" / "scale.py"


def test_scale_bench_runs_end_to_end_and_drops_its_database(pg_admin_url: str) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--lines", "2000", "--depth", "20", "--workers", "1", "--budget-mb", "0.001",
         "--parse-processes", "0", "--server-url", pg_admin_url],
        capture_output=True, text=True, timeout=300, cwd=REPO, env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "campaign: 2 runs x 50 topics x 20 shots" in out
    assert re.search(r"upload \(REST: parse, validate, store\): 2,000 run lines in [\d.]+ s = [\d,]+ lines/s", out)
    store, table = map(float, re.findall(r"run files ([\d.]+) \(store\), runs table ([\d.]+)", out)[0])
    assert 1.0 < store < 100.0 and table > store  # zlib files of ~35-byte lines; the table adds its rows and index
    row = re.search(r"^\s+1\s+(\d+)\s+([\d.]+)\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)\s+(\d+)\((\d+)\)\s+(\d+)\s+([\d.]+)$",
                    out, re.MULTILINE)  # fmt: skip
    assert row is not None, out
    blocks, seconds, rate, per_worker = int(row[1]), float(row[2]), row[3], row[4]
    assert blocks == 2  # a budget below one run: one queue task per run
    lines_per_second = int(rate.replace(",", ""))
    assert rate == per_worker and 2000 / (seconds + 0.05) <= lines_per_second <= 2000 / max(seconds - 0.05, 0.01)
    peak, idle = int(row[6]), int(row[7])
    assert peak >= idle > 50  # a worker process with the app imported
    assert float(row[9]) > 0  # 2 runs x 7 measures x 51 topics (50 and all) rows of scores over 2,000 lines
    name = re.search(r"database (trecpool_scale_\d+)", out)
    assert name is not None
    admin = create_engine(pg_admin_url)
    try:
        with admin.connect() as conn:
            left = conn.execute(text("SELECT count(*) FROM pg_database WHERE datname = :n"), {"n": name[1]})
            assert left.scalar_one() == 0
    finally:
        admin.dispose()
