"""Use cases called directly: a session per test (or per module, for state built once) on the run's database,
and a small shots campaign to work on (the session factory `sessions` is in tests/conftest.py)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.evaluation.formats.topics_file import TopicDef
from app.services import campaigns, evaluations, qrels, runs, teams, topics
from app.services.auth import Principal
from app.storage.models import CampaignStatus, Evaluation, EvaluationBlockParts, Role, Run, RunMean, Score, TaskKind

ORGANISER = Principal(Role.organiser, token_id=0)
_names = itertools.count(1)


@pytest.fixture
def session(sessions) -> Iterator[Session]:  # type: ignore[no-untyped-def]
    """A session whose work is committed, as the API commits after each use case."""
    with sessions() as s:
        yield s


@pytest.fixture(scope="module")
def module_session(sessions) -> Iterator[Session]:  # type: ignore[no-untyped-def]
    """A session for the state a module builds once (its tests must not change that state)."""
    with sessions() as s:
        yield s


@dataclass
class Campaign:
    """A campaign made through the use cases, with helpers to submit runs."""

    session: Session
    id: int
    team_id: int
    topics: list[str]

    def submit(self, text: str, name: str | None = None, **metadata: object) -> Run:
        """Submit a run for the campaign's team as its organiser."""
        meta = runs.RunMetadata(name=name or f"run{next(_names)}", **metadata)  # type: ignore[arg-type]
        submission = runs.Submission(data=text.encode(), metadata=meta, team_id=self.team_id)
        run = runs.submit_run(self.session, ORGANISER, self.id, submission, max_errors=50)
        self.session.commit()
        return run


def new_campaign(session: Session, n_topics: int = 3, task_kind: TaskKind = TaskKind.shots) -> Campaign:
    """An open campaign with topics 1..n and one team, made and committed in `session`."""
    spec = campaigns.CampaignSpec(name=f"services-{next(_names)}", task_kind=task_kind)
    campaign = campaigns.create_campaign(session, ORGANISER, spec)
    numbers = [str(t) for t in range(1, n_topics + 1)]
    topics.add_topics(session, ORGANISER, campaign.id, [TopicDef(n, f"topic {n}") for n in numbers])
    team, _ = teams.create_team(session, ORGANISER, campaign.id, f"team{next(_names)}")
    campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.open)
    session.commit()
    return Campaign(session, campaign.id, team.id, numbers)


def evaluated_mixed(campaign: Campaign, measures: list[str], *, novelty: bool = False) -> tuple[Campaign, Evaluation]:
    """Close a 12-topic campaign with 9 runs of mixed system and training types (run r4 answers 8 topics; with
    `novelty`, every fourth run is a novelty run), import seeded TREC qrels and evaluate `measures`."""
    rng = np.random.default_rng(3)
    for i in range(9):
        lines = []
        for t in campaign.topics[: 8 if i == 4 else 12]:
            docs = rng.permutation(30)[:15]
            lines += [f"{t} Q0 d{d} {r + 1} {20.0 - r} r{i}\n" for r, d in enumerate(docs.tolist())]
        kinds = {"system_type": "FMR"[i % 3], "training_type": "AD"[i % 2]}
        campaign.submit("".join(lines), name=f"r{i}", **kinds, **({"novelty": i % 4 == 0} if novelty else {}))
    qrels_text = "".join(f"{t} 0 d{d} {int(rng.random() < 0.3)}\n" for t in campaign.topics for d in range(30))
    session = campaign.session
    campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.closed)
    qrels.import_qrels(session, ORGANISER, campaign.id, qrels_text.encode(), label="q", max_errors=10)
    evaluation = evaluations.start_evaluation(session, ORGANISER, campaign.id, measures=measures)
    evaluations.run_evaluation(session, evaluation.id)
    session.commit()
    return campaign, evaluation


@pytest.fixture
def make_campaign(session: Session):  # type: ignore[no-untyped-def]
    """Factory: an open shots campaign with topics 1..n and one team, in the test's session."""

    def make(n_topics: int = 3, task_kind: TaskKind = TaskKind.shots) -> Campaign:
        return new_campaign(session, n_topics, task_kind)

    return make


def stored_numbers(session: Session, evaluation: Evaluation) -> tuple[dict, dict]:  # type: ignore[type-arg]
    """Every stored score and run mean of an evaluation, keyed, as exact float hex strings (blocks against one)."""
    scores = session.execute(select(Score).where(Score.evaluation_id == evaluation.id)).scalars().all()
    means = session.execute(select(RunMean).where(RunMean.evaluation_id == evaluation.id)).scalars().all()

    def exact(value: float | None) -> str | None:
        return None if value is None else float(value).hex()

    return (
        {(s.run_id, s.measure, s.topic): exact(s.value) for s in scores},
        {
            (m.run_id, m.measure): (*map(exact, (m.value, m.ci_low, m.ci_high, m.sampling_se)), m.estimator)
            for m in means
        },
    )


def fanned_out(session: Session, evaluation: Evaluation, memory_mb: float) -> Evaluation:
    """Plan an evaluation as a worker does with blocks to fan out, then run each queued block here, last block first
    (the block that finishes last reduces the evaluation, whatever its index); the evaluation, done."""
    queued: list[list[list[int]]] = []
    evaluations.run_evaluation(session, evaluation.id, memory_mb=memory_mb, fan_out=queued.append)
    assert len(queued) == 1 and len(queued[0]) > 1 and evaluation.status != "done"
    evaluation.status = "running"  # as the worker that planned it left it
    blocks = queued[0]
    for index in reversed(range(len(blocks))):
        assert evaluation.status == "running"
        assert evaluations.run_block(session, evaluation.id, index, blocks[index])
    assert evaluation.status == "done" and evaluations.BLOCKS not in evaluation.measures
    left = session.scalar(select(func.count()).where(EvaluationBlockParts.evaluation_id == evaluation.id))
    assert left == 0  # the reduce deletes the blocks' parts
    return evaluation
