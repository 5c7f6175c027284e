"""Ingest benchmark: runs of 50 topics x 1000 shots uploaded through the REST API vs a plain ORM insert.

Starts the service on a free local port (DATABASE_URL, else an embedded PostgreSQL) with its upload parse processes
started, as `trecpool serve` starts them; uploads one run untimed (a server's first upload with a body also builds its
route table), then --runs runs over HTTP, and prints lines/s end to end (parse, validate, store, commit). Then it
inserts one run's rows into a scratch entry table (the shape of the run_entries table that 0002 dropped) with
SQLAlchemy ORM objects and prints lines/s and the ratio; what keeping such a table would add to each upload: COPY of
the run's rows without and with a foreign key to runs. Last, in this process, the upload's parse + validate +
compress step (run_files.inspect_upload) on the same files next to the floor: reading them with the fastest parser at
hand (pyarrow's CSV reader, else pandas' C reader, else bytes.split), and the end-to-end rate as a share of it. The
load average at the start is printed: compare runs on a quiet machine.

With --collection [SHOTS] the campaign gets a master shot reference of SHOTS shots (1,000,000 if not given), every
shot the runs name, and each upload is also checked against it: the bench then prints the memory the server keeps
for the collection's ids, and times the in-process step with that check too.

    .venv/bin/python scripts/bench/ingest.py [--runs 10] [--collection [SHOTS]]
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import numpy as np
from sqlalchemy import Double, Integer, Text, text
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from serving import serve_in_thread  # noqa: E402

from app.config import Settings  # noqa: E402
from app.server import create_app  # noqa: E402
from app.services import offload  # noqa: E402
from app.services.auth import create_token  # noqa: E402
from app.services.collection import known_ids  # noqa: E402
from app.services.run_files import KnownIds, UploadReport, inspect_upload  # noqa: E402
from app.storage import migrations  # noqa: E402
from app.storage.bulk import copy_rows  # noqa: E402
from app.storage.database import make_engine, make_session_factory, session_scope, start_embedded  # noqa: E402
from app.storage.models import Role  # noqa: E402

N_TOPICS, DEPTH = 50, 1000


class _Scratch(DeclarativeBase):
    """Mapped classes of scratch tables that exist only inside a benchmark's rolled-back transaction."""


