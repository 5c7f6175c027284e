"""What a finished block frees goes back to the system, though the thread that ran it kept it in its own arena."""

from __future__ import annotations

import threading
from pathlib import Path

from app.services.run_blocks import release_freed


def resident_mib() -> int:
    """This process's resident set, in MiB."""
    return int(Path("/proc/self/status").read_text().split("VmRSS:")[1].split()[0]) // 1024


def test_memory_a_block_thread_freed_is_given_back() -> None:
    kept: list[bytes] = []

    def block() -> None:  # about 100 MB of small allocations, a hundredth kept: the arena cannot shrink by itself
        made = [bytes(2000) + bytes([i % 256]) for i in range(50_000)]
        kept.extend(made[::100])

    worker = threading.Thread(target=block)
    worker.start()
    worker.join()
    before = resident_mib()
    release_freed()
    assert before - resident_mib() >= 50
    assert len(kept) == 500
