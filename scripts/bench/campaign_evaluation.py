"""Campaign evaluation benchmark: the service's bulk evaluation job vs pytrec_eval on the same runs, and the job's
peak memory per million run lines.

Uploads --runs runs of 50 topics x 1000 shots over REST (not timed), imports qrels, then times the evaluation job
from its request to its `done` (queued in PostgreSQL, run by a worker process started beforehand: load every run,
evaluate every measure, store every run x topic x measure number) next to pytrec_eval parsing the same run files and
evaluating the same measures.

With --lines N [N ...] it measures memory instead: per size, a campaign of N run lines (runs of 50,000 lines stored
straight into the runs table, cycling over 10 distinct synthetic files: upload is not what is measured), evaluated
by one fresh worker process per --budget-mb; it prints the worker's peak RSS (VmHWM) and its peak RSS per million
run lines, the job's time, and the number of blocks. Before the workers, it measures in this process what one block
of 1, 5 and 20 runs (up to 10^6 lines) adds to the peak RSS per run line, the qrels already cached: the figure
`run_blocks.BYTES_PER_RUN_LINE` is set from, so a block stays within job_memory_mb. With --sampled the qrels are
a stratified sample (sample_eval's 5 columns: the lines the runs rank in their top 100 judged in full, the others a
fifth, the rest -1), the measures include xinfAP and infNDCG, and the job adds each run's sampling variance: the
figure is then `run_blocks.SAMPLED_BYTES_PER_RUN_LINE`.

    .venv/bin/python scripts/bench/campaign_evaluation.py [--runs 100]
    .venv/bin/python scripts/bench/campaign_evaluation.py --lines 1000000 10000000 [--budget-mb 512 100000] [--sampled]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import sys
import tempfile
import time
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytrec_eval
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import N_TOPICS, make_run  # noqa: E402

from app.config import Settings  # noqa: E402
from app.evaluation.formats.topics_file import TopicDef  # noqa: E402
from app.server import create_app  # noqa: E402
from app.services import campaigns, evaluations, jobs, run_blocks, teams, topics  # noqa: E402
from app.services import qrels as qrels_service  # noqa: E402
from app.services.auth import Principal, create_token  # noqa: E402
from app.storage import migrations  # noqa: E402
from app.storage.database import make_engine, make_session_factory, session_scope, start_embedded  # noqa: E402
from app.storage.models import Evaluation, Role, Run, TaskKind  # noqa: E402
from app.worker.processes import WorkerProcesses  # noqa: E402

MEASURES = ["AP", "P@10", "nDCG@10", "bpref", "Rprec", "RR", "num_rel_ret"]
SAMPLED_MEASURES = ["xinfAP", "infNDCG", "AP", "P@10", "num_rel_ret"]
PYTREC = {"map", "P_10", "ndcg_cut_10", "bpref", "Rprec", "recip_rank", "num_rel_ret"}


def make_qrels(rng: np.random.Generator, files: list[bytes]) -> bytes:
    """Judge a random half of what the first runs returned, a fifth of it relevant."""
    lines = set()
    for data in files[:10]:
        for row in data.decode().splitlines()[::2]:
            topic, _, doc, *_ = row.split()
            lines.add((topic, doc))
    return "".join(f"{t} 0 {d} {int(rng.random() < 0.2)}\n" for t, d in sorted(lines)).encode()


def make_sampled_qrels(rng: np.random.Generator, files: list[bytes]) -> bytes:
    """The same lines as `make_qrels`, stratified: those some run ranks in its top 100 (stratum 1) judged in full,
    the others (stratum 2) judged a fifth at random and -1 else; a fifth of the judged relevant."""
    strata: dict[tuple[str, str], int] = {}
    for data in files[:10]:
        for row in data.decode().splitlines()[::2]:
            topic, _, doc, rank, *_ = row.split()
            key = (topic, doc)
            strata[key] = min(strata.get(key, 2), 1 if int(rank) <= 100 else 2)
    out = []
    for (t, d), stratum in sorted(strata.items()):
        judged = stratum == 1 or rng.random() < 0.2
        out.append(f"{t} 0 {d} {stratum} {int(rng.random() < 0.2) if judged else -1}\n")
    return "".join(out).encode()


def peak_rss_mib(pid: int) -> tuple[float, float]:
    """A process's resident set now and at its peak (VmRSS, VmHWM), in MiB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def store_runs(
    session: Session, campaign_id: int, team_id: int, contents: list[bytes], n_runs: int, lines_per_run: int
) -> None:
    """n_runs stored runs of the campaign, cycling through the compressed files `contents` (written straight into the
    runs table: the upload is not what these benches measure)."""
    for i in range(n_runs):
        content = contents[i % len(contents)]
        session.add(
            Run(campaign_id=campaign_id, team_id=team_id, name=f"r{i}", tag=f"r{i % len(contents)}", format="trec",
                system_type="F", training_type="D", n_entries=lines_per_run, n_topics=N_TOPICS,
                sha256=hashlib.sha256(content).hexdigest(), content=content)
        )  # fmt: skip
    session.flush()


