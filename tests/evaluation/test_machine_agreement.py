"""The machine-agreement report's core against hand-worked cases and independent computations (a plain loop for the
weighted kappa, scipy for tau_b and the bootstrap), and its warnings firing and staying silent in constructed cases."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import scipy.stats

from app.evaluation.analyses.machine_agreement import (
    compare_judgements,
    default_top_k,
    machine_agreement,
    model_family,
    names_family,
)
from app.evaluation.measures.evaluate import evaluate
from app.evaluation.records import Qrels, RunTable
from app.evaluation.statistics.agreement import cohen_kappa, confusion_matrix, weighted_kappa
from tests.evaluation.analyses.brute import Blocks

# --- weighted kappa ---------------------------------------------------------------------------------------------------

# Hand-worked, n = 20, human grade x model grade, margins rows 8 6 6, columns 7 7 6; expected counts r_i c_j / n:
# E01 2.8, E02 2.4, E10 2.1, E12 1.8, E20 2.1, E21 2.1 (off the diagonal).
# linear (w 0.5 for one grade apart, 1 for two): observed 0.5 * (2 + 1 + 1 + 1) = 2.5, expected 0.5 * 8.8 + 1 * 4.5
#   = 8.9, kappa = 1 - 2.5 / 8.9 = 6.4 / 8.9
# quadratic (w 0.25, 1): observed 1.25, expected 0.25 * 8.8 + 4.5 = 6.7, kappa = 1 - 1.25 / 6.7 = 5.45 / 6.7
# unweighted: p_o = 15 / 20, p_e = (56 + 42 + 36) / 400 = 0.335, kappa = 0.415 / 0.665
HAND = np.array([[6, 2, 0], [1, 4, 1], [0, 1, 5]])


@pytest.mark.parametrize(
    ("weights", "expected"), [("linear", 6.4 / 8.9), ("quadratic", 5.45 / 6.7), ("none", 0.415 / 0.665)]
)
def test_weighted_kappa_of_a_hand_worked_3x3(weights: str, expected: float) -> None:
    assert weighted_kappa(HAND, weights) == pytest.approx(expected, abs=1e-12)


def test_binary_weighted_kappa_is_cohens_published_example() -> None:
    """Wikipedia's worked example of Cohen's kappa: 50 proposals, 20 yes-yes, 5 yes-no, 10 no-yes, 15 no-no: 0.4."""
    table = np.array([[20, 5], [10, 15]])
    for weights in ("none", "linear", "quadratic"):
        assert weighted_kappa(table, weights) == pytest.approx(0.4, abs=1e-12)


def _loop_kappa(first: list[int], second: list[int], k: int, power: int) -> float:
    """sklearn's cohen_kappa_score formula written out item by item: 1 - sum w O / sum w E, w = |i - j| ** power."""
    n = len(first)
    observed = sum(abs(a - b) ** power for a, b in zip(first, second, strict=True)) / n
    expected = 0.0
    for i in range(k + 1):
        for j in range(k + 1):
            share_i = sum(1 for a in first if a == i) / n
            share_j = sum(1 for b in second if b == j) / n
            expected += abs(i - j) ** power * share_i * share_j
    return 1.0 - observed / expected


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weighted_kappa_matches_a_plain_loop_and_cohens_kappa_for_two_grades(seed: int) -> None:
    rng = np.random.default_rng(seed)
    first = rng.integers(0, 4, 200)
    second = np.clip(first + rng.integers(-1, 2, 200) * (rng.random(200) < 0.4), 0, 3)
    table = confusion_matrix(first, second, 4)
    for weights, power in (("linear", 1), ("quadratic", 2)):
        assert weighted_kappa(table, weights) == pytest.approx(_loop_kappa(first.tolist(), second.tolist(), 3, power))
    binary_a, binary_b = first >= 2, second >= 2
    binary = confusion_matrix(binary_a.astype(int), binary_b.astype(int), 2)
    assert weighted_kappa(binary, "linear") == pytest.approx(cohen_kappa(binary_a, binary_b))


