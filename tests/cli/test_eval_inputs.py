"""`trecpool eval` reads what users give it: `-` and pipes, gzip, bzip2 and xz files; and every input it cannot read
(a missing file, a directory, zstd, qrels and run swapped) is one line on stderr with status 2, never a traceback."""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import cli

runner = CliRunner()
QRELS = "1 0 d1 1\n1 0 d2 0\n2 0 d3 1\n2 0 d4 1\n"
RUN = "1 Q0 d2 1 0.9 tag\n1 Q0 d1 2 0.5 tag\n2 Q0 d3 1 0.7 tag\n2 Q0 d5 2 0.6 tag\n"
EXPECTED = "AP\tall\t0.5\nP@2\tall\t0.5\n"  # topic 1: AP 0.5, topic 2: AP 0.5
MEASURES = ["-m", "AP", "-m", "P@2"]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """A qrels file and a run file, as text."""
    (tmp_path / "qrels").write_text(QRELS)
    (tmp_path / "run").write_text(RUN)
    return tmp_path / "qrels", tmp_path / "run"


def _eval(*args: object, stdin: bytes | None = None) -> tuple[int, str, str]:
    """`trecpool eval -m AP -m P@2 ARGS`: its status, stdout and stderr."""
    result = runner.invoke(cli, ["eval", *MEASURES, *map(str, args)], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def _error(*args: object, stdin: bytes | None = None) -> str:
    """The one line `trecpool eval ARGS` prints on stderr, after checking it failed with status 2 and printed it."""
    status, stdout, stderr = _eval(*args, stdin=stdin)
    assert status == 2 and stdout == "", (status, stdout, stderr)
    assert "Traceback" not in stderr and len(stderr.splitlines()) == 1, stderr
    return stderr.rstrip("\n")


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress], ids=["gzip", "bzip2", "xz"])
def test_compressed_files_are_told_by_their_bytes(tmp_path: Path, compress) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "qrels.txt").write_bytes(compress(QRELS.encode()))
    (tmp_path / "run.txt").write_bytes(compress(RUN.encode()))
    assert _eval(tmp_path / "qrels.txt", tmp_path / "run.txt") == (0, EXPECTED, "")


def test_a_broken_bzip2_file_is_one_line(files: tuple[Path, Path]) -> None:
    qrels, run = files
    run.write_bytes(bz2.compress(RUN.encode())[:-8])
    assert _error(qrels, run) == f"error: {run}: not a complete bzip2 file (it ends before its end-of-stream marker)"


def test_zstd_is_refused_by_its_bytes(files: tuple[Path, Path]) -> None:
    qrels, run = files
    run.write_bytes(b"\x28\xb5\x2f\xfd\x24\x00\x01\x00\x00" + b"\x00" * 8)
    assert _error(qrels, run) == (
        f"error: {run}: zstd-compressed: decompress it first (zstd -d); trecpool reads text, gzip, bzip2 and xz files"
    )


def test_a_run_from_stdin(files: tuple[Path, Path]) -> None:
    qrels, _ = files
    assert _eval(qrels, "-", stdin=RUN.encode()) == (0, EXPECTED, "")
    assert _eval(qrels, "-", stdin=gzip.compress(RUN.encode())) == (0, EXPECTED, "")


def test_qrels_from_stdin_and_runs_beside_it(files: tuple[Path, Path]) -> None:
    qrels, run = files
    status, stdout, _ = _eval("-", run, "-q", stdin=QRELS.encode())
    assert status == 0 and "AP\t1\t0.5\nP@2\t1\t0.5\nAP\t2\t0.5\n" in stdout


def test_errors_in_a_run_from_stdin_name_stdin(files: tuple[Path, Path]) -> None:
    qrels, _ = files
    line = _error(qrels, "-", stdin=(RUN + "2 Q0 d6 3 x tag\n").encode())
    assert line == "error: stdin: line 5: score 'x' is not a finite number"


def test_stdin_once_at_most(files: tuple[Path, Path]) -> None:
    qrels, _ = files
    assert _error(qrels, "-", "-", stdin=RUN.encode()) == "error: only one file can be read from stdin (-)"


def test_a_pipe_is_read_once_even_when_its_run_is_read_twice(files: tuple[Path, Path]) -> None:
    """A file the fast pass declines is read again whole: a pipe (`<(zcat run.gz)`) is copied first."""
    qrels, _ = files
    reader, writer = os.pipe()
    bad = RUN.replace("2 Q0 d5 2 0.6 tag", "2 Q0 d5 2 0.6")
    feeder = threading.Thread(target=lambda: (os.write(writer, bad.encode()), os.close(writer)))
    feeder.start()
    try:
        line = _error(qrels, f"/dev/fd/{reader}")
    finally:
        feeder.join()
        os.close(reader)
    assert line == f"error: /dev/fd/{reader}: line 4: expected 6 columns (topic Q0 docno rank score tag), found 5"


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_a_missing_file(files: tuple[Path, Path], which: str) -> None:
    qrels, run = files
    missing = qrels.parent / "no-such-file"
    args = (missing, run) if which == "qrels" else (qrels, run, missing)
    assert _error(*args) == f"error: {missing}: no such file"


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_a_directory(files: tuple[Path, Path], which: str) -> None:
    qrels, run = files
    args = (qrels.parent, run) if which == "qrels" else (qrels, qrels.parent)
    assert _error(*args) == f"error: {qrels.parent}: is a directory, not a file"


def test_a_missing_run_is_found_before_any_run_is_printed(files: tuple[Path, Path]) -> None:
    qrels, run = files
    assert (
        _error(qrels, run, "--block-rows", "1", qrels.parent / "gone")
        == f"error: {qrels.parent / 'gone'}: no such file"
    )


def test_run_and_qrels_swapped(files: tuple[Path, Path]) -> None:
    qrels, run = files
    assert _error(run, qrels) == (
        f"error: wrong order: {run} looks like a run (6 columns) and {qrels} like qrels (4 columns); "
        "give the qrels first, then the runs (trecpool eval QRELS RUN...)"
    )


def test_a_run_given_as_qrels_against_sample_eval_qrels(files: tuple[Path, Path]) -> None:
    qrels, run = files
    qrels.write_text("# sample_eval qrels\n1 0 d1 1 1\n")
    assert "like qrels (5 columns); give the qrels first, then the runs" in _error(run, qrels)


def test_a_run_given_as_qrels_twice(files: tuple[Path, Path]) -> None:
    _, run = files
    assert _error(run, run) == (
        f"error: {run} looks like a run (6 columns), not qrels (4 or 5 columns); "
        "give the qrels first, then the runs (trecpool eval QRELS RUN...)"
    )


def test_bad_qrels_that_are_no_run_keep_their_line_numbered_errors(files: tuple[Path, Path]) -> None:
    qrels, run = files
    qrels.write_text("1 0 d1 1\n1 0 d2\n")
    assert _error(qrels, run) == (f"error: {qrels}: line 2: expected 4 columns (topic iteration docno grade), found 3")