class ScratchEntry(_Scratch):
    """One ranked shot of a run, as run_entries held it before 0002 (no foreign key)."""

    __tablename__ = "bench_run_entries"

    run_id: Mapped[int] = mapped_column(Integer, primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    topic_id: Mapped[int] = mapped_column(Integer)
    docno: Mapped[str] = mapped_column(Text)
    rank: Mapped[int] = mapped_column(Integer)
    score: Mapped[float] = mapped_column(Double)


def copy_seconds(session: Session, rows: list[tuple], run_id: int, topic_ids: dict[str, int], *, fk: bool) -> float:
    """Seconds to COPY one run's rows into a fresh scratch entry table, with or without a foreign key to runs."""
    session.execute(text("DROP TABLE IF EXISTS bench_copy_entries"))
    references = " REFERENCES runs (id) ON DELETE CASCADE" if fk else ""
    session.execute(
        text(
            f"CREATE TABLE bench_copy_entries (run_id integer NOT NULL{references}, seq integer NOT NULL, "
            "topic_id integer NOT NULL, docno text NOT NULL, rank integer NOT NULL, score double precision NOT NULL, "
            "PRIMARY KEY (run_id, seq))"
        )
    )
    columns: list[np.ndarray | list[str]] = [
        np.full(len(rows), run_id),
        np.arange(len(rows)),
        np.array([topic_ids[str(r[1])] for r in rows]),
        [r[2] for r in rows],
        np.array([r[3] for r in rows]),
        np.array([r[4] for r in rows], dtype=np.float64),
    ]
    start = time.perf_counter()
    copy_rows(session, "bench_copy_entries", ("run_id", "seq", "topic_id", "docno", "rank", "score"), columns)
    return time.perf_counter() - start


def shot_name(number: int) -> str:
    """The shot id of a shot number (200 shots a video)."""
    return f"shot{number // 200}_{number % 200}"


def make_run(rng: np.random.Generator, tag: str, universe: int = 1_000_000) -> bytes:
    """A TREC run of N_TOPICS x DEPTH lines, naming shots 0 to `universe` - 1."""
    lines = []
    for topic in range(1, N_TOPICS + 1):
        shots = rng.choice(universe, size=DEPTH, replace=False)
        scores = np.sort(rng.random(DEPTH))[::-1]
        lines += [
            f"{topic} Q0 {shot_name(s)} {r + 1} {v:.6f} {tag}"
            for r, (s, v) in enumerate(zip(shots.tolist(), scores.tolist(), strict=True))
        ]
    return ("\n".join(lines) + "\n").encode()


def floor_reader() -> tuple[str, Callable[[bytes], object]]:
    """The fastest reader of a space-separated run file this environment has, and its name."""
    try:
        from pyarrow import csv  # type: ignore[import-not-found]

        options = csv.ParseOptions(delimiter=" ")
        names = csv.ReadOptions(column_names=["topic", "q0", "doc", "rank", "score", "tag"], use_threads=False)
        return "pyarrow.csv", lambda data: csv.read_csv(io.BytesIO(data), read_options=names, parse_options=options)
    except ImportError:
        pass
    try:
        import pandas  # type: ignore[import-untyped]

        return "pandas C reader", lambda data: pandas.read_csv(io.BytesIO(data), sep=" ", header=None, engine="c")
    except ImportError:
        return "bytes.split", lambda data: data.split()


def parse_rates(files: list[bytes], known: KnownIds | None) -> dict[str, float]:
    """Lines/s of the upload's parse + validate + compress step (and with the check against the collection's `known`
    ids, as the server keeps them) and of the floor, in this process, best of 3."""
    topics = frozenset(str(t) for t in range(1, N_TOPICS + 1))
    name, floor = floor_reader()
    n_lines = len(files) * N_TOPICS * DEPTH

    def inspect(data: bytes, with_ids: bool = False) -> UploadReport:
        return inspect_upload(data, "trec", max_errors=50, topic_numbers=topics, max_results=DEPTH, with_ids=with_ids)

    def checked(data: bytes) -> object:
        assert known is not None
        report = inspect(data, with_ids=True)
        if known.absent(report.ids, report.id_hashes).any():
            raise AssertionError("a run names a shot the collection lacks")
        return report

    steps: dict[str, Callable[[bytes], object]] = {"inspect_upload (parse + validate + compress)": inspect}
    if known is not None:
        steps["... + distinct ids + collection check"] = checked
    steps[f"floor: {name}"] = floor
    rates = {}
    for label, step in steps.items():
        seconds = min(_timed(lambda: [step(data) for data in files]) for _ in range(3))  # noqa: B023
        rates[label] = n_lines / seconds
        print(f"{label:<50} {rates[label]:>12,.0f} lines/s  ({seconds:.2f} s CPU)")
    return rates


def _timed(call: Callable[[], object]) -> float:
    """CPU seconds of a call."""
    start = time.process_time()
    call()
    return time.process_time() - start


def main() -> None:
    """Run both timings and print the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument(
        "--collection",
        type=int,
        nargs="?",
        const=1_000_000,
        default=0,
        metavar="SHOTS",
        help="check the uploads against a collection of SHOTS shots (1,000,000 if not given)",
    )
    args = parser.parse_args()
    universe = args.collection or 1_000_000
    load = os.getloadavg()
    url = os.environ.get("DATABASE_URL") or start_embedded(Path(tempfile.mkdtemp(prefix="trecpool-bench-")))
    migrations.upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    with session_scope(sessions) as session:
        token = create_token(session, Role.organiser, label="bench")
    settings = Settings(database_url=url)
    base, server = serve_in_thread(create_app(settings, sessions))
    offload.start(settings.parse_processes, settings.worker_niceness, wait=True)
    headers = {"Authorization": f"Bearer {token}"}
    rng = np.random.default_rng(42)
    files = [make_run(rng, f"bench{i}", universe) for i in range(args.runs)]
    n_lines = args.runs * N_TOPICS * DEPTH
    with httpx.Client(base_url=base, headers=headers, timeout=120) as http:
        campaign = http.post(
            "/api/campaigns",
            json={"name": f"bench-{time.time_ns()}", "task_kind": "shots", "max_runs_per_team": args.runs + 2},
        ).json()["id"]
        http.post(
            f"/api/campaigns/{campaign}/topics",
            json=[{"number": str(t), "title": f"t{t}"} for t in range(1, N_TOPICS + 1)],
        ).raise_for_status()
        if args.collection:
            shots = "".join(f"{shot_name(s)}\tv{s // 200}\t0\t1\n" for s in range(args.collection))
            http.put(f"/api/campaigns/{campaign}/collection", files={"file": shots.encode()}).raise_for_status()
        http.post(f"/api/campaigns/{campaign}/open").raise_for_status()
        team = http.post(f"/api/campaigns/{campaign}/teams", json={"name": "bench"}).json()["id"]

        def upload(name: str, data: bytes) -> float:
            start = time.perf_counter()
            response = http.post(
                f"/api/campaigns/{campaign}/runs", data={"name": name, "team_id": str(team)}, files={"file": data}
            )
            response.raise_for_status()
            return time.perf_counter() - start

        first = upload("warm-up", make_run(rng, "warmup", universe))
        seconds = [upload(f"run{i}", data) for i, data in enumerate(files)]
        rest_seconds = sum(seconds)
        run_ids = [r["id"] for r in http.get(f"/api/campaigns/{campaign}/runs").json() if r["name"] != "warm-up"]
    server.should_exit = True

    rows = []
    for data in files[:1]:  # the ORM path is timed on one run's rows and scaled: it is the slow one
        for seq, line in enumerate(data.decode().splitlines()):
            topic, _, doc, rank, score, _ = line.split()
            rows.append((seq, int(topic), doc, int(rank), float(score)))
    with sessions() as session:
        query = text("SELECT number, id FROM topics WHERE campaign_id = :c")
        topic_ids = {number: tid for number, tid in session.execute(query, {"c": campaign})}
        _Scratch.metadata.create_all(session.connection())
        start = time.perf_counter()
        session.add_all(
            ScratchEntry(run_id=run_ids[0], seq=seq, topic_id=topic_ids[str(t)], docno=d, rank=r, score=s)
            for seq, t, d, r, s in rows
        )
        session.flush()
        orm_seconds = time.perf_counter() - start
        copy_plain = copy_seconds(session, rows, run_ids[0], topic_ids, fk=False)
        copy_fk = copy_seconds(session, rows, run_ids[0], topic_ids, fk=True)
        session.rollback()
        known = known_ids(session, campaign, "shot") if args.collection else None
    rest_rate = n_lines / rest_seconds
    orm_rate = len(rows) / orm_seconds
    print(f"load average at the start: {load[0]:.2f} (1 min), {load[1]:.2f} (5 min); {os.cpu_count()} CPUs")
    if known is not None:
        print(
            f"checked against a collection of {args.collection:,} shots, whose ids the server keeps in "
            f"{known.nbytes / 1e6:.1f} MB ({known.nbytes / args.collection:.1f} bytes per shot)"
        )
    else:
        print("no collection (--collection [SHOTS])")
    print(f"first upload after start (untimed): {first:.2f} s; then per upload: median {np.median(seconds):.3f} s")
    print(
        f"REST upload (parse + validate + store, end to end): {n_lines:,} lines in {rest_seconds:.2f} s "
        f"= {rest_rate:,.0f} lines/s"
    )
    print(
        f"plain ORM insert of the same rows:                 {len(rows):,} lines in {orm_seconds:.2f} s "
        f"= {orm_rate:,.0f} lines/s"
    )
    print(f"ratio REST / ORM: {rest_rate / orm_rate:.1f}x   (target: REST >= 300,000 lines/s)")
    per_run = rest_seconds / args.runs
    print(
        f"keeping an entry table would add per run of {len(rows):,} lines: COPY {copy_plain:.2f} s without a foreign "
        f"key, {copy_fk:.2f} s with one (uploads take {per_run:.2f} s a run without either)"
    )
    engine.dispose()
    rates = parse_rates(files, known)
    floor_label = next(label for label in rates if label.startswith("floor"))
    print(
        f"REST upload end to end {rest_rate:,.0f} lines/s = {rest_rate / rates[floor_label]:.2f}x the {floor_label} "
        f"({rates[floor_label]:,.0f} lines/s, reading alone)"
    )


if __name__ == "__main__":
    main()
