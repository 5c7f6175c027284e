"""A plain helper of the agreement report's tests (services and web): a campaign with a human and a model qrels
version stored directly as test data, and the model assessor whose provenance names the judge."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sqlalchemy import select

from app.storage.database import session_scope
from app.storage.models import Assessor, QrelsEntry, QrelsVersion, Run, Topic
from tests.api.helpers import new_campaign, setup_campaign, shots

PROVENANCE = {"model": "gpt-4o-mini", "version": "2024-07-18", "config_hash": "cfg-5e1f0a",
              "parameters": {"temperature": 0.0, "prompt": "umbrela-v1"}}  # fmt: skip


@dataclass(frozen=True)
class AgreementCampaign:
    """What `build` made: the campaign handle, its run names, the version ids and the grades stored."""

    campaign: object
    runs: list[str]
    human_id: int
    model_id: int
    human: dict[tuple[str, str], int]  # (topic, shot) -> grade
    model: dict[tuple[str, str], int]


def build(client, organiser, sessions, *, seed: int = 0) -> AgreementCampaign:  # type: ignore[no-untyped-def]
    """A campaign made over HTTP with six runs on three topics; every shot of the collection judged by people
    (about 20 % relevant) and by a model that flips 15 % of the labels; run secretrun1 says it reranks with GPT-4o
    (the judge's family)."""

    def make(n_topics: int = 3, **settings: object):  # type: ignore[no-untyped-def]
        return new_campaign(client, organiser, n_topics, "shots", True, **settings)

    campaign, names = setup_campaign(make, client, organiser, n_runs=6, depth=30, seed=seed)
    rng = np.random.default_rng(seed)
    human: dict[tuple[str, str], int] = {}
    model: dict[tuple[str, str], int] = {}
    with session_scope(sessions) as session:
        topics = {t.number: t.id for t in session.scalars(select(Topic).where(Topic.campaign_id == campaign.id))}
        assessor = Assessor(campaign_id=campaign.id, name="umbrela", kind="model", provenance=PROVENANCE)
        session.add(assessor)
        session.flush()
        human_version = QrelsVersion(campaign_id=campaign.id, label="people", kind="trec", source="imported",
                                     judges="human")  # fmt: skip
        model_version = QrelsVersion(
            campaign_id=campaign.id,
            label="umbrela-only",
            kind="trec",
            source="cut",
            judges="model",
            provenance={"model_assessors": [{"id": assessor.id, "name": assessor.name, "provenance": PROVENANCE}],
                        "human_share": 0.1},
        )  # fmt: skip
        session.add_all([human_version, model_version])
        session.flush()
        for number in sorted(topics):
            for shot in shots():
                grade = int(rng.random() < 0.2)
                other = 1 - grade if rng.random() < 0.15 else grade
                human[(number, shot)], model[(number, shot)] = grade, other
                session.add(QrelsEntry(qrels_version_id=human_version.id, topic_id=topics[number], docno=shot,
                                       grade=grade))  # fmt: skip
                session.add(QrelsEntry(qrels_version_id=model_version.id, topic_id=topics[number], docno=shot,
                                       grade=other))  # fmt: skip
        human_version.n_entries = model_version.n_entries = len(human)
        run = session.scalars(select(Run).where(Run.campaign_id == campaign.id, Run.name == "secretrun1")).one()
        run.description = "BM25, then reranked listwise with GPT-4o"
        ids = human_version.id, model_version.id
    return AgreementCampaign(campaign, names, ids[0], ids[1], human, model)
