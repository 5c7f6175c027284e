"""Moment measures: hand-worked values, naive reference loops, measure names and the evaluation API."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.evaluation.errors import MeasureError
from app.evaluation.moments import (
    DEFAULT_MOMENT_MEASURES,
    ap_at,
    axiou,
    dcg_at,
    detection_map,
    evaluate_moment_files,
    evaluate_moments,
    ground_truth_segments,
    moment_relevance,
    moment_scores,
    parse_moment_ground_truth,
    parse_moment_measure,
    parse_moment_run,
    rank_moments,
    recall_at,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "moments"
R = np.array([0.0, 0.5, 0.9])  # relevance at ranks 1..3


def test_axiou_hand_worked():
    # cummax of [0, .5, .9] = [0, .5, .9]; AxIoU@3 = (0 + .5 + .9) / 3
    assert axiou(R, 3) == pytest.approx(1.4 / 3)
    # padded with r = 0: cummax [0, .5, .9, .9, .9] -> 3.2 / 5
    assert axiou(R, 5) == pytest.approx(0.64)
    assert axiou(R, 1) == 0.0
    # a later worse moment does not lower the max: [.8, .2] -> (.8 + .8) / 2
    assert axiou(np.array([0.8, 0.2]), 2) == pytest.approx(0.8)


def test_recall_hand_worked():
    assert recall_at(R, 1, 0.5) == 0.0  # r(1) = 0
    assert recall_at(R, 2, 0.5) == 1.0  # r(2) = .5 >= .5
    assert recall_at(R, 2, 0.5, strict=True) == 0.0  # .5 > .5 is false
    assert recall_at(R, 3, 0.7) == 1.0  # .9
    assert recall_at(R, 10, 0.95) == 0.0


def test_ap_hand_worked():
    # hits at theta .5 (>=): [0, 1, 1]; P@1 = 0, P@2 = 1/2, P@3 = 2/3; AP@3 = (0 + 1/2 + 2/3) / 3 = 7/18
    assert ap_at(R, 3, 0.5) == pytest.approx(7 / 18)
    # strict: hits [0, 0, 1]; P@k = 0, 0, 1/3; AP@3 = (1/3) / 3 = 1/9
    assert ap_at(R, 3, 0.5, strict=True) == pytest.approx(1 / 9)
    # padded to K = 4: P@4 = 2/4; (0 + 1/2 + 2/3 + 1/2) / 4 = 5/12
    assert ap_at(R, 4, 0.5) == pytest.approx(5 / 12)


def test_dcg_hand_worked():
    # g(r) = r, d(k) = log2(k + 1): 0/1 + .5/log2(3) + .9/2
    assert dcg_at(R, 3) == pytest.approx(0.5 / math.log2(3) + 0.45)
    assert dcg_at(R, 2) == pytest.approx(0.5 / math.log2(3))
    # DCG counts redundant moments: two perfect moments score 1 + 1/log2(3)
    assert dcg_at(np.array([1.0, 1.0]), 2) == pytest.approx(1 + 1 / math.log2(3))


def test_map_matches_each_segment_once_in_score_order():
    # segments g0 = [0,10], g1 = [20,30]; predictions in rank order:
    # p1 [0,10] IoU 1 with g0 -> TP; p2 [1,10] IoU .9 with g0 (already matched), 0 with g1 -> FP;
    # p3 [20,30] IoU 1 with g1 -> TP. tp = [1,0,1], precision = [1, 1/2, 2/3], envelope = [1, 2/3, 2/3]
    # AP = (1 + 2/3) / 2 = 5/6 at every threshold up to 1, so the mean over thresholds is 5/6 too.
    iou = np.array([[1.0, 0.0], [0.9, 0.0], [0.0, 1.0]])
    mask = np.array([True, True])
    assert detection_map(iou, mask, [0.5]) == pytest.approx(5 / 6)
    assert detection_map(iou, mask, np.linspace(0.5, 0.95, 10)) == pytest.approx(5 / 6)


def test_map_takes_the_best_free_segment():
    # g0 = [0,10], g1 = [5,15]; p1 = [4,12]: IoU 6/12 = .5 with g0, 7/11 with g1 -> matches g1 (higher);
    # p2 = [0,9]: IoU 9/10 with g0 -> TP. Both TP: AP@.5 = 1. (Matching p1 to g0 would leave p2 a FP.)
    iou = np.array([[0.5, 7 / 11], [0.9, 4 / 15]])
    assert detection_map(iou, np.array([True, True]), [0.5]) == 1.0
    # at .65 p1 matches nothing (FP) and p2 matches g0: precision [0, 1/2], AP = (1/2) / 2
    assert detection_map(iou, np.array([True, True]), [0.65]) == pytest.approx(0.25)


def test_map_ignores_padded_segments_and_counts_depth():
    # one real segment and one padded slot; 12 predictions, the 11th would match but depth is 10
    iou = np.zeros((12, 2))
    iou[10, 0] = 1.0
    assert detection_map(iou, np.array([True, False]), [0.5]) == 0.0
    assert detection_map(iou, np.array([True, False]), [0.5], depth=11) == pytest.approx(1 / 11)


def reference_map(iou: np.ndarray, n_gt: int, thresholds, depth: int = 10) -> float:
    """Loop version of the documented algorithm: ActivityNet-style greedy matching + VOC all-point AP."""
    iou = iou[:depth, :n_gt]
    aps = []
    for t in thresholds:
        locked = [False] * n_gt
        tp = []
        for row in iou:
            hit = False
            for j in sorted(range(n_gt), key=lambda j: (-row[j], j)):
                if row[j] < t:
                    break
                if locked[j]:
                    continue
                locked[j] = hit = True
                break
            tp.append(hit)
        prec = [sum(tp[: i + 1]) / (i + 1) for i in range(len(tp))]
        rec = [sum(tp[: i + 1]) / n_gt for i in range(len(tp))]
        mprec, mrec = [0.0, *prec, 0.0], [0.0, *rec, 1.0]
        for i in range(len(mprec) - 2, -1, -1):
            mprec[i] = max(mprec[i], mprec[i + 1])
        aps.append(sum((mrec[i] - mrec[i - 1]) * mprec[i] for i in range(1, len(mrec)) if mrec[i] != mrec[i - 1]))
    return sum(aps) / len(aps)


iou_values = st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.55, 0.6, 0.7, 0.75, 0.8, 0.9, 0.95, 1.0])


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda g: st.lists(st.lists(iou_values, min_size=g, max_size=g), min_size=1, max_size=13)
    ),
    st.integers(0, 2),
)
def test_map_agrees_with_a_loop_reference(rows, extra_pad):
    iou = np.array(rows)
    n_gt = iou.shape[1]
    padded = np.concatenate([iou, np.zeros((len(rows), extra_pad))], axis=1)
    mask = np.array([True] * n_gt + [False] * extra_pad)
    thresholds = [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]
    assert detection_map(padded, mask, thresholds) == pytest.approx(reference_map(iou, n_gt, thresholds), abs=1e-12)


relevance_lists = st.lists(st.integers(0, 1000).map(lambda n: n / 1000), min_size=0, max_size=12)


@settings(max_examples=150, deadline=None)
@given(relevance_lists, st.integers(1, 12), st.sampled_from([0.1, 0.3, 0.5, 0.7, 1.0]))
def test_reductions_agree_with_naive_loops(r, k, theta):
    padded = (r + [0.0] * k)[:k]
    arr = np.array(r)
    assert axiou(arr, k) == pytest.approx(sum(max(padded[: i + 1]) for i in range(k)) / k, abs=1e-12)
    assert recall_at(arr, k, theta) == float(any(x >= theta for x in padded))
    assert recall_at(arr, k, theta, strict=True) == float(any(x > theta for x in padded))
    expected_ap = sum(sum(x >= theta for x in padded[: i + 1]) / (i + 1) for i in range(k)) / k
    assert ap_at(arr, k, theta) == pytest.approx(expected_ap, abs=1e-12)
    assert dcg_at(arr, k) == pytest.approx(sum(x / math.log2(i + 2) for i, x in enumerate(padded)), abs=1e-12)


@pytest.mark.parametrize(
    ("name", "family", "k", "theta", "strict", "thresholds"),
    [
        ("AxIoU@10", "AxIoU", 10, 0.0, False, ()),
        ("R@5,0.5", "R", 5, 0.5, False, ()),
        ("R@1,>0.7", "R", 1, 0.7, True, ()),
        ("R@1,>0", "R", 1, 0.0, True, ()),
        ("AP@10,.5", "AP", 10, 0.5, False, ()),
        ("AP@10,>0.5", "AP", 10, 0.5, True, ()),
        ("DCG@3", "DCG", 3, 0.0, False, ()),
        ("mAP@0.5", "mAP", 10, 0.0, False, (0.5,)),
        ("mAP@0.75", "mAP", 10, 0.0, False, (0.75,)),
        ("mAP@0.3:0.4", "mAP", 10, 0.0, False, (0.3, 0.35, 0.4)),
    ],
)
def test_measure_names(name, family, k, theta, strict, thresholds):
    spec = parse_moment_measure(name)
    assert (spec.name, spec.family, spec.k, spec.theta, spec.strict) == (name, family, k, theta, strict)
    if thresholds:
        assert spec.thresholds == thresholds


def test_map_default_is_point_five_to_point_nine_five():
    expected = (0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
    assert parse_moment_measure("mAP").thresholds == expected
    assert parse_moment_measure("mAP@0.5:0.95").thresholds == expected


@pytest.mark.parametrize(
    "name",
    [
        "AxIoU",
        "AxIoU@0",
        "R@5",
        "R@5,0",
        "R@5,1.5",
        "R@5,>1",
        "R@0,0.5",
        "AP@5",
        "DCG@x",
        "nDCG@5",
        "mAP@0",
        "mAP@0.9:0.5",
        "mAP@0.5:0.92",
        "mAP@1.2",
        "axiou@5",
        "",
    ],
)
def test_bad_measure_names(name):
    with pytest.raises(MeasureError):
        parse_moment_measure(name)


GT = parse_moment_ground_truth((DATA / "gt.tsv").read_text())
RUN_A = parse_moment_run((DATA / "run_tagged.tsv").read_bytes())


def test_evaluate_moments_hand_worked():
    # sysA, topic 1: vidB (r 0, score .95), vidA [0,5] (r .5), vidA [20,29] (r .9); topic 2: exact (r 1);
    # topic 3: no moments (scores 0); topic 9 is not in the ground truth and is ignored.
    res = evaluate_moments(GT, [RUN_A], ["AxIoU@1", "AxIoU@5", "R@5,0.7", "AP@3,0.5", "DCG@3", "mAP", "mAP@0.5"])
    sys_a = res["sysA"]
    assert sys_a["AxIoU@1"] == {"1": 0.0, "2": 1.0, "3": 0.0, "all": pytest.approx(1 / 3)}
    # topic 1: (0 + .5 + .9 + .9 + .9) / 5 = .64; mean (.64 + 1 + 0) / 3
    assert sys_a["AxIoU@5"]["1"] == pytest.approx(0.64)
    assert sys_a["AxIoU@5"]["all"] == pytest.approx(1.64 / 3)
    assert sys_a["R@5,0.7"] == {"1": 1.0, "2": 1.0, "3": 0.0, "all": pytest.approx(2 / 3)}
    assert sys_a["AP@3,0.5"]["1"] == pytest.approx(7 / 18)
    # topic 2: hits [1, 0, 0] (padding) -> (1 + 1/2 + 1/3) / 3
    assert sys_a["AP@3,0.5"]["2"] == pytest.approx(11 / 18)
    assert sys_a["DCG@3"]["1"] == pytest.approx(0.5 / math.log2(3) + 0.45)
    # mAP topic 1 (2 segments): at .5 tp = [0,1,1], precision [0, 1/2, 2/3] -> AP (2/3 + 2/3) / 2 = 2/3;
    # at .55 .. .9 (8 thresholds) only rank 3 -> (1/3) / 2 = 1/6; at .95 nothing. (2/3 + 8/6) / 10 = .2
    assert sys_a["mAP@0.5"]["1"] == pytest.approx(2 / 3)
    assert sys_a["mAP"] == {"1": pytest.approx(0.2), "2": 1.0, "3": 0.0, "all": pytest.approx(0.4)}


def test_evaluate_moment_files_defaults_gzip_and_names():
    res = evaluate_moment_files(
        str(DATA / "gt.tsv"), [str(DATA / "run_tagged.tsv"), str(DATA / "run_untagged.jsonl.gz")], None
    )
    assert list(res) == ["sysA", "run_untagged.jsonl.gz"]
    assert list(res["sysA"]) == list(DEFAULT_MOMENT_MEASURES)
    assert set(DEFAULT_MOMENT_MEASURES) >= {"AxIoU@1", "AxIoU@5", "AxIoU@10", "R@1,0.3", "R@5,0.7", "R@10,0.5", "mAP"}
    assert res["sysA"]["AxIoU@10"]["all"] == pytest.approx((0.77 + 1) / 3)  # topic 1: (.5 + 8 * .9) / 10
    b = res["run_untagged.jsonl.gz"]
    # r per topic: 1 (exact), 5/15 (vidB [10,20] vs [5,15]), 2/4 (vidC [1,3] vs [0,4])
    assert b["AxIoU@1"]["all"] == pytest.approx((1 + 1 / 3 + 0.5) / 3)
    assert b["R@1,0.5"] == {"1": 1.0, "2": 0.0, "3": 1.0, "all": pytest.approx(2 / 3)}
    # mAP: topic 1 one of 2 segments found at rank 1 -> .5 everywhere; topic 3 only at .5 -> 1/10
    assert b["mAP"] == {"1": 0.5, "2": 0.0, "3": pytest.approx(0.1), "all": pytest.approx(0.2)}


def test_run_names_and_errors():
    untagged = parse_moment_run("1 vidA 0 10 1\n")
    assert list(evaluate_moments(GT, [untagged, untagged], ["AxIoU@1"])) == ["run0", "run1"]
    assert list(evaluate_moments(GT, [untagged, RUN_A], ["AxIoU@1"], run_names=["x", "y"])) == ["x", "sysA"]
    with pytest.raises(ValueError, match="several runs"):
        evaluate_moments(GT, [RUN_A, RUN_A], ["AxIoU@1"])
    with pytest.raises(MeasureError):
        evaluate_moments(GT, [RUN_A], ["AxIoU@1", "P@10"])


def test_array_level_scores_for_many_runs_at_once():
    runs = [RUN_A, parse_moment_run("1 vidA 0 10 1\n2 vidB 6 15 1\n")]
    seg = ground_truth_segments(GT)
    rel = moment_relevance(rank_moments(seg, runs, depth=10), seg)
    scores = moment_scores(rel, ["AxIoU@5", "mAP"])
    assert scores["AxIoU@5"].shape == (2, 3)
    # run 1: topic 1 r = 1; topic 2 [6,15] vs [5,15] = 9/10
    np.testing.assert_allclose(scores["AxIoU@5"][1], [1.0, 0.9, 0.0])
    expected = evaluate_moments(GT, [RUN_A], ["AxIoU@5", "mAP"])["sysA"]
    np.testing.assert_allclose(scores["mAP"][0], [expected["mAP"][t] for t in ("1", "2", "3")])
    # a bare relevance array works for everything but mAP
    np.testing.assert_allclose(moment_scores(rel.relevance, ["AxIoU@5"])["AxIoU@5"], scores["AxIoU@5"])
    with pytest.raises(MeasureError):
        moment_scores(rel.relevance, ["mAP"])


def test_run_topics_only_averages_over_answered_topics():
    # sysA answers topics 1 and 2 (not 3): AxIoU@1 = 0 and 1 -> mean 1/2 instead of 1/3
    res = evaluate_moments(GT, [RUN_A], ["AxIoU@1"], run_topics_only=True)
    assert res["sysA"]["AxIoU@1"] == {"1": 0.0, "2": 1.0, "all": 0.5}
