"""Grading parsed runs straight against qrels gives exactly what the vocabulary path (prepare_runs) gives."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.fast.hashing import KeyTable, hash_strings
from app.evaluation.formats.trec_files import parse_trec_run
from app.evaluation.grading import fast_path as grading
from app.evaluation.grading.fast_path import grade_runs
from app.evaluation.grading.grade_matrix import PADDING, GradeMatrix, grade_dtype, grade_matrix
from app.evaluation.grading.run_order import run_order
from app.evaluation.measures.evaluate import evaluate, evaluate_prepared
from app.evaluation.records import Qrels, RunTable
from tests.evaluation.cases import random_runs
from tests.evaluation.reference import prepare_runs_with_dicts

MEASURES = ["AP", "P@5", "nDCG@10", "bpref", "RR", "Rprec", "num_rel_ret", "num_ret", "infAP"]


def random_qrels(seed: int, stratified: bool = False) -> Qrels:
    """Qrels over the random runs' vocabulary and more: unanswered topics, unretrieved docs, grades -1..2."""
    rng = np.random.default_rng(seed + 1000)
    vocabulary = [f"d{i}" for i in range(50)] + ["caf\u00e9", "\u65e5\u672c", "D\U0001f600", "z" * 40, "a", "b"]
    topics, docs = [], []
    for topic in ["1", "2", "10", "t\u00e9", "3", "99"]:
        chosen = rng.choice(vocabulary, size=int(rng.integers(0, 30)), replace=False).tolist()
        topics += [topic] * len(chosen)
        docs += chosen
    grades = rng.integers(-1 if stratified else 0, 3, len(docs))
    strata = rng.integers(1, 3, len(docs)) if stratified else None
    return Qrels(np.array(topics), np.array(docs), grades, strata)


def assert_same_grades(ours: GradeMatrix, reference: GradeMatrix) -> None:
    """Equal grades, strata and lengths (the reference may be padded wider: its depth counts unjudged topics)."""
    depth = ours.grades.shape[2]
    assert np.array_equal(ours.grades, reference.grades[:, :, :depth])
    assert np.all(reference.grades[:, :, depth:] == PADDING)
    if reference.strata is None:
        assert ours.strata is None
    else:
        assert np.array_equal(ours.strata, reference.strata[:, :, :depth])
    assert np.array_equal(ours.lengths, reference.lengths)
    assert np.array_equal(ours.answered, reference.answered)
    assert ours.judged.topics == reference.judged.topics


@pytest.mark.parametrize("seed", range(30))
def test_grades_match_the_vocabulary_path(seed: int) -> None:
    runs = random_runs(seed)
    for stratified in (False, True):
        qrels = random_qrels(seed, stratified)
        for max_results in (1000, 7, 1):
            ours = grade_runs(runs, qrels, max_results)
            assert ours is not None
            assert_same_grades(ours, grade_matrix(prepare_runs_with_dicts(runs, max_results), qrels))


@pytest.mark.parametrize("seed", range(10))
def test_evaluate_from_tables_equals_evaluate_prepared(seed: int) -> None:
    runs, qrels = random_runs(seed), random_qrels(seed)
    ours = evaluate(qrels, runs, MEASURES, max_results=9)
    reference = evaluate_prepared(prepare_runs_with_dicts(runs, 9), qrels, MEASURES)
    assert ours.runs == reference.runs and ours.topics == reference.topics
    np.testing.assert_array_equal(ours.values, reference.values)


def test_runs_without_qrels_topics_and_empty_inputs() -> None:
    run = parse_trec_run("5 Q0 a 1 1 r\n5 Q0 b 2 0.5 r\n")
    empty = RunTable("e", np.zeros(0, str), np.zeros(0, str), np.zeros(0, int), np.zeros(0), np.zeros(0, int))
    qrels = Qrels(np.array(["1"]), np.array(["a"]), np.array([1]))
    for runs in ([run], [empty], [run, empty], []):
        ours = grade_runs(runs, qrels)
        assert ours is not None
        assert_same_grades(ours, grade_matrix(prepare_runs_with_dicts(runs), qrels))
    no_qrels = Qrels(np.zeros(0, str), np.zeros(0, str), np.zeros(0, int))
    assert grade_runs([run], no_qrels).grades.shape == (1, 0, 0)


