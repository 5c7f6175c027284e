"""Parsing runs (TREC and TRECVID XML) and qrels: values, and every error kind with its line number."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from app.evaluation.errors import FormatError
from app.evaluation.formats.trec_files import (
    parse_qrels,
    parse_sample_eval_qrels,
    parse_trec_qrels,
    parse_trec_run,
    parse_trecvid_xml,
    read_qrels,
    read_run,
)


def errors_of(call, *args, **kwargs) -> list[tuple[int, str]]:
    """The (line, message) errors a parser raises."""
    with pytest.raises(FormatError) as info:
        call(*args, **kwargs)
    return info.value.errors


def test_trec_run_columns_and_line_numbers() -> None:
    table = parse_trec_run(b"1 Q0 a 1 2.5 tag\n\n1\tQ0  b 2 -1e3 tag\r\n2 Q0 a 1 7 tag\n")
    assert table.tag == "tag"
    assert table.topics.tolist() == ["1", "1", "2"]
    assert table.docs.tolist() == ["a", "b", "a"]
    assert table.ranks.tolist() == [1, 2, 1] and table.ranks.dtype == np.int64
    assert table.scores.tolist() == [2.5, -1000.0, 7.0]
    assert table.lines.tolist() == [1, 3, 4]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (b"1 Q0 a 1 1 t\n1 Q0 b 2 1\n", 2, "expected 6 columns"),
        (b"1 Q0 a 1 1 t\n\n1 Q0 b x 1 t\n", 3, "rank 'x' is not an integer"),
        (b"1 Q0 a 1 abc t\n", 1, "score 'abc' is not a finite number"),
        (b"1 Q0 a 1 1 t\n1 Q0 b 2 nan t\n", 2, "score 'nan'"),
        (b"1 Q0 a 1 inf t\n", 1, "score 'inf'"),
        (b"1 Q0 a 1 1 t\n1 Q0 b 2 1 u\n", 2, "run tag 'u' differs from 't' on line 1"),
        (b"1 Q0 a 1 1 t\n2 Q0 a 1 1 t\n1 Q0 a 3 1 t\n", 3, "appears twice for topic '1' (lines 1 and 3)"),
        (b"1 Q0 a 1 1 t\n1 Q0 \xff 2 1 t\n", 2, "not UTF-8"),
        (b"\n  \n", 0, "no results"),
    ],
)
def test_trec_run_errors(text: bytes, line: int, words: str) -> None:
    errors = errors_of(parse_trec_run, text, source="r.txt")
    assert errors[0][0] == line
    assert words in errors[0][1]


def test_trec_run_collects_all_errors_up_to_max() -> None:
    text = b"".join(b"1 Q0 d%d x 1 t\n" % i for i in range(10))
    assert [n for n, _ in errors_of(parse_trec_run, text)] == list(range(1, 11))
    assert len(errors_of(parse_trec_run, text, max_errors=3)) == 3
    with pytest.raises(FormatError) as info:
        parse_trec_run(text, source="mine")
    assert str(info.value).startswith("mine: line 1:")


def test_trec_run_non_ascii_whitespace_falls_back_to_line_pass() -> None:
    table = parse_trec_run("1 Q0 caf\u00e9 1 1 t\n1 Q0 b 2 0.5 t\n")
    assert table.docs.tolist() == ["caf\u00e9", "b"]


XML = b"""<?xml version="1.0" encoding="UTF-8"?>
<videoAdhocSearchResults>
<videoAdhocSearchRunResult pid="TEAM" priority="1" trType="D" class="F" novelty="N" desc="a run">
<videoAdhocSearchTopicResult tNum="661" elapsedTime="3.2">
<item seqNum="1" shotId="shot1_2"/>
<item seqNum="2" shotId="shot3_4"/>
</videoAdhocSearchTopicResult>
<videoAdhocSearchTopicResult tNum="662" elapsedTime="1">
<item seqNum="1" shotId="shot1_2"/>
</videoAdhocSearchTopicResult>
</videoAdhocSearchRunResult>
</videoAdhocSearchResults>
"""


def test_trecvid_xml_run() -> None:
    table, attributes = parse_trecvid_xml(XML)
    assert attributes["pid"] == "TEAM" and attributes["trType"] == "D" and attributes["desc"] == "a run"
    assert table.tag == "TEAM_1"
    assert table.topics.tolist() == ["661", "661", "662"]
    assert table.docs.tolist() == ["shot1_2", "shot3_4", "shot1_2"]
    assert table.ranks.tolist() == [1, 2, 1]
    assert table.scores.tolist() == [-1.0, -2.0, -1.0]
    assert table.lines.tolist() == [5, 6, 9]


def test_trecvid_xml_errors() -> None:
    bad = XML.replace(b'seqNum="2" shotId="shot3_4"', b'seqNum="two" shotId="shot1_2"')
    errors = errors_of(parse_trecvid_xml, bad)
    assert errors == [(6, "seqNum 'two' is not an integer")]
    dup = XML.replace(b"shot3_4", b"shot1_2")
    assert errors_of(parse_trecvid_xml, dup)[0][0] == 6
    assert "not well-formed" in errors_of(parse_trecvid_xml, XML.replace(b"</videoAdhocSearchResults>", b""))[0][1]


def test_trecvid_xml_with_nists_doctype_line_is_read_without_fetching_the_dtd() -> None:
    dtd = b'<!DOCTYPE videoAdhocSearchResults SYSTEM "https://www-nlpir.nist.gov/dtds/videoAdhocSearchResults.dtd">\n'
    with_doctype = XML.replace(b"?>\n", b"?>\n" + dtd, 1)
    table, attributes = parse_trecvid_xml(with_doctype)
    plain, _ = parse_trecvid_xml(XML)
    assert table.docs.tolist() == plain.docs.tolist() and table.lines.tolist() == (plain.lines + 1).tolist()
    assert attributes["pid"] == "TEAM"
    local = XML.replace(b"?>\n", b'?>\n<!DOCTYPE videoAdhocSearchResults SYSTEM "file:///etc/passwd">\n', 1)
    assert parse_trecvid_xml(local)[0].docs.tolist() == plain.docs.tolist()  # named, never read


def test_trecvid_xml_refuses_entities() -> None:
    evil = b'<?xml version="1.0"?>\n<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>\n<x>&e;</x>\n'
    errors = errors_of(parse_trecvid_xml, evil)
    assert "DTD" in errors[0][1]
    subset = b'<?xml version="1.0"?>\n<!DOCTYPE x SYSTEM "a.dtd" [<!ELEMENT x ANY>]>\n<x/>\n'
    assert "DTD" in errors_of(parse_trecvid_xml, subset)[0][1]


def test_trec_qrels_with_odd_iterations_and_spaces() -> None:
    qrels = parse_trec_qrels(b"1 0.5  d1 2\n1 Q0 d2 0\n\n2 0 d1 1\n")
    assert qrels.topics.tolist() == ["1", "1", "2"]
    assert qrels.docs.tolist() == ["d1", "d2", "d1"]
    assert qrels.grades.tolist() == [2, 0, 1]
    assert qrels.strata is None
    assert qrels.lines.tolist() == [1, 2, 4]


def test_sample_eval_qrels() -> None:
    qrels = parse_sample_eval_qrels(b"1661 0 s1 1 1\n1661 0 s2 3 -1\n")
    assert qrels.strata.tolist() == [1, 3]
    assert qrels.grades.tolist() == [1, -1]
    assert parse_qrels(b"1661 0 s1 1 1\n").stratified
    assert not parse_qrels(b"1 0 s1 1\n").stratified


@pytest.mark.parametrize(
    ("call", "text", "line", "words"),
    [
        (parse_trec_qrels, b"1 0 a 1\n1 0 b\n", 2, "expected 4 columns"),
        (parse_trec_qrels, b"1 0 a x\n", 1, "grade 'x'"),
        (parse_trec_qrels, b"1 0 a 1\n1 0 a 0\n", 2, "judged twice for topic '1' (lines 1 and 2)"),
        (parse_sample_eval_qrels, b"1 0 a 1 1\n1 0 b x 1\n", 2, "stratum 'x'"),
        (parse_sample_eval_qrels, b"1 0 a 1 -2\n", 1, "grade '-2'"),
        (parse_trec_qrels, b"", 0, "no judgements"),
        (parse_trec_qrels, b"1 0 \xfe 1\n", 1, "not UTF-8"),
    ],
)
def test_qrels_errors(call, text: bytes, line: int, words: str) -> None:
    errors = errors_of(call, text)
    assert errors[0][0] == line
    assert words in errors[0][1]


def test_read_gzipped_files(tmp_path: Path) -> None:
    run = tmp_path / "r.gz"
    run.write_bytes(gzip.compress(b"1 Q0 a 1 1 t\n"))
    assert read_run(run).docs.tolist() == ["a"]
    xml = tmp_path / "r.xml"
    xml.write_bytes(XML)
    assert len(read_run(xml)) == 3
    qrels = tmp_path / "q"
    qrels.write_bytes(b"1 0 a 3 -1\n")
    assert read_qrels(qrels).stratified
