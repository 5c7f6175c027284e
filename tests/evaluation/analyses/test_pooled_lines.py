"""Pool-depth and leave-out over blocks of prepared runs: the numbers of one block, bit for bit, and the first pass's
line ranks and owners against the whole-array functions and a plain-Python reference."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.evaluation.analyses import index_lines, leave_out, line_min_rank, pool_depth
from app.evaluation.analyses.judged_depth import judged_fraction, sampled_share
from app.evaluation.analyses.lines import NEVER, run_mask
from app.evaluation.analyses.novelty import novelty_scores, unique_relevant
from app.evaluation.analyses.pooled_lines import OneBlock, cut_scores, pooled_lines
from app.evaluation.analyses.qrels_comparison import compare_qrels
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.records import Qrels
from tests.evaluation.analyses.brute import Blocks, novelty_counts, random_collection, trec_order


def _same(a, b) -> bool:
    """Two results' plain data alike (floats as their shortest exact text, NaN included)."""
    return json.dumps(a.to_dict(), sort_keys=True) == json.dumps(b.to_dict(), sort_keys=True)


def _collection(seed: int):
    runs, qrels = random_collection(seed, n_run=7, n_topic=5, n_doc=30, length=12)
    return runs, qrels


@pytest.mark.parametrize("seed", range(6))
def test_first_pass_matches_whole_arrays_and_plain_python(seed):
    runs, qrels = _collection(seed)
    names = [r.tag for r in runs]
    teams = np.array([i % 3 for i in range(len(runs))])
    pooled = run_mask(names, names[::2] + names[1:2])
    whole = prepare_runs(runs)
    index = index_lines(whole, qrels)
    caps = np.array([2, 5, 0, 12, 3])[: len(index.topics)]
    lines = pooled_lines(Blocks(runs, 2), qrels, pooled, teams)
    one = pooled_lines(OneBlock(whole), qrels, pooled, teams)
    prepared_caps = np.array([dict(zip(index.topics, caps.tolist(), strict=True)).get(t, 0) for t in whole.topics])
    assert np.array_equal(lines.within(None), line_min_rank(index, pooled))
    assert np.array_equal(lines.within(caps), line_min_rank(index, pooled, prepared_caps))
    for field in ("best", "other", "owned", "judged", "entries"):
        assert np.array_equal(getattr(lines, field), getattr(one, field)), field
    # plain Python: each (topic, doc)'s units ranking it within its topic's cap
    cap_of = dict(zip(index.topics, caps.tolist(), strict=True))
    units_of: dict[tuple[str, str], set[int]] = {}
    for r, run in enumerate(runs):
        if not pooled[r]:
            continue
        for topic, docs in trec_order(run).items():
            for rank, doc in enumerate(docs, start=1):
                if rank <= cap_of.get(topic, 0):
                    units_of.setdefault((topic, doc), set()).add(int(teams[r]))
    last = {}
    for i, key in enumerate(zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True)):
        last[key] = i
    owner = lines.owner(caps)
    for i, key in enumerate(zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True)):
        units = units_of.get(key, set())
        expected = next(iter(units)) if len(units) == 1 and last[key] == i else -1
        assert owner[i] == expected, key
    assert (lines.within(caps) < NEVER).sum() == sum(
        1 for k in zip(qrels.topics.tolist(), qrels.docs.tolist(), strict=True) if k in units_of
    )


@pytest.mark.parametrize("measure", ["AP", "nDCG@10", "P@5"])
@pytest.mark.parametrize("size", [1, 3])
def test_blocks_give_the_numbers_of_one_block(measure, size):
    runs, qrels = _collection(11)
    names = [r.tag for r in runs]
    pooled = names[:4]
    blocks = Blocks(runs, size)
    one = pool_depth(qrels, runs, measure=measure, pooled=pooled, max_depth=12, pool=4)
    split = pool_depth(qrels, blocks, measure=measure, pooled=pooled, max_depth=12, pool=4)
    assert blocks.passes == 1 and blocks.children[0].passes == 1  # the pooled runs for the lines, every run to score
    assert blocks.children[0].names == pooled
    assert _same(split, one)
    assert np.array_equal(split.scores, one.scores) and np.array_equal(split.full, one.full)
    teams = [f"team{i % 3}" for i in range(len(runs))]
    for depth in (3, {"t0": 1, "t1": 6}):
        whole = leave_out(qrels, runs, units=teams, by="team", measure=measure, pooled=pooled, depth=depth)
        parts = leave_out(qrels, Blocks(runs, size), units=teams, by="team", measure=measure, pooled=pooled,
                          depth=depth)  # fmt: skip
        assert _same(parts, whole)
        assert np.array_equal(parts.unit_scores, whole.unit_scores)
        assert whole.removed_lines.sum() > 0  # the cut does something