def test_repeated_judgements_and_duplicate_rows_agree_with_the_vocabulary_path() -> None:
    # tables built by hand may repeat a (topic, doc); qrels may judge one twice (the last judgement counts)
    run = RunTable(
        "r",
        np.array(["1", "1", "1", "2"], dtype=object),
        np.array(["a", "b", "a", "a"], dtype=object),
        np.array([1, 2, 3, 1]),
        np.array([3.0, 2.0, 1.0, 1.0]),
        np.array([1, 2, 3, 4]),
    )
    qrels = Qrels(np.array(["1", "1", "2", "1"]), np.array(["a", "b", "a", "a"]), np.array([2, 0, 1, 1]))
    ours = grade_runs([run], qrels)
    assert ours is not None
    assert ours.grades[0, 0, :3].tolist() == [1, 0, 1]
    assert_same_grades(ours, grade_matrix(prepare_runs_with_dicts([run]), qrels))


def _object_tables(runs: list[RunTable]) -> list[RunTable]:
    """The runs as object arrays, without parser hashes (so both sides hash their docnos with _doc_hashes)."""
    return [RunTable(r.tag, r.topics.astype(object), r.docs.astype(object), r.ranks, r.scores, r.lines) for r in runs]


@pytest.mark.parametrize("mask", [0, 0xC000000000000000])  # every hash equal; 4 distinct hashes
def test_colliding_qrels_docnos_fall_back_to_the_vocabulary_path(monkeypatch: pytest.MonkeyPatch, mask: int) -> None:
    real = grading._doc_hashes
    monkeypatch.setattr(grading, "_doc_hashes", lambda values, by_matrix: real(values, by_matrix) & np.uint64(mask))
    for seed in range(5):
        runs, qrels = _object_tables(random_runs(seed)), random_qrels(seed)
        assert grade_runs(runs, qrels, 7) is None
        ours = evaluate(qrels, runs, MEASURES, max_results=7)
        reference = evaluate_prepared(prepare_runs_with_dicts(runs, 7), qrels, MEASURES)
        np.testing.assert_array_equal(ours.values, reference.values)


def test_run_docnos_colliding_with_a_qrels_docno_are_not_taken_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = grading._doc_hashes
    monkeypatch.setattr(grading, "_doc_hashes", lambda values, by_matrix: real(values, by_matrix) & np.uint64(0))
    runs = _object_tables(random_runs(3))
    qrels = Qrels(np.array(["1", "2", "3", "10"]), np.array(["d1"] * 4), np.array([1, 2, 0, 1]))  # one docno
    ours = grade_runs(runs, qrels)
    assert ours is not None
    assert_same_grades(ours, grade_matrix(prepare_runs_with_dicts(runs), qrels))


def test_key_table_finds_exactly_the_stored_keys() -> None:
    rng = np.random.default_rng(0)
    for n in (0, 1, 5, 3000):
        keys = np.unique(rng.integers(0, 2**63, n, dtype=np.int64).astype(np.uint64) * np.uint64(2))
        crowded = np.arange(50, dtype=np.uint64)  # equal top bits: every key but one overflows, level after level
        for stored in (keys, crowded):
            table = KeyTable(stored)
            probe = np.concatenate((stored, stored + np.uint64(1), rng.integers(0, 2**63, 500).astype(np.uint64)))
            rng.shuffle(probe)
            position = {key: i for i, key in enumerate(stored.tolist())}
            expected = [position.get(key, -1) for key in probe.tolist()]
            where, index = table.hits([probe[:300], probe[300:]])
            assert where.tolist() == [i for i, e in enumerate(expected) if e >= 0]
            assert index.tolist() == [e for e in expected if e >= 0]


def test_key_table_refuses_repeated_keys() -> None:
    with pytest.raises(ValueError, match="distinct"):
        KeyTable(np.array([3, 5, 3], dtype=np.uint64))


def _reference_order(run: RunTable) -> list[int]:
    """Row order by (topic first seen, score desc, docno desc), by Python's sort."""
    first_seen: dict[str, int] = {}
    for topic in run.topics.tolist():
        first_seen.setdefault(str(topic), len(first_seen))
    rows = list(range(len(run)))
    rows.sort(key=lambda i: str(run.docs[i]), reverse=True)
    rows.sort(key=lambda i: (first_seen[str(run.topics[i])], -float(run.scores[i])))
    return rows


