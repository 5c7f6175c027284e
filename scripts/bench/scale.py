"""Scale benchmark: a synthetic campaign of --lines run lines (10^7 by default) through REST upload, evaluation by 1,
2 and 4 worker processes, and the leaderboard GET; throughput and peak memory per worker, bytes stored per run line.

Makes a fresh database `trecpool_scale_<pid>` on the PostgreSQL server of --server-url (dropped at the end), serves
the app on a loopback port and, as a user would over HTTP: creates a campaign of 50 topics, uploads distinct
synthetic runs of 50 topics x --depth shots (ingest.make_run, cut to the depth) and qrels judging half of what the
first 10 runs returned (campaign_evaluation.make_qrels; --sampled: stratified sample_eval qrels, make_sampled_qrels,
and its measures xinfAP, infNDCG, AP, P@10, num_rel_ret). Then, per --workers count, starts that many worker
processes (as `trecpool worker --processes N`, with TRECPOOL_JOB_MEMORY_MB = --budget-mb, so the evaluation fans out
as one queue task per block of runs), POSTs an evaluation of 7 measures, waits for `done` and GETs the leaderboard.

Printed per worker count: the blocks, the evaluation's wall time from the POST to `done`, run lines/s in all and
per worker, run lines per CPU second of a worker (its utime + stime over the job: the figure to extrapolate from
on a shared machine), each worker's peak RSS (VmHWM) and the leaderboard GET's time; and the bytes stored per run
line: run files (compressed, in the store of --storage; `dir:` alone is a scratch directory) and the tables holding
scores (with their indexes and partitions, pg_total_relation_size, grown by one evaluation).

    nice .venv/bin/python scripts/bench/scale.py [--lines 10000000] [--workers 1 2 4] [--budget-mb 128] [--sampled]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from campaign_evaluation import MEASURES, SAMPLED_MEASURES, make_qrels, make_sampled_qrels, peak_rss_mib  # noqa: E402
from ingest import DEPTH, N_TOPICS, make_run  # noqa: E402
from serving import serve_in_thread  # noqa: E402

from app.config import Settings  # noqa: E402
from app.server import create_app  # noqa: E402
from app.services import offload  # noqa: E402
from app.services.auth import create_token  # noqa: E402
from app.services.jobs import BLOCK_TASK  # noqa: E402
from app.storage import migrations  # noqa: E402
from app.storage.database import make_engine, make_session_factory, normalise_url, session_scope  # noqa: E402
from app.storage.models import Role  # noqa: E402
from app.worker.processes import WorkerProcesses  # noqa: E402

SERVER_URL = "postgresql://postgres@127.0.0.1:5432/"
MAX_RUNS_PER_TEAM = 1000  # the API's limit of max_runs_per_team
QRELS_RUNS = 10  # make_qrels judges items of the first 10 runs
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
SCORE_TABLES = ("scores", "score_arrays", "score_topics")  # rows, or (migration 0016) arrays and topic orders
SCORES_BYTES = text(  # the tables holding scores, with their TOAST, indexes and partitions (a view counts nothing)
    "WITH held AS (SELECT oid FROM pg_class WHERE relname = ANY(:names) AND relkind IN ('r', 'p') "
    "AND relnamespace = 'public'::regnamespace) "
    "SELECT coalesce(sum(pg_total_relation_size(oid)), 0) FROM "
    "(SELECT oid FROM held UNION SELECT inhrelid FROM pg_inherits WHERE inhparent IN (SELECT oid FROM held)) t"
).bindparams(names=list(SCORE_TABLES))
BLOCK_TASKS = text(  # the queue tasks an evaluation fanned out (none: it ran as one block)
    "SELECT count(*) FROM procrastinate_jobs WHERE task_name = :task AND (args->>'job_id')::bigint = :id"
)


@dataclass(frozen=True)
class Row:
    """One worker count's evaluation, as printed."""

    workers: int
    blocks: int
    seconds: float
    lines_per_cpu_second: float
    peaks_mib: list[float]
    idle_mib: list[float]
    board_ms: float
    scores_bytes: int


