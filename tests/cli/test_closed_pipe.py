"""A closed stdout (`trecpool ... | head`) ends every command quietly with status 141 (128 + SIGPIPE, as the shell
reports for a C program such as trec_eval cut off the same way): no traceback, no error message."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from app.cli import CLOSED_PIPE_STATUS, ClosedPipeGuard


def _environment() -> dict[str, str]:
    """The environment without PYTHONUNBUFFERED: users' stdout is buffered (an unbuffered one loses partial writes)."""
    return {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}


def _with_stdout_closed(*args: str) -> tuple[int, bytes]:
    """Run `trecpool ARGS` with a stdout whose reader has already gone; its status and stderr."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "app.cli", *args],
            stdout=writer,
            stderr=subprocess.PIPE,
            env=_environment(),
            timeout=120,
        )
    finally:
        os.close(writer)
    return done.returncode, done.stderr


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A qrels and a run of 400 topics: with -q, trec_eval-style output of far more than a pipe holds (64 KiB)."""
    directory = tmp_path_factory.mktemp("pipe")
    qrels, run = directory / "qrels", directory / "run"
    qrels.write_text("".join(f"{t} 0 d{d} {d % 3 == 0:d}\n" for t in range(1, 401) for d in range(40)))
    run.write_text("".join(f"{t} Q0 d{d} {d + 1} {100 - d} tag\n" for t in range(1, 401) for d in range(100)))
    return str(qrels), str(run)


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("measures",),
        ("measures", "--format", "json"),
        ("eval", "-q", "QRELS", "RUN"),
        ("eval", "-q", "--format", "json", "QRELS", "RUN"),
        ("trec_eval", "-q", "QRELS", "RUN"),
        ("token", "-h"),
    ],
    ids=" ".join,
)
def test_every_kind_of_command_exits_quietly_on_a_closed_stdout(files: tuple[str, str], args: tuple[str, ...]) -> None:
    names = {"QRELS": files[0], "RUN": files[1]}
    status, stderr = _with_stdout_closed(*(names.get(arg, arg) for arg in args))
    assert (status, stderr) == (CLOSED_PIPE_STATUS, b"")


def test_a_reader_that_leaves_after_one_line(files: tuple[str, str]) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "eval", "-q", *files],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_environment(),
    )
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline() == b"num_ret\t1\t100\n"
    process.stdout.close()  # as `| head -1` does
    assert process.wait(timeout=120) == CLOSED_PIPE_STATUS
    assert process.stderr.read() == b""
    process.stderr.close()


def test_the_guard_ends_the_main_thread_and_lets_other_threads_carry_on(tmp_path: Path) -> None:
    reader, writer = os.pipe()
    stream = os.fdopen(writer, "w")
    guard = ClosedPipeGuard(stream)
    os.close(reader)
    outcome: list[str] = []

    def write() -> None:
        guard.write("x" * 100_000)
        guard.flush()
        outcome.append("carried on")

    thread = threading.Thread(target=write)
    thread.start()
    thread.join()
    assert outcome == ["carried on"]  # its output went to os.devnull
    reader, writer = os.pipe()
    os.dup2(writer, stream.fileno())  # a pipe again, its reader gone again
    os.close(writer)
    os.close(reader)
    with pytest.raises(SystemExit) as info:
        guard.write("y" * 100_000)
        guard.flush()
    assert info.value.code == CLOSED_PIPE_STATUS
    guard.write("after the end")  # os.devnull takes the rest quietly
    guard.flush()
    assert guard.encoding == stream.encoding and guard.fileno() == stream.fileno()  # the rest is the stream's
    stream.close()
