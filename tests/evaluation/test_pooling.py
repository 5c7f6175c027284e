"""Pool builders against a brute-force reference; stratified sampling rates; seeds reproduce pools."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from app.evaluation.errors import FormatError
from app.evaluation.pools.builders import Stratum, build_pool, parse_strata, pool_stats, rank_rows
from tests.evaluation.pool_cases import FakeRun, brute_ranked, random_runs


@pytest.mark.parametrize("seed", range(20))
def test_depth_pool_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    runs = random_runs(rng)
    depth = int(rng.integers(1, 30))
    pool = build_pool(runs, depth=depth, seed=seed)
    expected: dict[tuple[str, str], list[int]] = {}
    for run in runs:
        for topic, ranked in brute_ranked(run).items():
            for rank, doc in enumerate(ranked[:depth], start=1):
                expected.setdefault((topic, doc), []).append(rank)
    got = {(t, d): (r, n) for t, d, r, n in zip(pool.topics, pool.docs, pool.best_ranks, pool.n_runs, strict=True)}
    assert got == {key: (min(ranks), len(ranks)) for key, ranks in expected.items()}
    assert pool.sampled.all() and (pool.strata == 1).all()
    for topic in set(pool.topics.tolist()):
        order = pool.judging_order[pool.topics == topic]
        assert sorted(order.tolist()) == list(range(len(order)))


def test_rank_rows_breaks_ties_by_docno_descending():
    run = FakeRun(np.array(["1"] * 4), np.array(["a", "c", "b", "z"]), np.array([1.0, 2.0, 2.0, 0.5]))
    _, _, docs, ranks = rank_rows([run])
    assert dict(zip(docs.tolist(), ranks.tolist(), strict=True)) == {"c": 1, "b": 2, "a": 3, "z": 4}


def test_stratum_is_that_of_the_best_rank():
    # doc x: rank 3 in run A, rank 1 in run B -> stratum 1; doc y: ranks 3 and 4 -> stratum 2 (2-3 is stratum 2)
    a = FakeRun(np.array(["1"] * 4), np.array(["p", "q", "x", "y"]), np.array([4.0, 3.0, 2.0, 1.0]))
    b = FakeRun(np.array(["1"] * 4), np.array(["x", "r", "y", "s"]), np.array([4.0, 3.0, 2.0, 1.0]))
    pool = build_pool([a, b], strata=[Stratum(1, 1, 1.0), Stratum(2, 3, 1.0), Stratum(4, 10, 1.0)], seed=1)
    strata = dict(zip(pool.docs.tolist(), pool.strata.tolist(), strict=True))
    assert strata == {"p": 1, "x": 1, "q": 2, "r": 2, "y": 2, "s": 3}


def test_sampling_rate_is_exact_per_topic_and_uniform_over_seeds():
    rng = np.random.default_rng(0)
    docs = np.array([f"d{i:04d}" for i in range(1000)])
    runs = [FakeRun(np.array(["1"] * 1000), rng.permutation(docs), np.arange(1000, 0, -1.0)) for _ in range(3)]
    strata = parse_strata("1-300:100%, 301-1000:0.25")
    hits = np.zeros(1000)
    n_in_stratum2 = None
    for seed in range(200):
        pool = build_pool(runs, strata=strata, seed=seed)
        second = pool.strata == 2
        n_in_stratum2 = int(second.sum())
        assert pool.sampled[~second].all()
        assert pool.sampled[second].sum() == int(np.floor(0.25 * n_in_stratum2 + 0.5))
        assert (pool.judging_order[~pool.sampled] == -1).all()
        hits[np.searchsorted(docs, pool.docs[second & pool.sampled])] += 1
    # every stratum-2 doc is sampled with probability 0.25: a chi-square test of uniformity across docs
    assert n_in_stratum2 is not None
    counted = hits[hits > 0]
    assert len(counted) > 0.95 * n_in_stratum2
    observed = np.bincount(np.searchsorted(docs, pool.docs[second]), minlength=1000)
    members = hits[observed > 0]
    assert stats.chisquare(members).pvalue > 1e-3
    assert abs(members.mean() / 200 - 0.25) < 0.01


def test_same_seed_same_pool_and_other_seed_other_order():
    runs = random_runs(np.random.default_rng(5), n_docs=200)
    strata = [Stratum(1, 10, 1.0), Stratum(11, 200, 0.3)]
    first, again = build_pool(runs, strata=strata, seed=42), build_pool(runs, strata=strata, seed=42)
    for field in ("topics", "docs", "strata", "sampled", "judging_order"):
        assert np.array_equal(getattr(first, field), getattr(again, field))
    other = build_pool(runs, strata=strata, seed=43)
    assert not np.array_equal(first.docs, other.docs)


def test_a_topics_sample_does_not_depend_on_other_topics():
    runs = random_runs(np.random.default_rng(9), n_docs=200)
    strata = [Stratum(1, 5, 1.0), Stratum(6, 200, 0.5)]
    full = build_pool(runs, strata=strata, seed=3)
    only_t1 = [FakeRun(r.topics[r.topics == "t1"], r.docs[r.topics == "t1"], r.scores[r.topics == "t1"]) for r in runs]
    alone = build_pool(only_t1, strata=strata, seed=3)
    mask = full.topics == "t1"
    assert np.array_equal(full.docs[mask], alone.docs)
    assert np.array_equal(full.sampled[mask], alone.sampled)


@pytest.mark.parametrize("spec", ["2-300:1.0", "1-300:1.0, 300-1000:0.25", "1-300:1.5", "1-300", "1-0:1"])
def test_bad_strata_are_rejected(spec):
    with pytest.raises(FormatError):
        parse_strata(spec)


def test_pool_stats():
    a = FakeRun(np.array(["1", "1", "1", "2"]), np.array(["x", "y", "z", "x"]), np.array([3.0, 2.0, 1.0, 1.0]))
    b = FakeRun(np.array(["1", "1"]), np.array(["x", "w"]), np.array([2.0, 1.0]))
    c = FakeRun(np.array(["1"]), np.array(["v"]), np.array([1.0]))
    pool = build_pool([a, b, c], depth=2, seed=0)
    # pooled topic 1: x (a,b), y (a), w (b), v (c); topic 2: x (a). z (rank 3 in a) is not pooled.
    result = pool_stats([a, b, c], pool, depth=2, groups=["g1", "g1", "g2"])
    assert result.topics == ["1", "2"]
    assert result.topic_strata == {"1": {1: (4, 4)}, "2": {1: (1, 1)}}
    assert result.judged_share[0].tolist() == [2 / 3, 1.0]
    assert result.judged_share[1, 0] == 1.0 and np.isnan(result.judged_share[1, 1])
    assert result.unique_per_run.tolist() == [2, 1, 1]  # a: y and topic-2 x; b: w; c: v
    assert result.unique_per_group == {"g1": 4, "g2": 1}


def test_topic_and_doc_keys_do_not_collide():
    # ("1", "1b") and ("11", "b") must stay two pool items
    a = FakeRun(np.array(["1", "11"]), np.array(["1b", "b"]), np.array([1.0, 1.0]))
    pool = build_pool([a], depth=5, seed=0)
    assert sorted(zip(pool.topics.tolist(), pool.docs.tolist(), strict=True)) == [("1", "1b"), ("11", "b")]
    stats = pool_stats([a], pool, depth=5)
    assert stats.judged_share.tolist() == [[1.0, 1.0]]


@pytest.mark.parametrize("seed", range(8))
def test_topic_rows_and_pool_order_are_the_plain_ones(seed: int) -> None:
    """Each topic's rows cut from sorted candidates are those a comparison finds, and the pool's order is
    np.lexsort((docs, key, topics)) whether the rows come in `topic<US>doc` key order (integers sorted) or not
    (strings sorted): topics that are prefixes of others, control characters below the separator, keys tied."""
    from app.evaluation.pools.builders import _pool_order, _topic_rows
    from app.evaluation.pools.keys import pair_keys

    rng = np.random.default_rng(seed)
    names = np.array(["1", "10", "2", "1\x01", "a", "b"])
    n = int(rng.integers(0, 300))
    topics = names[rng.integers(0, len(names), n)]
    docs = np.array([f"d{v}" for v in rng.integers(0, 60, n)])
    keys, first = np.unique(pair_keys(topics, docs), return_index=True)  # distinct pairs in key order
    shuffled = rng.permutation(len(keys))
    for at in (first, first[shuffled]):
        t, d = topics[at], docs[at]
        rows = list(_topic_rows(t))
        assert [name for name, _ in rows] == np.unique(t).tolist()
        for name, where in rows:
            assert where.tolist() == np.flatnonzero(t == name).tolist()
        key = np.where(rng.random(len(t)) < 0.5, rng.integers(0, 5, len(t)), np.iinfo(np.int64).max)
        assert _pool_order(t, d, key, rows).tolist() == np.lexsort((d, key, t)).tolist()
