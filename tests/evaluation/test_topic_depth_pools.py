"""Depth pools with a depth per topic (Westerveld's 50 or 100, TREC's real pools): the builder equals the union of
per-topic depth-k pools built one topic at a time, and a brute-force pool; pool statistics count a run's contribution
within its topic's own depth; TREC-COVID round 1 with odd topics at 50 and even at 100 is the two depth pools, each
restricted to its topics."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from app.evaluation.formats.trec_files import parse_trec_run, read_bytes
from app.evaluation.pools.builders import PoolTable, Stratum, build_pool, pool_stats, topic_caps
from tests.evaluation.pool_cases import FakeRun, brute_ranked, random_runs

COLUMNS = ("topics", "docs", "strata", "sampled", "best_ranks", "n_runs", "judging_order")


@dataclass(frozen=True)
class Subset:
    """A run's rows of some topics only."""

    topics: np.ndarray
    docs: np.ndarray
    scores: np.ndarray


def only(run: FakeRun | Subset, topics: set[str]) -> Subset:
    """The run's rows of `topics`."""
    keep = np.isin(np.asarray(run.topics, dtype=str), sorted(topics))
    return Subset(np.asarray(run.topics)[keep], np.asarray(run.docs)[keep], np.asarray(run.scores)[keep])


def union(tables: list[PoolTable]) -> PoolTable:
    """Pools of disjoint topic sets as one, sorted by topic as `build_pool` sorts (stable: judging order kept)."""
    joined = {c: np.concatenate([getattr(t, c) for t in tables]) for c in COLUMNS}
    order = np.argsort(joined["topics"], kind="stable")
    return PoolTable(**{c: v[order] for c, v in joined.items()})


def assert_same_pool(got: PoolTable, expected: PoolTable) -> None:
    """Every column equal, row for row."""
    for column in COLUMNS:
        assert getattr(got, column).tolist() == getattr(expected, column).tolist(), column


@pytest.mark.parametrize("seed", range(12))
def test_per_topic_depths_equal_per_topic_depth_pools_and_brute_force(seed):
    rng = np.random.default_rng(seed)
    runs = random_runs(rng, n_topics=5)
    default = int(rng.integers(1, 20))
    depths = {f"t{t}": int(rng.integers(1, 40)) for t in range(5) if rng.random() < 0.7}
    pool = build_pool(runs, depth=default, depths=depths, seed=seed)
    # independently: each topic's own depth-k pool over the runs restricted to it
    topics = sorted({t for run in runs for t in run.topics.tolist()})
    parts = [build_pool([only(r, {t}) for r in runs], depth=depths.get(t, default), seed=seed) for t in topics]
    assert_same_pool(pool, union(parts))
    expected: dict[tuple[str, str], list[int]] = {}
    for run in runs:
        for topic, ranked in brute_ranked(run).items():
            for rank, doc in enumerate(ranked[: depths.get(topic, default)], start=1):
                expected.setdefault((topic, doc), []).append(rank)
    got = {(t, d): (r, n) for t, d, r, n in zip(pool.topics, pool.docs, pool.best_ranks, pool.n_runs, strict=True)}
    assert got == {key: (min(ranks), len(ranks)) for key, ranks in expected.items()}
    assert pool.sampled.all() and (pool.strata == 1).all()


def test_a_uniform_map_is_the_scalar_depth_and_bad_depths_are_errors():
    runs = random_runs(np.random.default_rng(7), n_topics=4)
    scalar = build_pool(runs, depth=9, seed=3)
    assert_same_pool(build_pool(runs, depth=1, depths={f"t{t}": 9 for t in range(4)}, seed=3), scalar)
    assert_same_pool(build_pool(runs, depth=9, depths={"t1": 9}, seed=3), scalar)
    deeper = build_pool(runs, depth=9, depths={"t1": 30}, seed=3)
    assert len(deeper) > len(scalar)  # t1 has lists longer than 9
    assert set(deeper.topics[deeper.best_ranks > 9].tolist()) == {"t1"}
    with pytest.raises(ValueError, match="depth must be >= 1"):
        build_pool(runs, depth=5, depths={"t0": 0})
    with pytest.raises(ValueError, match="need a depth pool"):
        build_pool(runs, strata=(Stratum(1, 5, 1.0),), depths={"t0": 3})


