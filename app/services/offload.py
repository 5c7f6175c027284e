"""CPU-heavy parts of requests (reading uploaded files) in separate low-priority processes.

A request thread that parses a 200,000-line run holds the GIL for most of a second, and every judging request of the
same server process waits for it. Here such work runs in a small pool of processes (`processes` of them, started on
first use, at the workers' lower CPU priority), so the server's threads keep the GIL and the kernel favours them over
the parsing. With `processes=0` the work runs in the calling thread (as tests and one-off scripts may prefer).

The pool belongs to the server process: its processes exit with it (and on their own if it is killed). `start` makes
it ahead of the first request (a process takes a second or more to start and import the parsers), as `trecpool serve`
does.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_pool_size = 0


def call(processes: int, niceness: int, function: Callable[..., T], *args: object) -> T:
    """`function(*args)`, in a pool process when `processes` > 0 (a pool broken by a crash is replaced once).

    A daemonic process may not have children: there the work runs in the calling thread.
    """
    if processes <= 0 or multiprocessing.current_process().daemon:
        return function(*args)
    try:
        return _executor(processes, niceness).submit(function, *args).result()
    except BrokenProcessPool:
        _discard()
        return _executor(processes, niceness).submit(function, *args).result()


def start(processes: int, niceness: int, *, wait: bool = False) -> None:
    """Start the pool's `processes` processes now, each importing the upload parsers (`wait`: until they have)."""
    if processes <= 0 or multiprocessing.current_process().daemon:
        return
    executor = _executor(processes, niceness)
    ready: list[Future[None]] = [executor.submit(_warm) for _ in range(processes)]  # each call spawns a process
    if wait:
        for future in ready:
            future.result()


def _warm() -> None:
    """In a pool process: import what reading an upload needs, ahead of the first upload."""
    from app.evaluation.formats import trec_files  # noqa: F401 - imported for its cost
    from app.services import run_files  # noqa: F401


def shutdown() -> None:
    """Stop the pool's processes, waiting for them (a later call starts a new pool)."""
    _discard(wait=True)


def _executor(processes: int, niceness: int) -> ProcessPoolExecutor:
    """The shared pool, made on first use (and again when the size asked for changes)."""
    global _pool, _pool_size
    with _lock:
        if _pool is None or _pool_size != processes:
            if _pool is not None:
                _pool.shutdown(wait=False, cancel_futures=True)
            _pool = ProcessPoolExecutor(
                processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_start_child,
                initargs=(os.getpid(), niceness),
            )
            _pool_size = processes
        return _pool


def _discard(*, wait: bool = False) -> None:
    """Drop the current pool, stopping its processes."""
    global _pool
    with _lock:
        pool, _pool = _pool, None
    if pool is not None:
        pool.shutdown(wait=wait, cancel_futures=True)


def _start_child(parent: int, niceness: int) -> None:
    """In a pool process: lower its CPU priority and exit when the server process is gone."""
    if niceness:
        os.nice(niceness)
    threading.Thread(target=_exit_with, args=(parent,), daemon=True, name="exit-with-parent").start()


def _exit_with(parent: int, every: float = 1.0) -> None:
    """Exit this process once `parent` is no longer its parent (the server died without shutting the pool down)."""
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(0)
