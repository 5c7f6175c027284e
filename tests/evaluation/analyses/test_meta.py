"""Stability, label noise, measure agreement, tied topics: reproducibility and values on constructed cases."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from app.evaluation.analyses import (
    agreement_matrix,
    all_tied_ratio,
    label_noise,
    measure_agreement,
    perturb,
    stability,
)
from app.evaluation.measures.evaluate import evaluate
from app.evaluation.moments import ground_truth_segments, parse_moment_ground_truth, parse_moment_run, rank_moments
from tests.evaluation.analyses.brute import random_collection

MOMENTS = Path(__file__).parents[2] / "data" / "moments"


def _constructed(n_run: int = 6, n_topic: int = 40, noise: float = 0.3, seed: int = 0) -> np.ndarray:
    """[n_run, 2, n_topic]: runs with well-separated true means plus per-topic noise; measure 2 = measure 1 x 2."""
    rng = np.random.default_rng(seed)
    true = np.linspace(0.2, 0.7, n_run)[:, None]
    values = true + noise * rng.standard_normal((n_run, n_topic))
    return np.stack([values, 2 * values], axis=1)


def test_stability_is_seeded_and_tau_of_the_full_set_is_one():
    values = _constructed()
    a = stability(values, ["m1", "m2"], trials=200, seed=3)
    b = stability(values, ["m1", "m2"], trials=200, seed=3)
    c = stability(values, ["m1", "m2"], trials=200, seed=4)
    assert np.array_equal(a.full_mean, b.full_mean) and np.array_equal(a.split_var, b.split_var)
    assert not np.array_equal(a.full_mean, c.full_mean)
    assert a.sizes.tolist() == list(range(1, 41)) and a.split_sizes.tolist() == list(range(1, 21))
    assert a.full_mean[:, -1] == pytest.approx([1.0, 1.0]) and a.full_var[:, -1] == pytest.approx([0.0, 0.0])
    # a measure that is a monotone transform of another ranks identically on every subset
    assert a.full_mean[0] == pytest.approx(a.full_mean[1]) and a.split_mean[0] == pytest.approx(a.split_mean[1])
    # more topics, more agreement and less spread (compare far-apart sizes so sampling noise cannot flip it)
    assert a.full_mean[0, 0] < a.full_mean[0, 9] < a.full_mean[0, 29]
    assert a.full_var[0, 0] > a.full_var[0, 9] > a.full_var[0, 29]
    assert a.split_mean[0, 0] < a.split_mean[0, 9] < a.split_mean[0, 19]
    assert a.split_var[0, 0] > a.split_var[0, 19]


def test_stability_single_trial_matches_a_direct_computation():
    values = _constructed(n_topic=10)
    result = stability(values, ["m1", "m2"], trials=1, seed=0, sizes=[3])
    order = np.argsort(np.random.default_rng(0).random((1, 10)), axis=1)[0]
    first, second = values[:, 0, order[:3]].mean(axis=1), values[:, 0, order[3:6]].mean(axis=1)
    assert result.full_mean[0, 0] == pytest.approx(stats.kendalltau(first, values[:, 0].mean(axis=1)).statistic)
    assert result.split_mean[0, 0] == pytest.approx(stats.kendalltau(first, second).statistic)


def test_stability_counts_constant_rankings_as_undefined():
    values = np.zeros((3, 1, 4))
    values[:, 0, 0] = [0.1, 0.2, 0.3]  # only topic 0 separates the runs
    result = stability(values, ["m"], trials=300, seed=1, sizes=[1])
    assert 0 < result.full_undefined[0, 0] < 300
    assert result.full_mean[0, 0] == pytest.approx(1.0)  # whenever defined, the subset is topic 0


def test_measure_agreement_matrix():
    runs, qrels = random_collection(2, n_run=6)
    results = evaluate(qrels, runs, ["AP", "P@5", "nDCG@10"])
    names, matrix = measure_agreement(results)
    means = results.mean()
    assert names == ["AP", "P@5", "nDCG@10"]
    assert np.allclose(matrix, matrix.T) and np.allclose(np.diag(matrix), 1.0)
    assert matrix[0, 2] == pytest.approx(stats.kendalltau(means[:, 0], means[:, 2]).statistic)
    reversed_ = agreement_matrix(np.stack([np.arange(5.0), -np.arange(5.0)], axis=1))
    assert reversed_[0, 1] == pytest.approx(-1.0)


def test_all_tied_ratio():
    values = np.array([[0.0, 0.5, 1.0, 0.2], [0.0, 0.5, 0.9, 0.2], [0.0, 0.5, 1.0, 0.3]])
    assert all_tied_ratio(values) == pytest.approx(0.5)  # topics 0 and 1


def _moments():
    gt = parse_moment_ground_truth((MOMENTS / "gt.tsv").read_bytes())
    segments = ground_truth_segments(gt)
    runs = [parse_moment_run((MOMENTS / "run_tagged.tsv").read_bytes())]
    # a second, worse system: the first one's moments shifted by 3 s
    shifted = runs[0]
    runs.append(type(shifted)(**{**shifted.__dict__, "starts": shifted.starts + 3, "ends": shifted.ends + 3}))
    return segments, rank_moments(segments, runs, 10)


def test_label_noise_is_seeded_zero_without_noise_and_grows_with_sigma():
    segments, ranked = _moments()
    measures = ["AxIoU@5", "R@1,0.5"]
    a = label_noise(segments, ranked, measures, sigmas=[0.0, 0.5, 4.0], trials=40, seed=5, length="shifted")
    b = label_noise(segments, ranked, measures, sigmas=[0.0, 0.5, 4.0], trials=40, seed=5, length="shifted")
    assert np.array_equal(a.rmse, b.rmse)
    assert a.rmse.shape == (3, 2, 2)
    assert np.all(a.rmse >= a.mean_abs_change - 1e-12)  # RMSE >= mean absolute error
    assert a.mean_rmse[1, 0] < a.mean_rmse[2, 0]
    assert a.noisy_iou[1] > a.noisy_iou[2]
    exact = label_noise(segments, ranked, measures, sigmas=[0.0], trials=3, length="exponential", raters=1)
    assert exact.rmse.max() > 0  # the length alone is still noisy with one rater


def test_perturb_default_is_the_shifted_length_model_drawn_by_hand():
    """SPEC 6 / the authors' notebook: l' = (e - s) + Exp(1); with sigma 0 and one rater the draws are exactly the
    generator's exponentials, added to the true length."""
    segments, _ = _moments()
    mask = segments.mask
    noisy = perturb(segments, 0.0, np.random.default_rng(7), raters=1)
    draws = np.random.default_rng(7).exponential(1.0, size=(1, *segments.start.shape))[0]
    assert np.allclose(noisy.start[mask], segments.start[mask])
    assert np.allclose((noisy.end - noisy.start)[mask], (segments.end - segments.start + draws)[mask])
    # many raters: the median length is the true length + ln 2 (the median of Exp(1)), whatever the length
    many = perturb(segments, 1.0, np.random.default_rng(1), raters=4001)
    assert np.allclose((many.end - many.start)[mask], (segments.end - segments.start + np.log(2))[mask], atol=0.05)
    assert np.allclose(many.start[mask], segments.start[mask], atol=0.1)


