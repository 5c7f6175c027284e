"""Worker processes run at a lower CPU priority than the server, so batch jobs yield to judging requests."""

from __future__ import annotations

import os
import time


def _niceness(pid: int) -> int:
    """A process's nice value."""
    return os.getpriority(os.PRIO_PROCESS, pid)


def _wait_started(process) -> None:  # type: ignore[no-untyped-def]
    """Until the process has applied its priority (it does so first thing)."""
    deadline = time.monotonic() + 30
    mine = _niceness(0)
    while _niceness(process.pid) == mine and time.monotonic() < deadline and process.is_alive():
        time.sleep(0.05)


def test_a_worker_lowers_its_priority_by_the_setting(spawn_worker):
    mine = _niceness(0)
    lowered = spawn_worker(worker_niceness=7)
    _wait_started(lowered)
    assert _niceness(lowered.pid) == min(mine + 7, 19)
    same = spawn_worker(worker_niceness=0)
    time.sleep(1.0)
    assert same.is_alive() and _niceness(same.pid) == mine