def cut(data: bytes, depth: int) -> bytes:
    """A run file's lines of rank `depth` or better (the whole file at ingest.DEPTH)."""
    if depth >= DEPTH:
        return data
    return b"".join(line + b"\n" for line in data.splitlines() if int(line.split()[3]) <= depth)


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def wait_for_workers(engine: Engine, count: int, timeout: float = 180.0) -> None:
    """Return once `count` procrastinate workers have registered (their processes import and connect first)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with engine.connect() as conn:
            if conn.execute(text("SELECT count(*) FROM procrastinate_workers")).scalar_one() >= count:
                return
        time.sleep(0.2)
    raise TimeoutError(f"{count} worker(s) did not start within {timeout:.0f} s")


def upload(http: httpx.Client, n_runs: int, depth: int, sampled: bool) -> tuple[int, int, float, float]:
    """Create the campaign, upload its runs and qrels (`sampled`: stratified, sample_eval's) over REST: campaign id,
    run lines, upload seconds, lines/s."""
    rng = np.random.default_rng(7)
    per_team = min(n_runs, MAX_RUNS_PER_TEAM)
    cid = http.post(
        "/api/campaigns", json={"name": f"scale-{time.time_ns()}", "task_kind": "shots", "max_runs_per_team": per_team}
    ).json()["id"]
    http.post(
        f"/api/campaigns/{cid}/topics", json=[{"number": str(t), "title": "t"} for t in range(1, N_TOPICS + 1)]
    ).raise_for_status()
    http.post(f"/api/campaigns/{cid}/open").raise_for_status()
    n_teams = -(-n_runs // per_team)  # the API caps a team's runs: a larger campaign is split over teams
    teams = [http.post(f"/api/campaigns/{cid}/teams", json={"name": f"scale{k}"}).json()["id"] for k in range(n_teams)]
    first = [cut(make_run(rng, f"r{i}"), depth) for i in range(min(n_runs, QRELS_RUNS))]
    qrels = make_sampled_qrels(rng, first) if sampled else make_qrels(rng, first)
    lines, seconds = 0, 0.0
    for i in range(n_runs):
        data = first[i] if i < len(first) else cut(make_run(rng, f"r{i}"), depth)
        start = time.perf_counter()
        response = http.post(
            f"/api/campaigns/{cid}/runs",
            data={"name": f"r{i}", "team_id": str(teams[i // per_team])},
            files={"file": ("r", data)},
        )
        seconds += time.perf_counter() - start
        response.raise_for_status()
        lines += data.count(b"\n")
        if (i + 1) % 50 == 0:
            print(f"  uploaded {i + 1}/{n_runs} runs, {lines:,} lines, {lines / seconds:,.0f} lines/s", flush=True)
    http.post(f"/api/campaigns/{cid}/qrels", data={"label": "q"}, files={"file": ("q", qrels)}).raise_for_status()
    return cid, lines, seconds, lines / seconds


def evaluate(
    http: httpx.Client, engine: Engine, url: str, settings: Settings, cid: int, n_workers: int, measures: list[str]
) -> Row:
    """Evaluate the campaign's `measures` with `n_workers` fresh worker processes, then GET its leaderboard."""
    workers = WorkerProcesses(url, settings, processes=n_workers)
    try:
        wait_for_workers(engine, n_workers)
        pids = list(workers.pids)
        idle = [peak_rss_mib(pid)[0] for pid in pids]
        cpu_before = [cpu_seconds(pid) for pid in pids]
        with engine.connect() as conn:
            scores_before = conn.execute(SCORES_BYTES).scalar_one()
        start = time.perf_counter()
        job = http.post(f"/api/campaigns/{cid}/evaluations", json={"measures": measures})
        job.raise_for_status()
        status = job.json()
        while status["status"] in ("queued", "running"):
            time.sleep(0.2)
            status = http.get(f"/api/evaluations/{status['id']}").json()
        seconds = time.perf_counter() - start
        if status["status"] != "done" or list(workers.pids) != pids:
            raise RuntimeError(f"evaluation {status['status']} (workers {pids} -> {workers.pids}): {status}")
        cpu = sum(cpu_seconds(pid) - before for pid, before in zip(pids, cpu_before, strict=True))
        peaks = [peak_rss_mib(pid)[1] for pid in pids]
    finally:
        workers.stop()
    with engine.connect() as conn:
        scores_bytes = conn.execute(SCORES_BYTES).scalar_one() - scores_before
        lines = conn.execute(text("SELECT sum(n_entries) FROM runs WHERE campaign_id = :c"), {"c": cid}).scalar_one()
        tasks = conn.execute(BLOCK_TASKS, {"task": BLOCK_TASK, "id": status["id"]}).scalar_one()
    timings = []
    for _ in range(3):
        start = time.perf_counter()
        board = http.get(f"/api/campaigns/{cid}/leaderboard", params={"evaluation_id": status["id"], "measure": "AP"})
        timings.append(time.perf_counter() - start)
        board.raise_for_status()
    return Row(n_workers, max(1, tasks), seconds, lines / max(cpu, 1e-9), peaks, idle, statistics.median(timings) * 1e3,
               scores_bytes)  # fmt: skip


def stored_run_bytes(engine: Engine, storage: str) -> tuple[int, int]:
    """Bytes of the stored (compressed) run files in their store, and of the runs table with its TOAST and indexes."""
    with engine.connect() as conn:
        table = conn.execute(text("SELECT pg_total_relation_size('runs')")).scalar_one()
        if storage == "postgres":
            return conn.execute(text("SELECT coalesce(sum(octet_length(content)), 0) FROM runs")).scalar_one(), table
    root = Path(storage.removeprefix("dir:"))
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()), table