def test_weighted_kappa_edges() -> None:
    assert np.isnan(weighted_kappa(np.zeros((3, 3))))
    assert weighted_kappa(np.array([[0, 0], [0, 7]])) == 1.0  # one grade for everything, both
    assert weighted_kappa(np.array([[0, 7], [0, 0]])) == 0.0  # different constants
    with pytest.raises(ValueError, match="square"):
        weighted_kappa(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="weights"):
        weighted_kappa(HAND, "cubic")
    with pytest.raises(ValueError, match="0..1"):
        confusion_matrix(np.array([0, 2]), np.array([0, 1]), 2)


# --- judgements -------------------------------------------------------------------------------------------------------


def _qrels(rows: list[tuple[str, str, int]]) -> Qrels:
    """Qrels from (topic, doc, grade) rows."""
    topics, docs, grades = zip(*rows, strict=True)
    return Qrels(np.array(topics, dtype=str), np.array(docs, dtype=str), np.array(grades, dtype=np.int64))


def test_confusion_counts_only_items_both_judged() -> None:
    human = _qrels([("1", "a", 2), ("1", "b", 0), ("1", "c", 1), ("1", "d", -1), ("2", "a", 0), ("2", "z", 1)])
    model = _qrels([("1", "a", 1), ("1", "b", 0), ("1", "c", 1), ("1", "d", 1), ("2", "a", 2), ("3", "q", 0)])
    result = compare_judgements(human, model)
    # common: 1/a (2 -> 1), 1/b (0 -> 0), 1/c (1 -> 1), 2/a (0 -> 2); 1/d unjudged by people, 2/z and 3/q one side only
    assert result.confusion.tolist() == [[1, 0, 1], [0, 1, 0], [0, 1, 0]]
    assert (result.common, result.human_judged, result.model_judged) == (4, 5, 6)
    assert result.base_rates() == (0.5, 0.75)
    data = result.to_dict()
    assert data["base_rate"] == {"human": 0.5, "model": 0.75} and data["grades"] == [0, 1, 2]
    binary = cohen_kappa(np.array([1, 0, 1, 0]), np.array([1, 0, 1, 1]))
    assert data["kappa_binary"] == pytest.approx(binary)
    assert compare_judgements(human, model, max_grade=3).confusion.shape == (4, 4)
    with pytest.raises(ValueError, match="grade 2, above max_grade 1"):
        compare_judgements(human, model, max_grade=1)


# --- rankings, shifts and warnings on constructed collections ---------------------------------------------------------

N_TOPIC, N_DOC = 30, 40


