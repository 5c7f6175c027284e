"""Judging benchmark: N simulated assessors lease and judge pool items over HTTP; latency of `next` and of `submit`.

Starts the service in its own process on a free loopback port (DATABASE_URL, else an embedded PostgreSQL), sets up
through the API a closed campaign of --topics topics with --runs runs and a depth pool of about 200 items per topic,
gives each assessor two topics (each topic shared by two assessors), then runs --assessors threads, each with its own
HTTP client, looping `POST /api/judging/next` + `POST /api/judging/items/{id}` until --seconds pass, --items per
assessor are judged or its queue is empty. Prints p50/p90/p99/max latency of both calls (after --warmup seconds, and
over every call) and the throughput.

--think-ms adds a pause between seeing an item and judging it (a real assessor takes seconds); 0 is a stress test
where every assessor has a request in flight all the time.

    .venv/bin/python scripts/bench/judging.py [--assessors 50] [--seconds 60] [--think-ms 2000]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import socket
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SHOTS_PER_VIDEO, N_VIDEOS = 50, 400
VERDICTS = ("relevant", "not_relevant", "not_relevant", "not_relevant", "unsure")


def free_port() -> int:
    """An unused loopback TCP port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def serve(url: str, port: int) -> None:
    """The service as `trecpool serve` runs it: one uvicorn process (run in a child, apart from the clients)."""
    import uvicorn

    from app.config import Settings
    from app.server import create_app
    from app.storage.database import make_engine, make_session_factory

    sessions = make_session_factory(make_engine(url))
    app = create_app(Settings(database_url=url), sessions)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def organiser_token(url: str) -> str:
    """A fresh organiser token on the bench database."""
    from app.services.auth import create_token
    from app.storage.database import make_engine, make_session_factory, session_scope
    from app.storage.models import Role

    engine = make_engine(url)
    try:
        with session_scope(make_session_factory(engine)) as session:
            return create_token(session, Role.organiser, label="bench-judging")
    finally:
        engine.dispose()


