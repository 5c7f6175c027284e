"""Evaluation in blocks of runs within a memory budget: the same numbers, bit for bit, as every run at once."""

from __future__ import annotations

from types import SimpleNamespace
from typing import cast

import numpy as np
import pytest
from sqlalchemy.orm import Session

from app.evaluation.moments import evaluate_moments, parse_moment_ground_truth, parse_moment_run
from app.services import campaigns, evaluations, qrels, run_blocks
from app.storage.models import CampaignStatus, TaskKind
from tests.services.conftest import ORGANISER, new_campaign, stored_numbers

MEASURES = ["AP", "P@10", "nDCG@10", "bpref", "Rprec", "RR", "num_rel_ret", "gm_map", "recall@5", "P_5"]


def test_runs_are_split_into_blocks_of_at_most_the_budget_lines() -> None:
    runs = [(1, 40), (2, 50), (3, 10), (4, 200), (5, 5), (6, 95)]
    assert run_blocks.split_blocks(runs, 100) == [[1, 2, 3], [4], [5, 6]]
    assert run_blocks.split_blocks(runs, 1) == [[1], [2], [3], [4], [5], [6]]
    assert run_blocks.split_blocks(runs, 10**6) == [[1, 2, 3, 4, 5, 6]]
    assert run_blocks.split_blocks([], 100) == []
    assert run_blocks.block_lines(1.0) == 2**20 // run_blocks.BYTES_PER_RUN_LINE
    assert run_blocks.block_lines(1e-9) == 1
    pool_lines = run_blocks.block_lines(512.0, run_blocks.POOL_BYTES_PER_RUN_LINE)  # a pool build's blocks are smaller
    assert pool_lines == 512 * 2**20 // run_blocks.POOL_BYTES_PER_RUN_LINE < run_blocks.block_lines(512.0)
    counted = [SimpleNamespace(id=i, n_entries=n) for i, n in runs]
    per_line = 100 / 2**20  # a budget (MiB) of 100 lines at one byte a line
    assert run_blocks.plan_blocks(counted, per_line, 1) == [[1, 2, 3], [4], [5, 6]]
    assert run_blocks.plan_blocks(counted, per_line, 2) == [[1], [2], [3], [4], [5], [6]]  # 50 lines a block


def test_blocks_planned_as_they_are_read_leave_room_for_what_the_caller_holds(monkeypatch) -> None:
    monkeypatch.setattr(run_blocks, "load_runs", lambda session, block: [])  # no database: the plan alone
    runs = [SimpleNamespace(id=i, n_entries=10) for i in range(8)]
    budget = 40 / 2**20  # 40 lines at one byte a line (MiB)
    no_database = cast(Session, None)  # load_runs is replaced
    fixed = list(run_blocks.reduced_blocks(no_database, runs, budget, lambda ids, _: ids, 1))
    assert fixed == run_blocks.plan_blocks(runs, budget, 1) == [[0, 1, 2, 3], [4, 5, 6, 7]]
    kept: list[int] = []

    def keep(ids: list[int], _: object) -> list[int]:
        """Keep the block's run ids (what the caller holds grows)."""
        kept.extend(ids)
        return ids

    planned = run_blocks.reduced_blocks(
        no_database, runs, budget, keep, 1, held=lambda: 2 * len(kept)
    )  # two bytes a run kept: 8, then 14, of the 40
    assert list(planned) == [[0, 1, 2, 3], [4, 5, 6], [7]]


