"""`trecpool sample_eval`: sample_eval.pl's command line and its output, byte for byte."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import cli
from tests.evaluation import sample_eval_reference as reference
from tests.evaluation.cases import graded_copy, synthetic

AVS_RUNS = ["syn7_0", "syn7_1", "syn7_2", "syn7_3"]
runner = CliRunner()


@pytest.fixture(scope="module")
def avs(shared_data: Path) -> Path:
    """The TRECVID AVS 2021 data directory."""
    return shared_data / "trecvid-avs-2021"


def sample_eval(*args: str | Path) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `trecpool sample_eval ARGS`."""
    result = runner.invoke(cli, ["sample_eval", *map(str, args)])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("run", AVS_RUNS)
def test_output_is_byte_identical_to_nist_sample_eval(run: str, avs: Path) -> None:
    # NIST's script prints %6.4f, %14.4f and %9d; the expected files were made with -q (a block per topic first)
    expected = (avs / "expected" / f"{run}.sample_eval.nist.txt").read_bytes()
    command = [sys.executable, "-m", "app.cli", "sample_eval", "-q", "avs.qrels.main.tv21", f"runs/{run}"]
    done = subprocess.run(command, cwd=avs, capture_output=True, timeout=120, check=False)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == expected


@pytest.mark.parametrize("run", AVS_RUNS)
def test_digits_12_is_byte_identical_to_the_widened_script(run: str, avs: Path) -> None:
    # the same script with its formats widened to 12 decimals (%6.12f, %14.12f): the values, to check them closely
    expected = (avs / "expected" / f"{run}.sample_eval.txt").read_text()
    code, out, err = sample_eval("-q", "--digits", "12", avs / "avs.qrels.main.tv21", avs / "runs" / run)
    assert (code, err) == (0, "")
    assert out == expected
    assert sample_eval("--digits=12", "-q", avs / "avs.qrels.main.tv21", avs / "runs" / run)[1] == expected


@pytest.mark.parametrize("run", AVS_RUNS)
def test_without_q_only_the_all_lines(run: str, avs: Path) -> None:
    expected = (avs / "expected" / f"{run}.sample_eval.nist.txt").read_text().splitlines(keepends=True)
    code, out, _ = sample_eval(avs / "avs.qrels.main.tv21", avs / "runs" / run)
    assert code == 0
    assert out == "".join(line for line in expected if "\tall\t" in line)
    assert len(out.splitlines()) == 2 + 11 + 9 + 3


def test_layout_of_the_expected_files(avs: Path) -> None:
    # what the byte comparison pins, spelled out: names, tabs, %6.4f, %14.4f, %9d, iP1000 once (this sample_eval.pl's
    # cutoffs end at maxResultSize = 1000 without repeating it), syn7_0 lacking topic 1676
    code, out, _ = sample_eval("-q", avs / "avs.qrels.main.tv21", avs / "runs" / "syn7_0")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "infAP\t\t1661\t\t0.0919"
    assert lines[11] == "inum_rel_ret\t1661\t      259.9281"
    assert lines[12] == "inum_rel\t1661\t     2074.7950"
    assert lines[13] == "num_ret\t\t1661\t      935"
    assert sum(line.startswith("iP1000\t") for line in lines) == 19 + 1
    assert not any("\t1676\t" in line for line in lines)
    assert lines[-1] == "num_ret\t\tall\t    14627"
    _, wide, _ = sample_eval("-q", "--digits", "12", avs / "avs.qrels.main.tv21", avs / "runs" / "syn7_0")
    assert wide.splitlines()[0] == "infAP\t\t1661\t\t0.091931001270"
    assert wide.splitlines()[11] == "inum_rel_ret\t1661\t259.928101036602"
    _, short, _ = sample_eval("--digits", "2", avs / "avs.qrels.main.tv21", avs / "runs" / "syn7_0")
    assert short.splitlines()[0] == "infAP\t\tall\t\t  0.07"  # %6.2f: still right-aligned in 6


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("flag", [["-q"], []])
def test_edge_cases_byte_identical_to_the_transcription(seed: int, flag: list[str], tmp_path: Path) -> None:
    # graded qrels, a qrels topic the run lacks, a run topic the qrels lack, 1500 results, ties, grade -1,
    # R_hat > 1000, a topic without relevant docs, strata 1, 2, 10 and topic 99 before 101
    qrels, run = synthetic(seed)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    evaluation = reference.evaluate(qrels, run)
    code, out, err = sample_eval(*flag, tmp_path / "qrels", tmp_path / "run")
    assert code == 0, err
    assert out == reference.report(evaluation, per_topic=bool(flag), digits=4)
    code, wide, err = sample_eval(*flag, "--digits", "12", tmp_path / "qrels", tmp_path / "run")
    assert code == 0, err
    assert wide == reference.report(evaluation, per_topic=bool(flag), digits=12)


def test_long_run_counts_its_lines_per_topic_and_its_cut_in_all(tmp_path: Path) -> None:
    qrels, run = synthetic(0)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    _, out, _ = sample_eval("-q", tmp_path / "qrels", tmp_path / "run")
    lines = out.splitlines()
    assert "num_ret\t\t101\t     1500" in lines  # per topic: every line of the run
    counts = {line.split("\t")[2]: int(line.split("\t")[-1]) for line in lines if line.startswith("num_ret\t")}
    assert list(counts) == ["99", "101", "102", "104", "106", "all"]
    assert counts["all"] == sum(counts.values()) - counts["all"] - 500  # `all`: after the 1000 cut
    assert not any("\t777\t" in line or "\t105\t" in line for line in lines)


