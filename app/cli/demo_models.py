"""The demo's model-assisted campaign (issue 25): a simulated model judges the whole pool through the batch API, the
demo's simulated people verify a seeded fifth of its verdicts through the judging API, and the organiser gets human,
model and combined qrels versions, a board of prediction-powered estimates and the agreement report.

The model is `app.judges.simulated.simulate` over the demo's hidden truth, run by the judging client
(`app.judges.client.run`) as any judge function would be, with a configuration hash from `app.judges.loading`. It errs
at random and, as model judges built on a system's own model family do, favours one team's runs: it calls the
non-relevant shots their runs rank high relevant at an extra rate, and that team says in its runs' descriptions that
it is built on the judge's family, so the agreement report's self-preference warning has something to say.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, Protocol

import httpx
import numpy as np
from rich.progress import Progress

from app.judges import client as judging
from app.judges.loading import Judge, config_hash
from app.judges.simulated import simulate

MODEL = "simulated"  # the provenance's model name: its family, "simulated", is what the self-preference check seeks
JUDGE_SPEC = "app.cli.demo_models:judge"
FAVOURED_TEAM = "delta"  # the weakest team: the model's bias lifts it, and the combined estimates put it back
HUMAN_SHARE = 0.2
ERROR_RATE = 0.15
NOISE = 0.4
BIAS = 0.5


class Caller(Protocol):
    """The demo's organiser client (`app.cli.demo.Api`)."""

    def call(
        self,
        method: str,
        path: str,
        *,
        json: object = None,
        files: dict[str, tuple[str, bytes]] | None = None,
        data: dict[str, str] | None = None,
    ) -> httpx.Response:
        """Send a request; raise RuntimeError unless it succeeded."""
        ...


PeopleJudge = Callable[[list[str], Callable[[], None]], None]


def run_description(team: str, skill: float) -> str:
    """A run's description in the model-assisted campaign: the favoured team names the judge's model family."""
    if team == FAVOURED_TEAM:
        return f"synthetic run, skill {skill}, reranked by a {MODEL} model (the judge's own family)"
    return f"synthetic run, skill {skill}"


def top_items(run_files: Sequence[bytes], depth: int) -> frozenset[tuple[str, str]]:
    """The (topic, shot) pairs the runs rank in their top `depth` (the demo's runs are written in rank order)."""
    found = set()
    for data in run_files:
        for line in data.decode().splitlines():
            topic, _, shot, rank, *_ = line.split()
            if int(rank) <= depth:
                found.add((topic, shot))
    return frozenset(found)


def judge(
    items: list[dict[str, Any]],
    *,
    relevant: Mapping[str, AbstractSet[str]],
    run_files: Mapping[str, bytes],
    error_rate: str,
    noise: str,
    seed: str,
    bias: str,
    favour_runs: str,
    favour_depth: str,
    max_grade: str = "1",
) -> list[dict[str, Any]]:
    """The simulated model's verdicts on the demo's truth (`relevant` and `run_files` are bound by the demo; the rest
    are the judge's options, as strings, which the configuration hash covers; `max_grade` is the campaign's scale,
    which the client gives)."""
    favoured = top_items([run_files[name] for name in favour_runs.split(",")], int(favour_depth))
    keys = [(str(item["topic"]), str(item["shot_id"])) for item in items]
    truth = np.array([int(shot in relevant.get(topic, ())) for topic, shot in keys], dtype=np.int64)
    grade, probability = simulate(
        truth,
        keys,
        error_rate=float(error_rate),
        noise=float(noise),
        seed=int(seed),
        max_grade=int(max_grade),
        favour=favoured,
        bias=float(bias),
    )
    return [
        {"grade": int(g), "probability": float(p)} for g, p in zip(grade.tolist(), probability.tolist(), strict=True)
    ]


def judge_options(seed: int, depth: int, run_files: Mapping[str, bytes]) -> dict[str, str]:
    """The model judge's options: its error rate, confidence noise, seed and its bias towards the favoured team."""
    favoured = sorted(name for name in run_files if name.startswith(f"{FAVOURED_TEAM}_"))
    return {
        "error_rate": str(ERROR_RATE),
        "noise": str(NOISE),
        "seed": str(seed),
        "bias": str(BIAS),
        "favour_runs": ",".join(favoured),
        "favour_depth": str(depth),
    }


def evaluate(api: Caller, campaign_id: int, qrels_version_id: int | None = None) -> int:
    """Start an evaluation (against a qrels version, else the newest) and wait for it; its id."""
    body = {} if qrels_version_id is None else {"qrels_version_id": qrels_version_id}
    evaluation = api.call("POST", f"/api/campaigns/{campaign_id}/evaluations", json=body).json()
    while evaluation["status"] not in ("done", "failed"):
        time.sleep(0.2)
        evaluation = api.call("GET", f"/api/evaluations/{evaluation['id']}").json()
    if evaluation["status"] == "failed":
        raise RuntimeError(f"evaluation failed: {evaluation['error']}")
    return int(evaluation["id"])


