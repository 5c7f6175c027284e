"""A small synthetic AVS campaign so a new user sees data at once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.topics_file import TopicDef
from app.services import campaigns, collection, runs, teams, topics
from app.services.auth import authenticate, create_token
from app.storage.models import Campaign, CampaignStatus, Role, TaskKind

DEMO_NAME = "demo-avs"
DEMO_TOPICS = (
    "a person riding a bicycle on a road",
    "a dog playing in snow",
    "a crowd in a stadium",
    "a woman cooking in a kitchen",
    "a boat on a lake",
    "a child holding a balloon",
    "a car driving at night",
    "two people shaking hands",
    "a man playing a guitar",
    "a bird flying over water",
)
DEMO_TEAMS = (("alpha", 0.8), ("beta", 0.6), ("gamma", 0.4), ("delta", 0.2))


def demo_collection(rng: np.random.Generator, n_videos: int = 100, shots_per_video: int = 40) -> bytes:
    """A master shot reference of consecutive shots per video."""
    lines = ["shot_id\tvideo_id\tstart\tend"]
    for v in range(1, n_videos + 1):
        bounds = np.concatenate([[0.0], np.cumsum(rng.uniform(2.0, 8.0, shots_per_video))]).round(2)
        lines += [f"shot{v:05d}_{s + 1}\tv{v:05d}\t{bounds[s]}\t{bounds[s + 1]}" for s in range(shots_per_video)]
    return ("\n".join(lines) + "\n").encode()


def demo_run(
    rng: np.random.Generator,
    shots: np.ndarray,
    relevant: dict[str, np.ndarray],
    skill: float,
    tag: str,
    depth: int = 500,
) -> bytes:
    """A TREC run whose scores favour relevant shots by `skill`."""
    out = []
    for topic, rel in relevant.items():
        signal = np.isin(shots, rel) * skill * 3.0
        scores = signal + rng.normal(0.0, 1.0, len(shots))
        order = np.argsort(-scores)[:depth]
        out += [f"{topic} Q0 {shots[i]} {r + 1} {scores[i]:.6f} {tag}" for r, i in enumerate(order)]
    return ("\n".join(out) + "\n").encode()


def load_demo(session: Session, token_file: Path, seed: int = 2022) -> str:
    """Create the demo campaign once (idempotent); returns a line telling how to use it."""
    existing = session.scalar(select(Campaign).where(Campaign.name == DEMO_NAME))
    if existing is None or not token_file.exists():
        token = create_token(session, Role.organiser, label="demo organiser")
        token_file.parent.mkdir(parents=True, exist_ok=True)
        token_file.write_text(token + "\n")
        token_file.chmod(0o600)
    token = token_file.read_text().strip()
    if existing is not None:
        return f"demo campaign {existing.id} already loaded; organiser token: {token}"
    principal = authenticate(session, token)
    rng = np.random.default_rng(seed)
    campaign = campaigns.create_campaign(
        session,
        principal,
        campaigns.CampaignSpec(
            name=DEMO_NAME,
            task_kind=TaskKind.shots,
            description="Synthetic ad-hoc video search campaign: 4,000 shots, 10 topics, 4 teams.",
            media_url_template="https://media.example.org/{video_id}.mp4#t={start},{end}",
        ),
    )
    collection.replace_collection(
        session, principal, campaign.id, demo_collection(rng), media_url_template=None, max_errors=50
    )
    numbers = [str(701 + i) for i in range(len(DEMO_TOPICS))]
    topics.add_topics(
        session, principal, campaign.id, [TopicDef(n, t) for n, t in zip(numbers, DEMO_TOPICS, strict=True)]
    )
    campaigns.set_status(session, principal, campaign.id, CampaignStatus.open)
    shots = np.array([f"shot{v:05d}_{s + 1}" for v in range(1, 101) for s in range(40)])
    relevant = {n: rng.choice(shots, size=int(rng.integers(20, 120)), replace=False) for n in numbers}
    for name, skill in DEMO_TEAMS:
        team, _ = teams.create_team(session, principal, campaign.id, name)
        for k, system_type in enumerate(("F", "M")):
            run_name = f"{name}_run{k + 1}"
            data = demo_run(rng, shots, relevant, skill + 0.1 * k, run_name)
            meta = runs.RunMetadata(name=run_name, system_type=system_type, training_type="D", priority=k + 1)
            runs.submit_run(
                session, principal, campaign.id, runs.Submission(data, meta, team_id=team.id), max_errors=50
            )
    return f"demo campaign {campaign.id} loaded; organiser token: {token}"
