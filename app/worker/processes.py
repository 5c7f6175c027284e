"""Worker processes: each runs one procrastinate worker; a supervisor restarts any that dies until told to stop.

Jobs are CPU-bound (numpy), so workers never run inside the web process: they would share its GIL with judging.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal
import threading
import time
from multiprocessing.process import BaseProcess

from app.config import Settings

log = logging.getLogger("trecpool.worker")
RESTART_DELAY = 1.0  # how often the supervisor looks, and the first wait before restarting a process that died
MAX_RESTART_DELAY = 30.0
QUICK_EXIT_SECONDS = 10.0  # a process that dies sooner after its start (the database down?) is restarted ever later


def restart_delay(quick_exits: int) -> float:
    """Seconds to wait before restarting a process that died soon after starting `quick_exits` times in a row.

    None in a row: at once. Then 1, 2, 4 ... up to 30 s, so that a worker whose database is down (every new process
    fails at once) is not restarted, with its traceback, every second until it is back.
    """
    if quick_exits <= 0:
        return 0.0
    return min(MAX_RESTART_DELAY, RESTART_DELAY * 2 ** (quick_exits - 1))


def _exit_with_parent(parent_pid: int) -> None:
    """End this process when its parent is gone (a killed server must not leave a worker behind)."""
    while True:
        time.sleep(1.0)
        if os.getppid() != parent_pid:
            os._exit(1)


def worker_main(database_url: str, settings: Settings, parent_pid: int) -> None:
    """Entry point of a worker process: run one worker until SIGTERM/SIGINT."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s[%(process)d]: %(message)s")
    logging.getLogger("procrastinate").setLevel(logging.WARNING)
    os.setpgrp()  # a terminal's Ctrl-C goes to the supervisor, which stops its workers in order
    if settings.worker_niceness:
        os.nice(settings.worker_niceness)  # batch jobs yield the CPU to the server's interactive requests
    threading.Thread(target=_exit_with_parent, args=(parent_pid,), daemon=True).start()
    from app.worker.queue import run_worker

    asyncio.run(run_worker(database_url, settings))


class WorkerProcesses:
    """A handle on running worker processes: restarted when they die, stopped with `stop()`."""

    def __init__(self, database_url: str, settings: Settings, processes: int = 1) -> None:
        self.database_url, self.settings = database_url, settings
        self.context = multiprocessing.get_context("spawn")  # a clean interpreter: no threads or sockets inherited
        self.processes: list[BaseProcess] = [self._spawn() for _ in range(processes)]
        now = time.monotonic()
        self.started_at = [now] * processes
        self.quick_exits = [0] * processes
        self.restart_at: list[float | None] = [None] * processes
        self.stopping = threading.Event()
        self.supervisor = threading.Thread(target=self._supervise, name="worker-supervisor", daemon=True)
        self.supervisor.start()

    def _spawn(self) -> BaseProcess:
        """Start one worker process."""
        process = self.context.Process(
            target=worker_main, args=(self.database_url, self.settings, os.getpid()), name="trecpool-worker"
        )
        process.start()
        log.info("worker process %s started", process.pid)
        return process

    def _supervise(self) -> None:
        """Restart worker processes that exit while the handle is running."""
        while not self.stopping.wait(RESTART_DELAY):
            self.tend(time.monotonic())

    def tend(self, now: float) -> None:
        """Restart the processes that exited, each once its wait (`restart_delay`) is over."""
        for index, process in enumerate(self.processes):
            if process.is_alive() or self.stopping.is_set():
                continue
            if self.restart_at[index] is None:
                lived = now - self.started_at[index]
                self.quick_exits[index] = self.quick_exits[index] + 1 if lived < QUICK_EXIT_SECONDS else 0
                wait = restart_delay(self.quick_exits[index])
                self.restart_at[index] = now + wait
                log.warning(
                    "worker process %s exited with %s after %.0f s: starting another%s",
                    process.pid,
                    process.exitcode,
                    lived,
                    f" in {wait:.0f} s" if wait else "",
                )
            restart_at = self.restart_at[index]
            if restart_at is not None and now >= restart_at:
                self.processes[index] = self._spawn()
                self.started_at[index], self.restart_at[index] = now, None

    @property
    def pids(self) -> list[int]:
        """Process ids of the current worker processes."""
        return [p.pid for p in self.processes if p.pid is not None]

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the workers: SIGTERM (running jobs may finish), then SIGKILL after `timeout` seconds.

        A job killed here is retried (or failed) by the next worker, as after a crash.
        """
        self.stopping.set()
        self.supervisor.join()
        for process in self.processes:
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join()

    def wait(self) -> None:
        """Block until `stop()` is called from elsewhere (a signal handler)."""
        while not self.stopping.wait(1.0):
            pass


def start_embedded_worker(database_url: str, settings: Settings | None = None) -> WorkerProcesses:
    """One supervised worker process beside the web server (for `trecpool serve`); `.stop()` ends it."""
    from app.config import get_settings

    return WorkerProcesses(database_url, settings or get_settings(), processes=1)
