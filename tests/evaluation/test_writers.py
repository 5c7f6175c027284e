"""The result printers with intervals (`trecpool eval --ci`): where each column goes, and that without intervals every
format is what it was."""

from __future__ import annotations

import io
import json

import pytest

from app.evaluation.output.writers import Block, Interval, format_results, write_results

NAN = float("nan")
RESULTS = {
    "r1": {"AP": {"1": 0.5, "2": 0.25, "all": 0.375}, "num_ret": {"1": 10.0, "2": 5.0, "all": 15.0}},
    "r2": {"AP": {"1": 0.0, "all": 0.0}, "num_ret": {"1": 3.0, "all": 3.0}},
}
INTERVALS = {
    "r1": {"AP": Interval(0.375, 0.25, 0.5, 0.95, "percentile", "included")},
    "r2": {"AP": Interval(0.0, NAN, NAN, 0.95, "BCa", "none")},  # no bound could be computed
}


def test_trec_all_line_of_a_mean_gets_low_and_high() -> None:
    text = format_results(RESULTS, "trec", per_topic=True, digits=3, intervals=INTERVALS)
    assert text.splitlines() == [
        "r1\tAP\t1\t0.500",
        "r1\tnum_ret\t1\t10",
        "r1\tAP\t2\t0.250",
        "r1\tnum_ret\t2\t5",
        "r1\tAP\tall\t0.375\t0.250\t0.500",
        "r1\tnum_ret\tall\t15",
        "r2\tAP\t1\t0.000",
        "r2\tnum_ret\t1\t3",
        "r2\tAP\tall\t0.000\tnan\tnan",
        "r2\tnum_ret\tall\t3",
    ]


def test_json_all_of_a_mean_becomes_an_object_and_totals_stay_numbers() -> None:
    document = json.loads(format_results(RESULTS, "json", per_topic=False, intervals=INTERVALS))
    assert document["r1"] == {
        "AP": {"all": {"mean": 0.375, "ci_low": 0.25, "ci_high": 0.5, "level": 0.95, "method": "percentile",
                       "sampling": "included"}},
        "num_ret": {"all": 15.0},
    }  # fmt: skip
    assert document["r2"]["AP"]["all"]["ci_low"] is None and document["r2"]["AP"]["all"]["method"] == "BCa"


def test_csv_fills_the_interval_columns_on_the_all_row_of_a_mean_only() -> None:
    text = format_results(RESULTS, "csv", per_topic=True, intervals=INTERVALS)
    lines = text.splitlines()
    assert lines[0] == "run,measure,topic,value,mean,ci_low,ci_high,level,method,sampling"
    assert "r1,AP,1,0.5,,,,,," in lines
    assert "r1,AP,all,0.375,0.375,0.25,0.5,0.95,percentile,included" in lines
    assert "r1,num_ret,all,15,,,,,," in lines
    assert "r2,AP,all,0.0,0.0,,,0.95,BCa,none" in lines


@pytest.mark.parametrize("fmt", ["trec", "json", "csv"])
def test_without_intervals_each_format_is_unchanged(fmt: str) -> None:
    assert format_results(RESULTS, fmt, per_topic=True, intervals=None) == format_results(RESULTS, fmt, per_topic=True)
    out = io.StringIO()
    write_results([Block(RESULTS)], fmt, out, several=True, per_topic=True)
    assert out.getvalue() == format_results(RESULTS, fmt, per_topic=True)


@pytest.mark.parametrize("fmt", ["trec", "json", "csv"])
def test_blocks_with_intervals_write_what_one_call_formats(fmt: str) -> None:
    first, second = {"r1": RESULTS["r1"]}, {"r2": RESULTS["r2"]}
    out = io.StringIO()
    write_results([Block(first, {"r1": INTERVALS["r1"]}), Block(second, {"r2": INTERVALS["r2"]})], fmt, out,
                  several=True, per_topic=True, digits=4, ci=True)  # fmt: skip
    assert out.getvalue() == format_results(RESULTS, fmt, per_topic=True, digits=4, intervals=INTERVALS)
    out = io.StringIO()
    write_results([], fmt, out, several=False, ci=True)
    assert out.getvalue() == format_results({}, fmt, intervals={})
