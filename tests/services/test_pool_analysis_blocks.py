"""Pooling and the analyses that read runs, in blocks of runs within a memory budget: the same pools and results,
bit for bit, with blocks of one run as with every run in one block."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.evaluation.analyses.lines import judged_only
from app.evaluation.grading.prepared_runs import prepare_runs
from app.services import analyses, campaigns, evaluations, pools, qrels, run_blocks
from app.storage.models import CampaignStatus, Evaluation, PoolItem, Run
from tests.services.conftest import ORGANISER, evaluated_mixed, new_campaign

TINY, WHOLE = 1e-9, 512.0  # budgets: blocks of one run; one block


def pool_rows(session: Session, pool_id: int) -> list[tuple[object, ...]]:
    """A stored pool's items, sorted."""
    columns = (PoolItem.topic_id, PoolItem.docno, PoolItem.stratum, PoolItem.sampled, PoolItem.best_rank)
    rows = session.execute(select(*columns, PoolItem.n_runs, PoolItem.judging_order).where(PoolItem.pool_id == pool_id))
    return sorted(tuple(r) for r in rows)


@pytest.mark.parametrize(
    "spec",
    [
        pools.PoolSpec(kind="stratified", strata="1-3:1.0, 4-20:0.4", seed=7, order="mtc"),
        pools.PoolSpec(kind="depth", depth=5, seed=8, order="move_to_front"),
        pools.PoolSpec(kind="depth", depth=4, depths={"2": 1, "5": 9}, seed=9, order="hedge"),
        pools.PoolSpec(kind="stratified", seed=10),
    ],
    ids=["stratified-mtc", "depth-move-to-front", "per-topic-depths-hedge", "trecvid-shuffled"],
)
def test_a_pool_built_in_blocks_of_one_run_is_the_pool_of_one_block(session: Session, spec: pools.PoolSpec) -> None:
    made = new_campaign(session, n_topics=6)
    rng = np.random.default_rng(4)
    for i in range(5):
        lines = []
        for t in made.topics[: 6 - i % 3]:
            docs = rng.permutation(40)[: 10 + 4 * i]
            scores = rng.integers(0, 8, size=len(docs))  # ties: docno order decides
            lines += [
                f"{t} Q0 d{d} {r + 1} {s} r{i}\n"
                for r, (d, s) in enumerate(zip(docs.tolist(), scores.tolist(), strict=True))
            ]
        made.submit("".join(lines), name=f"r{i}")
    campaigns.set_status(session, ORGANISER, made.id, CampaignStatus.closed)
    runs = list(session.scalars(select(Run).where(Run.campaign_id == made.id)))
    assert len(run_blocks.plan_blocks(runs, TINY)) == 5 and len(run_blocks.plan_blocks(runs, WHOLE)) == 1
    previews = [pools.preview_pool(session, ORGANISER, made.id, spec, memory_mb=m) for m in (TINY, WHOLE)]
    assert previews[0] == previews[1] and previews[0]["totals"]["pooled"] > 0  # type: ignore[index]
    built = []
    for memory_mb in (TINY, WHOLE):  # the second build replaces the first (nothing judged)
        pool = pools.create_pool(session, ORGANISER, made.id, spec, memory_mb=memory_mb)
        built.append(pool_rows(session, pool.id))
    assert built[0] == built[1]
    assert len(built[0]) == previews[0]["totals"]["pooled"]  # type: ignore[index]
    session.rollback()


@pytest.fixture(scope="module")
def evaluated(module_session: Session) -> Evaluation:
    """A 12-topic campaign of 9 runs with seeded imported qrels, evaluated."""
    _, evaluation = evaluated_mixed(new_campaign(module_session, n_topics=12), ["AP", "P@10"])
    return evaluation


