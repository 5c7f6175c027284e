"""Run uploads read in one pass (services.run_files): the campaign's checks run on the well-formed rows of a file that
also has syntax errors, each error at its own line; an overflowing topic is named at its first result past the limit."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.errors import FormatError
from app.services import run_files
from app.services.validation import in_line_order

TOPICS = {"1": 11, "2": 12}


def trec(rows: list[tuple[str, str]]) -> bytes:
    """A TREC run of (topic, docno) rows, scores falling."""
    return "".join(f"{t} Q0 {d} {i + 1} {100 - i} tag\n" for i, (t, d) in enumerate(rows)).encode()


def test_an_overflowing_topic_is_named_at_its_first_result_beyond_the_limit_in_file_order() -> None:
    rows = [("1", "a"), ("2", "a"), ("1", "b"), ("2", "b"), ("1", "c"), ("1", "d"), ("2", "c"), ("1", "e")]
    parsed = run_files.scan(trec(rows), "trec", max_errors=50)
    errors = run_files.check_against_campaign(parsed, TOPICS, max_results=3)
    assert errors == [(6, "topic '1' has 5 results, more than the 3 allowed: result 4 here")]
    assert run_files.check_against_campaign(parsed, TOPICS, max_results=5) == []


def test_unknown_topics_are_named_at_their_first_line_with_their_count() -> None:
    parsed = run_files.scan(trec([("1", "a"), ("9", "a"), ("2", "a"), ("9", "b"), ("8", "a")]), "trec", max_errors=50)
    assert run_files.check_against_campaign(parsed, TOPICS, max_results=10) == [
        (2, "unknown topic '9' (2 line(s), the first here)"),
        (5, "unknown topic '8' (1 line(s), the first here)"),
    ]


def test_syntax_and_campaign_errors_of_one_file_come_out_together_by_line() -> None:
    data = trec([("1", "a"), ("1", "b"), ("9", "c"), ("1", "d"), ("2", "e")]).replace(b"2 Q0 e 5", b"2 Q0 e five")
    data += b"1 Q0 f 6 1.0\n"  # five columns
    parsed = run_files.scan(data, "trec", max_errors=50)
    assert [line for line, _ in parsed.errors] == [5, 6] and parsed.complete
    campaign = run_files.check_against_campaign(parsed, TOPICS, max_results=2)
    assert [line for line, _ in in_line_order(parsed.errors, campaign)] == [3, 4, 5, 6]
    with pytest.raises(FormatError):
        run_files.parse(data, "trec", max_errors=50)


def test_a_moment_run_with_bad_lines_keeps_its_good_rows_for_the_campaign_checks() -> None:
    data = b"1 v1 0 5 0.9 m\n1 v1 7 3 0.8 m\n9 v2 0 1 0.7 m\n2 v1 1 2 nan m\n2 v3 1 2 0.5 m\n"
    parsed = run_files.scan(data, "moments", max_errors=50)
    assert [line for line, _ in parsed.errors] == [2, 4] and parsed.complete
    assert parsed.lines.tolist() == [1, 3, 5] and parsed.moments.videos.tolist() == ["v1", "v2", "v3"]
    assert run_files.check_against_campaign(parsed, TOPICS, max_results=10) == [
        (3, "unknown topic '9' (1 line(s), the first here)")
    ]


def test_a_moment_run_stopped_at_the_cap_keeps_rows_only_up_to_there() -> None:
    data = b"".join(b"1 v%d 0 %d 0.5\n" % (i, 0 if i % 2 else 1) for i in range(10))  # even lines end at 0
    parsed = run_files.scan(data, "moments", max_errors=2)
    assert not parsed.complete and [line for line, _ in parsed.errors] == [2, 4]
    assert parsed.lines.tolist() == [1, 3]


def test_an_empty_moment_run_has_no_rows_and_one_error() -> None:
    parsed = run_files.scan(b"\n", "moments", max_errors=5)
    assert parsed.n_rows == 0 and parsed.errors[0][0] == 0
    assert run_files.check_against_campaign(parsed, TOPICS, 10) == []
    assert np.asarray(parsed.topics).size == 0


def test_distinct_ids_are_in_hash_order_and_give_each_row_its_own_docno() -> None:
    rows = [("1", "s1_2"), ("2", "s1_2"), ("1", "s9_1"), ("2", "s0_0"), ("1", "s0_0")]
    ids, hashes, id_of_row = run_files.distinct_ids(run_files.scan(trec(rows), "trec", max_errors=50))
    assert sorted(ids.tolist()) == ["s0_0", "s1_2", "s9_1"]
    assert hashes.tolist() == sorted(hashes.tolist()) == run_files.id_hashes(ids).tolist()
    assert ids[id_of_row].tolist() == ["s1_2", "s1_2", "s9_1", "s0_0", "s0_0"]


def test_an_inspected_upload_is_hashed_and_compressed_as_stored_and_ids_only_when_asked() -> None:
    import hashlib
    import zlib

    data = trec([("1", "x"), ("2", "y"), ("9", "x")])
    report = run_files.inspect_upload(data, "trec", max_errors=5, topic_numbers=frozenset(TOPICS), max_results=5)
    assert report.sha256 == hashlib.sha256(data).hexdigest() and zlib.decompress(report.content) == data
    assert report.errors == [(3, "unknown topic '9' (1 line(s), the first here)")]
    assert (report.n_rows, report.n_topics) == (3, 3)
    assert report.ids[report.id_of_row].tolist() == ["x", "y", "x"] and report.lines.tolist() == [1, 2, 3]
    bare = run_files.inspect_upload(
        data, "trec", max_errors=5, topic_numbers=frozenset(TOPICS), max_results=5, with_ids=False
    )
    assert bare.ids.size == 0 and bare.id_of_row.size == 0 and bare.content == report.content
