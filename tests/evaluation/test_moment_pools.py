"""The moment pool builder and segment-set agreement, against hand-worked cases."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.moments.parse import parse_moment_run
from app.evaluation.pools.moments import (
    build_moment_pool,
    covered_by,
    merge_intervals,
    segment_set_iou,
    union_length,
)

# run A, topic 1: v1 [10,20] 0.9, v1 [50,60] 0.8, v2 [0,5] 0.7 ; topic 2: v3 [0,10] 0.5
RUN_A = "1\tv1\t10\t20\t0.9\n1\tv1\t50\t60\t0.8\n1\tv2\t0\t5\t0.7\n2\tv3\t0\t10\t0.5\n"
# run B, topic 1: v1 [12,22] 0.95 (IoU with A's [10,20] = 8/12 = 0.667), v1 [55,70] 0.1 (IoU with [50,60] = 5/20),
#                 v2 [100,110] 0.05 (rank 3)
RUN_B = "1\tv1\t12\t22\t0.95\n1\tv1\t55\t70\t0.1\n1\tv2\t100\t110\t0.05\n"


def _runs():
    return [parse_moment_run(RUN_A), parse_moment_run(RUN_B)]


def _rows(pool):
    return sorted(
        zip(
            pool.topics.tolist(),
            pool.videos.tolist(),
            pool.starts.tolist(),
            pool.ends.tolist(),
            pool.best_ranks.tolist(),
            pool.n_runs.tolist(),
            strict=True,
        )
    )


def test_depth_two_merges_segments_over_the_threshold_into_their_span():
    pool = build_moment_pool(_runs(), depth=2, iou=0.5, seed=1)
    # depth 2: A keeps [10,20] (r1), [50,60] (r2) in topic 1 and [0,10] in topic 2; B keeps [12,22] (r1), [55,70] (r2)
    # [10,20] ~ [12,22] (IoU 0.667 >= 0.5) merge to [10,22], 2 runs; [50,60] and [55,70] (IoU 0.25) stay apart
    assert _rows(pool) == [
        ("1", "v1", 10.0, 22.0, 1, 2),
        ("1", "v1", 50.0, 60.0, 2, 1),
        ("1", "v1", 55.0, 70.0, 2, 1),
        ("2", "v3", 0.0, 10.0, 1, 1),
    ]


def test_a_lower_threshold_merges_more_and_a_deeper_pool_takes_more():
    low = build_moment_pool(_runs(), depth=2, iou=0.2, seed=1)
    assert [r[:4] for r in _rows(low)] == [("1", "v1", 10.0, 22.0), ("1", "v1", 50.0, 70.0), ("2", "v3", 0.0, 10.0)]
    deep = build_moment_pool(_runs(), depth=3, iou=0.5, seed=1)
    # rank 3 adds A's v2 [0,5] and B's v2 [100,110]: same video, no overlap, two segments
    assert ("1", "v2", 0.0, 5.0, 3, 1) in _rows(deep) and ("1", "v2", 100.0, 110.0, 3, 1) in _rows(deep)
    assert len(deep) == 6


def test_merging_is_transitive_and_only_within_one_video():
    # [0,10] ~ [2,12] (IoU 8/12) and [2,12] ~ [4,14] (8/12), but [0,10] vs [4,14] is 6/14 < 0.5: one chain, one span
    run = parse_moment_run("1\tv\t0\t10\t3\n1\tv\t2\t12\t2\n1\tv\t4\t14\t1\n1\tw\t0\t10\t0.5\n")
    pool = build_moment_pool([run], depth=10, iou=0.5)
    assert _rows(pool) == [("1", "v", 0.0, 14.0, 1, 1), ("1", "w", 0.0, 10.0, 4, 1)]


def test_ties_in_score_are_broken_by_file_order():
    run = parse_moment_run("1\tv\t0\t1\t1\n1\tv\t5\t6\t1\n1\tv\t9\t10\t2\n")
    pool = build_moment_pool([run], depth=2, iou=0.5)
    assert _rows(pool) == [("1", "v", 0.0, 1.0, 2, 1), ("1", "v", 9.0, 10.0, 1, 1)]


def test_judging_order_is_a_seeded_permutation_per_topic_independent_of_other_topics():
    many = "".join(f"1\tv{i}\t0\t10\t{1 - i / 100}\n" for i in range(20))
    other = "".join(f"2\tw{i}\t0\t10\t{1 - i / 100}\n" for i in range(5))
    a = build_moment_pool([parse_moment_run(many + other)], depth=20, seed=7)
    b = build_moment_pool([parse_moment_run(many)], depth=20, seed=7)
    c = build_moment_pool([parse_moment_run(many)], depth=20, seed=8)
    topic1 = a.topics == "1"
    assert sorted(a.judging_order[topic1].tolist()) == list(range(20))
    assert a.videos[topic1].tolist() == b.videos.tolist()  # topic 2 does not change topic 1's order
    assert b.videos.tolist() != c.videos.tolist()
    assert b.videos.tolist() != sorted(b.videos.tolist(), key=lambda v: int(v[1:]))  # not the rank order
    assert np.array_equal(a.judging_order[topic1], np.arange(20))  # rows come sorted by judging order


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="depth"):
        build_moment_pool(_runs(), depth=0)
    with pytest.raises(ValueError, match="IoU"):
        build_moment_pool(_runs(), depth=1, iou=0.0)
    assert len(build_moment_pool([], depth=3)) == 0


def test_union_length_and_merge_intervals():
    assert union_length(np.array([0.0, 5.0, 20.0]), np.array([10.0, 12.0, 25.0])) == 17.0
    assert union_length(np.array([]), np.array([])) == 0.0
    s, e = merge_intervals(np.array([20.0, 0.0, 5.0, 12.0]), np.array([25.0, 10.0, 12.0, 13.0]))
    assert s.tolist() == [0.0, 20.0] and e.tolist() == [13.0, 25.0]


def test_segment_set_iou_by_hand():
    # A = [0,10], B = [5,15]: both 5, either 15
    assert segment_set_iou(np.array([0.0]), np.array([10.0]), np.array([5.0]), np.array([15.0])) == pytest.approx(1 / 3)
    # A = [0,10] + [20,30], B = [0,30]: both 20, either 30
    assert segment_set_iou(np.array([0.0, 20]), np.array([10.0, 30]), np.array([0.0]), np.array([30.0])) == 2 / 3
    empty = np.array([])
    assert segment_set_iou(empty, empty, empty, empty) == 1.0
    assert segment_set_iou(empty, empty, np.array([1.0]), np.array([2.0])) == 0.0


def _plain_pool(runs, depth: int, iou: float) -> list[tuple]:
    """The pool by plain Python: every pair of top-k moments compared, clusters by union-find."""
    moments = []
    for index, run in enumerate(runs):
        by_topic: dict[str, list] = {}
        for t, v, s, e, score, line in zip(
            run.topics.tolist(), run.videos.tolist(), run.starts.tolist(), run.ends.tolist(),
            run.scores.tolist(), run.lines.tolist(), strict=True,
        ):  # fmt: skip
            by_topic.setdefault(t, []).append((-score, line, v, s, e))
        for t, rows in by_topic.items():
            for rank, (_, _, v, s, e) in enumerate(sorted(rows)[:depth], start=1):
                moments.append((t, v, s, e, rank, index))
    parent = list(range(len(moments)))

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, a in enumerate(moments):
        for j in range(i + 1, len(moments)):
            b = moments[j]
            if a[:2] == b[:2]:
                inter = max(0.0, min(a[3], b[3]) - max(a[2], b[2]))
                if inter / (a[3] - a[2] + b[3] - b[2] - inter) >= iou:
                    parent[find(i)] = find(j)
    clusters: dict[int, list] = {}
    for i, m in enumerate(moments):
        clusters.setdefault(find(i), []).append(m)
    return sorted(
        (c[0][0], c[0][1], min(m[2] for m in c), max(m[3] for m in c), min(m[4] for m in c), len({m[5] for m in c}))
        for c in clusters.values()
    )


@pytest.mark.parametrize("iou", [0.1, 0.5, 0.9])
def test_the_pool_equals_a_plain_python_pool_on_random_runs(iou):
    rng = np.random.default_rng(5)
    runs = []
    for _ in range(4):
        lines = []
        for topic in ("1", "2", "10"):
            for _ in range(15):
                start = round(float(rng.uniform(0, 50)), 1)
                length = round(float(rng.uniform(0.5, 15)), 1)
                score = round(float(rng.integers(0, 5)), 1)  # many ties: broken by file order
                lines.append(f"{topic}\tv{rng.integers(0, 3)}\t{start}\t{start + length}\t{score}\n")
        runs.append(parse_moment_run("".join(lines)))
    pool = build_moment_pool(runs, depth=8, iou=iou, seed=2)
    assert _rows(pool) == _plain_pool(runs, 8, iou)


def test_covered_by_hand_worked():
    ann = [[0.0, 10.0], [20.0, 30.0]]
    bob = [[5.0, 25.0]]
    cat = [[8.0, 9.0], [8.5, 12.0]]  # her own overlap counts once
    assert [x.tolist() for x in covered_by([ann, bob, cat], 1)] == [[0.0], [30.0]]
    assert [x.tolist() for x in covered_by([ann, bob, cat], 2)] == [[5.0, 20.0], [12.0, 25.0]]
    assert [x.tolist() for x in covered_by([ann, bob, cat], 3)] == [[8.0], [10.0]]
    assert [x.tolist() for x in covered_by([ann, [], []], 2)] == [[], []]  # "none relevant" is a vote too
    assert [x.tolist() for x in covered_by([[[0.0, 5.0]], [[5.0, 9.0]]], 2)] == [[], []]  # touching is not overlap
    with pytest.raises(ValueError):
        covered_by([ann], 0)


def test_covered_by_equals_counting_on_a_grid():
    rng = np.random.default_rng(8)
    for _ in range(200):
        sets = []
        for _ in range(int(rng.integers(1, 5))):
            n = int(rng.integers(0, 4))
            starts = rng.integers(0, 20, n)
            sets.append([[float(s), float(s + rng.integers(1, 8))] for s in starts])
        k = int(rng.integers(1, len(sets) + 1))
        grid = np.arange(0, 30, 0.5) + 0.25  # midpoints of half-second cells
        votes = sum(
            np.any([(grid > s) & (grid < e) for s, e in segments], axis=0) if segments else np.zeros(len(grid), bool)
            for segments in sets
        )
        starts, ends = covered_by(sets, k)
        inside = (
            np.any([(grid > s) & (grid < e) for s, e in zip(starts, ends, strict=True)], axis=0)
            if len(starts)
            else np.zeros(len(grid), bool)
        )
        assert (inside == (votes >= k)).all()
        assert (starts[1:] > ends[:-1]).all()  # disjoint, not touching, sorted
