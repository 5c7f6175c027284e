"""Randomised runs and qrels evaluated by our engine and by pytrec_eval (trec_eval), to 1e-9."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures.evaluate import evaluate, evaluate_prepared
from tests.evaluation.cases import random_case, to_qrels, to_run

pytrec_eval = pytest.importorskip("pytrec_eval")

OURS_TO_PYTREC = {
    "AP": "map",
    "P@5": "P_5",
    "P@10": "P_10",
    "R@10": "recall_10",
    "R@5": "recall_5",
    "Rprec": "Rprec",
    "bpref": "bpref",
    "nDCG": "ndcg",
    "nDCG@10": "ndcg_cut_10",
    "nDCG@5": "ndcg_cut_5",
    "RR": "recip_rank",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "infAP": "infAP",
}
# pytrec_eval's ndcg loops forever on negative grades, so the -1 (pooled, unjudged) cases leave nDCG out.
WITH_UNJUDGED = {k: v for k, v in OURS_TO_PYTREC.items() if not k.startswith("nDCG")}


@pytest.mark.parametrize("unjudged", [False, True], ids=["graded", "with-unjudged"])
@pytest.mark.parametrize("seed", range(150))
def test_random_cases_match_pytrec_eval(seed: int, unjudged: bool) -> None:
    rng = np.random.default_rng(seed * 2 + int(unjudged))
    qrels, runs = random_case(rng, unjudged)
    mapping = WITH_UNJUDGED if unjudged else OURS_TO_PYTREC
    ours = evaluate(to_qrels(qrels), [to_run(n, r) for n, r in runs.items()], list(mapping), max_results=10**6)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(mapping.values()))
    for r, (name, run) in enumerate(runs.items()):
        reference = evaluator.evaluate(run)
        for m, (measure, theirs) in enumerate(mapping.items()):
            for t, topic in enumerate(ours.topics):
                if topic in reference:
                    assert ours.values[r, m, t] == pytest.approx(reference[topic][theirs], abs=1e-9, rel=0), (
                        name, measure, topic,
                    )  # fmt: skip
                elif measure == "num_rel":
                    assert ours.values[r, m, t] == sum(g >= 1 for g in qrels[topic].values())
                else:  # trec_eval -c: a topic the run lacks scores 0
                    assert ours.values[r, m, t] == 0.0
            # -c mean over every qrels topic, computed from pytrec_eval's per-topic values
            expected = [reference.get(topic, {}).get(theirs, 0.0) for topic in ours.topics]
            if measure.startswith("num_"):
                if measure == "num_rel":
                    expected = [sum(g >= 1 for g in qrels[t].values()) for t in ours.topics]
                assert ours.mean()[r, m] == pytest.approx(sum(expected), abs=1e-9)
            else:
                assert ours.mean()[r, m] == pytest.approx(np.mean(expected), abs=1e-9, rel=0)


@pytest.mark.parametrize("seed", range(20))
def test_cutting_at_max_results_matches_pytrec_eval_on_cut_runs(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    qrels, runs = random_case(rng, False)
    cut = 7
    ours = evaluate(to_qrels(qrels), [to_run(n, r) for n, r in runs.items()], ["AP", "bpref", "nDCG"], max_results=cut)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "bpref", "ndcg"})
    for r, run in enumerate(runs.values()):
        cut_run = {
            t: dict(sorted(docs.items(), key=lambda kv: (-kv[1], tuple(-ord(c) for c in kv[0])))[:cut])
            for t, docs in run.items()
        }
        reference = evaluator.evaluate(cut_run)
        for t, topic in enumerate(ours.topics):
            if topic in reference:
                for m, name in enumerate(["map", "bpref", "ndcg"]):
                    assert ours.values[r, m, t] == pytest.approx(reference[topic][name], abs=1e-9, rel=0)


def test_run_topics_only_averages_over_answered_topics() -> None:
    qrels = {"a": {"x": 1, "y": 0}, "b": {"x": 1}}
    runs = {"r": {"a": {"x": 2.0, "y": 1.0}}}
    q = to_qrels(qrels)
    complete = evaluate(q, [to_run("r", runs["r"])], ["AP", "num_ret"])
    answered = evaluate(q, [to_run("r", runs["r"])], ["AP", "num_ret"], run_topics_only=True)
    assert complete.value("r", "AP") == 0.5
    assert answered.value("r", "AP") == 1.0
    assert np.isnan(answered.values[0, 0, 1])
    assert answered.to_dict()["r"]["AP"] == {"a": 1.0, "all": 1.0}
    assert complete.to_dict()["r"]["num_ret"] == {"a": 2.0, "b": 0.0, "all": 2.0}


def test_prepared_runs_evaluate_against_several_qrels() -> None:
    rng = np.random.default_rng(7)
    qrels, runs = random_case(rng, False)
    tables = [to_run(n, r) for n, r in runs.items()]
    prepared = prepare_runs(tables, 1000)
    full = to_qrels(qrels)
    first_topic = full.topics == full.topics[0]
    for subset in (full, full.subset(first_topic), full.subset(~first_topic | (full.grades > 0))):
        if len(subset) == 0:
            continue
        again = evaluate(subset, tables, ["AP", "P@5", "bpref"])
        reused = evaluate_prepared(prepared, subset, ["AP", "P@5", "bpref"])
        np.testing.assert_array_equal(again.values, reused.values)
        assert again.topics == reused.topics
