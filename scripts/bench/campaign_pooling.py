"""Pooling and pool-depth memory benchmark: peak RSS per million run lines of a pool build, of its statistics and of
a pool-depth analysis, which read the runs in blocks within job_memory_mb (app/services/run_blocks.py).

Per size (--lines), a campaign of that many run lines (runs of 50 topics x 1000 shots stored straight into the runs
table, cycling over 10 distinct synthetic files, as scripts/bench/campaign_evaluation.py stores them) with qrels
judging half of what the first runs returned, evaluated once (AP, in blocks). Then, per --budget-mb, one fresh
Python process per task (so its VmHWM is the task's own): `pool` builds a stratified TRECVID pool (1-300 all,
301-1000 a quarter; `pools.preview_pool`, the build without storing), `pool-build` builds and stores it
(`pools.create_pool`, judging order --order, rolled back), `pool-stats` computes that pool's statistics
(`pools.statistics`; the pool is stored once, before the first such task), `pool-depth` runs the pool-depth analysis
(--measure, AP by default; depths 1..--max-depth), `budget` the budget analysis (ranks 11-100 of the qrels sampled
at a fifth, 50 replicates). Each line prints the process's RSS before the task, its peak, and the peak per million
run lines.

    .venv/bin/python scripts/bench/campaign_pooling.py --lines 1000000 10000000 [--budget-mb 64 512] [--max-depth 20]
        [--tasks pool pool-build pool-stats pool-depth budget] [--order shuffled] [--measure P@10]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from campaign_evaluation import make_qrels, peak_rss_mib, store_runs  # noqa: E402
from ingest import N_TOPICS, make_run  # noqa: E402

from app.evaluation.formats.topics_file import TopicDef  # noqa: E402
from app.services import analyses, campaigns, evaluations, pools, teams, topics  # noqa: E402
from app.services import qrels as qrels_service  # noqa: E402
from app.services.auth import Principal  # noqa: E402
from app.storage import migrations  # noqa: E402
from app.storage.database import make_engine, make_session_factory, session_scope, start_embedded  # noqa: E402
from app.storage.models import CampaignStatus, Role, TaskKind  # noqa: E402

ORGANISER = Principal(Role.organiser, token_id=0)
LINES_PER_RUN = N_TOPICS * 1000
TASKS = ("pool", "pool-build", "pool-stats", "pool-depth", "budget")


def make_campaign(url: str, size: int) -> int:
    """A closed campaign of `size` run lines with imported qrels and a finished AP evaluation; its id."""
    sessions = make_session_factory(make_engine(url))
    rng = np.random.default_rng(7)
    files = [make_run(rng, f"r{i}") for i in range(10)]
    contents = [zlib.compress(data) for data in files]
    n_runs = max(1, size // LINES_PER_RUN)
    with session_scope(sessions) as session:
        name = f"pooling-{time.time_ns()}"
        spec = campaigns.CampaignSpec(name=name, task_kind=TaskKind.shots, max_runs_per_team=n_runs)
        cid = campaigns.create_campaign(session, ORGANISER, spec).id
        topics.add_topics(session, ORGANISER, cid, [TopicDef(str(t), "t") for t in range(1, N_TOPICS + 1)])
        team, _ = teams.create_team(session, ORGANISER, cid, "bench")
        store_runs(session, cid, team.id, contents, n_runs, LINES_PER_RUN)
        campaigns.set_status(session, ORGANISER, cid, CampaignStatus.open)
        campaigns.set_status(session, ORGANISER, cid, CampaignStatus.closed)
        qrels_service.import_qrels(session, ORGANISER, cid, make_qrels(rng, files), label="q", max_errors=10)
        evaluation = evaluations.start_evaluation(session, ORGANISER, cid, measures=["AP"])
        session.flush()
        evaluations.run_evaluation(session, evaluation.id)
    return cid


def make_pool(url: str, cid: int) -> None:
    """Store the campaign's pool (the `pool` task's spec), for `pool-stats` to read."""
    sessions = make_session_factory(make_engine(url))
    with session_scope(sessions) as session:
        pools.create_pool(session, ORGANISER, cid, pools.PoolSpec(kind="stratified", seed=1))


def child(url: str, task: str, cid: int, budget: float, max_depth: int, order: str, measure: str) -> None:
    """One task in this process; prints `idle peak seconds`."""
    sessions = make_session_factory(make_engine(url))
    idle, _ = peak_rss_mib(os.getpid())
    start = time.perf_counter()
    with session_scope(sessions) as session:
        if task == "pool":
            spec = pools.PoolSpec(kind="stratified", seed=1)
            preview = pools.preview_pool(session, ORGANISER, cid, spec, memory_mb=budget)
            assert preview["totals"]["pooled"] > 0  # type: ignore[index]
        elif task == "pool-build":
            spec = pools.PoolSpec(kind="stratified", seed=1, order=order)
            built = pools.create_pool(session, ORGANISER, cid, spec, memory_mb=budget)
            assert built.id
        elif task == "pool-stats":
            pool = pools.current_pool(session, cid)
            assert pool is not None
            stats = pools.statistics(session, ORGANISER, pool.id, memory_mb=budget)
            assert stats["runs"]  # a list, one entry a run
        else:
            kind = "budget" if task == "budget" else "pool-depth"
            params: dict[str, object] = {"measure": measure, "max_depth": max_depth}
            if task == "budget":
                params = {"sampled": ["11-100:0.2"], "replicates": 50}
            job = analyses.start_analysis(session, ORGANISER, cid, kind, params)
            session.flush()
            done = analyses.run_analysis(session, job.id, memory_mb=budget)
            assert done.status == "done"
        session.rollback()
    took = time.perf_counter() - start
    _, peak = peak_rss_mib(os.getpid())
    print(f"{idle} {peak} {took}")


def main() -> None:
    """Make each campaign, then measure each task and budget in a fresh process."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, nargs="+", default=[1_000_000], help="campaign sizes in run lines")
    parser.add_argument("--budget-mb", type=float, nargs="+", default=[512.0], help="job_memory_mb values to try")
    parser.add_argument("--max-depth", type=int, default=20, help="pool-depth's deepest depth")
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=TASKS)
    parser.add_argument("--order", default="shuffled", help="the judging order of pool-build (e.g. mtc_hedge)")
    parser.add_argument("--measure", default="AP", help="pool-depth's measure (AP: scored from the kept entries)")
    parser.add_argument("--child", nargs=4, metavar=("URL", "TASK", "CAMPAIGN", "BUDGET"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        url, task, cid, budget = args.child
        child(url, task, int(cid), float(budget), args.max_depth, args.order, args.measure)
        return
    url = os.environ.get("DATABASE_URL") or start_embedded(Path(tempfile.mkdtemp(prefix="trecpool-bench-")))
    migrations.upgrade(url)
    for size in args.lines:
        cid = make_campaign(url, size)
        total = max(1, size // LINES_PER_RUN) * LINES_PER_RUN
        for task in args.tasks:
            if task == "pool-stats":
                make_pool(url, cid)
            for budget in args.budget_mb:
                command = [sys.executable, __file__, "--max-depth", str(args.max_depth), "--order", args.order]
                command += ["--measure", args.measure]
                command += ["--child", url, task]
                out = subprocess.run([*command, str(cid), str(budget)], check=True, capture_output=True, text=True)
                idle, peak, took = map(float, out.stdout.split()[-3:])
                print(
                    f"{task:<10} {total:>12,} run lines ({total // LINES_PER_RUN} runs), job_memory_mb {budget:g}: "
                    f"{took:7.1f} s, before {idle:.0f} MiB, peak {peak:.0f} MiB, "
                    f"peak per million run lines {peak / (total / 1e6):.1f} MiB, "
                    f"above before {(peak - idle) / (total / 1e6):.1f} MiB",
                    flush=True,
                )


if __name__ == "__main__":
    main()