@pytest.fixture(scope="module")
def campaign(module_session: Session) -> int:
    """A closed 12-topic campaign of 9 runs of 15 to 60 lines per topic (r4 answers 8 topics, r7 one) with
    seeded qrels in which topic 12 has nothing relevant."""
    made = new_campaign(module_session, n_topics=12)
    rng = np.random.default_rng(11)
    for i in range(9):
        lines = []
        for t in made.topics[: {4: 8, 7: 1}.get(i, 12)]:
            docs = rng.permutation(80)[: 15 + 5 * i]
            lines += [f"{t} Q0 d{d} {r + 1} {100.0 - r} r{i}\n" for r, d in enumerate(docs.tolist())]
        made.submit("".join(lines), name=f"r{i}")
    grades = {t: rng.random(80) < (0.0 if t == "12" else 0.25) for t in made.topics}
    text = "".join(f"{t} 0 d{d} {int(grades[t][d])}\n" for t in made.topics for d in range(80))
    campaigns.set_status(module_session, ORGANISER, made.id, CampaignStatus.closed)
    qrels.import_qrels(module_session, ORGANISER, made.id, text.encode(), label="q", max_errors=10)
    module_session.commit()
    return made.id


def test_every_block_size_stores_the_numbers_of_every_run_at_once(module_session: Session, campaign: int) -> None:
    session = module_session
    reference = evaluations.start_evaluation(session, ORGANISER, campaign, measures=MEASURES)
    plan = evaluations.plan_evaluation(session, reference, 512.0)
    assert len(plan.run_ids) == 9 and plan.blocks == [plan.run_ids] and not plan.held
    evaluations.evaluate_in_job(session, reference, [plan.run_ids])  # every run at once, the intervals in memory
    expected_scores, expected_means = stored_numbers(session, reference)
    assert len(expected_means) == 9 * len(MEASURES)
    assert len(expected_scores) == 9 * len(MEASURES) * 13  # 12 topics (the one without relevant items too), all
    assert any(m[1] is not None for m in expected_means.values())  # intervals were computed
    lines = sorted(run.n_entries for run in evaluations.evaluated_runs(session, campaign, reference.qrels_version_id))
    for memory_mb, n_blocks in [(1e-9, 9), (lines[-1] * run_blocks.BYTES_PER_RUN_LINE / 2**20, 3), (512.0, 1)]:
        evaluation = evaluations.start_evaluation(session, ORGANISER, campaign, measures=MEASURES)
        assert len(evaluations.plan_evaluation(session, evaluation, memory_mb).blocks) >= n_blocks
        seen: list[float] = []
        done = evaluations.run_evaluation(session, evaluation.id, seen.append, memory_mb=memory_mb)
        assert done.status == "done" and done.progress == 1.0
        assert seen == sorted(seen) and seen[0] == 0.1 and seen[-1] == pytest.approx(0.8)
        assert stored_numbers(session, done) == (expected_scores, expected_means), memory_mb
        assert done.measures == reference.measures


def test_a_retried_block_replaces_its_scores(module_session: Session, campaign: int) -> None:
    session = module_session
    evaluation = evaluations.start_evaluation(session, ORGANISER, campaign, measures=["AP", "P@10"])
    plan = evaluations.plan_evaluation(session, evaluation, 1e-9)
    for block in plan.blocks:
        evaluations.evaluate_block(session, evaluation, block)
    first, _ = stored_numbers(session, evaluation)
    evaluations.evaluate_block(session, evaluation, plan.blocks[2])  # the same block again, as a retry writes it
    again, _ = stored_numbers(session, evaluation)
    assert len(first) == 9 * 2 * 13
    assert {k: v for k, v in again.items() if first.get(k) != v} == {}
    assert again == first


