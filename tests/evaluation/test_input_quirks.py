"""Inputs users' files really have (issue 16's bugs): runs that answer no judged topic, byte-order marks, `#` comment
lines in qrels, truncated gzip files. Each is read as trec_eval reads it, or refused with a clear error."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from app.evaluation.errors import FormatError
from app.evaluation.formats.trec_files import (
    parse_qrels,
    parse_trec_qrels,
    parse_trec_run,
    read_qrels,
    read_run,
)
from app.evaluation.measures.evaluate import evaluate
from app.evaluation.measures.registry import default_measures

QRELS = "1 0 d1 1\n1 0 d2 0\n"
RUN = "1 Q0 d2 1 0.9 r\n1 Q0 d1 2 0.5 r\n"


@pytest.mark.parametrize("stratified", [False, True])
def test_a_run_that_answers_no_judged_topic_scores_zero_everywhere(stratified):
    qrels = parse_qrels("1 0 d1 1 1\n1 0 d2 1 0\n" if stratified else QRELS)
    measures = default_measures(stratified)
    results = evaluate(qrels, [parse_trec_run("2 Q0 d1 1 0.5 r\n")], measures).to_dict()["r"]
    assert set(results) == set(measures)
    for name, values in results.items():
        if name in ("num_rel", "inum_rel"):
            assert values["all"] > 0, name
        else:
            assert values["all"] == 0, (name, values)


def test_a_byte_order_mark_is_not_part_of_the_first_topic(tmp_path):
    bom = "\ufeff"
    qrels = parse_trec_qrels((bom + QRELS).encode())
    run = parse_trec_run((bom + RUN).encode())
    assert qrels.topics.tolist() == ["1", "1"] and run.topics.tolist() == ["1", "1"]
    (tmp_path / "q").write_bytes((bom + QRELS).encode())
    (tmp_path / "r").write_bytes((bom + RUN).encode())
    results = evaluate(read_qrels(tmp_path / "q"), [read_run(tmp_path / "r")], ["AP"]).to_dict()["r"]
    assert results["AP"]["all"] == pytest.approx(0.5)


@pytest.mark.parametrize("comment", ["# judged by NIST", "# a b c", "  #x y z w", "#"])
def test_comment_lines_in_qrels_are_skipped_and_line_numbers_kept(comment):
    qrels = parse_trec_qrels(f"{comment}\n{QRELS}{comment}\n")
    assert qrels.topics.tolist() == ["1", "1"] and qrels.docs.tolist() == ["d1", "d2"]
    with pytest.raises(FormatError) as error:
        parse_trec_qrels(f"{comment}\n1 0 d1 x\n")
    assert error.value.errors[0][0] == 2  # the bad line keeps its own number


def test_a_hash_inside_a_docno_is_data():
    qrels = parse_trec_qrels("1 0 doc#1 1\n")
    assert qrels.docs.tolist() == ["doc#1"] and np.array_equal(qrels.grades, [1])


def test_a_truncated_gzip_file_is_a_format_error_naming_it(tmp_path):
    whole = gzip.compress(RUN.encode() * 200)
    (tmp_path / "run.gz").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(FormatError, match=r"run\.gz: not a complete gzip file"):
        read_run(tmp_path / "run.gz")


def test_the_eval_command_prints_zeros_or_one_error_line(tmp_path):
    from click.testing import CliRunner

    from app.cli import cli

    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "other").write_text("2 Q0 d1 1 0.5 r\n")
    result = CliRunner().invoke(cli, ["eval", "-m", "AP", "-m", "RR", str(tmp_path / "q"), str(tmp_path / "other")])
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == ["AP", "all", "0.0", "RR", "all", "0.0"]
    (tmp_path / "cut.gz").write_bytes(gzip.compress(RUN.encode())[:-8])
    result = CliRunner().invoke(cli, ["eval", "-m", "AP", str(tmp_path / "q"), str(tmp_path / "cut.gz")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.strip().startswith("error: ") and "not a complete gzip file" in result.stderr


@pytest.mark.parametrize(
    ("run", "message"),
    [
        ("1 Q0 d1 1 1_5 r\n1 Q0 d2 2 1.2 r\n", "line 1: score '1_5'"),  # float() would read 15, C's atof 1
        ("1 Q0 d1 1 0.9 r\n1 Q0 d2 2 2_0e-1 r\n", "line 2: score '2_0e-1'"),
        ("1 Q0 d1 1_0 0.9 r\n", "line 1: rank '1_0'"),
    ],
)
def test_digit_separators_are_refused_not_read_as_python_would(run, message):
    with pytest.raises(FormatError, match=message):
        parse_trec_run(run)


def test_a_grade_with_a_digit_separator_is_refused():
    with pytest.raises(FormatError, match="line 2: grade '1_0'"):
        parse_trec_qrels("1 0 d1 1\n1 0 d2 1_0\n")