@pytest.mark.parametrize("size", [1, 3])
def test_ap_with_every_run_pooled_reads_the_runs_once_for_the_numbers_of_two_passes(size):
    """Pool-depth and leave-out of AP over every run keep each run's relevant retrieved entries in the first pass and
    score the cuts from them: one pass, and the numbers the second pass scores from the runs, bit for bit."""
    runs, qrels = _collection(12)
    teams = np.array([i % 3 for i in range(len(runs))])
    blocks = Blocks(runs, size)
    once = pool_depth(qrels, blocks, measure="AP", max_depth=12, pool=4)
    assert blocks.passes + sum(child.passes for child in blocks.children) == 1  # the pooled runs' pass only
    two_passes = pooled_lines(Blocks(runs, size), qrels, np.ones(len(runs), dtype=bool))  # no kernel kept
    assert two_passes.kernel is None
    reference = pool_depth(qrels, Blocks(runs, size), measure="AP", max_depth=12, pool=4, lines=two_passes)
    assert _same(once, reference) and np.array_equal(once.scores, reference.scores)
    assert len(set(once.scores[:, 0].tolist())) > 2  # the cuts change the scores
    blocks = Blocks(runs, size)
    left = leave_out(qrels, blocks, units=[f"team{t}" for t in teams], by="team", measure="AP", depth=3)
    assert blocks.passes + sum(child.passes for child in blocks.children) == 1
    lines = pooled_lines(OneBlock(prepare_runs(runs)), qrels, np.ones(len(runs), dtype=bool), teams, kernel=True)
    caps = np.full(len(lines.topics), 3, dtype=np.int64)
    cuts = [lambda: None] + [lambda u=u: lines.owner(caps) != u for u in range(3)]
    from_entries = cut_scores(Blocks(runs, size), qrels, "AP", cuts, kernel=lines.kernel)
    from_runs = cut_scores(Blocks(runs, size), qrels, "AP", cuts)
    assert from_entries.tobytes() == from_runs.tobytes()
    assert np.array_equal(left.original, from_runs[0]) and left.removed_lines.sum() > 0


def test_blocks_on_stratified_qrels_give_the_xinfap_of_one_block(shared_data):
    avs = shared_data / "trecvid-avs-2021"
    qrels = read_qrels(avs / "avs.qrels.main.tv21")
    runs = [read_run(p) for p in sorted((avs / "runs").iterdir())][:4]
    names = [r.tag for r in runs]
    one = pool_depth(qrels, runs, measure="xinfAP", pooled=names[:2], depths=[1, 10, 100])
    split = pool_depth(qrels, Blocks(runs, 1), measure="xinfAP", pooled=names[:2], depths=[1, 10, 100])
    assert _same(split, one)
    whole = leave_out(qrels, runs, measure="xinfAP", pooled=names[:3], depth=50)
    parts = leave_out(qrels, Blocks(runs, 1), measure="xinfAP", pooled=names[:3], depth=50)
    assert _same(parts, whole) and whole.removed_lines.sum() > 0


def test_blocks_infer_the_pool_depths_of_one_block(shared_data):
    covid = shared_data / "trec-covid-round1"
    qrels = read_qrels(covid / "qrels.txt")
    runs = [read_run(p) for p in sorted((covid / "runs").glob("*.gz"))][:8]
    teams = [f"team{i // 3}" for i in range(len(runs))]
    whole = leave_out(qrels, runs, units=teams, by="team")
    parts = leave_out(qrels, Blocks(runs, 3), units=teams, by="team")
    assert whole.pool.source == "inferred" and whole.pool.depths.max() >= 1
    assert _same(parts, whole) and whole.removed_lines.sum() > 0


@pytest.mark.parametrize("size", [1, 2, 5])
def test_judged_fraction_over_blocks_is_that_of_one_block(size):
    runs, qrels = _collection(5)
    whole = judged_fraction(qrels, runs, depths=[1, 3, 7, 12, 50])
    parts = judged_fraction(qrels, Blocks(runs, size), depths=[1, 3, 7, 12, 50])
    assert _same(parts, whole)
    assert np.isfinite(whole.list_mean).all() and (whole.list_min < whole.list_max).any()


