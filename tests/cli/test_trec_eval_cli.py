"""`trecpool trec_eval` takes trec_eval's command line: glued and separate option arguments, long options and their
prefixes, options after the files, stdin for '-', and trec_eval's refusals and exit statuses.

The run lacks qrels topic 2: without -c, trec_eval 10.0 evaluates topic 1 (the last topic it found) again in its
place, and so does the drop-in (with a warning on stderr).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import cli
from tests.cli.startup_probe import heavy, modules_after

runner = CliRunner()

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 1\n2 0 d 1\n3 0 e 0\n"
RUN = "1 Q0 a 1 3.0 myrun\n1 Q0 x 2 2.0 myrun\n1 Q0 c 3 1.0 myrun\n3 Q0 e 1 1.0 myrun\n"


@pytest.fixture()
def files(tmp_path: Path) -> tuple[str, str]:
    """A small qrels file and run file."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return str(qrels), str(run)


def trec_eval(*args: str, stdin: str | None = None):  # type: ignore[no-untyped-def]
    """Run `trecpool trec_eval args`."""
    return runner.invoke(cli, ["trec_eval", *args], input=stdin)


def test_default_is_official(files) -> None:
    result = trec_eval(*files)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "runid                 \tall\tmyrun"
    assert lines[1] == "num_q                 \tall\t3"  # topics 1, 1 again in the place of 2, and 3
    assert [line.split("\t")[0].strip() for line in lines][-9:] == [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200,
                                                                                      500, 1000)]  # fmt: skip
    assert len(lines) == 30


@pytest.mark.parametrize(
    "spellings",
    [
        (["-m", "all_trec"], ["-mall_trec"], ["--measure=all_trec"], ["--measure", "all_trec"], ["--meas", "all_trec"]),
        (["-q", "-c", "-m", "map"], ["-qc", "-mmap"], ["-qcmmap"], ["--query_eval_wanted", "-c", "--measure=map"]),
        (["-M", "1", "-m", "P.1"], ["-M1", "-mP.1"], ["--Max_retrieved_per_topic=1", "-m", "P.1"]),
        (["-l", "2", "-m", "map"], ["-l2", "-mmap"], ["--level_for_rel", "2", "-m", "map"]),
        (["-J", "-N", "10", "-m", "utility.1,-1,0,1"], ["-JN10", "-mutility.1,-1,0,1"]),
    ],
)
def test_every_spelling_of_the_options_gives_the_same_output(files, spellings) -> None:
    outputs = set()
    for argv in spellings:
        result = trec_eval(*argv, *files)
        assert result.exit_code == 0, (argv, result.stderr)
        outputs.add(result.stdout)
        moved = trec_eval(files[0], *argv, files[1])  # GNU getopt takes options after the operands too
        assert moved.exit_code == 0 and moved.stdout == result.stdout, argv
    assert len(outputs) == 1


def test_options_change_what_is_printed(files) -> None:
    assert "\t2\t" not in trec_eval("-q", "-m", "map", *files).stdout  # topic 2: not in the run
    complete = trec_eval("-q", "-c", "-m", "map", "-m", "num_q", *files).stdout
    assert "map                   \t2\t0.0000\n" in complete and "num_q                 \tall\t3\n" in complete
    assert trec_eval("-n", "-q", "-m", "map", *files).stdout == (
        "map                   \t1\t0.8333\nmap                   \t1\t0.8333\nmap                   \t3\t0.0000\n"
    )  # topic 1 again in the place of topic 2
    assert trec_eval("-l2", "-m", "num_rel", *files).stdout == "num_rel               \tall\t2\n"  # 1 + 1 + 0
    assert trec_eval("-c", "-l2", "-m", "num_rel", *files).stdout == "num_rel               \tall\t4\n"  # grades > 0
    assert trec_eval("-M1", "-m", "num_ret", *files).stdout == "num_ret               \tall\t3\n"
    assert trec_eval("-J", "-q", "-m", "relstring", *files).stdout == (
        "relstring             \t1\t'12'\nrelstring             \t1\t'12'\nrelstring             \t3\t'0'\n"
    )
    assert trec_eval("-q", "-m", "relstring", *files).stdout.startswith("relstring             \t1\t'1-2'\n")


def test_run_from_stdin(files) -> None:
    result = trec_eval("-m", "map", files[0], "-", stdin=RUN)
    assert result.exit_code == 0 and result.stdout == trec_eval("-m", "map", *files).stdout


def test_zscores(files, tmp_path: Path) -> None:
    # trec_eval 10.0 names every z-scored value 'Z' + measure and prints it %6.4f, the counts too; the topics the file
    # lacks (1 for num_ret, 3 for num_rel) get -1000000; relstring and runid print as without -Z
    zfile = tmp_path / "z"
    zfile.write_text("1 map 0.5 0.25\n3 map 0.0 0.0\n1 num_rel 1 2\n")
    result = trec_eval("-q", "-Z", str(zfile), "-m", "map", "-m", "num_rel", "-m", "num_q", "-m", "runid", *files)
    assert result.exit_code == 0
    assert result.stdout == (
        "Znum_rel               \t1\t0.5000\n"
        "Zmap                   \t1\t1.3333\n"
        "Znum_rel               \t1\t0.5000\n"
        "Zmap                   \t1\t1.3333\n"
        "Znum_rel               \t3\t-1000000.0000\n"
        "Zmap                   \t3\t0.0000\n"
        "runid                 \tall\tmyrun\n"
        "Znum_q                 \tall\t3.0000\n"
        "Znum_rel               \tall\t-999999.0000\n"
        "Zmap                   \tall\t0.8889\n"
    )


