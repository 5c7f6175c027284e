"""Series pools in blocks of runs within a memory budget: the same pool, judging queue and statistics, bit for bit,
with blocks of one run as with every run of the chosen campaigns in one block."""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.services import campaigns, pools, run_blocks, series
from app.storage.models import CampaignStatus, PoolItem, Run, Topic
from tests.services.conftest import ORGANISER, new_campaign

TINY, WHOLE = 1e-9, 512.0  # budgets: blocks of one run; one block
PROGRESS = [("101", "A"), ("102", "A"), ("103", "A"), ("104", "B")]


def two_campaigns(session: Session) -> tuple[int, list[int]]:
    """A series with progress sets A (101-103) and B (104) over two closed campaigns of three seeded runs each (ties
    in scores; one run skips topic 102); the series and the campaigns."""
    made = series.create_series(session, ORGANISER, f"blocks-{uuid.uuid4().hex[:8]}")
    session.commit()
    rng = np.random.default_rng(5)
    chosen = []
    for year in range(2):
        campaign = new_campaign(session, n_topics=2)
        series.add_campaign(session, ORGANISER, made.id, campaign.id)
        if year == 0:
            topics = [series.ProgressTopic(n, f"progress {n}", "", s) for n, s in PROGRESS]
            series.add_progress_topics(session, ORGANISER, made.id, topics)
        session.commit()
        numbers = sorted(session.scalars(select(Topic.number).where(Topic.campaign_id == campaign.id)))
        for i in range(3):
            lines = []
            for topic in numbers:
                if topic == "102" and i == 1:
                    continue
                docs = rng.permutation(40)[: 12 + 5 * i].tolist()
                scores = rng.integers(0, 6, size=len(docs)).tolist()
                lines += [
                    f"{topic} Q0 s{d} {r + 1} {s} y{year}r{i}\n"
                    for r, (d, s) in enumerate(zip(docs, scores, strict=True))
                ]
            campaign.submit("".join(lines), name=f"y{year}r{i}")
        campaigns.set_status(session, ORGANISER, campaign.id, CampaignStatus.closed)
        session.commit()
        chosen.append(campaign.id)
    return made.id, chosen


def items(session: Session, pool_id: int) -> list[tuple[object, ...]]:
    """A stored pool's items with their judging order, sorted."""
    columns = (PoolItem.topic_id, PoolItem.docno, PoolItem.stratum, PoolItem.sampled, PoolItem.best_rank)
    rows = session.execute(select(*columns, PoolItem.n_runs, PoolItem.judging_order).where(PoolItem.pool_id == pool_id))
    return sorted(tuple(r) for r in rows)


@pytest.mark.parametrize(
    "spec",
    [
        pools.PoolSpec(kind="stratified", strata="1-4:1.0, 5-25:0.5", seed=3, order="mtc"),
        pools.PoolSpec(kind="depth", depth=3, depths={"101": 1, "103": 9}, seed=4, order="move_to_front"),
        pools.PoolSpec(kind="depth", depth=6, seed=5),
    ],
    ids=["stratified-mtc", "per-topic-depths", "depth-shuffled"],
)
def test_a_series_pool_built_in_blocks_of_one_run_is_the_pool_of_one_block(
    session: Session, spec: pools.PoolSpec
) -> None:
    series_id, chosen = two_campaigns(session)
    runs = list(session.scalars(select(Run).where(Run.campaign_id.in_(chosen))))
    assert len(run_blocks.plan_blocks(runs, TINY)) == 6 and len(run_blocks.plan_blocks(runs, WHOLE)) == 1
    built, stats = [], []
    for memory_mb in (TINY, WHOLE):  # the second build replaces the first (nothing judged)
        pool = series.create_series_pool(
            session, ORGANISER, series_id, "A", chosen, spec, reuse=False, memory_mb=memory_mb
        )
        built.append(items(session, pool.id))
        stats.append(
            {k: v for k, v in pools.pool_statistics(session, pool, memory_mb=memory_mb).items() if k != "pool_id"}
        )
    assert built[0] == built[1] and len(built[0]) > 20
    numbers = set(session.scalars(select(Topic.number).where(Topic.id.in_({row[0] for row in built[0]}))))
    assert numbers == {"101", "102", "103"}  # the set's topics only
    if spec.order != "shuffled":
        assert min(int(row[-1]) for row in built[0]) < -1  # type: ignore[call-overload]  # plans at the queues' heads
    assert stats[0] == stats[1]
    assert len(stats[0]["runs"]) == 6 and sum(r["unique_contributions"] for r in stats[0]["runs"]) > 0  # type: ignore[arg-type, attr-defined]
    session.rollback()
