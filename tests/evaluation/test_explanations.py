"""Explanations of run results (TRECVID AVS's optional frame time and bounding box per shot; an `explanation` field of
a JSON-lines moment run): read by the one XML parser and the moment parser, malformed ones refused by line, and a run
reads and scores the same with or without them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from app.evaluation.errors import FormatError
from app.evaluation.explanations import Explanation
from app.evaluation.formats.trec_files import parse_trec_qrels, parse_trecvid_xml
from app.evaluation.formats.trecvid_xml import scan_trecvid_xml
from app.evaluation.measures.evaluate import evaluate
from app.evaluation.moments import parse_moment_run


def xml_run(items: list[str]) -> str:
    """A TRECVID AVS XML run of topic 1 with these <item> lines (the first on line 5)."""
    return (
        '<?xml version="1.0"?>\n<videoAdhocSearchResults>\n'
        '<videoAdhocSearchRunResult trType="D" class="F" pid="t" priority="1" desc="x">\n'
        '<videoAdhocSearchTopicResult tNum="1" elapsedTime="1">\n'
        + "\n".join(items)
        + "\n</videoAdhocSearchTopicResult>\n</videoAdhocSearchRunResult>\n</videoAdhocSearchResults>\n"
    )


def said(e: Explanation) -> tuple[object, ...]:
    """What an explanation says, and of which row."""
    return (e.item, e.rank, e.line, e.frame_time, e.box, e.text)


def errors_of(text: str) -> list[tuple[int, str]]:
    """The (line, message) errors the XML parser raises."""
    with pytest.raises(FormatError) as info:
        parse_trecvid_xml(text)
    return info.value.errors


def test_explanations_as_item_attributes_and_as_an_element() -> None:
    scan = scan_trecvid_xml(
        xml_run(
            [
                '<item seqNum="1" shotId="s1_1" frameTime="12.5" bbox="10,20,110,220"/>',
                '<item seqNum="2" shotId="s1_2"><explanation timestamp="1:02.5" xmin="1" ymin="2" xmax="3" ymax="4">'
                "a red car</explanation></item>",
                '<item seqNum="3" shotId="s1_3"/>',
                '<item seqNum="4" shotId="s1_4" FRAMETIME="0:0:7" BoundingBox="0 0 64 48"/>',
                '<item seqNum="5" shotId="s1_5"><explanation>the caption says so</explanation></item>',
            ]
        )
    )
    assert scan.errors == []
    assert scan.table.docs.tolist() == ["s1_1", "s1_2", "s1_3", "s1_4", "s1_5"]
    assert [said(e) for e in scan.explanations] == [
        ("s1_1", 1, 5, 12.5, (10, 20, 110, 220), None),
        ("s1_2", 2, 6, 62.5, (1, 2, 3, 4), "a red car"),
        ("s1_4", 4, 8, 7.0, (0, 0, 64, 48), None),
        ("s1_5", 5, 9, None, None, "the caption says so"),
    ]
    assert scan.explanations[0].as_json() == {
        "topic": "1",
        "item": "s1_1",
        "rank": 1,
        "line": 5,
        "frame_time": 12.5,
        "box": [10, 20, 110, 220],
        "text": None,
    }


def test_malformed_explanations_are_refused_by_line() -> None:
    items = [
        '<item seqNum="1" shotId="s1_1" frameTime="abc"/>',
        '<item seqNum="2" shotId="s1_2" frameTime="-1"/>',
        '<item seqNum="3" shotId="s1_3" frameTime="nan"/>',
        '<item seqNum="4" shotId="s1_4" frameTime="1" bbox="3,2,1,4"/>',
        '<item seqNum="5" shotId="s1_5" frameTime="1" bbox="1,2,3"/>',
        '<item seqNum="6" shotId="s1_6" frameTime="1" bbox="1,2,x,4"/>',
        '<item seqNum="7" shotId="s1_7" bbox="1,2,3,4"/>',
        '<item seqNum="8" shotId="s1_8" frameTime="1" x1="1" y1="2"/>',
        '<item seqNum="9" shotId="s1_9" frameTime="1"><explanation frameTime="2"/></item>',
        '<item seqNum="10" shotId="s1_10"><explanation/></item>',
        '<item seqNum="11" shotId="s1_11" frameTime="1:75"/>',
        '<item seqNum="12" shotId="s1_12"/><explanation frameTime="1"/>',
        '<item seqNum="13" shotId="s1_13" frameTime="1" bbox="1,2,3,4" x1="1" y1="2" x2="3" y2="4"/>',
        '<item seqNum="14" shotId="s1_14"><explanation>' + "x" * 1001 + "</explanation></item>",
    ]
    assert errors_of(xml_run(items)) == [
        (5, "explanation of shot 's1_1': frame time 'abc' is not a number >= 0"),
        (6, "explanation of shot 's1_2': frame time '-1' is not a number >= 0"),
        (7, "explanation of shot 's1_3': frame time 'nan' is not a number >= 0"),
        (8, "explanation of shot 's1_4': bounding box 3,2,1,4 needs x1 < x2 and y1 < y2 (left, top, right, bottom)"),
        (9, "explanation of shot 's1_5': bounding box '1,2,3' is not four numbers x1,y1,x2,y2"),
        (10, "explanation of shot 's1_6': bounding box coordinate 'x' is not a number >= 0"),
        (11, "explanation of shot 's1_7': a bounding box needs the time of its frame (frameTime)"),
        (12, "explanation of shot 's1_8': bounding box lacks x2, y2 (give all of x1 y1 x2 y2)"),
        (13, "shot 's1_9' has more than one explanation"),
        (14, "explanation of shot 's1_10' is empty (give frameTime, bbox or text)"),
        (15, "explanation of shot 's1_11': frame time '1:75' is not seconds or [h:]m:s"),
        (16, "<explanation> outside an <item> (or inside one with errors)"),
        (17, "explanation of shot 's1_13': the bounding box is given twice (bbox and x1, y1, x2, y2)"),
        (18, "explanation of shot 's1_14': explanation text is longer than 1000 characters"),
    ]


def test_a_run_reads_and_scores_the_same_with_or_without_explanations() -> None:
    plain = [f'<item seqNum="{k}" shotId="s1_{k}"/>' for k in range(1, 8)]
    explained = [
        item.replace("/>", f' frameTime="{k}.5" bbox="0,0,{k + 1},{k + 1}"/>') if k % 2 else item
        for k, item in enumerate(plain, 1)
    ]
    without, with_ = scan_trecvid_xml(xml_run(plain)), scan_trecvid_xml(xml_run(explained))
    assert without.explanations == [] and len(with_.explanations) == 4
    for column in ("topics", "docs", "ranks", "scores", "lines"):
        assert np.array_equal(getattr(without.table, column), getattr(with_.table, column)), column
    assert (without.attributes, without.elapsed) == (with_.attributes, with_.elapsed)
    qrels = parse_trec_qrels("1 0 s1_1 1\n1 0 s1_2 0\n1 0 s1_3 1\n1 0 s1_6 1\n1 0 s1_9 1\n")
    measures = ["map", "P_5", "ndcg", "recall_1000"]
    scores = [evaluate(qrels, [scan.table], measures).mean() for scan in (without, with_)]
    assert np.array_equal(scores[0], scores[1])
    assert scores[0][0, 0] == pytest.approx((1 + 2 / 3 + 3 / 6) / 4)  # AP: relevant at ranks 1, 3, 6 of 4


def test_json_lines_moment_runs_take_an_optional_explanation_field() -> None:
    lines = [
        '{"topic": "1", "video_id": "v1", "start": 0, "end": 4, "score": 0.9, '
        '"explanation": {"time": 2.5, "box": [1, 2, 30, 40], "text": "a dog"}}',
        '{"topic": "1", "video_id": "v2", "start": 1, "end": 5, "score": 0.8}',
        '{"topic": "2", "video_id": "v3", "start": 3, "end": 9, "score": 0.7, "explanation": "speech says so"}',
    ]
    table = parse_moment_run("\n".join(lines))
    assert [(e.topic, *said(e)) for e in table.explanations] == [
        ("1", "v1", None, 1, 2.5, (1, 2, 30, 40), "a dog"),
        ("2", "v3", None, 3, None, None, "speech says so"),
    ]
    bare = parse_moment_run("\n".join(json.dumps({**json.loads(line), "explanation": None}) for line in lines))
    assert bare.explanations == ()
    for column in ("topics", "videos", "starts", "ends", "scores", "lines"):
        assert np.array_equal(getattr(table, column), getattr(bare, column)), column


@pytest.mark.parametrize(
    ("explanation", "message"),
    [
        ('{"time": "2"}', "explanation time '2' is not a number >= 0"),
        ('{"time": 1, "box": [1, 2, 3]}', "explanation box [1, 2, 3] is not a list of four numbers [x1, y1, x2, y2]"),
        (
            '{"time": 1, "box": [5, 2, 3, 4]}',
            "bounding box 5,2,3,4 needs x1 < x2 and y1 < y2 (left, top, right, bottom)",
        ),
        ('{"box": [1, 2, 3, 4]}', "an explanation box needs the time of its frame (time)"),
        ('{"time": true}', "explanation time True is not a number >= 0"),
        ('{"why": 1}', "explanation has unknown field(s) why (time, box, text)"),
        ("{}", "explanation is empty (give time, box or text)"),
        ("7", "explanation must be an object (time, box, text) or a string"),
    ],
)
def test_malformed_json_explanations_are_refused_by_line(explanation: str, message: str) -> None:
    good = '{"topic": "1", "video_id": "v1", "start": 0, "end": 4, "score": 0.9}'
    bad = f'{{"topic": "1", "video_id": "v2", "start": 0, "end": 4, "score": 0.5, "explanation": {explanation}}}'
    with pytest.raises(FormatError) as info:
        parse_moment_run(f"{good}\n{bad}\n")
    assert info.value.errors == [(2, message)]
