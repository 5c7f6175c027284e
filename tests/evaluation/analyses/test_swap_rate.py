"""Swap rates and the minimum detectable difference: hand-worked cases and a plain-Python count over the same draws."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.evaluation.analyses.swap_rate import minimum_detectable_difference, split_means, swap_rates


def test_minimum_detectable_difference_hand_worked():
    comparisons = np.array([10, 10, 10, 10, 10])
    # rates 0.5, 0.2, 0.0, 0.1, 0.0: the last bin at or above 5 % is bin 3, so the MDD is bin 4's lower edge
    assert minimum_detectable_difference(comparisons, np.array([5, 2, 0, 1, 0]), 0.01) == pytest.approx(0.04)
    # a bin under 5 % between failing ones does not count: the first bin after the *last* failing one
    assert minimum_detectable_difference(comparisons, np.array([5, 0, 2, 0, 0]), 0.01) == pytest.approx(0.03)
    assert minimum_detectable_difference(comparisons, np.zeros(5, int), 0.01) == 0.0  # never swapped
    assert math.isnan(minimum_detectable_difference(comparisons, np.array([0, 0, 0, 0, 1]), 0.01))  # last bin fails
    # bins with too few comparisons are not trusted either way
    thin = np.array([10, 10, 2, 10, 0])
    assert minimum_detectable_difference(thin, np.array([5, 0, 1, 0, 0]), 0.01, min_comparisons=5) == 0.01
    assert minimum_detectable_difference(thin, np.array([5, 0, 1, 0, 0]), 0.01) == pytest.approx(0.03)


def test_always_swapped_and_never_swapped_pairs():
    # x beats y on topic 0 by 1 and loses on topic 1 by 1: the two singleton sets always disagree
    always = swap_rates(np.array([[1.0, 0.0], [0.0, 1.0]]), ["x", "y"], trials=20, seed=0)
    assert always.sizes.tolist() == [1]
    assert always.comparisons.sum() == 20 and always.swaps.sum() == 20
    assert always.comparisons[0, 100] == 20  # |d_A| = 1.0: bin 100 of width 0.01
    assert math.isnan(always.mdd[0])
    never = swap_rates(np.array([[0.5, 0.7, 0.6, 0.9], [0.1, 0.3, 0.2, 0.0]]), ["x", "y"], trials=50, seed=0)
    assert never.swaps.sum() == 0 and never.mdd.tolist() == [0.0, 0.0]
    data = never.to_dict()
    assert [s["size"] for s in data["sizes"]] == [1, 2] and data["sizes"][0]["swaps"] == 0


def test_split_halves_are_disjoint_random_sets_of_the_size():
    rng = np.random.default_rng(0)
    n, size, trials = 9, 4, 200
    a, b = split_means(np.eye(n), rng, trials, size)  # column j: indicator of topic j / size
    chosen_a, chosen_b = a * size > 0.5, b * size > 0.5
    assert (chosen_a.sum(axis=0) == size).all() and (chosen_b.sum(axis=0) == size).all()
    assert not (chosen_a & chosen_b).any()
    counts = chosen_a.sum(axis=1)  # every topic lands in the first set about size / n of the time
    assert counts.min() > 0.25 * trials * size / n


def _reference(scores, sizes, trials, seed, width, relative, geometric=False):
    """The same seeded draws, counted with plain Python loops (`geometric`: geometric means, values floored at 1e-5)."""

    def mean(values):
        if geometric:
            return math.exp(round(sum(math.log(max(v, 1e-5)) for v in values) / size, 12))
        return round(sum(values) / size, 12)

    rng = np.random.default_rng(seed)
    n_run, n = scores.shape
    out = {}
    for size in sizes:
        keys = rng.random((trials, n))
        kth = [size - 1, 2 * size - 1] if 2 * size < n else [size - 1]
        part = np.argpartition(keys, kth, axis=1)
        bins: dict[int, list[int]] = {}
        for trial in range(trials):
            first = part[trial, :size].tolist()
            second = part[trial, size : 2 * size].tolist()
            mean_a = [mean([scores[r, t] for t in first]) for r in range(n_run)]
            mean_b = [mean([scores[r, t] for t in second]) for r in range(n_run)]
            for i in range(n_run):
                for j in range(i + 1, n_run):
                    d_a, d_b = mean_a[i] - mean_a[j], mean_b[i] - mean_b[j]
                    if d_a == 0:
                        continue
                    diff = abs(d_a) / max(mean_a[i], mean_a[j]) if relative else abs(d_a)
                    entry = bins.setdefault(math.floor(diff / width + 1e-9), [0, 0])
                    entry[0] += 1
                    entry[1] += d_a * d_b < 0
        out[size] = bins
    return out


@pytest.mark.parametrize("relative", [False, True])
def test_equals_a_plain_python_count(relative):
    rng = np.random.default_rng(11)
    scores = np.clip(np.linspace(0.2, 0.5, 5)[:, None] + 0.2 * rng.standard_normal((5, 12)), 0, 1)
    scores = np.round(scores, 2)  # ties between runs on some sets
    result = swap_rates(scores, list("abcde"), sizes=[1, 3, 6], trials=40, seed=4, bin_width=0.05, relative=relative)
    expected = _reference(scores, [1, 3, 6], 40, 4, 0.05, relative)
    for k, size in enumerate([1, 3, 6]):
        got = {
            b: [int(result.comparisons[k, b]), int(result.swaps[k, b])] for b in np.flatnonzero(result.comparisons[k])
        }
        assert got == expected[size]


def test_gm_measures_compare_geometric_means():
    rng = np.random.default_rng(5)
    scores = np.clip(np.linspace(0.2, 0.5, 4)[:, None] + 0.2 * rng.standard_normal((4, 10)), 0, 1)
    scores[1, 3] = 0.0  # floored at 1e-5: one zero drags a geometric mean far down, an arithmetic one a little
    scores = np.round(scores, 2)
    result = swap_rates(scores, list("abcd"), sizes=[1, 2, 5], trials=30, seed=2, bin_width=0.05, aggregate="gm")
    expected = _reference(scores, [1, 2, 5], 30, 2, 0.05, False, geometric=True)
    for k, size in enumerate([1, 2, 5]):
        got = {
            b: [int(result.comparisons[k, b]), int(result.swaps[k, b])] for b in np.flatnonzero(result.comparisons[k])
        }
        assert got == expected[size]
    arithmetic = swap_rates(scores, list("abcd"), sizes=[1, 2, 5], trials=30, seed=2, bin_width=0.05)
    assert not np.array_equal(arithmetic.comparisons, result.comparisons)


def test_seeded_and_more_topics_need_smaller_differences():
    rng = np.random.default_rng(2)
    scores = np.linspace(0.1, 0.4, 8)[:, None] + 0.25 * rng.standard_normal((8, 40))
    runs = [f"r{i}" for i in range(8)]
    a = swap_rates(scores, runs, trials=300, seed=9, sizes=[2, 20])
    b = swap_rates(scores, runs, trials=300, seed=9, sizes=[2, 20])
    assert np.array_equal(a.swaps, b.swaps) and np.array_equal(a.comparisons, b.comparisons)
    assert (a.comparisons.sum(axis=1) <= 300 * 28).all() and a.comparisons[1].sum() == 300 * 28  # no ties at 20
    rate = a.swaps.sum(axis=1) / a.comparisons.sum(axis=1)
    assert rate[1] < rate[0]  # 20 topics swap less often than 2
    assert a.mdd[1] < a.mdd[0] or math.isnan(a.mdd[0])


def test_bad_arguments():
    with pytest.raises(ValueError, match="sizes"):
        swap_rates(np.zeros((2, 4)), ["a", "b"], sizes=[3])
    with pytest.raises(ValueError, match="relative"):
        swap_rates(-np.ones((2, 4)), ["a", "b"], relative=True)
    with pytest.raises(ValueError, match="two runs"):
        swap_rates(np.zeros((1, 4)), ["a"])


def test_trec_covid_counts_and_the_sparse_bin_rule(shared_data):
    from app.evaluation.formats.trec_files import read_qrels, read_run
    from app.evaluation.measures.evaluate import evaluate

    base = shared_data / "trec-covid-round1"
    runs = [read_run(p) for p in sorted((base / "runs").glob("*.gz"))]
    scores = evaluate(read_qrels(base / "qrels.txt"), runs, ["AP"]).values[:, 0, :]
    names = [r.tag for r in runs]
    small = swap_rates(scores, names, sizes=[3, 15], trials=20, seed=2)
    expected = _reference(scores, [3, 15], 20, 2, 0.01, False)
    for k, size in enumerate([3, 15]):
        got = {b: [int(small.comparisons[k, b]), int(small.swaps[k, b])] for b in np.flatnonzero(small.comparisons[k])}
        assert got == expected[size]
    # the docstring's numbers: 3-topic sets need a difference of 0.21, or 0.58 if a bin of two comparisons counted
    result = swap_rates(scores, names, trials=1000, seed=0)
    assert result.mdd[2] == pytest.approx(0.21)
    k = 2
    assert minimum_detectable_difference(result.comparisons[k], result.swaps[k], 0.01) == pytest.approx(0.58)
    assert result.mdd[-1] == pytest.approx(0.07)  # 15 topics a side
