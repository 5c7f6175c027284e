"""Defaults that read well: agreement and ties leave out the registry's counts, run-vs-median orders topics as
numbers, label noise uses the authors' noise levels, the AxIoU paper is cited as CVPR 2022, and the analyses that
loop report their progress to a plain callable."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

from app.evaluation.analyses.label_noise import DEFAULT_SIGMAS
from app.evaluation.analyses.measure_agreement import is_count, readable_measures
from app.evaluation.analyses.qrels_comparison import compare_qrels
from app.evaluation.analyses.topic_comparison import topic_comparison
from app.evaluation.analyses.topic_order import natural_key, natural_order
from app.evaluation.analyses.type_significance import significance_by_type
from app.evaluation.measures.registry import MEASURES, default_measures, measure_family
from tests.evaluation.analyses.brute import random_collection

APP = Path(__file__).parents[3] / "app"


def test_counts_are_the_measures_the_registry_totals():
    summed = {m.name for m in MEASURES if m.aggregate in ("sum", "sum_all")}
    assert summed == {"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "inum_rel", "inum_rel_ret"}
    assert all(is_count(name) for name in summed)
    assert not any(is_count(name) for name in ("AP", "P@10", "nDCG@10", "gm_map", "utility", "AxIoU@10", "R@1,0.5"))


@pytest.mark.parametrize(("stratified", "left_out"), [(False, 3), (True, 5)])
def test_readable_defaults_are_eval_defaults_without_counts(stratified, left_out):
    every = default_measures(stratified)
    readable = readable_measures(every)
    assert len(readable) == len(every) - left_out and len(every) == (55 if stratified else 31)
    assert [m for m in every if m not in readable] == [m for m in every if "num_" in m]  # order kept
    assert readable[:3] == ["AP", "Rprec", "bpref"]


def test_natural_topic_order():
    topics = ["10", "2", "1", "T10", "T2", "100", "b", "a"]
    assert [topics[i] for i in natural_order(topics)] == ["1", "2", "10", "100", "T2", "T10", "a", "b"]
    assert natural_key("1661") < natural_key("1662") < natural_key("T1")


def test_run_vs_median_orders_topics_as_numbers():
    scores = np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    result = topic_comparison(["a", "b"], ["1", "10", "2"], scores, measure="AP")
    assert result.topics == ["1", "2", "10"]
    assert result.scores.tolist() == [[0.1, 0.3, 0.2], [0.4, 0.6, 0.5]]  # columns moved with their topics
    assert [row["topic"] for row in result.run("a")["topics"]] == ["1", "2", "10"]
    assert [row["score"] for row in result.run("a")["topics"]] == [0.1, 0.3, 0.2]
    assert result.best.tolist() == [0.4, 0.6, 0.5]


def test_label_noise_defaults_to_the_authors_noise_levels():
    doc = importlib.import_module("app.evaluation.analyses.label_noise").__doc__ or ""
    assert DEFAULT_SIGMAS == (1.0, 2.0, 3.0, 4.0)
    assert "riktor/vmr-axiou" in doc and "notebooks/ExperimentsOnCharadesSTA.ipynb" in doc and "CVPR" in doc


def test_the_axiou_paper_is_cited_as_cvpr_2022_everywhere():
    for family in ("AxIoU", "R@K,theta", "AP@K,theta", "DCG@K"):
        reference = measure_family(family).reference
        assert "CVPR 2022" in reference and "Togashi" in reference and "SIGIR" not in reference
    wrong = [
        str(path.relative_to(APP))
        for path in APP.rglob("*")
        if path.is_file() and path.suffix in (".py", ".html", ".md", ".js", ".txt")
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
        if "SIGIR 2022" in line or "Hao, Nakano" in line
    ]
    assert wrong == []


def test_qrels_comparison_reports_its_progress():
    runs, qrels = random_collection(2, n_run=4)
    seen: list[float] = []
    compare_qrels(["a", "b", "c"], [qrels, qrels, qrels], runs, progress=seen.append)
    assert seen == pytest.approx([1 / 3, 2 / 3, 1.0])


def test_type_significance_reports_its_progress():
    rng = np.random.default_rng(0)
    seen: list[float] = []
    types = ["auto", "auto", "manual", "manual", "other"]
    significance_by_type([f"r{i}" for i in range(5)], types, rng.random((5, 8)), n_resamples=200, progress=seen.append)
    assert seen == pytest.approx([1 / 3, 2 / 3, 1.0])
