"""Prediction-powered estimates: the verification design, a hand-worked case, trec_eval's values when people judge
everything, and by simulation unbiased estimates and the coverage of the labelling intervals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from app.evaluation.errors import MeasureError
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.measures.evaluate import evaluate
from app.evaluation.records import Qrels, RunTable
from app.evaluation.statistics.prediction_powered import (
    VerifiedItems,
    inclusion_probabilities,
    prediction_powered,
    verification_draw,
)

Z95 = 1.959963984540054


def table(tag: str, rows: list[tuple[str, str]]) -> RunTable:
    """A run of (topic, docno) rows ranked in the order given."""
    n = len(rows)
    return RunTable(
        tag=tag,
        topics=np.array([t for t, _ in rows]),
        docs=np.array([d for _, d in rows]),
        ranks=np.arange(1, n + 1),
        scores=np.arange(n, 0, -1, dtype=np.float64),
        lines=np.arange(1, n + 1),
    )


def test_uniform_and_stratified_inclusion_keep_the_share() -> None:
    """Uniform gives the share everywhere; stratified follows sqrt(p(1-p)), floors at floor*share, caps at 1."""
    p = np.array([0.5, 0.9, 0.99, 0.01, np.nan, 0.7])
    assert inclusion_probabilities(p, 0.2, stratify=False).tolist() == [0.2] * 6
    pi = inclusion_probabilities(p, 0.2, stratify=True, floor=0.1)
    assert pi.mean() == pytest.approx(0.2, abs=1e-12)
    u = np.sqrt(np.array([0.25, 0.09, 0.0099, 0.0099, 0.25, 0.21]))
    assert pi == pytest.approx(0.2 * (0.9 * u / u.mean() + 0.1))
    assert pi[4] == pi[0] == pi.max()  # no probability counts as the most uncertain
    capped = inclusion_probabilities(np.array([0.5, 0.5, 0.999, 0.999]), 0.6, stratify=True, floor=0.05)
    assert capped[:2].tolist() == [1.0, 1.0]
    assert capped.mean() == pytest.approx(0.6, abs=1e-12)
    assert capped[2] == pytest.approx(0.2)
    for bad in (0.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="share"):
            inclusion_probabilities(p, bad, stratify=True)


def test_verification_draw_is_seeded_per_topic_whatever_the_order() -> None:
    """The same items drawn in any order; the drawn share near pi; another topic or seed draws otherwise."""
    docs = [f"d{i:04d}" for i in range(4000)]
    pi = np.full(4000, 0.25)
    drawn = verification_draw(3, "7", docs, pi)
    shuffle = np.random.default_rng(0).permutation(4000)
    again = verification_draw(3, "7", [docs[i] for i in shuffle], pi[shuffle])
    assert np.array_equal(again, drawn[shuffle])
    assert abs(drawn.mean() - 0.25) < 4 * np.sqrt(0.25 * 0.75 / 4000)
    assert not np.array_equal(verification_draw(4, "7", docs, pi), drawn)
    assert not np.array_equal(verification_draw(3, "8", docs, pi), drawn)
    assert verification_draw(3, "7", docs, np.ones(4000)).all()


def test_hand_worked_case() -> None:
    """One topic, pooled a, b, c, d (human 1, 0, 1, 0); model p = 0.8, 0.4, 0.3, 0.1; pi = 0.5; b and c drawn.

    Rectified labels y = m + xi (h - m) / pi: a 0.8, b 0.4 + (0 - 0.4) / 0.5 = -0.4, c 0.3 + 0.7 / 0.5 = 1.7, d 0.1;
    R_hat = 0.8 - 0.4 + 1.7 + 0.1 = 2.2 (above the 1 relevant item people found).
    Run A ranks a, b, c, x (x not pooled); run B ranks c, d, y (not pooled), a.
    P@2: A (0.8 - 0.4) / 2 = 0.2; B (1.7 + 0.1) / 2 = 0.9.
    AP, S = sum_j y_j / j (1 + sum of y above j): A 0.8 + (-0.4 / 2)(1.8) + (1.7 / 3)(1.4) = 1.2333..., over 2.2
    = 0.560606...; B 1.7 + (0.1 / 2)(2.7) + (0.8 / 4)(2.8) = 2.395, over 2.2 = 1.0886, clipped to 1.
    P@2's labelling variance is the larger of two. Horvitz-Thompson, sum over drawn items of (1 - pi) / pi^2
    (c_i (h_i - m_i))^2, c_i = 1/2 in the top 2: A (b) 2 (0.5 * -0.4)^2 = 0.08; B (c) 2 (0.5 * 0.7)^2 = 0.245.
    Pooled, sum over all items of (1 - pi) / pi c_i^2 times the mean squared residual of the drawn items of its
    stratum (the model's call): b and c, both called 0, mean (0.16 + 0.49) / 2 = 0.325; a (called 1) has no drawn
    peer, 0. A: a 0 + b 1 * 0.25 * 0.325 = 0.08125 (> 0.08); B: c and d 2 * 0.25 * 0.325 = 0.1625 (< 0.245).
    """
    items = VerifiedItems(
        topic=np.array(["1"] * 4),
        docno=np.array(["a", "b", "c", "d"]),
        model_grade=np.array([1, 0, 0, 0]),
        model_probability=np.array([0.8, 0.4, 0.3, 0.1]),
        human_grade=np.array([-1, 0, 1, -1]),
        inclusion=np.full(4, 0.5),
        sampled=np.array([False, True, True, False]),
    )
    runs = [table("A", [("1", d) for d in "abcx"]), table("B", [("1", d) for d in "cdya"])]
    est = prediction_powered(runs, items, ["P_2", "map"])
    assert est.measures == ["P@2", "AP"] and est.runs == ["A", "B"] and est.topics == ["1"]
    assert est.values[:, 0, 0] == pytest.approx([0.2, 0.9])
    assert est.values[:, 1, 0] == pytest.approx([1.2333333333333334 / 2.2, 1.0])
    assert est.se[:, 0] == pytest.approx(np.sqrt([0.08125, 0.245]))
    assert est.ci_low[:, 0] == pytest.approx(est.mean[:, 0] - Z95 * est.se[:, 0])
    assert est.ci_high[:, 0] == pytest.approx(est.mean[:, 0] + Z95 * est.se[:, 0])
    assert (est.n_human, est.n_model, est.n_items) == (2, 4, 4)
    assert est.to_dict()["runs"]["B"]["P@2"]["topics"] == {"1": pytest.approx(0.9)}


def test_bad_input_is_refused() -> None:
    """A drawn item without a human grade, an unsupported measure, a bad level: clear errors."""
    items = VerifiedItems(np.array(["1"]), np.array(["a"]), np.array([1]), np.array([np.nan]), np.array([-1]),
                          np.array([0.5]), np.array([True]))  # fmt: skip
    runs = [table("A", [("1", "a")])]
    with pytest.raises(ValueError, match="human grade"):
        prediction_powered(runs, items, ["P_1"])
    with pytest.raises(MeasureError, match="bpref"):
        prediction_powered(runs, items, ["bpref"])
    with pytest.raises(ValueError, match="level"):
        prediction_powered(runs, items, ["P_1"], level=1.5)


def test_all_human_equals_trec_eval(shared_data: Path) -> None:
    """pi = 1 everywhere, no model: TREC-COVID round 1 (graded 0/1/2) gives evaluate()'s values (pytrec_eval's)."""
    base = shared_data / "trec-covid-round1"
    qrels = read_qrels(base / "qrels.txt")
    runs = [read_run(path) for path in sorted((base / "runs").iterdir())]
    n = len(qrels)
    items = VerifiedItems(qrels.topics, qrels.docs, np.full(n, -1), np.full(n, np.nan), qrels.grades, np.ones(n),
                          np.ones(n, dtype=bool))  # fmt: skip
    names = ["P_5", "P_10", "map", "ndcg_cut_10", "ndcg_cut_100", "ndcg"]
    est = prediction_powered(runs, items, names)
    truth = evaluate(qrels, runs, names)
    assert est.measures == truth.measures and est.topics == truth.topics and est.runs == truth.runs
    assert np.abs(est.values - truth.values).max() < 1e-12
    assert est.se.max() == 0.0 and est.n_model == 0


def synthetic(seed: int) -> tuple[list[RunTable], np.ndarray, np.ndarray, np.ndarray]:
    """20 topics of 60 pooled docs (graded 0/1/2), 8 runs of 40 docs each, of varied quality."""
    rng = np.random.default_rng(seed)
    topics, docs, grades = [], [], []
    for t in range(20):
        rate = rng.uniform(0.15, 0.5)
        g = np.where(rng.random(60) < rate, rng.choice([1, 2], 60), 0)
        topics += [str(t)] * 60
        docs += [f"t{t}d{i}" for i in range(60)]
        grades.append(g)
    grade = np.concatenate(grades)
    runs = []
    for r in range(8):
        rows = []
        for t in range(20):
            score = grades[t] * (r / 4.0) + rng.normal(size=60)
            order = np.argsort(-score)[:40]
            rows += [(str(t), f"t{t}d{i}") for i in order]
        runs.append(table(f"run{r}", rows))
    return runs, np.array(topics), np.array(docs), grade


@pytest.mark.parametrize("error_rate", [0.1, 0.4])
def test_unbiased_with_covering_intervals(error_rate: float) -> None:
    """300 seeded draws (share 0.3, uniform) of a fixed full-human qrels and a simulated model.

    P@10 is unbiased (mean within 4 SE of the truth); nDCG@10, a ratio, nearly: its ideal DCG comes from the
    rectified per-grade counts, and 1 / E[X] is not E[1 / X] (measured up to 0.010 at error rate 0.1 and 0.023 at
    0.4, 3-8 SE of the 300-draw mean, so a real bias, not noise);
    AP's floored, clipped ratio is biased on these small topics (about 10 relevant each: up to 0.025 at error rate
    0.1, 0.057 at 0.4). The nominal 95 % intervals of the run means (variance: the larger of the Horvitz-Thompson and
    the stratum-pooled estimates) cover the full-human mean 90-98 % of the time, nominal +- about 3 binomial SE of
    300 draws (measured P@10 0.955 and 0.94, nDCG@10 0.93 and 0.95, AP 0.96 at both error rates); an interval of
    twice the width would cover nearly always and fail the upper bound.
    """
    runs, topic, docno, grade = synthetic(11)
    names = ["P_10", "ndcg_cut_10", "map"]
    truth = evaluate(Qrels(topic, docno, grade), runs, names).mean()
    rng = np.random.default_rng(error_rate.as_integer_ratio()[1])
    wrong = rng.random(len(grade)) < error_rate
    relevant = (grade >= 1) ^ wrong
    confidence = 0.5 + 0.5 / (1 + np.exp(-(np.where(wrong, -1.0, 1.0) + 0.5 * rng.normal(size=len(grade)))))
    probability = np.where(relevant, confidence, 1 - confidence)
    model = np.where(relevant, np.where(grade >= 1, grade, 1), 0)
    pi = np.full(len(grade), 0.3)
    means, covered = [], []
    for seed in range(300):
        drawn = np.zeros(len(grade), dtype=bool)
        for t in np.unique(topic):
            rows = np.flatnonzero(topic == t)
            drawn[rows] = verification_draw(seed, str(t), docno[rows].tolist(), pi[rows])
        items = VerifiedItems(topic, docno, model, probability, np.where(drawn, grade, -1), pi, drawn)
        est = prediction_powered(runs, items, names)
        means.append(est.mean)
        covered.append((est.ci_low <= truth) & (truth <= est.ci_high))
    mean = np.array(means)
    se_of_mean = mean.std(axis=0) / np.sqrt(len(mean))
    bias = mean.mean(axis=0) - truth
    coverage = np.array(covered).mean(axis=(0, 1))
    assert np.all(np.abs(bias[:, 0]) < 4 * se_of_mean[:, 0])
    assert np.all(np.abs(bias[:, 1]) < {0.1: 0.015, 0.4: 0.03}[error_rate])  # the ratio's bias: see docstring
    assert np.all(np.abs(bias[:, 2]) < {0.1: 0.03, 0.4: 0.07}[error_rate])  # measured 0.025 and 0.057: see docstring
    assert 0.90 <= coverage[0] <= 0.98, coverage
    assert 0.90 <= coverage[1] <= 0.98, coverage
    assert 0.90 <= coverage[2] <= 0.98, coverage
