"""Leaderboard benchmark: GET /leaderboard from stored per-run means vs today's path over every score.

Fills a campaign of --runs runs x --topics topics x --measures measures (the evaluation job's own writer stores the
scores and the per-run means), starts the service on a free local port (DATABASE_URL, else an embedded PostgreSQL)
and times --repeat leaderboard GETs over HTTP. Today's path is rebuilt in the same process: every number of the
evaluation read through COPY (scores.score_table), the same document built and serialised to JSON (no HTTP, so
it is a lower bound of what that GET took). Both print p50/p99. Then, as a team (its own runs, the campaign's default
`team_results: own`) and, after publishing, as the public (the board built from the snapshot's score table, and
filtered by system type), the same GET over HTTP.

    .venv/bin/python scripts/bench/leaderboard.py [--runs 100] [--topics 50] [--measures 11] [--repeat 50]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import zlib
from pathlib import Path

import httpx
import numpy as np
from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from serving import serve_in_thread  # noqa: E402

from app.config import Settings  # noqa: E402
from app.evaluation.measures.registry import default_measures  # noqa: E402
from app.server import create_app  # noqa: E402
from app.services import evaluations, publication, score_store  # noqa: E402
from app.services.auth import (
    Principal,  # noqa: E402
    create_token,  # noqa: E402
)
from app.services.leaderboards import Filters, build_leaderboard, live_leaderboard  # noqa: E402
from app.services.scores import score_table  # noqa: E402
from app.storage import migrations  # noqa: E402
from app.storage.database import make_engine, make_session_factory, session_scope, start_embedded  # noqa: E402
from app.storage.models import (  # noqa: E402
    Campaign,
    CampaignStatus,
    Evaluation,
    Role,
    Run,
    TaskKind,
    Team,
    Topic,
)


def fill(sessions, n_runs: int, n_topics: int, n_measures: int) -> tuple[int, int, float]:  # type: ignore[no-untyped-def]
    """A campaign with one finished evaluation of random numbers: (campaign id, evaluation id, seconds to store)."""
    rng = np.random.default_rng(7)
    names = default_measures(stratified=True)
    measures = (["xinfAP"] + [m for m in names if m != "xinfAP"])[:n_measures]
    with session_scope(sessions) as session:
        campaign = Campaign(
            name=f"bench-leaderboard-{time.time_ns()}", task_kind=TaskKind.shots, status=CampaignStatus.evaluated
        )
        session.add(campaign)
        session.flush()
        session.add_all(Topic(campaign_id=campaign.id, number=str(1000 + t), title=f"t{t}") for t in range(n_topics))
        teams = [Team(campaign_id=campaign.id, name=f"team{i}") for i in range(10)]
        session.add_all(teams)
        session.flush()
        runs = [
            Run(
                campaign_id=campaign.id,
                team_id=teams[i % len(teams)].id,
                name=f"run{i}",
                format="trec",
                system_type="FMR"[i % 3],
                training_type="ADEF"[i % 4],
                novelty=i % 5 == 0,
                priority=1 + i // len(teams),
                sha256="0" * 64,
                content=zlib.compress(b""),
            )
            for i in range(n_runs)
        ]
        session.add_all(runs)
        evaluation = Evaluation(campaign_id=campaign.id, status="done", progress=1.0, measures={"names": measures})
        session.add(evaluation)
        session.flush()
        table = {}
        for run in runs:
            per_measure = {}
            for measure in measures:
                values = rng.random(n_topics)
                per_measure[measure] = {str(1000 + t): float(v) for t, v in enumerate(values)}
                per_measure[measure]["all"] = float(values.mean())
            table[str(run.id)] = per_measure
        start = time.perf_counter()
        run_ids = [run.id for run in runs]
        score_store.write_table(session, evaluation.id, run_ids, table)  # what the evaluation job writes: the
        evaluations.reduce_evaluation(session, evaluation, run_ids, [run_ids])  # scores, then means and intervals
        return campaign.id, evaluation.id, time.perf_counter() - start


def time_gets(http: httpx.Client, path: str, repeat: int, headers: dict[str, str] | None = None) -> list[float]:
    """Seconds of `repeat` GETs of a path (after one untimed warm-up)."""
    http.get(path, headers=headers).raise_for_status()
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        http.get(path, headers=headers).raise_for_status()
        seconds.append(time.perf_counter() - start)
    return seconds


def percentiles(seconds: list[float]) -> str:
    """p50 and p99 in milliseconds."""
    ms = np.array(seconds) * 1000
    return f"p50 {np.percentile(ms, 50):7.1f} ms   p99 {np.percentile(ms, 99):7.1f} ms"


def main() -> None:
    """Fill, then time both paths and print them side by side."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--measures", type=int, default=11)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL") or start_embedded(Path(tempfile.mkdtemp(prefix="trecpool-bench-")))
    migrations.upgrade(url)
    engine = make_engine(url)
    sessions = make_session_factory(engine)
    campaign_id, evaluation_id, store_seconds = fill(sessions, args.runs, args.topics, args.measures)
    n_scores = args.runs * (args.topics + 1) * args.measures
    with session_scope(sessions) as session:
        token = create_token(session, Role.organiser, label="bench")
        team_id = session.scalar(select(Team.id).where(Team.campaign_id == campaign_id).order_by(Team.id).limit(1))
        team_token = create_token(session, Role.team, label="bench", campaign_id=campaign_id, team_id=team_id)
    base, server = serve_in_thread(create_app(Settings(database_url=url), sessions))
    new, new_inside, old = [], [], []
    with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as http:
        path = f"/api/campaigns/{campaign_id}/leaderboard"
        first = http.get(path)
        first.raise_for_status()
        for _ in range(args.repeat):
            start = time.perf_counter()
            response = http.get(path)
            new.append(time.perf_counter() - start)
            response.raise_for_status()
        team = time_gets(http, path, args.repeat, {"Authorization": f"Bearer {team_token}"})
        with session_scope(sessions) as session:
            publication.publish(session, Principal(Role.organiser, token_id=0), campaign_id)
        public_path = f"/api/public/campaigns/{campaign_id}/leaderboard"
        public = time_gets(http, public_path, args.repeat)
        public_m = time_gets(http, f"{public_path}?system_type=M", args.repeat)
    server.should_exit = True
    organiser = Principal(Role.organiser, token_id=0)
    for _ in range(args.repeat):  # the new path without HTTP, for comparison with today's path in process
        with sessions() as session:
            start = time.perf_counter()
            json.dumps(live_leaderboard(session, organiser, campaign_id))
            new_inside.append(time.perf_counter() - start)
    for _ in range(max(5, args.repeat // 5)):  # today's path is slow: fewer repetitions
        with sessions() as session:
            start = time.perf_counter()
            campaign = session.get(Campaign, campaign_id)
            evaluation = session.get(Evaluation, evaluation_id)
            assert campaign is not None and evaluation is not None
            board = build_leaderboard(campaign, evaluation, score_table(session, evaluation), None, Filters())
            json.dumps(board)
            old.append(time.perf_counter() - start)
    new_rows = {r["run_id"]: r["scores"] for r in first.json()["rows"]}
    old_rows = {r["run_id"]: r["scores"] for r in board["rows"]}
    same = new_rows == old_rows and first.json()["per_topic"] == board["per_topic"]
    print(
        f"{args.runs} runs x {args.topics} topics x {args.measures} measures = {n_scores:,} stored scores "
        f"(scores and means written in {store_seconds:.2f} s)"
    )
    print(f"GET leaderboard over HTTP, from run_means:          {percentiles(new)}   ({len(new)} GETs)")
    print(f"the same in process (use case + json.dumps):        {percentiles(new_inside)}   ({len(new_inside)} builds)")
    print(f"GET as a team (own runs, topic best/median):        {percentiles(team)}   ({len(team)} GETs)")
    print(f"public GET from the published snapshot:             {percentiles(public)}   ({len(public)} GETs)")
    print(f"public GET, system_type=M (ranks, best/median in M): {percentiles(public_m)}   ({len(public_m)} GETs)")
    print(f"today's path in process, every score through COPY:  {percentiles(old)}   ({len(old)} builds)")
    print(f"same rows and per-topic table from both paths: {same}   (target: new p50 < 50 ms)")
    engine.dispose()


if __name__ == "__main__":
    main()
