"""Evaluations whose judgements add sampling variance (sampled qrels, a depth cut with unjudged pool items) run in
blocks of runs too: every budget stores the scores and intervals of one block of every run, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.services import campaigns, evaluations, jobs, pools, qrels, run_blocks, score_intervals
from app.storage.models import CampaignStatus, Evaluation, EvaluationBlockParts
from tests.services.conftest import ORGANISER, fanned_out, new_campaign, stored_numbers

MEASURES = ["xinfAP", "infNDCG", "AP", "P@10", "inum_rel"]


@pytest.fixture(scope="module")
def campaign(module_session: Session) -> tuple[int, str]:
    """A closed 8-topic campaign of 7 runs of 10 to 40 lines a topic (s3 answers 5 topics, s5 one) and stratified
    sampled qrels: docs 0-19 judged in full (stratum 1), 20-59 sampled at a third (stratum 2), topic 8 unjudged."""
    made = new_campaign(module_session, n_topics=8)
    rng = np.random.default_rng(21)
    for i in range(7):
        lines = []
        for t in made.topics[: {3: 5, 5: 1}.get(i, 8)]:
            noisy = np.arange(60) + rng.normal(0, 6 + 3 * i, 60)
            order = np.argsort(noisy)[: 10 + 5 * i]
            lines += [f"{t} Q0 d{d} {r + 1} {100.0 - r} s{i}\n" for r, d in enumerate(order.tolist())]
        made.submit("".join(lines), name=f"s{i}")
    qrels_lines = []
    for t in made.topics:
        for d in range(60):
            relevant = int(rng.random() < 0.6 * np.exp(-d / 20))
            judged = (d < 20 or rng.random() < 1 / 3) and t != "8"
            qrels_lines.append(f"{t} 0 d{d} {1 if d < 20 else 2} {relevant if judged else -1}\n")
    campaigns.set_status(module_session, ORGANISER, made.id, CampaignStatus.closed)
    module_session.commit()
    return made.id, "".join(qrels_lines)


def every_budget(session: Session, campaign_id: int, version_id: int, measures: list[str] = MEASURES) -> Evaluation:
    """Evaluate at one block, two and one run a block; assert they store the same; the one-block evaluation."""
    reference = evaluations.start_evaluation(
        session, ORGANISER, campaign_id, qrels_version_id=version_id, measures=measures
    )
    plan = evaluations.plan_evaluation(session, reference, 512.0)
    assert plan.held and plan.blocks == [plan.run_ids] and len(plan.run_ids) == 7
    evaluations.run_evaluation(session, reference.id, memory_mb=512.0)
    expected = stored_numbers(session, reference)
    assert len(expected[1]) == 7 * len(measures)
    largest = max(run.n_entries for run in evaluations.evaluated_runs(session, campaign_id, version_id))
    for memory_mb, n_blocks in [(1e-9, 7), (2 * largest * run_blocks.SAMPLED_BYTES_PER_RUN_LINE / 2**20, 2)]:
        evaluation = evaluations.start_evaluation(
            session, ORGANISER, campaign_id, qrels_version_id=version_id, measures=measures
        )
        assert len(evaluations.plan_evaluation(session, evaluation, memory_mb).blocks) >= n_blocks
        seen: list[float] = []
        done = evaluations.run_evaluation(session, evaluation.id, seen.append, memory_mb=memory_mb)
        assert done.status == "done" and seen == sorted(seen) and seen[-1] == pytest.approx(0.8)
        assert stored_numbers(session, done) == expected, memory_mb
        assert done.measures == reference.measures
        queued = evaluations.start_evaluation(  # the same blocks fanned out, their parts stored for the last one
            session, ORGANISER, campaign_id, qrels_version_id=version_id, measures=measures
        )
        assert stored_numbers(session, fanned_out(session, queued, memory_mb)) == expected, memory_mb
        assert queued.measures == reference.measures
    return reference


def test_sampled_qrels_in_blocks_store_the_numbers_of_one_block(module_session: Session, campaign) -> None:
    session = module_session
    campaign_id, text = campaign
    version = qrels.import_qrels(session, ORGANISER, campaign_id, text.encode(), label="sampled", max_errors=10)
    session.flush()
    reference = every_budget(session, campaign_id, version.id)
    _, means = stored_numbers(session, reference)
    widened = reference.measures["interval"]["widened"]
    assert widened == {"xinfAP": "imputation+bias", "infNDCG": "imputation+bias"}  # topic 8 has no judgement
    assert all(means[key][3] is not None for key in means if key[1] in widened)
    assert all(means[key][3] is None for key in means if key[1] not in widened)


def test_the_jackknife_ratio_is_over_every_run_not_each_block(module_session: Session, campaign) -> None:
    """Without the unjudged topic xinfAP's jackknife scales infNDCG's imputation per topic, over all runs' sums."""
    session = module_session
    campaign_id, text = campaign
    judged = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("8 "))
    version = qrels.import_qrels(session, ORGANISER, campaign_id, judged.encode(), label="judged", max_errors=10)
    session.flush()
    reference = every_budget(session, campaign_id, version.id)
    assert reference.measures["interval"]["widened"] == {"xinfAP": "jackknife", "infNDCG": "imputation"}


