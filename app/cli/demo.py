"""`trecpool demo`: the whole loop on a synthetic campaign, driven over the REST API like real users would."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sqlalchemy.orm import Session, sessionmaker

from app.cli import demo_models
from app.cli.common import console
from app.cli.serving import DemoSizeName
from app.config import Settings, get_settings
from app.services.auth import create_token
from app.storage.database import session_scope
from app.storage.models import Role

DEMO_NAME = "demo-avs"
MODEL_SUFFIX = "(model-assisted)"  # the model-assisted campaign is named after the demo's
MODEL_DESCRIPTION = (
    "The same synthetic campaign judged by a simulated model; simulated people verify a seeded sample of its verdicts."
)
TOPICS = (
    "a person riding a bicycle on a road", "a dog playing in snow", "a crowd in a stadium",
    "a woman cooking in a kitchen", "a boat on a lake", "a child holding a balloon", "a car driving at night",
    "two people shaking hands", "a man playing a guitar", "a bird flying over water",
)  # fmt: skip
TEAMS = (("alpha", 0.9), ("beta", 0.7), ("gamma", 0.5), ("delta", 0.3))


@dataclass(frozen=True)
class DemoSize:
    """How big the synthetic campaign is."""

    n_videos: int = 100
    shots_per_video: int = 40
    n_topics: int = 10
    depth: int = 300
    strata: str = "1-20:1.0, 21-300:0.1"
    n_assessors: int = 4
    seed: int = 2022
    model_depth: int = 20  # the model-assisted depth pool (0: none), within the first, fully judged stratum


@dataclass
class Truth:
    """The hidden relevant shots the simulated assessors judge against."""

    relevant: dict[str, set[str]] = field(default_factory=dict)


def _collection(size: DemoSize, rng: np.random.Generator) -> tuple[bytes, list[str]]:
    """A master shot reference of consecutive shots per video."""
    lines, shots = ["shot_id\tvideo_id\tstart\tend"], []
    for v in range(1, size.n_videos + 1):
        bounds = np.concatenate([[0.0], np.cumsum(rng.uniform(2.0, 8.0, size.shots_per_video))]).round(2)
        for s in range(size.shots_per_video):
            shot = f"shot{v:05d}_{s + 1}"
            shots.append(shot)
            lines.append(f"{shot}\tv{v:05d}\t{bounds[s]}\t{bounds[s + 1]}")
    return ("\n".join(lines) + "\n").encode(), shots


def _truth(size: DemoSize, shots: list[str], numbers: list[str], rng: np.random.Generator) -> Truth:
    """Relevant shots per topic: runs of neighbouring shots in a few videos, as real events are."""
    truth = Truth()
    per_video = size.shots_per_video
    for number in numbers:
        chosen: set[str] = set()
        for video in rng.choice(size.n_videos, size=int(rng.integers(5, 15)), replace=False):
            start = int(rng.integers(0, per_video - 6))
            chosen.update(shots[video * per_video + start + k] for k in range(int(rng.integers(2, 7))))
        truth.relevant[number] = chosen
    return truth


def _run_file(shots: list[str], truth: Truth, skill: float, tag: str, depth: int, rng: np.random.Generator) -> bytes:
    """A TREC run whose scores favour relevant shots by `skill`."""
    array = np.array(shots)
    lines = []
    for topic, relevant in truth.relevant.items():
        scores = np.isin(array, list(relevant)) * skill * 3.0 + rng.normal(0.0, 1.0, len(array))
        order = np.argsort(-scores)[:depth]
        lines += [f"{topic} Q0 {array[i]} {r + 1} {scores[i]:.6f} {tag}" for r, i in enumerate(order)]
    return ("\n".join(lines) + "\n").encode()


def _judge(truth: Truth, topic: str, shot: str, rng: np.random.Generator) -> str:
    """A simulated assessor's verdict: mostly right, sometimes unsure, sometimes wrong."""
    draw = rng.random()
    if draw < 0.02:
        return "unsure"
    right = shot in truth.relevant[topic]
    wrong = draw < (0.12 if right else 0.05)
    return "relevant" if right != wrong else "not_relevant"


