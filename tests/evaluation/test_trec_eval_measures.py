"""The trec_eval measures of the registry: against pytrec_eval on random runs, and hand-worked cases for the rest."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.evaluation.errors import MeasureError
from app.evaluation.measures.evaluate import evaluate
from app.evaluation.measures.registry import describe, expand_names, resolve
from app.evaluation.records import Qrels, RunTable
from tests.evaluation.cases import random_case, to_qrels, to_run, v9_rounding_agrees

pytrec_eval = pytest.importorskip("pytrec_eval")

OURS_TO_PYTREC = {
    "gm_map": "gm_map",
    "gm_bpref": "gm_bpref",
    "Rprec_mult_0.20": "Rprec_mult_0.20",
    "Rprec_mult@1.4": "Rprec_mult_1.40",
    "Rprec_mult.2": "Rprec_mult_2.00",
    "utility": "utility",
    "11pt_avg": "11pt_avg",
    **{f"iprec_at_recall@{i / 10:.2f}": f"iprec_at_recall_{i / 10:.2f}" for i in range(11)},
    "binG": "binG",
    "G": "G",
    "ndcg_rel": "ndcg_rel",
    "Rndcg": "Rndcg",
    "relative_P@5": "relative_P_5",
    "relative_P_30": "relative_P_30",
    "success@1": "success_1",
    "success.10": "success_10",
    "set_P": "set_P",
    "set_recall": "set_recall",
    "set_relative_P": "set_relative_P",
    "set_map": "set_map",
    "set_F": "set_F",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "num_q": "num_q",
    "infAP": "infAP",
    "map_cut.10": "map_cut_10",
    "ndcg_cut.5": "ndcg_cut_5",
}
GAIN_MEASURES = {"G", "ndcg_rel", "Rndcg", "ndcg_cut.5"}  # pytrec_eval's gain loops never end on negative grades
INTERPOLATED = {name for name in OURS_TO_PYTREC if name.startswith(("iprec", "11pt"))}
GEOMETRIC = {"gm_map", "gm_bpref"}


@pytest.mark.parametrize("unjudged", [False, True], ids=["graded", "with-unjudged"])
@pytest.mark.parametrize("seed", range(60))
def test_new_measures_match_pytrec_eval(seed: int, unjudged: bool) -> None:
    rng = np.random.default_rng(seed * 2 + int(unjudged))
    qrels, runs = random_case(rng, unjudged)
    mapping = {k: v for k, v in OURS_TO_PYTREC.items() if not (unjudged and k in GAIN_MEASURES)}
    ours = evaluate(to_qrels(qrels), [to_run(n, r) for n, r in runs.items()], list(mapping), max_results=10**6)
    families = {name.rsplit("_", 1)[0] if name[-1].isdigit() else name for name in mapping.values()}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, families)
    checked = 0
    for r, (name, run) in enumerate(runs.items()):
        reference = evaluator.evaluate(run)
        for m, (measure, theirs) in enumerate(mapping.items()):
            for t, topic in enumerate(ours.topics):
                if topic not in reference:
                    continue
                num_rel = sum(g >= 1 for g in qrels[topic].values())
                if measure in INTERPOLATED and not v9_rounding_agrees(num_rel):
                    continue
                value = ours.values[r, m, t]
                if measure in GEOMETRIC:  # pytrec_eval gives the logarithm trec_eval adds up; we keep the value
                    value = math.log(max(value, 1e-5))
                assert value == pytest.approx(reference[topic][theirs], abs=1e-9, rel=0), (name, measure, topic)
                checked += 1
    assert checked > 0


def test_geometric_mean_floors_each_topic_at_1e_5() -> None:
    qrels = Qrels(_objects(["a", "a", "b"]), _objects(["x", "y", "z"]), np.array([1, 1, 1]))
    run = _run([("a", "x", 2.0), ("a", "q", 1.5), ("a", "y", 1.0), ("b", "w", 1.0)])
    results = evaluate(qrels, [run], ["AP", "gm_map"])
    ap_a = (1 / 1 + 2 / 3) / 2
    assert results.values[0, 0].tolist() == [ap_a, 0.0]
    assert results.values[0, 1].tolist() == [ap_a, 0.0]  # per topic gm_map is AP ...
    assert results.mean()[0, 1] == pytest.approx(math.exp((math.log(ap_a) + math.log(1e-5)) / 2))  # ... all: geometric


# ------------------------------------------------------------------------------------ hand-worked cases

# topic t: d1 grade 2, d2 grade 0, d3 grade 1, d4 grade -2 (pooled, not judged), d5 grade 1 (not retrieved);
# the run ranks d1, x1 (not in the qrels), d2, d3, d4: grades 2, -, 0, 1, . ; R = 3
HAND_QRELS = [("t", "d1", 2), ("t", "d2", 0), ("t", "d3", 1), ("t", "d4", -2), ("t", "d5", 1)]
HAND_RUN = [("t", "d1", 5.0), ("t", "x1", 4.0), ("t", "d2", 3.0), ("t", "d3", 2.0), ("t", "d4", 1.0)]


def _objects(values: list[str]) -> np.ndarray:
    """An object array of strings."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _qrels(rows: list[tuple[str, str, int]]) -> Qrels:
    """Qrels from (topic, doc, grade) rows."""
    return Qrels(_objects([r[0] for r in rows]), _objects([r[1] for r in rows]), np.array([r[2] for r in rows]))