def run_model_assisted(
    api: Caller,
    base_url: str,
    setup: Callable[[], int],
    *,
    seed: int,
    depth: int,
    n_assessors: int,
    numbers: Sequence[str],
    relevant: Mapping[str, AbstractSet[str]],
    run_files: Mapping[str, bytes],
    people: PeopleJudge,
    progress: Progress,
    people_qrels: int | None = None,
) -> int:
    """Build the model-assisted campaign (`setup` makes it, with its runs, closed) and publish its combined board;
    the campaign's id. `people_qrels`: a qrels version of the people's campaign over the same data, whose verdicts
    on this pool's items are imported as a fully human version for the agreement report."""
    cid = setup()
    options = judge_options(seed, depth, run_files)
    digest = config_hash(JUDGE_SPEC, options)
    provenance = {"model": MODEL, "version": "demo", "config_hash": digest, "parameters": options}
    model = api.call(
        "POST",
        f"/api/campaigns/{cid}/assessors",
        json={"name": "simulated-judge", "kind": "model", "provenance": provenance},
    ).json()
    step = progress.add_task("build a model-assisted depth pool", total=1)
    verification = {"human_share": HUMAN_SHARE, "stratify": "confidence", "model_assessor_id": model["id"]}
    pool = api.call(
        "POST",
        f"/api/campaigns/{cid}/pools",
        json={"kind": "depth", "depth": depth, "seed": seed, "verification": verification},
    ).json()
    pool_id = int(pool["id"])
    people_ids, tokens = [], []
    for i in range(n_assessors):
        body = api.call("POST", f"/api/campaigns/{cid}/assessors", json={"name": f"verifier{i + 1}"}).json()
        people_ids.append(body["id"])
        tokens.append(body["token"])
    assign = [{"topic": n, "assessor_id": model["id"]} for n in numbers]
    api.call("POST", f"/api/pools/{pool_id}/assignments", json={"assignments": assign})
    assign = [{"topic": n, "assessor_id": people_ids[i % len(people_ids)]} for i, n in enumerate(numbers)]
    api.call("POST", f"/api/pools/{pool_id}/assignments", json={"assignments": assign, "shared": True})
    progress.advance(step)

    step = progress.add_task("the model judges (batch API)", total=sum(t["sampled"] for t in pool["topics"]))
    bound: Judge = functools.partial(judge, relevant=relevant, run_files=run_files)

    def ticking(items: list[dict[str, Any]], **given: str) -> list[dict[str, Any]]:
        """The judge, advancing the progress bar by its batch."""
        verdicts = bound(items, **given)
        progress.advance(step, len(items))
        return verdicts

    with judging.BatchClient(base_url, model["token"], seed=seed) as batch_api:
        judging.run(batch_api, ticking, options, digest, batch=50, workers=2)

    drawn = sum(t["drawn"] or 0 for t in api.call("GET", f"/api/pools/{pool_id}/verification").json())
    step = progress.add_task(f"people verify a {HUMAN_SHARE:.0%} sample", total=drawn)
    people(tokens, lambda: progress.advance(step))

    step = progress.add_task("cut human/model/combined, evaluate", total=5)
    versions = {}
    for judges, label in (("human", "people (verification sample)"), ("model", "model only"), ("combined", "combined")):
        versions[judges] = api.call(
            "POST", f"/api/pools/{pool_id}/qrels", json={"label": label, "judges": judges}
        ).json()
        progress.advance(step)
    if people_qrels is not None:
        _import_people_verdicts(api, cid, versions["model"]["id"], people_qrels)
    evaluate(api, cid, versions["human"]["id"])
    progress.advance(step)
    combined = evaluate(api, cid, versions["combined"]["id"])
    api.call("POST", f"/api/campaigns/{cid}/publish", json={"evaluation_id": combined})
    progress.advance(step)
    return cid


def _import_people_verdicts(api: Caller, campaign_id: int, model_version: int, people_qrels: int) -> None:
    """Import, as a human version, the people's verdicts (from the other campaign's version `people_qrels`) on the
    items of the model's version: the agreement report compares the model with people who judged every item, not only
    the verification sample."""
    pooled = {_key(line) for line in _download(api, model_version).splitlines() if line.strip()}
    kept = [line for line in _download(api, people_qrels).splitlines() if line.strip() and _key(line) in pooled]
    api.call(
        "POST",
        f"/api/campaigns/{campaign_id}/qrels",
        files={"file": ("people.qrels", ("\n".join(kept) + "\n").encode())},
        data={"label": "people, every pooled item (from the people's campaign)"},
    )


def _key(line: str) -> tuple[str, str]:
    """A TREC qrels line's (topic, docno)."""
    topic, _, docno, *_ = line.split()
    return topic, docno


def _download(api: Caller, version: int) -> str:
    """A qrels version as TREC qrels text (topic, iteration, docno, grade)."""
    return api.call("GET", f"/api/qrels/{version}/download").text


def pages(api: Caller, base_url: str, campaign_id: int) -> dict[str, object]:
    """Where to look at the model-assisted campaign."""
    pool_id = api.call("GET", f"/api/campaigns/{campaign_id}/qrels").json()[0]["pool_id"]
    return {
        "model_assisted_campaign_id": campaign_id,
        "model_assisted_leaderboard": f"{base_url}/campaigns/{campaign_id}/leaderboard",
        "model_assisted_report": f"{base_url}/campaigns/{campaign_id}/report",
        "agreement": f"{base_url}/organise/campaigns/{campaign_id}/agreement",
        "verification": f"{base_url}/api/pools/{pool_id}/verification",
    }
