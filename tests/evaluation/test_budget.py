"""Budget advisor: R_hat's variance and xinfAP's jackknife variance against simulated resampling of a fully judged
pool; xinfAP equal to the sample_eval measure; Neyman allocation against brute force; the small-count floor, the
logit interval, the prior for topics without an estimate and the advice rule worked by hand; the issue's case (most
topics unjudged: no stop, a low expected tau); the interval's coverage in a simulation the old interval fails."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from app.evaluation.analyses import budget
from app.evaluation.analyses.kendall import tau_b
from app.evaluation.analyses.lines import index_lines
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures.evaluate import evaluate_prepared


def population(seed: int = 0, n_run: int = 5, n_item: int = 300) -> tuple[budget.TopicSample, np.ndarray]:
    """A fully judged pool of one topic: stratum 0 (best rank <= 40) judged in full, stratum 1 at 30 %."""
    rng = np.random.default_rng(seed)
    ranked = np.array([rng.permutation(n_item)[:200] for _ in range(n_run)])  # run lists over the items
    best = np.full(n_item, 10**6)
    for row in ranked:
        np.minimum.at(best, row, np.arange(1, 201))
    truth = rng.random(n_item) < np.clip(0.6 - best / 300, 0.05, 1)  # relevance falls with the best rank
    stratum = (best > 40).astype(np.int64)
    pooled_total = np.bincount(stratum, minlength=2).astype(float)
    judged = np.zeros(n_item, dtype=bool)
    judged[stratum == 0] = True
    deep = np.flatnonzero(stratum == 1)
    judged[rng.choice(deep, size=int(0.3 * len(deep)), replace=False)] = True
    sample = budget.TopicSample(ranked, stratum, judged, judged & truth, pooled_total)
    return sample, truth


def test_relevant_estimate_hand_worked():
    # stratum 1: 10 pooled, all judged, 4 relevant; stratum 2: 100 pooled, 10 judged, 2 relevant
    est = budget.relevant_estimate([[10, 100]], [[10, 10]], [[4, 2]])
    assert est.estimate[0] == pytest.approx(4 + 100 * 0.2)
    # 100^2 (1 - 10/100) 0.2 * 0.8 / 9
    assert est.variance[0] == pytest.approx(10000 * 0.9 * 0.16 / 9)
    half = 1.96 * np.sqrt(10000 * 0.9 * 0.16 / 9)
    assert 24 - half < 6 and est.low[0] == 6  # never below the relevant docs found
    assert est.high[0] == pytest.approx(24 + half)
    one = budget.relevant_estimate([[10, 100]], [[10, 1]], [[4, 0]])  # one judged doc: no variance estimate
    assert np.isinf(one.variance[0]) and one.low[0] == 4 and one.high[0] == 4 + 99


def test_relevant_variance_matches_simulation():
    sample, truth = population(1)
    rng = np.random.default_rng(5)
    estimates, variances = [], []
    for _ in range(4000):
        judged = budget._resample(rng, sample, truth, 1)[0]
        n = [np.sum(judged & (sample.stratum == c)) for c in range(2)]
        r = [np.sum(judged & truth & (sample.stratum == c)) for c in range(2)]
        est = budget.relevant_estimate([sample.pooled_total], [n], [r])
        estimates.append(est.estimate[0])
        variances.append(est.variance[0])
    assert np.mean(estimates) == pytest.approx(truth.sum(), rel=0.01)  # unbiased
    assert np.mean(variances) == pytest.approx(np.var(estimates, ddof=1), rel=0.1)  # unbiased variance estimate


def test_jackknife_hand_worked():
    # the delete-one formula written out with loops over a small pool, 2 runs, strata of 4 and 8 docs
    ranked = np.array([[0, 4, 1, 5, 6, 2, 7, 8], [4, 5, 0, 9, 10, 1, 11, 3]])
    stratum = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1])
    judged = np.array([1, 1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0], dtype=bool)
    relevant = judged & np.array([1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0], dtype=bool)
    sample = budget.TopicSample(ranked, stratum, judged, relevant, np.array([4.0, 8.0]))
    expected = np.zeros(2)
    for c, (n, big_n) in enumerate([(3, 4), (4, 8)]):
        drops = []
        for j in np.flatnonzero(judged & (stratum == c)):
            less = judged.copy()
            less[j] = False
            drops.append(budget.xinf_ap_topic(sample, less, less & relevant)[0])
        drops = np.array(drops)
        expected += (1 - n / big_n) * (n - 1) / n * np.sum((drops - drops.mean(axis=0)) ** 2, axis=0)
    parts, of = budget.jackknife_components(sample)
    assert of.tolist() == [0, 0, 0, 1, 1, 1, 1]
    np.testing.assert_allclose(np.sum(parts**2, axis=0), expected, rtol=1e-12)
    assert np.all(expected > 0)
    # delete-a-group: stratum 1's 4 judged docs in 2 random groups of 2, stratum 0's 3 in groups of 2 and 1
    parts, of = budget.jackknife_components(sample, groups=2)
    assert of.tolist() == [0, 0, 1, 1]
    grouped, shuffle = np.zeros(2), np.random.default_rng(0)
    for c, (n, big_n) in enumerate([(3, 4), (4, 8)]):
        drops = []
        for docs in np.array_split(shuffle.permutation(np.flatnonzero(judged & (stratum == c))), 2):
            less = judged.copy()
            less[docs] = False
            drops.append(budget.xinf_ap_topic(sample, less, less & relevant)[0])
        drops = np.array(drops)
        grouped += (1 - n / big_n) * (2 - 1) / 2 * np.sum((drops - drops.mean(axis=0)) ** 2, axis=0)
    np.testing.assert_allclose(np.sum(parts**2, axis=0), grouped, rtol=1e-12)
    assert np.all(np.sum(parts**2, axis=0) > 0)
    census = budget.TopicSample(ranked, stratum, stratum == 0, relevant & (stratum == 0), np.array([4.0, 8.0]))
    parts, of = budget.jackknife_components(census)  # stratum 0 in full, stratum 1 not sampled at all
    assert parts.shape == (0, 2) and of.shape == (0,)


def test_xinfap_jackknife_variance_matches_simulation():
    sample, truth = population(2)
    true_var = budget.simulate_samples(sample, truth, 4000, seed=1).var(axis=0, ddof=1)  # [run]
    rng = np.random.default_rng(3)
    estimated = []
    for _ in range(30):  # the estimator on several samples the pool could have drawn
        judged = budget._resample(rng, sample, truth, 1)[0]
        drawn = budget.TopicSample(sample.ranked, sample.stratum, judged, judged & truth, sample.pooled_total)
        estimated.append(np.sum(budget.jackknife_components(drawn)[0] ** 2, axis=0))
    ratio = np.mean(estimated, axis=0) / true_var
    # measured 0.94-1.08 per run, mean 1.02 (seeds 2, 3, 4, 7 of the population: 0.94-1.10 per run)
    assert np.all((ratio > 0.9) & (ratio < 1.15)), ratio
    assert 0.97 < ratio.mean() < 1.07, ratio


def test_xinfap_equals_sample_eval_measure(shared_data):
    data = shared_data / "trecvid-avs-2021"
    qrels = read_qrels(data / "avs.qrels.main.tv21")
    prepared = prepare_runs([read_run(p) for p in sorted((data / "runs").iterdir())])
    results = evaluate_prepared(prepared, qrels, ["xinfAP"])
    topics, samples = budget.topic_samples(index_lines(prepared, qrels))
    mine = np.stack([budget.xinf_ap_topic(s, s.judged, s.relevant)[0] for s in samples], axis=1)
    columns = [results.topics.index(t) for t in topics]
    np.testing.assert_allclose(mine, results.values[:, 0, columns], rtol=0, atol=1e-12)


def test_allocation_meets_the_target_near_the_cheapest_plan():
    pooled, judged, relevant = np.array([[12.0, 20.0, 30.0]]), np.array([[3.0, 2.0, 4.0]]), np.array([[1.0, 1.0, 0.0]])
    s2 = budget._planning_s2(judged, relevant)
    for width in (4.0, 8.0, 12.0, 20.0):
        extra = budget.allocation(pooled, judged, relevant, target_width=width)[0]
        target = (width / (2 * 1.96)) ** 2
        assert budget._variance_at(pooled, judged + extra, s2)[0] <= target
        ranges = [range(int(p - j) + 1) for p, j in zip(pooled[0], judged[0], strict=True)]
        best = min(
            sum(plan)
            for plan in itertools.product(*ranges)
            if budget._variance_at(pooled, judged + np.array(plan, dtype=float), s2)[0] <= target
        )
        assert best <= extra.sum() <= best + 3  # the continuous optimum rounded up: at most one more per stratum
    assert budget.allocation(pooled, judged, relevant, target_width=1e6)[0].tolist() == [0, 0, 0]


def campaign(seed: int = 0, n_topic: int = 12, n_run: int = 8, n_item: int = 200, depth: int = 60) -> tuple:
    """Fully judged pools of several topics: runs of rising quality (some close), strata best rank 1-10 / 11-60."""
    rng = np.random.default_rng(seed)
    samples, truths = [], []
    for _ in range(n_topic):
        truth = rng.random(n_item) < rng.uniform(0.05, 0.25)
        keys = [rng.normal(0, 1, n_item) - 2 * q * truth * rng.uniform(0.3, 1.7) for q in np.linspace(0.7, 1, n_run)]
        ranked = np.array([np.argsort(key)[:depth] for key in keys])
        best = np.full(n_item, 10**6)
        for row in ranked:
            np.minimum.at(best, row, np.arange(1, depth + 1))
        items = np.flatnonzero(best <= depth)
        code = np.full(n_item, -1)
        code[items] = np.arange(len(items))
        stratum = (best[items] > 10).astype(np.int64)
        pooled = np.bincount(stratum, minlength=2).astype(float)
        samples.append(budget.TopicSample(code[ranked], stratum, np.ones(len(items), bool), truth[items], pooled))
        truths.append(truth[items])
    return samples, truths


def _judge(rng: np.random.Generator, s: budget.TopicSample, truth: np.ndarray, more: np.ndarray) -> budget.TopicSample:
    """`s` with more[c] further docs of each stratum judged at random (all of c when more[c] is inf)."""
    judged = s.judged.copy()
    for c in range(len(s.pooled_total)):
        left = np.flatnonzero((s.stratum == c) & ~judged)
        judged[rng.choice(left, size=int(min(more[c], len(left))), replace=False)] = True
    return budget.TopicSample(s.ranked, s.stratum, judged, judged & truth, s.pooled_total)


def _mean_xinfap(samples: list[budget.TopicSample]) -> np.ndarray:
    """Mean xinfAP over the topics per run."""
    return np.mean([budget.xinf_ap_topic(s, s.judged, s.relevant)[0] for s in samples], axis=0)


def simulate_tau(seed: int = 1, n_samples: int = 60, n_run: int = 8) -> dict:
    """`n_samples` samples (stratum 1 in full, 10 % of stratum 2) of `campaign`: the tau_b each reaches against the
    full judgements, expected_tau with and without the bias correction, and the advice for tau 0.9 judged 3 times."""
    full, truths = campaign(n_run=n_run)
    reference = _mean_xinfap(full)
    rng, later = np.random.default_rng(seed), np.random.default_rng(seed + 1000)  # the samples; the judgements advised
    out: dict[str, list] = {"actual": [], "predicted": [], "plain": [], "advice": [], "at_share": []}
    names = [str(r) for r in range(len(reference))]
    for k in range(n_samples):
        samples = []
        for s, t in zip(full, truths, strict=True):
            top = budget.TopicSample(s.ranked, s.stratum, s.stratum == 0, t & (s.stratum == 0), s.pooled_total)
            samples.append(_judge(rng, top, t, np.array([0, max(2, round(0.1 * s.pooled_total[1]))])))
        result = budget.variance_of_samples([str(t) for t in range(len(full))], names, samples, 100, seed=k)
        plain = budget.XinfapVariance(result.topics, result.runs, result.point, result.variance, result.replicates)
        out["actual"].append(tau_b(result.point.mean(axis=1), reference))
        out["predicted"].append(result.expected_tau())
        out["plain"].append(plain.expected_tau())
        pooled = np.array([s.pooled_total for s in samples])
        judged = np.array([[np.sum(s.judged & (s.stratum == c)) for c in (0, 1)] for s in samples])
        more = np.ceil(0.3 * (pooled - judged))  # a fixed share: predicted against judged
        bigger = [_judge(later, s, t, m) for s, t, m in zip(samples, truths, more, strict=True)]
        scale = budget._stratum_scale(pooled, judged, more)
        out["at_share"].append((result.expected_tau(scale), tau_b(_mean_xinfap(bigger), reference)))
        tip = budget.tau_advice(result, samples, 0.9)
        if tip["share"]:
            more = np.ceil(tip["share"] * (pooled - judged))
            reached = []
            for _ in range(3):
                bigger = [_judge(later, s, t, m) for s, t, m in zip(samples, truths, more, strict=True)]
                reached.append(tau_b(_mean_xinfap(bigger), reference))
            out["advice"].append((tip["share"], tip["predicted_tau"], float(np.mean(reached))))
    return {key: np.array(value) for key, value in out.items()}


@pytest.fixture(scope="module")
def tau_simulation() -> dict:
    """`simulate_tau` once for the module."""
    return simulate_tau()


def test_expected_tau_against_simulation(tau_simulation):
    actual, predicted, plain = tau_simulation["actual"], tau_simulation["predicted"], tau_simulation["plain"]
    # measured (seeds 1, 3, 5): simulated mean 0.910 / 0.915 / 0.907 (sd 0.07 over samples), predicted +0.011 /
    # +0.013 / +0.017 above it, uncorrected +0.015 / +0.015 / +0.018; with 10 runs -0.008..+0.001, with 12 runs (more
    # near ties) +0.020..+0.028; TREC-COVID: +0.003..+0.009 (scripts/bench/budget_check.py)
    assert 0.88 < actual.mean() < 0.94  # the case is neither trivial nor hopeless
    assert -0.01 < predicted.mean() - actual.mean() < 0.03
    assert plain.mean() > predicted.mean()  # the correction lowers the bootstrap's optimistic tau


def test_tau_advice_reaches_the_target_in_simulation(tau_simulation):
    share, promised, reached = tau_simulation["advice"].T
    # measured (seeds 1, 3, 5): 17 / 11 / 15 of 60 samples asked for a share 0.30 / 0.18 / 0.25 of the unjudged docs,
    # promising 0.906 / 0.907 / 0.909 and reaching 0.931 / 0.905 / 0.933 when judged; TREC-COVID, target 0.9 / 0.95:
    # reached 0.885 / 0.932 at q = 0.05, 0.904 / 0.942 at q = 0.1 (scripts/bench/budget_check.py, 40 samples)
    assert len(share) >= 10 and 0.1 < share.mean() < 0.5
    assert np.all(promised >= 0.9)
    assert 0.9 - 0.02 < reached.mean() < 0.95  # the target within 0.02 on average, without asking for far too much


def test_tau_at_a_share_against_simulation(tau_simulation):
    predicted, reached = tau_simulation["at_share"].T
    # a further 30 % of every stratum's unjudged docs (10 % -> 37 % of stratum 2): measured (seeds 1, 3, 5) predicted
    # 0.957 / 0.972 / 0.963, reached 0.936 / 0.939 / 0.936: optimistic by 0.02-0.03, xinfAP's variance falls slower
    # than (1 - n/N)/n from a small sample (module docstring); shrinking it twice as fast would be 0.04-0.05 off
    assert 0.0 < predicted.mean() - reached.mean() < 0.04


# --- the interval: small-count floor, logit scale, prior for topics without an estimate ------------------------------


def _small_topic(relevant_flags: list[int]) -> budget.TopicSample:
    """The hand-worked jackknife pool (2 runs; strata of 4 and 8 docs) with the given relevance of its 12 docs."""
    ranked = np.array([[0, 4, 1, 5, 6, 2, 7, 8], [4, 5, 0, 9, 10, 1, 11, 3]])
    stratum = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1])
    judged = np.array([1, 1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0], dtype=bool)
    relevant = judged & np.array(relevant_flags, dtype=bool)
    return budget.TopicSample(ranked, stratum, judged, relevant, np.array([4.0, 8.0]))


def test_floor_hand_worked():
    # stratum 0: 3 of 4 judged, 2 relevant; stratum 1: 4 of 8 judged, none relevant (the jackknife sees no spread)
    sample = _small_topic([1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    point = budget.xinf_ap_topic(sample, sample.judged, sample.relevant)[0]
    expected = np.zeros((2, 2))
    for c, (n, big_n, r, unjudged) in enumerate([(3, 4, 2, [3]), (4, 8, 0, [5, 8, 9, 11])]):
        p_hat, p_tilde = r / n, (r + 2) / (n + 4)
        extra = p_tilde * (1 - p_tilde) - p_hat * (1 - p_hat)  # 12/49 - 2/9 and 3/16
        changes = []
        for j in unjudged:  # all of them are tried (fewer than FLOOR_DRAWS)
            judged, relevant = sample.judged.copy(), sample.relevant.copy()
            judged[j] = relevant[j] = True
            changes.append(budget.xinf_ap_topic(sample, judged, relevant)[0] - point)
        expected[c] = np.sqrt((1 - n / big_n) * extra / n) * (n + 1) * np.mean(changes, axis=0)
    floor = budget.floor_components(sample, np.random.default_rng(0))
    np.testing.assert_allclose(floor, expected, rtol=1e-12)
    assert np.all(np.abs(floor[1]) > 0.01)  # no relevant doc seen in stratum 1: the floor still says it may have some
    error = budget.topic_error(sample, np.random.default_rng(0))
    np.testing.assert_allclose(error.variance, np.sum(budget.jackknife_components(sample)[0] ** 2, 0) + np.sum(
        expected**2, 0), rtol=1e-12)  # fmt: skip
    # p^ = 1/2 with a = 2 gives p~ = 1/2: no floor beyond the jackknife
    half = _small_topic([1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0])
    assert np.all(budget.floor_components(half, np.random.default_rng(0))[1] == 0)


def test_logit_interval_hand_worked():
    low, high = budget._logit_interval(np.array([0.2, 0.02, 0.3, 0.97]), np.array([0.05, 0.05, 0.0, 0.02]), 1.96)
    centre, half = np.log(0.2 / 0.8), 1.96 * 0.05 / (0.2 * 0.8)
    assert low[0] == pytest.approx(1 / (1 + np.exp(-(centre - half))))  # 0.1194
    assert high[0] == pytest.approx(1 / (1 + np.exp(-(centre + half))))  # 0.3157: longer above than below
    assert (low[1], high[1]) == pytest.approx((0.0, 0.02 + 1.96 * 0.05))  # reaches below 0: plain, clipped
    assert (low[2], high[2]) == (0.3, 0.3)  # no variance
    assert (low[3], high[3]) == pytest.approx((0.97 - 1.96 * 0.02, 1.0))


def test_prior_for_topics_without_an_estimate_hand_worked():
    # three judged topics with exact scores (no sampling error), one topic without an estimate
    scores = np.array([[0.2, 0.4, 0.3], [0.1, 0.5, 0.6]])  # [run, judged topic]
    empty = (np.zeros((0, 2)), np.zeros(0, np.int64), np.zeros((2, 2)))
    errors = [budget.TopicError(scores[:, t], np.zeros(2), *empty, estimable=True) for t in range(3)]
    errors.append(budget.TopicError(np.zeros(2), np.zeros(2), *empty, estimable=False))
    result = budget.combine(["a", "b", "c", "d"], ["r1", "r2"], errors, replicates=40000, seed=3)
    spread = scores.var(axis=1, ddof=1)  # S per run
    np.testing.assert_allclose(result.estimate[:, 3], scores.mean(axis=1))
    np.testing.assert_allclose(result.estimate_variance[:, 3], spread * (1 + 1 / 3))
    np.testing.assert_allclose(result.mean_variance, spread * (1 + 1 / 3) / 16)  # one topic: (|U| S + |U|^2 S/m)/T^2
    assert result.prior.tolist() == [False, False, False, True] and result.donor[3] in (0, 1, 2)
    # the replicates draw a judged topic's scores plus the judged mean's own error: variance S (1 + 1/m), with the
    # covariance between runs of the judged topics' scores
    draws = result.prior_error[:, :, 3]
    np.testing.assert_allclose(draws.var(axis=0), spread * (1 + 1 / 3), rtol=0.05)
    expected_cov = np.cov(scores)[0, 1] * (1 + 1 / 3)
    assert np.cov(draws.T)[0, 1] == pytest.approx(expected_cov, rel=0.1)
    # with fewer than two judged topics there is no prior: no estimate, an infinite variance, no expected tau
    lonely = budget.combine(["a", "d"], ["r1", "r2"], [errors[0], errors[3]], replicates=10)
    assert np.isnan(lonely.estimate[:, 1]).all() and np.isinf(lonely.mean_variance).all()
    assert np.isnan(lonely.expected_tau())
    assert lonely.intervals()[0][:, 1].tolist() == [0.0, 0.0] and lonely.intervals()[1][:, 1].tolist() == [1.0, 1.0]


def test_unjudged_topics_lower_the_expected_tau_and_never_stop():
    # the case: most topics not judged at all. The old advisor scored them xinfAP 0 with variance 0 and
    # expected tau_b 0.999 (nothing more to judge); with the prior it is 0.654 and says continue, naming them
    full, truths = campaign(seed=1)
    reference = _mean_xinfap(full)
    rng = np.random.default_rng(1)
    samples = []
    for t, (s, truth) in enumerate(zip(full, truths, strict=True)):
        if t < 4:
            top = budget.TopicSample(s.ranked, s.stratum, s.stratum == 0, truth & (s.stratum == 0), s.pooled_total)
            samples.append(_judge(rng, top, truth, np.array([0, max(2, round(0.1 * s.pooled_total[1]))])))
        else:
            nothing = np.zeros(len(truth), dtype=bool)
            samples.append(budget.TopicSample(s.ranked, s.stratum, nothing, nothing, s.pooled_total))
    names, runs = [str(t) for t in range(12)], [str(r) for r in range(8)]
    result = budget.variance_of_samples(names, runs, samples, 200, seed=0)
    old = budget.XinfapVariance(result.topics, result.runs, result.point, result.variance, result.replicates,
                                result.by_stratum)  # fmt: skip
    assert old.expected_tau() > 0.99 and budget.tau_advice(old, samples)["share"] == 0.0  # the old claim
    actual = tau_b(result.ranking_point(), reference)
    assert actual == pytest.approx(0.786, abs=1e-3)
    assert result.expected_tau() == pytest.approx(0.654, abs=0.005)  # well below the old 0.999, below the truth
    tip = budget.tau_advice(result, samples, 0.9)
    pooled, judged, relevant = budget.stratum_counts(samples)
    advice = budget.judging_advice(names, [1, 2], pooled, judged, relevant, tau=tip)
    assert advice["advice"] == "continue" and advice["unestimated_topics"] == names[4:]
    assert {item["topic"] for item in advice["next"][:16]} == set(names[4:])  # the unjudged topics come first
    for row in advice["topics"][4:]:
        assert row["advice"] == "continue" and "unestimated" in row["reasons"] and "tau" in row["reasons"]
        assert min(row["more_per_stratum"].values()) >= 2
    assert advice["expected_tau"] == result.expected_tau()


def test_judging_advice_hand_worked():
    # topic a: judged in full; b: stratum 2 judged once (no estimate); c: both strata sampled well
    pooled = np.array([[5.0, 10.0], [5.0, 10.0], [5.0, 100.0]])
    judged = np.array([[5.0, 10.0], [5.0, 1.0], [5.0, 50.0]])
    relevant = np.array([[2.0, 1.0], [2.0, 0.0], [2.0, 5.0]])
    topics, strata = ["a", "b", "c"], [1, 2]
    loose = budget.judging_advice(topics, strata, pooled, judged, relevant, relative_width=10.0)
    assert [row["advice"] for row in loose["topics"]] == ["stop", "continue", "stop"]
    # b's R_hat has no variance estimate either (one judged doc in a sampled stratum): its interval is all it may be
    assert loose["topics"][1]["reasons"] == ["unestimated", "relevant_width"]
    assert loose["topics"][1]["more_per_stratum"] == {"1": 0, "2": 1}
    assert loose["next"] == [{"topic": "b", "stratum": 2, "more": 1}] and loose["more_total"] == 1
    assert loose["advice"] == "continue" and loose["unestimated_topics"] == ["b"]
    # the ranking's tau below target: every topic with unjudged docs continues by the tau advice's share
    tau = {"target_tau": 0.9, "expected_tau": 0.8, "more": np.array([[0, 0], [0, 3], [0, 20]])}
    short = budget.judging_advice(topics, strata, pooled, judged, relevant, relative_width=10.0, tau=tau)
    assert [row["reasons"] for row in short["topics"]] == [
        ["census"],
        ["unestimated", "relevant_width", "tau"],
        ["tau"],
    ]
    assert short["next"] == [{"topic": "b", "stratum": 2, "more": 3}, {"topic": "c", "stratum": 2, "more": 20}]
    reached = budget.judging_advice(topics[::2], strata, pooled[::2], judged[::2], relevant[::2],
                                    relative_width=10.0, tau={**tau, "expected_tau": 0.95})  # fmt: skip
    assert reached["advice"] == "stop" and reached["next"] == [] and reached["expected_tau"] == 0.95
    # the R_hat target (random orders) asks the Neyman allocation; a non-random order asks until saturated instead
    tight = budget.judging_advice(topics, strata, pooled, judged, relevant, relative_width=0.05)
    extra = budget.allocation(pooled, judged, relevant, target_width=0.05 * np.array([5.0, 2.0, 12.0]))
    assert tight["topics"][2]["reasons"] == ["relevant_width"]
    assert tight["topics"][2]["more_per_stratum"] == {"1": 0, "2": int(extra[2, 1])} and extra[2, 1] > 0
    saturated, queued = np.array([True, True, True]), np.array([[0, 0], [0, 4], [0, 0]])
    biased = budget.judging_advice(topics, strata, pooled, judged, relevant, random=False, saturated=saturated,
                                   queued=queued)  # fmt: skip
    assert [row["advice"] for row in biased["topics"]] == ["stop", "continue", "stop"]
    assert biased["next"] == [{"topic": "b", "stratum": 2, "more": 1, "queued": 4}]


def test_sampled_strata():
    assert budget.sampled_strata(["11-100:0.25"]) == (budget.Stratum(1, 10, 1.0), budget.Stratum(11, 100, 0.25))
    assert budget.sampled_strata(["51-100:10%", "11-30:0.5"]) == (
        budget.Stratum(1, 10, 1.0), budget.Stratum(11, 30, 0.5), budget.Stratum(31, 50, 1.0),
        budget.Stratum(51, 100, 0.1))  # fmt: skip
    assert budget.sampled_strata(["1-50:0.3,51-60:1"]) == (budget.Stratum(1, 50, 0.3), budget.Stratum(51, 60, 1.0))
    for bad in (["11-100"], ["11-100:0"], ["11-100:1.5"], ["20-10:0.5"], ["11-50:0.5", "40-60:0.5"], []):
        with pytest.raises(ValueError):
            budget.sampled_strata(bad)


def test_stratified_sample_is_the_pool_builders():
    from app.evaluation.pools.builders import build_pool
    from app.evaluation.records import Qrels, RunTable

    rng = np.random.default_rng(4)
    runs = []
    for r in range(5):
        topics = np.repeat(["1", "2"], 40)
        docs = np.array([f"d{d:03d}" for t in range(2) for d in rng.choice(120, 40, replace=False)])
        runs.append(RunTable(f"run{r}", topics, docs, np.arange(80), rng.random(80), np.arange(1, 81)))
    strata = budget.sampled_strata(["6-30:0.4"])
    pool = build_pool(runs, strata=strata, seed=9)
    judged_docs = pool.docs[:25]
    qrels = Qrels(pool.topics[:25], judged_docs, (np.arange(25) % 3 == 0).astype(np.int64))
    sample = budget.stratified_sample(prepare_runs(runs), qrels, strata, seed=9)
    mine = {(t, d): (g, s) for t, d, g, s in zip(sample.topics, sample.docs, sample.grades, sample.strata, strict=True)}
    grade = {(t, d): g for t, d, g in zip(qrels.topics, qrels.docs, qrels.grades, strict=True)}
    assert len(mine) == len(pool)
    for t, d, s, drawn in zip(pool.topics, pool.docs, pool.strata, pool.sampled, strict=True):
        assert mine[(t, d)] == ((grade.get((t, d), 0) if drawn else -1), s)  # absent from the qrels: not relevant


@pytest.mark.parametrize("size", [1, 2])
def test_the_budget_over_blocks_of_runs_is_that_of_one_block(size):
    """The runs read twice a block at a time (pool candidates merged, then each run's entries at the pooled lines)
    give the advisor of every run prepared at once, number for number."""
    import json

    from tests.evaluation.analyses.brute import Blocks, random_collection

    runs, qrels = random_collection(3, n_run=5, n_topic=3, n_doc=60, length=30)
    whole = budget.sampled_budget(qrels, prepare_runs(runs, 20), ["4-15:0.5"], replicates=30, seed=2, max_results=20)
    blocks = Blocks(runs, size, max_results=20)
    parts = budget.sampled_budget(qrels, blocks, ["4-15:0.5"], replicates=30, seed=2, max_results=20)
    assert blocks.passes == 2
    assert json.dumps(parts.to_dict(), sort_keys=True) == json.dumps(whole.to_dict(), sort_keys=True)
    assert whole.to_dict()["judged"] < whole.to_dict()["pooled"] and whole.variance.variance.any()


def _coverage_population(seed: int, n_run: int = 5, n_item: int = 400, depth: int = 150) -> budget.TopicSample:
    """A fully judged topic: few relevant docs below rank 10 (4-8 % of them), better runs rank them higher."""
    rng = np.random.default_rng(seed)
    ranked = np.array([rng.permutation(n_item)[:depth] for _ in range(n_run)])
    best = np.full(n_item, 10**6)
    for row in ranked:
        np.minimum.at(best, row, np.arange(1, depth + 1))
    truth = rng.random(n_item) < np.clip(0.5 - best / 60, 0.04, 1)
    for r in range(n_run):
        key = np.arange(depth) - (r + 1) * 8 * truth[ranked[r]] + rng.normal(0, 5, depth)
        ranked[r] = ranked[r][np.argsort(key)]
    best = np.full(n_item, 10**6)
    for row in ranked:
        np.minimum.at(best, row, np.arange(1, depth + 1))
    keep = np.flatnonzero(best <= depth)
    code = np.full(n_item, -1)
    code[keep] = np.arange(len(keep))
    stratum = (best[keep] > 10).astype(np.int64)
    pooled = np.bincount(stratum, minlength=2).astype(float)
    return budget.TopicSample(code[ranked], stratum, np.ones(len(keep), bool), truth[keep], pooled)


def test_interval_coverage_in_simulation():
    # 8 topics, stratum 1 (best rank <= 10) in full and 10 % of stratum 2 (8-18 relevant of ~320), 60 samples: the
    # 95 % interval of each (topic, run) and of each run's mean against the full-judgement AP. Measured: 0.958 and
    # 0.970; the old interval (xinfAP +- 1.96 sqrt(jackknife)) 0.679 and 0.913
    full = [_coverage_population(s) for s in range(8)]
    truth = np.array([budget.xinf_ap_topic(p, p.judged, p.relevant)[0] for p in full]).T  # [run, topic]
    rng = np.random.default_rng(0)
    new, old, new_mean = [], [], []
    for k in range(60):
        samples = []
        for p in full:
            judged = p.stratum == 0
            deep = np.flatnonzero(p.stratum == 1)
            judged[rng.choice(deep, size=round(0.1 * len(deep)), replace=False)] = True
            samples.append(budget.TopicSample(p.ranked, p.stratum, judged, judged & p.relevant, p.pooled_total))
        result = budget.variance_of_samples([str(t) for t in range(8)], [str(r) for r in range(5)], samples, 2, k)
        low, high = result.intervals()
        new.append((truth >= low - 1e-12) & (truth <= high + 1e-12))
        jackknife = np.sqrt(result.variance - result.floor_variance)
        old.append(np.abs(result.point - truth) <= 1.96 * jackknife + 1e-12)
        _, mean_low, mean_high = result.mean_intervals()
        new_mean.append((truth.mean(axis=1) >= mean_low) & (truth.mean(axis=1) <= mean_high))
    assert 0.93 < np.mean(new) < 0.98 and np.mean(new_mean) > 0.95
    assert np.mean(old) < 0.75  # the old interval fails here


def test_a_topic_error_in_chunks_of_runs_is_that_of_all_runs_at_once(monkeypatch):
    """The jackknife and floor of a topic computed a few runs at a time (to bound memory) are those of all runs at
    once, bit for bit, and leave the generator where one call leaves it."""
    from tests.evaluation.analyses.brute import random_collection

    runs, qrels = random_collection(8, n_run=7, n_topic=2, n_doc=80, length=40)
    sample = budget.stratified_sample(prepare_runs(runs, 40), qrels, budget.sampled_strata(["3-30:0.3"]), seed=1)
    _, samples = budget.topic_samples(index_lines(prepare_runs(runs, 40), sample))
    whole_rng, chunk_rng = np.random.default_rng(5), np.random.default_rng(5)
    whole = budget.topic_error(samples[0], whole_rng, 40)
    monkeypatch.setattr(budget, "JACKKNIFE_ELEMENTS", 64 * samples[0].ranked.shape[1] * 2)  # two runs a chunk
    chunked = budget.topic_error(samples[0], chunk_rng, 40)
    for field in ("point", "bias", "parts", "of", "floor", "floor_mean"):
        assert getattr(chunked, field).tobytes() == getattr(whole, field).tobytes(), field
    assert whole.parts.any() and whole.floor.any()
    assert chunk_rng.random() == whole_rng.random()


def _three_strata(seed: int, n_run: int = 6, n_item: int = 400, depth: int = 150) -> budget.TopicSample:
    """A topic of three strata (a census, two sampled), lists with padding (-1) and unpooled ranks, a run with none."""
    rng = np.random.default_rng(seed)
    ranked = np.array([np.concatenate([rng.permutation(n_item)[: depth - 20], np.full(20, -1)]) for _ in range(n_run)])
    ranked[0, rng.random(depth) < 0.2] = -1  # unpooled ranks inside a list
    ranked[-1] = -1  # a run that ranks none of the pool
    stratum = rng.integers(0, 3, n_item)
    judged = (stratum == 0) | (rng.random(n_item) < np.where(stratum == 1, 0.5, 0.15))
    relevant = judged & (rng.random(n_item) < 0.35)
    return budget.TopicSample(ranked, stratum, judged, relevant, np.bincount(stratum, minlength=3).astype(float))


def _dense(sample: budget.TopicSample, units: list[np.ndarray], max_results: int) -> np.ndarray:
    """xinf_ap_topic of every judgement set leaving one unit out, built as [set, item] masks."""
    judged = np.repeat(sample.judged[None, :], len(units), axis=0)
    for row, docs in enumerate(units):
        judged[row, docs] = False
    return budget.xinf_ap_topic(sample, judged, judged & sample.relevant[None, :], max_results)


@pytest.mark.parametrize("seed", range(5))
def test_deleting_units_at_the_relevant_entries_gives_the_dense_xinfap_bit_for_bit(seed: int, monkeypatch) -> None:
    sample = _three_strata(seed)
    rng = np.random.default_rng(seed + 50)
    sampled = [np.flatnonzero(sample.judged & (sample.stratum == c)) for c in (1, 2)]
    units = [docs[i : i + 1] for docs in sampled for i in range(len(docs))]  # delete-one
    units += [part for docs in sampled for part in np.array_split(rng.permutation(docs), 7)]  # delete-a-group
    units += [np.zeros(0, dtype=np.int64)]  # nothing deleted: the full judgements
    for max_results in (1000, 3):  # 3: r_hat above the cut scales the value
        expected = _dense(sample, units, max_results)
        found = budget.xinf_ap_deletions(sample, units, max_results)
        assert found.tobytes() == expected.tobytes()
        point = budget.xinf_ap_topic(sample, sample.judged, sample.relevant, max_results)
        assert found[-1].tobytes() == point.tobytes()
    assert len(set(found[:, 1].tolist())) > 10  # the deletions move the values
    monkeypatch.setattr(budget, "JACKKNIFE_ELEMENTS", 50)  # a few sets a call: the same numbers
    assert budget.xinf_ap_deletions(sample, units, 1000).tobytes() == _dense(sample, units, 1000).tobytes()
    ranked_twice = np.concatenate([sample.ranked[:, :5]] * 2, axis=1)  # each run ranks its first items twice
    twice = budget.TopicSample(ranked_twice, sample.stratum, sample.judged, sample.relevant, sample.pooled_total)
    assert budget.xinf_ap_deletions(twice, units, 1000).tobytes() == _dense(twice, units, 1000).tobytes()


def _dense_added(sample: budget.TopicSample, units: list[np.ndarray], max_results: int) -> np.ndarray:
    """xinf_ap_topic of every judgement set adding one unit as judged relevant, built as [set, item] masks."""
    judged = np.repeat(sample.judged[None, :], len(units), axis=0)
    relevant = np.repeat((sample.relevant & sample.judged)[None, :], len(units), axis=0)
    for row, docs in enumerate(units):
        judged[row, docs] = relevant[row, docs] = True
    return budget.xinf_ap_topic(sample, judged, relevant, max_results)


@pytest.mark.parametrize("seed", range(5))
def test_adding_units_at_the_relevant_entries_gives_the_dense_xinfap_bit_for_bit(seed: int, monkeypatch) -> None:
    """The floors' sets (one unjudged doc judged relevant each) and units of several docs, against xinf_ap_topic."""
    sample = _three_strata(seed)
    rng = np.random.default_rng(seed + 70)
    unjudged = [np.flatnonzero(~sample.judged & (sample.stratum == c)) for c in (1, 2)]
    units = [docs[i : i + 1] for docs in unjudged for i in rng.permutation(len(docs))[:30]]  # add-one, as the floors
    units += [part for docs in unjudged for part in np.array_split(rng.permutation(docs), 5)]  # add a group
    units += [np.zeros(0, dtype=np.int64)]  # nothing added: the full judgements
    for max_results in (1000, 3):
        expected = _dense_added(sample, units, max_results)
        found = budget.xinf_ap_additions(sample, units, max_results)
        assert found.tobytes() == expected.tobytes()
        point = budget.xinf_ap_topic(sample, sample.judged, sample.relevant, max_results)
        assert found[-1].tobytes() == point.tobytes()
    assert len(set(found[:60, 1].tolist())) > 10  # the additions move the values
    monkeypatch.setattr(budget, "JACKKNIFE_ELEMENTS", 50)  # a few sets a call: the same numbers
    assert budget.xinf_ap_additions(sample, units, 1000).tobytes() == _dense_added(sample, units, 1000).tobytes()
    ranked_twice = np.concatenate([sample.ranked[:, :5]] * 2, axis=1)  # each run ranks its first items twice
    twice = budget.TopicSample(ranked_twice, sample.stratum, sample.judged, sample.relevant, sample.pooled_total)
    assert budget.xinf_ap_additions(twice, units, 1000).tobytes() == _dense_added(twice, units, 1000).tobytes()
    with pytest.raises(ValueError, match="unjudged"):
        budget.xinf_ap_additions(sample, [np.flatnonzero(sample.judged)[:1]], 1000)
