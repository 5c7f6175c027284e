"""JSON body limit benchmark: /api/health latency while big JSON bodies arrive, beside its latency with none.

Starts the service in its own process on a free loopback port (DATABASE_URL, else an embedded PostgreSQL), makes a
campaign with an assessor through the API, then probes `GET /api/health` every --probe-ms for --seconds in three
phases: idle; while --senders assessors, each in a process of its own, post 65 MB JSON bodies to
`POST /api/judging/step` one after another (the issue's attack: any logged-in user); and while the organiser posts
topic lists of --bulk-mb MB (the largest legitimate JSON: stored once before the phase, then posted again and
again, each decoded and validated by the server, then refused as duplicates). Prints health p50/p99/max of the three
phases side by side (target: p99 under 100 ms), and what the big requests got (status, seconds each).
--decode-on-loop decodes every JSON body on the event loop, as FastAPI does by itself, and --no-freeze leaves the
start-up heap in every garbage collection (`app.server.freeze_heap`), to compare.

    .venv/bin/python scripts/bench/json_limit.py [--seconds 15] [--senders 2] [--bulk-mb 8]
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from judging import organiser_token, wait_until_up
from serving import free_port

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

ATTACK_BYTES = 65_000_000
JSON = {"Content-Type": "application/json"}


def serve(url: str, port: int, on_loop: bool = False, freeze: bool = True) -> None:
    """The service as `trecpool serve` runs it: one uvicorn process (run in a child, apart from the clients).

    `on_loop` decodes every JSON body on the event loop with json.loads, as FastAPI does by itself, and without
    `freeze` the start-up heap stays in every garbage collection (both to compare).
    """
    import uvicorn

    if on_loop:
        from app.api import json_bodies

        json_bodies.OFF_LOOP_BYTES = 1 << 62

    from app.config import Settings
    from app.server import create_app
    from app.storage.database import make_engine, make_session_factory

    sessions = make_session_factory(make_engine(url))
    app = create_app(Settings(database_url=url), sessions)
    if freeze:
        from app.server import freeze_heap

        freeze_heap()  # as `trecpool serve` does
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def attack_body() -> bytes:
    """A 65 MB JSON step body: valid fields, and a padding array of small numbers (the dearest JSON to decode)."""
    head, tail = b'{"later": false, "pad": [', b"0]}"
    count = (ATTACK_BYTES - len(head) - len(tail)) // 2
    return head + b"0," * count + tail


def topics_body(megabytes: float, description: int) -> bytes:
    """A topic list of about `megabytes` MB: topics with a title and a description of `description` characters."""
    one = len(json.dumps({"number": "100000", "title": "t" * 60, "description": "d" * description})) + 2
    count = int(megabytes * 1_000_000 / one)
    topics = [
        {"number": str(100_000 + i), "title": f"topic {i} " + "t" * 50, "description": "d" * description}
        for i in range(count)
    ]
    return json.dumps(topics).encode()


def send_until(
    base: str, path: str, body: bytes, headers: dict[str, str], stop: Any, answers: Any
) -> None:  # pragma: no cover - runs in a child process
    """Post `body` again and again until `stop` is set; put (status, seconds) of each answer on `answers`."""
    with httpx.Client(base_url=base, timeout=300) as http:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                answer = http.post(path, content=body, headers={**headers, "Content-Type": "application/json"})
                status = str(answer.status_code)
            except httpx.TransportError as exc:  # the server may close the connection after a 413
                status = type(exc).__name__
            answers.put((status, time.perf_counter() - started))


class Senders:
    """Processes (apart from the probing one, so as not to share its GIL) posting the same big body again and again
    until stopped; they report each answer."""

    def __init__(self, base: str, path: str, body: bytes, headers: dict[str, str], processes: int) -> None:
        context = multiprocessing.get_context("spawn")
        self.stop, self.queue = context.Event(), context.Queue()
        self.answers: list[tuple[str, float]] = []
        self.processes = [
            context.Process(target=send_until, args=(base, path, body, headers, self.stop, self.queue), daemon=True)
            for _ in range(processes)
        ]

    def __enter__(self) -> Senders:
        for process in self.processes:
            process.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for process in self.processes:
            process.join(timeout=300)
        while not self.queue.empty():
            self.answers.append(self.queue.get())

    def summary(self) -> str:
        """How many requests, what they got, how long each took."""
        if not self.answers:
            return "no request finished"
        statuses = collections.Counter(status for status, _ in self.answers)
        seconds = np.asarray([took for _, took in self.answers])
        got = ", ".join(f"{status} x{n}" for status, n in sorted(statuses.items()))
        return f"{len(self.answers)} requests ({got}), {np.median(seconds):.2f} s median, {seconds.max():.2f} s max"


def probe(base: str, seconds: float, every: float) -> list[float]:
    """Seconds each GET /api/health took, one every `every` seconds for `seconds` (over one warm connection)."""
    took: list[float] = []
    with httpx.Client(base_url=base, timeout=60) as http:
        http.get("/api/health")
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            started = time.perf_counter()
            assert http.get("/api/health").status_code == 200
            took.append(time.perf_counter() - started)
            time.sleep(every)
    return took


def percentiles(values: list[float]) -> tuple[float, float, float]:
    """p50, p99 and max in milliseconds."""
    ms = np.asarray(values) * 1000
    p50, p99 = np.percentile(ms, [50, 99])
    return float(p50), float(p99), float(ms.max())


def main() -> None:
    """Set up, probe the three phases, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=15, help="length of each phase")
    parser.add_argument("--probe-ms", type=float, default=20, help="pause between two health probes")
    parser.add_argument("--senders", type=int, default=2, help="assessors posting 65 MB bodies at once")
    parser.add_argument("--bulk-mb", type=float, default=8, help="size of the organiser's topic lists")
    parser.add_argument("--description", type=int, default=100, help="characters of each topic's description")
    parser.add_argument("--no-freeze", action="store_true", help="leave the start-up heap in every collection")
    parser.add_argument(
        "--decode-on-loop", action="store_true", help="decode every JSON body on the event loop (FastAPI's own way)"
    )
    args = parser.parse_args()

    from app.storage import migrations
    from app.storage.database import start_embedded

    url = os.environ.get("DATABASE_URL") or start_embedded(Path(tempfile.mkdtemp(prefix="trecpool-bench-")))
    migrations.upgrade(url)
    organiser = {"Authorization": f"Bearer {organiser_token(url)}"}
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = multiprocessing.get_context("spawn").Process(
        target=serve, args=(url, port, args.decode_on_loop, not args.no_freeze)
    )
    server.start()
    try:
        wait_until_up(base, server)
        with httpx.Client(base_url=base, headers=organiser, timeout=60) as http:
            campaign = http.post("/api/campaigns", json={"name": f"bench-json-{time.time_ns()}", "task_kind": "shots"})
            campaign.raise_for_status()
            cid = campaign.json()["id"]
            assessor = http.post(f"/api/campaigns/{cid}/assessors", json={"name": "a"})
            assessor.raise_for_status()
        assessor_headers = {"Authorization": f"Bearer {assessor.json()['token']}"}
        every = args.probe_ms / 1000
        idle = probe(base, args.seconds, every)
        with Senders(base, "/api/judging/step", attack_body(), assessor_headers, args.senders) as attack:
            time.sleep(1)
            attacked = probe(base, args.seconds, every)
        bulk_body = topics_body(args.bulk_mb, args.description)
        with httpx.Client(base_url=base, headers=organiser, timeout=300) as http:  # stored before the phase
            stored = http.post(f"/api/campaigns/{cid}/topics", content=bulk_body, headers=JSON)
            stored.raise_for_status()
        with Senders(base, f"/api/campaigns/{cid}/topics", bulk_body, organiser, 1) as bulk:
            time.sleep(1)
            bulked = probe(base, args.seconds, every)
    finally:
        server.terminate()
        server.join(timeout=10)

    bulk_name = f"{len(bulk_body) / 1e6:.1f} MB topic lists"
    print(f"{'GET /api/health':<18}{'idle':>22}{'65 MB step bodies':>24}{bulk_name:>26}")
    print(f"{'probes':<18}{len(idle):>22}{len(attacked):>24}{len(bulked):>26}")
    for name, index in (("p50 ms", 0), ("p99 ms", 1), ("max ms", 2)):
        row = [percentiles(values)[index] for values in (idle, attacked, bulked)]
        print(f"{name:<18}{row[0]:>22.1f}{row[1]:>24.1f}{row[2]:>26.1f}")
    print(f"65 MB step bodies ({args.senders} assessors): {attack.summary()}")
    print(f"topic lists (the organiser; {len(json.loads(bulk_body))} topics): {bulk.summary()}")


if __name__ == "__main__":
    main()