def wait_until_up(base: str, server: multiprocessing.process.BaseProcess, limit: float = 60) -> None:
    """Poll /api/health until the service answers."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if not server.is_alive():
            raise SystemExit("the service process exited")
        try:
            if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit("the service did not start")


def set_up(http: httpx.Client, args: argparse.Namespace) -> tuple[int, list[dict[str, str]], int]:
    """Campaign, collection, runs, pool and assessors through the API; returns (pool id, assessor headers, items)."""
    rng = np.random.default_rng(args.seed)
    created = http.post(
        "/api/campaigns",
        json={
            "name": f"bench-judging-{time.time_ns()}",
            "task_kind": "shots",
            "max_runs_per_team": args.runs,
            "max_results": 1000,
        },
    )
    created.raise_for_status()
    campaign = created.json()["id"]
    topics = [str(t) for t in range(1, args.topics + 1)]
    http.post(
        f"/api/campaigns/{campaign}/topics", json=[{"number": t, "title": f"find shots of thing {t}"} for t in topics]
    ).raise_for_status()
    msr = "".join(f"v{v}_{s}\tv{v}\t{s * 3}\t{s * 3 + 3}\n" for v in range(N_VIDEOS) for s in range(SHOTS_PER_VIDEO))
    http.put(
        f"/api/campaigns/{campaign}/collection",
        files={"file": ("msr.tsv", msr.encode())},
        data={"media_url_template": "https://media.invalid/{video_id}.mp4"},
    ).raise_for_status()
    http.post(f"/api/campaigns/{campaign}/open").raise_for_status()
    team = http.post(f"/api/campaigns/{campaign}/teams", json={"name": "bench"}).json()["id"]
    n_shots = N_VIDEOS * SHOTS_PER_VIDEO
    # per topic, every run ranks 300 shots drawn from the same 400 candidates: depth-32 pools of ~190 items
    candidates = {t: rng.choice(n_shots, size=400, replace=False) for t in topics}
    for r in range(args.runs):
        lines = []
        for t in topics:
            ranked = rng.permutation(candidates[t])[:300]
            lines += [
                f"{t} Q0 v{s // SHOTS_PER_VIDEO}_{s % SHOTS_PER_VIDEO} {k + 1} {300 - k} run{r}"
                for k, s in enumerate(ranked.tolist())
            ]
        http.post(
            f"/api/campaigns/{campaign}/runs",
            data={"name": f"run{r}", "team_id": str(team)},
            files={"file": ("run.txt", ("\n".join(lines) + "\n").encode())},
        ).raise_for_status()
    http.post(f"/api/campaigns/{campaign}/close").raise_for_status()
    built = http.post(f"/api/campaigns/{campaign}/pools", json={"kind": "depth", "depth": args.depth, "seed": 1})
    built.raise_for_status()
    pool = built.json()
    headers, ids = [], []
    for a in range(args.assessors):
        body = http.post(f"/api/campaigns/{campaign}/assessors", json={"name": f"assessor{a}"}).json()
        ids.append(body["id"])
        headers.append({"Authorization": f"Bearer {body['token']}"})
    pairs = [
        {"topic": topics[(a + k) % len(topics)], "assessor_id": assessor}
        for a, assessor in enumerate(ids)
        for k in range(2)
    ]
    http.post(f"/api/pools/{pool['id']}/assignments", json={"shared": True, "assignments": pairs}).raise_for_status()
    return pool["id"], headers, sum(t["sampled"] for t in pool["topics"])


@dataclass
class Timings:
    """(start, latency) in seconds of one assessor's calls, and what went wrong."""

    next: list[tuple[float, float]] = field(default_factory=list)
    submit: list[tuple[float, float]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    emptied: bool = False


def assess(base: str, headers: dict[str, str], deadline: float, args: argparse.Namespace, seed: int) -> Timings:
    """One assessor: next + submit until the deadline, the item budget or the end of the queue."""
    rng = random.Random(seed)
    out = Timings()
    with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
        if args.think_ms:  # real assessors do not all press a key in the same millisecond
            time.sleep(rng.uniform(0, 1.5) * args.think_ms / 1000)
        for _ in range(args.items):
            if time.monotonic() >= deadline:
                break
            start = time.perf_counter()
            response = http.post("/api/judging/next")
            out.next.append((start, time.perf_counter() - start))
            if response.status_code == 204:
                out.emptied = True
                break
            if response.status_code != 200:
                out.errors.append(f"next {response.status_code}")
                continue
            task = response.json()["task_id"]
            if args.think_ms:
                time.sleep(rng.uniform(0.5, 1.5) * args.think_ms / 1000)
            start = time.perf_counter()
            response = http.post(f"/api/judging/items/{task}", json={"verdict": rng.choice(VERDICTS)})
            out.submit.append((start, time.perf_counter() - start))
            if response.status_code != 200:
                out.errors.append(f"submit {response.status_code}")
    return out


def describe(name: str, values: list[float]) -> str:
    """One line of latency percentiles in milliseconds."""
    if not values:
        return f"{name:<7} no calls"
    ms = np.asarray(values) * 1000
    p50, p90, p99 = np.percentile(ms, [50, 90, 99])
    return f"{name:<7} n={len(ms):>6}  p50={p50:6.1f} ms  p90={p90:6.1f} ms  p99={p99:6.1f} ms  max={ms.max():7.1f} ms"


def main() -> None:
    """Set up, run the assessors, print the numbers."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assessors", type=int, default=50)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--depth", type=int, default=32, help="pool depth (8 runs x depth 32: ~190 items per topic)")
    parser.add_argument("--seconds", type=float, default=60, help="how long the assessors judge at most")
    parser.add_argument("--items", type=int, default=400, help="items per assessor at most")
    parser.add_argument("--think-ms", type=float, default=2000,
                        help="mean pause before each verdict, as a person takes (0: stress test)")
    parser.add_argument("--warmup", type=float, default=5, help="seconds of calls left out of the percentiles")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    from app.storage import migrations
    from app.storage.database import start_embedded

    url = os.environ.get("DATABASE_URL") or start_embedded(Path(tempfile.mkdtemp(prefix="trecpool-bench-")))
    migrations.upgrade(url)
    token = organiser_token(url)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = multiprocessing.get_context("spawn").Process(target=serve, args=(url, port), daemon=True)
    server.start()
    try:
        wait_until_up(base, server)
        began = time.perf_counter()
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=300) as http:
            pool, headers, n_items = set_up(http, args)
        print(
            f"set-up: {args.topics} topics x {args.runs} runs, depth-{args.depth} pool {pool} of {n_items} items "
            f"({n_items / args.topics:.0f} per topic), {args.assessors} assessors; "
            f"in {time.perf_counter() - began:.1f} s"
        )
        results: list[Timings] = [Timings() for _ in headers]
        deadline = time.monotonic() + args.seconds

        def work(i: int) -> None:
            results[i] = assess(base, headers[i], deadline, args, seed=args.seed * 1000 + i)

        threads = [threading.Thread(target=work, args=(i,)) for i in range(len(headers))]
        began = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - began
    finally:
        server.terminate()
        server.join(timeout=10)

    errors = [e for r in results for e in r.errors]
    judged = sum(len(r.submit) for r in results) - sum(1 for e in errors if e.startswith("submit"))
    settled = began + args.warmup
    next_times = [t for r in results for s, t in r.next if s >= settled]
    submit_times = [t for r in results for s, t in r.submit if s >= settled]
    every_next = [t for r in results for _, t in r.next]
    every_submit = [t for r in results for _, t in r.submit]
    print(
        f"{args.assessors} assessors, think {args.think_ms:.0f} ms, {elapsed:.1f} s on {os.cpu_count()} cores: "
        f"{judged} judgements = {judged / elapsed:.1f} judgements/s, "
        f"{(len(every_next) + len(every_submit)) / elapsed:.1f} requests/s; "
        f"{sum(r.emptied for r in results)} queues emptied; {len(errors)} errors {sorted(set(errors))[:5]}"
    )
    print(f"after the first {args.warmup:g} s:")
    print(describe("next", next_times))
    print(describe("submit", submit_times))
    print("every call, warm-up included:")
    print(describe("next", every_next))
    print(describe("submit", every_submit))
    worst = max(np.percentile(np.asarray(v) * 1000, 99) for v in (next_times, submit_times) if v)
    print(f"p99 target < 50 ms: {'met' if worst < 50 else 'NOT met'} (worst p99 {worst:.1f} ms)")


if __name__ == "__main__":
    main()