def test_a_depth_cut_with_unjudged_pool_items_in_blocks_stores_the_numbers_of_one_block(
    module_session: Session, campaign
) -> None:
    session = module_session
    campaign_id, text = campaign
    pool = pools.create_pool(session, ORGANISER, campaign_id, pools.PoolSpec(kind="depth", depth=10))
    judged = "".join(  # the pool's top half judged: its other items unjudged, left out of the qrels
        f"{t} 0 {doc} {int(doc in {'d0', 'd1', 'd2', 'd5'})}\n"
        for t in map(str, range(1, 9))
        for doc in sorted({f"d{d}" for d in range(12)})
    )
    version = qrels.import_qrels(session, ORGANISER, campaign_id, judged.encode(), label="cut", max_errors=10)
    version.source, version.pool_id = "cut", pool.id
    session.flush()
    plan = score_intervals.design(session, version, qrels.load_qrels(session, version))
    assert plan.depth_incomplete and not plan.sampled
    reference = every_budget(session, campaign_id, version.id, ["AP", "P@10", "nDCG@10", "num_rel_ret"])
    assert reference.measures["interval"]["widened"] == dict.fromkeys(["AP", "P@10", "nDCG@10"], "imputation+bias")


def test_a_run_s_sampling_parts_are_its_own(module_session: Session, campaign) -> None:
    """Parts of blocks joined are the parts of every run at once (the property the job's blocks rest on)."""
    session = module_session
    campaign_id, text = campaign
    judged = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("8 "))
    version = qrels.import_qrels(session, ORGANISER, campaign_id, judged.encode(), label="parts", max_errors=10)
    loaded = qrels.load_qrels(session, version)
    plan = score_intervals.design(session, version, loaded)
    runs = evaluations.evaluated_runs(session, campaign_id, version.id)
    tables = run_blocks.load_runs(session, [r.id for r in runs])
    keys = [str(r.id) for r in runs]
    topics = [str(t) for t in range(1, 9)]
    whole = score_intervals.sampling_parts(plan, tables, keys, 1000, MEASURES, topics)
    blocks = [
        score_intervals.sampling_parts(plan, tables[i : i + 2], keys[i : i + 2], 1000, MEASURES, topics[::-1])
        for i in range(0, len(tables), 2)
    ]
    joined = score_intervals.SamplingParts.joined(blocks, topics)
    assert whole.jackknife is not None and joined.jackknife is not None
    assert whole.jackknife.tobytes() == joined.jackknife.tobytes() and whole.jackknife.any()
    assert whole.imputed.tobytes() == joined.imputed.tobytes()
    for measure in ("xinfAP", "infNDCG"):
        assert whole.between[measure].tobytes() == joined.between[measure].tobytes()
        assert whole.mean[measure].tobytes() == joined.mean[measure].tobytes()


def test_a_fanned_out_evaluation_that_ends_early_keeps_no_block_parts(module_session: Session, campaign) -> None:
    """Blocks store their parts until the reduce; an evaluation failed or cancelled first drops them, and a block
    that finds it so afterwards stores none."""
    session = module_session
    campaign_id, text = campaign
    version = qrels.import_qrels(session, ORGANISER, campaign_id, text.encode(), label="ended", max_errors=10)
    session.flush()

    def kept(evaluation_id: int) -> int:
        return int(session.scalar(select(func.count()).where(EvaluationBlockParts.evaluation_id == evaluation_id)))

    for end in (jobs.mark_cancelled, lambda s, m, i: jobs.mark_failed(s, m, i, "stopped")):
        evaluation = evaluations.start_evaluation(
            session, ORGANISER, campaign_id, qrels_version_id=version.id, measures=MEASURES
        )
        queued: list[list[list[int]]] = []
        evaluations.run_evaluation(session, evaluation.id, memory_mb=1e-9, fan_out=queued.append)
        evaluation.status = "running"
        blocks = queued[0]
        assert evaluations.run_block(session, evaluation.id, 0, blocks[0])
        assert evaluations.run_block(session, evaluation.id, 1, blocks[1])
        assert kept(evaluation.id) == 2
        end(session, Evaluation, evaluation.id)
        session.flush()
        assert kept(evaluation.id) == 0
        session.refresh(evaluation)
        assert not evaluations.run_block(session, evaluation.id, 2, blocks[2])  # ended: nothing kept
        assert kept(evaluation.id) == 0 and evaluation.status in ("cancelled", "failed")