def block_peak(sessions: sessionmaker[Session], campaign_id: int, block_runs: list[int], measures: list[str]) -> None:
    """In this process, the most memory one block of the campaign's first runs allocates at once (evaluated and
    stored, then rolled back) per run line, after a one-run block has cached the qrels and loaded the code: Python's
    and numpy's allocations (tracemalloc), which a fresh worker's RSS is made of, and the RSS peak's rise (VmHWM
    reset through /proc/self/clear_refs), which pages already freed to the allocator here may hide."""
    clear_peak = Path("/proc/self/clear_refs")
    with session_scope(sessions) as session:
        organiser = Principal(Role.organiser, token_id=0)
        evaluation = evaluations.start_evaluation(session, organiser, campaign_id, measures=measures)
        runs = evaluations.evaluated_runs(session, campaign_id, evaluation.qrels_version_id)
        sampled = evaluations.plan_evaluation(session, evaluation, 1e9).held
        per_line = run_blocks.SAMPLED_BYTES_PER_RUN_LINE if sampled else run_blocks.BYTES_PER_RUN_LINE

        def one_block(run_ids: list[int]) -> None:
            """The job's work on one block: its scores (and with sampled qrels its sampling variances)."""
            if sampled:
                evaluations.evaluate_in_job(session, evaluation, [run_ids])
            else:
                evaluations.evaluate_block(session, evaluation, run_ids)

        one_block([runs[0].id])
        tracemalloc.start()
        for n in block_runs:
            gc.collect()
            clear_peak.write_text("5")
            tracemalloc.reset_peak()
            held, _ = tracemalloc.get_traced_memory()
            before, _ = peak_rss_mib(os.getpid())
            one_block([r.id for r in runs[:n]])
            _, peak = peak_rss_mib(os.getpid())
            _, allocated = tracemalloc.get_traced_memory()
            lines = sum(r.n_entries for r in runs[:n])
            print(
                f"one block of {lines:>9,} run lines ({n} runs): allocates at most "
                f"{(allocated - held) / 2**20:5.0f} MiB, {(allocated - held) / lines:4.0f} bytes per run line "
                f"({'SAMPLED_' if sampled else ''}BYTES_PER_RUN_LINE {per_line}); "
                f"RSS peak rises {peak - before:4.0f} MiB, {(peak - before) * 2**20 / lines:4.0f} bytes per run line"
            )
        tracemalloc.stop()
        session.rollback()