def _collection(seed: int, types: list[str], boost: str | None = None) -> tuple[list[RunTable], Qrels, Qrels]:
    """Runs of the given types over N_TOPIC topics, human qrels with five relevant docs a topic, and model qrels: the
    human ones with 10 % of the grades flipped at random, plus (with `boost`) three docs per topic the model alone
    calls relevant, which the runs of type `boost` rank first and no other run retrieves. Runs come in pairs of one
    quality (how far relevant docs score above the others)."""
    rng = np.random.default_rng(seed)
    h_rows, m_rows = [], []
    relevant = {}
    for t in range(N_TOPIC):
        relevant[t] = set(rng.choice(N_DOC, 5, replace=False).tolist())
        for d in range(N_DOC):
            grade = int(d in relevant[t])
            h_rows.append((f"t{t}", f"d{d}", grade))
            m_rows.append((f"t{t}", f"d{d}", 1 - grade if rng.random() < 0.1 else grade))
        if boost is not None:
            m_rows += [(f"t{t}", f"x{i}", 1) for i in range(3)]
    runs = []
    qualities = rng.uniform(0.1, 0.9, len(types))
    for r, kind in enumerate(types):
        quality = qualities[r // 2]  # runs come in pairs of one quality: types alternate, so none is better
        topics, docs, scores = [], [], []
        for t in range(N_TOPIC):
            score = rng.random(N_DOC) + quality * np.array([d in relevant[t] for d in range(N_DOC)])
            names = [f"d{d}" for d in range(N_DOC)]
            if kind == boost:
                score = np.concatenate([score, [10.0, 9.0, 8.0]])
                names += ["x0", "x1", "x2"]
            topics += [f"t{t}"] * len(names)
            docs += names
            scores += score.tolist()
        n = len(docs)
        runs.append(
            RunTable(
                tag=f"run{r}",
                topics=np.array(topics, dtype=str),
                docs=np.array(docs, dtype=str),
                ranks=np.arange(1, n + 1),
                scores=np.array(scores),
                lines=np.arange(1, n + 1),
            )
        )
    return runs, _qrels(h_rows), _qrels(m_rows)


TYPES = ["F", "M"] * 6


def test_identical_versions_agree_fully_and_warn_of_nothing() -> None:
    runs, human, _ = _collection(3, TYPES)
    result = machine_agreement(human, human, runs, run_types={"system_type": TYPES}, n_resamples=500)
    data = result.to_dict()
    assert data["judgements"]["kappa"] == {"none": 1.0, "linear": 1.0, "quadratic": 1.0}
    assert data["rankings"]["tau_b"] == pytest.approx(1.0) and data["rankings"]["tau_b_top"] == pytest.approx(1.0)
    assert all(row["shift"] == 0 and row["ci_low"] == 0 and row["ci_high"] == 0 for row in data["shifts"]["runs"])
    assert data["warnings"] == []


def test_rankings_and_shifts_equal_independent_computations() -> None:
    runs, human, model = _collection(4, TYPES)
    result = machine_agreement(human, model, runs, n_resamples=1000, seed=5)
    theirs = [evaluate(q, runs, ["AP"]).mean()[:, 0] for q in (human, model)]  # every topic judged in both
    assert result.rankings.scores[0] == pytest.approx(theirs[0])
    assert result.rankings.scores[1] == pytest.approx(theirs[1])
    assert result.rankings.tau_b[0, 1] == pytest.approx(scipy.stats.kendalltau(theirs[0], theirs[1]).statistic)
    k = default_top_k(len(runs))
    assert k == 4  # a third of 12
    top = np.argsort(-theirs[0], kind="stable")[:k]
    assert result.tau_b_top == pytest.approx(scipy.stats.kendalltau(theirs[0][top], theirs[1][top]).statistic)
    assert result.top_runs == [f"run{i}" for i in top]
    per_topic = [evaluate(q, runs, ["AP"]).values[:, 0, :] for q in (human, model)]
    diff = per_topic[1] - per_topic[0]
    for r in (0, 7):
        interval = scipy.stats.bootstrap(
            (diff[r],), np.mean, n_resamples=1000, rng=np.random.default_rng(5), method="percentile"
        ).confidence_interval
        assert result.shifts.low[r] == pytest.approx(interval.low, abs=1e-12)
        assert result.shifts.high[r] == pytest.approx(interval.high, abs=1e-12)
        assert result.shifts.shift[r] == pytest.approx(theirs[1][r] - theirs[0][r])


def test_low_top_agreement_fires_below_its_threshold_only() -> None:
    runs, human, model = _collection(4, TYPES)
    tau = machine_agreement(human, model, runs, top_k=6, n_resamples=200).tau_b_top
    assert np.isfinite(tau)
    fired = machine_agreement(human, model, runs, top_k=6, top_threshold=tau + 0.01, n_resamples=200)
    silent = machine_agreement(human, model, runs, top_k=6, top_threshold=tau - 0.01, n_resamples=200)
    assert [w.code for w in fired.warnings] == ["low_top_agreement"]
    assert fired.warnings[0].details["top_k"] == 6 and f"{tau:.3f}" in fired.warnings[0].message
    assert silent.warnings == []


def test_type_shift_fires_for_a_favoured_type_and_stays_silent_otherwise() -> None:
    runs, human, model = _collection(6, TYPES, boost="M")
    result = machine_agreement(human, model, runs, run_types={"system_type": TYPES}, n_resamples=2000)
    (warning,) = [w for w in result.warnings if w.code == "type_shift"]
    assert warning.details["type"] == "F" and warning.details["difference"] < 0  # F vs M, compared once
    assert warning.details["ci_high"] < 0 and "system_type M" in warning.message
    m_runs = [i for i, t in enumerate(TYPES) if t == "M"]
    f_runs = [i for i, t in enumerate(TYPES) if t == "F"]
    expected = result.shifts.shift[f_runs].mean() - result.shifts.shift[m_runs].mean()
    assert warning.details["difference"] == pytest.approx(expected)
    runs, human, model = _collection(6, TYPES)  # the same noise, no favoured type
    quiet = machine_agreement(human, model, runs, run_types={"system_type": TYPES}, n_resamples=2000)
    assert [w.code for w in quiet.warnings if w.code == "type_shift"] == []


def test_type_shift_compares_each_of_three_types_with_bonferroni() -> None:
    types = ["F", "M", "R"] * 4
    runs, human, model = _collection(6, types, boost="R")
    result = machine_agreement(human, model, runs, run_types={"system_type": types}, n_resamples=2000)
    shifted = {w.details["type"]: w.details for w in result.warnings if w.code == "type_shift"}
    assert "R" in shifted and shifted["R"]["ci_low"] > 0
    assert shifted["R"]["comparisons"] == 3 and shifted["R"]["level"] == pytest.approx(1 - 0.05 / 3)


def test_self_preference_names_the_runs_of_the_judges_family() -> None:
    runs, human, model = _collection(6, TYPES, boost="M")
    metadata = [f"run{i}: BM25 then a cross-encoder" for i in range(len(runs))]
    metadata[1] = "run1: reranked with GPT-4o, listwise"  # an M run: the model favours it
    result = machine_agreement(human, model, runs, judge_families=["gpt"], run_metadata=metadata, n_resamples=2000)
    (warning,) = [w for w in result.warnings if w.code == "self_preference"]
    assert [r["run"] for r in warning.details["runs"]] == ["run1"]
    others = np.delete(result.shifts.shift, 1).mean()
    assert warning.details["others_shift"] == pytest.approx(others)
    assert warning.details["ci_low"] > 0 and "more than the others'" in warning.message
    silent = machine_agreement(human, model, runs, judge_families=["llama"], run_metadata=metadata, n_resamples=200)
    assert [w for w in silent.warnings if w.code == "self_preference"] == []
    nameless = machine_agreement(human, model, runs, run_metadata=metadata, n_resamples=200)
    assert [w for w in nameless.warnings if w.code == "self_preference"] == []


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("gpt-4o-mini", "gpt"),
        ("llama-3.1-70b", "llama"),
        ("meta-llama/Llama-3.1-70B-Instruct", "llama"),
        ("Qwen2.5-72B", "qwen"),
        ("claude-3-5-sonnet", "claude"),
        ("o1-mini", "o1"),
        ("", ""),
    ],
)
def test_model_family_is_the_leading_word(model: str, family: str) -> None:
    assert model_family(model) == family