@pytest.mark.parametrize(
    "kind, params",
    [
        ("pool-depth", {"measure": "AP", "max_depth": 12}),
        ("pool-depth", {"measure": "P@10", "depth": 6, "outside": "keep"}),
        ("leave-out", {"measure": "AP", "by": "run", "depth": 5}),
        ("leave-out", {"by": "type"}),
        ("judged-fraction", {}),
        ("novelty", {}),
        ("budget", {"sampled": ["3-10:0.5"], "replicates": 20}),
    ],
)
def test_an_analysis_of_runs_in_blocks_of_one_run_is_that_of_one_block(
    module_session: Session, evaluated: Evaluation, kind: str, params: dict[str, object]
) -> None:
    session = module_session
    results = []
    for memory_mb in (TINY, WHOLE):
        job = analyses.start_analysis(session, ORGANISER, evaluated.campaign_id, kind, params)
        done = analyses.run_analysis(session, job.id, memory_mb=memory_mb)
        assert done.status == "done"
        assert done.result is not None
        results.append(done.result)
    assert results[0] == results[1]
    assert "r8" in repr(results[0])  # every run's numbers are in it
    session.rollback()


def test_pool_depth_and_leave_out_read_the_runs_twice_a_block_at_a_time(
    module_session: Session, evaluated: Evaluation, monkeypatch
) -> None:
    """They never hold every run's prepared pairs: one pass over the pooled runs gathers the lines' pooled ranks, one
    over every run scores each block; runs that fit in one block are read once."""
    session = module_session
    read: list[list[int]] = []
    loader = run_blocks.load_runs
    monkeypatch.setattr(run_blocks, "load_runs", lambda s, block: read.append(list(block)) or loader(s, block))
    n_runs = session.scalar(select(func.count()).select_from(Run).where(Run.campaign_id == evaluated.campaign_id))
    pooled = {"pooled_runs": ["r0", "r3", "r8"]}
    for kind, params in (
        ("pool-depth", {"max_depth": 5, **pooled}),
        ("leave-out", {"by": "team", "depth": 5, **pooled}),
    ):
        for memory_mb in (TINY, WHOLE):
            read.clear()
            job = analyses.start_analysis(session, ORGANISER, evaluated.campaign_id, kind, params)
            done = analyses.run_analysis(session, job.id, memory_mb=memory_mb)
            assert done.status == "done" and done.result is not None
            n_pooled = len(done.result["pooled"])
            assert n_pooled == 3
            if memory_mb == TINY:
                assert all(len(block) == 1 for block in read)
                assert len(read) == n_pooled + n_runs and len({b[0] for b in read}) == n_runs
            else:
                assert len(read) == 1 and len(set(read[0])) == n_runs
    for kind, params in (("pool-depth", {"measure": "AP", "max_depth": 5}), ("leave-out", {"by": "team", "depth": 5})):
        read.clear()  # AP over every pooled run: its cuts scored from the first pass's relevant entries
        job = analyses.start_analysis(session, ORGANISER, evaluated.campaign_id, kind, params)
        assert analyses.run_analysis(session, job.id, memory_mb=TINY).status == "done"
        assert sorted(b[0] for b in read) == sorted(set(b[0] for b in read)) and len(read) == n_runs
    session.rollback()


def test_stored_blocks_keep_their_first_blocks_within_half_the_budget(
    module_session: Session, evaluated: Evaluation, monkeypatch
) -> None:
    session = module_session
    ids = sorted(session.scalars(select(Run.id).where(Run.campaign_id == evaluated.campaign_id)))
    names = [f"n{i}" for i in ids]
    alone = [prepare_runs(run_blocks.load_runs(session, [i]), 100, names=[f"n{i}"]) for i in ids]
    for one in alone:
        assert len(one.doc_index)  # built, as an analysis builds it
    sizes = [run_blocks.prepared_bytes(one) for one in alone]
    memory_mb = 2 * sizes[0] / 2**20  # half of it keeps the first run's block, no more
    read: list[list[int]] = []
    loader = run_blocks.load_runs
    monkeypatch.setattr(run_blocks, "load_runs", lambda s, block: read.append(list(block)) or loader(s, block))
    stored = run_blocks.StoredBlocks(session, ids, names, 100, memory_mb)
    first = [block.names for block in stored]
    assert read == [[i] for i in ids] and first == [[n] for n in names]
    read.clear()
    again = list(stored)
    assert read == [[i] for i in ids[1:]]  # the first block was kept
    assert [b.names for b in again] == first and again[0] is next(iter(stored))
    for block, one in zip(again, alone, strict=True):
        assert np.array_equal(block.pairs, one.pairs) and block.docs == one.docs
    read.clear()
    whole = run_blocks.StoredBlocks(session, ids, names, 100, 512.0)
    assert len(list(whole)) == 1 and len(list(whole)) == 1 and len(read) == 1  # one block: read once
    session.rollback()