@pytest.mark.parametrize("seed", range(30))
def test_run_order_is_trec_evals_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for run in random_runs(seed):
        if rng.random() < 0.5:  # long tie blocks too
            run = RunTable(run.tag, run.topics, run.docs, run.ranks, np.round(run.scores), run.lines)
        order = run_order(run)
        rows = order.rows.tolist() if order.rows is not None else list(range(len(run)))
        assert rows == _reference_order(run)
        topics = [str(run.topics[i]) for i in rows]
        assert [topics[b] for b in order.bounds[:-1].tolist()] == order.topics
        assert len(set(order.topics)) == len(order.topics)


def test_cached_order_cannot_go_stale() -> None:
    run = parse_trec_run("1 Q0 a 1 1 r\n1 Q0 b 2 2 r\n")
    assert run_order(run).rows.tolist() == [1, 0]
    assert run_order(run) is run_order(run)
    with pytest.raises(ValueError):
        run.scores[0] = 5.0


def test_doc_hash_kinds_agree_within_one_grading() -> None:
    parsed = parse_trec_run("1 Q0 caf\u00e9 1 1 r\n1 Q0 b 2 0.5 r\n")
    assert np.array_equal(parsed.doc_hashes, hash_strings(np.array(["caf\u00e9", "b"]), matrix=True))
    by_hand = _object_tables([parse_trec_run("1 Q0 b 1 1 s\n")])[0]
    qrels = Qrels(np.array(["1", "1"]), np.array(["b", "caf\u00e9"]), np.array([1, 2]))
    ours = grade_runs([parsed, by_hand], qrels)
    assert ours is not None
    assert ours.grades[:, 0, :2].tolist() == [[2, 1], [1, PADDING]]


def test_run_rows_of_another_topic_are_not_taken_for_a_docno_judged_elsewhere() -> None:
    run = parse_trec_run("1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n2 Q0 a 1 2 r\n2 Q0 c 2 1 r\n")
    qrels = Qrels(np.array(["1", "2"]), np.array(["a", "c"]), np.array([2, 1]))  # (2, a) is not judged
    ours = grade_runs([run], qrels)
    assert ours is not None
    assert ours.grades[0].tolist() == [[2, -9], [-9, 1]]
    assert_same_grades(ours, grade_matrix(prepare_runs_with_dicts([run]), qrels))


def test_a_docno_judged_in_many_topics_gets_each_topics_grade() -> None:
    # the judged topics of one docno are searched by halving: 1 to 9 of them, each topic its own grade
    topics = [str(t) for t in range(9)]
    for judged in range(1, 10):
        qrels = Qrels(np.array(topics[:judged]), np.array(["a"] * judged), np.arange(judged) % 3)
        run = parse_trec_run("".join(f"{t} Q0 a 1 1 r\n{t} Q0 b 2 0.5 r\n" for t in reversed(topics)))
        ours = grade_runs([run], qrels)
        assert ours is not None
        assert ours.grades[0, :, 0].tolist() == [t % 3 for t in range(judged)]
        assert_same_grades(ours, grade_matrix(prepare_runs_with_dicts([run]), qrels))


def test_grades_take_the_smallest_dtype_holding_them_and_the_sentinels() -> None:
    run = parse_trec_run("1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n")
    for grades, dtype in (([2, 0], np.int8), ([127, -1], np.int8), ([128, 0], np.int16), ([1, -40000], np.int32)):
        qrels = Qrels(np.array(["1", "1"]), np.array(["a", "b"]), np.array(grades))
        ours = grade_runs([run], qrels)
        assert ours is not None
        reference = grade_matrix(prepare_runs_with_dicts([run]), qrels)
        assert ours.grades.dtype == reference.grades.dtype == dtype
        assert ours.grades[0, 0].tolist() == grades
    assert grade_dtype(np.array([2**31 - 1])) == np.int32 and grade_dtype(np.array([2**31])) == np.int64
    assert grade_dtype(np.zeros(0, np.int64)) == np.int8


@pytest.mark.parametrize("seed", range(5))
def test_judged_cells_are_the_judged_grades_in_matrix_order(seed: int) -> None:
    ours = grade_runs(random_runs(seed), random_qrels(seed, stratified=True), 9)
    assert ours is not None and ours.judged_cells is not None
    flat, grades = ours.judged_cells
    assert flat.tolist() == np.flatnonzero(ours.grades.reshape(-1) >= 0).tolist()
    assert grades.tolist() == ours.grades.reshape(-1)[flat].tolist()


