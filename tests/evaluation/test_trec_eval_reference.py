"""`trecpool trec_eval` prints NIST trec_eval 10.0's bytes for 30 real TREC-COVID round 1 runs.

The reference files were made by trec_eval 10.0: `trec_eval -q -m all_trec qrels.txt <run>` and
`trec_eval -c -m official qrels.txt <run>`. The qrels and the 30 runs are parsed once and evaluated together; each
run's report is then compared with its file byte for byte.
"""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import pytest

from app.evaluation.formats.trec_files import parse_trec_qrels, parse_trec_run, read_bytes
from app.evaluation.records import Qrels, RunTable
from app.evaluation.trec_eval import main
from app.evaluation.trec_eval.engine import evaluate
from app.evaluation.trec_eval.options import parse_arguments
from app.evaluation.trec_eval.report import format_report
from app.evaluation.trec_eval.table import select


@pytest.fixture(scope="module")
def covid(shared_data: Path) -> tuple[Path, Qrels, list[str], list[RunTable]]:
    """TREC-COVID round 1: its folder, the qrels, the run names and the parsed runs (read once)."""
    root = shared_data / "trec-covid-round1"
    qrels = parse_trec_qrels(read_bytes(root / "qrels.txt"))
    names = sorted(path.name.removesuffix(".gz") for path in (root / "runs").glob("*.gz"))
    runs = [parse_trec_run(read_bytes(root / "runs" / f"{name}.gz")) for name in names]
    assert len(names) == 30
    return root, qrels, names, runs


def assert_same_text(ours: str, expected: str, what: str) -> None:
    """The two texts are equal; else fail naming the first line that differs."""
    if ours == expected:
        return
    our_lines, expected_lines = ours.splitlines(keepends=True), expected.splitlines(keepends=True)
    for number, (mine, theirs) in enumerate(zip(our_lines, expected_lines, strict=False), 1):
        assert mine == theirs, f"{what}, line {number}: ours {mine!r}, trec_eval {theirs!r}"
    assert len(our_lines) == len(expected_lines), f"{what}: {len(our_lines)} lines, trec_eval {len(expected_lines)}"
    raise AssertionError(f"{what}: the texts differ")


@pytest.mark.parametrize(
    ("argv", "suffix"),
    [(["-q", "-m", "all_trec"], ".all_trec_q.gz"), (["-c", "-m", "official"], ".official_c.txt")],
    ids=["q-all_trec", "c-official"],
)
def test_every_run_prints_trec_eval_bytes(covid, argv: list[str], suffix: str) -> None:
    root, qrels, names, runs = covid
    options = parse_arguments([*argv, "qrels", "run"])
    reports = evaluate(runs, qrels, select(options.measures), options)
    for name, report in zip(names, reports, strict=True):
        raw = (root / "expected" / f"{name}{suffix}").read_bytes()
        expected = (gzip.decompress(raw) if suffix.endswith(".gz") else raw).decode("ascii")
        assert_same_text(format_report(report, per_topic=options.query, summary=options.summary), expected, name)


def test_the_command_reads_the_files_itself(covid) -> None:
    root, _, _, _ = covid
    for argv, suffix in ((["-q", "-mall_trec"], ".all_trec_q.gz"), (["-c", "-m", "official"], ".official_c.txt")):
        out, err = io.StringIO(), io.StringIO()
        status = main([*argv, str(root / "qrels.txt"), str(root / "runs" / "T5R1.gz")], out, err)
        raw = (root / "expected" / f"T5R1{suffix}").read_bytes()
        expected = (gzip.decompress(raw) if suffix.endswith(".gz") else raw).decode("ascii")
        assert (status, err.getvalue()) == (0, "")
        assert_same_text(out.getvalue(), expected, f"T5R1{suffix}")
