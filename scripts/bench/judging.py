"""Judging benchmark: N simulated assessors lease and judge pool items over HTTP; latency of `next` and of `submit`.

Starts the service in its own process on a free loopback port (DATABASE_URL, else an embedded PostgreSQL), sets up
through the API a closed campaign of --topics topics with --runs runs and a depth pool of about 200 items per topic,
gives each assessor two topics (each topic shared by two assessors), then runs --assessors threads, each with its own
HTTP client, looping `POST /api/judging/next` + `POST /api/judging/items/{id}` until --seconds pass, --items per
assessor are judged or its queue is empty. Prints p50/p90/p99/max latency of both calls (after --warmup seconds, and
over every call) and the throughput.

--step judges as the judging page does: one `POST /api/judging/step` per verdict (the verdict, the next items with one
leased ahead, the assessor's counts); `next` is then the first step and `submit` every later one.

--order builds the pool with that judging order: with an adaptive one (mm_ns, move_to_front) every verdict also
takes the topic's lock, feeds the topic's policy and moves its plan to the head of the queue.

--think-ms adds a pause between seeing an item and judging it (a real assessor takes seconds); 0 is a stress test
where every assessor has a request in flight all the time.

--with-load judges a second time, as long again, while the service also takes 200,000-line run uploads (one after
another, into a second campaign) and runs evaluation jobs (qrels cut from the pool, one evaluation after another,
run by a worker process); it prints the unloaded and the loaded figures (target: loaded p99 < 100 ms).

    .venv/bin/python scripts/bench/judging.py [--assessors 50] [--seconds 60] [--think-ms 2000] [--with-load] [--step]
        [--order mm_ns]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
from serving import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

SHOTS_PER_VIDEO, N_VIDEOS = 50, 400
VERDICTS = ("relevant", "not_relevant", "not_relevant", "not_relevant", "unsure")


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
    body = {"kind": "depth", "depth": args.depth, "seed": 1, "order": args.order}
    built = http.post(f"/api/campaigns/{campaign}/pools", json=body)
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
        if args.step:
            return _assess_by_steps(http, deadline, args, rng, out)
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


def _assess_by_steps(
    http: httpx.Client, deadline: float, args: argparse.Namespace, rng: random.Random, out: Timings
) -> Timings:
    """One assessor as the judging page works: a first step, then one step per verdict (it returns the next items)."""
    start = time.perf_counter()
    response = http.post("/api/judging/step", json={})
    out.next.append((start, time.perf_counter() - start))
    shown = response.json()["next"] if response.status_code == 200 else []
    for _ in range(args.items):
        if not shown:
            out.emptied = response.status_code == 200
            break
        if time.monotonic() >= deadline:
            break
        if args.think_ms:
            time.sleep(rng.uniform(0.5, 1.5) * args.think_ms / 1000)
        body = {"task_id": shown[0]["task_id"], "verdict": rng.choice(VERDICTS)}
        start = time.perf_counter()
        response = http.post("/api/judging/step", json=body)
        out.submit.append((start, time.perf_counter() - start))
        if response.status_code != 200:
            out.errors.append(f"submit {response.status_code}")
            response = http.post("/api/judging/step", json={})
        shown = response.json()["next"] if response.status_code == 200 else []
    return out


def run_assessors(base: str, headers: list[dict[str, str]], args: argparse.Namespace, phase: int) -> Phase:
    """All assessors judging at once until the deadline; their timings."""
    results: list[Timings] = [Timings() for _ in headers]
    deadline = time.monotonic() + args.seconds

    def work(i: int) -> None:
        results[i] = assess(base, headers[i], deadline, args, seed=args.seed * 1000 + i + 100_000 * phase)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(headers))]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Phase(results, began, time.perf_counter() - began)


@dataclass
class Phase:
    """One judging phase: every assessor's timings, when it began and how long it took."""

    results: list[Timings]
    began: float
    elapsed: float


