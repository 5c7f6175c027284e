"""Benchmark: how long `trecpool --help` and `trecpool eval` on a two-line input take, next to trec_eval.

Usage: .venv/bin/python scripts/bench/cli_startup.py [--repeat 10] [--trec-eval PATH]

Each command runs `--repeat` times in a fresh process; the script prints the median CPU time (user + system, from
the children's rusage) and wall time. The reference is trec_eval when it is on PATH (or given), and always the
floors: `python -c pass` (the interpreter) and `python -c "import numpy"` (the numeric core's one dependency).
Target (first-contact issue): trecpool eval under 0.3 s of CPU on a tiny input.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def measure(command: list[str], repeat: int) -> tuple[float, float]:
    """Median CPU seconds and wall seconds of `command` over `repeat` fresh runs."""
    cpu, wall = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return statistics.median(cpu), statistics.median(wall)


def main() -> None:
    """Time the commands and print a table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--trec-eval", default=shutil.which("trec_eval"), help="path of a trec_eval binary")
    args = parser.parse_args()
    trecpool = str(Path(sys.executable).with_name("trecpool"))
    with tempfile.TemporaryDirectory() as tmp:
        qrels, run = Path(tmp, "qrels"), Path(tmp, "run")
        qrels.write_text("1 0 d1 1\n1 0 d2 0\n")
        run.write_text("1 Q0 d2 1 0.9 r\n1 Q0 d1 2 0.5 r\n")
        rows = [
            ("python -c pass (interpreter floor)", [sys.executable, "-c", "pass"]),
            ("python -c 'import numpy' (numpy floor)", [sys.executable, "-c", "import numpy"]),
            ("trecpool --help", [trecpool, "--help"]),
            ("trecpool eval -m AP (2-line input)", [trecpool, "eval", "-m", "AP", str(qrels), str(run)]),
            ("trecpool eval (default measures)", [trecpool, "eval", str(qrels), str(run)]),
        ]
        if args.trec_eval:
            rows.append(("trec_eval -m map (reference)", [args.trec_eval, "-m", "map", str(qrels), str(run)]))
        results = {name: measure(command, args.repeat) for name, command in rows}
    print(f"{'command':<42} {'CPU s':>8} {'wall s':>8}   (median of {args.repeat})")
    for name, (cpu, wall) in results.items():
        print(f"{name:<42} {cpu:>8.3f} {wall:>8.3f}")
    ours = results["trecpool eval -m AP (2-line input)"][0]
    reference = "trec_eval -m map (reference)" if args.trec_eval else "python -c pass (interpreter floor)"
    print(f"\ntrecpool eval / {reference.split(' (')[0]}: {ours / max(results[reference][0], 1e-3):.1f}x CPU")
    if not args.trec_eval:
        print("(trec_eval is not on PATH here: give --trec-eval PATH to compare with it)")
    print(f"target: trecpool eval under 0.3 s CPU -> {'met' if ours < 0.3 else 'NOT met'} ({ours:.3f} s)")


if __name__ == "__main__":
    main()
