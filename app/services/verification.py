"""Human verification of a model's verdicts: each topic's seeded sample of model-judged items, routed to people.

A model-assisted pool (`pools.params["verification"]`: `human_share`, `stratify`, `model_assessor_id`) gives people
no first-round tasks when it is built. Once the pool's model assessor has a verdict on every sampled item of a topic,
`after_model_verdicts` (called by the batch judging API after it writes verdicts) draws the topic's verification
sample once: each item's inclusion probability pi from `prediction_powered.inclusion_probabilities` (uniform, or
larger where the model's probability is nearest 0.5 when stratified by confidence), and Poisson draws from
`verification_draw(pool seed, topic number, docnos, pi)`, so the sample is reproducible from the pool's seed.
`pool_items.verification_probability` and `verification_sampled` are stored for every sampled item of the topic and
each drawn item gets a round-1 judging task (reason `verification`), which people get through the normal judging
page from the topic's assignments. A per-topic advisory lock (`judging_orders.lock_topic`) makes concurrent pushes
that finish a topic at once draw it once; a topic already drawn is never drawn again (later model verdicts, say a
retried push, change nothing).
"""

from __future__ import annotations

import numpy as np
from pydantic import dataclasses as pydantic_dataclasses
from sqlalchemy import text
from sqlalchemy.orm import Session

from app.evaluation.statistics.prediction_powered import inclusion_probabilities, verification_draw
from app.services.auth import Principal
from app.services.errors import InvalidInput
from app.services.judging_orders import lock_topic
from app.services.pools import get_pool, verification_of
from app.storage.models import Pool

REASON = "verification"

# The model-assisted pools and topics of the given items.
_TOPICS_OF_ITEMS = text(
    """
    SELECT DISTINCT i.pool_id, i.topic_id FROM pool_items i JOIN pools p ON p.id = i.pool_id
    WHERE i.id = ANY(CAST(:items AS bigint[])) AND p.params ? 'verification'
    ORDER BY i.pool_id, i.topic_id
    """
)
# A topic's sampled items with the verified model's verdict (NULL when it has none yet) and whether it was drawn.
_TOPIC_ITEMS = text(
    """
    SELECT i.id, i.docno, v.id AS verdict, v.probability, i.verification_sampled, t.number
    FROM pool_items i
    JOIN topics t ON t.id = i.topic_id
    LEFT JOIN model_verdicts v ON v.pool_item_id = i.id AND v.assessor_id = :model
    WHERE i.pool_id = :pool AND i.topic_id = :topic AND i.sampled
    ORDER BY i.docno COLLATE "C"
    """
)
_STORE_DRAW = text(
    """
    UPDATE pool_items i SET verification_probability = d.pi, verification_sampled = d.drawn
    FROM unnest(CAST(:ids AS bigint[]), CAST(:pi AS double precision[]), CAST(:drawn AS boolean[])) AS d(id, pi, drawn)
    WHERE i.id = d.id
    """
)
_QUEUE_DRAWN = text(
    """
    INSERT INTO judging_tasks (pool_item_id, round, reason)
    SELECT id, 1, :reason FROM unnest(CAST(:ids AS bigint[])) AS d(id)
    ON CONFLICT (pool_item_id, round) DO NOTHING
    """
)


def after_model_verdicts(session: Session, pool_item_ids: list[int]) -> None:
    """Draw the verification sample of every topic the given items complete (model-assisted pools only; idempotent)."""
    if not pool_item_ids:
        return
    pairs = session.execute(_TOPICS_OF_ITEMS, {"items": sorted(set(pool_item_ids))}).all()
    pools: dict[int, Pool] = {}
    for pool_id, topic_id in pairs:  # in (pool, topic) order: concurrent pushes take the locks in one order
        pool = pools.get(pool_id) or session.get(Pool, pool_id)
        assert pool is not None
        pools[pool_id] = pool
        draw_topic(session, pool, topic_id)


def draw_topic(session: Session, pool: Pool, topic_id: int) -> int | None:
    """Draw one topic's verification sample if the model has judged all its sampled items and it is not drawn yet;
    the number of items drawn (None when nothing was done)."""
    design = verification_of(pool)
    if design is None:
        return None
    lock_topic(session, pool.id, topic_id)  # until the transaction ends: a second push waits, then finds it drawn
    rows = session.execute(_TOPIC_ITEMS, {"pool": pool.id, "topic": topic_id, "model": design.model_assessor_id}).all()
    if not rows or any(r.verdict is None for r in rows) or any(r.verification_sampled is not None for r in rows):
        return None
    probability = np.array([np.nan if r.probability is None else r.probability for r in rows], dtype=np.float64)
    pi = inclusion_probabilities(probability, design.human_share, stratify=design.stratify == "confidence")
    drawn = verification_draw(int(pool.seed), str(rows[0].number), [r.docno for r in rows], pi)
    ids = [int(r.id) for r in rows]
    session.execute(_STORE_DRAW, {"ids": ids, "pi": pi.tolist(), "drawn": drawn.tolist()})
    chosen = [i for i, d in zip(ids, drawn.tolist(), strict=True) if d]
    if chosen:
        session.execute(_QUEUE_DRAWN, {"ids": chosen, "reason": REASON})
    return len(chosen)


@pydantic_dataclasses.dataclass(frozen=True)
class TopicVerification:
    """A topic of a model-assisted pool: its sampled items, those the model judged, those drawn for people to verify
    and those of the drawn that a person has judged."""

    topic: str
    items: int
    model_judged: int
    drawn: int | None  # None until the topic's sample is drawn
    human_judged: int


_PROGRESS = text(
    """
    SELECT t.number AS topic, count(*) AS items, count(v.id) AS model_judged,
           count(*) FILTER (WHERE i.verification_sampled) AS drawn,
           bool_or(i.verification_sampled IS NOT NULL) AS is_drawn,
           count(*) FILTER (WHERE i.verification_sampled AND EXISTS (
               SELECT 1 FROM judgements j WHERE j.pool_item_id = i.id)) AS human_judged
    FROM pool_items i
    JOIN topics t ON t.id = i.topic_id
    LEFT JOIN model_verdicts v ON v.pool_item_id = i.id AND v.assessor_id = :model
    WHERE i.pool_id = :pool AND i.sampled
    GROUP BY t.id, t.number
    ORDER BY length(t.number), t.number
    """
)


def topic_progress(session: Session, pool: Pool) -> list[TopicVerification]:
    """Per topic of a model-assisted pool: items, model-judged, drawn, human-judged (InvalidInput for other pools)."""
    design = verification_of(pool)
    if design is None:
        raise InvalidInput(
            f"pool {pool.id} is not model-assisted", [{"field": "pool_id", "message": "built without verification"}]
        )
    rows = session.execute(_PROGRESS, {"pool": pool.id, "model": design.model_assessor_id}).all()
    return [
        TopicVerification(
            topic=r.topic,
            items=r.items,
            model_judged=r.model_judged,
            drawn=r.drawn if r.is_drawn else None,
            human_judged=r.human_judged,
        )
        for r in rows
    ]


def progress(session: Session, principal: Principal, pool_id: int) -> list[TopicVerification]:
    """`topic_progress` of a pool the caller organises."""
    return topic_progress(session, get_pool(session, principal, pool_id))