class Load:
    """Background work on the service: big run uploads into another campaign and evaluation jobs, back to back."""

    def __init__(self, base: str, token: str, judged_campaign: int, pool: int, args: argparse.Namespace) -> None:
        self.base, self.args = base, args
        self.http = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=600)
        self.http.post(f"/api/pools/{pool}/qrels", json={"label": "bench-load"}).raise_for_status()
        self.judged = judged_campaign
        self.campaign, self.team = self._load_campaign()
        self.run = self._big_run()
        self.stop = threading.Event()
        self.uploads: list[float] = []
        self.evaluations: list[tuple[str, float]] = []
        self.threads = [threading.Thread(target=self._upload_loop), threading.Thread(target=self._evaluate_loop)]

    def _load_campaign(self) -> tuple[int, int]:
        """An open campaign of 200 topics that takes many runs."""
        body = {"name": f"bench-load-{time.time_ns()}", "task_kind": "shots", "max_runs_per_team": 1000}
        campaign = self.http.post("/api/campaigns", json=body).json()["id"]
        topics = [{"number": str(t), "title": f"load topic {t}"} for t in range(1, 201)]
        self.http.post(f"/api/campaigns/{campaign}/topics", json=topics).raise_for_status()
        self.http.post(f"/api/campaigns/{campaign}/open").raise_for_status()
        team = self.http.post(f"/api/campaigns/{campaign}/teams", json={"name": "load"}).json()["id"]
        return campaign, team

    def _big_run(self) -> bytes:
        """A 200,000-line run: 200 topics x 1000 results."""
        lines = (f"{t} Q0 shot{t}_{r} {r} {1000 - r}.25 load" for t in range(1, 201) for r in range(1, 1001))
        return ("\n".join(lines) + "\n").encode()

    def _upload_loop(self) -> None:
        """Upload the big run under new names until stopped."""
        while not self.stop.is_set():
            start = time.perf_counter()
            response = self.http.post(
                f"/api/campaigns/{self.campaign}/runs",
                data={"name": f"load{len(self.uploads)}", "team_id": str(self.team)},
                files={"file": ("run.txt", self.run)},
            )
            response.raise_for_status()
            self.uploads.append(time.perf_counter() - start)

    def _evaluate_loop(self) -> None:
        """POST an evaluation of the judged campaign, wait for it to end, and again, until stopped."""
        while not self.stop.is_set():
            start = time.perf_counter()
            response = self.http.post(f"/api/campaigns/{self.judged}/evaluations", json={})
            if response.status_code != 202:
                self.evaluations.append((f"refused {response.status_code}", 0.0))
                self.stop.wait(2)
                continue
            job = response.json()["id"]
            status = "queued"
            while status in ("queued", "running") and not self.stop.wait(0.25):
                status = self.http.get(f"/api/evaluations/{job}").json()["status"]
            self.evaluations.append((status, time.perf_counter() - start))

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join()
        self.http.close()

    def summary(self) -> str:
        """What the load did."""
        done = [t for s, t in self.evaluations if s == "done"]
        statuses = sorted({s for s, _ in self.evaluations})
        upload = "no upload finished"
        if self.uploads:
            upload = f"{len(self.uploads)} uploads of 200,000 lines (mean {np.mean(self.uploads):.1f} s)"
        evaluation = f"{len(done)} evaluations done (mean {np.mean(done):.1f} s)" if done else "no evaluation done"
        return f"load: {upload}; {evaluation}; evaluation outcomes {statuses}"


def report(phase: Phase, args: argparse.Namespace, target_ms: float) -> float:
    """Print a phase's throughput and latency percentiles; return its worst p99 in ms."""
    results, elapsed = phase.results, phase.elapsed
    errors = [e for r in results for e in r.errors]
    judged = sum(len(r.submit) for r in results) - sum(1 for e in errors if e.startswith("submit"))
    settled = phase.began + args.warmup
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
    first, then = ("step {}", "step") if args.step else ("next", "submit")
    print(describe(first, next_times))
    print(describe(then, submit_times))
    print("every call, warm-up included:")
    print(describe(first, every_next))
    print(describe(then, every_submit))
    worst = max(np.percentile(np.asarray(v) * 1000, 99) for v in (next_times, submit_times) if v)
    print(f"p99 target < {target_ms:g} ms: {'met' if worst < target_ms else 'NOT met'} (worst p99 {worst:.1f} ms)")
    return worst


def campaign_of_pool(base: str, token: str, pool: int) -> int:
    """The campaign a pool belongs to."""
    response = httpx.get(f"{base}/api/pools/{pool}", headers={"Authorization": f"Bearer {token}"}, timeout=60)
    response.raise_for_status()
    return int(response.json()["campaign_id"])


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
    parser.add_argument(
        "--think-ms",
        type=float,
        default=2000,
        help="mean pause before each verdict, as a person takes (0: stress test)",
    )
    parser.add_argument("--warmup", type=float, default=5, help="seconds of calls left out of the percentiles")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--with-load", action="store_true", help="judge again under upload and evaluation load")
    parser.add_argument("--step", action="store_true", help="one POST /api/judging/step per verdict, as the page does")
    parser.add_argument(
        "--order",
        default="shuffled",
        help="the pool's judging order (shuffled, move_to_front, mm_ns, ...): an adaptive one moves its policy on at "
        "every verdict",
    )
    args = parser.parse_args()

    from app.storage import migrations
    from app.storage.database import start_embedded

    url = os.environ.get("DATABASE_URL") or start_embedded(Path(tempfile.mkdtemp(prefix="trecpool-bench-")))
    migrations.upgrade(url)
    token = organiser_token(url)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # not daemonic: the server starts its own parse processes
    server = multiprocessing.get_context("spawn").Process(target=serve, args=(url, port))
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
        unloaded = run_assessors(base, headers, args, phase=0)
        loaded = None
        if args.with_load:
            from app.config import Settings
            from app.worker.processes import WorkerProcesses

            workers = WorkerProcesses(url, Settings(database_url=url))  # runs the evaluation jobs, as serve does
            try:
                with Load(base, token, campaign_of_pool(base, token, pool), pool, args) as load:
                    time.sleep(2)  # the first upload and evaluation under way
                    loaded = run_assessors(base, headers, args, phase=1)
            finally:
                workers.stop(timeout=10)
    finally:
        server.terminate()
        server.join(timeout=10)

    print("== unloaded ==")
    report(unloaded, args, target_ms=50)
    if loaded is not None:
        print("== while 200,000-line runs upload and evaluations run ==")
        print(load.summary())
        report(loaded, args, target_ms=100)


if __name__ == "__main__":
    main()