PROGRESS_COLUMNS = (TextColumn("{task.description:<34}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())


class Api:
    """A thin REST client that raises with the server's message on any error."""

    def __init__(self, base_url: str, token: str) -> None:
        self.http = httpx.Client(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=120)

    def call(
        self,
        method: str,
        path: str,
        *,
        json: object = None,
        files: dict[str, tuple[str, bytes]] | None = None,
        data: dict[str, str] | None = None,
    ) -> httpx.Response:
        """Send a request (a JSON body, or uploaded files with form fields); raise RuntimeError unless it succeeded."""
        response = self.http.request(method, path, json=json, files=files, data=data)
        if response.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text[:500]}")
        return response


@dataclass(frozen=True)
class Synthetic:
    """The demo's synthetic data, the same for both of its campaigns: the collection, topics, hidden truth and runs."""

    msr: bytes
    numbers: list[str]
    titles: list[str]
    truth: Truth
    runs: list[SyntheticRun]


@dataclass(frozen=True)
class SyntheticRun:
    """One team's run file with its upload fields."""

    team: str
    name: str
    system_type: str
    priority: int
    skill: float
    data: bytes


def synthesise(size: DemoSize) -> Synthetic:
    """The collection, topics, truth and every team's runs, drawn from the size's seed (the same on every call)."""
    rng = np.random.default_rng(size.seed)
    msr, shots = _collection(size, rng)
    numbers = [str(701 + i) for i in range(size.n_topics)]
    titles = [TOPICS[i % len(TOPICS)] for i in range(size.n_topics)]
    truth = _truth(size, shots, numbers, rng)
    runs = [
        SyntheticRun(name, f"{name}_run{k + 1}", system_type, k + 1, skill,
                     _run_file(shots, truth, skill + 0.1 * k, f"{name}_run{k + 1}", size.depth, rng))
        for name, skill in TEAMS
        for k, system_type in enumerate(("F", "M"))
    ]  # fmt: skip
    return Synthetic(msr, numbers, titles, truth, runs)


def setup_campaign(
    api: Api,
    base_url: str,
    name: str,
    description: str,
    data: Synthetic,
    size: DemoSize,
    progress: Progress,
    run_description: Callable[[SyntheticRun], str] = lambda run: f"synthetic run, skill {run.skill}",
) -> int:
    """Create an open campaign with the collection and topics, let the teams upload their runs over REST and close it;
    the campaign's id."""
    step = progress.add_task("set up campaign, collection, topics", total=3)
    campaign = api.call(
        "POST",
        "/api/campaigns",
        json={
            "name": name,
            "task_kind": "shots",
            "max_results": size.depth,
            "description": description,
            "media_url_template": "https://media.example.org/{video_id}.mp4#t={start},{end}",
        },
    ).json()
    cid = int(campaign["id"])
    api.call("PUT", f"/api/campaigns/{cid}/collection", files={"file": ("msr.tsv", data.msr)})
    progress.advance(step)
    api.call(
        "POST",
        f"/api/campaigns/{cid}/topics",
        json=[{"number": n, "title": t} for n, t in zip(data.numbers, data.titles, strict=True)],
    )
    api.call("POST", f"/api/campaigns/{cid}/open")
    progress.advance(step, 2)

    step = progress.add_task("teams upload runs over REST", total=len(data.runs))
    tokens: dict[str, str] = {}
    for run in data.runs:
        if run.team not in tokens:
            tokens[run.team] = api.call("POST", f"/api/campaigns/{cid}/teams", json={"name": run.team}).json()["token"]
        Api(base_url, tokens[run.team]).call(
            "POST",
            f"/api/campaigns/{cid}/runs",
            files={"file": (f"{run.name}.txt", run.data)},
            data={
                "name": run.name,
                "system_type": run.system_type,
                "training_type": "D",
                "priority": str(run.priority),
                "description": run_description(run),
            },
        )
        progress.advance(step)
    api.call("POST", f"/api/campaigns/{cid}/close")
    return cid


def run_demo(
    base_url: str,
    organiser_token: str,
    size: DemoSize = DemoSize(),
    out: Console | None = None,
    name: str = DEMO_NAME,
) -> dict[str, object]:
    """Run the whole loop against a server as campaign `name`, then the model-assisted campaign over the same data
    (unless the size's `model_depth` is 0); returns the campaigns' ids and the pages to open. Published demo
    campaigns are kept."""
    api = Api(base_url, organiser_token)
    data = synthesise(size)
    model_name = f"{name} {MODEL_SUFFIX}"
    with Progress(*PROGRESS_COLUMNS, console=out or console) as progress:
        cid = _existing(api, name) or _people_campaign(api, base_url, name, data, size, progress)
        pages = _pages(base_url, cid)
        if size.model_depth:
            model_cid = _existing(api, model_name) or demo_models.run_model_assisted(
                api,
                base_url,
                functools.partial(
                    setup_campaign, api, base_url, model_name, MODEL_DESCRIPTION, data, size, progress,
                    run_description=lambda run: demo_models.run_description(run.team, run.skill),
                ),
                seed=size.seed,
                depth=size.model_depth,
                n_assessors=size.n_assessors,
                numbers=data.numbers,
                relevant=data.truth.relevant,
                run_files={run.name: run.data for run in data.runs},
                people=lambda tokens, tick: _judge_all(base_url, tokens, data.truth, size.seed + 2, tick),
                progress=progress,
                people_qrels=max(q["id"] for q in api.call("GET", f"/api/campaigns/{cid}/qrels").json()),
            )  # fmt: skip
            pages.update(demo_models.pages(api, base_url, model_cid))
    return pages


def _existing(api: Api, name: str) -> int | None:
    """The published demo campaign called `name`, None when there is none (RuntimeError for an unfinished one)."""
    existing = [c for c in api.call("GET", "/api/campaigns").json() if c["name"] == name]
    if not existing:
        return None
    if existing[0]["status"] != "published":
        raise RuntimeError(f"an unfinished demo campaign {existing[0]['id']} exists; use a fresh data directory")
    return int(existing[0]["id"])


def _people_campaign(api: Api, base_url: str, name: str, data: Synthetic, size: DemoSize, progress: Progress) -> int:
    """The campaign people judge in full: a stratified pool, quality control, adjudication, published."""
    truth, numbers = data.truth, data.numbers
    description = "Synthetic ad-hoc video search campaign, judged by simulated assessors."
    cid = setup_campaign(api, base_url, name, description, data, size, progress)
    step = progress.add_task("build a stratified pool", total=1)
    pool = api.call(
        "POST", f"/api/campaigns/{cid}/pools", json={"kind": "stratified", "strata": size.strata, "seed": size.seed}
    ).json()
    progress.advance(step)
    total = sum(t["sampled"] for t in pool["topics"])
    assessors = []
    for i in range(size.n_assessors):
        body = api.call("POST", f"/api/campaigns/{cid}/assessors", json={"name": f"assessor{i + 1}"}).json()
        assessors.append((body["id"], body["token"]))
    api.call(
        "POST",
        f"/api/pools/{pool['id']}/assignments",
        json={
            "assignments": [
                {"topic": n, "assessor_id": assessors[i % len(assessors)][0]} for i, n in enumerate(numbers)
            ]
        },
    )

    step = progress.add_task("simulated assessors judge", total=total)
    _judge_all(base_url, [t for _, t in assessors], truth, size.seed, lambda: progress.advance(step))
    qc = api.call("POST", f"/api/pools/{pool['id']}/quality-control").json()
    second = [  # second opinions go to another assessor of the same topic
        {"topic": n, "assessor_id": assessors[(i + 1) % len(assessors)][0]} for i, n in enumerate(numbers)
    ]
    api.call("POST", f"/api/pools/{pool['id']}/assignments", json={"assignments": second, "shared": True})
    step = progress.add_task("second opinions (quality control)", total=qc["queued"])
    _judge_all(base_url, [t for _, t in assessors], truth, size.seed + 1, lambda: progress.advance(step))
    queue = api.call("GET", f"/api/pools/{pool['id']}/adjudication").json()
    step = progress.add_task("organiser adjudicates", total=len(queue))
    for item in queue:
        verdict = "relevant" if item["shot_id"] in truth.relevant[item["topic"]] else "not_relevant"
        api.call(
            "POST",
            f"/api/pools/{pool['id']}/adjudication",
            json={"pool_item_id": item["pool_item_id"], "verdict": verdict},
        )
        progress.advance(step)

    step = progress.add_task("cut qrels, evaluate, publish", total=3)
    api.call("POST", f"/api/pools/{pool['id']}/qrels", json={"label": "final"})
    progress.advance(step)
    evaluation = demo_models.evaluate(api, cid)
    progress.advance(step)
    api.call("POST", f"/api/campaigns/{cid}/publish", json={"evaluation_id": evaluation})
    progress.advance(step)
    return cid


def _judge_all(base_url: str, tokens: list[str], truth: Truth, seed: int, tick: Callable[[], None]) -> None:
    """Every assessor judges its queue until empty, concurrently."""

    def work(index: int) -> None:
        rng = np.random.default_rng([seed, index])
        api = Api(base_url, tokens[index])
        while True:
            response = api.call("POST", "/api/judging/next")
            if response.status_code == 204:
                return
            item = response.json()
            verdict = _judge(truth, item["topic"], item["shot_id"], rng)
            api.call(
                "POST",
                f"/api/judging/items/{item['task_id']}",
                json={"verdict": verdict, "seconds_spent": float(rng.gamma(4.0, 2.0))},
            )
            tick()

    with ThreadPoolExecutor(max_workers=len(tokens)) as pool:
        list(pool.map(work, range(len(tokens))))


def _pages(base_url: str, campaign_id: int) -> dict[str, object]:
    """Where to look once the demo has run."""
    return {
        "campaign_id": campaign_id,
        "leaderboard": f"{base_url}/campaigns/{campaign_id}/leaderboard",
        "report": f"{base_url}/campaigns/{campaign_id}/report",
        "api_docs": f"{base_url}/docs",
    }


def organiser_token(token_file: Path, sessions: sessionmaker[Session]) -> str:
    """The demo organiser's token, created once and kept in the data directory."""
    if token_file.exists():
        return token_file.read_text().strip()
    with session_scope(sessions) as session:
        token = create_token(session, Role.organiser, label="demo organiser")
    token_file.parent.mkdir(parents=True, exist_ok=True)
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    return token


SIZES = {
    "full": DemoSize(),
    "small": DemoSize(
        n_videos=30, shots_per_video=20, n_topics=2, depth=60, strata="1-10:1.0, 11-60:0.1", model_depth=10
    ),
}


def load_demo(base_url: str, settings: Settings, sessions: sessionmaker[Session], size: str = "full") -> None:
    """Run the demo loop against a started server and print where to look and the organiser token."""
    token_file = settings.data_dir / "demo-organiser.token"
    token = organiser_token(token_file, sessions)
    started = time.monotonic()
    pages = run_demo(base_url, token, SIZES[size])
    console.print(f"[bold green]demo ready[/] in {time.monotonic() - started:.0f} s")
    console.print(f"  organiser token: {token} (also in {token_file})")
    for name, url in pages.items():
        console.print(f"  {name}: {url}")


cli = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


@cli.command("demo")
def demo_command(
    host: str | None = typer.Option(None, help="Interface to listen on (default from TRECPOOL_HOST)"),
    port: int | None = typer.Option(None, help="Port (default from TRECPOOL_PORT)"),
    size: DemoSizeName = typer.Option(DemoSizeName.full, "--size", help="full (about two minutes) or small (seconds)"),
    exit_after: bool = typer.Option(False, "--exit", help="Stop once the demo has run instead of serving on"),
) -> None:
    """Run the whole loop on a synthetic campaign, then keep serving its pages."""
    from app.cli.serving import serve_app

    settings = get_settings()
    loop = functools.partial(load_demo, size=size.value)
    serve_app(host or settings.host, port or settings.port, demo=loop, exit_after=exit_after)
