"""CPU-heavy request work in low-priority pool processes: where it runs, at what priority, and that it never leaks."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from app.services import offload


def _where() -> tuple[int, int]:
    """The process id and niceness of the caller."""
    return os.getpid(), os.nice(0)


def _crash() -> None:
    """Kill the pool process this runs in."""
    os._exit(3)


@pytest.fixture(autouse=True)
def _fresh_pool():
    """Each test starts and ends without a pool."""
    offload.shutdown()
    yield
    offload.shutdown()


def test_work_runs_in_another_process_at_lower_priority():
    pid, niceness = offload.call(1, 7, _where)
    assert pid != os.getpid()
    assert niceness == os.nice(0) + 7


def test_no_processes_means_this_thread():
    assert offload.call(0, 7, _where) == (os.getpid(), os.nice(0))


def test_a_crashed_pool_is_replaced():
    with pytest.raises(Exception):  # noqa: B017 - the call that kills its process fails (BrokenProcessPool twice)
        offload.call(1, 0, _crash)
    pid, _ = offload.call(1, 0, _where)
    assert pid != os.getpid()


def test_pool_processes_exit_when_the_server_is_killed(tmp_path):
    script = textwrap.dedent(
        """
        import os, sys, time
        from app.services import offload
        print(offload.call(1, 0, os.getpid), flush=True)
        time.sleep(60)
        """
    )
    server = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        child = int(server.stdout.readline())
        os.kill(server.pid, signal.SIGKILL)
        server.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _alive(child):
            time.sleep(0.2)
        assert not _alive(child), "the pool process outlived the killed server"
    finally:
        server.kill()


def _alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def _children() -> dict[int, str]:
    """This process's child processes: pid and command line."""
    found = {}
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        with open(f"/proc/{os.getpid()}/task/{task}/children") as listing:
            for pid in map(int, listing.read().split()):
                with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                    found[pid] = cmdline.read().replace(b"\0", b" ").decode()
    return found


def test_start_makes_the_pool_processes_before_any_call():
    before = _children()
    offload.start(2, 3, wait=True)
    started = {pid for pid, cmdline in _children().items() if pid not in before and "spawn_main" in cmdline}
    assert len(started) == 2
    pid, niceness = offload.call(2, 3, _where)
    assert pid in started and niceness == os.nice(0) + 3


def test_start_without_processes_starts_nothing():
    before = _children()
    offload.start(0, 3, wait=True)
    assert _children() == before
