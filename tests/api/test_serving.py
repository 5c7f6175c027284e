"""What every response and a serving process share: a frozen start-up heap (and, below, headers and outages)."""

from __future__ import annotations

import subprocess
import sys

FREEZE_PROBE = """
import gc
from app.server import create_app, freeze_heap
before = len(gc.get_objects())
freeze_heap()
print(before, len(gc.get_objects()), gc.get_freeze_count())
"""


def test_a_serving_process_keeps_its_start_up_heap_out_of_garbage_collections():
    result = subprocess.run([sys.executable, "-c", FREEZE_PROBE], capture_output=True, text=True, timeout=120)
    before, after, frozen = map(int, result.stdout.split())
    assert before > 50_000  # the imports of the web stack
    assert after < before // 100 and frozen > before // 2  # a full collection no longer scans them