def test_label_noise_reports_the_mean_absolute_change_of_a_brute_force_loop():
    """Default model (shifted) and the paper's plotted quantity: per run, mean |noisy mean - clean mean| over trials,
    each noisy ground truth re-scored by the moment evaluator from its rows."""
    from app.evaluation.moments import MomentGroundTruth, evaluate_moments

    segments, ranked = _moments()
    gt = parse_moment_ground_truth((MOMENTS / "gt.tsv").read_bytes())
    run = parse_moment_run((MOMENTS / "run_tagged.tsv").read_bytes())
    shifted = type(run)(**{**run.__dict__, "starts": run.starts + 3, "ends": run.ends + 3, "tag": "shifted"})
    measures = ["AxIoU@5", "R@1,0.5"]
    result = label_noise(segments, ranked, measures, sigmas=[0.0, 2.0], trials=15, seed=3)
    assert result.length == "shifted"
    assert np.array_equal(
        result.rmse,
        label_noise(segments, ranked, measures, sigmas=[0.0, 2.0], trials=15, seed=3, length="shifted").rmse,
    )

    def means(truth: MomentGroundTruth) -> np.ndarray:
        nested = evaluate_moments(truth, [run, shifted], measures)
        return np.array([[nested[r][m]["all"] for r in nested] for m in measures])

    clean = means(gt)
    assert result.clean == pytest.approx(clean)
    rng = np.random.default_rng(3)
    mask = segments.mask
    rows_topic = np.repeat(segments.topics[:, None], mask.shape[1], axis=1)[mask]
    rows_video = segments.video_names[segments.video[mask]]
    for i, sigma in enumerate([0.0, 2.0]):
        changes = []
        for _ in range(15):
            noisy = perturb(segments, sigma, rng)
            truth = MomentGroundTruth(
                topics=rows_topic,
                videos=rows_video,
                starts=noisy.start[mask],
                ends=noisy.end[mask],
                lines=np.arange(1, mask.sum() + 1),
            )
            changes.append(means(truth) - clean)
        changes = np.array(changes)
        assert result.mean_abs_change[i] == pytest.approx(np.abs(changes).mean(axis=0), abs=1e-12)
        assert result.rmse[i] == pytest.approx(np.sqrt((changes**2).mean(axis=0)), abs=1e-12)
        level = result.to_dict()["levels"][i]
        for k, m in enumerate(measures):
            assert level["mean_abs_change"][m] == pytest.approx(np.abs(changes[:, k]).mean())