def test_graded_tv21_byte_identical_to_the_transcription(avs: Path, tmp_path: Path) -> None:
    graded = graded_copy((avs / "avs.qrels.main.tv21").read_text())
    (tmp_path / "qrels").write_text(graded)
    run = (avs / "runs" / "syn7_2").read_text()
    code, out, _ = sample_eval("-q", tmp_path / "qrels", avs / "runs" / "syn7_2")
    assert code == 0
    assert out == reference.report(reference.evaluate(graded, run), per_topic=True, digits=4)


def test_g_maps_grades_before_anything(tmp_path: Path) -> None:
    qrels, run = synthetic(1)
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    mapped = "\n".join(line[:-1] + {"1": "3", "2": "0"}.get(line[-1], line[-1]) for line in qrels.splitlines())
    code, out, _ = sample_eval(tmp_path / "qrels", tmp_path / "run", "-G", "1=3", "2=0")
    assert code == 0
    assert out == reference.report(reference.evaluate(mapped + "\n", run), per_topic=False, digits=4)
    code, with_q, _ = sample_eval("-q", tmp_path / "qrels", tmp_path / "run", "-G", "1=3", "2=0")
    assert code == 0 and with_q.endswith(out) and len(with_q) > len(out)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "expected [-q] QRELS RUN"),
        (["only-one"], "expected [-q] QRELS RUN"),
        (["-q", "a", "b", "c"], "expected [-q] QRELS RUN"),
        (["-x", "a", "b"], "expected [-q] QRELS RUN"),
        (["a", "b", "-G"], "-G needs at least one"),
        (["a", "b", "-G", "1=0.5"], "is not GRADE=GAIN"),
        (["a", "b", "-G", "10=2"], "is not GRADE=GAIN"),
        (["--digits", "a", "b"], "--digits needs a whole number"),
        (["a", "b", "--digits"], "--digits needs a whole number"),
        (["--digits=-1", "a", "b"], "--digits needs a whole number"),
        (["--digits", "21", "a", "b"], "--digits needs a whole number"),
    ],
)
def test_bad_command_lines_are_refused(args: list[str], message: str) -> None:
    code, out, err = sample_eval(*args)
    assert code == 2 and out == ""
    assert message in err
    assert "usage: trecpool sample_eval [-q] [--digits N] QRELS RUN" in err or "is not GRADE=GAIN" in err


def test_trec_qrels_are_refused(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("1 0 a 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1 r\n")
    code, _, err = sample_eval(tmp_path / "qrels", tmp_path / "run")
    assert code == 2 and "5-column qrels" in err


def test_a_run_without_judged_topics_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("1 0 a 1 1\n")
    (tmp_path / "run").write_text("2 Q0 a 1 1 r\n")
    code, out, err = sample_eval("-q", tmp_path / "qrels", tmp_path / "run")
    assert code == 2 and out == "" and "none of the qrels' topics" in err


def test_malformed_files_name_their_lines(tmp_path: Path) -> None:
    (tmp_path / "qrels").write_text("1 0 a 1 1\n1 0 b 1 -2\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1 r\n")
    code, _, err = sample_eval(tmp_path / "qrels", tmp_path / "run")
    assert code == 2 and "line 2" in err
    (tmp_path / "qrels").write_text("1 0 a 1 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 1 r\n1 Q0 a 2 0.5 r\n")
    code, _, err = sample_eval(tmp_path / "qrels", tmp_path / "run")
    assert code == 2 and "line" in err


def test_help() -> None:
    result = runner.invoke(cli, ["sample_eval", "--help"])
    assert result.exit_code == 0 and "sample_eval.pl" in result.output and "-q" in result.output
    assert "--digits N" in result.output and "%6.4f" in result.output


def test_comment_lines_of_the_run_are_skipped(avs: Path, tmp_path: Path) -> None:
    # trec_eval 10.0's run reader skips a line whose first non-blank character is '#'; so does the drop-in
    run = (avs / "runs" / "syn7_1").read_text().splitlines(keepends=True)
    commented = ["# made by syn7_1\n", *run[:3], "  \t# an indented note\n", *run[3:], "#\n"]
    (tmp_path / "run").write_text("".join(commented))
    expected = (avs / "expected" / "syn7_1.sample_eval.nist.txt").read_text()
    code, out, err = sample_eval("-q", avs / "avs.qrels.main.tv21", tmp_path / "run")
    assert (code, err, out) == (0, "", expected)


def test_a_reader_that_leaves_after_one_line_ends_it_quietly(tmp_path: Path) -> None:
    # `trecpool sample_eval -q ... | head -1`: 800 topics print far more than a pipe holds (64 KiB); the group's
    # closed-pipe guard ends the drop-in with status 141 and nothing on stderr, as sample_eval.pl cut off by SIGPIPE
    qrels = "".join(f"{t} 0 d{t}_{i} 1 {i % 2}\n" for t in range(1, 801) for i in range(3))
    run = "".join(f"{t} Q0 d{t}_{i} {i} {3 - i} r\n" for t in range(1, 801) for i in range(3))
    (tmp_path / "qrels").write_text(qrels)
    (tmp_path / "run").write_text(run)
    environment = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    command = [sys.executable, "-m", "app.cli", "sample_eval", "-q", "qrels", "run"]
    process = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline() == b"infAP\t\t1\t\t0.5000\n"
    process.stdout.close()
    assert process.wait(timeout=120) == 141
    assert process.stderr.read() == b""
    process.stderr.close()