def _run(rows: list[tuple[str, str, float]], tag: str = "r") -> RunTable:
    """A run from (topic, doc, score) rows."""
    n = len(rows)
    return RunTable(tag, _objects([r[0] for r in rows]), _objects([r[1] for r in rows]), np.arange(1, n + 1),
                    np.array([r[2] for r in rows], dtype=np.float64), np.arange(1, n + 1))  # fmt: skip


def _value(name: str, qrels: list[tuple[str, str, int]] = HAND_QRELS, run: list = HAND_RUN) -> float:
    """One measure of the hand-worked run on topic t."""
    return float(evaluate(_qrels(qrels), [_run(run)], [name]).values[0, 0, 0])


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("RBP(p=0.5)", 0.5 * (1 + 0.5**3)),  # relevant at ranks 1 and 4, binary gains
        ("RBP(rel=1,p=0.8)", 0.2 * (1 + 0.8**3)),
        ("RBP_resid(p=0.5)", 0.5 * (0.5**1 + 0.5**4) + 0.5**5),  # unjudged at ranks 2 and 5, then past rank 5
        ("rbp", 0.1 * (1.0 + 0.5 * 0.9**3)),  # trec_eval: grades 0..2 scaled by 2, p = 0.9
        ("rbp.p=0.5", 0.5 * (1.0 + 0.5 * 0.5**3)),
        ("rbp_resid", 0.9**5 + 0.1 * (0.9 + 0.9**4)),
        ("Judged@3", 2 / 3),  # d1 and d2 of d1, x1, d2
        ("Judged@10", 4 / 5),  # every doc but x1 is in the qrels (d4 too), over the 5 retrieved
        ("unj@5", 2 / 5),  # x1 and d4 (grade below 0) are unjudged
        ("unj_10", 2 / 10),
        ("yaap", math.log((1 + (1 + 2 / 4)) / (1 + 3 - (1 + 2 / 4)))),
        ("num_nonrel_judged_ret", 1.0),
        ("relative_P@2", 1 / 2),
        ("success@1", 1.0),
        ("set_F", 2 * (2 / 5) * (2 / 3) / ((2 / 5) + (2 / 3))),
        ("utility", 2 - 3),
        ("binG", (1 / math.log2(2) + 1 / math.log2(4)) / 3),  # d3 has x1 and d2 above it
        ("dcg", 2 + 1 / math.log2(5)),
        ("ideal_dcg", 2 + 1 / math.log2(3) + 1 / math.log2(4)),
    ],
)
def test_hand_worked_values(name: str, expected: float) -> None:
    assert _value(name) == pytest.approx(expected, abs=1e-12)


# AP@k (trec_eval's map_cut): ranks 1..8 of one topic hold relevant docs at 1, 3, 4 and 7, docs judged not relevant
# at 2, 5 and 8 and an unjudged one at 6; a fifth relevant doc (r5) is not retrieved, so R = 5. The precision at each
# relevant rank is 1/1, 2/3, 3/4 and 4/7: AP@k adds those at ranks up to k (k included) and divides by R, not by k.
CUT_QRELS = [("t", f"r{i}", 1) for i in range(1, 6)] + [("t", f"n{i}", 0) for i in range(1, 4)]
CUT_RUN = [("t", doc, 10.0 - i) for i, doc in enumerate(["r1", "n1", "r2", "r3", "n2", "x1", "r4", "n3"])]
PRECISION_SUMS = {
    1: 1.0,
    2: 1.0,
    3: 1 + 2 / 3,  # the relevant doc at rank 3 is in AP@3 ...
    4: 1 + 2 / 3 + 3 / 4,  # ... and the one at rank 4 only from AP@4 on
    6: 1 + 2 / 3 + 3 / 4,
    7: 1 + 2 / 3 + 3 / 4 + 4 / 7,
    8: 1 + 2 / 3 + 3 / 4 + 4 / 7,
    1000: 1 + 2 / 3 + 3 / 4 + 4 / 7,  # past the list: AP
}


