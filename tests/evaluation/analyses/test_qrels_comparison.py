"""Rankings and judgements across qrels versions: hand-worked cases, plain-Python sets, scipy and pytrec_eval."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from app.evaluation.analyses.qrels_comparison import compare_qrels, compare_rankings, judgement_agreement
from app.evaluation.formats.trec_files import read_qrels, read_run
from app.evaluation.records import Qrels

pytrec_eval = pytest.importorskip("pytrec_eval")


def _qrels(rows: list[tuple[str, str, int]]) -> Qrels:
    return Qrels(
        np.array([r[0] for r in rows]), np.array([r[1] for r in rows]), np.array([r[2] for r in rows], dtype=np.int64)
    )


def test_rankings_hand_worked():
    # runs A, B, C, D. Version 1 ranks A > B > C > D; version 2 ranks B > A > C > D (a swap at the top);
    # version 3 ranks A > B > D > C (a swap at the bottom). tau_b is 2/3 for both swaps; tau_AP (Yilmaz et al.)
    # charges the top swap more: tau_AP(v1 -> v2) = 2/3 * (0/1 + 2/2 + 3/3) - 1 = 1/3,
    # tau_AP(v1 -> v3) = 2/3 * (1/1 + 2/2 + 2/3) - 1 = 7/9.
    scores = np.array([[0.4, 0.3, 0.2, 0.1], [0.3, 0.4, 0.2, 0.1], [0.4, 0.3, 0.1, 0.2]])
    result = compare_rankings(["v1", "v2", "v3"], ["A", "B", "C", "D"], scores)
    assert result.tau_b[0, 1] == pytest.approx(2 / 3) and result.tau_b[0, 2] == pytest.approx(2 / 3)
    assert result.tau_ap[0, 1] == pytest.approx(1 / 3)
    assert result.tau_ap[0, 2] == pytest.approx(7 / 9)
    assert np.diag(result.tau_b).tolist() == [1.0, 1.0, 1.0]
    for a in range(3):
        for b in range(3):
            assert result.tau_b[a, b] == pytest.approx(stats.kendalltau(scores[a], scores[b]).statistic)
    assert result.ranks.tolist() == [[1, 2, 3, 4], [2, 1, 3, 4], [1, 2, 4, 3]]
    data = result.to_dict()
    assert data["tau_ap"][0][1] == pytest.approx(1 / 3) and data["ranks"]["v3"] == [1, 2, 4, 3]


def test_rankings_ties_policy():
    # tied runs share the best rank; tau_b counts ties as scipy's variant b; tau_AP takes runs tied in the truth as
    # correctly ordered either way, and breaks ties in the estimate by run order
    scores = np.array([[0.5, 0.5, 0.1], [0.2, 0.3, 0.1]])
    result = compare_rankings(["a", "b"], ["x", "y", "z"], scores)
    assert result.ranks[0].tolist() == [1, 1, 3]
    assert result.tau_b[0, 1] == pytest.approx(stats.kendalltau(scores[0], scores[1]).statistic)
    # truth a: x = y > z; estimate b: y, x, z. i=2 (x): y above, tied in the truth -> correct (1/1);
    # i=3 (z): both above correctly (2/2) -> tau_AP = 1
    assert result.tau_ap[0, 1] == pytest.approx(1.0)
    # truth b: y > x > z; estimate a: x, y (tie broken by order), z. i=2 (y): x above it is truly below -> 0/1;
    # i=3 (z): 2/2 -> tau_AP = 2/2 * (0 + 1) - 1 = 0
    assert result.tau_ap[1, 0] == pytest.approx(0.0)


def test_judgement_agreement_hand_worked():
    # topic 1: a judges d1 d2 d3 relevant, d4 d5 not; b judges d2 d3 d4 relevant, d1 d5 not; b also judges d6.
    # relevant sets {d1,d2,d3} and {d2,d3,d4}: overlap 2/4. Common judged d1..d5, agreement on d2 d3 d5 = 3/5;
    # both mark 3/5 relevant, chance agreement 0.6^2 + 0.4^2 = 0.52, kappa = (0.6 - 0.52) / 0.48 = 1/6.
    # topic 2 is judged by a only and does not count; topic 3: both agree on one relevant doc.
    a = _qrels(
        [("1", "d1", 1), ("1", "d2", 2), ("1", "d3", 1), ("1", "d4", 0), ("1", "d5", 0), ("2", "d1", 1)]
        + [("3", "d7", 1), ("3", "d8", -1)]
    )
    b = _qrels(
        [("1", "d1", 0), ("1", "d2", 1), ("1", "d3", 1), ("1", "d4", 1), ("1", "d5", 0), ("1", "d6", 0)]
        + [("3", "d7", 1), ("3", "d8", 1)]
    )
    result = judgement_agreement(["a", "b"], [a, b])
    assert result.topics == ["1", "3"]
    assert result.intersection.tolist() == [[2, 1]]
    assert result.union.tolist() == [[4, 2]]  # d8 is unjudged in a: relevant in b only
    assert result.common.tolist() == [[5, 1]]
    assert result.kappa[0, 0] == pytest.approx(1 / 6)
    data = result.to_dict()["pairs"][0]
    assert data["overlap"] == pytest.approx(3 / 6)
    assert data["a_found_by_b"] == pytest.approx(3 / 4) and data["b_found_by_a"] == pytest.approx(3 / 5)
    assert data["topics"][0]["overlap"] == pytest.approx(0.5)
    # overall kappa over the six common docs: agreement 4/6, marginals 4/6 and 4/6
    expected = (4 / 6 - ((4 / 6) ** 2 + (2 / 6) ** 2)) / (1 - ((4 / 6) ** 2 + (2 / 6) ** 2))
    assert data["kappa"] == pytest.approx(expected)


def _kappa(x: list[int], y: list[int]) -> float:
    """Cohen's kappa of two binary label lists, written out."""
    n = len(x)
    observed = sum(a == b for a, b in zip(x, y, strict=True)) / n
    px, py = sum(x) / n, sum(y) / n
    chance = px * py + (1 - px) * (1 - py)
    return (observed - chance) / (1 - chance) if chance < 1 else (1.0 if observed == 1 else 0.0)


