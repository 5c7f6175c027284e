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
