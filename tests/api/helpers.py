"""Plain helpers of the API tests (fixtures are in the conftest.py files): campaigns, runs, pools and judging over
HTTP, waiting for jobs, counting SQL statements. Import them from here, never from another test module."""

from __future__ import annotations

import itertools
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from fastapi.testclient import TestClient
from sqlalchemy import event

from app.cli.demo import DemoSize

_names = itertools.count(1)

Headers = dict[str, str]


def auth(token: str) -> Headers:
    """Headers carrying a bearer token."""
    return {"Authorization": f"Bearer {token}"}


@dataclass
class CampaignHandle:
    """A campaign made for one test, with helpers bound to it."""

    client: TestClient
    organiser: Headers
    id: int
    topics: list[str]

    def team(self, name: str | None = None) -> tuple[int, Headers]:
        """Register a team; returns its id and auth headers."""
        response = self.client.post(
            f"/api/campaigns/{self.id}/teams", json={"name": name or f"team{next(_names)}"}, headers=self.organiser
        )
        assert response.status_code == 201, response.text
        body = response.json()
        return body["id"], auth(body["token"])

    def upload(self, headers: Headers, content: bytes | str, name: str | None = None, **form: object):  # type: ignore[no-untyped-def]
        """POST a run file with metadata; returns the response."""
        data = {"name": name or f"run{next(_names)}", **{k: str(v) for k, v in form.items()}}
        body = content.encode() if isinstance(content, str) else content
        return self.client.post(
            f"/api/campaigns/{self.id}/runs",
            data=data,
            files={"file": ("run.txt", body, "text/plain")},
            headers=headers,
        )

    def set_collection(self, tsv: str):  # type: ignore[no-untyped-def]
        """PUT a master shot reference."""
        return self.client.put(
            f"/api/campaigns/{self.id}/collection",
            files={"file": ("msr.tsv", tsv.encode(), "text/plain")},
            headers=self.organiser,
        )


def new_campaign(
    client: TestClient,
    organiser: Headers,
    n_topics: int = 3,
    task_kind: str = "shots",
    open_: bool = True,
    **settings: object,
) -> CampaignHandle:
    """A new campaign with `n_topics` topics numbered 1..n, open for submissions unless `open_` is false."""
    body = {"name": f"campaign-{next(_names)}", "task_kind": task_kind, **settings}
    response = client.post("/api/campaigns", json=body, headers=organiser)
    assert response.status_code == 201, response.text
    cid = response.json()["id"]
    numbers = [str(i) for i in range(1, n_topics + 1)]
    response = client.post(
        f"/api/campaigns/{cid}/topics",
        json=[{"number": n, "title": f"topic {n}"} for n in numbers],
        headers=organiser,
    )
    assert response.status_code == 201, response.text
    if open_:
        assert client.post(f"/api/campaigns/{cid}/open", headers=organiser).status_code == 200
    return CampaignHandle(client, organiser, cid, numbers)


# ------------------------------------------------------------------------------------------------------ the demo

# The Quick start's demo at a small size, with its model-assisted campaign (a depth-8 model pool): the `small_demo`
# fixture runs it once per test process for tests/api/test_demo_loop.py and tests/cli/test_demo_models.py
SMALL_DEMO = DemoSize(
    n_videos=20, shots_per_video=20, n_topics=3, depth=60, strata="1-10:1.0, 11-60:0.2", n_assessors=2, model_depth=8
)


# --------------------------------------------------------------------------------------- runs, pools, judging

N_VIDEOS, SHOTS_PER_VIDEO = 20, 10


def shots() -> list[str]:
    """The shot ids of setup_campaign's collection."""
    return [f"s{v}_{s}" for v in range(N_VIDEOS) for s in range(SHOTS_PER_VIDEO)]