@pytest.mark.parametrize("seed", range(6))
def test_one_prepared_set_graded_against_qrels_in_turn_grades_each_as_if_fresh(seed: int) -> None:
    """One prepared set graded against qrels in turn (copies sharing arrays: re-graded, imputed; other docs, other
    topics, a subset) grades each as a fresh prepared set would: nothing of one qrels leaks into the next."""
    runs = random_runs(seed)
    prepared = prepare_runs_with_dicts(runs, 1000)
    first = random_qrels(seed, stratified=True)
    regraded = Qrels(first.topics, first.docs, (np.asarray(first.grades) + 1) % 3, first.strata)  # shares arrays
    other = random_qrels(seed + 1)
    moved = Qrels(first.topics[::-1].copy(), first.docs, first.grades[::-1].copy(), first.strata)  # same docs array
    imputed = first.regraded((np.asarray(first.grades) + 2) % 3)  # shares arrays and the rows' groups
    for qrels in (first, regraded, imputed, other, first.subset(np.arange(len(first.grades)) % 2 == 0), moved, first):
        fresh = grade_matrix(prepare_runs_with_dicts(runs, 1000), qrels)
        assert_same_grades(grade_matrix(prepared, qrels), fresh)


@pytest.mark.parametrize("seed", range(4))
def test_the_doc_index_answers_as_a_dict_does(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Docnos looked up by hash and checked against the strings, from unicode and object arrays, with absent and
    repeated values; and by the dict when two docnos share a hash (all hashes forced equal)."""
    from app.evaluation.grading import prepared_runs
    from app.evaluation.grading.prepared_runs import DocIndex

    rng = np.random.default_rng(seed)
    docs = sorted({f"d{i}" for i in rng.integers(0, 300, 120)} | {"caf\u00e9", "\u65e5\u672c", "z" * 40, "a"})
    asked = [*rng.choice(docs, 200).tolist(), "absent", "caf", "", "z" * 39, "d"]
    rng.shuffle(asked)
    expected = [docs.index(v) if v in docs else -1 for v in asked]
    index = DocIndex(docs)
    assert index.table is not None and len(index) == len(docs)
    assert index.ids(np.array(asked)).tolist() == expected
    assert index.ids(np.array(asked, dtype=object)).tolist() == expected
    assert index.ids(np.array([], dtype=str)).tolist() == []
    # the last array asked is answered again from the docnos found in it (a qrels' arrays never change), in a fresh
    # array the caller may change; any other array is looked up, equal content or not
    kept = np.array(asked)
    first = index.ids(kept)
    first[:] = -7
    again = index.ids(kept)
    assert again.tolist() == expected and index._last is not None and index._last[0] is kept
    assert index.ids(np.array(asked[::-1])).tolist() == expected[::-1]
    assert index.ids(kept).tolist() == expected
    monkeypatch.setattr(prepared_runs, "hash_strings", lambda values, matrix: np.zeros(len(values), np.uint64))
    colliding = DocIndex(docs)
    assert colliding.table is None and colliding.ids(np.array(asked, dtype=object)).tolist() == expected


@pytest.mark.parametrize("seed", range(4))
def test_one_grading_plan_grades_regraded_copies_as_grade_matrix_does(seed: int) -> None:
    """The imputations' path: a plan made once grades every copy with other grades as a fresh grade_matrix would,
    and refuses qrels with other rows."""
    from app.evaluation.grading.grade_matrix import GradingPlan

    runs = random_runs(seed)
    prepared = prepare_runs_with_dicts(runs, 1000)
    for stratified in (True, False):
        first = random_qrels(seed, stratified=stratified)
        plan = GradingPlan.of(prepared, first)
        rng = np.random.default_rng(seed)
        for _ in range(3):
            copy = first.regraded(rng.integers(-1, 3, len(first.grades)))
            ours, fresh = plan.graded(copy), grade_matrix(prepare_runs_with_dicts(runs, 1000), copy)
            assert_same_grades(ours, fresh)
            assert ours.judged.num_rel.tolist() == fresh.judged.num_rel.tolist()
        with pytest.raises(ValueError, match="rows"):
            plan.graded(random_qrels(seed + 1))