@pytest.mark.parametrize("measure", ["AP", "nDCG@10"])
def test_qrels_versions_over_blocks_are_those_of_one_block(measure):
    runs, qrels = _collection(8)
    _, other = _collection(9)  # another collection's qrels: some topics and docs differ
    strict = qrels.subset(np.asarray(qrels.grades) >= 1)
    labels, versions = ["all", "strict", "other"], [qrels, strict, other]
    whole = compare_qrels(labels, versions, runs, measure=measure)
    seen: list[float] = []
    parts = compare_qrels(labels, versions, Blocks(runs, 2), measure=measure, progress=seen.append)
    assert _same(parts, whole)
    assert seen == sorted(seen) and seen[-1] == pytest.approx(1.0) and len(seen) == 3 * 4  # 4 blocks of 7 runs


@pytest.mark.parametrize("size", [1, 3])
def test_unique_relevant_over_blocks_is_that_of_one_block(size):
    runs, qrels = _collection(4)
    relevant = np.flatnonzero(np.asarray(qrels.grades) >= 1)[:3]
    doubled = Qrels(  # a relevant line repeated, and one judged again not relevant: each shot still counts once
        topics=np.concatenate([qrels.topics, qrels.topics[relevant]]),
        docs=np.concatenate([qrels.docs, qrels.docs[relevant]]),
        grades=np.concatenate([qrels.grades, np.array([1, 0, 2], dtype=qrels.grades.dtype)]),
    )
    teams = ["a", "b", "a", "c", "b", "c", "c"]
    for judged in (qrels, doubled):
        whole = unique_relevant(judged, runs, teams)
        parts = unique_relevant(judged, Blocks(runs, size), teams)
        assert _same(parts, whole)
        for field in ("run_hits", "run_unique", "team_hits", "team_unique", "found", "unique", "relevant"):
            assert np.array_equal(getattr(parts, field), getattr(whole, field)), field
        assert 0 < whole.unique.sum() < whole.found.sum()
    assert unique_relevant(doubled, runs, teams).found.sum() == unique_relevant(qrels, runs, teams).found.sum()


@pytest.mark.parametrize("size", [1, 3])
def test_novelty_scores_over_blocks_are_those_of_one_block_and_of_plain_python(size):
    runs, qrels = _collection(6)
    judged = np.flatnonzero(np.asarray(qrels.grades) >= 0)[:4]
    doubled = Qrels(  # judged lines repeated with other grades: the last line of a (topic, doc) decides
        topics=np.concatenate([qrels.topics, qrels.topics[judged]]),
        docs=np.concatenate([qrels.docs, qrels.docs[judged]]),
        grades=np.concatenate([qrels.grades, np.array([1, 0, 2, -1], dtype=qrels.grades.dtype)]),
    )
    teams = ["a", "b", "a", "c", "b", "c", "c"]
    for graded in (qrels, doubled):
        whole = novelty_scores(graded, runs, teams, max_results=10, penalty=0.5)
        parts = novelty_scores(graded, Blocks(runs, size, max_results=10), teams, max_results=10, penalty=0.5)
        assert _same(parts, whole)
        assert np.array_equal(parts.unique_true, whole.unique_true)
        assert np.array_equal(parts.common_false, whole.common_false)
        expected = novelty_counts(graded, runs, teams, max_results=10)
        for r, run in enumerate(runs):
            for t, topic in enumerate(whole.topics):
                counts = (int(whole.unique_true[r, t]), int(whole.common_false[r, t]))
                assert counts == expected.get((run.tag, topic), (0, 0)), (run.tag, topic)
        assert whole.unique_true.sum() > 0 and whole.common_false.sum() > 0


@pytest.mark.parametrize("size", [1, 4])
def test_sampled_share_over_blocks_is_that_of_one_block(size):
    runs, qrels = _collection(7)
    whole = sampled_share(qrels, runs, first=3, last=9, max_results=10)
    parts = sampled_share(qrels, Blocks(runs, size, max_results=10), first=3, last=9, max_results=10)
    assert _same(parts, whole)
    assert np.array_equal(parts.judged, whole.judged) and np.array_equal(parts.retrieved, whole.retrieved)
    assert 0 < whole.judged.sum() < whole.retrieved.sum()