def setup_campaign(make_campaign, client, organiser, *, n_runs: int = 4, depth: int = 60, seed: int = 0):  # type: ignore[no-untyped-def]
    """A closed campaign with a collection and `n_runs` random runs from two teams; (campaign, run names)."""
    campaign = make_campaign(n_topics=3, max_results=100)
    msr = "".join(f"s{v}_{s}\tv{v}\t{s * 2}\t{s * 2 + 2}\n" for v in range(N_VIDEOS) for s in range(SHOTS_PER_VIDEO))
    assert campaign.set_collection(msr).status_code == 200
    client.patch(
        f"/api/campaigns/{campaign.id}",
        json={"media_url_template": "https://m.example/{video_id}.mp4"},
        headers=organiser,
    )
    teams = [campaign.team(f"team{campaign.id}_{k}") for k in range(2)]
    rng = np.random.default_rng(seed)
    names = []
    for i in range(n_runs):
        lines = []
        for topic in campaign.topics:
            chosen = rng.choice(shots(), size=depth, replace=False)
            lines += [f"{topic} Q0 {s} {r + 1} {depth - r} secret-tag-{i}" for r, s in enumerate(chosen)]
        name = f"secretrun{i}"
        response = campaign.upload(teams[i % 2][1], "\n".join(lines) + "\n", name=name, priority=1 + i % 2)
        assert response.status_code == 201, response.text
        names.append(name)
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).status_code == 200
    return campaign, names


def make_assessor(client: TestClient, organiser: Headers, campaign: CampaignHandle, name: str) -> tuple[int, Headers]:
    """Register an assessor of the campaign; its id and auth headers."""
    body = client.post(f"/api/campaigns/{campaign.id}/assessors", json={"name": name}, headers=organiser).json()
    return body["id"], auth(body["token"])


def assign(client: TestClient, organiser: Headers, campaign: CampaignHandle, pool: dict, name: str, topic: str = "1"):  # type: ignore[no-untyped-def]
    """A new assessor `name` assigned the pool's `topic`; its headers."""
    assessor_id, headers = make_assessor(client, organiser, campaign, name)
    body = {"assignments": [{"topic": topic, "assessor_id": assessor_id}]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code in (200, 201)
    return headers


def judge_all(client: TestClient, headers: Headers, decide: Callable[[dict], str]) -> list[dict]:
    """Judge until the queue is empty; returns the items seen."""
    seen = []
    while True:
        response = client.post("/api/judging/next", headers=headers)
        if response.status_code == 204:
            return seen
        assert response.status_code == 200, response.text
        item = response.json()
        seen.append(item)
        verdict = decide(item)
        judged = client.post(f"/api/judging/items/{item['task_id']}", json={"verdict": verdict}, headers=headers)
        assert judged.status_code == 200, judged.text


def judge_in_process(sessions, headers: Headers, decide: Callable[[dict], str]) -> list[dict]:  # type: ignore[no-untyped-def]
    """What judge_all does, through the judging service in one transaction: for fixtures that need judged pools
    quickly (the judging API itself is tested in test_pools.py and test_judging_boundaries.py)."""
    from app.services import judging
    from app.services.auth import authenticate
    from app.storage.database import session_scope
    from app.storage.models import Verdict

    seen = []
    with session_scope(sessions) as session:
        principal = authenticate(session, headers["Authorization"].removeprefix("Bearer "))
        while (task := judging.next_task(session, principal, lease_seconds=300)) is not None:
            item = {"task_id": task.task_id, "topic": task.topic, "shot_id": task.shot_id}
            seen.append(item)
            judging.judge(session, principal, task.task_id, Verdict(decide(item)))
    return seen


COUNTED_SHOTS = 12


def campaign_with_counted_runs(make_campaign, client: TestClient, organiser: Headers):  # type: ignore[no-untyped-def]
    """A closed campaign of four runs and a depth-10 pool: on topic 1 shot s_0 is in 4 runs, s_1 in exactly 3, s_2
    in 2, the rest in 1; on topic 2 all four runs return s_11 alone; (campaign, pool)."""
    campaign = make_campaign(n_topics=2, max_results=100)
    msr = "".join(f"s_{i}\tv1\t{2 * i}\t{2 * i + 2}\n" for i in range(COUNTED_SHOTS))
    assert campaign.set_collection(msr).status_code == 200
    _, team = campaign.team()
    members = {0: [0, 1, 2, 3], 1: [0, 1, 2, 4], 2: [0, 1, 5, 6], 3: [0, 7, 8, 9]}  # run -> shots
    for run, chosen in members.items():
        lines = "".join(f"1 Q0 s_{s} {r + 1} {10 - r} run{run}\n" for r, s in enumerate(chosen))
        lines += f"2 Q0 s_11 1 1.0 run{run}\n"
        assert campaign.upload(team, lines, name=f"run{run}").status_code == 201
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).status_code == 200
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 10, "seed": 1}, headers=organiser
    ).json()
    return campaign, pool