def test_label_noise_reports_progress_up_to_one():
    segments, ranked = _moments()
    seen: list[float] = []
    label_noise(segments, ranked, ["AxIoU@5"], sigmas=[0.5, 1.0], trials=4, progress=seen.append)
    assert len(seen) == 8 and seen == sorted(seen) and seen[-1] == pytest.approx(1.0) and seen[0] > 0


def test_stability_sizes_defaults_and_progress():
    values = _constructed(n_topic=250)
    seen: list[float] = []
    result = stability(values, ["m1", "m2"], trials=7, seed=1, progress=seen.append)
    assert len(result.sizes) in (100, 101) and result.sizes[0] == 1 and result.sizes[-1] == 250 and 125 in result.sizes
    assert result.split_sizes.tolist() == [s for s in result.sizes.tolist() if 2 * s <= 250]
    assert seen == [1.0]  # one block of trials: one report
    big = np.repeat(values, 40, axis=2)  # 10,000 topics: blocks of a few dozen trials, a report after each
    seen.clear()
    stability(big, ["m1", "m2"], trials=1000, seed=1, sizes=[10, 5000], progress=seen.append)
    assert len(seen) >= 10 and seen == sorted(seen) and 0 < seen[0] < 0.1 and seen[-1] == 1.0
    small = stability(_constructed(n_topic=12), ["m1", "m2"], trials=3, sizes=[12, 3, 3])
    assert small.sizes.tolist() == [3, 12] and small.split_sizes.tolist() == [3]
    with pytest.raises(ValueError, match="subset sizes must be in 1..12"):
        stability(_constructed(n_topic=12), ["m1", "m2"], trials=3, sizes=[13])


def test_perturb_medians_of_raters():
    segments, _ = _moments()
    rng = np.random.default_rng(0)
    noisy = perturb(segments, 0.0, rng, raters=5, length="shifted")
    mask = segments.mask
    # no start noise: starts are kept; lengths grow by the median of 5 Exp(1) draws (positive)
    assert np.array_equal(noisy.start[mask], segments.start[mask])
    assert np.all(noisy.end[mask] - noisy.start[mask] > segments.end[mask] - segments.start[mask])
    many = perturb(segments, 1.0, np.random.default_rng(1), raters=2001, length="exponential")
    length = segments.end - segments.start
    # median of Exp(mean L) draws is L ln 2; median of N(s, 1) starts is s
    assert np.allclose(many.start[mask], segments.start[mask], atol=0.15)
    assert np.allclose((many.end - many.start)[mask], (np.log(2) * length)[mask], rtol=0.15)