def test_topic_caps_per_row():
    caps = topic_caps(np.array(["b", "a", "c", "b"]), {"b": 50, "c": 100}, 7)
    assert caps.tolist() == [50, 7, 100, 50]
    assert topic_caps(np.array([], dtype=str), {"a": 1}, 3).tolist() == []


@pytest.mark.parametrize("seed", range(6))
def test_pool_stats_count_contributions_within_each_topics_depth(seed):
    rng = np.random.default_rng(100 + seed)
    runs = random_runs(rng, n_runs=5, n_topics=4)
    depths = {"t0": 3, "t1": 25, "t2": 8}
    default = 12
    pool = build_pool(runs, depth=default, depths=depths, seed=seed)
    groups = ["g0", "g0", "g1", "g2", "g2"]
    stats = pool_stats(runs, pool, depth=default, groups=groups, depths=depths)
    contributors: dict[tuple[str, str], set[int]] = {}
    for i, run in enumerate(runs):
        for topic, ranked in brute_ranked(run).items():
            for doc in ranked[: depths.get(topic, default)]:
                contributors.setdefault((topic, doc), set()).add(i)
    assert set(contributors) == set(zip(pool.topics.tolist(), pool.docs.tolist(), strict=True))
    unique = [sum(c == {i} for c in contributors.values()) for i in range(len(runs))]
    assert stats.unique_per_run.tolist() == unique
    by_group = {g: sum({groups[i] for i in c} == {g} for c in contributors.values()) for g in sorted(set(groups))}
    assert stats.unique_per_group == by_group


@pytest.fixture(scope="module")
def covid_runs(shared_data: Path) -> list:
    """TREC-COVID round 1's runs, parsed once."""
    paths = sorted((shared_data / "trec-covid-round1" / "runs").glob("*.gz"))
    assert len(paths) == 30
    return [parse_trec_run(read_bytes(path)) for path in paths]


def test_trec_covid_odd_topics_at_50_and_even_at_100_is_two_depth_pools(covid_runs):
    topics = sorted({t for run in covid_runs for t in np.asarray(run.topics, dtype=str).tolist()}, key=int)
    assert len(topics) == 30
    odd = {t for t in topics if int(t) % 2 == 1}
    even = set(topics) - odd
    depths = {t: 50 if t in odd else 100 for t in topics}
    pool = build_pool(covid_runs, depth=1, depths=depths, seed=2020)
    at_50 = build_pool([only(r, odd) for r in covid_runs], depth=50, seed=2020)
    at_100 = build_pool([only(r, even) for r in covid_runs], depth=100, seed=2020)
    assert_same_pool(pool, union([at_50, at_100]))
    # and the same as the whole depth pools, each cut to its topics
    whole_50, whole_100 = build_pool(covid_runs, depth=50, seed=2020), build_pool(covid_runs, depth=100, seed=2020)
    for whole, chosen in ((whole_50, odd), (whole_100, even)):
        mine = np.isin(pool.topics, sorted(chosen))
        theirs = np.isin(whole.topics, sorted(chosen))
        for column in COLUMNS:
            assert getattr(pool, column)[mine].tolist() == getattr(whole, column)[theirs].tolist(), column
    assert len(pool) == int(np.isin(whole_50.topics, sorted(odd)).sum() + np.isin(whole_100.topics, sorted(even)).sum())
    assert int(pool.best_ranks[np.isin(pool.topics, sorted(odd))].max()) == 50
    assert int(pool.best_ranks[np.isin(pool.topics, sorted(even))].max()) == 100