def memory(url: str, sessions: sessionmaker[Session], sizes: list[int], budgets: list[float], sampled: bool) -> None:
    """Per campaign size and memory budget, a fresh worker's peak RSS while it evaluates the campaign."""
    rng = np.random.default_rng(7)
    files = [make_run(rng, f"r{i}") for i in range(10)]
    contents = [zlib.compress(data) for data in files]
    qrels = make_sampled_qrels(rng, files) if sampled else make_qrels(rng, files)
    measures = SAMPLED_MEASURES if sampled else MEASURES
    lines_per_run = N_TOPICS * 1000
    for size in sizes:
        n_runs = max(1, size // lines_per_run)
        with session_scope(sessions) as session:
            organiser = Principal(Role.organiser, token_id=0)
            spec = campaigns.CampaignSpec(
                name=f"memory-{time.time_ns()}", task_kind=TaskKind.shots, max_runs_per_team=n_runs
            )
            cid = campaigns.create_campaign(session, organiser, spec).id
            topic_defs = [TopicDef(str(t), "t") for t in range(1, N_TOPICS + 1)]
            topics.add_topics(session, organiser, cid, topic_defs)
            team, _ = teams.create_team(session, organiser, cid, "bench")
            store_runs(session, cid, team.id, contents, n_runs, lines_per_run)
            qrels_service.import_qrels(session, organiser, cid, qrels, label="q", max_errors=10)
        block_peak(sessions, cid, sorted({min(n, n_runs, 20) for n in (1, 5, 20)}), measures)
        for budget in budgets:
            settings = Settings(database_url=url, job_memory_mb=budget, job_max_run_seconds=24 * 3600.0)
            workers = WorkerProcesses(url, settings)
            time.sleep(8.0)  # the worker imports and starts
            idle, _ = peak_rss_mib(workers.pids[0])
            with session_scope(sessions) as session:
                evaluation = evaluations.start_evaluation(session, organiser, cid, measures=measures)
                jobs.enqueue(session, evaluation, campaign_concurrency=1)
                evaluation_id = evaluation.id
                n_blocks = len(evaluations.plan_evaluation(session, evaluation, budget).blocks)
            start = time.perf_counter()
            status = "queued"
            while status in ("queued", "running"):
                time.sleep(0.2)
                with session_scope(sessions) as session:
                    row = session.get(Evaluation, evaluation_id)
                    assert row is not None
                    status = row.status
            took = time.perf_counter() - start
            _, peak = peak_rss_mib(workers.pids[0])
            workers.stop()
            assert status == "done", status
            total = n_runs * lines_per_run
            print(
                f"{total:>12,} run lines ({n_runs} runs), job_memory_mb {budget:g} ({n_blocks} blocks): "
                f"{took:7.1f} s, worker idle {idle:.0f} MiB, peak {peak:.0f} MiB, "
                f"peak per million run lines {peak / (total / 1e6):.1f} MiB, "
                f"above idle {(peak - idle) / (total / 1e6):.1f} MiB"
            )


def main() -> None:
    """Set up, then time both paths and print the ratio (or measure memory with --lines)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--lines", type=int, nargs="*", help="campaign sizes in run lines: measure memory instead")
    parser.add_argument("--budget-mb", type=float, nargs="+", default=[512.0], help="job_memory_mb values to try")
    parser.add_argument("--sampled", action="store_true", help="with --lines: stratified sampled qrels (xinfAP)")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL") or start_embedded(Path(tempfile.mkdtemp(prefix="trecpool-bench-")))
    migrations.upgrade(url)
    sessions = make_session_factory(make_engine(url))
    if args.lines:
        memory(url, sessions, args.lines, args.budget_mb, args.sampled)
        return
    with session_scope(sessions) as session:
        token = create_token(session, Role.organiser, label="bench")
    settings = Settings(database_url=url, max_upload_bytes=1 << 28)
    client = TestClient(create_app(settings, sessions))
    workers = WorkerProcesses(url, settings)  # starts while the runs upload
    client.headers["Authorization"] = f"Bearer {token}"
    rng = np.random.default_rng(7)
    files = [make_run(rng, f"r{i}") for i in range(args.runs)]
    qrels = make_qrels(rng, files)
    cid = client.post(
        "/api/campaigns", json={"name": f"bench-{time.time_ns()}", "task_kind": "shots", "max_runs_per_team": args.runs}
    ).json()["id"]
    client.post(f"/api/campaigns/{cid}/topics", json=[{"number": str(t), "title": "t"} for t in range(1, N_TOPICS + 1)])
    client.post(f"/api/campaigns/{cid}/open")
    team = client.post(f"/api/campaigns/{cid}/teams", json={"name": "bench"}).json()["id"]
    for i, data in enumerate(files):
        client.post(
            f"/api/campaigns/{cid}/runs", data={"name": f"r{i}", "team_id": str(team)}, files={"file": ("r", data)}
        ).raise_for_status()
    client.post(f"/api/campaigns/{cid}/qrels", data={"label": "q"}, files={"file": ("q", qrels)}).raise_for_status()
    n_qrels = len(qrels.splitlines())
    print(f"campaign: {args.runs} runs x {N_TOPICS} topics x 1000 shots, {n_qrels:,} qrels lines")

    start = time.perf_counter()
    job = client.post(f"/api/campaigns/{cid}/evaluations", json={"measures": MEASURES}).json()
    status = job
    while status["status"] in ("queued", "running"):
        time.sleep(0.02)
        status = client.get(f"/api/evaluations/{job['id']}").json()
    ours = time.perf_counter() - start
    workers.stop()
    assert status["status"] == "done", status

    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, data in enumerate(files):
            paths.append(Path(tmp) / f"r{i}")
            paths[-1].write_bytes(data)
        (Path(tmp) / "qrels").write_bytes(qrels)
        start = time.perf_counter()
        with open(Path(tmp) / "qrels") as handle:
            judged = pytrec_eval.parse_qrel(handle)
        evaluator = pytrec_eval.RelevanceEvaluator(judged, PYTREC)
        for path in paths:
            with open(path) as handle:
                evaluator.evaluate(pytrec_eval.parse_run(handle))
        reference = time.perf_counter() - start
    n_numbers = args.runs * len(MEASURES) * (N_TOPICS + 1)
    print(
        f"trecpool evaluation job (PostgreSQL -> {len(MEASURES)} measures -> {n_numbers:,} stored numbers): "
        f"{ours:.2f} s"
    )
    print(f"pytrec_eval, files -> numbers in memory (nothing stored):                        {reference:.2f} s")
    print(f"ratio pytrec_eval / trecpool: {reference / ours:.2f}x   (target: ready in seconds)")


if __name__ == "__main__":
    main()
