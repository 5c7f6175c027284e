"""Reading a run as far as it goes (`scan_*`): the well-formed rows and every problem by line, in one pass, so that a
caller can check the rows against a campaign in the same pass; and an XML run's attributes and elapsed times."""

from __future__ import annotations

import pytest

from app.evaluation.errors import FormatError
from app.evaluation.formats.trec_files import parse_trec_run, parse_trecvid_xml, scan_trec_run, scan_trecvid_xml


def test_a_trec_scan_keeps_the_good_rows_and_lists_every_problem() -> None:
    text = (
        b"1 Q0 a 1 2.0 t\n"
        b"1 Q0 b x 1.5 t\n"  # bad rank
        b"1 Q0 c 3 1.0 u\n"  # other tag
        b"\n"
        b"2 Q0 \xff\xfe 1 1.0 t\n"  # not UTF-8
        b"2 Q0 d 2 0.5 t\n"
        b"2 Q0 d 3 0.4 t\n"  # repeated docno
        b"3 Q0 e 1 nan t extra\n"  # 7 columns
        b"3 Q0 f 1 0.1 t\n"
    )
    scan = scan_trec_run(text)
    assert scan.complete
    assert [line for line, _ in scan.errors] == [2, 3, 5, 7, 8]
    assert "rank 'x'" in scan.errors[0][1] and "differs from 't' on line 1" in scan.errors[1][1]
    assert scan.errors[2][1] == "bytes that are not UTF-8 at byte 6 of the line"
    assert "appears twice for topic '2' (lines 6 and 7)" in scan.errors[3][1]
    assert scan.table.docs.tolist() == ["a", "d", "f"] and scan.table.lines.tolist() == [1, 6, 9]
    assert scan.table.tag == "t"
    with pytest.raises(FormatError) as info:
        parse_trec_run(text)
    assert info.value.errors == scan.errors


def test_a_trec_scan_stopped_at_the_cap_says_so_and_keeps_rows_up_to_there() -> None:
    text = "".join(f"1 Q0 d{i} {'x' if i % 2 else i} 1.0 t\n" for i in range(20))
    scan = scan_trec_run(text, max_errors=3)
    assert not scan.complete
    assert [line for line, _ in scan.errors] == [2, 4, 6]
    assert scan.table.lines.tolist() == [1, 3, 5]  # nothing after the line the pass stopped at


def test_a_clean_trec_scan_is_the_parsed_run() -> None:
    text = b"1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n"
    scan = scan_trec_run(text)
    assert scan.errors == [] and scan.complete and scan.attributes == {} and scan.elapsed == {}
    assert scan.table.docs.tolist() == parse_trec_run(text).docs.tolist()


XML = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE videoAdhocSearchResults SYSTEM "https://www-nlpir.nist.gov/projects/tv2021/dtds/videoAdhocSearchResults.dtd">
<videoAdhocSearchResults>
<videoAdhocSearchRunResult trType="E" class="M" novelty="C" pid="TEAM" priority="3" desc="late fusion">
<videoAdhocSearchTopicResult tNum="1701" elapsedTime="31.5">
<item seqNum="1" shotId="shot1_2"/>
<item seqNum="2" shotId="shot3_4"/>
</videoAdhocSearchTopicResult>
<videoAdhocSearchTopicResult tNum="1702" elapsedTime="{elapsed}">
<item seqNum="1" shotId="shot5_6"/>
</videoAdhocSearchTopicResult>
</videoAdhocSearchRunResult>
</videoAdhocSearchResults>
"""


def test_an_xml_run_gives_its_attributes_and_each_topics_elapsed_time() -> None:
    scan = scan_trecvid_xml(XML.format(elapsed="0"))
    assert scan.errors == [] and scan.complete
    assert scan.attributes == {
        "trType": "E",
        "class": "M",
        "novelty": "C",
        "pid": "TEAM",
        "priority": "3",
        "desc": "late fusion",
    }
    assert scan.elapsed == {"1701": 31.5, "1702": 0.0}
    assert scan.table.docs.tolist() == ["shot1_2", "shot3_4", "shot5_6"]
    assert scan.table.lines.tolist() == [6, 7, 10]
    assert scan.table.tag == "TEAM_3"
    table, attributes = parse_trecvid_xml(XML.format(elapsed="2"))  # the DOCTYPE line is still accepted
    assert len(table) == 3 and attributes["class"] == "M"


@pytest.mark.parametrize("elapsed", ["abc", "-1", "nan", "inf", "1_0"])
def test_an_elapsed_time_that_is_not_seconds_is_an_error_at_its_line(elapsed: str) -> None:
    scan = scan_trecvid_xml(XML.format(elapsed=elapsed))
    assert [line for line, _ in scan.errors] == [9]
    assert f"elapsedTime {elapsed!r} of topic '1702'" in scan.errors[0][1]
    assert scan.elapsed == {"1701": 31.5}
    assert len(scan.table) == 3  # the items are still read


def test_an_xml_scan_lists_item_errors_with_the_rows_that_are_good() -> None:
    bad = XML.format(elapsed="1").replace('seqNum="2" shotId="shot3_4"', 'seqNum="two" shotId="shot3_4"')
    scan = scan_trecvid_xml(bad)
    assert [line for line, _ in scan.errors] == [7] and scan.complete
    assert scan.table.docs.tolist() == ["shot1_2", "shot5_6"]
    broken = scan_trecvid_xml(XML.format(elapsed="1").replace("</videoAdhocSearchRunResult>", ""))
    assert not broken.complete and "not well-formed" in broken.errors[0][1]
    assert len(broken.table) == 3  # what was read before the XML broke