@pytest.mark.parametrize("spelling", ["AP@{k}", "map_cut.{k}"])
@pytest.mark.parametrize("k", sorted(PRECISION_SUMS))
def test_ap_at_k_takes_the_relevant_docs_at_ranks_up_to_k_over_all_relevant(k: int, spelling: str) -> None:
    assert _value(spelling.format(k=k), CUT_QRELS, CUT_RUN) == pytest.approx(PRECISION_SUMS[k] / 5, abs=1e-15)
    assert _value("AP", CUT_QRELS, CUT_RUN) == pytest.approx(PRECISION_SUMS[1000] / 5, abs=1e-15)


def test_rbp_residual_is_zero_without_unjudged_docs_as_trec_eval_says_but_not_so_for_rbp_resid_p() -> None:
    judged = [("t", "d1", 5.0), ("t", "d2", 4.0)]
    assert _value("rbp_resid", run=judged) == 0.0  # trec_eval's quirk: no unjudged doc, no residual
    assert _value("RBP_resid(p=0.5)", run=judged) == pytest.approx(0.25)  # what ranks past the end could add


def test_inf_ap_counts_grade_minus_2_as_pooled_but_unjudged() -> None:
    # d1 (relevant), d4 (pooled, not judged), d3 (relevant): at d3, one relevant and one pooled doc are above
    run = [("t", "d1", 3.0), ("t", "d4", 2.0), ("t", "d3", 1.0)]
    eps = 1e-5
    at_d3 = 1 / 3 + (2 / 3) * ((1 + 0 + 1) / 2) * ((1 + eps) / (1 + 0 + 2 * eps))
    expected = (1.0 + at_d3) / 3
    assert _value("infAP", run=run) == pytest.approx(expected, abs=1e-15)
    minus_one = [(t, d, -1 if g == -2 else g) for t, d, g in HAND_QRELS]
    assert _value("infAP", qrels=minus_one, run=run) == _value("infAP", run=run)
    not_pooled = [row for row in HAND_QRELS if row[2] != -2]  # d4 absent from the qrels: it counts as 0
    at_d3_unpooled = 1 / 3 + (2 / 3) * ((1 + 0 + 0) / 2) * ((1 + eps) / (1 + 0 + 2 * eps))
    assert _value("infAP", qrels=not_pooled, run=run) == pytest.approx((1.0 + at_d3_unpooled) / 3, abs=1e-15)
    qrels = {"t": {d: g for _, d, g in HAND_QRELS}}
    reference = pytrec_eval.RelevanceEvaluator(qrels, {"infAP"}).evaluate({"t": {d: s for _, d, s in run}})
    assert _value("infAP", run=run) == pytest.approx(reference["t"]["infAP"], abs=1e-12)


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("map", "AP"), ("P.10", "P@10"), ("P_10", "P@10"), ("ndcg_cut.10", "nDCG@10"), ("ndcg_cut_10", "nDCG@10"),
        ("map_cut.100", "AP@100"), ("recall.5", "R@5"), ("Rprec_mult_0.20", "Rprec_mult@0.20"),
        ("Rprec_mult.0.2", "Rprec_mult@0.20"), ("iprec_at_recall.0.1", "iprec_at_recall@0.10"),
        ("iprec_at_recall_0.10", "iprec_at_recall@0.10"), ("IPrec@0.1", "iprec_at_recall@0.10"),
        ("rbp.p=0.5", "rbp(p=0.5)"), ("RBP(rel=1,p=0.5)", "RBP(p=0.5)"), ("unj_5", "unj@5"),
        ("success_1", "success@1"), ("relative_P.10", "relative_P@10"), ("judged@10", "Judged@10"),
        ("GMAP", "gm_map"), ("11pt_avg", "11pt_avg"), ("iP100", "iP@100"), ("iprec@rec0.5", "iprec@rec0.50"),
    ],
)  # fmt: skip
def test_trec_eval_spellings_resolve(spelling: str, canonical: str) -> None:
    assert resolve(spelling).name == canonical


def test_bad_names_are_refused_with_the_reason() -> None:
    for name, reason in [
        ("P.5,10", "names several measures"),
        ("RBP", "needs a parameter"),
        ("RBP(p=1.5)", "between 0 and 1"),
        ("set_F@3", "takes no parameter"),
        ("P_0", "at least 1"),
        ("no_such", "unknown measure"),
    ]:
        with pytest.raises(MeasureError, match=reason):
            resolve(name)
    assert expand_names("P.5,10") == ["P.5", "P.10"]
    assert expand_names("rbp.p=0.5") == ["rbp.p=0.5"]
    assert describe("Rprec_mult_0.20").endswith("(multiple of R 0.2)")