def test_a_fanned_out_block_stored_twice_counts_once(module_session: Session, campaign: int) -> None:
    session = module_session
    reference = evaluations.start_evaluation(session, ORGANISER, campaign, measures=["AP", "P@10"])
    evaluations.run_evaluation(session, reference.id)
    evaluation = evaluations.start_evaluation(session, ORGANISER, campaign, measures=["AP", "P@10"])
    queued: list[list[list[int]]] = []
    evaluations.run_evaluation(session, evaluation.id, memory_mb=1e-9, fan_out=queued.append)
    blocks = queued[0]
    assert len(blocks) == 9 and evaluation.measures[evaluations.BLOCKS] == {"n": 9, "done": 0}
    evaluation.status = "running"  # as the worker that planned it left it
    assert evaluations.run_block(session, evaluation.id, 0, blocks[0])
    assert evaluations.run_block(session, evaluation.id, 0, blocks[0])  # its worker died after committing: again
    assert evaluation.measures[evaluations.BLOCKS] == {"n": 9, "done": 1}
    assert evaluation.progress == pytest.approx(0.1 + 0.8 / 9)
    for index, block in list(enumerate(blocks))[1:-1]:
        assert evaluations.run_block(session, evaluation.id, index, block)
    assert evaluation.status == "running" and evaluation.measures[evaluations.BLOCKS] == {"n": 9, "done": 8}
    assert evaluations.run_block(session, evaluation.id, 8, blocks[8])
    assert evaluation.status == "done" and evaluations.BLOCKS not in evaluation.measures
    assert stored_numbers(session, evaluation) == stored_numbers(session, reference)
    assert not evaluations.run_block(session, evaluation.id, 8, blocks[8])  # a late retry finds it done


def test_a_count_left_as_a_list_by_an_older_fan_out_goes_on(module_session: Session, campaign: int) -> None:
    session = module_session
    evaluation = evaluations.start_evaluation(session, ORGANISER, campaign, measures=["AP"])
    queued: list[list[list[int]]] = []
    evaluations.run_evaluation(session, evaluation.id, memory_mb=1e-9, fan_out=queued.append)
    evaluation.status = "running"
    for index, block in enumerate(queued[0][:3]):
        evaluations.run_block(session, evaluation.id, index, block)
    evaluation.measures = {**evaluation.measures, evaluations.BLOCKS: {"n": 9, "done": [0, 1, 2]}}
    assert evaluations.run_block(session, evaluation.id, 3, queued[0][3])
    assert evaluation.measures[evaluations.BLOCKS] == {"n": 9, "done": 4}


def test_a_moment_campaign_in_blocks_of_one_run_stores_the_numbers_of_one_block(module_session: Session) -> None:
    """Moment measures score each run on its own: blocks of one run store what one block stores, and the core's."""
    session = module_session
    made = new_campaign(session, n_topics=3, task_kind=TaskKind.moments)
    rng = np.random.default_rng(5)
    truth = "".join(f"{t}\tvid{t}\t{10 * k}\t{10 * k + 6}\n" for t in made.topics for k in range(3))
    evaluations.replace_ground_truth(session, ORGANISER, made.id, truth.encode(), max_errors=10)
    texts = []
    for i in range(5):
        starts = rng.integers(0, 40, size=12)
        texts.append("".join(f"{made.topics[k % 3]} vid{made.topics[(k + i) % 3]} {s} {s + 5} {1.0 - k / 20}\n"
                             for k, s in enumerate(starts.tolist())))  # fmt: skip
        made.submit(texts[-1], name=f"m{i}")
    campaigns.set_status(session, ORGANISER, made.id, CampaignStatus.closed)
    session.commit()
    numbers = []
    for memory_mb, n_blocks in [(1e-9, 5), (512.0, 1)]:
        evaluation = evaluations.start_evaluation(session, ORGANISER, made.id, measures=["AxIoU@5", "R@1,0.5"])
        plan = evaluations.plan_evaluation(session, evaluation, memory_mb)
        assert len(plan.blocks) == n_blocks and not plan.held
        done = evaluations.run_evaluation(session, evaluation.id, memory_mb=memory_mb)
        assert done.status == "done"
        numbers.append(stored_numbers(session, done))
    assert numbers[0] == numbers[1] and len(numbers[0][1]) == 5 * 2
    reference = evaluate_moments(
        parse_moment_ground_truth(truth.encode()), [parse_moment_run(t.encode()) for t in texts], ["AxIoU@5", "R@1,0.5"]
    )
    run_ids = sorted({run_id for run_id, _, _ in numbers[0][0]})
    for run_id, per_run in zip(run_ids, reference.values(), strict=True):
        for measure, per_topic in per_run.items():
            for topic, value in per_topic.items():
                assert numbers[0][0][(run_id, measure, topic)] == float(value).hex()
