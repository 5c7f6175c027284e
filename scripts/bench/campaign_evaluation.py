"""Campaign evaluation benchmark: the service's bulk evaluation job vs pytrec_eval on the same runs, in one process.

Uploads --runs runs of 50 topics x 1000 shots over REST (not timed), imports qrels, then times the evaluation job
from its request to its `done` (queued in PostgreSQL, run by a worker process started beforehand: load every run,
evaluate every measure, store every run x topic x measure number) next to pytrec_eval parsing the same run files and
evaluating the same measures.

    .venv/bin/python scripts/bench/campaign_evaluation.py [--runs 100]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytrec_eval
from fastapi.testclient import TestClient

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ingest import N_TOPICS, make_run  # noqa: E402

from app.config import Settings  # noqa: E402
from app.server import create_app  # noqa: E402
from app.services.auth import create_token  # noqa: E402
from app.storage import migrations  # noqa: E402
from app.storage.database import make_engine, make_session_factory, session_scope, start_embedded  # noqa: E402
from app.storage.models import Role  # noqa: E402
from app.worker.processes import WorkerProcesses  # noqa: E402

MEASURES = ["AP", "P@10", "nDCG@10", "bpref", "Rprec", "RR", "num_rel_ret"]
PYTREC = {"map", "P_10", "ndcg_cut_10", "bpref", "Rprec", "recip_rank", "num_rel_ret"}


def make_qrels(rng: np.random.Generator, files: list[bytes]) -> bytes:
    """Judge a random half of what the first runs returned, a fifth of it relevant."""
    lines = set()
    for data in files[:10]:
        for row in data.decode().splitlines()[::2]:
            topic, _, doc, *_ = row.split()
            lines.add((topic, doc))
    return "".join(f"{t} 0 {d} {int(rng.random() < 0.2)}\n" for t, d in sorted(lines)).encode()


def main() -> None:
    """Set up, then time both paths and print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL") or start_embedded(Path(tempfile.mkdtemp(prefix="trecpool-bench-")))
    migrations.upgrade(url)
    sessions = make_session_factory(make_engine(url))
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
