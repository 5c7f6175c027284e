"""RunTable's explicit cache: derived values live in `derived`; the caller's arrays are left as they are."""

from __future__ import annotations

import dataclasses

import numpy as np

from app.evaluation.formats.trec_files import parse_trec_run
from app.evaluation.grading.run_order import run_order
from app.evaluation.records import RunTable


def test_a_table_of_the_callers_arrays_caches_without_freezing_them() -> None:
    scores = np.array([1.0, 2.0])
    run = RunTable("r", np.array(["1", "1"]), np.array(["a", "b"]), np.array([1, 2]), scores, np.array([1, 2]))
    order = run_order(run)
    assert order.rows.tolist() == [1, 0]
    assert run.derived["order"] is order and run_order(run) is order
    assert scores.flags.writeable
    assert dataclasses.replace(run).derived == {}  # a replaced table starts an empty cache


def test_parsed_tables_are_read_only_and_carry_their_doc_hashes() -> None:
    run = parse_trec_run("1 Q0 a 1 1 r\n1 Q0 b 2 2 r\n")
    assert run.doc_hashes is not None and set(run.derived) == {"doc_hashes"}
    assert not any(values.flags.writeable for values in (run.topics, run.docs, run.ranks, run.scores, run.lines))
    slow = parse_trec_run(f"1 Q0 {'x' * 300} 1 1 r\n")  # too wide for the columns pass: the line-by-line one
    assert slow.doc_hashes is None and not slow.scores.flags.writeable


def test_a_regraded_copy_shares_what_the_rows_give_and_nothing_the_grades_give() -> None:
    from app.evaluation.formats.trec_files import parse_qrels
    from app.evaluation.grading.fast_path import grade_runs
    from app.evaluation.grading.grade_matrix import summarise_qrels
    from app.evaluation.records import ROWS_ONLY, Qrels

    qrels = parse_qrels("2 0 a 1 1\n1 0 b 2 -1\n1 0 c 1 0\n3 0 a 2 2\n1 0 d 2 1\n")
    run = parse_trec_run("1 Q0 b 1 3 r\n1 Q0 c 2 2 r\n3 Q0 a 1 1 r\n")
    summarise_qrels(qrels)
    assert grade_runs([run], qrels) is not None  # caches the grading side, which holds the grades
    grades = np.array([0, 1, 2, 0, -1])
    copy = qrels.regraded(grades)
    assert copy.topics is qrels.topics and copy.docs is qrels.docs and copy.strata is qrels.strata
    shared = {key for key in qrels.derived if key.startswith(ROWS_ONLY)}
    assert shared and set(copy.derived) == shared and all(copy.derived[k] is qrels.derived[k] for k in shared)
    fresh = Qrels(qrels.topics.copy(), qrels.docs.copy(), grades, qrels.strata.copy())
    ours, theirs = summarise_qrels(copy), summarise_qrels(fresh)
    for got, expected in zip(ours[1:], theirs[1:], strict=True):
        assert got.tolist() == expected.tolist() and not got.flags.writeable
    for field in dataclasses.fields(ours[0]):
        got, expected = getattr(ours[0], field.name), getattr(theirs[0], field.name)
        if isinstance(got, dict):
            assert got.keys() == expected.keys() and all(np.array_equal(got[k], expected[k]) for k in got)
        elif isinstance(got, list) and got and isinstance(got[0], np.ndarray):
            assert [g.tolist() for g in got] == [e.tolist() for e in expected]
        else:
            assert np.array_equal(got, expected), field.name
    assert ours[0].num_rel.tolist() == [2, 0, 0] and ours[0].relevant_by_grade is not None
    assert sorted(ours[0].relevant_by_grade) == [1, 2]
