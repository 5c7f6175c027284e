"""Runs kept to the pairs one qrels judges (`lines.judged_only`) grade like the runs themselves against every subset of
that qrels, for every trec_eval and sample_eval measure, and give pool-depth's first pass the same lines."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.evaluation.analyses.lines import UNJUDGED_DOC, judged_only
from app.evaluation.analyses.pooled_lines import OneBlock, pooled_lines
from app.evaluation.grading.prepared_runs import prepare_runs
from app.evaluation.measures.evaluate import evaluate_prepared
from app.evaluation.measures.registry import NICKNAMES, default_measures, expand_names
from app.evaluation.records import Qrels
from tests.evaluation.analyses.brute import random_collection

ALL_TREC = [name for member in NICKNAMES["all_trec"] for name in expand_names(member)]


def with_repeats_and_strata(qrels: Qrels, rng: np.random.Generator, stratified: bool) -> Qrels:
    """The qrels with a few lines repeated at another grade (the last counts) and, `stratified`, two strata whose
    second is judged at about a half (-1: pooled, not judged)."""
    again = rng.choice(len(qrels.grades), size=5, replace=False)
    topics = np.concatenate([qrels.topics, qrels.topics[again]])
    docs = np.concatenate([qrels.docs, qrels.docs[again]])
    grades = np.concatenate([qrels.grades, (qrels.grades[again] + 1) % 3])
    if not stratified:
        return Qrels(topics=topics, docs=docs, grades=grades)
    strata = rng.integers(1, 3, size=len(grades))
    grades = np.where((strata == 2) & (rng.random(len(grades)) < 0.5), -1, grades)
    return Qrels(topics=topics, docs=docs, grades=grades, strata=strata)


def same(a, b) -> bool:  # type: ignore[no-untyped-def]
    """Two results' plain data alike (floats as their shortest exact text, NaN included)."""
    return json.dumps(a.to_dict(), sort_keys=True) == json.dumps(b.to_dict(), sort_keys=True)


@pytest.mark.parametrize("stratified", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_every_subset_of_the_qrels_grades_the_kept_pairs_like_the_runs(seed: int, stratified: bool) -> None:
    rng = np.random.default_rng(seed)
    runs, plain = random_collection(seed, n_run=5, n_topic=4, n_doc=40, length=20)
    qrels = with_repeats_and_strata(plain, rng, stratified)
    whole = prepare_runs(runs, max_results=15)  # a cut shorter than some lists
    slim = judged_only(whole, qrels)
    assert slim.docs[0] == UNJUDGED_DOC and slim.docs[1:] == sorted(set(qrels.docs.tolist()))  # the qrels' docnos
    assert judged_only(prepare_runs(runs[:2]), qrels).docs is slim.docs  # one vocabulary for every block
    assert slim.pairs.shape == whole.pairs.shape and np.array_equal(slim.pairs >= 0, whole.pairs >= 0)
    assert slim.pairs.dtype == np.int32 and slim.pairs.nbytes * 2 == whole.pairs.nbytes  # ids: 4 bytes a position
    keys = slim.pair_topic * len(slim.docs) + slim.pair_doc
    assert np.all(keys[1:] > keys[:-1])  # pair ids in (topic, doc) key order, as grading's search needs
    measures = default_measures(stratified=True) if stratified else ALL_TREC
    for k in range(6):
        keep = np.ones(len(qrels.grades), dtype=bool) if k == 0 else rng.random(len(qrels.grades)) < 0.3 * k
        if k == 5:
            keep[qrels.topics == "t1"] = False  # a topic left without lines
        cut = qrels.subset(keep)
        assert same(evaluate_prepared(slim, cut, measures), evaluate_prepared(whole, cut, measures)), k


@pytest.mark.parametrize("seed", range(3))
def test_pool_depth_s_first_pass_reads_the_same_lines_from_the_kept_pairs(seed: int) -> None:
    runs, plain = random_collection(seed, n_run=6, n_topic=4, n_doc=30, length=15)
    qrels = with_repeats_and_strata(plain, np.random.default_rng(seed), stratified=False)
    whole = prepare_runs(runs)
    units = np.array([i % 3 for i in range(len(runs))])
    pooled = np.array([True, False, True, True, False, True])
    for mask, kernel in ((pooled, False), (np.ones(len(runs), dtype=bool), True)):
        one = pooled_lines(OneBlock(whole), qrels, mask, units, kernel=kernel)
        kept = pooled_lines(OneBlock(judged_only(whole, qrels)), qrels, mask, units, kernel=kernel)
        for field in ("best", "best_unit", "other", "owned", "judged", "entries", "relevant", "line_topic"):
            assert np.array_equal(getattr(kept, field), getattr(one, field)), field
        if kernel:
            assert one.kernel is not None and kept.kernel is not None
            cut = np.random.default_rng(seed).random(len(qrels.grades)) < 0.5
            assert kept.kernel.per_topic(cut).tobytes() == one.kernel.per_topic(cut).tobytes()


def test_runs_with_no_topic_are_kept_as_they_are() -> None:
    empty = prepare_runs([])
    assert judged_only(empty, Qrels(topics=np.array(["1"]), docs=np.array(["d"]), grades=np.array([1]))) is empty