def depth_pool(make_campaign, client, organiser, *, depth: int = 4, shared: bool = False, names=("ann",)):  # type: ignore[no-untyped-def]
    """A depth pool of setup_campaign's runs with topic 1 assigned to each named assessor; (pool, run names,
    [(assessor id, headers)], topic 1's size)."""
    campaign, run_names = setup_campaign(make_campaign, client, organiser, n_runs=2, depth=60, seed=11)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": depth, "seed": 2}, headers=organiser
    ).json()
    assessors = [make_assessor(client, organiser, campaign, name) for name in names]
    body = {"shared": shared, "assignments": [{"topic": "1", "assessor_id": a} for a, _ in assessors]}
    assert client.post(f"/api/pools/{pool['id']}/assignments", json=body, headers=organiser).status_code == 201
    size = next(t["sampled"] for t in pool["topics"] if t["topic"] == "1")
    return pool, run_names, assessors, size


def step(client: TestClient, headers: Headers, **body: object) -> dict[str, Any]:
    """POST /api/judging/step with the body; the answer, checked to be a 200."""
    response = client.post("/api/judging/step", json=body, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


def build_judged_campaign(make_campaign, client: TestClient, organiser: Headers, sessions):  # type: ignore[no-untyped-def]
    """A closed shots campaign with a stratified pool whose topics are all judged, and a qrels version cut from it;
    (campaign, run names, qrels version, the assessor's headers)."""
    campaign, run_names = setup_campaign(make_campaign, client, organiser, n_runs=4, depth=60, seed=4)
    pool = client.post(
        f"/api/campaigns/{campaign.id}/pools",
        json={"kind": "stratified", "strata": "1-10:1.0, 11-60:0.5", "seed": 9},
        headers=organiser,
    ).json()
    assessor_id, assessor = make_assessor(client, organiser, campaign, "judge")
    client.post(
        f"/api/pools/{pool['id']}/assignments",
        headers=organiser,
        json={"assignments": [{"topic": t, "assessor_id": assessor_id} for t in campaign.topics]},
    )
    judge_in_process(
        sessions, assessor, lambda item: "relevant" if int(item["shot_id"].split("_")[1]) < 3 else "not_relevant"
    )
    qrels = client.post(f"/api/pools/{pool['id']}/qrels", json={"label": "final"}, headers=organiser).json()
    return campaign, run_names, qrels, assessor


# a pool judged part of the way, for the live view: a fixed oracle says which shots are relevant
LIVE_STRATA = "1-10:1.0, 11-60:0.5"
LIVE_DEPTH = 60


def live_relevant(shot: str) -> bool:
    """The live view's fixed oracle: about a third of the shots are relevant."""
    return zlib.crc32(shot.encode()) % 3 == 0


def judge_one(client: TestClient, headers: Headers) -> dict:
    """Take the next item and judge it with the live view's oracle; the item."""
    item = client.post("/api/judging/next", headers=headers).json()
    verdict = "relevant" if live_relevant(item["shot_id"]) else "not_relevant"
    response = client.post(f"/api/judging/items/{item['task_id']}", json={"verdict": verdict}, headers=headers)
    assert response.status_code == 200, response.text
    return item


def live_judged_pool(make_campaign, client: TestClient, organiser: Headers, per_topic: int):  # type: ignore[no-untyped-def]
    """A stratified pool of 4 runs (2 teams) over 3 topics, `per_topic` items of each judged through the API (one
    assessor per topic, taking turns); (campaign, pool, the assessors' headers, the items in the order judged)."""
    campaign, _ = setup_campaign(make_campaign, client, organiser, depth=LIVE_DEPTH, seed=3)
    body = {"kind": "stratified", "strata": LIVE_STRATA, "seed": 7}
    pool = client.post(f"/api/campaigns/{campaign.id}/pools", json=body, headers=organiser).json()
    assessors = []
    for topic in campaign.topics:
        assessor_id, headers = make_assessor(client, organiser, campaign, f"live{topic}")
        assignments = [{"topic": topic, "assessor_id": assessor_id}]
        assigned = client.post(
            f"/api/pools/{pool['id']}/assignments", json={"assignments": assignments}, headers=organiser
        )
        assert assigned.status_code == 201, assigned.text
        assessors.append(headers)
    seen = [judge_one(client, headers) for _ in range(per_topic) for headers in assessors]
    return campaign, pool, assessors, seen


# --------------------------------------------------------------------------------------------- moment pools

# topic 1: good [11,19] ~ poor's [10,20] (IoU 0.8) merge to [10,20]; good [40,46] alone; poor's vidB [0,9] alone
# topic 2: good [0,4] and poor [30,40], both vidB
MOMENT_RUNS = {
    "good": "1 vidA 11 19 0.9\n1 vidA 40 46 0.8\n2 vidB 0 4 0.7\n",
    "poor": "1 vidA 10 20 0.9\n1 vidB 0 9 0.8\n2 vidB 30 40 0.7\n",
}
# ann's marks of every proposal of the moment pool, by (topic, video, proposed start)
ANN = {
    ("1", "vidA", 10.0): [[12.0, 18.0]],
    ("1", "vidA", 40.0): [[40.0, 45.0], [50.0, 52.0]],
    ("1", "vidB", 0.0): [],
    ("2", "vidB", 0.0): [[0.0, 5.0]],
    ("2", "vidB", 30.0): [],
}


# what an assessor sees of a moment proposal: nothing of runs, ranks or counts
# the blind view of a judging task: exactly these keys, nothing of runs, ranks, teams or counts
TASK_VIEW_KEYS = {
    "task_id",
    "topic",
    "topic_title",
    "topic_description",
    "topic_guidelines",
    "topic_examples",
    "shot_id",
    "video_id",
    "start",
    "end",
    "media_url",
    "verdict",
    "grade",
}
MOMENT_BLIND_KEYS = {
    "item_id",
    "topic",
    "topic_title",
    "topic_description",
    "video_id",
    "start",
    "end",
    "media_url",
    "segments",
    "next_media_url",
}


def build_moment_pool(make_campaign, client: TestClient, organiser: Headers):  # type: ignore[no-untyped-def]
    """A closed moment campaign with two runs and a depth-2 moment pool; ann owns topics 1 and 2, bob shares 1;
    (campaign, pool, ann's headers, bob's headers)."""
    campaign = make_campaign(n_topics=2, task_kind="moments", media_url_template="https://media.example/{video_id}.mp4")
    assert campaign.set_collection("s1 vidA 0 60\ns2 vidB 0 60\n").status_code == 200
    _, team = campaign.team()
    for name, text in MOMENT_RUNS.items():
        assert campaign.upload(team, text, name=name).status_code == 201
    assert client.post(f"/api/campaigns/{campaign.id}/close", headers=organiser).status_code == 200
    refused = client.post(f"/api/campaigns/{campaign.id}/pools", json={"kind": "depth", "depth": 2}, headers=organiser)
    assert refused.status_code == 403 and "moment-pools" in refused.json()["detail"]
    response = client.post(
        f"/api/campaigns/{campaign.id}/moment-pools", json={"depth": 2, "iou": 0.5, "seed": 3}, headers=organiser
    )
    assert response.status_code == 201, response.text
    pool = response.json()
    assert (pool["kind"], pool["seed"], pool["params"]["depth"], pool["params"]["iou"]) == ("moments", 3, 2, 0.5)
    assert pool["topics"] == [
        {"topic": "1", "proposed": 3, "judged": 0},
        {"topic": "2", "proposed": 2, "judged": 0},
    ]
    ann_id, ann = make_assessor(client, organiser, campaign, "ann")
    bob_id, bob = make_assessor(client, organiser, campaign, "bob")
    assignments = [{"topic": "1", "assessor_id": ann_id}, {"topic": "2", "assessor_id": ann_id}]
    assignments.append({"topic": "1", "assessor_id": bob_id})
    response = client.post(
        f"/api/pools/{pool['id']}/assignments", json={"assignments": assignments, "shared": True}, headers=organiser
    )
    assert response.status_code in (200, 201), response.text
    return campaign, pool, ann, bob


def mark_all(
    client: TestClient, headers: Headers, marks: dict[tuple[str, str, float], list[list[float]]]
) -> list[dict]:
    """Mark every proposal the queue gives, looked up by (topic, video, proposed start); returns the items seen."""
    seen = []
    while True:
        response = client.post("/api/moment-judging/next", headers=headers)
        if response.status_code == 204:
            return seen
        item = response.json()
        seen.append(item)
        segments = marks[(item["topic"], item["video_id"], item["start"])]
        body = {"segments": [{"start": s, "end": e} for s, e in segments], "seconds_spent": 4.5}
        stored = client.post(f"/api/moment-judging/items/{item['item_id']}", json=body, headers=headers)
        assert stored.status_code == 200, stored.text
        assert stored.json()["segments"] == sorted(segments)


# ----------------------------------------------------------------------------------------------------- jobs


def wait_finished(client: TestClient, headers: Headers, path: str, timeout: float = 60.0) -> dict[str, Any]:
    """Poll a job until it is done, failed or cancelled (a guard against a hang, not a speed check); its last state."""
    deadline = time.monotonic() + timeout
    while True:
        body = client.get(path, headers=headers).json()
        if body["status"] in ("done", "failed", "cancelled") or time.monotonic() > deadline:
            return body
        time.sleep(0.05)


def wait_done(client: TestClient, organiser: Headers, evaluation_id: int) -> dict[str, Any]:
    """Wait for an evaluation job and check it finished well; its last state."""
    body = wait_finished(client, organiser, f"/api/evaluations/{evaluation_id}")
    assert body["status"] == "done", body
    assert body["progress"] == 1.0
    return body


def evaluate_campaign(client: TestClient, organiser: Headers, campaign_id: int, **body: object) -> dict[str, Any]:
    """Start an evaluation of the campaign and wait until it is done; the finished evaluation."""
    started = client.post(f"/api/campaigns/{campaign_id}/evaluations", json=body, headers=organiser)
    assert started.status_code == 202, started.text
    return wait_done(client, organiser, started.json()["id"])


def start_analysis(client: TestClient, organiser: Headers, campaign_id: int, kind: str, **params: object) -> dict:
    """Run an analysis job to its end; return the job."""
    started = client.post(
        f"/api/campaigns/{campaign_id}/analyses", json={"kind": kind, "params": params}, headers=organiser
    )
    assert started.status_code == 202, started.text
    job = wait_finished(client, organiser, f"/api/analyses/{started.json()['id']}")
    assert job["status"] == "done", job
    return job


def run_analysis(client: TestClient, organiser: Headers, campaign_id: int, kind: str, **params: object) -> Any:
    """Run an analysis job to its end; return its result."""
    return start_analysis(client, organiser, campaign_id, kind, **params)["result"]


def assert_svg_figure(client: TestClient, headers: Headers, job_id: int) -> str:
    """The job's figure is an SVG image whose text names what the stored result holds; its text."""
    response = client.get(f"/api/analyses/{job_id}/figure", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("image/svg+xml")
    assert b"<svg" in response.content[:1000]
    return response.text


# ------------------------------------------------------------------------------------------- SQL statements


@contextmanager
def counted(engine) -> Iterator[list[str]]:  # type: ignore[no-untyped-def]
    """Collect the SQL statements the engine sends while the block runs (the first 80 characters of each)."""
    statements: list[str] = []

    def record(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
        statements.append(" ".join(statement.split())[:80])

    event.listen(engine, "before_cursor_execute", record)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", record)


# ------------------------------------------------------------------------------ a campaign scored for three teams

# (team, run, system type, training type, novelty, how many relevant docs it puts first per topic)
TEAM_RUNS = [
    (0, "alpha-one", "F", "A", True, 5),
    (0, "alpha-two", "M", "D", False, 2),
    (1, "beta-one", "F", "D", False, 4),
    (1, "beta-two", "M", "A", True, 3),
    (1, "beta-three", "R", "A", False, 3),
    (2, "gamma-one", "M", "D", False, 4),
    (2, "gamma-two", "R", "D", True, 1),
    (2, "gamma-three", "F", "A", False, 2),
]
TEAM_NAMES = ["team-alpha", "team-beta", "team-gamma"]
TEAM_TOPICS = 6
TEAM_MEASURES = ["AP", "P@5"]


def team_results_campaign(client: TestClient, organiser: Headers, **settings: object) -> tuple[int, list[Headers]]:
    """A closed campaign of TEAM_RUNS by three teams, evaluated on TEAM_MEASURES; its id and each team's headers."""
    body = {"name": f"team-results-{next(_names)}", "task_kind": "shots", **settings}
    created = client.post("/api/campaigns", json=body, headers=organiser)
    assert created.status_code == 201, created.text
    cid = created.json()["id"]
    topics = [str(t) for t in range(1, TEAM_TOPICS + 1)]
    client.post(f"/api/campaigns/{cid}/topics", json=[{"number": t, "title": t} for t in topics], headers=organiser)
    assert client.post(f"/api/campaigns/{cid}/open", headers=organiser).status_code == 200
    teams = []
    for name in TEAM_NAMES:
        made = client.post(f"/api/campaigns/{cid}/teams", json={"name": f"{name}-{cid}"}, headers=organiser).json()
        teams.append(auth(made["token"]))
    rng = np.random.default_rng(cid)
    for team, run, system_type, training_type, novelty, good in TEAM_RUNS:
        lines = []
        for topic in topics:
            relevant = [f"d{i}" for i in rng.permutation(6)]
            other = [f"d{i}" for i in 6 + rng.permutation(14)]
            k = max(0, good - int(rng.integers(0, 2)))  # some variation between topics
            ranked = relevant[:k] + other[:4] + relevant[k:] + other[4:]
            lines += [f"{topic} Q0 {d} {r + 1} {30 - r} {run}" for r, d in enumerate(ranked)]
        data = {"name": run, "system_type": system_type, "training_type": training_type, "novelty": str(novelty)}
        response = client.post(
            f"/api/campaigns/{cid}/runs",
            data=data,
            files={"file": ("run.txt", ("\n".join(lines) + "\n").encode(), "text/plain")},
            headers=teams[team],
        )
        assert response.status_code == 201, response.text
    qrels = "".join(f"{t} 0 d{i} {int(i < 6)}\n" for t in topics for i in range(20))
    client.post(
        f"/api/campaigns/{cid}/qrels", data={"label": "q"}, files={"file": ("q", qrels.encode())}, headers=organiser
    )
    assert client.post(f"/api/campaigns/{cid}/close", headers=organiser).status_code == 200
    evaluate_campaign(client, organiser, cid, measures=TEAM_MEASURES)
    return cid, teams


# ------------------------------------------------------------------------------------------ routes and roles


def routes(candidates):  # type: ignore[no-untyped-def]
    """Every APIRoute, looking inside included routers."""
    from fastapi.routing import APIRoute

    for route in candidates:
        if isinstance(route, APIRoute):
            yield route
        inner = getattr(route, "original_router", None)
        if inner is not None:
            yield from routes(inner.routes)


def roles_of(route) -> list[tuple[str, ...]]:  # type: ignore[no-untyped-def]
    """The role declarations among a route's dependencies (exactly one, for a well-declared endpoint)."""
    from app.api.security import declared_roles

    found = []
    stack = list(route.dependant.dependencies)
    while stack:
        dep = stack.pop()
        if dep.call is not None and declared_roles(dep.call) is not None:
            found.append(declared_roles(dep.call))
        stack.extend(dep.dependencies)
    return found


def throttled_client(settings, sessions, limit: int) -> TestClient:  # type: ignore[no-untyped-def]
    """A client of an app that allows `limit` failed authentications per minute."""
    from app.server import create_app

    low = settings.model_copy(update={"auth_max_failures": limit, "auth_failure_window_seconds": 60.0})
    return TestClient(create_app(low, sessions))


HELD_QUEUE = "trecpool-held-by-test"  # no worker reads it: a job queued there stays queued


def hold(session, job) -> None:  # type: ignore[no-untyped-def]
    """Queue a job where no worker looks (the reaper sees it queued, not lost; a cancel takes it off the queue)."""
    from sqlalchemy import text

    from app.services import jobs

    session.add(job)
    jobs.enqueue(session, job, campaign_concurrency=1)
    session.execute(
        text("UPDATE procrastinate_jobs SET queue_name = :held WHERE id = :id"),
        {"held": HELD_QUEUE, "id": job.queue_job_id},
    )
