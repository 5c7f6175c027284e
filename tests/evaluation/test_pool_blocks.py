"""Pools built from runs a block at a time (`pool_candidates` per block, `merge_candidates`, `sample_pool`): the same
pool, row for row, as `build_pool` over every run at once, and the same per-run lists for adaptive orders."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypedDict

import numpy as np
import pytest

from app.evaluation.pools.builders import (
    PoolTable,
    Stratum,
    build_pool,
    merge_candidates,
    pool_candidates,
    pool_strata,
    sample_pool,
)
from app.evaluation.pools.queues import planned_orders, topic_lists
from tests.evaluation.pool_cases import FakeRun, random_runs


class Kind(TypedDict, total=False):
    """A pool's kind as `build_pool` takes it."""

    strata: Sequence[Stratum]
    depth: int
    depths: Mapping[str, int]


STRATA = (Stratum(1, 3, 1.0), Stratum(4, 12, 0.5), Stratum(13, 30, 0.2))


def same(a: PoolTable, b: PoolTable) -> None:
    """Every column equal."""
    for field in ("topics", "docs", "strata", "sampled", "best_ranks", "n_runs", "judging_order"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field


def in_blocks(runs: Sequence[FakeRun], size: int, seed: int, kind: Kind) -> PoolTable:
    """The pool of `runs` from blocks of `size` runs, merged one block at a time as the service does."""
    strata = pool_strata(**kind)
    merged = None
    for i in range(0, len(runs), size):
        part = pool_candidates(runs[i : i + size], strata, depth=kind.get("depth"), depths=kind.get("depths"))
        merged = part if merged is None else merge_candidates([merged, part])
    assert merged is not None
    return sample_pool(merged, strata, seed=seed)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize(
    "kind",
    [{"strata": STRATA}, {"depth": 5}, {"depth": 4, "depths": {"t0": 1, "t2": 9}}],
    ids=["strata", "depth", "depths"],
)
def test_a_pool_built_in_blocks_is_the_pool_of_every_run_at_once(seed: int, kind: Kind) -> None:
    runs = random_runs(np.random.default_rng(seed), n_runs=7)
    whole = build_pool(runs, seed=seed, **kind)
    assert len(whole) > 0
    assert whole.sampled.all() == ("strata" not in kind)  # the strata sample, depth pools judge everything
    for size in (1, 3, 7):
        same(in_blocks(runs, size, seed, kind), whole)


@pytest.mark.parametrize("order", ["move_to_front", "mtc", "hedge", "mtc_hedge"])
def test_per_run_lists_joined_from_blocks_plan_the_same_judging_order(order: str) -> None:
    runs = random_runs(np.random.default_rng(5), n_runs=6)
    table = build_pool(runs, strata=STRATA, seed=9)
    topics, docs = table.topics[table.sampled], table.docs[table.sampled]
    whole = topic_lists(runs, topics, docs, 30)
    joined: dict[str, list[list[str]]] = {}
    for i in range(0, len(runs), 2):
        for topic, per_run in topic_lists(runs[i : i + 2], topics, docs, 30).items():
            joined.setdefault(topic, []).extend(per_run)
    assert joined == whole
    assert any(len(lists[0]) for lists in whole.values())
    assert np.array_equal(planned_orders(table, joined, order, 9, 4), planned_orders(table, whole, order, 9, 4))
