"""Moment run and ground-truth parsers: both formats, every error kind, 1-based line numbers."""

from __future__ import annotations

import numpy as np
import pytest

from app.evaluation.errors import FormatError
from app.evaluation.moments import parse_moment_ground_truth, parse_moment_run


def errors_of(data, parse=parse_moment_run, **kwargs) -> list[tuple[int, str]]:
    with pytest.raises(FormatError) as info:
        parse(data, **kwargs)
    return info.value.errors


def test_columns_with_tag_keep_file_order_and_line_numbers():
    table = parse_moment_run(b"1\tvid1\t1.5\t7.25\t0.9\tm1\n\n  \n2 vid2 0 3 -0.5 m1\n")
    assert table.tag == "m1"
    assert table.topics.tolist() == ["1", "2"]
    assert table.videos.tolist() == ["vid1", "vid2"]
    assert table.starts.tolist() == [1.5, 0.0]
    assert table.ends.tolist() == [7.25, 3.0]
    assert table.scores.tolist() == [0.9, -0.5]  # negative scores are fine, only times must be >= 0
    assert table.lines.tolist() == [1, 4]
    assert table.lines.dtype == np.int64 and table.starts.dtype == np.float64


def test_columns_without_tag():
    table = parse_moment_run("1 v 0 1 1\n1 v 1 2 0.5\n")
    assert table.tag is None
    assert len(table) == 2


def test_json_lines_accept_video_or_video_id_and_integer_topics():
    data = (
        '\n{"topic": 1, "video": "a", "start": 0, "end": 2.5, "score": 0.3, "tag": "t"}\n'
        '{"topic": "2", "video_id": "b", "start": "1", "end": 4, "score": 1, "extra": [1]}\n'
    )
    with pytest.raises(FormatError) as info:  # the second line lacks the tag of the first: mixed
        parse_moment_run(data)
    assert info.value.errors == [(3, "mixed tags: None here, 't' on line 2")]
    table = parse_moment_run(data.replace('"extra"', '"tag": "t", "extra"'))
    assert (table.tag, table.topics.tolist(), table.videos.tolist()) == ("t", ["1", "2"], ["a", "b"])
    assert table.starts.tolist() == [0.0, 1.0] and table.lines.tolist() == [2, 3]


def test_bom_is_ignored():
    assert parse_moment_run("\ufeff1 v 0 1 1\n".encode()).topics.tolist() == ["1"]


def test_every_column_error_is_reported_on_its_line():
    data = (
        b"1 v 0 1 0.5 t\n"  # fine
        b"1 v 0 1\n"  # 4 columns
        b"1 v x 1 0.5 t\n"  # start not a number
        b"1 v 0 nan 0.5 t\n"  # NaN end
        b"1 v 0 1 inf t\n"  # infinite score
        b"1 v -1 3 0.5 t\n"  # negative start
        b"1 v 5 5 0.5 t\n"  # start == end
        b"1 v 6 2 0.5 t\n"  # start > end
        b"1 v 0 1 0.5 other\n"  # mixed tag
        b"1 v 0 1 0.5 t extra\n"  # 7 columns
        b"1 v\xff 0 1 0.5 t\n"  # not UTF-8
    )
    errors = errors_of(data)
    assert [line for line, _ in errors] == list(range(2, 12))
    messages = dict(errors)
    assert messages[2] == "4 columns, expected 5 or 6 columns (topic video_id start end score [tag])"
    assert messages[3] == "start 'x' is not a number"
    assert messages[4] == "end 'nan' is not a finite number"
    assert messages[5] == "score 'inf' is not a finite number"
    assert messages[6] == "negative time (start -1, end 3)"
    assert messages[7] == "start 5 is not before end 5"
    assert messages[8] == "start 6 is not before end 2"
    assert messages[9] == "mixed tags: 'other' here, 't' on line 1"
    assert messages[10].startswith("7 columns")
    assert messages[11] == "bytes that are not UTF-8 at column 4"


def test_json_line_errors():
    data = (
        '{"topic": "1", "video_id": "v", "start": 0, "end": 1, "score": 1}\n'
        '{"topic": "1", "video_id": "v", "start": 0, "end": 1}\n'
        '{"topic": "1", "video_id": "v", "start": 0, "end": 1, "score": true}\n'
        '{"topic": "1", "video_id": "v", "start": 0, "end": 1, "score": NaN}\n'
        "[1, 2]\n"
        '{"topic": "1", "video_id": "v", \n'
        '{"topic": "", "video_id": "v", "start": 0, "end": 1, "score": 1}\n'
    )
    errors = dict(errors_of(data))
    assert sorted(errors) == [2, 3, 4, 5, 6, 7]
    assert errors[2] == "missing field(s) score"
    assert errors[3] == "score True is not a number"
    assert errors[4] == "score nan is not a finite number"
    assert errors[5] == "a JSON line must be an object"
    assert errors[6].startswith("not valid JSON")
    assert errors[7] == "topic '' is not a non-empty string or integer"


@pytest.mark.parametrize("data", [b"", "", b"\n  \n\t\n"])
def test_empty_file(data):
    assert errors_of(data, source="x.tsv") == [(0, "empty file: no moments")]


def test_errors_stop_at_max_errors_and_name_the_source():
    data = "".join(f"1 v {i} 0 1\n" for i in range(1, 20))
    with pytest.raises(FormatError) as info:
        parse_moment_run(data, max_errors=3, source="r.tsv")
    assert [line for line, _ in info.value.errors] == [1, 2, 3]
    assert info.value.source == "r.tsv" and str(info.value).startswith("r.tsv: line 1: ")


def test_ground_truth_columns_and_json():
    gt = parse_moment_ground_truth("q1 vidA 0 10\nq1 vidA 20 30.5\n\nq2 vidB 5 15\n")
    assert gt.topics.tolist() == ["q1", "q1", "q2"]
    assert gt.ends.tolist() == [10.0, 30.5, 15.0]
    assert gt.lines.tolist() == [1, 2, 4]
    js = parse_moment_ground_truth(b'{"topic": 7, "video": "v", "start": 1, "end": 2}\n')
    assert (js.topics.tolist(), js.videos.tolist(), js.starts.tolist()) == (["7"], ["v"], [1.0])


def test_ground_truth_errors():
    data = (
        "1 v 0 10\n"
        "1 v 3 3\n"  # zero length: rejected (start must be < end)
        "1 v 0 10\n"  # exact duplicate of line 1
        "1 v 0 10 0.5\n"  # a score column does not belong in ground truth
        "1 v -2 1\n"
        "1 w 0 10\n"  # same times, other video: fine
    )
    errors = errors_of(data, parse=parse_moment_ground_truth)
    assert errors == [
        (2, "start 3 is not before end 3"),
        (3, "duplicate segment of topic '1' (first on line 1)"),
        (4, "5 columns, expected 4 columns (topic video_id start end)"),
        (5, "negative time (start -2, end 1)"),
    ]
