"""Temporal IoU edge cases, moment ordering and the padded relevance tensors."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from app.evaluation.moments import (
    ground_truth_segments,
    moment_relevance,
    parse_moment_ground_truth,
    parse_moment_run,
    rank_moments,
    temporal_iou,
)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((0, 10), (0, 10), 1.0),  # identical
        ((0, 5), (5, 10), 0.0),  # touching: overlap 0
        ((0, 4), (6, 10), 0.0),  # disjoint
        ((2, 4), (0, 10), 0.2),  # containment: 2 / 10
        ((0, 10), (2, 4), 0.2),  # symmetric
        ((0, 6), (4, 10), 0.2),  # overlap 2, union 6 + 6 - 2 = 10
        ((1, 8), (0, 10), 0.7),  # overlap 7, union 10
        ((0, 5), (0, 10), 0.5),  # overlap 5, union 10
        ((3, 3), (3, 3), 0.0),  # zero union
        ((5, 5), (0, 10), 0.0),  # zero-length inside: overlap 0, union 10
        ((0.5, 1.5), (1.0, 2.0), 1 / 3),  # overlap 0.5, union 1.5
    ],
)
def test_temporal_iou(a, b, expected):
    assert temporal_iou(a[0], a[1], b[0], b[1]) == pytest.approx(expected, abs=1e-15)


def test_temporal_iou_broadcasts():
    iou = temporal_iou(
        np.array([[0.0], [2.0]]), np.array([[10.0], [4.0]]), np.array([0.0, 5.0]), np.array([10.0, 10.0])
    )
    # row 0: [0,10] vs [0,10] -> 1, vs [5,10] -> 5/10; row 1: [2,4] vs [0,10] -> 2/10, vs [5,10] -> 0
    np.testing.assert_allclose(iou, [[1.0, 0.5], [0.2, 0.0]])


GT = parse_moment_ground_truth("10 vidA 0 10\n10 vidA 20 30\n2 vidB 5 15\nx vidC 0 4\n")


def test_segments_are_padded_per_topic_in_natural_topic_order():
    seg = ground_truth_segments(GT)
    assert seg.topics.tolist() == ["2", "10", "x"]  # numeric ids numerically, others after
    assert seg.video_names.tolist() == ["vidA", "vidB", "vidC"]
    assert seg.video.tolist() == [[1, -1], [0, 0], [2, -1]]
    assert seg.start.tolist() == [[5, 0], [0, 20], [0, 0]]
    assert seg.mask.tolist() == [[True, False], [True, True], [True, False]]


def test_ranking_by_score_then_file_order_with_relevance_as_max_iou():
    run = parse_moment_run(
        "10 vidA 0 5 0.5\n"  # IoU .5 with [0,10]
        "10 vidB 0 10 0.9\n"  # other video: 0
        "10 vidA 20 29 0.5\n"  # ties with line 1 (file order after it): IoU .9 with [20,30]
        "10 vidA 5 25 0.1\n"  # overlap 5, union 20 + 10 - 5 = 25: IoU .2 with each segment
        "99 vidA 0 10 1.0\n"  # topic not in the ground truth: ignored
        "x nope 0 4 1.0\n"  # unknown video: 0
    )
    seg = ground_truth_segments(GT)
    ranked = rank_moments(seg, [run], depth=5)
    assert ranked.valid.tolist() == [[[False] * 5, [True] * 4 + [False], [True] + [False] * 4]]
    rel = moment_relevance(ranked, seg)
    assert rel.iou.shape == (1, 3, 5, 2)
    np.testing.assert_allclose(rel.relevance[0], [[0, 0, 0, 0, 0], [0, 0.5, 0.9, 0.2, 0], [0, 0, 0, 0, 0]])
    np.testing.assert_allclose(rel.iou[0, 1, 3], [0.2, 0.2])


def test_depth_cuts_each_list_and_runs_stack():
    runs = [parse_moment_run("2 vidB 5 15 0.1\n2 vidB 5 10 0.2\n"), parse_moment_run("2 vidB 5 15 3\n")]
    seg = ground_truth_segments(GT)
    rel = moment_relevance(rank_moments(seg, runs, depth=1), seg)
    # run 0: [5,10] (score .2) comes first, IoU 5/10; run 1: exact match
    np.testing.assert_allclose(rel.relevance[:, 0, :], [[0.5], [1.0]])


def test_perturbed_ground_truth_reuses_the_ranking():
    run = parse_moment_run("2 vidB 5 15 1\n")
    seg = ground_truth_segments(GT)
    ranked = rank_moments(seg, [run], depth=1)
    moved = dataclasses.replace(seg, start=seg.start + 5, end=seg.end + 5)  # [10,20] vs [5,15]: 5/15
    assert moment_relevance(ranked, moved).relevance[0, 0, 0] == pytest.approx(1 / 3)
    assert moment_relevance(ranked, seg).relevance[0, 0, 0] == 1.0
