"""Pool statistics in blocks of runs within a memory budget: the same statistics, bit for bit, from many small
blocks as from every run at once, and unique contributions as a brute-force count gives them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.evaluation.pools.builders import PoolStats, PoolStatsTally, PoolTable, Stratum, build_pool, pool_stats
from app.services import campaigns, pools, run_blocks, teams
from app.storage.models import CampaignStatus, Run, Team
from tests.services.conftest import ORGANISER, Campaign, new_campaign

TINY, WHOLE = 1e-9, 512.0  # budgets: blocks of one run; one block
TWELVE_STRATA = tuple(Stratum(3 * i + 1, 3 * i + 3, 0.6) for i in range(12))  # strata 10-12 sort before 2 as text


@dataclass(frozen=True)
class Ranked:
    """A run as pooling reads it."""

    topics: np.ndarray
    docs: np.ndarray
    scores: np.ndarray


def seeded_runs(seed: int, n_runs: int = 7, n_topics: int = 9) -> list[Ranked]:
    """Runs with tied scores, skipped topics and lists of different lengths, from a seed."""
    rng = np.random.default_rng(seed)
    made = []
    for _ in range(n_runs):
        topics, docs, scores = [], [], []
        for t in range(n_topics):
            if rng.random() < 0.2:
                continue
            k = int(rng.integers(1, 45))
            topics += [f"t{t}"] * k
            docs += [f"d{d}" for d in rng.choice(50, size=k, replace=False).tolist()]
            scores += rng.integers(0, 5, size=k).astype(float).tolist()
        made.append(Ranked(np.array(topics, dtype=str), np.array(docs, dtype=str), np.array(scores)))
    return made


def same(a: PoolStats, b: PoolStats) -> bool:
    """Whether two statistics are equal bit for bit, dict orders included."""
    return (
        a.topics == b.topics
        and [(t, list(s.items())) for t, s in a.topic_strata.items()]
        == [(t, list(s.items())) for t, s in b.topic_strata.items()]
        and a.judged_share.shape == b.judged_share.shape
        and a.judged_share.tobytes() == b.judged_share.tobytes()
        and a.unique_per_run.dtype == b.unique_per_run.dtype
        and a.unique_per_run.tolist() == b.unique_per_run.tolist()
        and list(a.unique_per_group.items()) == list(b.unique_per_group.items())
    )


def brute_unique(
    runs: list[Ranked], pool: PoolTable, depth: int, groups: list[str], depths: dict[str, int] | None
) -> tuple[list[int], dict[str, int]]:
    """Unique contributions per run and group counted item by item: the rows ranked within their topic's depth
    (trec order: score, then docno, descending) of each pooled (topic, doc)."""
    pooled = set(zip(pool.topics.tolist(), pool.docs.tolist(), strict=True))
    rows: dict[tuple[str, str], list[int]] = {}
    for i, run in enumerate(runs):
        by_topic: dict[str, list[tuple[float, str]]] = {}
        for t, d, s in zip(run.topics.tolist(), run.docs.tolist(), run.scores.tolist(), strict=True):
            by_topic.setdefault(t, []).append((s, d))
        for t, listed in by_topic.items():
            for _, d in sorted(listed, reverse=True)[: (depths or {}).get(t, depth)]:
                if (t, d) in pooled:
                    rows.setdefault((t, d), []).append(i)
    per_run = [0] * len(runs)
    per_group = dict.fromkeys(sorted(set(groups)), 0)
    for contributors in rows.values():
        if len(contributors) == 1:
            per_run[contributors[0]] += 1
        if len({groups[i] for i in contributors}) == 1:
            per_group[groups[contributors[0]]] += 1
    return per_run, per_group


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["twelve-strata", "per-topic-depths", "deeper-than-pool"])
def test_a_tally_of_small_blocks_is_the_statistics_of_one_block(seed: int, kind: str) -> None:
    runs = seeded_runs(seed)
    groups = [f"g{(i * 5 + seed) % 3}" for i in range(len(runs))]
    depths = None
    if kind == "twelve-strata":
        pool, depth = build_pool(runs, strata=TWELVE_STRATA, seed=seed), 36
    elif kind == "per-topic-depths":
        depths, depth = {"t1": 2, "t3": 30}, 6
        pool = build_pool(runs, depth=depth, depths=depths, seed=seed)
    else:
        pool, depth = build_pool(runs, depth=4, seed=seed), 10  # rows below the pool depth contribute nothing
    whole = pool_stats(runs, pool, depth=depth, groups=groups, depths=depths)
    for cuts in ([0, 1, 2, 3, 4, 5, 6, 7], [0, 3, 7], [0, 0, 6, 7]):  # an empty block counts nothing
        tally = PoolStatsTally(pool, depth=depth, groups=groups, depths=depths)
        for first, last in zip(cuts, cuts[1:], strict=False):
            tally.add(runs[first:last])
        assert same(tally.result(), whole)
    assert whole.judged_share.shape == (7, len(whole.topics)) and np.isnan(whole.judged_share).any()
    per_run, per_group = brute_unique(runs, pool, depth, groups, depths)
    assert whole.unique_per_run.tolist() == per_run and whole.unique_per_group == per_group
    assert whole.unique_per_run.sum() > 0
    if kind == "twelve-strata":
        assert all(list(s) == sorted(s, key=str) for s in whole.topic_strata.values())  # text order, as before
        assert any(10 in s for s in whole.topic_strata.values())


def test_a_block_that_breaks_an_items_only_group_makes_it_shared() -> None:
    one = Ranked(np.array(["1", "1"]), np.array(["x", "y"]), np.array([2.0, 1.0]))
    other = Ranked(np.array(["1"]), np.array(["x"]), np.array([1.0]))
    runs = [one, one, other]
    pool = build_pool(runs, depth=2, seed=0)
    tally = PoolStatsTally(pool, depth=2, groups=["a", "a", "b"])
    for run in runs:
        tally.add([run])
    result = tally.result()
    assert result.unique_per_run.tolist() == [0, 0, 0]  # x and y each come from two runs' rows
    assert result.unique_per_group == {"a": 1, "b": 0}  # y only from group a; x from both
    assert same(result, pool_stats(runs, pool, depth=2, groups=["a", "a", "b"]))


@pytest.mark.parametrize(
    "spec",
    [
        pools.PoolSpec(kind="stratified", strata="1-2:1.0, 3-4:1.0, 5-6:1.0, 7-8:1.0, 9-10:1.0, 11-30:0.5", seed=3),
        pools.PoolSpec(kind="depth", depth=4, depths={"2": 1, "5": 12}, seed=5),
    ],
    ids=["stratified", "per-topic-depths"],
)
def test_pool_statistics_in_blocks_of_one_run_are_those_of_one_block(session: Session, spec: pools.PoolSpec) -> None:
    made = new_campaign(session, n_topics=6)
    other, _ = teams.create_team(session, ORGANISER, made.id, "other team")
    rng = np.random.default_rng(21)
    for i in range(6):
        team = made if i % 3 else Campaign(session, made.id, other.id, made.topics)
        lines = []
        for t in made.topics[: 6 - i % 2]:
            docs = rng.permutation(35)[: 8 + 3 * i]
            scores = rng.integers(0, 6, size=len(docs))
            ranked = enumerate(zip(docs.tolist(), scores.tolist(), strict=True))
            lines += [f"{t} Q0 d{d} {r + 1} {s} r{i}\n" for r, (d, s) in ranked]
        team.submit("".join(lines), name=f"r{i}")
    campaigns.set_status(session, ORGANISER, made.id, CampaignStatus.closed)
    pool = pools.create_pool(session, ORGANISER, made.id, spec, memory_mb=WHOLE)
    runs = list(session.scalars(select(Run).where(Run.campaign_id == made.id)))
    assert len(run_blocks.plan_blocks(runs, TINY)) == 6 and len(run_blocks.plan_blocks(runs, WHOLE)) == 1
    stats = [pools.pool_statistics(session, pool, memory_mb=m) for m in (TINY, WHOLE)]
    assert stats[0] == stats[1]
    assert stats[0]["judged_share"] == stats[1]["judged_share"]  # floats compared exactly by ==
    assert [r["run"] for r in stats[0]["runs"]] == [f"r{i}" for i in range(6)]  # type: ignore[attr-defined]
    assert sum(r["unique_contributions"] for r in stats[0]["runs"]) > 0  # type: ignore[attr-defined]
    own = session.get(Team, made.team_id)
    assert own is not None and [t["team"] for t in stats[0]["teams"]] == sorted([own.name, "other team"])  # type: ignore[attr-defined]
    session.rollback()