def test_comment_lines_of_the_run_are_skipped(files, tmp_path: Path) -> None:
    # trec_eval 10.0's get_trec_results.c skips a line whose first character after blanks is '#'
    commented = tmp_path / "commented"
    lines = RUN.splitlines(keepends=True)
    commented.write_text("# run myrun\n" + lines[0] + " \t#\tnote\n\f# form feed\n" + "".join(lines[1:]) + "#")
    for argv in (["-q", "-m", "all_trec"], ["-c", "-m", "official"]):
        plain = trec_eval(*argv, *files)
        result = trec_eval(*argv, files[0], str(commented))
        assert (result.exit_code, result.stdout) == (0, plain.stdout)
        from_stdin = trec_eval(*argv, files[0], "-", stdin=commented.read_text())
        assert (from_stdin.exit_code, from_stdin.stdout) == (0, plain.stdout)
    # a '#' inside a line is no comment (a docno may hold one), and a bad line after comments keeps its number
    inside = tmp_path / "inside"
    inside.write_text("1 Q0 a#1 1 2.0 myrun\n# note\n1 Q0 b 2 x myrun\n")
    refused = trec_eval(files[0], str(inside))
    assert refused.exit_code == 2 and "line 3" in refused.stderr and "line 1" not in refused.stderr


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (["-m", "nonsense"], 1, "trec_eval: illegal measure 'nonsense'\n"),
        (["-x"], 1, "trec_eval: invalid option -- 'x'\nUsage: trecpool trec_eval"),
        (["-m"], 1, "trec_eval: option requires an argument -- 'm'"),
        (["--bogus"], 1, "trec_eval: unrecognized option '--bogus'"),
        (["--R", "qrels"], 1, "trec_eval: option '--R' is ambiguous"),
        (["-R", "prefs"], 2, "trec_eval: Illegal rel_format 'prefs'"),
        (["-T", "trec_results_prefs"], 2, "trec_eval: Illegal retrieval results format"),
        (["-D", "1"], 1, "trec_eval: -D (debug output) is not supported"),
        (["-m", "prefs_simp"], 2, "trec_eval: prefs_simp need(s) preference"),
        (["-M", "-1"], 1, "trec_eval: -M below 0 is not supported"),
    ],
)
def test_refusals_say_why_with_trec_eval_status(files, argv: list[str], status: int, message: str) -> None:
    result = trec_eval(*files, *argv)
    assert result.exit_code == status
    assert result.stderr.startswith(message), result.stderr
    assert result.stdout == ""


def test_files_and_topics(files, tmp_path: Path) -> None:
    missing = trec_eval(files[0], str(tmp_path / "nope"))
    assert missing.exit_code == 2 and "nope" in missing.stderr
    assert trec_eval(files[0]).exit_code == 1
    other = tmp_path / "other"
    other.write_text("9 Q0 a 1 1.0 r\n")
    none = trec_eval(files[0], str(other))  # no topic overlaps: 10.0 reads an unset results pointer for topic 1
    assert (none.exit_code, none.stdout) == (4, "")
    assert none.stderr.startswith(f"trec_eval: qrels topic '1' has no results in '{other}' and no qrels topic before")
    assert trec_eval("-c", "-m", "num_q", files[0], str(other)).stdout == "num_q                 \tall\t3\n"
    bad = tmp_path / "bad"
    bad.write_text("1 Q0 a 1\n")
    malformed = trec_eval(files[0], str(bad))
    assert malformed.exit_code == 2 and "line 1" in malformed.stderr


def test_help_and_version() -> None:
    result = trec_eval("--help")
    assert result.exit_code == 0 and result.stdout.startswith("Usage: trecpool trec_eval")
    assert "all_trec" in result.stdout and "rbp_resid" in result.stdout
    assert trec_eval("-h").stdout == result.stdout
    version = trec_eval("-v")
    assert version.exit_code == 0 and "trec_eval version 10.0" in version.stderr


def test_eval_takes_trec_eval_spellings_and_prints_the_names_given(files) -> None:
    result = runner.invoke(cli, ["eval", "-m", "map", "-m", "P.1,2", "-m", "AP", "-m", "num_q", *files])
    assert result.exit_code == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert [(name, topic) for name, topic, _ in rows] == [(n, "all") for n in ("map", "P.1", "P.2", "AP", "num_q")]
    # topic 1: AP (1/1 + 2/3) / 2, P@1 1, P@2 1/2; topic 2 is not in the run and topic 3 has no relevant doc
    expected = [(1 + 2 / 3) / 2 / 3, 1 / 3, 1 / 2 / 3, (1 + 2 / 3) / 2 / 3, 3]
    assert [float(value) for _, _, value in rows] == pytest.approx(expected, abs=1e-12)


def test_trec_eval_on_a_tiny_input_imports_nothingheavy(files) -> None:
    modules, output = modules_after("trec_eval", "-c", "-m", "map", *files)
    assert output.split() == ["map", "all", "0.2778"]  # (5/6 + 0 + 0) / 3
    assert heavy(modules) == []
