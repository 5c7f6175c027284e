"""The `trecpool eval` command: formats, flags and errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import cli


@pytest.fixture(scope="module")
def data_dir(shared_data: Path) -> Path:
    """The shared data directory (the root conftest skips when it is absent)."""
    return shared_data


runner = CliRunner()


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A qrels and two small runs (the second lacks topic 2)."""
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    first = tmp_path / "one"
    first.write_text("1 Q0 b 1 2 one\n1 Q0 a 2 1 one\n2 Q0 c 1 1 one\n")
    second = tmp_path / "two"
    second.write_text("1 Q0 a 1 5 two\n")
    return qrels, first, second


def test_single_run_trec_format(files) -> None:
    qrels, first, _ = files
    result = runner.invoke(cli, ["eval", "-m", "AP", "-m", "num_ret", "-q", str(qrels), str(first)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "AP\t1\t0.5",
        "num_ret\t1\t2",
        "AP\t2\t1.0",
        "num_ret\t2\t1",
        "AP\tall\t0.75",
        "num_ret\tall\t3",
    ]


def test_several_runs_and_run_topics_only(files) -> None:
    qrels, first, second = files
    result = runner.invoke(cli, ["eval", "-m", "AP", "--digits", "4", str(qrels), str(first), str(second)])
    assert result.stdout.splitlines() == ["one\tAP\tall\t0.7500", "two\tAP\tall\t0.5000"]
    result = runner.invoke(cli, ["eval", "-m", "AP", "--run-topics-only", str(qrels), str(second)])
    assert result.stdout.splitlines() == ["AP\tall\t1.0"]


def test_json_and_csv(files) -> None:
    qrels, first, _ = files
    result = runner.invoke(cli, ["eval", "-q", "-m", "P@1", "--format", "json", str(qrels), str(first)])
    assert json.loads(result.stdout) == {"one": {"P@1": {"1": 0.0, "2": 1.0, "all": 0.5}}}
    result = runner.invoke(cli, ["eval", "-m", "P@1", "--format", "csv", str(qrels), str(first)])
    assert result.stdout.splitlines() == ["run,measure,topic,value", "one,P@1,all,0.5"]


def test_default_measures(files) -> None:
    qrels, first, _ = files
    result = runner.invoke(cli, ["eval", str(qrels), str(first)])
    names = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert {"num_ret", "AP", "bpref", "RR", "P@10", "nDCG", "Rprec"} <= set(names)
    assert "xinfAP" not in names


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["-m", "nope"], "unknown measure"),
        (["-m", "xinfAP"], "sample_eval"),
        (["--format", "xml"], "Invalid value for '--format'"),
    ],
)
def test_errors_exit_2(files, args: list[str], words: str) -> None:
    qrels, first, _ = files
    result = runner.invoke(cli, ["eval", *args, str(qrels), str(first)])
    assert result.exit_code == 2
    assert words in result.stderr


def test_bad_run_file_names_the_line(files, tmp_path: Path) -> None:
    qrels, _, _ = files
    bad = tmp_path / "bad"
    bad.write_text("1 Q0 a 1 1 t\n1 Q0 b two 1 t\n")
    result = runner.invoke(cli, ["eval", str(qrels), str(bad)])
    assert result.exit_code == 2
    assert "line 2: rank 'two' is not an integer" in result.stderr


def test_sample_eval_qrels_default_measures(data_dir: Path) -> None:
    avs = data_dir / "trecvid-avs-2021"
    result = runner.invoke(
        cli, ["eval", "--run-topics-only", "-m", "xinfAP", "-m", "iP100", str(avs / "avs.qrels.main.tv21"),
              str(avs / "runs" / "syn7_0")],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = dict(line.rsplit("\t", 1) for line in result.stdout.splitlines())
    assert float(lines["xinfAP\tall"]) == pytest.approx(0.071820010184, abs=1e-9)
    assert float(lines["iP100\tall"]) == pytest.approx(0.276110372590, abs=1e-9)  # printed as asked