def report(lines: int, upload_rate: float, upload_seconds: float, runs: tuple[int, int], rows: list[Row]) -> None:
    """Print the table."""
    print(f"\nupload (REST: parse, validate, store): {lines:,} run lines in {upload_seconds:.1f} s = "
          f"{upload_rate:,.0f} lines/s")  # fmt: skip
    print(f"bytes per run line: run files {runs[0] / lines:.2f} (store), runs table {runs[1] / lines:.2f} (PostgreSQL)")
    print(
        f"{'workers':>7} {'blocks':>6} {'eval s':>8} {'lines/s':>10} {'lines/s/worker':>14} {'lines/CPU-s':>11} "
        f"{'peak RSS MiB per worker (idle)':>36} {'board ms':>8} {'scores B/line':>13}"
    )
    for row in rows:
        peaks = " ".join(f"{p:.0f}({i:.0f})" for p, i in zip(row.peaks_mib, row.idle_mib, strict=True))
        rate = lines / row.seconds
        print(
            f"{row.workers:>7} {row.blocks:>6} {row.seconds:>8.1f} {rate:>10,.0f} {rate / row.workers:>14,.0f} "
            f"{row.lines_per_cpu_second:>11,.0f} {peaks:>36} {row.board_ms:>8.0f} {row.scores_bytes / lines:>13.3f}"
        )


def main() -> None:
    """Make the database, upload, evaluate per worker count, print, and drop the database."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=10_000_000, help="run lines of the campaign (10^8: a long run)")
    parser.add_argument("--depth", type=int, default=DEPTH, help="shots per topic of each run (runs of 50 topics)")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4], help="worker process counts to try")
    parser.add_argument("--budget-mb", type=float, default=128.0, help="TRECPOOL_JOB_MEMORY_MB of the workers")
    parser.add_argument("--storage", default="postgres", help="TRECPOOL_RUN_STORAGE: postgres or dir:/path")
    parser.add_argument("--parse-processes", type=int, default=1, help="TRECPOOL_PARSE_PROCESSES of the server")
    parser.add_argument("--server-url", default=os.environ.get("SCALE_SERVER_URL", SERVER_URL))
    parser.add_argument("--sampled", action="store_true", help="stratified sampled qrels (xinfAP, infNDCG, ...)")
    args = parser.parse_args()
    depth = min(args.depth, DEPTH)
    n_runs = max(1, args.lines // (N_TOPICS * depth))
    name = f"trecpool_scale_{os.getpid()}"
    admin_url = normalise_url(args.server_url)
    admin = create_engine(make_url(admin_url).set(database="postgres"), isolation_level="AUTOCOMMIT")
    url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    scratch = args.storage == "dir:"
    storage = f"dir:{tempfile.mkdtemp(prefix='trecpool-scale-')}" if scratch else args.storage
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine = make_engine(url)
    server = None
    try:
        migrations.upgrade(url)
        sessions = make_session_factory(engine)
        with session_scope(sessions) as session:
            token = create_token(session, Role.organiser, label="scale")
        app_settings = Settings(database_url=url, run_storage=storage, parse_processes=args.parse_processes)
        base, server = serve_in_thread(create_app(app_settings, sessions))
        worker_settings = Settings(
            database_url=url, run_storage=storage, job_memory_mb=args.budget_mb, job_max_run_seconds=24 * 3600.0
        )
        print(f"campaign: {n_runs} runs x {N_TOPICS} topics x {depth} shots, database {name}", flush=True)
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=600) as http:
            cid, lines, upload_seconds, upload_rate = upload(http, n_runs, depth, args.sampled)
            print(f"  uploaded {lines:,} run lines at {upload_rate:,.0f} lines/s", flush=True)
            rows = []
            for n_workers in args.workers:
                measures = SAMPLED_MEASURES if args.sampled else MEASURES
                rows.append(evaluate(http, engine, url, worker_settings, cid, n_workers, measures))
                print(f"  evaluated with {n_workers} worker(s) in {rows[-1].seconds:.1f} s", flush=True)
        report(lines, upload_rate, upload_seconds, stored_run_bytes(engine, storage), rows)
    finally:
        if server is not None:
            server.should_exit = True
        offload.shutdown()
        engine.dispose()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
        if scratch:
            shutil.rmtree(storage.removeprefix("dir:"), ignore_errors=True)


if __name__ == "__main__":
    main()
