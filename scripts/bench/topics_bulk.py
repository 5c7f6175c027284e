"""Topic list benchmark: seconds to add N topics in one request, to list them, and to refuse N + 1 with a duplicate.

Starts the service in a thread on a free loopback port (DATABASE_URL, else an embedded PostgreSQL), and for each
size of --sizes makes a campaign and, through the API: posts N topics in one JSON request (stored in pages of rows,
since 70,000 topics x 4 columns is far over PostgreSQL's 65,535 bind parameters in one statement), lists them, and
posts them again with one number twice (refused with a 422 naming it, before any insert). Prints seconds and
microseconds per topic of each: constant microseconds per topic as N grows is linear time (quadratic checks took
minutes at 70,000). The tests check the same requests' answers and statement counts at 17,000 topics
(tests/api/test_validation.py), never their time.

    .venv/bin/python scripts/bench/topics_bulk.py [--sizes 10000 35000 70000]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx
from serving import serve_in_thread

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from app.config import Settings  # noqa: E402
from app.server import create_app  # noqa: E402
from app.services.auth import create_token  # noqa: E402
from app.storage import migrations  # noqa: E402
from app.storage.database import make_engine, make_session_factory, session_scope, start_embedded  # noqa: E402
from app.storage.models import Role  # noqa: E402


def timed(request: httpx.Request, client: httpx.Client) -> tuple[httpx.Response, float]:
    """Send a request; its response and the seconds it took."""
    start = time.perf_counter()
    response = client.send(request)
    return response, time.perf_counter() - start


def main() -> None:
    """Time the three requests at each size and print a line per size."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 35_000, 70_000])
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL") or start_embedded(Path(tempfile.mkdtemp(prefix="trecpool-bench-")))
    migrations.upgrade(url)
    sessions = make_session_factory(make_engine(url))
    with session_scope(sessions) as session:
        token = create_token(session, Role.organiser, label="bench")
    base, server = serve_in_thread(create_app(Settings(database_url=url), sessions))
    headers = {"Authorization": f"Bearer {token}"}
    print(f"{'topics':>8} {'add s':>8} {'us/topic':>9} {'list s':>8} {'us/topic':>9} {'dup s':>8} {'us/topic':>9}")
    with httpx.Client(base_url=base, headers=headers, timeout=600) as client:
        for n in args.sizes:
            created = client.post(
                "/api/campaigns", json={"name": f"bench-topics-{n}-{time.time_ns()}", "task_kind": "shots"}
            )
            created.raise_for_status()
            cid = created.json()["id"]
            body = [{"number": str(t), "title": "t"} for t in range(1, n + 1)]
            added, add_s = timed(client.build_request("POST", f"/api/campaigns/{cid}/topics", json=body), client)
            assert added.status_code == 201, added.text[:300]
            listed, list_s = timed(client.build_request("GET", f"/api/campaigns/{cid}/topics"), client)
            assert len(listed.json()) == n
            twice = [*body, {"number": "7", "title": "t"}]
            refused, dup_s = timed(client.build_request("POST", f"/api/campaigns/{cid}/topics", json=twice), client)
            assert refused.status_code == 422, refused.text[:300]
            per = [s / n * 1e6 for s in (add_s, list_s, dup_s)]
            print(f"{n:>8} {add_s:>8.2f} {per[0]:>9.1f} {list_s:>8.2f} {per[1]:>9.1f} {dup_s:>8.2f} {per[2]:>9.1f}")
    server.should_exit = True


if __name__ == "__main__":
    main()
