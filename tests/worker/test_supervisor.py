"""The supervisor restarts a worker process that died, later and later while each dies right after it starts."""

from __future__ import annotations

import threading

from app.worker import processes
from app.worker.processes import WorkerProcesses, restart_delay


class FakeProcess:
    """A process that is alive until told to die."""

    def __init__(self, pid: int) -> None:
        self.pid, self.exitcode, self.alive = pid, None, True

    def is_alive(self) -> bool:
        """Whether it runs."""
        return self.alive

    def die(self) -> None:
        """Exit with status 1."""
        self.alive, self.exitcode = False, 1


def _supervisor(monkeypatch) -> tuple[WorkerProcesses, list[FakeProcess]]:  # type: ignore[no-untyped-def]
    """A WorkerProcesses of one fake process, started at time 0, whose supervisor thread is not running."""
    spawned: list[FakeProcess] = []

    def spawn(self: WorkerProcesses) -> FakeProcess:
        spawned.append(FakeProcess(len(spawned) + 1))
        return spawned[-1]

    monkeypatch.setattr(WorkerProcesses, "_spawn", spawn)
    monkeypatch.setattr(threading.Thread, "start", lambda self: None)
    handle = WorkerProcesses("postgresql://unused", object(), processes=1)  # type: ignore[arg-type]
    handle.started_at = [0.0]
    return handle, spawned


def test_restart_waits_double_while_processes_die_at_once_up_to_a_bound():
    assert [restart_delay(n) for n in range(8)] == [0.0, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]


def test_a_process_dying_at_once_is_restarted_later_and_later(monkeypatch):
    handle, spawned = _supervisor(monkeypatch)
    started = 0.0
    for wait in (1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0):  # each new process dies half a second after it starts
        spawned[-1].die()
        seen = started + 0.5
        handle.tend(seen)
        handle.tend(seen + wait - 0.01)
        assert len(spawned) == handle.quick_exits[0], wait  # not yet
        handle.tend(seen + wait)
        assert len(spawned) == 1 + handle.quick_exits[0]  # restarted now
        started = seen + wait
    # one that ran a while before dying is restarted at once, and the count starts over
    spawned[-1].die()
    handle.tend(started + processes.QUICK_EXIT_SECONDS + 1)
    assert len(spawned) == 9 and handle.quick_exits == [0]


def test_no_restart_once_stopping(monkeypatch):
    handle, spawned = _supervisor(monkeypatch)
    handle.stopping.set()
    spawned[-1].die()
    handle.tend(100.0)
    assert len(spawned) == 1