def test_pool_depth_of_another_measure_keeps_the_judged_pairs_and_reads_the_runs_once(
    session: Session, monkeypatch
) -> None:
    """Under a budget whose half holds the runs' judged pairs (`lines.judged_only`) but not their prepared runs, the
    first pass keeps every block so: P@10 (nDCG@10) under each cut reads every run once, for the numbers of one
    block. The runs retrieve 60 of 400 long docnos a topic; a depth-5 pool's qrels judge a tenth of that."""
    made = new_campaign(session, n_topics=6)
    rng = np.random.default_rng(8)
    pooled: set[tuple[str, int]] = set()
    for i in range(8):
        lines = []
        for t in made.topics:
            docs = rng.permutation(400)[:60]
            pooled |= {(t, d) for d in docs[:5].tolist()}
            lines += [f"{t} Q0 shot{d:05d}_{t}_long {r + 1} {60 - r} r{i}\n" for r, d in enumerate(docs.tolist())]
        made.submit("".join(lines), name=f"r{i}")
    text = "".join(f"{t} 0 shot{d:05d}_{t}_long {int(rng.random() < 0.4)}\n" for t, d in sorted(pooled))
    campaigns.set_status(session, ORGANISER, made.id, CampaignStatus.closed)
    qrels.import_qrels(session, ORGANISER, made.id, text.encode(), label="depth 5", max_errors=10)
    evaluation = evaluations.start_evaluation(session, ORGANISER, made.id, measures=["P@10"])
    evaluations.run_evaluation(session, evaluation.id)
    ids = sorted(session.scalars(select(Run.id).where(Run.campaign_id == made.id)))
    _, judged = qrels.evaluation_qrels(session, evaluation)
    alone = [prepare_runs(run_blocks.load_runs(session, [i]), 100) for i in ids]
    for one in alone:
        assert len(one.doc_index)  # built, as an analysis builds it
    full = sum(run_blocks.prepared_bytes(one) for one in alone)
    slim = sum(run_blocks.prepared_bytes(judged_only(one, judged)) for one in alone)
    memory_mb = 2.5 * slim / 2**20
    n_lines = 8 * 6 * 60
    assert full > memory_mb * 2**20 / 2 and n_lines * run_blocks.PREPARED_BYTES_PER_RUN_LINE > memory_mb * 2**20
    read: list[list[int]] = []
    loader = run_blocks.load_runs
    monkeypatch.setattr(run_blocks, "load_runs", lambda s, block: read.append(list(block)) or loader(s, block))
    for kind, params in (
        ("pool-depth", {"measure": "P@10", "max_depth": 6}),
        ("leave-out", {"measure": "nDCG@10", "by": "run", "depth": 5}),
    ):
        results = []
        for budget in (memory_mb, WHOLE):
            read.clear()
            job = analyses.start_analysis(session, ORGANISER, made.id, kind, params)
            done = analyses.run_analysis(session, job.id, memory_mb=budget)
            assert done.status == "done" and done.result is not None
            results.append(done.result)
            assert sorted(run for block in read for run in block) == ids, kind  # each run read once
            if budget == memory_mb:
                assert len(read) > 1  # in blocks
        assert results[0] == results[1], kind
    session.rollback()