def test_a_family_is_named_as_a_word_in_any_case() -> None:
    yes = ["GPT-4o reranker", "gpt4o", "uses Llama3-8B", "(llama)", "LLAMA"]
    no = ["chatgptx", "ollama", "llamas", "nothing here"]
    assert [names_family(t, f) for t, f in itertools.product(yes, ["gpt", "llama"])].count(True) == len(yes)
    assert not any(names_family(t, f) for t, f in itertools.product(no, ["gpt", "llama"]))
    assert not names_family("anything", "")


def test_bad_input_is_refused() -> None:
    runs, human, model = _collection(1, TYPES)
    with pytest.raises(ValueError, match="top_k"):
        machine_agreement(human, model, runs, top_k=1, n_resamples=100)
    with pytest.raises(ValueError, match="one type per run"):
        machine_agreement(human, model, runs, run_types={"system_type": ["F"]}, n_resamples=100)
    elsewhere = Qrels(np.array(["zz"]), np.array(["d0"]), np.array([1]))
    with pytest.raises(ValueError, match="no topic in common"):
        machine_agreement(human, elsewhere, runs, n_resamples=100)


def test_blocks_of_runs_give_the_numbers_of_one_block() -> None:
    runs, human, model = _collection(4, TYPES)
    whole = machine_agreement(human, model, runs, run_types={"system_type": TYPES}, n_resamples=300, seed=2)
    seen: list[float] = []
    blocks = Blocks(runs, 5)
    parts = machine_agreement(human, model, blocks, run_types={"system_type": TYPES}, n_resamples=300, seed=2,
                              progress=seen.append)  # fmt: skip
    assert json.dumps(parts.to_dict(), sort_keys=True) == json.dumps(whole.to_dict(), sort_keys=True)
    assert blocks.passes == 1 and seen == sorted(seen) and seen[-1] == 1.0 and len(seen) == 3 * 2 + 2