@pytest.mark.parametrize("seed", [0, 1])
def test_judgement_agreement_equals_plain_sets(seed):
    rng = np.random.default_rng(seed)
    versions = []
    for _ in range(3):
        rows = [
            (f"t{t}", f"d{d}", int(rng.choice([-1, 0, 0, 1, 2])))
            for t in range(4)
            for d in rng.choice(30, size=15, replace=False).tolist()
        ]
        versions.append(_qrels(rows))
    result = judgement_agreement(["r1", "r2", "adj"], versions)
    assert result.pairs == [(0, 1), (0, 2), (1, 2)]
    for p, (a, b) in enumerate(result.pairs):
        qa = {
            (t, d): g for t, d, g in zip(versions[a].topics, versions[a].docs, versions[a].grades.tolist(), strict=True)
        }
        qb = {
            (t, d): g for t, d, g in zip(versions[b].topics, versions[b].docs, versions[b].grades.tolist(), strict=True)
        }
        for i, topic in enumerate(result.topics):
            rel_a = {d for (t, d), g in qa.items() if t == topic and g >= 1}
            rel_b = {d for (t, d), g in qb.items() if t == topic and g >= 1}
            assert result.intersection[p, i] == len(rel_a & rel_b)
            assert result.union[p, i] == len(rel_a | rel_b)
            common = sorted(d for (t, d), g in qa.items() if t == topic and g >= 0 and qb.get((t, d), -1) >= 0)
            assert result.common[p, i] == len(common)
            if common:
                x = [int(qa[(topic, d)] >= 1) for d in common]
                y = [int(qb[(topic, d)] >= 1) for d in common]
                assert result.kappa[p, i] == pytest.approx(_kappa(x, y))


def _pytrec_map(qrels: Qrels, runs) -> np.ndarray:
    """MAP of every run by pytrec_eval, averaged over all qrels topics (trec_eval -c)."""
    truth: dict[str, dict[str, int]] = {}
    for t, d, g in zip(qrels.topics.tolist(), qrels.docs.tolist(), qrels.grades.tolist(), strict=True):
        truth.setdefault(t, {})[d] = int(g)
    evaluator = pytrec_eval.RelevanceEvaluator(truth, {"map"})
    out = []
    for run in runs:
        ranked: dict[str, dict[str, float]] = {}
        for t, d, s in zip(run.topics.tolist(), run.docs.tolist(), run.scores.tolist(), strict=True):
            ranked.setdefault(t, {})[d] = s
        per_topic = evaluator.evaluate(ranked)
        out.append(sum(v["map"] for v in per_topic.values()) / len(truth))
    return np.array(out)


def test_trec_covid_against_a_second_assessor(shared_data):
    base = shared_data / "trec-covid-round1"
    qrels = read_qrels(base / "qrels.txt")
    runs = [read_run(p) for p in sorted((base / "runs").glob("*.gz"))][:12]
    rng = np.random.default_rng(5)
    flip = rng.random(len(qrels)) < 0.15  # a second assessor who disagrees on 15 % of the docs
    second = Qrels(qrels.topics, qrels.docs, np.where(flip, np.where(qrels.grades >= 1, 0, 1), qrels.grades))
    result = compare_qrels(["round 1", "round 2"], [qrels, second], runs, measure="map")
    assert result.measure == "AP"
    expected = np.stack([_pytrec_map(qrels, runs), _pytrec_map(second, runs)])
    assert result.rankings.scores == pytest.approx(expected, abs=1e-12)
    tau = stats.kendalltau(expected[0], expected[1]).statistic
    assert result.rankings.tau_b[0, 1] == pytest.approx(tau)
    assert 0.3 < tau < 1.0  # noisy judgements reorder some runs, not all
    pair = result.judgements.to_dict()["pairs"][0]
    rel = qrels.grades >= 1
    rel2 = second.grades >= 1
    assert pair["overlap"] == pytest.approx((rel & rel2).sum() / (rel | rel2).sum())
    assert pair["kappa"] == pytest.approx(_kappa(rel.astype(int).tolist(), rel2.astype(int).tolist()))
